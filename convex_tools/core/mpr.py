"""Minkowski Portal Refinement: intersection test and depth heuristic (seed 001 §2.4).

MPR works on C = A − B geometrically. From an interior point v0 of C it casts a ray and
maintains a *portal*: a triangle of support points of C that the ray passes through, so that
v0 and the portal bound a tetrahedron inside C.

    phase 1–2, discover the portal: support points around the ray until it passes through
               the triangle (seed 001 Alg. 6–7);
    phase 3,   refine the portal: the support point p along the portal's outward normal
               replaces the portal vertex that keeps the ray inside (Alg. 8), until the portal
               holds the target, the support plane excludes it, or the portal reaches the
               boundary of C (p no farther than a tolerance beyond it).

``intersect`` casts the ray from v0 = centre(A) − centre(B) toward the origin: the shapes
overlap when the origin falls inside a tetrahedron v0 + portal.

``penetration`` is the two-pass heuristic of seed 001 §2.4.1: pass 1 pushes the portal on the
centre ray to the boundary and takes its normal as an estimate of the contact normal; pass 2
casts a ray from the origin along that estimate, pushes that portal to the boundary, and answers
with the portal's point nearest the origin. Pass 2 starts from pass 1's last portal when its ray
crosses it (that portal already lies on the boundary), saving the portal discovery. The answer
is always (within DEPTH_TOLERANCE) a boundary point of C, so translating A by it leaves the
shapes touching; it is the minimal one when the centre ray exits C through the face of the
penetration, and exact for spheres (the ray then passes through the very first support point).
It can differ from EPA's minimal depth, e.g. for corner-to-corner contacts (seed 001 §2.4.1).

Additions to the thesis's heuristic, each for speed without giving up exactness:

- Pass 1 stops at a coarse tolerance on curved C (its normal is only an estimate); on two
  polytopes it goes on to the boundary, and when pass 2's ray crosses that certified portal the
  answer comes from it with no further call.
- Where both shapes are smooth (``Shape.smooth``: ellipsoids, spheres), Newton's polish
  (``depth_polish.polish``) replaces pass 2: it lands exactly on the local minimum of the depth
  near the estimate.
- Elsewhere on curved C, pass 2 takes *secant steps* on smooth parts (``_SecantSteps``) and
  follows the *rulings* of a polytope edge swept over a curved shape (``_ruled_exit``), where
  plain portal refinement creeps up on the curvature linearly; both answer with a support
  point, exactly on the boundary.
- ``core.penetration(..., "mpr")`` runs on the cores of rounded shapes (round boxes, capsules,
  spheres) and adds the margins along C's normal at the answer (``Estimate.surface``).

The portal search is ill-conditioned from an interior point very near the boundary (it can cycle,
so it has its own cap, MAX_DISCOVERY); pass 2 then restarts further back on the same ray. When
MPR still cannot decide, ``intersect`` answers None (``queries.intersect`` then asks GJK) and
``penetration`` answers with status FAILED (and NaN), never a wrong "apart";
``core.penetration(..., "mpr")`` then falls back on EPA.

Portal tests are written with q_i = v_i − v0 and the ray direction r: the ray passes through
portal v1 v2 v3 (outward, det[q1 q2 q3] > 0) exactly when r·(q2×q3), r·(q3×q1) and r·(q1×q2)
are all non-negative.

Layering (docs/ARCHITECTURE.md): MPR uses the foundations, ``shapes`` and ``depth_polish``; it
imports no other algorithm (``queries`` decides what to do when it cannot), and ``epa`` and
``penetration`` use its portal refinement.
"""

from __future__ import annotations

import enum
import math
from typing import NamedTuple

import numpy as np

from . import depth_polish, validation
from .depth_polish import Surface
from .geometry import (centre_difference, norm2, sliver_cross, split_residual,
                       support_of_difference, triangle_coordinates, triple, unit)
from .results import Contact, Status
from .shapes import contact_size
from .simplex import SLIVER_SIN2, closest_to_origin, refined_coordinates

# Support calls per pass (pass 1 and pass 2 each). Portals on boxes and hulls reach the boundary
# in under 10; ellipsoids and cones in under 40 (seed 001 §4.1.3: 20–70 for both passes).
MAX_ITERATIONS = 64

# Support calls the portal discovery (phases 1–2) may make: it takes 3 to 6; more means it is
# cycling (an interior point very near the boundary makes the search ill-conditioned).
MAX_DISCOVERY = 24

# The intersection test stops at the boundary when the support plane is within this fraction of
# the size of C beyond the portal (only reached when the origin is that close to the boundary).
INTERSECT_TOLERANCE = 1e-12

# ... and leaves the verdict to GJK (``intersect`` answers None) when the origin lies within
# this fraction of the size of C of the boundary, either side: on a C as thin as 1e-5 of its
# size (a small flat shape beside a large one) the portal's plane rounds by ~1e-11 of that
# size, and GJK decides such contacts exactly relative to the smaller shape.
INTERSECT_MARGIN = 1e-8

# Pass 1 only estimates a direction for pass 2 (or the polish): on curved C its portal may stop
# this far (relative to the size of C) from the boundary. A coarse normal is enough: on the
# thesis pairs 1e-1 takes 1–3 calls fewer than 1e-2 and its estimates are as deep or shallower
# (mean depth, ellipsoids: 0.4866 at 1e-2, 0.4792 at 1e-1; EPA's minimum 0.4742).
NORMAL_TOLERANCE = 1e-1

# Given the smaller shape's size (``fine``), the answer's tolerance (DEPTH_TOLERANCE, EPA's
# RAY_TOLERANCE) applies to that size where it is smaller than C's: translating a 1 mm box by
# its depth against a 1 km shape leaves them touching to 1e-9 of 1 mm, not of 1 km. But never
# below this fraction of C's size, where the support values round (a few hundred ulps).
FINE_FLOOR = 1e-13

# A portal within this fraction of the size of C of its support plane lies on a face of C
# (rounding level): there is no curvature to polish.
EXACT_TOLERANCE = 1e-13

# The answer's portal reaches the boundary within this fraction of the size of C, so translating
# A by the answer leaves the shapes touching within it.
DEPTH_TOLERANCE = 1e-9

# The origin within this fraction of the size of C of the boundary counts as touching
# (touching shapes intersect, as for ``gjk.intersect``).
TOUCHING_TOLERANCE = 1e-12

# The ray passes through a support point itself when the sine² of the angle between the ray and
# the direction to that point is below this (about 1e-11 rad): that point is the exit point.
RAY_THROUGH_VERTEX_SIN2 = 1e-22

