"""Closest point of a simplex (1 to 4 points) to the origin: the GJK sub-algorithm.

This is the signed-volumes method (Montanari, Petrinic & Barbieri 2017): barycentric coordinates
of the origin's projection come from signed sub-volumes (tetrahedron), sub-areas (triangle) and
sub-lengths (segment); a negative coordinate names the faces or edges the origin lies beyond, and
the search recurses into only those. Unlike Johnson's algorithm (seed 000 §3, seed 001 §2.3.2)
it never tests a sub-simplex against determinants of another, and each division is by a quantity
first checked against a *relative* degeneracy threshold, so a flat tetrahedron, a sliver triangle
or duplicate points fall back to their lower-dimensional faces instead of dividing by ~0.

Everything is in plain Python floats: this runs once per GJK iteration, on at most four points,
where numpy's per-call overhead would cost more than the arithmetic. The one exception is a
needle tetrahedron (A − B 1e6 times longer than wide) that holds the origin: float weights are
too coarse for it, and exact rational ones express the origin instead (four tetrahedra in all
of ``bench.py gjk penetration continuous --quick`` take that path).

``closest_to_origin(points) -> (v, weights)``: ``v`` is the point of the convex hull of
``points`` nearest the origin, ``weights`` its barycentric coordinates (one per input point,
0.0 for points not needed to express ``v``), summing to 1.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import compress

from .geometry import cross, dot, norm2, sub
from .predicates import UNDECIDED, orient_float

# A triangle counts as flat when sin(angle between its edges) is below this: then its area is
# dominated by rounding, and its edges give the closest point to within ~1e-9 of the edge length.
FLAT_TRIANGLE_SIN2 = 1e-18
# A triangle whose angle at its first point has a sine below sqrt(this) (0.06°) is a sliver:
# Cramer's rule from that point would lose ~ε·|p|/sin of the answer, and it is solved across
# its longest edge instead (``_across_long_edge``) unless Cramer's signs show the origin
# clearly outside (``CRAMER_ULPS``).
SLIVER_SIN2 = 1e-6
# Cramer's weights on a sliver are trusted to show the origin outside (their signs) only
# beyond this many ulps of |p0|·|e1|·|e2|·|e|/|n|², their rounding (``_triangle``). At
# 16 the signs agreed with the solve across the long edge on 2,500 slivers of curved pairs,
# 760 far from the origin and 300 with the origin 1e-13 beside an edge (``test_parity``); at
# 0 they did not.
CRAMER_ULPS = 16.0
_EPS = 2.220446049250313e-16        # a float64's machine epsilon (2^-52)
# A tetrahedron counts as flat when |volume| is below this fraction of the product of its edge
# lengths (the volume of the box they span): its faces then carry the answer.
FLAT_TETRAHEDRON_RATIO = 1e-12
# The origin counts as inside a tetrahedron only if its weights reproduce it to this fraction
# of the longest edge (a rounding-level check of Cramer's rule), or, where they do not (a
# needle), if the float orientation filter shows it inside; its exact weights then express it.
INSIDE_RESIDUAL = 1e-10
# The answer is solved again from the simplex's point nearest the origin when the first point
# is more than sqrt(this) = 1e4 times longer than the answer (their cancellation would cost
# that factor of the answer's precision).
CANCELLATION_RATIO = 1e8


def closest_to_origin(points):
    v, w = solve(points)
    # Each case works relative to its first point, the answer being that point plus weighted
    # edges. When the answer is much shorter than that point, they cancel: on a sliver simplex
    # of a large shape beside a small one the answer is then only ~1e-7 accurate relative to
    # the simplex's size. Solve again from the point nearest the origin. (GJK's and the ray
    # cast's loops make this test themselves, on lengths they have at hand.)
    p = points[0]
    if cancels(v[0] * v[0] + v[1] * v[1] + v[2] * v[2], p[0] * p[0] + p[1] * p[1] + p[2] * p[2],
               len(points)):
        return from_nearest(points)
    return v, w


def cancels(vv: float, size2: float, n: int) -> bool:
    """Whether an answer of squared length ``vv`` from ``n`` points up to sqrt(``size2``) from
    the origin lost precision to cancellation (and ``from_nearest`` should solve again). Not
    for a tetrahedron holding the origin: the answer is then exactly zero."""
    return vv * CANCELLATION_RATIO < size2 and (vv > 0.0 or n < 4)


def solve(points):
    """``closest_to_origin`` relative to the first point as given (no cancellation check)."""
    n = len(points)
    if not 1 <= n <= 4:
        raise ValueError(f"a simplex has 1 to 4 points, got {n}")
    return SOLVERS[n](*points)


def _point(p):
    return p, [1.0]


def from_nearest(points):
    """``closest_to_origin`` with the point nearest the origin first (weights back in order)."""
    d = [p[0] * p[0] + p[1] * p[1] + p[2] * p[2] for p in points]
    k = d.index(min(d))
    n = len(points)
    if k == 0:
        return solve(points)
    order = [k] + [i for i in range(n) if i != k]
    if n == 4 and k % 2 == 1:
        order[2], order[3] = order[3], order[2]     # an even permutation: same orientation
    v, w = solve([points[i] for i in order])
    out = [0.0] * n
    for j, i in enumerate(order):
        out[i] = w[j]
    return v, out


def _segment(p, q):
    px, py, pz = p
    tx, ty, tz = q[0] - px, q[1] - py, q[2] - pz
    tt = tx * tx + ty * ty + tz * tz
    # u minimises |p + u t|: u = -p·t / t·t, clamped to the segment.
    pt = px * tx + py * ty + pz * tz
    if pt >= 0.0 or tt == 0.0:
        return p, [1.0, 0.0]
    if -pt >= tt:
        return q, [0.0, 1.0]
    u = -pt / tt
    return (px + u * tx, py + u * ty, pz + u * tz), [1.0 - u, u]


def _dist2(v):
    return v[0] * v[0] + v[1] * v[1] + v[2] * v[2]


def _best_edge(p0, p1, p2, edges):
    """Closest point over the triangle edges named by ``edges`` (pairs of indices)."""
    pts = (p0, p1, p2)
    best_v, best_w, best_d = None, None, float("inf")
    for i, j in edges:
        v, (wi, wj) = _segment(pts[i], pts[j])
        d = _dist2(v)
        if d < best_d:
            w = [0.0, 0.0, 0.0]
            w[i], w[j] = wi, wj
            best_v, best_w, best_d = v, w, d
    return best_v, best_w


_ALL_EDGES = ((0, 1), (1, 2), (0, 2))


def _triangle(p0, p1, p2):
    """The triangle's point nearest the origin, by Cramer's rule on its two edges from p0, or
    across its longest edge where the angle at p0 is a sliver's (``_across_long_edge``) and
    Cramer's weights do not show the origin clearly outside."""
    ax, ay, az = p0
    e1x, e1y, e1z = p1[0] - ax, p1[1] - ay, p1[2] - az
    e2x, e2y, e2z = p2[0] - ax, p2[1] - ay, p2[2] - az
    # n = e1 × e2
    nx = e1y * e2z - e1z * e2y
    ny = e1z * e2x - e1x * e2z
    nz = e1x * e2y - e1y * e2x
    nn = nx * nx + ny * ny + nz * nz
    across = not nn > 0.0                  # (flat, or NaN: solved across, below)
    if not across:
        # Cramer's rule: barycentrics of the origin's projection q onto the plane, with
        # q - p0 = l1 e1 + l2 e2: l1 = n·((-p0) × e2)/nn and l2 = n·(e1 × (-p0))/nn (the normal
        # part of -p0 drops out).
        cx = ay * e2z - az * e2y  # p0 × e2
        cy = az * e2x - ax * e2z
        cz = ax * e2y - ay * e2x
        l1 = -(nx * cx + ny * cy + nz * cz) / nn
        dx = e1y * az - e1z * ay  # e1 × p0
        dy = e1z * ax - e1x * az
        dz = e1x * ay - e1y * ax
        l2 = -(nx * dx + ny * dy + nz * dz) / nn
        l0 = 1.0 - l1 - l2
        e11 = e1x * e1x + e1y * e1y + e1z * e1z
        e22 = e2x * e2x + e2y * e2y + e2z * e2z
        if nn >= SLIVER_SIN2 * e11 * e22:
            if l0 >= 0.0 and l1 >= 0.0 and l2 >= 0.0:
                return ((ax + l1 * e1x + l2 * e2x, ay + l1 * e1y + l2 * e2y,
                         az + l1 * e1z + l2 * e2z), [l0, l1, l2])
        elif l0 < 0.0 or l1 < 0.0 or l2 < 0.0:
            # A sliver, the origin outside by Cramer's signs: trusted where each weight is
            # beyond its rounding, about ε·|p0|·|e1|·|e2|·|e|/|n|² (CRAMER_ULPS of it; n's own
            # rounding, ε/sin of it, dominates). (As two ratios: |n|⁴ underflows for shapes
            # 1e-39 across.)
            slack2 = CRAMER_ULPS * CRAMER_ULPS * _EPS * _EPS \
                * ((ax * ax + ay * ay + az * az) * (e11 if e11 > e22 else e22) / nn) \
                * (e11 * e22 / nn)
            across = not (l0 * l0 > slack2 and l1 * l1 > slack2 and l2 * l2 > slack2)
        else:
            across = True               # (a sliver, the origin inside)
    if across:
        solved = _across_long_edge(p0, p1, p2)
        if solved is None:
            return _best_edge(p0, p1, p2, _ALL_EDGES)
        l0, l1, l2, v = solved
        if l0 >= 0.0 and l1 >= 0.0 and l2 >= 0.0:
            return v, [l0, l1, l2]
    # The origin projects outside (coordinates l0, l1, l2): the answer is on an edge opposite
    # a negative coordinate. One negative coordinate (the common case) names a single edge; two
    # name a vertex's two edges.
    if l0 < 0.0:
        if l1 >= 0.0 and l2 >= 0.0:
            v, (w1, w2) = _segment(p1, p2)
            return v, [0.0, w1, w2]
        edges = ((1, 2), (0, 2)) if l1 < 0.0 else ((1, 2), (0, 1))
    elif l1 < 0.0:
        if l2 >= 0.0:
            v, (w0, w2) = _segment(p0, p2)
            return v, [w0, 0.0, w2]
        edges = ((0, 2), (0, 1))
    else:
        v, (w0, w1) = _segment(p0, p1)
        return v, [w0, w1, 0.0]
    return _best_edge(p0, p1, p2, edges)


