"""Ray casts against any support-mapped shape: van den Bergen's GJK ray cast (seed 004, Alg. 3).

The ray is ``x(λ) = s + λ r``. The algorithm keeps a lower bound λ on the hit parameter and a
GJK simplex P of support points of the shape C, and alternates two moves:

* **Clip** (seed 004 §2): for the current GJK vector v (the point of conv({x} - P) closest to the
  origin, which approaches x - c for c the point of C nearest x) the support point p = s_C(v)
  gives a plane with normal v that C lies behind. If x is in front of it (v·w > 0, w = x - p),
  no point of the ray before that plane can be in C: either the ray runs away from the plane
  (v·r >= 0, a miss, and v is a separating axis) or λ advances to it by v·w / -v·r.
* **GJK step** (seed 004 §3): add p to the simplex, v <- the point of conv({x} - P) closest to the
  origin, keep only the points that support it. x may have moved, so the simplex is re-solved
  around the new x every time (the signed-volumes solver in ``simplex`` does this from scratch).

It stops when x is in C to within a *relative* tolerance, ||v||² <= ε max ||x - p||² over P
(seed 004 §4: the rounding error of ||v||² grows with the simplex's size, so an absolute ε
either loops forever on large shapes or is meaningless on small ones); when λ passes ``max_t``
(the early out for finite rays); with a miss; or when GJK stalls (status NO_PROGRESS): x did
not move and v did not get shorter. The stall is the rounding floor on smooth surfaces without
a margin, where the simplex near the hit is a sliver: cylinder sides end within ~1e-8 of the
shape's size, cone sides within ~2e-7, their normals within a few 1e-4.

Two reductions make curved shapes exact instead of slowly convergent:

* **Margins.** A rounded shape is ``core ⊕ Sphere(m)`` (``Shape.core``, ``Shape.margin``): the
  ray cast runs on the core and clips against the planes pushed out by m (gap v·w - m||v||), and
  stops when the core is within m of x. For a sphere (a point core) the clip is then Newton's
  method on ||x(λ) - c|| - m, so spheres, capsules and round boxes converge in a few steps.
* **Local frames.** λ does not change under an affine map, so a ray against ``Transformed(A, M)``
  is the ray M⁻¹(s) + λ M⁻¹ r against A, and the normal maps back by M⁻ᵀ. Casting in A's own
  frame skips the matrix products in every support call and keeps A's margin even when M
  scales non-uniformly (an ellipsoid is a unit sphere, margin 1, seen through diag(radii)).

Results: ``RayHit(t, point, normal, iterations, support_calls, status)`` with
``point == origin + t * direction`` and ``normal`` the unit outward normal, or ``None`` for a
miss. A ray starting inside (or on the surface of) the shape hits at ``t == 0`` with a zero
normal. ``cache`` (a ``SeparationCache``) warm-starts coherent rays: after a hit it holds the
normal, after a miss an axis separating the whole ray, so a similar ray that misses too is
usually rejected by its first support call.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from . import validation
from .results import RayHit, Status
from .shapes import Ellipsoid, Transformed
from .simplex import closest_to_origin

# Termination: x counts as inside the shape once ||v|| - margin <= RELATIVE_TOLERANCE * ρ, with
# ρ = max ||x - p|| over the simplex (seed 004 §4 with ε_tol = RELATIVE_TOLERANCE²), floored by
# the shape's size. This bounds the hit point's distance to the surface relative to that size.
# The signed-volumes solver computes v directly (no determinant cancellation), so its rounding
# floor is ~1e-15 ρ and 1e-12 is reached without looping; it is well below the 1e-9 separations
# a near-miss test must still resolve.
RELATIVE_TOLERANCE = 1e-12
# Cap on clip + GJK iterations. Polytopes need ~5, rounded shapes ~4-6; smooth shapes without a
# margin (cylinder and cone sides, sweeps of ellipsoids) converge linearly, 15-30 on average and
# up to ~60, ending at the stall test (status NO_PROGRESS) rather than at this cap.
MAX_ITERATIONS = 100


def ray_cast(shape, origin, direction, max_t=math.inf, cache=None):
    """First point of ``shape`` on the ray ``origin + t * direction``, t in [0, max_t].

    Returns a ``RayHit`` (``point == origin + t * direction``, ``normal`` the unit outward
    normal, zero when the ray starts inside or on the surface) or ``None`` if the ray misses or
    first reaches the shape beyond ``max_t``. ``direction`` need not be a unit vector; ``t`` is
    measured in multiples of it. ``cache`` (a ``SeparationCache``) carries the last separating
    axis or normal between calls on coherent rays (seed 004 §4, end).
    """
    if not callable(getattr(shape, "support_xyz", None)):
        raise ValueError(f"shape must be a convex_tools shape, got {type(shape).__name__}")
    sx, sy, sz = _xyz("origin", origin)
    rx, ry, rz = _xyz("direction", direction)
    if rx == 0.0 and ry == 0.0 and rz == 0.0:
        raise ValueError("direction must be a non-zero vector")
    max_t = _max_t(max_t)

    support, margin, center, frame = _plan(shape)
    if frame is None:
        ls, lr = (sx, sy, sz), (rx, ry, rz)
    else:
        inv, offset, _ = frame
        ls = _apply(inv, (sx - offset[0], sy - offset[1], sz - offset[2]))
        lr = _apply(inv, (rx, ry, rz))
    axis = None
    if cache is not None and cache.axis is not None:
        axis = cache.axis if frame is None else _apply_t(frame[2], cache.axis)  # Mᵀ n

    hit, lam, normal, _, _, iterations, status = gjk_ray_cast(support, margin, ls, lr, max_t,
                                                              center, axis)
    world_normal = normal if frame is None else _apply_t(frame[0], normal)  # M⁻ᵀ n
    if cache is not None:
        cache.record(world_normal, iterations)  # the separating axis of a miss, else the normal
    if not hit:
        return None
    if lam > 0.0:
        world_normal = _unit(world_normal)
    return RayHit(t=lam,
                  point=np.array((sx + lam * rx, sy + lam * ry, sz + lam * rz)),
                  normal=np.array(world_normal if lam > 0.0 else (0.0, 0.0, 0.0)),
                  iterations=iterations, support_calls=iterations, status=status)


def gjk_ray_cast(support, margin, origin, direction, max_t, center, axis=None):
    """The loop of seed 004 Alg. 3 on a support function, in plain floats.

    ``support(x, y, z)`` returns a tuple whose first three entries are the support point of the
    core (any further entries ride along: the sweep stores its witness points there);
    ``margin`` is the radius added around that core and ``center`` a point inside it. ``axis``
    is the initial v: by default ``origin - center``; a cached separating axis warm-starts.

    Returns ``(hit, λ, normal, simplex, weights, iterations, status)``: ``normal`` is the outward
    normal direction (not normalised; zero if the ray starts inside), and ``simplex``/``weights``
    express the core point nearest the hit, x - v, as ``sum(w_i * simplex_i[:3])``. On a miss
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
                return False, lam, axis, simplex, weights, iteration, Status.SEPARATED
            lam -= gap / vr
            if lam > max_t:  # early out: no hit before max_t
                return False, lam, (vx, vy, vz), simplex, weights, iteration, Status.SEPARATED
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
        (vx, vy, vz), w = closest_to_origin(points)
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
    if lam == 0.0:  # the ray starts inside (or on the surface)
        if status is not Status.ITERATION_LIMIT:
            status = Status.INTERSECTING
        return True, 0.0, (0.0, 0.0, 0.0), simplex, weights, iteration, status
    if margin and vv > 0.0:
        # x is at distance ~margin from the core: x - (nearest core point) is the exact normal.
        nx, ny, nz = vx, vy, vz
    return True, lam, (nx, ny, nz), simplex, weights, iteration, status


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