# A secant step (``_SecantSteps``) must bring the support point at least this much nearer the ray
# (as a fraction of the best distance so far), or the secant steps end for the pass.
SECANT_PROGRESS = 0.5

# After a secant step that fails that, refinement runs SECANT_PAUSE calls (bringing the portal
# nearer the exit, where the fit is better) before the secant steps restart from the portal's
# vertices; at most SECANT_RESTARTS times per pass (a ruled part of C never lets them succeed).
SECANT_PAUSE = 3
SECANT_RESTARTS = 2

# Ruled parts of C (``_ruled_exit``): support calls per attempt; each secant step must shrink the
# ray's distance from the ruling by this factor; turns are capped (radians); the exit may lie
# this far (as a fraction of the edge) beyond an end of the edge and still be taken as on it;
# below this sine the ray or the normal runs along the edge and the method does not apply.
RULED_MAX_CALLS = 10
RULED_PROGRESS = 0.5
RULED_MAX_TURN = 0.5
RULED_END_SLACK = 1e-9
RULED_MIN_SIN = 1e-6

# Degenerate cross products (flat portals) are those with |a×b|² <= this · |a|²|b|².
DEGENERATE_SIN2 = 1e-24

NO_EDGES = (False, False)  # ``edges`` argument: neither shape is a polytope

# Why a portal pass stopped, in the vocabulary of ``results.Status``:
#   SEPARATED        the target is outside C (a support plane excludes it)
#   INTERSECTING     the target is inside the tetrahedron v0 + portal (``stop_at_hit``)
#   CONVERGED        the portal reached the boundary of C (target beyond it, or not tested)
#   ITERATION_LIMIT  MAX_ITERATIONS support calls (or MAX_DISCOVERY in the portal search)
#   DEGENERATE       C is flat around the ray: no portal


class _Pass:
    """One portal pass: the vertices (w, point on A, point on B), why it stopped and normal."""

    __slots__ = ("status", "portal", "normal", "calls", "hit", "scale", "gap", "support",
                 "directions", "margin")

    def __init__(self):
        self.status = Status.ITERATION_LIMIT
        self.portal = []
        self.normal = (0.0, 0.0, 0.0)
        self.calls = 0
        self.hit = False
        self.scale = 0.0
        self.gap = math.inf       # how far the last support plane lay beyond the portal
        self.support = None       # (w, a, b): the last support point, along ``normal``
        self.directions = None    # the support direction of each portal vertex
        self.margin = math.inf    # how far the origin lies from the boundary that decided
        #                           ``hit`` or SEPARATED (``clip``), as far as the pass saw


def _portal_pass(sa, sb, v0, r, *, tolerance, clip=False, stop_at_hit=False, secant=False,
                 edges=NO_EDGES) -> _Pass:
    """Discover a portal on the ray v0 + t r, then refine it (seed 001 Alg. 6–8).

    With ``clip`` the target is the origin: a support plane that excludes it ends the pass
    (SEPARATED) and the origin inside the tetrahedron sets ``hit`` (and ends it if
    ``stop_at_hit``). Without ``clip`` the pass runs until the portal reaches the boundary within ``tolerance``
    (relative to the size of C).

    Hot path: the discovery keeps its vertices in plain local floats (w = a − b) beside their
    support points a and b; refinement keeps each as a tuple (q, a, b, support direction), and
    the ``_Pass`` record is filled in only on the way out. (Named steps, ``_portal_dir`` and
    ``_expand_portal``, cost ~0.5 ms in 22 on the 166 MPR depths of a back-to-back timing; the
    refinement as a whole, with its secant strategy split out, costs ~8% more than the
    inlined 180-line loop it replaced.)
    """
    out = _Pass()
    ox, oy, oz = v0
    length = math.hypot(*r)                       # hypot: no underflow for tiny centre offsets
    if not length > 0.0:
        return _end(out, Status.DEGENERATE, 0)
    rx, ry, rz = r[0] / length, r[1] / length, r[2] / length
    # --- phase 1: the first portal point along the ray, and a second across it ---------------
    (w1x, w1y, w1z), a1, b1 = support_of_difference(sa, sb, rx, ry, rz)
    q1x, q1y, q1z = w1x - ox, w1y - oy, w1z - oz
    q1q1 = q1x * q1x + q1y * q1y + q1z * q1z
    scale = math.sqrt(max(q1q1, ox * ox + oy * oy + oz * oz))
    out.scale = scale
    touch = TOUCHING_TOLERANCE * scale
    if clip and w1x * rx + w1y * ry + w1z * rz < -touch:
        out.margin = -(w1x * rx + w1y * ry + w1z * rz)
        return _end(out, Status.SEPARATED, 1)
    nx, ny, nz = q1y * rz - q1z * ry, q1z * rx - q1x * rz, q1x * ry - q1y * rx   # q1 × r
    nn = nx * nx + ny * ny + nz * nz
    if nn <= RAY_THROUGH_VERTEX_SIN2 * q1q1:
        # The ray passes through w1, a support point along r: the exit point, with normal r.
        out.portal = [((w1x, w1y, w1z), a1, b1)]
        out.normal = (rx, ry, rz)
        out.directions = (out.normal,)
        out.hit = True
        out.margin = abs(w1x * rx + w1y * ry + w1z * rz)
        return _end(out, Status.CONVERGED, 1)
    (w2x, w2y, w2z), a2, b2 = support_of_difference(sa, sb, nx, ny, nz)
    d2 = (nx, ny, nz)
    if clip and w2x * nx + w2y * ny + w2z * nz < -touch * math.sqrt(nn):
        out.margin = -(w2x * nx + w2y * ny + w2z * nz) / math.sqrt(nn)
        return _end(out, Status.SEPARATED, 2)
    q2x, q2y, q2z = w2x - ox, w2y - oy, w2z - oz
    nx, ny, nz = q1y * q2z - q1z * q2y, q1z * q2x - q1x * q2z, q1x * q2y - q1y * q2x  # q1 × q2
    nn = nx * nx + ny * ny + nz * nz
    if nn <= DEGENERATE_SIN2 * q1q1 * (q2x * q2x + q2y * q2y + q2z * q2z):
        return _end(out, Status.DEGENERATE, 2)
    d1 = (rx, ry, rz)
    if nx * rx + ny * ry + nz * rz < 0.0:
        q1x, q1y, q1z, a1, b1, d1, q2x, q2y, q2z, a2, b2, d2 = \
            q2x, q2y, q2z, a2, b2, d2, q1x, q1y, q1z, a1, b1, d1
        nx, ny, nz = -nx, -ny, -nz
    # --- phase 2: replace portal points until the ray passes through v1 v2 v3 -----------------
    calls = 2
    while True:
        if calls >= MAX_DISCOVERY:
            return _end(out, Status.ITERATION_LIMIT, calls)
        (q3x, q3y, q3z), a3, b3 = support_of_difference(sa, sb, nx, ny, nz)
        calls += 1
        if clip and q3x * nx + q3y * ny + q3z * nz < \
                -touch * math.sqrt(nx * nx + ny * ny + nz * nz):
            out.margin = -(q3x * nx + q3y * ny + q3z * nz) / \
                math.sqrt(nx * nx + ny * ny + nz * nz)
            return _end(out, Status.SEPARATED, calls)
        q3x, q3y, q3z = q3x - ox, q3y - oy, q3z - oz
        # r·(q1 × q3) > 0: the ray leaves through the side v0 v1 v3, so v3 replaces v2.
        cx, cy, cz = q1y * q3z - q1z * q3y, q1z * q3x - q1x * q3z, q1x * q3y - q1y * q3x
        if cx * rx + cy * ry + cz * rz > 0.0:
            q2x, q2y, q2z, a2, b2, d2 = q3x, q3y, q3z, a3, b3, (nx, ny, nz)
            nx, ny, nz = cx, cy, cz
            continue
        # r·(q3 × q2) > 0: it leaves through the side v0 v3 v2, so v3 replaces v1.
        cx, cy, cz = q3y * q2z - q3z * q2y, q3z * q2x - q3x * q2z, q3x * q2y - q3y * q2x
        if cx * rx + cy * ry + cz * rz > 0.0:
            q1x, q1y, q1z, a1, b1, d1 = q3x, q3y, q3z, a3, b3, (nx, ny, nz)
            nx, ny, nz = cx, cy, cz
            continue
        break
    out.calls = calls
    portal = ((q1x, q1y, q1z, a1, b1, d1), (q2x, q2y, q2z, a2, b2, d2),
              (q3x, q3y, q3z, a3, b3, (nx, ny, nz)))
    return _refine(sa, sb, v0, (rx, ry, rz), portal, clip=clip, tolerance=tolerance,
                   stop_at_hit=stop_at_hit, out=out,
                   secant=_SecantSteps(edges, calls, None) if secant else None)