def _across_long_edge(p0, p1, p2):
    """``_triangle``'s coordinates for a sliver: the origin's projection on the triangle's plane
    as the point q of the longest edge's line nearest the origin, moved across that line along
    the triangle's height h (from the line to the opposite vertex). (l0, l1, l2, that point),
    or None for a triangle flat to rounding (its edges then answer).

    Why: Cramer's rule on two edges from a vertex (the textbook form) has weights off by
    ~ε·|p|/sin(angle there), and on a sliver or needle of A − B far from the origin (an 883 km
    segment beside a 2 m hull: edges 1e6 long, a height of 2, or 1e-3 when the segment lies
    nearly in a rectangle's plane) that tilts the plane by ~ε·|p|/height and puts v that many
    times |p| off, 1e-4 to 0.1 where the distance is 0.04: GJK stalls there. Here q is within
    ε·|p| of exact and short (the origin is near the triangle), and a tilt of h only moves v by
    |q| times it."""
    # (c, a, b): the triangle turned so that a b is its longest edge.
    ax, ay, az = p1
    bx, by, bz = p2
    cx, cy, cz = p0
    ux, uy, uz = bx - ax, by - ay, bz - az
    ex, ey, ez = cx - ax, cy - ay, cz - az
    uu = ux * ux + uy * uy + uz * uz
    ee = ex * ex + ey * ey + ez * ez
    fx, fy, fz = cx - bx, cy - by, cz - bz
    ff = fx * fx + fy * fy + fz * fz
    if uu >= ee and uu >= ff:
        turn = 0
    else:
        if ff >= ee:        # p0 p2 longest: (c, a, b) = (p1, p2, p0)
            turn, uu = 1, ff
            ax, ay, az, bx, by, bz, cx, cy, cz = bx, by, bz, cx, cy, cz, ax, ay, az
        else:               # p0 p1 longest: (c, a, b) = (p2, p0, p1)
            turn, uu = 2, ee
            ax, ay, az, bx, by, bz, cx, cy, cz = cx, cy, cz, ax, ay, az, bx, by, bz
        ux, uy, uz = bx - ax, by - ay, bz - az
        ex, ey, ez = cx - ax, cy - ay, cz - az
        ee = ex * ex + ey * ey + ez * ez
    if uu == 0.0:
        return None
    s = -(ax * ux + ay * uy + az * uz) / uu        # q = a + s u, nearest the origin on the line
    qx, qy, qz = ax + s * ux, ay + s * uy, az + s * uz
    g = (ex * ux + ey * uy + ez * uz) / uu         # h = (c − a) − g u, across the line
    hx, hy, hz = ex - g * ux, ey - g * uy, ez - g * uz
    hh = hx * hx + hy * hy + hz * hz
    if hh <= FLAT_TRIANGLE_SIN2 * ee:
        return None
    # v = q + lc h = a + lb (b − a) + lc (c − a), with lb = s − lc g.
    lc = -(qx * hx + qy * hy + qz * hz) / hh
    lb = s - lc * g
    la = 1.0 - lc - lb
    v = (qx + lc * hx, qy + lc * hy, qz + lc * hz)
    if turn == 0:
        return lc, la, lb, v
    if turn == 1:
        return lb, lc, la, v
    return la, lb, lc, v


