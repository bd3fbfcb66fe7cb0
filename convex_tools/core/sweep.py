"""Shape sweeps: first time of contact of two moving shapes (seed 004 §1, seed 002 §4).

A moves by ``t * translation_a`` and B by ``t * translation_b``, t in [0, 1]. They touch at time t
when some a + t·ta equals some b + t·tb, that is when ``t * r`` lies in the configuration space
obstacle D = B - A (all differences b - a) for the relative motion r = ta - tb. So the first
time of contact is a ray cast from the origin along r against D, limited to t <= 1, and it is
exactly the GJK ray cast (``gjk_raycast``) on D's support mapping s_D(v) = s_B(v) - s_A(-v).

The support points of D carry the A and B points that made them, so the barycentric weights of
the final simplex give the witness points on both shapes (seed 000 §3, as in GJK). Margins add:
D = (core B - core A) ⊕ Sphere(margin A + margin B), and the ray cast runs on the cores with the
summed margin, exact for spheres, capsules and rounded boxes.

Normal: the ray cast's normal is D's outward normal at the hit; D's outward side is where B's
points lie beyond A's, so the unit normal from A toward B is its opposite.

Smooth pairs without margins (ellipsoids, cylinders, cones, and boxes against them) make D a
curved shape on which the GJK ray cast converges only linearly: the time of impact within
~1e-8 of the shapes' size, the normal within ~1e-4. The ray cast's polish (``ray_polish.
polish_hit``: Newton's method on the contact conditions, with D's support points) then gives
both to rounding; its support points carry their witnesses as well, so the contact point is
polished with them.

``sweep_rotating`` handles motions that turn as well, by conservative advancement on GJK
distances (documented at the function).
"""

from __future__ import annotations

import math

import numpy as np

from . import gjk, validation
from .geometry import COORDINATE_ROUNDING, centre_difference, support_of_difference
from .gjk import distance
from .gjk_raycast import RELATIVE_TOLERANCE, gjk_ray_cast
from .ray_polish import POLISH_CLUSTER, needs_polish, polish_hit
from .results import SeparationCache, Status, SweepHit
from .shapes import Transformed, contact_size, translated

# A translating cast that stalls (NO_PROGRESS) is finished by at most this many Newton steps
# on the shapes' distance (``_advance_stalled``); each is one GJK run, and they converge
# quadratically where the contact is smooth, in one step where it is flat.
STALLED_CAST_STEPS = 8