def refine(sa, sb, v0, r, portal, *, clip=False, tolerance=DEPTH_TOLERANCE, stop_at_hit=False,
           out=None, directions=None, secant=False, edges=NO_EDGES, known=None) -> _Pass:
    """Phase 3 from a given portal [(w, a, b)] × 3 (outward, the ray v0 + t r passing through
    it). EPA uses it to push its best face to the boundary along the face normal.

    ``directions``: the support direction of each portal vertex (``_Pass.directions``), which
    ``secant`` steps need; ``edges``: whether A, B are polytopes (whose edges ``_ruled_exit``
    follows); ``known``: the support points (a, b) along the portal's normal, if already found
    (the last call of the pass that left this portal), which saves the first call.
    """
    if out is None:
        out = _Pass()
        out.scale = max(math.sqrt(norm2(v[0])) for v in portal)
    ox, oy, oz = v0
    directions = directions or (None, None, None)
    vertices = tuple((w[0] - ox, w[1] - oy, w[2] - oz, a, b, d)
                     for (w, a, b), d in zip(portal, directions))
    steps = _SecantSteps(edges, out.calls, known) if secant and None not in directions else None
    return _refine(sa, sb, v0, r, vertices, clip=clip, tolerance=tolerance,
                   stop_at_hit=stop_at_hit, out=out, secant=steps, known=known)


def _refine(sa, sb, v0, r, portal, *, clip, tolerance, stop_at_hit, out, secant=None,
            known=None) -> _Pass:
    """Phase 3 (seed 001 Alg. 8) on a portal of three vertices (q = w − v0, a, b, support
    direction): the support point along the portal's normal replaces the vertex that keeps the
    ray inside, until the portal holds the target (``clip``: the origin), the support plane
    excludes it, or the portal reaches the boundary of C within ``tolerance``.

    ``secant`` (a ``_SecantSteps``, pass 2 on curved C) takes over the steps where it can: a
    secant step toward the exit point, or the exit found along a ruling; its support points
    that lie beyond the portal's plane refine the portal like any other.
    """
    ox, oy, oz = v0
    scale = out.scale
    touch = TOUCHING_TOLERANCE * scale
    tol = tolerance * scale
    strict = INTERSECT_TOLERANCE * scale
    calls = out.calls
    hit = False
    normal = out.normal
    support = None          # the last plain step's (w, a, b) and its gap beyond the portal
    while True:
        n = _portal_dir(portal)
        if n is None:
            status = Status.DEGENERATE             # a flat portal
            break
        normal = nx, ny, nz = n
        q1 = portal[0]
        plane = nx * (q1[0] + ox) + ny * (q1[1] + oy) + nz * (q1[2] + oz)   # origin below it
        if clip and plane >= -touch:               # portalEncapsulesOrigin
            hit = True
            out.margin = abs(plane)
            if stop_at_hit:
                status = Status.INTERSECTING
                break
        if calls >= MAX_ITERATIONS:
            status = Status.ITERATION_LIMIT
            break
        if secant is not None and known is None and (secant.active or calls >= secant.resume):
            move, vertex, calls = secant.step(sa, sb, v0, r, portal, normal, calls, tol)
            if move is _Move.EXIT:
                return _exit_point(out, vertex, r, calls)
            if move is _Move.LIMIT:
                status = Status.ITERATION_LIMIT
                break
            if move is _Move.HOLD:
                continue                           # not beyond the portal: no MPR step
            if move is _Move.EXPAND:
                portal = _expand_portal(portal, vertex, r)
                continue
        # The support point along the portal's normal (or the one the caller already has).
        if known is not None:
            a4, b4 = known
            known = None
            w4x, w4y, w4z = a4[0] - b4[0], a4[1] - b4[1], a4[2] - b4[2]
        else:
            (w4x, w4y, w4z), a4, b4 = support_of_difference(sa, sb, nx, ny, nz)
            calls += 1
        reach = nx * w4x + ny * w4y + nz * w4z
        support = ((w4x, w4y, w4z), a4, b4), reach - plane
        if clip and not hit and reach < -touch:
            status = Status.SEPARATED              # the support plane excludes the origin
            out.margin = -reach
            break
        # Until the origin is known to be inside, the boundary test is the strict one: a
        # coarse tolerance must not decide a shallow contact.
        if reach - plane <= (tol if hit or not clip else strict):
            status = Status.CONVERGED              # the portal is on the boundary of C
            if clip and not hit:
                out.margin = -plane                # (the origin is beyond it)
            break
        portal = _expand_portal(portal, (w4x - ox, w4y - oy, w4z - oz, a4, b4, normal), r)
    out.portal = [((a[0] - b[0], a[1] - b[1], a[2] - b[2]), a, b) for _, _, _, a, b, _ in portal]
    out.directions = (portal[0][5], portal[1][5], portal[2][5])
    out.hit = hit
    out.normal = normal
    if support is not None:
        out.support, out.gap = support
    return _end(out, status, calls)


