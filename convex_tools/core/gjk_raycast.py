"""The GJK ray cast: van den Bergen's Alg. 3 (seed 004) on a support function, in plain floats.

The ray is ``x(λ) = s + λ r``; the answer is the smallest λ in [0, max_t] with x(λ) in the shape.

**GJK ray cast** (seed 004 Alg. 3) for hulls and composites. It keeps a lower bound λ on the hit
parameter and a GJK simplex P of support points of the shape C, and alternates two moves:

* **Clip** (seed 004 §2): for the current GJK vector v (the point of conv({x} - P) closest to the
  origin, which approaches x - c for c the point of C nearest x) the support point p = s_C(v)
  gives a plane with normal v that C lies behind. If x is in front of it (v·w > 0, w = x - p),
  no point of the ray before that plane can be in C: either the ray runs away from the plane
  (v·r >= 0, a miss, and v is a separating axis) or λ advances to it by v·w / -v·r.
* **GJK step** (seed 004 §3): add p to the simplex, v <- the point of conv({x} - P) closest to the
  origin, keep only the points that support it. x may have moved, so the simplex is re-solved
  around the new x every time (the signed-volumes solver in ``simplex`` does this from scratch).

It stops when x is in C to within a *relative* tolerance, ||v||² <= ε max ||x - p||² over P
(seed 004 §4); when λ passes ``max_t`` (the early out for finite rays); with a miss; or when GJK
stalls (status NO_PROGRESS): x did not move and v did not get shorter. A rounded shape
``core ⊕ Sphere(m)`` casts on its core and clips against planes pushed out by m, so spheres,
capsules and round boxes converge in a few steps; in a ``Transformed`` shape's own frame the
support calls skip the matrix products and the margin survives non-uniform scaling.

Used by ``raycast`` (rays against shapes that have no closed form) and ``sweep`` (a ray cast on
the configuration space obstacle of two shapes); ``ray_polish`` finishes its hits on curved
surfaces.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .results import Status
from .simplex import CANCELLATION_RATIO, from_nearest, solve

# Termination: x counts as inside the shape once ||v|| - margin <= RELATIVE_TOLERANCE * ρ, with
# ρ = max ||x - p|| over the simplex (seed 004 §4 with ε_tol = RELATIVE_TOLERANCE²), floored by
# the shape's size. This bounds the hit point's distance to the surface relative to that size.
# The signed-volumes solver computes v directly (no determinant cancellation), so its rounding
# floor is ~1e-15 ρ and 1e-12 is reached without looping; it is well below the 1e-9 separations
# a near-miss test must still resolve.
RELATIVE_TOLERANCE = 1e-12
# Cap on clip + GJK iterations. Polytopes need ~5, rounded shapes ~4-6; smooth shapes without a
# margin (sweeps of ellipsoids, cylinder sides in composites) converge linearly, 15-30 on
# average and up to ~60, ending at the stall test (status NO_PROGRESS) rather than at this cap.
MAX_ITERATIONS = 100


class GJKCast(NamedTuple):
    """How ``gjk_ray_cast`` ended: see there."""

    hit: bool
    lam: float
    normal: tuple
    simplex: list
    weights: list
    iterations: int
    status: Status
    scale: float



def gjk_ray_cast(support, margin, origin, direction, max_t, center, axis=None, rounding=0.0):
    """The loop of seed 004 Alg. 3 on a support function, in plain floats.

    ``support(x, y, z)`` returns a tuple whose first three entries are the support point of the
    core (any further entries ride along: the sweep stores its witness points there);
    ``margin`` is the radius added around that core and ``center`` a point inside it. ``axis``
    is the initial v: by default ``origin - center``; a cached separating axis warm-starts.
    ``rounding``: the absolute rounding of the support points (``geometry.COORDINATE_ROUNDING``
    of their coordinates, where they are differences of points far from the world origin); x
    within it of the shape counts as in it, since v shorter than that is noise.

    Returns a ``GJKCast``: ``normal`` is the outward normal direction (not normalised; zero if
    the ray starts inside), and ``simplex``/``weights`` express the core point nearest the hit,
    x - v, as ``sum(w_i * simplex_i[:3])``; ``scale`` is the shape's size (the largest distance
    of a support point from ``center``), the length the tolerances are relative to. On a miss
    ``normal`` is an axis separating the whole ray from the shape (after the ``max_t`` early
    out, the last clip normal).
    """
    sx, sy, sz = origin
    rx, ry, rz = direction
    lam = 0.0
    xx, xy, xz = sx, sy, sz
    nx = ny = nz = 0.0
    cx, cy, cz = center
    vx, vy, vz = axis if axis is not None else (sx - cx, sy - cy, sz - cz)
    if vx == 0.0 and vy == 0.0 and vz == 0.0:
        vx = 1.0  # the ray starts at the centre: any first direction will do
    simplex, weights = [], []
    vv, rho2 = math.inf, 0.0
    size2 = 0.0  # largest |p - center|² seen: the shape's size, for the relative tolerance
    status = Status.ITERATION_LIMIT
    for iteration in range(1, MAX_ITERATIONS + 1):
        # Support point: v is a normal of the core at p, so the plane v·(y - p) = margin ||v||
        # bounds the shape.
        p = support(vx, vy, vz)
        px, py, pz = p[0], p[1], p[2]
        size2 = max(size2, (px - cx) ** 2 + (py - cy) ** 2 + (pz - cz) ** 2)
        vw = vx * (xx - px) + vy * (xy - py) + vz * (xz - pz)
        gap = vw - margin * math.sqrt(vx * vx + vy * vy + vz * vz) if margin else vw

        # Clip: x in front of that plane means no hit before it along the ray. A clip by
        # less than the termination tolerance does not count as progress (see the stall test).
        advanced = gap > RELATIVE_TOLERANCE * math.sqrt(vv * rho2) if rho2 else gap > 0.0
        if gap > 0.0:
            vr = vx * rx + vy * ry + vz * rz
            if vr >= 0.0:  # the ray runs away from the plane: a miss
                axis = _whole_ray_axis((vx, vy, vz), (nx, ny, nz), direction)
                return GJKCast(False, lam, axis, simplex, weights, iteration, Status.SEPARATED,
                               math.sqrt(size2))
            lam -= gap / vr
            if lam > max_t:  # early out: no hit before max_t
                return GJKCast(False, lam, (vx, vy, vz), simplex, weights, iteration,
                               Status.SEPARATED, math.sqrt(size2))
            xx, xy, xz = sx + lam * rx, sy + lam * ry, sz + lam * rz
            nx, ny, nz = vx, vy, vz

        # GJK step: Y = P ∪ {p}; v = v(conv({x} - Y)); P = the points of Y that support v.
        repeated = any(q[0] == px and q[1] == py and q[2] == pz for q in simplex)
        if repeated and not advanced:
            status = Status.NO_PROGRESS  # nothing new and x did not move: v is final
            break
        candidates = simplex if repeated else simplex + [p]
        previous_vv = vv
        points = [(xx - q[0], xy - q[1], xz - q[2]) for q in candidates]
        (vx, vy, vz), w = solve(points)
        vv = vx * vx + vy * vy + vz * vz
        if vv * CANCELLATION_RATIO < size2 and (vv > 0.0 or len(points) < 4):
            # v is 1e4 times shorter than the shape: the solve (relative to its first point)
            # may have cancelled (``simplex.closest_to_origin``); again from the nearest point.
            (vx, vy, vz), w = from_nearest(points)
            vv = vx * vx + vy * vy + vz * vz
        if not advanced and vv >= previous_vv:
            # x did not move, so in exact arithmetic GJK would shorten v. It did not: the
            # sub-algorithm's rounding floor on thin simplices near smooth surfaces without a
            # margin (seed 004 §4). v cannot improve; x is the best lower bound, i.e. the hit.
            status = Status.NO_PROGRESS
            break
        simplex, weights, rho2 = _supporting(candidates, points, w, size2)

        # Termination (seed 004 §4): ||v|| - margin <= tolerance * ρ, or within the points'
        # rounding: a sweep 1e7 from the world origin has D's points to 1e-9 only, and a v of
        # 1e-10 points anywhere (a disc's flat D then "missed" on a plane by noise).
        if margin or rounding:
            if math.sqrt(vv) - margin <= RELATIVE_TOLERANCE * math.sqrt(rho2) + rounding:
                status = Status.CONVERGED
                break
        elif vv <= RELATIVE_TOLERANCE * RELATIVE_TOLERANCE * rho2:
            status = Status.CONVERGED
            break
    scale = math.sqrt(size2)
    if lam == 0.0:  # the ray starts inside (or on the surface)
        if status is not Status.ITERATION_LIMIT:
            status = Status.INTERSECTING
        return GJKCast(True, 0.0, (0.0, 0.0, 0.0), simplex, weights, iteration, status, scale)
    if margin and vv > 0.0:
        # x is at distance ~margin from the core: x - (nearest core point) is the exact normal.
        nx, ny, nz = vx, vy, vz
    return GJKCast(True, lam, (nx, ny, nz), simplex, weights, iteration, status, scale)


def _supporting(candidates, points, weights, floor2):
    """The candidates with positive weight, their weights, and ρ² = max ||x - p||² over them.

    ρ² is floored by ``floor2``, the shape's size seen from its centre: on smooth shapes the
    simplex clusters around the hit, and a scale shrinking with ||v|| would never be met.
    """
    kept, kept_weights, rho2 = [], [], floor2
    for q, d, w in zip(candidates, points, weights):
        if w > 0.0:
            kept.append(q)
            kept_weights.append(w)
            dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
            if dd > rho2:
                rho2 = dd
    return kept, kept_weights, rho2


def _whole_ray_axis(v, n, r):
    """An axis separating the whole ray from the shape, after a miss at λ.

    v separates the ray beyond λ (v·r >= 0) and the last clip normal n the part before it
    (n·r < 0, its plane passes through x(λ)). u = (v·r) n - (n·r) v is a positive combination
    with u·r = 0, so it separates every point of the ray: the axis worth caching for the next,
    similar ray (seed 004 §4 caches v, which alone covers only the part beyond λ).
    """
    vr = v[0] * r[0] + v[1] * r[1] + v[2] * r[2]
    nr = n[0] * r[0] + n[1] * r[1] + n[2] * r[2]
    if nr >= 0.0:  # no clip yet (n = 0): v separates the whole ray already
        return v
    return (vr * n[0] - nr * v[0], vr * n[1] - nr * v[1], vr * n[2] - nr * v[2])