def sweep(a, b, translation_a, translation_b=(0.0, 0.0, 0.0), cache=None):
    """First contact of ``a`` moving by ``translation_a`` and ``b`` by ``translation_b``.

    Returns a ``SweepHit`` (``t`` in [0, 1]; ``point`` the contact point at time t in the common
    frame; ``normal`` the unit normal from A toward B) or ``None`` if the shapes stay apart.
    Shapes that already overlap or touch at t = 0 give ``t == 0`` with a zero normal and a
    point between their cores (use ``penetration`` for depth and direction then). ``cache`` (a
    ``SeparationCache``) warm-starts repeated sweeps of one pair.

    Supported range (``validation``): the relative translation ``translation_a -
    translation_b`` zero or of a length from 1e-200 to 1e200 (the cast runs on it scaled by a
    power of two, exactly); outside it a ValueError names it.
    """
    a = validation.shape("a", a)
    b = validation.shape("b", b)
    tax, tay, taz = validation.xyz("translation_a", translation_a)
    tbx, tby, tbz = validation.xyz("translation_b", translation_b)
    r = (tax - tbx, tay - tby, taz - tbz)
    if not all(map(math.isfinite, r)):
        raise ValueError(f"translation_a - translation_b must be finite, got {list(r)}")
    if r == (0.0, 0.0, 0.0):
        # No relative motion: they touch at t = 0 or never.
        res = distance(a, b)
        if not res.intersecting:
            return None
        return SweepHit(t=0.0, point=0.5 * (res.point_a + res.point_b), normal=np.zeros(3),
                        iterations=res.iterations, support_calls=res.support_calls,
                        status=Status.INTERSECTING)
    # The cast runs on r / 2^e, up to time 2^e: exact, and its squares stay finite.
    e = validation.direction_scale("translation_a - translation_b", *r)
    r = (math.ldexp(r[0], -e), math.ldexp(r[1], -e), math.ldexp(r[2], -e))
    end = math.ldexp(1.0, e)
    ma, mb = a.margin, b.margin
    core_a, core_b = a.core, b.core
    sa, sb = core_a.support_xyz, core_b.support_xyz

    def support_cso(x, y, z):
        # s_{B-A}(v) = s_B(v) - s_A(-v), with both witnesses riding along.
        (wx, wy, wz), (bx, by, bz), (ax, ay, az) = support_of_difference(sb, sa, x, y, z)
        return (wx, wy, wz, ax, ay, az, bx, by, bz)

    (cax, cay, caz), (cbx, cby, cbz) = core_a.center_xyz(), core_b.center_xyz()
    center = (cbx - cax, cby - cay, cbz - caz)  # a point inside D
    axis = cache.axis if cache is not None else None
    # D's points are differences of the shapes' support points, which round at their
    # coordinates' size (the centres', where the pair is far from the world origin).
    rounding = COORDINATE_ROUNDING * max(map(abs, (cax, cay, caz, cbx, cby, cbz)))
    cast = gjk_ray_cast(support_cso, ma + mb, (0.0, 0.0, 0.0), r, end, center, axis, rounding)
    hit, t, normal, simplex, weights, iterations, status = cast[:7]
    calls = iterations
    exact_normal = False    # the cast's normal is trusted (a polytope feature) or was polished
    if hit and t > 0.0:
        polish, probes = needs_polish(support_cso, cast)
        calls += probes
        polished = polish_hit(support_cso, ma + mb, (0.0, 0.0, 0.0), r, cast) if polish else None
        exact_normal = not polish or polished is not None
        if polished is not None:  # curved D: exact time, normal and witnesses
            t, normal, simplex, weights, extra = polished
            calls += extra
            status = Status.CONVERGED
            hit = t <= end  # the exact time may lie just past the end of the motion ...
            t = max(t, 0.0)  # ... or before its start, to rounding: touching at t = 0
    if cache is not None:
        cache.record(normal, calls)
    if not hit:
        return None
    if status is Status.NO_PROGRESS and t > 0.0:
        advanced = _advance_stalled(a, b, (tax, tay, taz), (tbx, tby, tbz),
                                    math.ldexp(t, -e), cast.scale, rounding)
        if advanced is not None:
            t, point, n, extra, status = advanced
            return SweepHit(t=t, point=point, normal=n, iterations=iterations + extra,
                            support_calls=2 * calls + extra, status=status)
    # Time in units of r (scaled) for the witnesses below, and of the motion for the answer.
    t_r, t = t, math.ldexp(t, -e)

    # Witnesses on the cores at their start poses: b0 - a0 is the point of core D nearest t r.
    a0, b0 = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    for q, w in zip(simplex, weights):
        for i in range(3):
            a0[i] += w * q[3 + i]
            b0[i] += w * q[6 + i]
    nx, ny, nz = normal
    length = math.sqrt(nx * nx + ny * ny + nz * nz)
    if t > 0.0 and length > 0.0:
        n = (-nx / length, -ny / length, -nz / length)  # from A toward B
        a0, b0 = _exact_witnesses(simplex, a0, b0, sa, sb, n, t_r, r, ma + mb, cast.scale,
                                  exact_normal=exact_normal)
    else:
        n = (0.0, 0.0, 0.0)
        status = Status.INTERSECTING
    # Contact points at time t, pushed out from the cores by the margins, and their midpoint.
    point = np.array([0.5 * (a0[i] + t * ta + ma * n[i] + b0[i] + t * tb - mb * n[i])
                      for i, (ta, tb) in enumerate(((tax, tbx), (tay, tby), (taz, tbz)))])
    return SweepHit(t=t, point=point, normal=np.array(n), iterations=iterations,
                    support_calls=2 * calls, status=status)