def _portal_dir(portal):
    """The portal's outward unit normal, (q2 − q1) × (q3 − q1) normalised (libccd's
    ``portalDir``), from its two shorter edges on a sliver (``geometry.sliver_cross``); None if
    it is flat.

    A portal with two vertices a hair apart (two support points of a sphere 1e3 times smaller
    than the box beside it) and one far off: from the far vertex the cross product cancelled to
    noise, a plane through the portal that the support points along it confirmed, and pass 2
    took the nearest point of the portal, inside C, for a boundary point (5e-7 short of it)."""
    nx, ny, nz = plane_normal(*portal)
    nn = nx * nx + ny * ny + nz * nz
    if nn == 0.0:
        return None
    s = 1.0 / math.sqrt(nn)
    return nx * s, ny * s, nz * s


def plane_normal(q1, q2, q3):
    """(q2 − q1) × (q3 − q1), not normalised; from the triangle's two shorter edges where it is
    a sliver (``geometry.sliver_cross``): ``_portal_dir``'s and ``ray_crossing``'s plane, and
    that of a stalled GJK triangle (``gjk._simplex_normal``)."""
    ux, uy, uz = q2[0] - q1[0], q2[1] - q1[1], q2[2] - q1[2]
    vx, vy, vz = q3[0] - q1[0], q3[1] - q1[1], q3[2] - q1[2]
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    uu, vv = ux * ux + uy * uy + uz * uz, vx * vx + vy * vy + vz * vz
    if nx * nx + ny * ny + nz * nz < SLIVER_SIN2 * uu * vv:
        return sliver_cross(ux, uy, uz, uu, vx, vy, vz, vv,
                            q3[0] - q2[0], q3[1] - q2[1], q3[2] - q2[2])
    return nx, ny, nz


def _expand_portal(portal, v4, r):
    """The portal with v4 in place of one vertex: the one of triangles (4 2 3), (1 4 3),
    (1 2 4) the ray passes through, by the signs s_i = r·(q4 × q_i) = −q_i·(q4 × r) of the
    planes through v0, v4 and each vertex (libccd's ``expandPortal``)."""
    q1, q2, q3 = portal
    q4x, q4y, q4z = v4[0], v4[1], v4[2]
    rx, ry, rz = r
    cx, cy, cz = q4y * rz - q4z * ry, q4z * rx - q4x * rz, q4x * ry - q4y * rx   # q4 × r
    if q1[0] * cx + q1[1] * cy + q1[2] * cz < 0.0:                             # s1 > 0
        if q2[0] * cx + q2[1] * cy + q2[2] * cz < 0.0:                         # s2 > 0
            return (v4, q2, q3)
        return (q1, q2, v4)
    if q3[0] * cx + q3[1] * cy + q3[2] * cz < 0.0:                             # s3 > 0
        return (q1, v4, q3)
    return (v4, q2, q3)


def _exit_point(out, found, r, calls):
    """End a pass at a support point on the ray (its exit point): a portal of that one point,
    whose normal is the direction from the origin to it."""
    (w4x, w4y, w4z), a4, b4, direction = found
    out.portal = [((w4x, w4y, w4z), a4, b4)]
    out.directions = (direction,)
    ww = w4x * w4x + w4y * w4y + w4z * w4z
    out.normal = (w4x / math.sqrt(ww), w4y / math.sqrt(ww), w4z / math.sqrt(ww)) \
        if ww > 0.0 else (r[0], r[1], r[2])
    return _end(out, Status.CONVERGED, calls)


class _Move(enum.Enum):
    """What a ``_SecantSteps.step`` did."""

    EXIT = "exit"          # found the exit point: a support point on the ray (ends the pass)
    LIMIT = "limit"        # spent the pass's support calls (ends it: ITERATION_LIMIT)
    EXPAND = "expand"      # found a support point beyond the portal's plane: it refines the portal
    HOLD = "hold"          # found one short of the plane: no portal step this time
    PLAIN = "plain"        # handed the step back to plain refinement


