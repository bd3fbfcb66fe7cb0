"""Newton's polish of a GJK ray-cast hit on a curved surface (``raycast``, ``sweep``).

**Polish.** On a smooth surface without a margin the cast converges only linearly and ends at
the rounding floor of thin simplices: the hit within ~1e-8 of the shape's size (~1e-7 on cone
sides), the last clip plane tilted by up to ~1e-4 from the tangent plane. Unless the final
simplex shows a polytope feature (``needs_polish``), ``polish_hit`` solves the contact
conditions by Newton's method: at the exact normal n the support point is the hit (smooth
patch), or the hit lies on the segment between the two ends of a ruling normal to n (cylinder
and cone sides, sums with edges), or in the plane of a face normal to n. Each needs only
support points, the Jacobian comes from finite differences of them, and from the cast's answer
it converges in a few steps to rounding: hit and normal to ~1e-12. (A probe of GJK distance
from a point just outside the hit, the obvious alternative, does not get there: GJK's
stopping test bounds the distance's error, which is second order in the direction's, so its
normals stall near 1e-6 after ~100 support calls on the same surfaces.) A solution that does
not fit the simplex's reading of the surface is rejected, and the cast's answer stands.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .geometry import norm, tangent_basis, unit
from .gjk_raycast import RELATIVE_TOLERANCE
from .results import Status

# Polish: the trust test. The cast's normal is exact when every point of the final simplex lies
# in the plane through the hit with that normal, to this fraction of the shape's size: a face,
# an edge or a vertex of a polytope, where the points are off it only by the termination's
# slack (the hit within RELATIVE_TOLERANCE × ρ of the simplex). On a smooth surface they lie
# below the tilted clip plane by ~(radius) × (tilt)², ~1e-8 at the stall.
FLAT_SIMPLEX = 10.0 * RELATIVE_TOLERANCE
# Simplex points closer than this fraction of the shape's size belong to one smooth patch; the
# ends of a ruling are a good part of the size apart, GJK's points around a smooth hit within
# ~1e-3 (their spread shrinks with the stall's error).
POLISH_CLUSTER = 1e-2
# Cap on Newton steps. From the cast's normal (~1e-4 off) a smooth patch converges in 3-4; on a
# ruling or a face the shrinking tilt (below) costs a few more. A step costs one support call
# (two per end of a ruling or face), and as many again twice when the Jacobian is recomputed.
MAX_POLISH_STEPS = 10
# The Jacobian is kept while each step shrinks the residual by at least this factor (the
# chord method converges linearly with the Jacobian's relative error, ~1e-4 here).
POLISH_CONTRACTION = 0.1
# Newton has converged when a step turns the normal by at most this many radians and moves the
# hit by at most this fraction of the shape's size: the chord method's error after a step is
# ~1e-4 of it, and rounding keeps ill-conditioned steps from going much below 1e-12.
POLISH_TOLERANCE = 1e-10
# Forward-difference step (radians) for the support mapping's derivative: its truncation error
# (~this, relative) and rounding error (~1e-16 / this) only slow Newton's convergence to a
# factor ~1e-8 per step.
POLISH_DIFFERENCE = 1e-8
# Tilt (radians) of n toward an end of a face to make the support mapping return that end
# (extrapolated to no tilt, see ``_tilted_end``: it leaves an error ~tilt²). It must exceed n's
# distance from the face's normal plus the difference step: at first the cast's error (~1e-4),
# then POLISH_TILT_MARGIN times the larger of Newton's last step and the last tilt² (n's error
# after a step), so it falls 3e-3, 3e-4, 2e-6, ~3e-7 (the floor, margin × difference step).
POLISH_TILT = 3e-3
POLISH_TILT_MARGIN = 30.0
# A Newton solution is accepted when its residual is at most this fraction of the shape's size
# (converged Newton leaves ~1e-15; a surface that is not what the simplex suggested leaves the
# support point off the ray by a good part of the size) ...
POLISH_RESIDUAL = 1e-10
# ... and it moved the hit by at most this fraction of the size and the normal by at most this
# many radians: the polish corrects the cast, it does not replace it.
POLISH_REACH = 1e-2


class Polished(NamedTuple):
    """A polished hit: λ, the unit outward normal, the support tuples whose convex combination
    (``weights``) is the core point at the hit (for witness points), and support calls spent."""

    lam: float
    normal: tuple
    simplex: list
    weights: list
    support_calls: int


def needs_polish(support, cast):
    """Whether the cast's normal may be inexact, and the support calls spent deciding.

    The normal is exact, and the polish skipped, when the cast converged with its final
    simplex lying in the normal's plane (to the termination's slack, see FLAT_SIMPLEX) and the
    simplex says which kind of point the hit is:

    * one point: the support point of the last clip normal, so that normal is one of its own;
    * three or four points apart from each other: the hit lies inside their triangle, which
      then lies in the boundary, so the shape is flat there and the plane is the face's;
    * two points apart: a segment in the boundary, an edge of a polytope or a ruling of a
      curved surface, where the plane may still turn about it by ~1e-6. One support call
      along the normal tells them apart: a polytope answers with a vertex it already has or a
      distant one, a curved surface with a new point next to one of them.

    Points closer together than ``POLISH_CLUSTER`` × size sample a curved patch: polish.
    """
    if cast.status is not Status.CONVERGED:
        return True, 0
    simplex = cast.simplex
    nx, ny, nz = cast.normal
    # |n·(p - c)| <= FLAT_SIMPLEX × size |n| for c the hit's point of the simplex, n not unit.
    level = sum(w * (nx * p[0] + ny * p[1] + nz * p[2]) for p, w in zip(simplex, cast.weights))
    flat = FLAT_SIMPLEX * cast.scale * math.sqrt(nx * nx + ny * ny + nz * nz)
    for p in simplex:
        if abs(nx * p[0] + ny * p[1] + nz * p[2] - level) > flat:
            return True, 0
    near2 = (POLISH_CLUSTER * cast.scale) ** 2
    for i, p in enumerate(simplex):
        for q in simplex[:i]:
            if (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2 < near2:
                return True, 0
    if len(simplex) != 2:
        return False, 0
    q = support(nx, ny, nz)
    for p in simplex:
        d2 = (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2
        if 0.0 < d2 < near2:
            return True, 1
    return False, 1


def polish_hit(support, margin, origin, direction, cast):
    """Newton's method on the contact conditions of a GJK ray-cast hit; None if they fail.

    ``support``, ``margin``, ``origin`` and ``direction`` as for ``gjk_ray_cast``; ``cast`` its
    finished hit (λ > 0). The final simplex says what the surface is like at the hit: its points
    fall into k clusters (``_clusters``), and the face of the core along the exact normal n has
    k ends P_j(n) (``_FaceConditions``):

    * k = 1, a smooth patch: the face is the single support point, s(n);
    * k = 2, a ruling (a cylinder's or cone's side, a sum with an edge): its two ends;
    * k = 3, a flat face (whose boundary is curved, or the cast would have trusted its normal,
      such as a box face plus a point sliding along a rim): three of its corners.

    n is normal to the face, n·(P₁ - P_j) = 0, and the hit is a convex combination of the ends
    pushed out by the margin, x(t) = Σ μ_j P_j(n) + margin n: k + 2 equations for t, the k - 1
    free weights μ and n's two degrees of freedom. On a face only x's offset from the face's
    plane counts, n·(P₁ - x(t)) + margin = 0 (its corners may slide along it, as a disc's do):
    three equations for t and n. Newton's Jacobian in n is a forward difference of the ends
    (exact in t and μ), kept while the residual contracts by ``POLISH_CONTRACTION`` per step
    (the chord method). The ends come from support points along n tilted toward them, by a tilt
    that shrinks with Newton's steps (``POLISH_TILT``); the solution counts once the tilt has
    settled. It is accepted only if its residual vanishes to ``POLISH_RESIDUAL`` × size, its
    weights are non-negative (for a point or a ruling), the plane it found supports the shape,
    and it lies within ``POLISH_REACH`` of the cast's answer but not before it (the cast's λ is
    a lower bound): otherwise the surface was not what the simplex suggested, and the cast's
    answer stands.
    """
    scale = cast.scale
    groups = _clusters(cast.simplex, cast.weights, scale)
    if not 1 <= len(groups) <= 3:
        return None
    conditions = _FaceConditions(support, margin, origin, direction, cast, groups)
    if conditions.pointers is None:
        return None
    n0 = unit(cast.normal)
    e1, e2 = tangent_basis(n0)

    def normal_at(a, b):  # n as n0 turned by (a, b) radians (to first order) in its tangent plane
        return unit((n0[0] + a * e1[0] + b * e2[0], n0[1] + a * e1[1] + b * e2[1],
                      n0[2] + a * e1[2] + b * e2[2]))

    a = b = 0.0
    t = cast.lam
    mus = [weight for _, weight in groups[1:]]  # μ₁ = 1 - the others
    tilt = POLISH_TILT
    slopes = None  # the Jacobian's columns for a and b, kept while Newton contracts
    previous, settled, converged = math.inf, True, False
    for _ in range(MAX_POLISH_STEPS):
        n = normal_at(a, b)
        points, sliding = conditions.ends(n, tilt)
        if points is None:
            return None  # an end flipped to another: the tilts do not select cleanly
        residual = conditions.residual(n, points, mus, t)
        if converged:
            break
        size = math.sqrt(sum(f * f for f in residual))
        if slopes is None or (settled and size > POLISH_CONTRACTION * previous):
            slopes = conditions.slopes(normal_at, a, b, tilt, points, mus, t, residual)
            if slopes is None:
                return None
        previous = size
        step = _solve(conditions.columns(slopes, n, points), [-f for f in residual])
        if step is None:
            return None
        a, b, t = a + step[0], b + step[1], t + step[2]
        mus = [mu + d for mu, d in zip(mus, step[3:])]
        settled = True
        if sliding:
            # n is now off the face's normal by ~the step's square plus the extrapolation's
            # error ~tilt²: the next tilt must exceed both (and the difference step). A smaller
            # tilt changes the extrapolated ends a little: not converged until it settles.
            smaller = POLISH_TILT_MARGIN * max(abs(step[0]) + abs(step[1]) + POLISH_DIFFERENCE,
                                               tilt * tilt)
            settled = smaller > 0.5 * tilt  # shrink by halves or more, else keep it
            if not settled:
                tilt = smaller
        converged = (settled and abs(step[0]) + abs(step[1]) <= POLISH_TOLERANCE
                     and abs(step[2]) * conditions.r_len <= POLISH_TOLERANCE * scale)
    if not converged:
        return None
    return conditions.accept(normal_at(a, b), t, points, mus, residual, abs(a) + abs(b))


class _FaceConditions:
    """The contact conditions of ``polish_hit`` for a face with k ends (see there), and the
    support calls spent on them."""

    def __init__(self, support, margin, origin, direction, cast, groups):
        self.support, self.margin, self.cast = support, margin, cast
        self.origin, self.direction = origin, direction
        self.r_len = norm(direction)
        self.k = len(groups)
        self.calls = 0
        self.ends_seen = [centre for centre, _ in groups]
        # An end that moves this far between two evaluations has flipped to another end.
        self.flip = POLISH_CLUSTER * cast.scale
        self.pointers = ()
        if self.k > 1:
            self.pointers, self.calls = _tilt_directions(support, unit(cast.normal),
                                                         self.ends_seen, cast.scale)

    def ends(self, n, tilt, check=True):
        """The ends of the face along n (the support point, or one per tilt direction), whether
        any slides with the tilt; None for the ends if one flipped since the last evaluation."""
        if self.k == 1:
            self.calls += 1
            return [self.support(*n)], False
        points, sliding = [], False
        for gx, gy, gz in self.pointers:  # square to n, scaled to the tilt
            gn = gx * n[0] + gy * n[1] + gz * n[2]
            gx, gy, gz = unit((gx - gn * n[0], gy - gn * n[1], gz - gn * n[2]))
            end, slides = _tilted_end(self.support, n, (tilt * gx, tilt * gy, tilt * gz))
            points.append(end)
            sliding = sliding or slides
        self.calls += 2 * self.k
        if self.k == 3:
            # A face's corners may move along it (any three span it), but two that fall
            # together leave the conditions one short: n is then free to turn about the line
            # through the other two, and the plane it settles on meets the ray off the face,
            # before the hit (a cylinder's ruling seen past a triangle's edge: its two ends
            # traded places as the tilt shrank).
            if not _spans_triangle(points, self.flip):
                return None, sliding
        elif self.k == 2 and check:
            if any(norm((p[0] - q[0], p[1] - q[1], p[2] - q[2])) > self.flip
                   for p, q in zip(points, self.ends_seen)):
                return None, sliding
            self.ends_seen = [p[:3] for p in points]
        return points, sliding

    def residual(self, n, points, mus, t):
        """The conditions' left sides: the contact point Σ μ_j P_j + margin n - x(t) (on a face
        only its offset from the face's plane, n·(P₁ - x(t)) + margin), then n·(P₁ - P_j)."""
        sx, sy, sz = self.origin
        rx, ry, rz = self.direction
        margin = self.margin
        p = points[0]
        xx, xy, xz = sx + t * rx, sy + t * ry, sz + t * rz
        if self.k == 3:
            value = [n[0] * (p[0] - xx) + n[1] * (p[1] - xy) + n[2] * (p[2] - xz) + margin]
        else:
            first = 1.0 - sum(mus)
            cx, cy, cz = first * p[0], first * p[1], first * p[2]
            for mu, q in zip(mus, points[1:]):
                cx += mu * q[0]
                cy += mu * q[1]
                cz += mu * q[2]
            value = [cx + margin * n[0] - xx, cy + margin * n[1] - xy, cz + margin * n[2] - xz]
        for q in points[1:]:
            value.append(n[0] * (p[0] - q[0]) + n[1] * (p[1] - q[1]) + n[2] * (p[2] - q[2]))
        return value

    def slopes(self, normal_at, a, b, tilt, points, mus, t, residual):
        """The Jacobian's columns for n's two angles, by forward differences; None if an end
        flipped between the two evaluations."""
        slopes = []
        for da, db in ((POLISH_DIFFERENCE, 0.0), (0.0, POLISH_DIFFERENCE)):
            shifted = normal_at(a + da, b + db)
            moved, _ = self.ends(shifted, tilt, check=False)
            if any(norm((p[0] - q[0], p[1] - q[1], p[2] - q[2])) > self.flip
                   for p, q in zip(moved, points)):
                return None
            slopes.append([(f - g) / POLISH_DIFFERENCE for f, g
                           in zip(self.residual(shifted, moved, mus, t), residual)])
        return slopes

    def columns(self, slopes, n, points):
        """All the Jacobian's columns: the slopes, then t's and the weights' (exact)."""
        rx, ry, rz = self.direction
        zeros = [0.0] * (self.k - 1)
        if self.k == 3:
            return slopes + [[-(n[0] * rx + n[1] * ry + n[2] * rz)] + zeros]
        columns = slopes + [[-rx, -ry, -rz] + zeros]
        p = points[0]
        for q in points[1:]:
            columns.append([q[0] - p[0], q[1] - p[1], q[2] - p[2]] + zeros)
        return columns

    def accept(self, n, t, points, mus, residual, turn):
        """The ``Polished`` answer if it passes the checks of ``polish_hit``, else None."""
        cast, scale, margin = self.cast, self.cast.scale, self.margin
        sx, sy, sz = self.origin
        rx, ry, rz = self.direction
        if self.k == 3:
            points, weights = _face_weights(points, (sx + t * rx - margin * n[0],
                                                     sy + t * ry - margin * n[1],
                                                     sz + t * rz - margin * n[2]), cast)
        else:
            weights = [1.0 - sum(mus)] + mus
        if (math.sqrt(sum(f * f for f in residual)) > POLISH_RESIDUAL * scale
                or (self.k < 3 and min(weights) < -POLISH_RESIDUAL)  # (a face's may be)
                or abs(t - cast.lam) * self.r_len > POLISH_REACH * scale
                # The cast's λ is a lower bound (every clip was to a plane bounding the shape):
                # a hit before it by more than the residual's slack lies outside the shape.
                or (cast.lam - t) * self.r_len > POLISH_RESIDUAL * scale
                or turn > POLISH_REACH
                or n[0] * rx + n[1] * ry + n[2] * rz >= 0.0):
            return None
        if self.k > 1:
            # The ends were extrapolated: check that the plane through them really supports
            # the core (a polytope's face seen through corners of different faces would not).
            p, q = points[0], self.support(*n)
            self.calls += 1
            if abs(n[0] * (q[0] - p[0]) + n[1] * (q[1] - p[1]) + n[2] * (q[2] - p[2])) \
                    > POLISH_RESIDUAL * scale:
                return None
        return Polished(t, n, points, weights, self.calls)