def _advance_stalled(a, b, ta, tb, t, scale, rounding):
    """Newton's method on the distance d(t) of A and B from a stalled cast's time t: the
    cast on a sliver D (a 2 m segment through a flat hull 1e-6 across) stopped where the
    shapes were still 4.7e-9 apart. Under a translation d(t) is convex, so the step
    t + d / (r · n) (r the relative motion, n the unit normal from A toward B at t) stays short
    of the contact and converges to it, given d and n exact. They are not quite: a step is
    taken on GJK's certified lower bound of d, and only where the upper bound is within a
    factor 2 of it (a stalled run's |v| can lie far above d: on cones 1e-39 across a step on
    it overlapped them); one that lands past the contact all the same (n off) is taken again
    as conservative advancement's d / |r|, which no error of n can make overshoot, and so are
    the steps after it.

    Ends when d is within the cast's tolerance of D's size (``scale``, plus the points'
    ``rounding``): (t, point, normal, support calls, CONVERGED); NO_PROGRESS with the last t
    apart if the steps run out; None where the cast's answer stands (the shapes touch at its t,
    GJK cannot bound d there, or d seems not to fall: a noisy n cannot prove a miss)."""
    r = (ta[0] - tb[0], ta[1] - tb[1], ta[2] - tb[2])
    speed = math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
    tolerance = RELATIVE_TOLERANCE * scale + rounding
    calls = 0
    last = None             # (t, lower bound of d, point, n) at the last t they were apart
    safe = False            # conservative steps only (after a Newton step passed the contact)
    for _ in range(STALLED_CAST_STEPS + 1):
        touching, low, high, n, point, spent = _gap_at(a, b, ta, tb, t)
        calls += spent
        if touching is not None:
            if last is None:
                return None
            if safe or touching:
                # On the contact (a conservative step overlaps only to rounding)
                return t, point, last[3], calls, Status.CONVERGED
            safe = True
            t = last[0] + last[1] / speed
            continue
        if not low > 0.5 * high:
            break           # GJK stalled without knowing the distance: nothing to step on
        last = (t, low, point, n)
        if high <= tolerance:
            return t, point, n, calls, Status.CONVERGED
        closing = speed if safe else float(r[0] * n[0] + r[1] * n[1] + r[2] * n[2])
        if not closing > 0.0:
            return None
        if t + low / closing > 1.0:
            break
        t += low / closing
    if last is None:
        return None
    return last[0], last[2], last[3], calls, Status.NO_PROGRESS


def _gap_at(a, b, ta, tb, t):
    """GJK on the cores of A and B moved to time t: (None while apart, else whether they only
    touch; the lower and upper bounds of their distance; the unit normal from A toward B; a
    point between them; support calls)."""
    moved_a = translated(a, (t * ta[0], t * ta[1], t * ta[2]))
    moved_b = translated(b, (t * tb[0], t * tb[1], t * tb[2]))
    ca, cb = moved_a.core, moved_b.core
    ma, mb = a.margin, b.margin
    res = gjk.run(ca.support_xyz, cb.support_xyz, centre_difference(ca, cb),
                  size=contact_size(a, b), margins=ma + mb)
    pa, pb = res.closest_points()
    norm_v = res.distance
    if res.intersecting or norm_v <= ma + mb:
        p = np.array(pa if res.intersecting else
                     [pa[i] + ma / (ma + mb) * (pb[i] - pa[i]) for i in range(3)])
        return res.status is Status.TOUCHING, 0.0, 0.0, None, p, res.support_calls
    n = np.array([pb[i] - pa[i] for i in range(3)])
    n /= math.sqrt(float(n @ n)) or 1.0     # (by the points' own distance: |n| = 1 exactly)
    point = 0.5 * (np.array(pa) + ma * n + np.array(pb) - mb * n)
    return None, res.lower_bound - ma - mb, norm_v - ma - mb, n, point, res.support_calls


def _exact_witnesses(simplex, a0, b0, sa, sb, n, t, r, margin, scale, *, exact_normal):
    """The witnesses, with a curved side's replaced by its exact support point along n.

    When one shape meets the other with a point of a curved surface (an ellipsoid against a
    wall), the simplex holds that shape's support points for a few nearby directions, and their
    blend misses its contact point by ~1e-6 although the time and the normal are exact: the
    contact point there is that shape's support point along the normal, and the other
    witness follows from b0 - a0 = t r + margin n (the core point of D at the hit). That needs
    the normal exact (``exact_normal``: trusted or polished; a failed polish leaves it as the
    cast found it): a normal from the margin is exact only to
    the cast's tolerance over the margin, 3e-6 for a round box of 1e-6 against a disc of 1,
    and the support point of a curved rim moves with it by as much. Otherwise the blends
    stand: each is a point of its shape.
    """
    if not exact_normal:
        return a0, b0
    gap = [t * r[i] + margin * n[i] for i in range(3)]
    ca, cb = _spread(simplex, 3, scale), _spread(simplex, 6, scale)
    if ca and not cb:
        a0 = list(sa(*n))
        b0 = [a0[i] + gap[i] for i in range(3)]
    elif cb and not ca:
        b0 = list(sb(-n[0], -n[1], -n[2]))
        a0 = [b0[i] - gap[i] for i in range(3)]
    return a0, b0