# Normalised barycentric coordinates reproduce their point to about this many ulps of the
# triangle's coordinates when the triangle is well shaped; a larger residual means a sliver
# (``refined_coordinates``).
COORDINATES_ULPS = 64.0
# A coordinate solved again below -this says the point lies outside the triangle, not rounding.
OUTSIDE_COORDINATE = 1e-9


def refined_coordinates(p1, p2, p3, q, lam):
    """Normalised coordinates ``lam`` of q in triangle p1 p2 p3 (from the triple products of
    ``geometry.triangle_coordinates``), solved again where they miss q by more than rounding.

    The triple products lose a sliver's thin direction: each is exact to rounding of |n| times
    the squared edge length, so on a triangle of height h and length L the point they rebuild
    is off by up to ε·L²/h (two support points of a small curved shape a hair apart and one of
    a large shape far away: 3.4e-11 on a portal 1.7 long and 1e-7 wide, and a contact point
    moved that far off a 1 mm disc). With q moved to the origin, ``_across_long_edge`` solves
    it from the longest edge and the height across it, to about ε·L. The solution with the
    smaller residual is kept; a well-shaped triangle keeps ``lam`` bit for bit."""
    l0, l1, l2 = lam
    residual = _miss2(p1, p2, p3, q, l0, l1, l2)
    size = max(abs(p1[0]), abs(p1[1]), abs(p1[2]), abs(p2[0]), abs(p2[1]), abs(p2[2]),
               abs(p3[0]), abs(p3[1]), abs(p3[2]))
    slack = COORDINATES_ULPS * _EPS * size
    if residual <= slack * slack:
        return lam
    qx, qy, qz = q
    solved = _across_long_edge((p1[0] - qx, p1[1] - qy, p1[2] - qz),
                               (p2[0] - qx, p2[1] - qy, p2[2] - qz),
                               (p3[0] - qx, p3[1] - qy, p3[2] - qz))
    if solved is None:
        return lam
    m0, m1, m2 = solved[0], solved[1], solved[2]
    if min(m0, m1, m2) < -OUTSIDE_COORDINATE:
        return lam      # q outside the triangle (``lam`` is clamped on purpose)
    m0, m1, m2 = max(m0, 0.0), max(m1, 0.0), max(m2, 0.0)
    total = m0 + m1 + m2
    m0, m1, m2 = m0 / total, m1 / total, m2 / total
    # (Judged as returned, clamped: a weight −1e-9 clamped moves the point by 1e-9 of |q|.)
    return (m0, m1, m2) if _miss2(p1, p2, p3, q, m0, m1, m2) < residual else lam