class _SecantSteps:
    """The secant and ruled strategies of pass 2 on curved C, in place of plain steps.

    Secant: where C is smooth, step toward the exit point by a secant method instead of along
    the portal normal. Each vertex w_i is the support point along d_i, so the support mapping
    near the exit is fitted by the affine map that takes d_i to w_i; the barycentric
    coordinates λ of the ray's crossing of the plane of the last three support points give the
    direction Σ λ_i d_i whose support point that fit puts on the ray. Each such step converges
    superlinearly where portal refinement creeps up on a curved C linearly (the gap shrinks by
    only about half a call). The pass ends with that one point as the portal when a support
    point lies on the ray within the tolerance: that point of the boundary is the exit point.
    A secant step that fails to bring the support point nearer the ray by SECANT_PROGRESS (a
    ruled or flat part of C, where no support point lies on the ray) hands over to plain
    refinement for SECANT_PAUSE calls (bringing the portal nearer the exit, where the fit is
    better), then the steps restart from the portal's vertices, at most SECANT_RESTARTS times.

    Ruled: at each (re)start, a portal whose vertices share one polytope's edge sits on a ruled
    part of C, that edge swept over the other shape: ``_ruled_exit`` follows the rulings.
    """

    __slots__ = ("edges", "resume", "restarts", "active", "best_off2", "window")

    def __init__(self, edges, calls, known):
        self.edges = edges
        # The steps start after one plain step (which ends the pass at once on a face).
        self.resume = calls if known is not None else calls + 1
        self.restarts = SECANT_RESTARTS
        self.active = False
        self.best_off2 = math.inf     # the least squared distance of a secant support from the ray
        self.window = None            # the last three support points (q, unit direction)

    def step(self, sa, sb, v0, r, portal, normal, calls, tol):
        """One step at ``calls`` support calls: (what it did, the point found, calls)."""
        if calls >= self.resume:
            edge = self._start(portal)
            if edge is not None:
                found, used = _ruled_exit(sa, sb, v0, r, normal, edge, tol,
                                          min(RULED_MAX_CALLS, MAX_ITERATIONS - calls))
                calls += used
                if found is not None:
                    return _Move.EXIT, found, calls
                if calls >= MAX_ITERATIONS:
                    return _Move.LIMIT, None, calls
            self.active = True
            self.best_off2 = math.inf
            self.window = tuple((q[0], q[1], q[2], unit(q[5])) for q in portal)
        if not self.active:
            return _Move.PLAIN, None, calls
        # The secant step: the support point along the direction that the fit to the last three
        # puts on the ray.
        ox, oy, oz = v0
        rx, ry, rz = r
        # The ray's crossing of the plane of the last three support points, in their
        # barycentric coordinates λ_i ∝ r·(q_j × q_k) (any sign: it may lie outside them).
        (p1x, p1y, p1z, e1), (p2x, p2y, p2z, e2), (p3x, p3y, p3z, e3) = self.window
        l1 = rx * (p2y * p3z - p2z * p3y) + ry * (p2z * p3x - p2x * p3z) \
            + rz * (p2x * p3y - p2y * p3x)
        l2 = rx * (p3y * p1z - p3z * p1y) + ry * (p3z * p1x - p3x * p1z) \
            + rz * (p3x * p1y - p3y * p1x)
        l3 = rx * (p1y * p2z - p1z * p2y) + ry * (p1z * p2x - p1x * p2z) \
            + rz * (p1x * p2y - p1y * p2x)
        total = l1 + l2 + l3
        if total == 0.0:
            self.active = False
            return _Move.PLAIN, None, calls
        l1, l2, l3 = l1 / total, l2 / total, l3 / total
        mx = l1 * e1[0] + l2 * e2[0] + l3 * e3[0]
        my = l1 * e1[1] + l2 * e2[1] + l3 * e3[1]
        mz = l1 * e1[2] + l2 * e2[2] + l3 * e3[2]
        mm = mx * mx + my * my + mz * mz
        if not mm > 0.0:
            self.active = False
            return _Move.PLAIN, None, calls
        mm = 1.0 / math.sqrt(mm)
        mx, my, mz = mx * mm, my * mm, mz * mm
        (w4x, w4y, w4z), a4, b4 = support_of_difference(sa, sb, mx, my, mz)
        calls += 1
        q4x, q4y, q4z = w4x - ox, w4y - oy, w4z - oz
        along = q4x * rx + q4y * ry + q4z * rz
        px, py, pz = q4x - along * rx, q4y - along * ry, q4z - along * rz
        off2 = px * px + py * py + pz * pz
        if off2 <= tol * tol and along > 0.0:
            return _Move.EXIT, ((w4x, w4y, w4z), a4, b4, (mx, my, mz)), calls
        if off2 > SECANT_PROGRESS * SECANT_PROGRESS * self.best_off2:
            self.active = False                    # no faster than refinement here: pause
            if self.restarts > 0:
                self.restarts -= 1
                self.resume = calls + SECANT_PAUSE
        self.best_off2 = off2
        d4 = (mx, my, mz)
        self.window = (self.window[1], self.window[2], (q4x, q4y, q4z, d4))
        nx, ny, nz = normal
        q1 = portal[0]
        if nx * (q4x - q1[0]) + ny * (q4y - q1[1]) + nz * (q4z - q1[2]) <= 0.0:
            return _Move.HOLD, None, calls
        return _Move.EXPAND, (q4x, q4y, q4z, a4, b4, d4), calls

    def _start(self, portal):
        """(Re)start: the portal's polytope edge, if it sits on a ruled part of C."""
        self.resume = MAX_ITERATIONS
        v1, v2, v3 = portal
        return _edge(v1[3], v2[3], v3[3], v1[4], v2[4], v3[4], self.edges)


def _edge(a1, a2, a3, b1, b2, b3, edges):
    """(c1, c2, on_a) when the portal's support points on a polytope (``edges``: A is one, B is
    one) are two distinct vertices (an edge of it, on_a telling which shape) and on the other
    shape three distinct points; else None."""
    for p1, p2, p3, others, on_a in ((a1, a2, a3, (b1, b2, b3), True),
                                     (b1, b2, b3, (a1, a2, a3), False)):
        if not edges[0 if on_a else 1]:
            continue
        if p1 == p2 != p3:
            c1, c2 = p1, p3
        elif p1 == p3 != p2 or p2 == p3 != p1:
            c1, c2 = p1, p2
        else:
            continue
        if len(set(others)) == 3:
            return c1, c2, on_a
    return None