def _face_weights(corners, point, cast):
    """Weights w (summing to 1) with ``point`` = Σ w_j corner_j, for the witness points of a hit
    in the plane of the corners. They may be negative (a square face seen through three corners
    that do not hold the hit): the witnesses of the corners lie on the faces or edges of the
    shapes that made the face, and the same affine combination of them is the hit's own. For
    a degenerate triangle, the cast's simplex and weights (they hold the hit to ~1e-8).

    That the hit lies on the face, not just in its plane, comes from the cast: it ended with
    its point inside its own simplex (positive weights), whose points lie on the face to
    ~1e-8, and the polish moves the hit along the ray by about as much. (So the polish must
    start from a finished cast: from an early one, the plane's crossing may miss the face.)"""
    (ax, ay, az), (bx, by, bz), (cx, cy, cz) = (p[:3] for p in corners)
    ux, uy, uz, vx, vy, vz = bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az
    wx, wy, wz = point[0] - ax, point[1] - ay, point[2] - az
    uu, vv = ux * ux + uy * uy + uz * uz, vx * vx + vy * vy + vz * vz
    uv = ux * vx + uy * vy + uz * vz
    wu, wv = wx * ux + wy * uy + wz * uz, wx * vx + wy * vy + wz * vz
    det = uu * vv - uv * uv
    if det <= FLAT_SIMPLEX * uu * vv:
        return cast.simplex, cast.weights
    beta, gamma = (vv * wu - uv * wv) / det, (uu * wv - uv * wu) / det
    return corners, [1.0 - beta - gamma, beta, gamma]


