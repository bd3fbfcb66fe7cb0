"""Small plain-float geometry shared by the algorithms: 3-vectors as tuples (or any sequence of
three floats) and 3x3 matrices as 9 row-major floats.

Everything here is plain Python arithmetic: the callers run it a few times per support call,
where numpy's per-call overhead (about 1 µs per tiny array operation) would cost more than the
arithmetic itself. This module imports nothing from the package: every layer may use it.
"""

from __future__ import annotations

import math

# The least length used as a divisor or as the size a tolerance is relative to: far below the
# supported range (``validation.MIN_SIZE``, 1e-40), it only keeps a zero length (a point's
# extent, a segment of zero length) from dividing by zero; every real length exceeds it.
LENGTH_FLOOR = 1e-300

# A point's coordinates round at this fraction of their magnitude (a few ulps, with room for a
# sum of a few products): a point far from the origin relative to its shape's size is known to
# no better, whatever the algorithm. (GJK's touching test and EPA's contact points allow it.)
COORDINATE_ROUNDING = 1e-15

# Completing a unit normal n to a frame starts from the x axis unless |n_x| >= this, then from
# the y axis: either way the axis is at least ~37° off n (|n × axis| >= 0.8 for unit n), so the
# cross product that builds the first tangent is well conditioned.
BASIS_AXIS_LIMIT = 0.6


def support_of_difference(support_a, support_b, x, y, z):
    """The support point of the Minkowski difference A − B along (x, y, z), given the two
    shapes' ``support_xyz`` mappings: (w, a, b) with w = a − b, a the support point of A along
    the direction and b that of B against it (as Jolt's three lines). Every algorithm calls it
    but GJK's loop, which writes it out (about 3% of a curved pair's distance query)."""
    a = support_a(x, y, z)
    b = support_b(-x, -y, -z)
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2]), a, b


def centre_difference(a, b):
    """centre(A) − centre(B): a point inside A − B (where MPR starts its portal) and GJK's
    first direction."""
    ax, ay, az = a.center_xyz()
    bx, by, bz = b.center_xyz()
    return (ax - bx, ay - by, az - bz)


def split_residual(pa, pb, depth, n, share_a=0.5):
    """pa moved by the fraction ``share_a`` of the residual r = pa − pb − depth · n and pb by
    the rest, so that pa − pb == depth · n holds for the points returned (r is rounding, or a
    point's slack). Half each by default; ``residual_share`` gives the smaller shape less."""
    rx = pa[0] - pb[0] - depth * n[0]
    ry = pa[1] - pb[1] - depth * n[1]
    rz = pa[2] - pb[2] - depth * n[2]
    ta, tb = share_a, 1.0 - share_a
    return (pa[0] - ta * rx, pa[1] - ta * ry, pa[2] - ta * rz), \
        (pb[0] + tb * rx, pb[1] + tb * ry, pb[2] + tb * rz)


def residual_share(size_a, size_b):
    """The part of a contact's rounding residual A's point takes (``split_residual``): in
    proportion to its size, so that beside a shape 1e6 times larger a point moves 1e-6 of it
    (the residual rounds at the larger shape's size, and would put a point that far off the
    smaller one). Half each for two points (sizes 0)."""
    total = size_a + size_b
    return 0.5 if not total > 0.0 else size_a / total


def triangle_coordinates(p1, p2, p3, q, n):
    """Unnormalised barycentric coordinates of q in triangle p1 p2 p3, seen along n:
    n·((p2 − q) × (p3 − q)) and its two cyclic shifts. Their signs say on which side of each
    edge q lies; divided by their sum (n·((p2 − p1) × (p3 − p1))) they are the coordinates of
    q's projection along n."""
    qx, qy, qz = q
    nx, ny, nz = n
    out = []
    for a, b in ((p2, p3), (p3, p1), (p1, p2)):
        ax, ay, az = a[0] - qx, a[1] - qy, a[2] - qz
        bx, by, bz = b[0] - qx, b[1] - qy, b[2] - qz
        out.append(nx * (ay * bz - az * by) + ny * (az * bx - ax * bz) + nz * (ax * by - ay * bx))
    return out