def _ruled_exit(sa, sb, v0, r, n, edge, tol, budget):
    """Where the ray v0 + t r leaves C through a ruled part: an edge c1 c2 of one shape swept
    over the other, smooth, shape. ((w, a, b, normal) or None, support calls).

    Along a normal n perpendicular to the edge the whole edge is the support set of its shape,
    so the boundary of C holds the segment (the ruling) c + s − s_other(n), c on the edge. As
    n turns about the edge (angle θ) the ruling sweeps the surface; the exit point lies on the
    ruling whose line meets the ray, a root in θ of the signed distance between the two lines,
    found by the secant method (superlinear; plain refinement converges only linearly here).
    The answer is that ruling's point nearest the origin (exactly on the boundary, and no
    farther from the origin than the exit point).
    None if the support points leave the edge, the exit is beyond the edge's ends (on a curved
    corner of C), or the secant does not converge within ``budget`` calls.
    """
    c1, c2, on_a = edge
    ex, ey, ez = c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2]
    ee = ex * ex + ey * ey + ez * ez
    rx, ry, rz = r
    ox, oy, oz = v0
    if not ee > 0.0:
        return None, 0
    length = math.sqrt(ee)
    ux, uy, uz = ex / length, ey / length, ez / length
    # Normals perpendicular to the edge: n0 (the given normal made so) turned by θ toward m0.
    dot = n[0] * ux + n[1] * uy + n[2] * uz
    n0x, n0y, n0z = n[0] - dot * ux, n[1] - dot * uy, n[2] - dot * uz
    size = math.sqrt(n0x * n0x + n0y * n0y + n0z * n0z)
    # p = r × u: the signed distance between the ray's line and a ruling's line is p̂·(q − v0).
    px, py, pz = ry * uz - rz * uy, rz * ux - rx * uz, rx * uy - ry * ux
    sin = math.sqrt(px * px + py * py + pz * pz)
    if not (size > RULED_MIN_SIN and sin > RULED_MIN_SIN):
        return None, 0                # the normal or the ray runs along the edge
    n0x, n0y, n0z = n0x / size, n0y / size, n0z / size
    m0x, m0y, m0z = uy * n0z - uz * n0y, uz * n0x - ux * n0z, ux * n0y - uy * n0x
    px, py, pz = px / sin, py / sin, pz / sin
    theta, previous = 0.0, None
    calls = 0
    while calls < budget:
        c, s = math.cos(theta), math.sin(theta)
        nx, ny, nz = c * n0x + s * m0x, c * n0y + s * m0y, c * n0z + s * m0z
        (wx, wy, wz), a, b = support_of_difference(sa, sb, nx, ny, nz)
        calls += 1
        if (a if on_a else b) not in (c1, c2):
            return None, calls        # the normal left the edge's normal cone
        qx, qy, qz = wx - ox, wy - oy, wz - oz
        f = px * qx + py * qy + pz * qz
        if abs(f) <= tol:
            # The point of the ruling's line nearest the ray's line: q + σ u with σ from
            # the two lines' closest points (the ray's part is t r).
            k = rx * ux + ry * uy + rz * uz
            d = rx * qx + ry * qy + rz * qz
            e = ux * qx + uy * qy + uz * qz
            sigma = (k * d - e) / (1.0 - k * k)
            # Where that is on the edge (0 at c1, 1 at c2), from the edge point used.
            c0 = a if on_a else b
            lam = ((c0[0] - c1[0]) * ex + (c0[1] - c1[1]) * ey + (c0[2] - c1[2]) * ez) / ee \
                + (sigma if on_a else -sigma) / length
            if not -RULED_END_SLACK <= lam <= 1.0 + RULED_END_SLACK:
                return None, calls    # beyond the edge's end: the exit is on a corner patch
            # The whole ruling lies on the boundary, along n: answer with its point nearest
            # the origin, as the thesis answers with the final portal's nearest point.
            sign = 1.0 if on_a else -1.0
            if on_a:
                px0, py0, pz0 = c1[0] - b[0], c1[1] - b[1], c1[2] - b[2]
            else:
                px0, py0, pz0 = a[0] - c1[0], a[1] - c1[1], a[2] - c1[2]
            lam = -sign * (px0 * ex + py0 * ey + pz0 * ez) / ee
            lam = min(max(lam, 0.0), 1.0)
            point = (c1[0] + lam * ex, c1[1] + lam * ey, c1[2] + lam * ez)
            if on_a:
                a = point
            else:
                b = point
            return ((a[0] - b[0], a[1] - b[1], a[2] - b[2]), a, b, (nx, ny, nz)), calls
        if previous is None:
            # First step: turning n toward m0 moves the other shape's support point, and with
            # it q, along m0 by its radius of curvature (taken as |q|) per radian.
            slope = math.sqrt(qx * qx + qy * qy + qz * qz) * (px * m0x + py * m0y + pz * m0z)
            if not abs(slope) > tol:
                return None, calls
            step = -f / slope
        else:
            theta0, f0 = previous
            if f == f0 or (calls > 2 and abs(f) > RULED_PROGRESS * abs(f0)):
                return None, calls    # (the first step's slope was only a guess)
            step = -f * (theta - theta0) / (f - f0)
        previous = (theta, f)
        theta += max(-RULED_MAX_TURN, min(RULED_MAX_TURN, step))
    return None, calls


def crosses(portal, r):
    """The ray t·r from the origin passes through the (outward) portal: r lies in the cone of
    its three vertices seen from the origin, and the origin is inside the portal's plane."""
    (w1, _, _), (w2, _, _), (w3, _, _) = portal
    det = triple(w1, w2, w3)
    if not det > 0.0:
        return False
    return triple(r, w2, w3) >= 0.0 and triple(w1, r, w3) >= 0.0 and triple(w1, w2, r) >= 0.0


def ray_crossing(portal, r):
    """Where the ray t·r from the origin crosses the portal plane: (t, barycentric coordinates).

    ``r`` is a unit vector through the portal; coordinates are clamped to the triangle against
    rounding.
    """
    (w1, _, _), (w2, _, _), (w3, _, _) = portal
    # (On a sliver from its two shorter edges: a portal 0.7 long with two vertices 1e-8 apart
    # tilted by 1.5e-8 from its far vertex, and its crossing came 1.1e-9 beyond C's boundary.)
    nx, ny, nz = plane_normal(w1, w2, w3)
    rn = nx * r[0] + ny * r[1] + nz * r[2]
    if rn <= 0.0:
        return None
    t = (nx * w1[0] + ny * w1[1] + nz * w1[2]) / rn
    q = (t * r[0], t * r[1], t * r[2])
    lam = [l if l > 0.0 else 0.0 for l in triangle_coordinates(w1, w2, w3, q, (nx, ny, nz))]
    total = lam[0] + lam[1] + lam[2]
    if not total > 0.0:
        return None
    return t, refined_coordinates(w1, w2, w3, q, (lam[0] / total, lam[1] / total, lam[2] / total))


def _end(out: _Pass, status: Status, calls: int) -> _Pass:
    out.status = status
    out.calls = calls
    return out


def ray_pass(sa, sb, r, tolerance=DEPTH_TOLERANCE) -> _Pass:
    """The portal where the ray t·r from the origin (inside C) leaves C, within ``tolerance``."""
    return _portal_pass(sa, sb, (0.0, 0.0, 0.0), r, tolerance=tolerance)


def intersect(a, b) -> bool | None:
    """True when ``a`` and ``b`` overlap or touch (MPR, seed 001 Alg. 9), False when they are
    apart, None when MPR cannot decide (the portal search cycled, C is flat around the ray, or
    the origin lies within ``INTERSECT_MARGIN`` of C's boundary): ``queries.intersect`` then
    asks GJK."""
    a = validation.shape("a", a)
    b = validation.shape("b", b)
    v0 = centre_difference(a, b)
    if not math.hypot(*v0) > 0.0:
        return True                                  # the origin is the interior point itself
    res = _portal_pass(a.support_xyz, b.support_xyz, v0, (-v0[0], -v0[1], -v0[2]), clip=True,
                       tolerance=INTERSECT_TOLERANCE, stop_at_hit=True)
    if (res.hit or res.status in (Status.SEPARATED, Status.CONVERGED)) and \
            res.margin > INTERSECT_MARGIN * res.scale:
        return res.hit
    return None