# Per shape: (core support, margin, core centre, frame) with frame = None or (M⁻¹, offset, M),
# the 3x3 matrices as 9 row-major floats. Keyed weakly on the (immutable) shape, so repeated casts
# against one shape skip the 3x3 inverse; shapes that cannot be weakly referenced are planned
# per call.
_plans = weakref.WeakKeyDictionary()


def _plan(shape):
    try:
        plan = _plans.get(shape)
    except TypeError:
        return _make_plan(shape)
    if plan is None:
        plan = _make_plan(shape)
        _plans[shape] = plan
    return plan


def _make_plan(shape):
    # Plain floats throughout: a plan is made once per shape, but per ray for fresh shapes.
    linear, offset = None, (0.0, 0.0, 0.0)
    inner = shape
    if isinstance(inner, Transformed):
        rows = inner.matrix.tolist()
        linear = (*rows[0][:3], *rows[1][:3], *rows[2][:3])
        offset = (rows[0][3], rows[1][3], rows[2][3])
        inner = inner.shape
    radii = inner.radii.tolist() if isinstance(inner, Ellipsoid) else None
    if radii is not None and min(radii) > 0.0:
        # Ellipsoid(radii) = diag(radii) · Sphere(1): a point core with margin 1.
        rx, ry, rz = radii
        m = linear or (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
        linear = (m[0] * rx, m[1] * ry, m[2] * rz, m[3] * rx, m[4] * ry, m[5] * rz,
                  m[6] * rx, m[7] * ry, m[8] * rz)
        core, margin = _ORIGIN, 1.0
    else:
        core, margin = inner.core, inner.margin
    frame = None
    if linear is not None:
        frame = (_inverse(linear), offset, linear)
    return core.support_xyz, margin, core.center_xyz(), frame


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