def _miss2(p1, p2, p3, q, l0, l1, l2):
    """|l0 p1 + l1 p2 + l2 p3 − q|²"""
    rx = l0 * p1[0] + l1 * p2[0] + l2 * p3[0] - q[0]
    ry = l0 * p1[1] + l1 * p2[1] + l2 * p3[1] - q[1]
    rz = l0 * p1[2] + l1 * p2[2] + l2 * p3[2] - q[2]
    return rx * rx + ry * ry + rz * rz


def _tetrahedron(p0, p1, p2, p3):
    ax, ay, az = p0
    e1x, e1y, e1z = p1[0] - ax, p1[1] - ay, p1[2] - az
    e2x, e2y, e2z = p2[0] - ax, p2[1] - ay, p2[2] - az
    e3x, e3y, e3z = p3[0] - ax, p3[1] - ay, p3[2] - az
    # Cofactors of e2 × e3, e3 × e1, e1 × e2 give the volume and, against m = −p0 (the origin
    # relative to p0), the coordinates by Cramer's rule: m = l1 e1 + l2 e2 + l3 e3.
    c1x, c1y, c1z = e2y * e3z - e2z * e3y, e2z * e3x - e2x * e3z, e2x * e3y - e2y * e3x
    vol = e1x * c1x + e1y * c1y + e1z * c1z
    scale2 = (e1x * e1x + e1y * e1y + e1z * e1z) * (e2x * e2x + e2y * e2y + e2z * e2z) \
        * (e3x * e3x + e3y * e3y + e3z * e3z)
    if vol * vol <= FLAT_TETRAHEDRON_RATIO * FLAT_TETRAHEDRON_RATIO * scale2:
        # Flat as seen from p0, and its faces carry the answer. A needle seen from its far end
        # (three edges 1e6 times longer than the others) looks flat so, and is not: if it is
        # not flat from the vertex whose edges are shortest and certainly holds the origin, its
        # exact weights express it.
        if vol * vol > FLAT_TETRAHEDRON_RATIO * FLAT_TETRAHEDRON_RATIO * \
                _least_edge_product2(p0, p1, p2, p3, scale2) \
                and _holds_origin(p0, p1, p2, p3):
            return (0.0, 0.0, 0.0), _exact_weights(p0, p1, p2, p3)
        outside = (0, 1, 2, 3)
    else:
        c2x, c2y, c2z = e3y * e1z - e3z * e1y, e3z * e1x - e3x * e1z, e3x * e1y - e3y * e1x
        c3x, c3y, c3z = e1y * e2z - e1z * e2y, e1z * e2x - e1x * e2z, e1x * e2y - e1y * e2x
        l1 = -(ax * c1x + ay * c1y + az * c1z) / vol
        l2 = -(ax * c2x + ay * c2y + az * c2z) / vol
        l3 = -(ax * c3x + ay * c3y + az * c3z) / vol
        l0 = 1.0 - l1 - l2 - l3
        if l0 >= 0.0 and l1 >= 0.0 and l2 >= 0.0 and l3 >= 0.0:
            # The weights must put the origin where they say: a tetrahedron flat to the
            # rounding of coordinates much larger than itself (a disc far from the origin)
            # passes the volume test with a noise height, and Cramer's rule then gives weights
            # off by O(1). Then its faces carry the answer.
            rx = l1 * e1x + l2 * e2x + l3 * e3x + ax
            ry = l1 * e1y + l2 * e2y + l3 * e3y + ay
            rz = l1 * e1z + l2 * e2z + l3 * e3z + az
            longest = max(e1x * e1x + e1y * e1y + e1z * e1z, e2x * e2x + e2y * e2y + e2z * e2z,
                          e3x * e3x + e3y * e3y + e3z * e3z)
            if rx * rx + ry * ry + rz * rz <= INSIDE_RESIDUAL * INSIDE_RESIDUAL * longest:
                return (0.0, 0.0, 0.0), [l0, l1, l2, l3]
            # They do not. A needle (two edges 1e6 times longer than the third, as a segment
            # beside a shape 1e6 times smaller gives) has weights only ~1e-10 accurate along
            # its length that still hold the origin: if it certainly does, its exact weights
            # express it. Otherwise (a tetrahedron flat to rounding) its faces answer.
            if _holds_origin(p0, p1, p2, p3):
                return (0.0, 0.0, 0.0), _exact_weights(p0, p1, p2, p3)
            outside = (0, 1, 2, 3)
        else:
            negative = (l0 < 0.0, l1 < 0.0, l2 < 0.0, l3 < 0.0)
            if negative.count(True) == 1:
                # One face sees the origin (the common case): its triangle answers, the
                # opposite vertex's weight 0.
                i = negative.index(True)
                f = _FACES[i]
                pts = (p0, p1, p2, p3)
                v, w = _triangle(pts[f[0]], pts[f[1]], pts[f[2]])
                w.insert(i, 0.0)
                return v, w
            outside = list(compress(range(4), negative))
    pts = (p0, p1, p2, p3)
    best_v, best_w, best_d = None, None, float("inf")
    for i in outside:
        f = _FACES[i]
        v, wf = _triangle(pts[f[0]], pts[f[1]], pts[f[2]])
        d = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
        if d < best_d:
            w = [0.0, 0.0, 0.0, 0.0]
            w[f[0]], w[f[1]], w[f[2]] = wf
            best_v, best_w, best_d = v, w, d
    return best_v, best_w