def holding_tetrahedron(a, b):
    """MPR's portal search (seed 001 Alg. 9) for a tetrahedron of C = A − B that holds the
    origin, for GJK runs that stalled without deciding: ``(True, points on A, points on B)``
    (the centres, then the portal's support points), ``(False, (), ())`` when a support plane
    separates the shapes, ``(None, (), ())`` when MPR cannot decide either.

    GJK decides by the direction of v, which on a needle or slab of C far from the origin (a
    1.2e6 m segment through a 2 km rectangle, nearly in its plane) is only known to ~ε·|w|/|v|:
    the support points along it are then noise, and GJK stops on a repeated one, 1e-4 from
    the origin that C holds 1e-3 deep. The portal test compares the origin with one plane of
    the portal at a time, and decides it."""
    ca, cb = a.center_xyz(), b.center_xyz()
    v0 = (ca[0] - cb[0], ca[1] - cb[1], ca[2] - cb[2])
    if not math.hypot(*v0) > 0.0:
        return True, [ca], [cb]                       # the origin is the interior point itself
    res = _portal_pass(a.support_xyz, b.support_xyz, v0, (-v0[0], -v0[1], -v0[2]), clip=True,
                       tolerance=INTERSECT_TOLERANCE, stop_at_hit=True)
    if res.hit and len(res.portal) == 3:
        return True, [ca] + [p[1] for p in res.portal], [cb] + [p[2] for p in res.portal]
    if not res.hit and res.status in (Status.SEPARATED, Status.CONVERGED):
        return False, (), ()
    return None, (), ()


class Estimate(NamedTuple):
    """MPR's answer before it becomes a ``Contact``: depth, unit normal (from A toward B), the
    points on A and B (tuples), support calls, status, and ``surface``: the outward normal of
    C = A − B at the answer's boundary point (where margins are added along)."""

    depth: float
    normal: tuple
    point_a: tuple
    point_b: tuple
    calls: int
    status: Status
    surface: tuple


def penetration(a, b):
    """MPR's two-pass depth estimate (seed 001 §2.4.1) as a ``Contact``; None if apart."""
    est = estimate(validation.shape("a", a), validation.shape("b", b))
    if est is None:
        return None
    return contact(est)


def contact(est: Estimate, margin_a: float = 0.0, margin_b: float = 0.0,
            share_a: float = 0.5) -> Contact:
    """The ``Contact`` of an estimate, on the shapes ``core ⊕ sphere(margin)`` when the estimate
    was made on the cores: each margin is added along C's normal at the answer's point, which
    keeps that point on the boundary of C."""
    depth, (nx, ny, nz), pa, pb = est.depth, est.normal, est.point_a, est.point_b
    # A touching pair's boundary point can come out a rounding below zero (a polished support
    # value, -1e-16): the contract is depth >= 0.
    depth = depth if depth > 0.0 else 0.0
    margins = margin_a + margin_b
    if margins > 0.0:
        sx, sy, sz = est.surface
        px, py, pz = depth * nx + margins * sx, depth * ny + margins * sy, \
            depth * nz + margins * sz
        depth = math.sqrt(px * px + py * py + pz * pz)
        nx, ny, nz = px / depth, py / depth, pz / depth
        pa = (pa[0] + margin_a * sx, pa[1] + margin_a * sy, pa[2] + margin_a * sz)
        pb = (pb[0] - margin_b * sx, pb[1] - margin_b * sy, pb[2] - margin_b * sz)
    # Split the rounding residual so that point_a − point_b == depth · normal exactly.
    pa, pb = split_residual(pa, pb, depth, (nx, ny, nz), share_a)     # (``share_a``: A's part)
    return Contact(float(depth), np.array((nx, ny, nz)), np.array(pa), np.array(pb), 0,
                   est.calls, est.status, "mpr")


def estimate(a, b, size=None):
    """MPR's two-pass depth estimate as an ``Estimate``; None if apart.

    ``size``: the size its contact points are exact relative to (``shapes.contact_size``, the
    default for ``a`` and ``b``; given for cores, whose full shapes decide it).

    The estimate can leave A − B through its far side (a deep contact whose centre ray points
    the long way out): unless the centre difference (a point of A − B) already reaches as far
    the other way, one more support call checks the opposite direction, and where pushing A
    the other way is shorter, the boundary point along it is taken instead.
    """
    v0 = centre_difference(a, b)
    size = contact_size(a, b) if size is None else size
    est = _two_passes(a, b, v0, size)
    if est is None or est.status is Status.FAILED:
        return est
    nx, ny, nz = -est.normal[0], -est.normal[1], -est.normal[2]
    if nx * v0[0] + ny * v0[1] + nz * v0[2] >= est.depth:
        return est                  # h(−n) >= −n·v0 >= depth: the other way is no shorter
    sa, sb = a.support_xyz, b.support_xyz
    w, _, _ = support_of_difference(sa, sb, nx, ny, nz)
    back = nx * w[0] + ny * w[1] + nz * w[2]
    calls = est.calls + 1
    if back < est.depth:
        # (to the smaller shape's tolerance, as pass 2: ``fine_fraction``)
        tolerance = fine_fraction(DEPTH_TOLERANCE, a.extent()[0] + b.extent()[0], size)
        ray = ray_pass(sa, sb, (nx, ny, nz), tolerance)
        calls += ray.calls
        if ray.status is Status.CONVERGED and len(ray.portal) == 3:
            other = _nearest_on_portal(ray.portal, ray.normal, calls, Status.CONVERGED)
            if other.depth < est.depth:
                return other
    return Estimate(est.depth, est.normal, est.point_a, est.point_b, calls, est.status,
                    est.surface)


def fine_fraction(fraction: float, scale: float, fine: float | None) -> float:
    """``fraction`` of the size ``fine`` (the smaller shape's) as a fraction of ``scale`` (the
    size of C), where ``fine`` is the smaller and no less than FINE_FLOOR."""
    if fine is None or not fine < scale:
        return fraction
    return max(fraction * fine / scale, FINE_FLOOR)


