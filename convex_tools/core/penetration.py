"""Penetration depth and signed distance of two convex shapes (seed 000 §4, seed 001 §2.3.4–2.5).

``penetration(a, b, method)`` returns a ``Contact`` (depth, unit normal from A toward B, a point
on each shape with ``point_a − point_b == depth · normal``) or None when the shapes are apart.
Translating A by ``−depth · normal`` leaves the shapes touching.

Methods:

- ``"epa"`` (default, exact): separating-axis GJK on the shapes; if they overlap, EPA. Rounded
  shapes (``margin > 0``) are split exactly into core ⊕ sphere: the depth of the shapes is the
  depth of the cores plus the margins when the cores overlap, and the margins minus the core
  distance when they do not (the normal is the same in both). EPA therefore only ever expands a
  polytope over the cores, which are sharper (a sphere's core is a point, a capsule's a
  segment), and converges exactly where EPA on the rounded surface would only creep up on it.
- ``"hybrid"``: margin GJK with EPA fallback (seed 001 Alg. 5): GJK on the cores straight away;
  a shallow contact (cores apart by less than the margins) is answered analytically from the core
  closest points, and only overlapping cores go to EPA. Same answers as ``"epa"``; it saves the
  separate intersection test when rounded shapes are usually in shallow contact.
- ``"mpr"``: Minkowski Portal Refinement's two-pass depth heuristic (``mpr.penetration``); fast,
  exact for spheres and face-centred contacts, an estimate otherwise (always a boundary point of
  A − B, so touching after the translation). Rounded shapes are split like EPA's: MPR runs on
  the cores and the margins are added along C's normal at its answer; cores apart (a shallow
  contact) give the exact answer from GJK on the cores. Where MPR cannot decide, EPA answers
  (status DEGENERATE).

If EPA cannot finish (iteration cap, or rounding breaking the polytope) its answer from the best
face it verified is compared with MPR's estimate: both are boundary points of A − B, and the one
whose support plane lies nearer the origin is returned (the true depth is at most that), with a
status other than CONVERGED saying so (ITERATION_LIMIT, FAILED, or DEGENERATE when MPR's was
kept); an answer is never silently wrong.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from . import epa, gjk, mpr, validation
from .geometry import centre_difference, residual_share, split_residual, support_of_difference
from .results import Contact, Status
from .shapes import contact_size, no_larger

METHODS = ("epa", "mpr", "hybrid")

# A normal counts as unit when |n|² is 1 to within this (rounding of a normalised vector; MPR
# answers a zero one for exactly touching shapes).
UNIT_SLACK = 1e-9


def penetration(a, b, method: str = "epa"):
    """Penetration of ``a`` and ``b`` (one common frame) as a ``Contact``; None if apart.

    Supported range (``validation``): shapes within ±1e40 of the origin, non-zero sizes from
    1e-40. There translating A by the depth leaves the shapes touching to 1e-9 of the size of
    A − B (EPA's depth is the least to 1e-6 relative, exactly on polytopes and where its polish
    applies), and the contact points lie on their shapes to 1e-8 of the smaller shape's size,
    or the status is not CONVERGED."""
    a = validation.shape("a", a)
    b = validation.shape("b", b)
    if method == "mpr":
        if a.margin > 0.0 or b.margin > 0.0:
            return _mpr_rounded(a, b)
        estimate = mpr.estimate(a, b)
        if estimate is None:
            return None
        if estimate.status is not Status.FAILED:
            return mpr.contact(estimate, share_a=_share(a, b))
        # MPR found no boundary point along its estimate: EPA's answer, saying so.
        return _answered_by_epa(penetration(a, b, "epa"), estimate.calls)
    if method == "epa":
        if a.margin > 0.0 or b.margin > 0.0:
            if gjk.is_point(a.core) and gjk.is_point(b.core):
                return _rounded(a, b, "epa", 0)     # two spheres: the cores' run decides
            res = gjk.run(a.support_xyz, b.support_xyz, _axis(a, b), gjk.INTERSECT,
                          size=contact_size(a, b))
            if res.status is Status.SEPARATED:
                return None
            return _rounded(a, b, "epa", res.support_calls)
        return _sharp(a, b)
    if method == "hybrid":
        if a.margin > 0.0 or b.margin > 0.0:
            return _rounded(a, b, "hybrid", 0)
        return _sharp(a, b, "hybrid")
    raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")


def signed_distance(a, b) -> float:
    """Distance between ``a`` and ``b`` when apart, minus the penetration depth when overlapping
    (tolerances relative to the shapes' size at any scale of the supported range: ``validation``).
    """
    a = validation.shape("a", a)
    b = validation.shape("b", b)
    ma, mb = a.margin, b.margin
    ca, cb = a.core, b.core
    res = _core_run(a, b)
    if not res.intersecting and not _uncertified(res):
        d = res.distance
        if d > res.touching():
            return d - ma - mb
    contact = _from_gjk(ca.support_xyz, cb.support_xyz, res, ma, mb, "epa", 0, shapes=(a, b))
    return -contact.depth if contact is not None and contact.depth > 0.0 else 0.0


# --- pipelines --------------------------------------------------------------------------------

def _core_run(a, b):
    """GJK's distance run on the cores of rounded ``a`` and ``b`` (``gjk.points_run`` for two
    spheres' points), its tolerances relative to the smaller shape and to the shapes' own
    distance (``gjk.run``'s ``size`` and ``margins``)."""
    ca, cb = a.core, b.core
    if gjk.is_point(ca) and gjk.is_point(cb):
        return gjk.points_run(ca, cb, contact_size(a, b))
    return gjk.run(ca.support_xyz, cb.support_xyz, _axis(ca, cb), gjk.DISTANCE,
                   size=contact_size(a, b), margins=a.margin + b.margin)


def _sharp(a, b, method="epa"):
    res = gjk.run(a.support_xyz, b.support_xyz, _axis(a, b), gjk.INTERSECT,
                  size=contact_size(a, b))
    if res.status is Status.SEPARATED:
        return None
    return _from_gjk(a.support_xyz, b.support_xyz, res, 0.0, 0.0, method, 0, shapes=(a, b))


def _rounded(a, b, method, calls_before):
    ma, mb = a.margin, b.margin
    ca, cb = a.core, b.core
    res = _core_run(a, b)
    return _from_gjk(ca.support_xyz, cb.support_xyz, res, ma, mb, method, calls_before,
                     shapes=(a, b))


def _mpr_rounded(a, b):
    """MPR on rounded shapes, split into core ⊕ sphere as EPA's pipeline does: MPR's estimate
    on the cores with the margins added along C's normal there when the cores overlap (MPR then
    runs on boxes, segments or points instead of creeping up on their rounding); when they do
    not, the shallow contact is exact, from GJK on the cores."""
    ma, mb = a.margin, b.margin
    ca, cb = a.core, b.core
    est = mpr.estimate(ca, cb, contact_size(a, b))
    if est is not None and est.status is not Status.FAILED:
        return mpr.contact(est, ma, mb, _share(a, b))
    calls = 0 if est is None else est.calls
    res = _core_run(a, b)
    contact = _from_gjk(ca.support_xyz, cb.support_xyz, res, ma, mb, "mpr", calls,
                        shapes=(a, b))
    if est is not None and res.intersecting:
        # MPR could not decide on overlapping cores: EPA answered (as for sharp shapes).
        return _answered_by_epa(contact, 0)
    return contact


def _answered_by_epa(contact, mpr_calls):
    """EPA's ``contact`` standing in for MPR's undecided estimate: status DEGENERATE says so."""
    if contact is None:
        return None
    return replace(contact, support_calls=contact.support_calls + mpr_calls,
                   status=Status.DEGENERATE, method="mpr")


def _from_gjk(sa, sb, res, ma, mb, method, calls_before, shapes=None):
    """Contact from a GJK run on (the cores of) A and B, with margins ``ma`` and ``mb``."""
    margins = ma + mb
    calls = calls_before + res.support_calls
    stalled = res.status not in (Status.CONVERGED, Status.REPEATED_SUPPORT)
    if not res.intersecting and not _uncertified(res):
        d = res.distance
        slack = res.touching()
        touching = d <= slack
        if d > margins + slack:
            return None
        if not touching:
            # Cores apart by d <= margins: the shapes overlap by margins − d along the core
            # separation (seed 001 §2.3.4), exactly.
            pa, pb = res.closest_points()
            # The points' own distance (|v| differs from it by the rounding of their
            # coordinates, and the normal must be unit).
            d = math.sqrt((pb[0] - pa[0]) ** 2 + (pb[1] - pa[1]) ** 2 + (pb[2] - pa[2]) ** 2)
            n = ((pb[0] - pa[0]) / d, (pb[1] - pa[1]) / d, (pb[2] - pa[2]) / d)
            if d > margins:
                # Apart by less than the touching tolerance: touching, depth 0, and one point
                # so that point_a − point_b == depth · normal still holds; the status says it
                # is touching, not an exact contact. The point is on the smaller shape: the
                # tolerance is relative to the larger, and would put a midway point that far
                # off a shape 1e6 times smaller.
                t = (ma if _a_is_smaller(shapes) else d - mb) / d
                p = tuple(pa[i] + t * (pb[i] - pa[i]) for i in range(3))
                return _contact(0.0, n, p, p, 0.0, 0.0, res.iterations, calls,
                                Status.TOUCHING, method)
            # (Certified apart by the lower bound but stalled short of the distance: the depth
            # is as uncertain as |v| − lower bound, and the status says so.)
            return _contact(margins - d, n, pa, pb, ma, mb, res.iterations, calls,
                            res.status if stalled else Status.CONVERGED, method)
    if (touching_cores := _touching_cores(sa, sb, res, ma, mb, method, calls, shapes)):
        return touching_cores
    points_a, points_b = res.points_a, res.points_b
    size = None if shapes is None else contact_size(*shapes)
    if _uncertified(res) and shapes is not None:
        # GJK stopped short: its simplex need not hold the origin; MPR's tetrahedron does, if
        # the cores overlap.
        held, tet_a, tet_b = mpr.holding_tetrahedron(shapes[0].core, shapes[1].core)
        if held is False:
            return None
        if held:
            points_a, points_b = tet_a, tet_b
    out = epa.run(sa, sb, points_a, points_b, size=size, scale=res.scale)
    if out.status is Status.FAILED and res.status is Status.TOUCHING and shapes is not None:
        # The origin only within the touching tolerance of GJK's simplex, and EPA could not
        # grow it into a tetrahedron that holds it (two flat discs): from MPR's, if it finds one.
        held, tet_a, tet_b = mpr.holding_tetrahedron(shapes[0].core, shapes[1].core)
        if held:
            calls += out.support_calls
            out = epa.run(sa, sb, tet_a, tet_b, size=size, scale=res.scale)
    if out.status is Status.SEPARATED:
        return None          # (EPA found a plane C lies short of: GJK had stalled undecided)
    calls += out.support_calls
    iterations = res.iterations + out.iterations
    status = out.status
    depth, n, pa, pb = out.depth, out.normal, out.point_a, out.point_b
    if not all(map(math.isfinite, n)) and shapes is None:
        return None
    on_full = False               # points on the full shapes already (else on the cores)
    if out.along_ray and margins > 0.0 and shapes is not None and math.isfinite(depth):
        # The margins add along C's own normal at the core's exit point, which a ray finish
        # does not give: find where the ray leaves the rounded shapes' C instead.
        full = _exit_along(shapes, n)
        if full is not None:
            depth, pa, pb, extra = full
            depth -= margins
            calls += extra
            on_full = True
    if status not in (Status.CONVERGED, Status.TOUCHING) and shapes is not None:
        fallback = _fallback(sa, sb, out, shapes, margins)
        # A fallback with no direction (MPR's zero normal for exactly touching shapes) must not
        # replace EPA's answer, whose normal is valid even when it could not certify the depth.
        if fallback is not None and abs(sum(c * c for c in fallback[1]) - 1.0) <= UNIT_SLACK:
            depth, n, pa, pb, extra = fallback
            calls += extra
            status = Status.DEGENERATE
            on_full = True
    if not all(map(math.isfinite, n)):
        return None
    if status is Status.TOUCHING and shapes is not None:
        # EPA's common point is the midpoint of its simplex's points on A and on B, which need
        # not meet: a flat tetrahedron's weights held them 4e-7 apart beside a 2 µm segment,
        # and the midpoint was a tenth of its length off it. The distance query's is on the
        # smaller shape, within the touching tolerance of the larger.
        near = gjk.distance(shapes[0].core, shapes[1].core)
        calls += near.support_calls
        if near.intersecting:
            pa = pb = tuple(float(c) for c in near.point_a)
    if status is Status.TOUCHING and margins > 0.0:
        status = Status.CONVERGED                 # the cores touch; the shapes overlap by margins
    if on_full:
        return _contact(depth + margins, n, pa, pb, 0.0, 0.0, iterations, calls, status, method)
    return _contact(depth + margins, n, pa, pb, ma, mb, iterations, calls, status, method)


def _touching_cores(sa, sb, res, ma, mb, method, calls, shapes):
    """The contact of cores that touch (GJK apart within its touching tolerance, or TOUCHING:
    the origin within it of the simplex): GJK's last direction is a normal of the contact (−v,
    from A to B), if the cores reach no further than the tolerance along it; else None (v is
    rounding noise, and EPA on the cores finds the normal)."""
    if res.status is Status.INTERSECTING or (not res.intersecting and _uncertified(res)):
        return None
    d = res.distance
    # (GJK's own TOUCHING is decided at the rounding of C's points, not the smaller shape's
    # size: the normal is checked at that.)
    slack = gjk.touching_tolerance(res.scale, res.reach) if res.status is Status.TOUCHING \
        else res.touching()
    if not 0.0 < d <= slack:
        return None
    vx, vy, vz = res.v
    n = (-vx / d, -vy / d, -vz / d)
    q, _, _ = support_of_difference(sa, sb, *n)
    if abs(n[0] * q[0] + n[1] * q[1] + n[2] * q[2]) > slack:
        return None
    pa, pb = res.closest_points()
    p = pa if _a_is_smaller(shapes) else pb     # (on the smaller shape, as ``_from_gjk``'s)
    status = Status.CONVERGED if ma + mb > 0.0 else Status.TOUCHING
    return _contact(ma + mb, n, p, p, ma, mb, res.iterations, calls + 1, status, method)


def _share(a, b) -> float:
    """A's part of a contact's rounding residual (``geometry.residual_share``)."""
    return residual_share(a.extent()[0], b.extent()[0])


def _a_is_smaller(shapes) -> bool:
    """Whether A is the smaller of ``shapes`` (A, B), if known (``shapes.no_larger``)."""
    return shapes is not None and no_larger(*shapes)


def _uncertified(res) -> bool:
    """Whether a GJK run that did not find the shapes overlapping has not shown them apart
    either (``gjk.undecided``). On a needle of A − B (a segment 1e6 times longer than the
    shape beside it) GJK could stall ~1e-8 of the length from the origin that C holds, and
    margins − |v| would be a depth short by that much: EPA on the cores decides instead, from
    MPR's tetrahedron when GJK's simplex does not hold the origin."""
    return not res.intersecting and gjk.undecided(res)


def _exit_along(shapes, n):
    """Where the ray along n from the origin leaves A − B of the full (rounded) shapes:
    (depth, point on A, point on B, support calls), or None if MPR cannot find it."""
    a, b = shapes
    tolerance = mpr.fine_fraction(epa.RAY_TOLERANCE, a.extent()[0] + b.extent()[0],
                                  contact_size(a, b))
    ray = mpr.ray_pass(a.support_xyz, b.support_xyz, n, tolerance)
    if ray.status is not Status.CONVERGED or len(ray.portal) != 3:
        return None
    crossing = mpr.ray_crossing(ray.portal, n)
    if crossing is None:
        return None
    depth, lam = crossing
    pa = [sum(l * v[1][i] for l, v in zip(lam, ray.portal)) for i in range(3)]
    pb = [sum(l * v[2][i] for l, v in zip(lam, ray.portal)) for i in range(3)]
    pa, pb = split_residual(pa, pb, depth, n, _share(a, b))    # pa − pb == depth · n exactly
    return max(depth, 0.0), pa, pb, ray.calls


def _fallback(sa, sb, out, shapes, margins):
    """MPR's estimate, when it is shallower than EPA's answer.

    Both are boundary points of C (touching after the translation); the better is the one whose
    support plane h(n) lies nearer the origin, since the true depth is at most min h(n).
    """
    a, b = shapes
    est = mpr.penetration(a, b)
    if est is None or est.status is Status.FAILED:
        return None
    nx, ny, nz = (float(c) for c in est.normal)
    depth = float(est.depth) - margins
    w, _, _ = support_of_difference(sa, sb, nx, ny, nz)
    upper = nx * w[0] + ny * w[1] + nz * w[2]
    if math.isfinite(out.depth):
        ex, ey, ez = out.normal
        q, _, _ = support_of_difference(sa, sb, ex, ey, ez)
        if ex * q[0] + ey * q[1] + ez * q[2] <= upper:
            return None
    return max(depth, 0.0), (nx, ny, nz), tuple(map(float, est.point_a)), \
        tuple(map(float, est.point_b)), est.support_calls + 2


def _contact(depth, n, pa, pb, ma, mb, iterations, calls, status, method):
    """Contact from core points: push them out by the margins along the normal."""
    point_a = np.array((pa[0] + ma * n[0], pa[1] + ma * n[1], pa[2] + ma * n[2]))
    point_b = np.array((pb[0] - mb * n[0], pb[1] - mb * n[1], pb[2] - mb * n[2]))
    return Contact(float(depth), np.array(n, dtype=float), point_a, point_b, int(iterations),
                   int(calls), status, method)


def _axis(a, b):
    """GJK's first direction: the centre difference, rescaled so that nearly coincident centres
    (a subnormal difference) do not reach the support mappings as a zero direction."""
    x, y, z = centre_difference(a, b)
    m = max(abs(x), abs(y), abs(z))
    if not m > 0.0:
        return None
    return (x / m, y / m, z / m)