def _tilt_directions(support, n, ends, scale):
    """Directions square to n that single out k distinct ends of the face along n (None if
    none found), and the support calls spent finding them.

    Two ends: from each toward the other. Three (a face, perhaps with more corners than GJK
    saw, such as a square): candidate sets are tried in turn until tilts along them pick three
    corners spanning a triangle (three support calls each): from the clusters' centroid toward
    each; the outward bisectors of the clusters' triangle; the two extremes along one centroid
    direction and the extreme square to them. A direction along an edge of the face would tie
    two corners; these rarely are, and a tie that slips through shows up as a flip.
    """
    nx, ny, nz = n

    def square(v):
        vn = v[0] * nx + v[1] * ny + v[2] * nz
        return unit((v[0] - vn * nx, v[1] - vn * ny, v[2] - vn * nz))

    def minus(p, q):
        return p[0] - q[0], p[1] - q[1], p[2] - q[2]

    if len(ends) == 2:
        g = square(minus(ends[0], ends[1]))
        return [g, (-g[0], -g[1], -g[2])], 0
    centre = tuple(sum(p[i] for p in ends) / 3.0 for i in range(3))
    toward = [square(minus(p, centre)) for p in ends]
    bisectors = []
    for j, p in enumerate(ends):
        u, w = (unit(minus(q, p)) for q in ends[:j] + ends[j + 1:])
        bisectors.append(square((-u[0] - w[0], -u[1] - w[1], -u[2] - w[2])))
    g = toward[0]
    candidates = [toward, bisectors, [g, (-g[0], -g[1], -g[2])]]
    tilt = POLISH_TILT
    limit = POLISH_CLUSTER * scale
    calls = 0
    for pointers in candidates:
        corners = [support(nx + tilt * d[0], ny + tilt * d[1], nz + tilt * d[2])
                   for d in pointers]
        calls += 3
        ex, ey, ez = unit(minus(corners[1], corners[0]))
        if len(pointers) == 2:  # add the extreme square to the line of the first two
            offsets = []
            for c in ends:
                dx, dy, dz = minus(c, corners[0])
                de = dx * ex + dy * ey + dz * ez
                offsets.append((dx - de * ex, dy - de * ey, dz - de * ez))
            pointers = pointers + [square(max(offsets, key=norm))]
            d = pointers[2]
            corners.append(support(nx + tilt * d[0], ny + tilt * d[1], nz + tilt * d[2]))
        if _spans_triangle(corners, limit):
            return pointers, calls
    return None, calls