def _two_passes(a, b, v0, size=None):
    """The thesis's two passes (with the additions above) as an ``Estimate``; None if apart.
    ``v0``: centre(A) − centre(B), the start of pass 1's ray.

    Pass 1 stops at a coarse tolerance on curved C: its normal is only an estimate. Where both
    shapes are smooth, Newton's polish of the direction (``depth_polish.polish``) replaces pass 2
    and lands exactly on the local minimum of the depth; elsewhere pass 2 runs as in the thesis, to
    DEPTH_TOLERANCE (with secant and ruling steps on curved parts, see ``_SecantSteps``).
    """
    sa, sb = a.support_xyz, b.support_xyz
    calls = 0
    first = None
    # Two polytopes: C is a polytope, with nothing to polish and no curvature for the secant
    # steps; pass 2 ends exactly on a face.
    edges = (getattr(a, "polytope", False), getattr(b, "polytope", False))
    curved = not (edges[0] and edges[1])
    # Two smooth shapes: C is smooth, and Newton's polish replaces pass 2 (elsewhere, where C
    # has flat or ruled parts, the polish would mostly end on a fold it cannot cross).
    smooth = getattr(a, "smooth", False) and getattr(b, "smooth", False)
    if not math.hypot(*v0) > 0.0:
        normal = (0.0, 0.0, 1.0)                      # centred: any ray leaves C somewhere
    else:
        # Pass 1: the centre ray toward the origin, pushed to the boundary: its normal.
        # (On a polytope it goes on to the boundary: refinement ends exactly on a face in a few
        # more calls, and that face is usually where pass 2 ends too.)
        first = _portal_pass(sa, sb, v0, (-v0[0], -v0[1], -v0[2]), clip=True,
                             tolerance=NORMAL_TOLERANCE if curved else DEPTH_TOLERANCE)
        calls += first.calls
        marginal = first.margin <= INTERSECT_MARGIN * first.scale
        if not first.hit or marginal:
            if first.status in (Status.SEPARATED, Status.CONVERGED) and not marginal:
                return None
            # Undecided, or decided within INTERSECT_MARGIN of C's boundary (where the portal's
            # rounding can be all there is to it): no answer rather than a wrong one either way
            # (``penetration`` asks EPA, which starts from GJK's exact verdict).
            nan = (math.nan, math.nan, math.nan)
            return Estimate(math.nan, nan, nan, nan, calls, Status.FAILED, nan)
        normal = first.normal
        if smooth and first.status is Status.CONVERGED and first.support is not None and \
                first.gap > EXACT_TOLERANCE * first.scale:
            w, pa, pb = first.support
            shape = depth_polish.probe_shape(sa, sb, normal, w, pa, pb, first.scale)
            calls += 2
            if shape.kind in (Surface.SMOOTH, Surface.RULED):
                ok, depth, n, pa, pb, extra = depth_polish.polish(sa, sb, normal, first.scale,
                                                                  shape, fine=size)
                calls += extra
                if ok:
                    depth, pa, pb = depth_polish.polished_points(pa, pb, depth, n, shape,
                                                                 first.scale)
                    return Estimate(depth, n, pa, pb, calls, Status.CONVERGED, n)
    # Pass 2: from the origin along the estimate, to the boundary. Pass 1's last portal lies on
    # the boundary with that normal; when the new ray crosses it, it is pass 2's first portal
    # (saving the portal discovery), else pass 2 discovers its own.
    origin = (0.0, 0.0, 0.0)
    scale = first.scale if first is not None else a.extent()[0] + b.extent()[0]
    depth_tolerance = fine_fraction(DEPTH_TOLERANCE, scale, size)
    if first is not None and len(first.portal) == 3 and crosses(first.portal, normal):
        if first.status is Status.CONVERGED and first.gap <= depth_tolerance * first.scale:
            # Pass 1's portal already lies on the boundary (its support plane, along this very
            # normal, is within the tolerance), and the new ray crosses it: pass 2 would end at
            # its first support call with this portal.
            return _nearest_on_portal(first.portal, normal, calls, Status.CONVERGED)
        # Pass 1's last support call was along this portal's normal: pass 2's first step.
        known = first.support[1:] if first.status is Status.CONVERGED and first.support else None
        second = refine(sa, sb, origin, normal, first.portal, tolerance=depth_tolerance,
                        directions=first.directions, secant=curved, edges=edges, known=known)
    else:
        second = _portal_pass(sa, sb, origin, normal, tolerance=depth_tolerance, secant=curved,
                              edges=edges)
    calls += second.calls
    if second.status is not Status.CONVERGED and first is not None:
        # The portal search is ill-conditioned from an interior point this close to the
        # boundary (it can cycle): start again further back on the same line, which leaves C
        # at the same point. Halfway back to the centre's foot, and no deeper than half pass 1's
        # depth estimate, so that the start stays inside C.
        back = 0.5 * min(-(v0[0] * normal[0] + v0[1] * normal[1] + v0[2] * normal[2]),
                         _plane_offset(first))
        if back > 0.0:
            start = (-back * normal[0], -back * normal[1], -back * normal[2])
            retry = _portal_pass(sa, sb, start, normal, tolerance=depth_tolerance,
                                 secant=curved, edges=edges)
            calls += retry.calls
            if retry.status is Status.CONVERGED:
                second = retry
    answer = second
    status = Status.CONVERGED
    if second.status is not Status.CONVERGED or not second.portal:
        # No boundary point along the estimate: say so (``penetration`` then falls back on EPA)
        # with pass 1's portal as the best guess.
        if first is not None and first.portal:
            answer = first
        if not answer.portal:
            return None
        status = Status.FAILED
    if len(answer.portal) == 1:
        # The exit point itself (a support point on the ray): C's normal there is the
        # direction it is the support point for.
        w, pa, pb = answer.portal[0]
        n = answer.normal
        depth = max(w[0] * n[0] + w[1] * n[1] + w[2] * n[2], 0.0)
        return Estimate(depth, n, pa, pb, calls, status, answer.directions[0])
    return _nearest_on_portal(answer.portal, answer.normal, calls, status)


def _nearest_on_portal(portal, normal, calls, status):
    """Estimate at the portal's point nearest the origin (its projection when that falls inside
    the portal), with the portal's ``normal`` as the normal when that point is the origin
    itself, and as C's normal there."""
    p, lam = closest_to_origin([v[0] for v in portal])
    depth = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
    n = (p[0] / depth, p[1] / depth, p[2] / depth) if depth > 0.0 else normal
    (_, a1, b1), (_, a2, b2), (_, a3, b3) = portal
    l1, l2, l3 = lam
    pa = (l1 * a1[0] + l2 * a2[0] + l3 * a3[0], l1 * a1[1] + l2 * a2[1] + l3 * a3[1],
          l1 * a1[2] + l2 * a2[2] + l3 * a3[2])
    pb = (l1 * b1[0] + l2 * b2[0] + l3 * b3[0], l1 * b1[1] + l2 * b2[1] + l3 * b3[1],
          l1 * b1[2] + l2 * b2[2] + l3 * b3[2])
    return Estimate(depth, n, pa, pb, calls, status, normal)


def _plane_offset(run):
    """Distance of the origin below the plane of a pass's last portal (along its normal)."""
    n = run.normal
    w = run.portal[0][0]
    return n[0] * w[0] + n[1] * w[1] + n[2] * w[2]

