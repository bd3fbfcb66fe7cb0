"""Ray casts: closed forms for the primitives, and van den Bergen's GJK ray cast (seed 004,
Alg. 3) polished on smooth surfaces for everything else.

The ray is ``x(λ) = s + λ r``; the answer is the smallest λ in [0, max_t] with x(λ) in the shape.

**Closed forms.** λ does not change under an affine map, so a ray against ``Transformed(A, M)``
is the ray M⁻¹(s - c) + λ M⁻¹ r against A, and normals map back by M⁻ᵀ. In their own frame the
primitives have exact intersections, as production engines use them: slabs for ``Box`` and
``Rectangle``; the sphere quadratic for ``Sphere`` and ``Ellipsoid`` (a unit sphere seen through
diag(radii)); the infinite cylinder's quadratic cut by the slab |z| <= h for ``Cylinder`` and
``Disc``, or by the cap spheres for ``Capsule`` and ``Segment``; the double cone's quadratic cut
by the slab -h <= z <= h for ``Cone`` (the slab's top plane z = h keeps the lower nappe, its base
plane is the base disc). Quadratic roots use the form without cancellation (q = -(b +
sign(b)√disc), roots q/a and c/q) and a discriminant written as a difference of squares of
small quantities (Lagrange's identity), so they are exact to a few ulps except on grazing rays,
whose hit is ill-conditioned in itself. Shapes of zero thickness (a rectangle, a disc, a segment,
a point, a primitive with a zero size) are thickened by ``DEGENERATE_THICKNESS``: exactly the
rays passing that close to them hit, as on the GJK path. Dispatch is on the exact type, so
subclasses and composites keep the GJK ray cast.

Normals of the closed forms are exact unit outward normals. Where the surface has an edge, the
normal is that of the part entered last (ties: the lower axis of a box, the side of a cylinder
or cone rather than its cap), always a member of the edge's normal cone; a cone hit at its apex
(within DEGENERATE_THICKNESS of the axis, where the side's direction is rounding noise) gets
+z, the axis of the apex's normal cone.

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

Results: ``RayHit(t, point, normal, iterations, support_calls, status)`` with
``point == origin + t * direction`` and ``normal`` the unit outward normal, or ``None`` for a
miss. A ray starting inside (or on the surface of) the shape hits at ``t == 0`` with a zero
normal. ``cache`` (a ``SeparationCache``) warm-starts coherent GJK casts: after a hit it holds the
normal, after a miss an axis separating the whole ray, so a similar ray that misses too is
usually rejected by its first support call. Closed forms make no support calls and record only
their normals.
"""

from __future__ import annotations

import math
import weakref
from typing import NamedTuple

import numpy as np

from . import validation
from .results import RayHit, Status
from .shapes import (Box, Capsule, Cone, Cylinder, Disc, Ellipsoid, Point, Rectangle, Segment,
                     Sphere, Transformed)
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

# Closed forms: shapes of zero thickness along some direction are thickened to this fraction of
# their largest size (for a point, of the ray origin's distance from it). It bounds how far a ray
# may pass from such a shape and still hit it: the GJK path's termination test declares a hit
# at the same relative distance (RELATIVE_TOLERANCE), and it is far below a 1e-9 near miss.
DEGENERATE_THICKNESS = RELATIVE_TOLERANCE

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


