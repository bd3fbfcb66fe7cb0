"""Ray casts: closed forms for the primitives, and van den Bergen's GJK ray cast (seed 004,
Alg. 3) polished on smooth surfaces for everything else. This module is the dispatch between them
and the frames they run in; each algorithm has its own module:

* ``ray_closed_forms``: exact intersections with the primitives in their own frames;
* ``gjk_raycast``: the GJK ray cast on any support mapping (also the engine of ``sweep``);
* ``ray_polish``: Newton's method on the contact conditions, finishing the GJK cast's hits on
  curved surfaces.

The ray is ``x(λ) = s + λ r``; the answer is the smallest λ in [0, max_t] with x(λ) in the shape.

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

import numpy as np

from . import validation
from .geometry import apply, apply_transpose, unit
from .gjk_raycast import gjk_ray_cast
from .ray_closed_forms import closed_form, closed_form_hit
from .ray_polish import needs_polish, polish_hit
from .results import RayHit, Status
from .shapes import Ellipsoid, Transformed


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
    sx, sy, sz = validation.xyz("origin", origin)
    if max(abs(sx), abs(sy), abs(sz)) > validation.MAX_COORDINATE:
        validation.coordinates("origin", (sx, sy, sz))      # raises, naming the range
    dx, dy, dz = validation.xyz("direction", direction)
    max_t = validation.max_t(max_t)
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
        return closed_form_hit(plan.exact, (sx, sy, sz), (rx, ry, rz), max_t, cache)

    support, margin, center, frame, shift = plan.gjk(shape)
    if frame is None:
        ls, lr = (sx, sy, sz), (rx, ry, rz)
    else:
        inv, offset, _ = frame
        ls = apply(inv, (sx - offset[0], sy - offset[1], sz - offset[2]))
        lr = apply(inv, (rx, ry, rz))
    if shift is not None:
        # Cast relative to the core's centre (t, the normal and the hit are unchanged).
        cx, cy, cz = shift
        ls = (ls[0] - cx, ls[1] - cy, ls[2] - cz)
        center = (center[0] - cx, center[1] - cy, center[2] - cz)
    axis = None
    if cache is not None and cache.axis is not None:
        axis = cache.axis if frame is None else apply_transpose(frame[2], cache.axis)  # Mᵀ n

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
    world_normal = normal if frame is None else apply_transpose(frame[0], normal)  # M⁻ᵀ n
    if cache is not None:
        cache.record(world_normal, calls)  # the separating axis of a miss, else the normal
    if not hit:
        return None
    if lam > 0.0:
        world_normal = unit(world_normal)
    return RayHit(t=lam,
                  point=np.array((sx + lam * rx, sy + lam * ry, sz + lam * rz)),
                  normal=np.array(world_normal if lam > 0.0 else (0.0, 0.0, 0.0)),
                  iterations=cast.iterations, support_calls=calls, status=status)


# The GJK cast runs relative to the core's centre when the core's points lie farther than this
# many times its size from its frame's origin (below, the shift would only add a call per
# support; beyond, coordinates larger than the shape round the cast's simplex).
RECENTRE_REACH = 4.0


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
        closed = closed_form(inner)
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
        centre = core.center_xyz()
        size, reach = core.extent()
        if reach > RECENTRE_REACH * size:
            # A core far from its frame's origin relative to its size (a flat hull 1e8 of its
            # size away): the cast's simplex would round at the size of those coordinates, and
            # a ray crossing the thin shape at 70° missed. Relative to its centre it rounds at
            # its own size.
            plan = (_shifted(core.support_xyz, centre), margin, centre, frame, centre)
        else:
            plan = (core.support_xyz, margin, centre, frame, None)
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


def _shifted(support, centre):
    """``support`` relative to ``centre``."""
    cx, cy, cz = centre

    def shifted(x, y, z):
        p = support(x, y, z)
        return (p[0] - cx, p[1] - cy, p[2] - cz)
    return shifted


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

    @staticmethod
    def extent():
        return (0.0, 0.0)


_ORIGIN = _Origin()