def _spans_triangle(corners, limit):
    """Whether the first three corners are more than ``limit`` apart and the third more than
    ``limit`` off the line through the first two."""
    (ax, ay, az), (bx, by, bz), (cx, cy, cz) = (p[:3] for p in corners[:3])
    ex, ey, ez = unit((bx - ax, by - ay, bz - az))
    dx, dy, dz = cx - ax, cy - ay, cz - az
    de = dx * ex + dy * ey + dz * ez
    return (norm((bx - ax, by - ay, bz - az)) > limit
            and norm((dx - de * ex, dy - de * ey, dz - de * ez)) > limit)


def _tilted_end(support, n, tilt):
    """The end of the face along n that the tilt points to.

    Tilting n toward an end makes the support mapping return that end, but a curved end (a
    rim seen from a ruling not square to it, a rounded end) also slides by ~tilt. That slide
    is smooth in the tilt, so Richardson's extrapolation 2 s(n + τ) - s(n + 2τ) removes its
    first-order part: the end at n itself to ~tilt². Witness entries past the first three ride
    along, extrapolated alike. Returns the end and whether it slides (if not, it is exact).
    """
    tx, ty, tz = tilt
    near = support(n[0] + tx, n[1] + ty, n[2] + tz)
    far = support(n[0] + 2.0 * tx, n[1] + 2.0 * ty, n[2] + 2.0 * tz)
    if near[0] == far[0] and near[1] == far[1] and near[2] == far[2]:
        return near, False  # a vertex, or an end that does not slide this way: exact
    return tuple(2.0 * p - q for p, q in zip(near, far)), True