def ray_cast(shape, origin, direction, max_t=math.inf, cache=None, method="auto"):
    """First point of ``shape`` on the ray ``origin + t * direction``, t in [0, max_t].

    Returns a ``RayHit`` (``point == origin + t * direction``, ``normal`` the unit outward
    normal, zero when the ray starts inside or on the surface) or ``None`` if the ray misses or
    first reaches the shape beyond ``max_t``. ``direction`` need not be a unit vector; ``t`` is
    measured in multiples of it. ``cache`` (a ``SeparationCache``) carries the last separating
    axis or normal between calls on coherent rays (seed 004 §4, end). ``method="auto"`` uses the
    closed form of a primitive (also inside ``Transformed``) and the polished GJK ray cast for
    everything else; ``method="gjk"`` forces the GJK ray cast (a reference for the closed forms).

    Supported range (``validation``): the origin within 1e40 of the world origin, the direction
    of any length from 1e-200 to 1e200 (the cast runs on it scaled by a power of two, exactly,
    so that its squares stay finite); outside it a ValueError names the argument.
    """
    shape = validation.shape("shape", shape)
    if method not in ("auto", "gjk"):
        raise ValueError(f"method must be 'auto' or 'gjk', got {method!r}")
    sx, sy, sz = _xyz("origin", origin)
    if max(abs(sx), abs(sy), abs(sz)) > validation.MAX_COORDINATE:
        validation.coordinates("origin", (sx, sy, sz))      # raises, naming the range
    dx, dy, dz = _xyz("direction", direction)
    max_t = _max_t(max_t)
    # The cast runs on r = direction / 2^e with t_r = t · 2^e: both exact (powers of two), and
    # t_r · r == t · direction, so the hit point is the same product.
    e = validation.direction_scale("direction", dx, dy, dz)
    rx, ry, rz = math.ldexp(dx, -e), math.ldexp(dy, -e), math.ldexp(dz, -e)
    hit = _cast(shape, method, (sx, sy, sz), (rx, ry, rz), math.ldexp(max_t, e), cache)
    if hit is None or hit.t == 0.0:
        return hit
    t = math.ldexp(hit.t, -e)
    if t == 0.0:      # a hit within 1e-300 of the origin: the ray starts on the surface
        return RayHit(t=0.0, point=np.array((sx, sy, sz)), normal=np.zeros(3),
                      iterations=hit.iterations, support_calls=hit.support_calls,
                      status=Status.INTERSECTING)
    hit.t = t
    return hit


def _cast(shape, method, origin, direction, max_t, cache):
    """``ray_cast`` on a direction scaled to a largest component in [0.5, 1)."""
    sx, sy, sz = origin
    rx, ry, rz = direction

    plan = _plan(shape)
    if method == "auto" and plan.exact is not None:
        return _closed_form_hit(plan.exact, (sx, sy, sz), (rx, ry, rz), max_t, cache)

    support, margin, center, frame = plan.gjk(shape)
    if frame is None:
        ls, lr = (sx, sy, sz), (rx, ry, rz)
    else:
        inv, offset, _ = frame
        ls = _apply(inv, (sx - offset[0], sy - offset[1], sz - offset[2]))
        lr = _apply(inv, (rx, ry, rz))
    axis = None
    if cache is not None and cache.axis is not None:
        axis = cache.axis if frame is None else _apply_t(frame[2], cache.axis)  # Mᵀ n

    cast = gjk_ray_cast(support, margin, ls, lr, max_t, center, axis)
    hit, lam, normal, status, calls = cast.hit, cast.lam, cast.normal, cast.status, cast.iterations
    polish = False
    if hit and lam > 0.0:
        polish, probes = needs_polish(support, cast)
        calls += probes
    if polish:
        polished = polish_hit(support, margin, ls, lr, cast)
        if polished is not None:
            calls += polished.support_calls
            lam, normal, status = polished.lam, polished.normal, Status.CONVERGED
            hit = lam <= max_t  # the exact hit may lie just beyond the end of the ray
            if lam <= 0.0:      # ... or at the origin, to rounding: the ray starts on it
                lam, status = 0.0, Status.INTERSECTING
    world_normal = normal if frame is None else _apply_t(frame[0], normal)  # M⁻ᵀ n
    if cache is not None:
        cache.record(world_normal, calls)  # the separating axis of a miss, else the normal
    if not hit:
        return None
    if lam > 0.0:
        world_normal = _unit(world_normal)
    return RayHit(t=lam,
                  point=np.array((sx + lam * rx, sy + lam * ry, sz + lam * rz)),
                  normal=np.array(world_normal if lam > 0.0 else (0.0, 0.0, 0.0)),
                  iterations=cast.iterations, support_calls=calls, status=status)