_FACES = ((1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2))  # face i is opposite vertex i

# ``solve`` by the number of points (index 1 to 4), for loops that call it every step.
SOLVERS = (None, _point, _segment, _triangle, _tetrahedron)


def _least_edge_product2(p0, p1, p2, p3, from_p0):
    """The least over the four vertices of the squared product of the three edges leaving it
    (``from_p0``: p0's, already known)."""
    def d2(p, q):
        return (q[0] - p[0]) ** 2 + (q[1] - p[1]) ** 2 + (q[2] - p[2]) ** 2
    a01, a02, a03 = d2(p0, p1), d2(p0, p2), d2(p0, p3)
    a12, a13, a23 = d2(p1, p2), d2(p1, p3), d2(p2, p3)
    return min(from_p0, a01 * a12 * a13, a02 * a12 * a23, a03 * a13 * a23)


def _holds_origin(p0, p1, p2, p3):
    """Whether the float orientation filter shows the origin strictly inside: on the side of
    each face where the opposite vertex is. False where it cannot tell: the origin is then
    within rounding of a face, whose closest point GJK's containment test takes as touching.
    A few float determinants: they spare the exact weights all but the tetrahedra that do."""
    origin = (0.0, 0.0, 0.0)
    pts = (p0, p1, p2, p3)
    for k, (i, j, l) in enumerate(_FACES):
        side = orient_float(pts[i], pts[j], pts[l], origin)
        if side == UNDECIDED or side == 0 or \
                side != orient_float(pts[i], pts[j], pts[l], pts[k]):
            return False
    return True


