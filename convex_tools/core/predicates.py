"""Exact geometric predicates shared by the hull builders (``quickhull``, ``convex_mesh``) and
GJK's simplex solver (``simplex``: whether a needle tetrahedron holds the origin).

``orient(a, b, c, p)`` is the sign of ``((b - a) x (c - a)) . (p - a)``, decided exactly: a float
determinant where it exceeds its rounding bound, then (many at once, ``orient_signs``) extended
precision where the platform has it, then integers. Coordinates are floats, so every one is an
integer times a power of two, and integer arithmetic on them is exact.
"""

from __future__ import annotations

import numpy as np

# Relative rounding bound of a 3x3 orientation determinant evaluated in floats from coordinate
# differences: |error| <= ORIENT_ERRBOUND * (the same sum with every term made positive). The
# standard analysis gives (7 + 56 eps) eps with eps = 2**-53; 8 eps keeps a margin.
ORIENT_ERRBOUND = 8.0 * 2.0 ** -53

# The second vertex of edge k of a triangle (a->b, b->c, c->a), and the third; also the
# index patterns of a cross product, (u x v)[i] = u[NEXT[i]] v[PREV[i]] - u[PREV[i]] v[NEXT[i]].
NEXT_VERTEX = np.array((1, 2, 0))
PREV_VERTEX = np.array((2, 0, 1))

# --- exact predicates ----------------------------------------------------------------------------

def integers(coords: tuple) -> list:
    """The floats ``coords`` as integers on one common power-of-two scale (exactly)."""
    ratios = [t.as_integer_ratio() for t in coords]  # denominators are powers of two
    bits = max(d.bit_length() for _, d in ratios)
    return [n << (bits - d.bit_length()) for n, d in ratios]


def point_integers(p: tuple) -> tuple:
    """``(x, y, z, bits)``: the point's coordinates exactly, as integers times ``2**-bits``."""
    (xn, xd), (yn, yd), (zn, zd) = (t.as_integer_ratio() for t in p)
    bits = max(xd.bit_length(), yd.bit_length(), zd.bit_length())
    return (xn << (bits - xd.bit_length()), yn << (bits - yd.bit_length()),
            zn << (bits - zd.bit_length()), bits)


# What the float filters answer when they cannot tell an orientation's sign.
UNDECIDED = 2


def orient_float(a: tuple, b: tuple, c: tuple, p: tuple) -> int:
    """Sign of ``((b - a) x (c - a)) . (p - a)`` when the float determinant exceeds its rounding
    bound, 0 when the four points share a coordinate (an axis-aligned plane: the flat faces of
    boxes and cylinder caps), else ``UNDECIDED``."""
    ax, ay, az = a
    ux, uy, uz = b[0] - ax, b[1] - ay, b[2] - az
    vx, vy, vz = c[0] - ax, c[1] - ay, c[2] - az
    wx, wy, wz = p[0] - ax, p[1] - ay, p[2] - az
    det = wx * (uy * vz - uz * vy) + wy * (uz * vx - ux * vz) + wz * (ux * vy - uy * vx)
    permanent = (abs(wx) * (abs(uy * vz) + abs(uz * vy)) + abs(wy) * (abs(uz * vx) + abs(ux * vz))
                 + abs(wz) * (abs(ux * vy) + abs(uy * vx)))
    if abs(det) > ORIENT_ERRBOUND * permanent:
        return 1 if det > 0.0 else -1
    # (a float difference is zero exactly when the coordinates are equal)
    if (ux == vx == wx == 0.0) or (uy == vy == wy == 0.0) or (uz == vz == wz == 0.0):
        return 0
    return UNDECIDED


def orient_integers(a: tuple, b: tuple, c: tuple, p: tuple) -> int:
    """``orient`` in integers, from ``point_integers`` of the four points."""
    bits = max(a[3], b[3], c[3], p[3])
    ax, ay, az = (t << (bits - a[3]) for t in a[:3])
    bx, by, bz = (t << (bits - b[3]) for t in b[:3])
    cx, cy, cz = (t << (bits - c[3]) for t in c[:3])
    px, py, pz = (t << (bits - p[3]) for t in p[:3])
    ux, uy, uz = bx - ax, by - ay, bz - az
    vx, vy, vz = cx - ax, cy - ay, cz - az
    wx, wy, wz = px - ax, py - ay, pz - az
    det = wx * (uy * vz - uz * vy) + wy * (uz * vx - ux * vz) + wz * (ux * vy - uy * vx)
    return (det > 0) - (det < 0)