def _clusters(simplex, weights, scale):
    """The simplex's points grouped into clusters (points nearer than ``POLISH_CLUSTER`` ×
    size join one), as (centroid, total weight): one for a smooth patch, two for the ends of
    a ruling, three for the corners of a face."""
    groups = []
    limit2 = (POLISH_CLUSTER * scale) ** 2
    for p, w in zip(simplex, weights):
        for group in groups:
            q = group[0][0]
            if (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2 <= limit2:
                group.append((p, w))
                break
        else:
            groups.append([(p, w)])
    return [(tuple(sum(p[i] for p, _ in group) / len(group) for i in range(3)),
             sum(w for _, w in group)) for group in groups]


def _solve(columns, rhs):
    """Solve the square system with the given columns by Gaussian elimination with partial
    pivoting; None if it is singular to rounding."""
    n = len(rhs)
    rows = [[columns[j][i] for j in range(n)] + [rhs[i]] for i in range(n)]
    for k in range(n):
        pivot = max(range(k, n), key=lambda i: abs(rows[i][k]))
        if rows[pivot][k] == 0.0:
            return None
        rows[k], rows[pivot] = rows[pivot], rows[k]
        for i in range(k + 1, n):
            f = rows[i][k] / rows[k][k]
            if f:
                for j in range(k, n + 1):
                    rows[i][j] -= f * rows[k][j]
    x = [0.0] * n
    for k in range(n - 1, -1, -1):
        x[k] = (rows[k][n] - sum(rows[k][j] * x[j] for j in range(k + 1, n))) / rows[k][k]
    if not all(math.isfinite(v) for v in x):
        return None
    return x