def _exact_weights(p0, p1, p2, p3):
    """Barycentric coordinates of the origin in a tetrahedron of four float points that holds
    it (not flat), each the exact ratio of two signed volumes (the tetrahedron's with that
    vertex moved to the origin, and its own) rounded once. Exact rational arithmetic (~0.3 ms):
    only for the tetrahedra whose float weights cannot be trusted."""
    pts = [tuple(Fraction(c) for c in p) for p in (p0, p1, p2, p3)]
    total = _volume6(*pts)
    origin = (Fraction(0), Fraction(0), Fraction(0))
    weights = []
    for k in range(4):
        moved = pts[:k] + [origin] + pts[k + 1:]
        weights.append(float(_volume6(*moved) / total))
    return weights


def _volume6(a, b, c, d):
    """(b − a) · ((c − a) × (d − a)): six times the signed volume of the tetrahedron a b c d."""
    ux, uy, uz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    vx, vy, vz = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    wx, wy, wz = d[0] - a[0], d[1] - a[1], d[2] - a[2]
    return ux * (vy * wz - vz * wy) + uy * (vz * wx - vx * wz) + uz * (vx * wy - vy * wx)


def refined_weights(points_a, points_b, weights):
    """Weights of a tetrahedron of C = A − B holding the origin (four support points on A and
    on B), improved by one step of iterative refinement, with the points they give on A and
    on B: (weights, point on A, point on B).

    The signed volumes of a sliver tetrahedron (a long segment through a small disc) give
    weights whose points on A and on B lie apart by ε·L²/h, 1e-10 on one 2 long and 1e-6
    thick. Their residual r = point on A − point on B is exact to rounding; the correction δ
    (Σδ = 0, Σδ_i w_i = −r) is as ill-conditioned as the weights were, but small, so one step
    takes r down to about rounding. Weights the step would make negative are kept as they
    were (the origin then lies on a face, and the weights are already as good as its
    rounding); so is a step that does not shorten r."""
    pa, pb = combine(points_a, weights), combine(points_b, weights)
    r = sub(pa, pb)
    W = [sub(a, b) for a, b in zip(points_a, points_b)]
    k = max(range(4), key=weights.__getitem__)        # edges from the heaviest vertex
    others = [i for i in range(4) if i != k]
    e1, e2, e3 = (sub(W[i], W[k]) for i in others)
    c1 = cross(e2, e3)
    vol = dot(e1, c1)
    if vol == 0.0:
        return weights, pa, pb
    m = (-r[0], -r[1], -r[2])
    d = [dot(m, c1) / vol, dot(e1, cross(m, e3)) / vol, dot(e1, cross(e2, m)) / vol]
    new = list(weights)
    for i, di in zip(others, d):
        new[i] += di
    new[k] -= d[0] + d[1] + d[2]
    if min(new) < 0.0:
        return weights, pa, pb
    qa, qb = combine(points_a, new), combine(points_b, new)
    if norm2(sub(qa, qb)) >= norm2(r):
        return weights, pa, pb
    return new, qa, qb


def combine(points, weights):
    """The point ``sum(weights[i] * points[i])``: a simplex point from its barycentric weights."""
    x = y = z = 0.0
    for p, l in zip(points, weights):
        x += l * p[0]
        y += l * p[1]
        z += l * p[2]
    return (x, y, z)