def orient(a: tuple, b: tuple, c: tuple, p: tuple) -> int:
    """Sign of ``((b - a) x (c - a)) . (p - a)``, exactly: +1 when p is above the face (a, b, c).

    The float determinant decides when it exceeds its rounding bound, else integers do.
    """
    sign = orient_float(a, b, c, p)
    if sign != UNDECIDED:
        return sign
    return orient_integers(point_integers(a), point_integers(b), point_integers(c),
                            point_integers(p))


# Extended precision decides, many at once, nearly all the orientations doubles cannot: with
# x87's 11 more bits only determinants below ~2**-61 of their permanent are left to integers
# (four coplanar points rounded to doubles sit at ~2**-53: the quads of a UV sphere). Used only
# where numpy's long double is an IEEE-style format wider than a double (x87 80-bit on x86
# Linux and macOS, or binary128), whose rounding the error bound below assumes; elsewhere (MSVC
# and Apple arm64 builds, where it is a double; PowerPC's double-double) integers decide.
LONG = np.longdouble
LONG_FILTER = np.finfo(LONG).nmant in (63, 112)
# ORIENT_ERRBOUND in that precision: 8 units of roundoff (half its machine epsilon each).
ORIENT_ERRBOUND_LONG = 4.0 * float(np.finfo(LONG).eps)
# EXACT_NORMAL_SIN in that precision: down to this sine an x87 cross product's direction error
# (~8 x 2**-64 / sine, ~4e-14) stays well inside the ~4e-13 PREDICATE_FILTER_REL allows for;
# thinner slivers still get exact normals.
LONG_NORMAL_SIN = 1e-5


def orient_signs(xyz: np.ndarray, a, b, c, p) -> np.ndarray:
    """``orient`` of many quadruples of point indices into the coordinate rows ``xyz`` (3, N):
    the sign where extended precision tells it, 0 where undecided points share a coordinate (as
    ``orient_float``), else ``UNDECIDED`` (everywhere but there if the platform's long double is
    no wider than a double)."""
    x, y, z = xyz  # (1-D gathers and products: about half the time of (k, 3) rows)
    if LONG_FILTER:
        xa, ya, za = (t.take(a).astype(LONG) for t in xyz)
        # (long double: the differences round less)
        ux, uy, uz = x.take(b) - xa, y.take(b) - ya, z.take(b) - za
        vx, vy, vz = x.take(c) - xa, y.take(c) - ya, z.take(c) - za
        wx, wy, wz = x.take(p) - xa, y.take(p) - ya, z.take(p) - za
        # u x v term by term, for the determinant and its permanent (the rounding bound)
        p0, m0 = uy * vz, uz * vy
        p1, m1 = uz * vx, ux * vz
        p2, m2 = ux * vy, uy * vx
        det = wx * (p0 - m0) + wy * (p1 - m1) + wz * (p2 - m2)
        permanent = (abs(wx) * (abs(p0) + abs(m0)) + abs(wy) * (abs(p1) + abs(m1))
                     + abs(wz) * (abs(p2) + abs(m2)))
        sure = abs(det) > ORIENT_ERRBOUND_LONG * permanent
        signs = np.where(sure, np.sign(det).astype(np.intp), UNDECIDED)
        rest = (~sure).nonzero()[0]
    else:
        signs = np.full(len(a), UNDECIDED, dtype=np.intp)
        rest = np.arange(len(a))
    if len(rest):
        a, b, c, p = a[rest], b[rest], c[rest], p[rest]
        flat = np.zeros(len(rest), dtype=bool)
        for t in xyz:
            ta = t.take(a)
            flat |= (t.take(b) == ta) & (t.take(c) == ta) & (t.take(p) == ta)
        signs[rest[flat]] = 0
    return signs