def _spread(simplex, offset, scale):
    """True when the witnesses at ``offset`` in the simplex are distinct but nearby: samples of
    one curved patch (as the polish's clustering, ``ray_polish.POLISH_CLUSTER``)."""
    points = [q[offset:offset + 3] for q in simplex]
    far2 = (POLISH_CLUSTER * scale) ** 2
    distinct = False
    for i, p in enumerate(points):
        for q in points[:i]:
            d2 = (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2
            if d2 > far2:
                return False
            distinct = distinct or d2 > 0.0
    return distinct


# --- rotating sweeps: conservative advancement (Mirtich) on GJK distances ---------------------

# Contact is declared once the GJK distance is at most this fraction of the shapes' size (the
# sum of their radii about their pose origins). Near contact each advancement step shrinks the
# distance by a constant factor, so the time of impact is found to ~this relative accuracy.
ADVANCE_TOLERANCE = 1e-9
# Cap on advancement steps (one GJK distance each). Translations end in a few; a fast spin
# about an axis far from the contact takes the most, typically tens.
MAX_ADVANCE_STEPS = 200
# A pose's 3x3 part counts as a rotation when RᵀR is the identity to this tolerance.
ROTATION_TOLERANCE = 1e-9
# The skew part of a rotation by θ about k is 2 sin θ k: near a half turn it shrinks to rounding
# noise, and below this norm the axis is taken from the symmetric part instead.
HALF_TURN_SKEW = 1e-6


def sweep_rotating(a, start_a, end_a, b, start_b=None, end_b=None, cache=None):
    """First contact of ``a`` and ``b`` moving between rigid poses, by conservative advancement.

    ``a`` and ``b`` are shapes in their own frames; ``start_a``/``end_a`` (and ``start_b``/
    ``end_b``, by default B stays at the identity pose) are 4x4 rigid matrices (rotation and
    translation; put scale into the shape with ``Transformed``). Between the poses the
    translation is interpolated linearly and the rotation at constant angular velocity about
    the frame's origin. Returns a ``SweepHit`` (``t`` in [0, 1], contact ``point`` and unit
    ``normal`` from A toward B at time t) or ``None``.

    Conservative advancement (Mirtich 1996): at time t, GJK gives the distance d and the unit
    normal n between the shapes; no point of A approaches B along n faster than
    μ = (v_a - v_b)·n + |ω_a × n| ρ_a + |ω_b × n| ρ_b (ρ: each shape's radius about its pose
    origin; only the spin about axes across n moves points along n), so
    t can advance by d / μ without passing the contact. For pure translations this is exact
    (the distance is convex in t), with rotation it is Mirtich's bound along the current normal.
    Stops when d <= ``ADVANCE_TOLERANCE`` times the shapes' size (status CONVERGED; or, when
    the last advance relied on a distance GJK could not certify, the status GJK stalled with:
    that step may have passed the contact by the distance's error), when t passes 1 or μ <= 0
    (no contact: ``None``), or after ``MAX_ADVANCE_STEPS`` (ITERATION_LIMIT).
    Poses must keep the shapes in the supported range (``validation``: ±1e40).
    """
    a = validation.shape("a", a)
    b = validation.shape("b", b)
    motion_a = _RigidMotion("a", start_a, end_a, a)
    motion_b = _RigidMotion("b", start_b, end_b, b)
    size = motion_a.radius + motion_b.radius
    linear = motion_a.velocity - motion_b.velocity
    t, normal, calls = 0.0, np.zeros(3), 0
    advanced_on = Status.CONVERGED    # how the distance the last advance relied on was found
    if cache is None:
        cache = SeparationCache()  # successive steps are coherent: warm-start each GJK (ISA-GJK)
    for step in range(1, MAX_ADVANCE_STEPS + 1):
        shape_a, shape_b = motion_a.at(t), motion_b.at(t)
        res = distance(shape_a, shape_b, cache=cache)
        calls += res.support_calls
        if res.intersecting or res.distance <= ADVANCE_TOLERANCE * size:
            if t == 0.0:
                return SweepHit(t=0.0, point=0.5 * (res.point_a + res.point_b),
                                normal=np.zeros(3), iterations=step, support_calls=calls,
                                status=Status.INTERSECTING)
            return _contact(shape_a, shape_b, t, normal, size, step, calls, advanced_on)
        normal = res.normal
        # Bound on the closing speed along n: a point at r from A's pose origin moves along n
        # at v·n + (ω × r)·n = v·n + r·(n × ω), at most v·n + |ω × n| ρ (and likewise for B).
        approach = float(linear @ normal) + motion_a.spin_along(normal) \
            + motion_b.spin_along(normal)
        if approach <= 0.0:
            return None
        t += res.distance / approach
        # A stalled GJK's |v| is only an upper bound (on a slab 1e6 times wider than the shape
        # beside it, a few times the distance): the step may have passed the contact.
        exact = res.status in (Status.CONVERGED, Status.REPEATED_SUPPORT)
        advanced_on = Status.CONVERGED if exact else res.status
        if t > 1.0:
            return None
    point = 0.5 * (res.point_a + res.point_b)
    return SweepHit(t=t, point=point, normal=normal, iterations=MAX_ADVANCE_STEPS,
                    support_calls=calls, status=Status.ITERATION_LIMIT)


def _contact(shape_a, shape_b, t, approach_normal, size, steps, calls, status):
    """The contact at time t, where the shapes are within the tolerance of touching.

    GJK's direction between nearly touching shapes is poor (its distance is second-order
    accurate, its direction only first-order), so the normal and point come from a short
    linear sweep of A along the last normal: the ray cast's clipping planes give the contact
    normal exactly on polytopes and rounded shapes.
    """
    probe = sweep(shape_a, shape_b, approach_normal * size)
    if probe is not None and probe.t > 0.0:
        point, normal = probe.point, probe.normal
        calls += probe.support_calls
    else:  # already overlapping by rounding: the last normal is the best there is
        res = distance(shape_a, shape_b)
        point, normal = 0.5 * (res.point_a + res.point_b), approach_normal
    return SweepHit(t=t, point=point, normal=normal, iterations=steps, support_calls=calls,
                    status=status)


class _RigidMotion:
    """A shape moving from one rigid pose to another: linear translation, constant spin."""

    def __init__(self, name, start, end, shape):
        start = np.eye(4) if start is None else _rigid(f"start_{name}", start)
        end = start if end is None else _rigid(f"end_{name}", end)
        self.shape = shape
        self.start = start
        self.velocity = end[:3, 3] - start[:3, 3]
        # Relative rotation Q = R0ᵀ R1 as angle θ about a unit axis k (in the start frame).
        q = start[:3, :3].T @ end[:3, :3]
        cos = min(1.0, max(-1.0, (np.trace(q) - 1.0) / 2.0))
        self.spin = math.acos(cos)
        axis = np.array((q[2, 1] - q[1, 2], q[0, 2] - q[2, 0], q[1, 0] - q[0, 1]))
        if np.linalg.norm(axis) < HALF_TURN_SKEW and self.spin > math.pi / 2:
            # θ ≈ π: the skew part vanishes; the axis is the eigenvector of Q for eigenvalue 1.
            values, vectors = np.linalg.eigh((q + q.T) / 2.0)
            axis = vectors[:, int(np.argmax(values))]
        norm = float(np.linalg.norm(axis))
        self.axis = axis / norm if norm > 0.0 else np.array((0.0, 0.0, 1.0))
        lower, upper = shape.aabb()
        self.radius = float(np.linalg.norm(np.maximum(np.abs(lower), np.abs(upper))))
        # The world angular velocity: R(t) = R0 exp(t θ [k]) turns at θ R0 k, constant.
        self.omega = self.spin * (self.start[:3, :3] @ self.axis)

    def spin_along(self, n):
        """|ω × n| ρ: how fast the spin can move a point of the shape along unit n."""
        return float(np.linalg.norm(np.cross(self.omega, n))) * self.radius if self.spin else 0.0

    def at(self, t):
        """The shape in its pose at time t."""
        m = self.start.copy()
        if self.spin:
            angle = t * self.spin
            k = self.axis
            kx = np.array(((0.0, -k[2], k[1]), (k[2], 0.0, -k[0]), (-k[1], k[0], 0.0)))
            turn = np.eye(3) + math.sin(angle) * kx + (1.0 - math.cos(angle)) * (kx @ kx)
            m[:3, :3] = self.start[:3, :3] @ turn
        m[:3, 3] = self.start[:3, 3] + t * self.velocity
        return Transformed(self.shape, m)


def _rigid(name, pose):
    m = validation.affine_matrix(name, pose)
    r = m[:3, :3]
    if not np.allclose(r.T @ r, np.eye(3), rtol=0.0, atol=ROTATION_TOLERANCE) \
            or np.linalg.det(r) < 0.0:
        raise ValueError(f"{name} must be a rigid pose (rotation and translation); put scale "
                         f"into the shape with Transformed")
    return m