def gjk_ray_cast(support, margin, origin, direction, max_t, center, axis=None):
    """The loop of seed 004 Alg. 3 on a support function, in plain floats.

    ``support(x, y, z)`` returns a tuple whose first three entries are the support point of the
    core (any further entries ride along: the sweep stores its witness points there);
    ``margin`` is the radius added around that core and ``center`` a point inside it. ``axis``
    is the initial v: by default ``origin - center``; a cached separating axis warm-starts.

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

        # Termination (seed 004 §4): ||v|| - margin <= tolerance * ρ.
        if margin:
            if math.sqrt(vv) - margin <= RELATIVE_TOLERANCE * math.sqrt(rho2):
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


# --- polish: Newton's method on the support mapping ---------------------------------------------

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
    n0 = _unit(cast.normal)
    e1, e2 = _tangent_basis(n0)

    def normal_at(a, b):  # n as n0 turned by (a, b) radians (to first order) in its tangent plane
        return _unit((n0[0] + a * e1[0] + b * e2[0], n0[1] + a * e1[1] + b * e2[1],
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
        self.r_len = _norm(direction)
        self.k = len(groups)
        self.calls = 0
        self.ends_seen = [centre for centre, _ in groups]
        # An end that moves this far between two evaluations has flipped to another end.
        self.flip = POLISH_CLUSTER * cast.scale
        self.pointers = ()
        if self.k > 1:
            self.pointers, self.calls = _tilt_directions(support, _unit(cast.normal),
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
            gx, gy, gz = _unit((gx - gn * n[0], gy - gn * n[1], gz - gn * n[2]))
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
            if any(_norm((p[0] - q[0], p[1] - q[1], p[2] - q[2])) > self.flip
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
            if any(_norm((p[0] - q[0], p[1] - q[1], p[2] - q[2])) > self.flip
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
        return _unit((v[0] - vn * nx, v[1] - vn * ny, v[2] - vn * nz))

    def minus(p, q):
        return p[0] - q[0], p[1] - q[1], p[2] - q[2]

    if len(ends) == 2:
        g = square(minus(ends[0], ends[1]))
        return [g, (-g[0], -g[1], -g[2])], 0
    centre = tuple(sum(p[i] for p in ends) / 3.0 for i in range(3))
    toward = [square(minus(p, centre)) for p in ends]
    bisectors = []
    for j, p in enumerate(ends):
        u, w = (_unit(minus(q, p)) for q in ends[:j] + ends[j + 1:])
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
        ex, ey, ez = _unit(minus(corners[1], corners[0]))
        if len(pointers) == 2:  # add the extreme square to the line of the first two
            offsets = []
            for c in ends:
                dx, dy, dz = minus(c, corners[0])
                de = dx * ex + dy * ey + dz * ez
                offsets.append((dx - de * ex, dy - de * ey, dz - de * ez))
            pointers = pointers + [square(max(offsets, key=_norm))]
            d = pointers[2]
            corners.append(support(nx + tilt * d[0], ny + tilt * d[1], nz + tilt * d[2]))
        if _spans_triangle(corners, limit):
            return pointers, calls
    return None, calls


def _spans_triangle(corners, limit):
    """Whether the first three corners are more than ``limit`` apart and the third more than
    ``limit`` off the line through the first two."""
    (ax, ay, az), (bx, by, bz), (cx, cy, cz) = (p[:3] for p in corners[:3])
    ex, ey, ez = _unit((bx - ax, by - ay, bz - az))
    dx, dy, dz = cx - ax, cy - ay, cz - az
    de = dx * ex + dy * ey + dz * ez
    return (_norm((bx - ax, by - ay, bz - az)) > limit
            and _norm((dx - de * ex, dy - de * ey, dz - de * ez)) > limit)


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


def _tangent_basis(n):
    """Two unit vectors completing n (unit) to an orthonormal basis."""
    nx, ny, nz = n
    ax, ay, az = (1.0, 0.0, 0.0) if abs(nx) < 0.6 else (0.0, 1.0, 0.0)
    e1 = _unit((ay * nz - az * ny, az * nx - ax * nz, ax * ny - ay * nx))
    e2 = (ny * e1[2] - nz * e1[1], nz * e1[0] - nx * e1[2], nx * e1[1] - ny * e1[0])
    return e1, e2


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


def _norm(v):
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


# --- closed forms ------------------------------------------------------------------------------
# Each ``_cast_<kind>(params, ox, oy, oz, dx, dy, dz, max_t)`` works in the shape's own frame and
# returns None (a miss, or a first hit beyond max_t) or (t, unit outward normal); a ray starting
# inside or on the surface gives (0.0, zero normal).

_INSIDE = (0.0, (0.0, 0.0, 0.0))
_INF = math.inf


def _closed_form_hit(exact, origin, direction, max_t, cache):
    cast, params, frame = exact
    sx, sy, sz = origin
    rx, ry, rz = direction
    if frame is None:
        hit = cast(params, sx, sy, sz, rx, ry, rz, max_t)
    else:
        inv, offset = frame
        ox, oy, oz = _apply(inv, (sx - offset[0], sy - offset[1], sz - offset[2]))
        dx, dy, dz = _apply(inv, direction)
        hit = cast(params, ox, oy, oz, dx, dy, dz, max_t)
    if hit is None:
        if cache is not None:
            cache.record((0.0, 0.0, 0.0), 0)
        return None
    t, normal = hit
    if t == 0.0:
        if cache is not None:
            cache.record((0.0, 0.0, 0.0), 0)
        return RayHit(t=0.0, point=np.array(origin), normal=np.zeros(3), iterations=0,
                      support_calls=0, status=Status.INTERSECTING)
    if frame is not None:
        normal = _unit(_apply_t(frame[0], normal))  # M⁻ᵀ n
    if cache is not None:
        cache.record(normal, 0)
    return RayHit(t=t, point=np.array((sx + t * rx, sy + t * ry, sz + t * rz)),
                  normal=np.array(normal), iterations=0, support_calls=0,
                  status=Status.CONVERGED)


def _slab(o, d, h):
    """Parameters (enter, leave) of the line o + t d in the slab |x| <= h, or None."""
    if d == 0.0:
        return (-_INF, _INF) if -h <= o <= h else None
    if d > 0.0:
        return (-h - o) / d, (h - o) / d
    return (h - o) / d, (-h - o) / d


def _circle_span(ox, oy, dx, dy, r):
    """Parameters (enter, leave) of the line in the infinite cylinder x² + y² <= r², or None.

    Roots of a t² + 2 b t + c: the discriminant b² - a c equals a r² - (o × d)_z² (Lagrange's
    identity), which does not cancel |o|²|d|² against itself; the roots are q / a and c / q with
    q = -(b + sign(b) √disc), neither of which subtracts nearly equal numbers.
    """
    a = dx * dx + dy * dy
    c = ox * ox + oy * oy - r * r
    if a == 0.0:  # parallel to the axis
        return (-_INF, _INF) if c <= 0.0 else None
    cross = ox * dy - oy * dx
    disc = a * r * r - cross * cross
    if disc < 0.0:
        return None
    b = ox * dx + oy * dy
    q = -(b + math.copysign(math.sqrt(disc), b))
    if q == 0.0:  # b = 0 and a tangent line: a double root at the origin's parameter
        return 0.0, 0.0
    t1, t2 = q / a, c / q
    return (t1, t2) if t1 <= t2 else (t2, t1)


def _cast_sphere(r, ox, oy, oz, dx, dy, dz, max_t):
    c = ox * ox + oy * oy + oz * oz - r * r
    if c <= 0.0:
        return _INSIDE
    b = ox * dx + oy * dy + oz * dz
    if b >= 0.0:
        return None  # outside and not approaching the centre
    # b² - a c = a r² - |o × d|² (Lagrange's identity), without the cancellation of b² - a|o|².
    ux, uy, uz = oy * dz - oz * dy, oz * dx - ox * dz, ox * dy - oy * dx
    disc = (dx * dx + dy * dy + dz * dz) * r * r - (ux * ux + uy * uy + uz * uz)
    if disc < 0.0:
        return None
    t = c / (math.sqrt(disc) - b)  # the near root (-b - √disc) / a, without cancellation
    if t > max_t:
        return None
    return t, _unit((ox + t * dx, oy + t * dy, oz + t * dz))


def _cast_point(_, ox, oy, oz, dx, dy, dz, max_t):
    # A point is hit by rays passing within DEGENERATE_THICKNESS of it, relative to the origin's
    # distance (a point has no size of its own); the normal then opposes the ray.
    radius = DEGENERATE_THICKNESS * math.sqrt(ox * ox + oy * oy + oz * oz)
    return _cast_sphere(radius, ox, oy, oz, dx, dy, dz, max_t)


def _cast_box(half, ox, oy, oz, dx, dy, dz, max_t):
    hx, hy, hz = half
    if -hx <= ox <= hx and -hy <= oy <= hy and -hz <= oz <= hz:
        return _INSIDE
    enter, leave, face = -_INF, _INF, -1
    for axis, o, d, h in ((0, ox, dx, hx), (1, oy, dy, hy), (2, oz, dz, hz)):
        span = _slab(o, d, h)
        if span is None:
            return None
        if span[0] > enter:  # ties keep the lower axis: a face normal of the edge
            enter, face = span[0], axis
        if span[1] < leave:
            leave = span[1]
    # The origin is outside, so a ray that meets the box enters it at enter > 0.
    if enter > leave or leave < 0.0 or enter > max_t:
        return None
    normal = [0.0, 0.0, 0.0]
    normal[face] = -1.0 if (dx, dy, dz)[face] > 0.0 else 1.0
    return enter, tuple(normal)


def _cast_capsule(params, ox, oy, oz, dx, dy, dz, max_t):
    r, h = params
    ez = oz - min(max(oz, -h), h)  # offset from the segment along z
    if ox * ox + oy * oy + ez * ez <= r * r:
        return _INSIDE
    span = _circle_span(ox, oy, dx, dy, r)
    if span is None or span[1] < 0.0:
        return None  # the capsule lies in the infinite cylinder, which the ray misses
    if span[0] >= 0.0:
        t = span[0]
        z = oz + t * dz
        if -h <= z <= h:  # enters through the side
            if t > max_t:
                return None
            return t, _unit((ox + t * dx, oy + t * dy, 0.0))
        cap = math.copysign(h, z)  # enters the cylinder beyond a cap: that sphere or nothing
    else:
        cap = math.copysign(h, oz)  # starts in the cylinder beyond a cap
    return _cast_sphere(r, ox, oy, oz - cap, dx, dy, dz, max_t)


def _cast_cylinder(params, ox, oy, oz, dx, dy, dz, max_t):
    r, h = params
    if ox * ox + oy * oy <= r * r and -h <= oz <= h:
        return _INSIDE
    side = _circle_span(ox, oy, dx, dy, r)
    if side is None:
        return None
    slab = _slab(oz, dz, h)
    if slab is None:
        return None
    enter, leave = max(side[0], slab[0]), min(side[1], slab[1])
    if enter > leave or leave < 0.0 or enter > max_t:
        return None
    t = max(enter, 0.0)
    if side[0] >= slab[0]:  # the side is entered last (at the rim too): the radial normal
        return t, _unit((ox + t * dx, oy + t * dy, 0.0))
    return t, (0.0, 0.0, -1.0 if dz > 0.0 else 1.0)


def _cast_cone(params, ox, oy, oz, dx, dy, dz, max_t):
    """The cone is {|xy| <= k w, -h <= z <= h} with w = h - z the depth below the apex and
    k = radius / height: the double cone |xy|² <= k² w² cut by the slab |z| <= h, whose top
    plane z = h (the apex) discards the upper nappe and whose base plane is the base disc."""
    h, k, cos_side, sin_side, apex = params
    w0 = h - oz
    rho = math.sqrt(ox * ox + oy * oy)
    if -h <= oz and rho <= k * w0:
        return _INSIDE
    slab = _slab(oz, dz, h)
    if slab is None:
        return None
    # f(t) = |xy(t)|² - k² w(t)² = A t² + 2 B t + C with w(t) = w0 - dz t; A and C as products
    # of a difference and a sum, and B² - A C = k² |w0 dxy + dz oxy|² - (oxy × dxy)² (expanded
    # and regrouped), so that no term cancels |o|²|d|² against itself.
    sd, kd, kw = math.sqrt(dx * dx + dy * dy), k * abs(dz), k * abs(w0)
    a = (sd - kd) * (sd + kd)
    b = ox * dx + oy * dy + k * k * w0 * dz
    c = (rho - kw) * (rho + kw)
    if a == 0.0:  # parallel to a generator: f is linear
        if b == 0.0:
            pieces = ((-_INF, _INF),) if c <= 0.0 else ()
        else:
            root = -c / (2.0 * b)
            pieces = ((-_INF, root),) if b > 0.0 else ((root, _INF),)
    else:
        gx, gy = w0 * dx + dz * ox, w0 * dy + dz * oy
        cross = ox * dy - oy * dx
        disc = k * k * (gx * gx + gy * gy) - cross * cross
        if disc < 0.0:
            if a > 0.0:
                return None
            disc = 0.0  # a steep line always meets both nappes: rounding
        q = -(b + math.copysign(math.sqrt(disc), b))
        t1, t2 = (q / a, c / q) if q != 0.0 else (0.0, 0.0)
        if t1 > t2:
            t1, t2 = t2, t1
        # Shallow lines (a > 0) are inside the double cone between the roots; steep ones
        # outside them, and the slab keeps the part in the lower nappe.
        pieces = ((t1, t2),) if a > 0.0 else ((-_INF, t1), (t2, _INF))
    best, side = _INF, False
    for lo, hi in pieces:
        enter, leave = max(lo, slab[0]), min(hi, slab[1])
        if enter <= leave and leave >= 0.0 and enter < best:
            best, side = enter, lo >= slab[0]
    if best == _INF or best > max_t:
        return None
    t = max(best, 0.0)
    if not side:  # through the base, or (moving down) the apex plane: only at the apex
        return t, (0.0, 0.0, -1.0 if dz > 0.0 else 1.0)
    px, py = ox + t * dx, oy + t * dy
    radial = math.sqrt(px * px + py * py)
    if radial <= apex:  # at the apex to rounding, where the side's direction is noise
        return t, (0.0, 0.0, 1.0)  # the axis of the apex's normal cone
    s = cos_side / radial
    return t, (px * s, py * s, sin_side)


def _thicken(sizes):
    """Zero sizes raised to DEGENERATE_THICKNESS × the largest; None if all are zero."""
    largest = max(sizes)
    if largest == 0.0:
        return None
    floor = DEGENERATE_THICKNESS * largest
    return tuple(max(s, floor) for s in sizes)


def _capsule_or_degenerate(radius, half_height):
    """The closed form of ``Capsule(radius, half_height)``, zero sizes included."""
    if half_height == 0.0:
        return (_cast_sphere, radius) if radius > 0.0 else (_cast_point, None)
    radius = max(radius, DEGENERATE_THICKNESS * half_height)
    return _cast_capsule, (radius, half_height)


def _cylinder_or_degenerate(radius, half_height):
    """The closed form of ``Cylinder(radius, half_height)``: a thin one for a disc, a thin
    capsule for a segment."""
    if radius == 0.0:
        return _capsule_or_degenerate(0.0, half_height)
    return _cast_cylinder, (radius, max(half_height, DEGENERATE_THICKNESS * radius))


def _box_form(shape):
    half = _thicken(tuple(shape.half_extents.tolist()))
    return (_cast_point, None, None) if half is None else (_cast_box, half, None)


def _rectangle_form(shape):
    half = _thicken(tuple(shape.half_extents.tolist()) + (0.0,))
    return (_cast_point, None, None) if half is None else (_cast_box, half, None)


def _sphere_form(shape):
    r = shape.radius
    return (_cast_sphere, r, None) if r > 0.0 else (_cast_point, None, None)


def _ellipsoid_form(shape):
    radii = _thicken(shape.radii.tolist())
    return (_cast_point, None, None) if radii is None else (_cast_sphere, 1.0, radii)


def _cone_form(shape):
    r, h = shape.radius, shape.half_height
    if r == 0.0 or h == 0.0:  # a segment, or a disc at z = 0
        return (*_cylinder_or_degenerate(r, h), None)
    k = r / (2.0 * h)
    slant = math.sqrt(1.0 + k * k)
    return _cast_cone, (h, k, 1.0 / slant, k / slant, DEGENERATE_THICKNESS * r), None


# Per exact type: (cast, params, radii), ``radii`` None except for an ellipsoid, cast as the
# unit sphere seen through diag(radii). Subclasses are not here: they keep the GJK ray cast.
_CLOSED_FORMS = {
    Box: _box_form,
    Rectangle: _rectangle_form,
    Sphere: _sphere_form,
    Ellipsoid: _ellipsoid_form,
    Point: lambda shape: (_cast_point, None, None),
    Segment: lambda shape: (*_capsule_or_degenerate(0.0, shape.half_length), None),
    Capsule: lambda shape: (*_capsule_or_degenerate(shape.radius, shape.half_height), None),
    Cylinder: lambda shape: (*_cylinder_or_degenerate(shape.radius, shape.half_height), None),
    Disc: lambda shape: (*_cylinder_or_degenerate(shape.radius, 0.0), None),
    Cone: _cone_form,
}


def _closed_form(shape):
    """(cast, params, radii) for a primitive of exactly one of the types above, else None."""
    form = _CLOSED_FORMS.get(type(shape))
    return None if form is None else form(shape)


# --- argument checks (plain floats: numpy's per-call overhead would dominate a ray cast) -------

def _xyz(name, value):
    if isinstance(value, (tuple, list)) or (isinstance(value, np.ndarray) and value.shape == (3,)):
        try:
            x, y, z = (float(c) for c in value)
        except (TypeError, ValueError):
            x = y = z = math.nan
        if math.isfinite(x) and math.isfinite(y) and math.isfinite(z):
            return x, y, z
    v = validation.vector(name, value)  # raises a ValueError naming the problem
    return float(v[0]), float(v[1]), float(v[2])


def _max_t(value):
    try:
        t = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"max_t must be a number, got {value!r}") from None
    if math.isnan(t) or t < 0.0:
        raise ValueError(f"max_t must be >= 0 (inf for an unbounded ray), got {t}")
    return t


# --- local frames ----------------------------------------------------------------------------

class _Plan:
    """How to cast against one shape, made once per shape (plain floats: for fresh shapes it is
    made per ray, so it builds only what the ray needs).

    ``exact``: None or (cast, params, frame) with frame None or (M⁻¹, offset), for the closed
    form in the primitive's own frame. ``gjk()``: (core support, margin, core centre, frame)
    with frame None or (M⁻¹, offset, M), the 3x3 matrices as 9 row-major floats.
    """

    __slots__ = ("exact", "_inner", "_linear", "_offset", "_inverse", "_gjk", "__weakref__")

    def __init__(self, shape):
        linear, offset = None, (0.0, 0.0, 0.0)
        inner = shape
        if isinstance(inner, Transformed):
            rows = inner.matrix.tolist()
            linear = (*rows[0][:3], *rows[1][:3], *rows[2][:3])
            offset = (rows[0][3], rows[1][3], rows[2][3])
            inner = inner.shape
        # The plan is the value of a weak-keyed cache: it must not hold the key (an untransformed
        # shape) alive, so it keeps only a transformed shape's inner one (see ``gjk``).
        self._inner = inner if linear is not None else None
        self._linear, self._offset = linear, offset
        self._inverse = None if linear is None else _inverse(linear)
        self._gjk = None
        self.exact = None
        closed = _closed_form(inner)
        if closed is not None:
            cast, params, radii = closed
            if radii is not None:  # an ellipsoid: the unit sphere seen through M diag(radii)
                frame = (_inverse(_scaled(linear, radii)), offset)
            else:
                frame = None if linear is None else (self._inverse, offset)
            self.exact = (cast, params, frame)

    def gjk(self, shape):
        """The GJK plan for ``shape`` (the one this plan was made for): cached for a
        transformed shape (its frame's inverse), made per call for an untransformed one (its
        support mapping would hold the cache's key)."""
        if self._gjk is not None:
            return self._gjk
        inner, linear = self._inner if self._inner is not None else shape, self._linear
        radii = inner.radii.tolist() if type(inner) is Ellipsoid else None
        if radii is not None and min(radii) > 0.0:
            # Ellipsoid(radii) = diag(radii) · Sphere(1): a point core with margin 1.
            core, margin, linear = _ORIGIN, 1.0, _scaled(linear, radii)
            inverse = _inverse(linear)
        else:
            core, margin, inverse = inner.core, inner.margin, self._inverse
        frame = None if linear is None else (inverse, self._offset, linear)
        plan = (core.support_xyz, margin, core.center_xyz(), frame)
        if self._inner is not None:
            self._gjk = plan
        return plan


# Keyed weakly on the (immutable) shape, so repeated casts against one shape skip the 3x3
# inverse; shapes that cannot be weakly referenced are planned per call.
_plans = weakref.WeakKeyDictionary()


def _plan(shape):
    try:
        plan = _plans.get(shape)
    except TypeError:
        return _Plan(shape)
    if plan is None:
        plan = _Plan(shape)
        _plans[shape] = plan
    return plan


def _scaled(linear, radii):
    """M · diag(radii) (M the identity when None), as 9 row-major floats."""
    rx, ry, rz = radii
    m = linear or (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    return (m[0] * rx, m[1] * ry, m[2] * rz, m[3] * rx, m[4] * ry, m[5] * rz,
            m[6] * rx, m[7] * ry, m[8] * rz)


def _inverse(m):
    """Inverse of a 3x3 row-major matrix (9 floats) by cofactors; ``Transformed`` has already
    rejected singular matrices, and an ellipsoid's radii are positive here."""
    a, b, c, d, e, f, g, h, i = m
    co0, co1, co2 = e * i - f * h, f * g - d * i, d * h - e * g
    det = a * co0 + b * co1 + c * co2
    return (co0 / det, (c * h - b * i) / det, (b * f - c * e) / det,
            co1 / det, (a * i - c * g) / det, (c * d - a * f) / det,
            co2 / det, (b * g - a * h) / det, (a * e - b * d) / det)


class _Origin:
    """The point core of a unit sphere (an ellipsoid seen in its own frame)."""

    @staticmethod
    def support_xyz(x, y, z):
        return (0.0, 0.0, 0.0)

    @staticmethod
    def center_xyz():
        return (0.0, 0.0, 0.0)


_ORIGIN = _Origin()


def _apply(m, v):
    """m v for m a row-major 3x3 matrix as 9 floats."""
    x, y, z = v
    return (m[0] * x + m[1] * y + m[2] * z,
            m[3] * x + m[4] * y + m[5] * z,
            m[6] * x + m[7] * y + m[8] * z)


def _apply_t(m, v):
    """mᵀ v: normals map between frames by transposes (world = M⁻ᵀ local, local = Mᵀ world)."""
    x, y, z = v
    return (m[0] * x + m[3] * y + m[6] * z,
            m[1] * x + m[4] * y + m[7] * z,
            m[2] * x + m[5] * y + m[8] * z)


def _unit(v):
    x, y, z = v
    n = math.sqrt(x * x + y * y + z * z)
    if n == 0.0:
        return (0.0, 0.0, 0.0)
    return (x / n, y / n, z / n)