def sliver_cross(ax, ay, az, aa, bx, by, bz, bb, cx, cy, cz):
    """a × b for two edges a, b of a triangle from one vertex (|a|² = aa, |b|² = bb) at a small
    angle (a sliver), from its two shorter edges: a × b = a × c = b × c, with c = b − a the
    third edge *taken from the triangle's own points* (a difference of two nearby points is
    exact; b − a of two long edges is not). A cross product is exact to ε·|e1|·|e2| of its two
    edges' lengths: from a far vertex, a and b are long and nearly parallel and cancel (a
    normal 1e-10 off on a sliver 1e-6 wide and 2 long); the short edge c does not."""
    cc = cx * cx + cy * cy + cz * cz
    if cc >= aa and cc >= bb:
        return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    if aa <= bb:                                  # b the longest: a × c
        return ay * cz - az * cy, az * cx - ax * cz, ax * cy - ay * cx
    return by * cz - bz * cy, bz * cx - bx * cz, bx * cy - by * cx     # a the longest: b × c


def sub(a, b):
    """a − b"""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def dot(a, b):
    """a · b"""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def norm2(a):
    """|a|²"""
    return a[0] * a[0] + a[1] * a[1] + a[2] * a[2]


def cross(a, b):
    """a × b"""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def triple(a, b, c):
    """a · (b × c) (``dot(a, cross(b, c))`` written out, the same operations in the same order:
    MPR's portal tests call it several times a step)"""
    b0, b1, b2 = b
    c0, c1, c2 = c
    return a[0] * (b1 * c2 - b2 * c1) + a[1] * (b2 * c0 - b0 * c2) + a[2] * (b0 * c1 - b1 * c0)


def tangential2(d, n):
    """|d|² less its part along the unit vector n, squared: d's length across n, squared."""
    dn = d[0] * n[0] + d[1] * n[1] + d[2] * n[2]
    return d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - dn * dn


def unit(v):
    """v / |v|, or the zero vector for a zero v."""
    x, y, z = v
    n = math.sqrt(x * x + y * y + z * z)
    if n == 0.0:
        return (0.0, 0.0, 0.0)
    return (x / n, y / n, z / n)


def norm(v):
    """|v|"""
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def apply(m, v):
    """m v for m a row-major 3x3 matrix as 9 floats."""
    x, y, z = v
    return (m[0] * x + m[1] * y + m[2] * z,
            m[3] * x + m[4] * y + m[5] * z,
            m[6] * x + m[7] * y + m[8] * z)


def apply_transpose(m, v):
    """mᵀ v: normals map between frames by transposes (world = M⁻ᵀ local, local = Mᵀ world)."""
    x, y, z = v
    return (m[0] * x + m[3] * y + m[6] * z,
            m[1] * x + m[4] * y + m[7] * z,
            m[2] * x + m[5] * y + m[8] * z)


def perpendicular(dx, dy, dz):
    """A unit vector perpendicular to the unit vector d (crossed with its smallest axis)."""
    ax, ay, az = abs(dx), abs(dy), abs(dz)
    if ax <= ay and ax <= az:
        px, py, pz = 0.0, -dz, dy        # d × x̂ (up to sign)
    elif ay <= az:
        px, py, pz = dz, 0.0, -dx
    else:
        px, py, pz = -dy, dx, 0.0
    s = 1.0 / math.sqrt(px * px + py * py + pz * pz)
    return px * s, py * s, pz * s


def tangent_basis(n):
    """Two unit vectors e1, e2 completing the unit vector n to a right-handed orthonormal frame
    (e1, e2, n): e1 = a × n normalised, for the axis a that BASIS_AXIS_LIMIT picks, and
    e2 = n × e1."""
    nx, ny, nz = n
    ax, ay, az = (1.0, 0.0, 0.0) if abs(nx) < BASIS_AXIS_LIMIT else (0.0, 1.0, 0.0)
    e1 = unit((ay * nz - az * ny, az * nx - ax * nz, ax * ny - ay * nx))
    e2 = (ny * e1[2] - nz * e1[1], nz * e1[0] - nx * e1[2], nx * e1[1] - ny * e1[0])
    return e1, e2
