"""Newton's polish of a penetration depth: the last digits of EPA's and MPR's answers where the
configuration space obstacle C = A − B is curved.

EPA and MPR creep up on curved parts of C linearly (EPA about 6 support calls per factor 100).
Once they are near, the depth is finished locally, on the support function h(n) = max over C of
x·n, whose minimum over unit n is the depth:

- ``probe_shape`` classifies C around a direction from two support probes tilted by a small
  angle: ``Surface.SMOOTH`` (the support point moves with the direction: curved both ways),
  ``Surface.RULED`` (it jumps one way: a straight fold, a box edge swept over an ellipsoid or a
  cylinder's side) or ``Surface.SHARP`` (it stays put or jumps both ways: a vertex, edge or face
  of a polytope, where the caller ends exactly instead);
- ``polish`` runs Newton's method on h over the sphere of directions (the Hessian from those
  probes' finite differences, then BFGS), and on a fold Newton in the one curved direction
  across it (``_polish_ruled``); both end when the support point lies on the ray along the
  normal to ``polish_tolerance``;
- ``polished_points`` gives the contact points with point_a − point_b == depth · n exactly,
  moving each as little off its shape as its local surface allows.

The ray cast has its own Newton polish (``ray_polish``): a different problem (the first point
of a ray, not the minimum of h), solved on the contact conditions rather than on h; the two
share only the small vector helpers of ``geometry``.

Used by ``epa`` (after its certificate) and ``mpr`` (in place of its second pass where both
shapes are smooth); it imports neither.
"""

from __future__ import annotations

import enum
import math
from typing import NamedTuple

from .geometry import perpendicular, support_of_difference, tangential2, unit

# Newton polish (``polish``): done when the support point lies within this fraction of the size
# of C of the ray along the normal (the boundary point and normal are then exact to about that).
POLISH_TOLERANCE = 1e-9

# ... where the size is at most CONTACT_SCALE_RATIO times the smaller shape's (when the caller
# gives it): the contact points, which the polish's residual offsets from their shapes, are then
# exact relative to the smaller shape even beside a shape 1e6 times larger. Shapes of comparable
# size (C at most this many times the smaller) keep C's size, and the polish its cost.
CONTACT_SCALE_RATIO = 10.0

# ... but never below this fraction of the size of C: the rounding floor of support values
# (~1e-16 of their magnitude, a few of them summed), where Newton's steps stop converging.
POLISH_FLOOR = 1e-14

# Support calls the polish may make (two for the finite-difference Hessian, one per step).
POLISH_MAX_CALLS = 16

# Finite-difference angle (radians) for the Hessian of the support function: small against the
# curvature (error ~δ) and large against rounding (error ~1e-16/δ).
POLISH_STEP = 1e-6

# Probes of the local shape: the support point "stays" when it moves less than this fraction of
# the size of C, and "jumps" (to another vertex or along a straight edge of C) when it moves more
# than JUMP_RATIO · POLISH_STEP · size; in between it follows a curved surface.
STILL_TOLERANCE = 1e-13
JUMP_RATIO = 1e3

# Polish on a straight fold of C (``_polish_ruled``): the ends of the fold's segment are found by
# tilting the normal FOLD_STEP (radians) either way along it (FOLD_SPREAD while the fold's
# direction is still being refined, to be sure to straddle it); they must lie within FOLD_FLATNESS
# (fraction of the size of C) of the support plane, and the ray pass through the segment (up to
# FOLD_OVERHANG of its length).
FOLD_STEP = 1e-10
FOLD_SPREAD = 1e-5
FOLD_FLATNESS = 1e-9
FOLD_OVERHANG = 1e-9

# A shape's share of the support point's jump (squared) above which its own jump counts as the
# fold's direction (both count when two parallel edges meet).
FOLD_SHARE = 1e-3

# Largest Newton step (radians), and how many times a step that does not descend is halved
# before the polish gives up.
POLISH_MAX_STEP = 0.2
POLISH_BACKTRACKS = 2

# A Newton step counts as descending unless h rises by more than this fraction of the size of C
# (rounding noise of a support value).
POLISH_RISE = 1e-14

# Two probe moves of a shape's support point count as one direction (an edge: the point slides
# along its line) when |a × b|² <= this · |a|²|b|² (the sine of their angle ~1e-10).
PARALLEL_SIN2 = 1e-20


class Surface(enum.Enum):
    """What C looks like around a direction (``probe_shape``)."""

    SMOOTH = "smooth"    # the support point moves smoothly with the direction (curved both ways)
    RULED = "ruled"      # it jumps one way and moves smoothly the other (a cylinder-like strip)
    SHARP = "sharp"      # it stays put or jumps both ways (a vertex, edge or face of a polytope)


class Probe(NamedTuple):
    """``probe_shape``'s answer: the ``kind`` of surface, the tangents ``t1``, ``t2`` it probed
    along, the ``probes`` [(m, w_m, a_m, b_m, |n + δ t|)] (reused by ``polish`` as finite
    differences), and the support point ``w`` = ``a`` − ``b`` along the direction itself."""

    kind: Surface
    t1: tuple
    t2: tuple
    probes: list
    w: tuple
    a: tuple
    b: tuple


def probe_shape(sa, sb, n, w, a, b, scale):
    """Classify C around direction n (support point w = a − b) by two support probes tilted by
    POLISH_STEP; two support calls.

    Returns a ``Probe``.
    """
    nx, ny, nz = n
    t1 = perpendicular(nx, ny, nz)
    t2 = (ny * t1[2] - nz * t1[1], nz * t1[0] - nx * t1[2], nx * t1[1] - ny * t1[0])
    wx, wy, wz = w
    delta = POLISH_STEP
    probes, kinds = [], []
    for t in (t1, t2):
        mx, my, mz = nx + delta * t[0], ny + delta * t[1], nz + delta * t[2]
        length = math.sqrt(mx * mx + my * my + mz * mz)
        mx, my, mz = mx / length, my / length, mz / length
        (px, py, pz), pa, pb = support_of_difference(sa, sb, mx, my, mz)
        vx, vy, vz = px - wx, py - wy, pz - wz
        vn = vx * nx + vy * ny + vz * nz
        moved = math.sqrt(max(vx * vx + vy * vy + vz * vz - vn * vn, 0.0))
        if moved <= STILL_TOLERANCE * scale:
            kinds.append(Surface.SHARP)
        elif moved <= JUMP_RATIO * delta * scale:
            kinds.append(Surface.SMOOTH)
        else:
            kinds.append(Surface.RULED)
        probes.append(((mx, my, mz), (px, py, pz), pa, pb, length))
    if Surface.SMOOTH not in kinds:
        kind = Surface.SHARP    # a vertex, edge or face of a polytope-like C: EPA ends exactly
    elif Surface.RULED in kinds:
        kind = Surface.RULED
    else:
        kind = Surface.SMOOTH   # (a still probe: curved one way only, e.g. off a cylinder's fold)
    return Probe(kind, t1, t2, probes, (wx, wy, wz), a, b)



# --- local polish: Newton's method on the support function ----------------------------------

def polish_tolerance(scale: float, fine: float | None = None) -> float:
    """How near the ray along the normal the polish's support point must come, for C of size
    ``scale``: POLISH_TOLERANCE of that, or of CONTACT_SCALE_RATIO times the smaller shape's
    size ``fine`` if that is smaller, but not below the rounding floor POLISH_FLOOR of C's size.
    The contact points come from that support point, and lie on their shapes to within it."""
    size = scale if fine is None else min(scale, CONTACT_SCALE_RATIO * fine)
    return max(POLISH_TOLERANCE * size, POLISH_FLOOR * scale)


def polish(sa, sb, normal, scale, probed, max_calls: int = POLISH_MAX_CALLS,
           budget: float = math.inf, fine: float | None = None):
    """Minimise h(n) = max over C of x·n over unit n, from ``normal``, by Newton's method.

    The gradient of h on the sphere is the tangential part of the support point s(n); the
    Hessian (the radii of curvature of C, less h) comes from the finite differences of
    ``probed`` (``probe_shape``) and is then kept up to date by BFGS updates. Only steps that
    lower h are taken; a model that is not convex (far from the minimum) is shifted so that the
    step bends toward steepest descent. Ends when s(n) lies on the ray along n within
    POLISH_TOLERANCE: s(n) is then the boundary point of C nearest the origin around there.

    Where a step makes the support point jump (a straight edge of C, e.g. a box edge swept over
    an ellipsoid), the minimum lies on the fold along that edge: ``_polish_ruled`` takes over.

    ``budget``: if the quadratic model predicts a minimum lower than h(normal) − budget, the
    start is not near a smooth minimum (EPA's certificate says there is none that deep) and the
    polish gives up at once.

    Returns (ok, depth, n, point_a, point_b, calls); ok is False where neither applies (a
    vertex or face of C, a fold that is not straight) or the calls ran out. ``fine``: the
    smaller shape's size, for the tolerance (``polish_tolerance``).
    """
    nx, ny, nz = normal
    kind, (t1x, t1y, t1z), (t2x, t2y, t2z), probes, (wx, wy, wz), a, b = probed
    if kind is Surface.RULED:
        _, _, pa, pb, _ = max(probes, key=lambda pr: tangential2(
            (pr[1][0] - wx, pr[1][1] - wy, pr[1][2] - wz), normal))
        return _polish_ruled(sa, sb, normal, (a, b), (pa, pb), scale, max_calls, 0, budget,
                             fine)
    calls = 0
    h = wx * nx + wy * ny + wz * nz
    g1 = wx * t1x + wy * t1y + wz * t1z
    g2 = wx * t2x + wy * t2y + wz * t2z
    tol2 = polish_tolerance(scale, fine) ** 2
    if g1 * g1 + g2 * g2 <= tol2:
        return True, h, (nx, ny, nz), a, b, calls
    # Finite-difference Hessian of f(u) = h(unit(n + u1 t1 + u2 t2)) at u = 0.
    delta = POLISH_STEP
    cols = []
    for (mx, my, mz), (vx, vy, vz), _, _, length in probes:
        vm = vx * mx + vy * my + vz * mz
        # ∂f/∂u_j = s(m)·(t_j − (m·t_j) m) / |n + δ e|
        d1 = (vx * t1x + vy * t1y + vz * t1z - (mx * t1x + my * t1y + mz * t1z) * vm) / length
        d2 = (vx * t2x + vy * t2y + vz * t2z - (mx * t2x + my * t2y + mz * t2z) * vm) / length
        cols.append(((d1 - g1) / delta, (d2 - g2) / delta))
    h11, h22 = cols[0][0], cols[1][1]
    h12 = 0.5 * (cols[0][1] + cols[1][0])
    det = h11 * h22 - h12 * h12
    if budget < math.inf:
        # Predicted descent ½ gᵀH⁻¹g of a convex model; a non-convex one predicts no minimum.
        if not (h11 > 0.0 and det > 0.0) or \
                0.5 * (h22 * g1 * g1 - 2.0 * h12 * g1 * g2 + h11 * g2 * g2) / det > budget:
            return False, h, (nx, ny, nz), a, b, calls
    rise = POLISH_RISE * scale
    while calls < max_calls:
        # Newton step on the model H u = −g, H shifted to positive definite where the model is
        # not convex: the step then bends toward steepest descent, no longer than MAX_STEP.
        g_norm = math.sqrt(g1 * g1 + g2 * g2)
        half_trace = 0.5 * (h11 + h22)
        lowest = half_trace - math.sqrt(0.25 * (h11 - h22) ** 2 + h12 * h12)
        floor = g_norm / POLISH_MAX_STEP
        shift = floor - lowest if lowest < floor else 0.0
        k11, k22 = h11 + shift, h22 + shift
        det = k11 * k22 - h12 * h12
        if not det > 0.0:
            break
        u1 = -(k22 * g1 - h12 * g2) / det
        u2 = -(k11 * g2 - h12 * g1) / det
        step = math.sqrt(u1 * u1 + u2 * u2)
        if step > POLISH_MAX_STEP:
            u1, u2 = u1 * POLISH_MAX_STEP / step, u2 * POLISH_MAX_STEP / step
        # Backtrack until h descends; a support point that jumps instead of moving with the
        # curvature means a straight fold of C: finish there.
        for _ in range(POLISH_BACKTRACKS + 1):
            mx = nx + u1 * t1x + u2 * t2x
            my = ny + u1 * t1y + u2 * t2y
            mz = nz + u1 * t1z + u2 * t2z
            length = math.sqrt(mx * mx + my * my + mz * mz)
            mx, my, mz = mx / length, my / length, mz / length
            (vx, vy, vz), p, q = support_of_difference(sa, sb, mx, my, mz)
            calls += 1
            hm = vx * mx + vy * my + vz * mz
            jump = (vx - wx, vy - wy, vz - wz)
            # The support should move by about (H + h I) u (radii of curvature times the turn).
            moved1 = (h11 + h) * u1 + h12 * u2
            moved2 = h12 * u1 + (h22 + h) * u2
            expected = math.sqrt(moved1 * moved1 + moved2 * moved2)
            if tangential2(jump, (nx, ny, nz)) > (JUMP_RATIO * expected) ** 2 + \
                    (STILL_TOLERANCE * scale) ** 2:
                return _polish_ruled(sa, sb, (nx, ny, nz), (a, b), (p, q), scale, max_calls,
                                     calls, budget, fine)
            if hm <= h + rise or calls >= max_calls:
                break
            u1, u2 = 0.5 * u1, 0.5 * u2
        if hm > h + rise:
            break                                    # no descent
        # Carry the tangent frame over to m, and the gradient with it.
        c = t1x * mx + t1y * my + t1z * mz
        t1x, t1y, t1z = unit((t1x - c * mx, t1y - c * my, t1z - c * mz))
        t2x, t2y, t2z = my * t1z - mz * t1y, mz * t1x - mx * t1z, mx * t1y - my * t1x
        f1 = vx * t1x + vy * t1y + vz * t1z
        f2 = vx * t2x + vy * t2y + vz * t2z
        # BFGS update of the (unshifted) Hessian with the step u and the change of gradient y.
        y1, y2 = f1 - g1, f2 - g2
        yu = y1 * u1 + y2 * u2
        hu1, hu2 = h11 * u1 + h12 * u2, h12 * u1 + h22 * u2
        uhu = u1 * hu1 + u2 * hu2
        if yu > 0.0 and uhu > 0.0:
            h11 += y1 * y1 / yu - hu1 * hu1 / uhu
            h12 += y1 * y2 / yu - hu1 * hu2 / uhu
            h22 += y2 * y2 / yu - hu2 * hu2 / uhu
        nx, ny, nz, h, g1, g2, a, b = mx, my, mz, hm, f1, f2, p, q
        wx, wy, wz = vx, vy, vz
        if g1 * g1 + g2 * g2 <= tol2:
            return True, h, (nx, ny, nz), a, b, calls
    return False, h, (nx, ny, nz), a, b, calls


def _polish_ruled(sa, sb, normal, before, after, scale, max_calls, calls, budget=math.inf,
                  fine=None):
    """``polish`` on a straight fold of C: along a direction e C is a segment, across it curved.
    The normal is kept perpendicular to e (where the support is that whole segment) and Newton's
    method runs in the one curved direction τ = n × e. The answer is the point of the segment on
    the ray along n, from the segment's two ends.

    ``before`` and ``after`` are the support points (on A, on B) on either side of the fold.
    The fold direction is the jump of whichever shape jumped (a polytope edge, a cylinder's side
    line): the other shape's points only move with its curvature and would blur it.
    """
    nx, ny, nz = normal
    rise = POLISH_RISE * scale
    tol = polish_tolerance(scale, fine)

    def support(mx, my, mz):
        return support_of_difference(sa, sb, mx, my, mz)

    def fold_direction(before, after, nx, ny, nz):
        """Unit jump of whichever shape jumped between ``before`` and ``after`` (None if none)."""
        parts = []
        for x, y, sign in ((before[0], after[0], 1.0), (before[1], after[1], -1.0)):
            d = (sign * (y[0] - x[0]), sign * (y[1] - x[1]), sign * (y[2] - x[2]))
            parts.append((d, tangential2(d, (nx, ny, nz))))
        total = parts[0][1] + parts[1][1]
        jx = jy = jz = 0.0
        for d, size2 in parts:
            if size2 > FOLD_SHARE * total:       # this shape jumped (the fold is its edge)
                jx, jy, jz = jx + d[0], jy + d[1], jz + d[2]
        if jx * jx + jy * jy + jz * jz <= (STILL_TOLERANCE * scale) ** 2:
            return None
        return unit((jx, jy, jz))

    # The fold direction from the jump, then refined from the segment's two ends, probed across
    # the fold from n ⊥ e; the normal ends up on the fold (n ⊥ e).
    e = fold_direction(before, after, nx, ny, nz)
    if e is None:
        return False, 0.0, normal, None, None, calls
    nx, ny, nz = _reject(nx, ny, nz, e)
    (_, a1, b1), (_, a2, b2) = (
        support(*unit((nx + s * FOLD_SPREAD * e[0], ny + s * FOLD_SPREAD * e[1],
                       nz + s * FOLD_SPREAD * e[2]))) for s in (-1.0, 1.0))
    calls += 2
    e = fold_direction((a1, b1), (a2, b2), nx, ny, nz)
    if e is None:
        return False, 0.0, normal, None, None, calls
    ex, ey, ez = e
    nx, ny, nz = _reject(nx, ny, nz, e)
    # Newton in the curved direction, the normal kept on the fold (n ⊥ e).
    tx, ty, tz = ny * ez - nz * ey, nz * ex - nx * ez, nx * ey - ny * ex        # τ = n × e
    w, _, _ = support(nx, ny, nz)
    calls += 1
    h = w[0] * nx + w[1] * ny + w[2] * nz
    g = w[0] * tx + w[1] * ty + w[2] * tz
    h_start = h
    curvature = None
    while abs(g) > tol:
        if calls >= max_calls:
            return False, h, (nx, ny, nz), None, None, calls
        if curvature is None:
            # Finite-difference curvature along τ (as in ``polish``, in one dimension).
            mx, my, mz = nx + POLISH_STEP * tx, ny + POLISH_STEP * ty, nz + POLISH_STEP * tz
            length = math.sqrt(mx * mx + my * my + mz * mz)
            mx, my, mz = mx / length, my / length, mz / length
            v, _, _ = support(mx, my, mz)
            calls += 1
            vm = v[0] * mx + v[1] * my + v[2] * mz
            gm = ((v[0] * tx + v[1] * ty + v[2] * tz) - (mx * tx + my * ty + mz * tz) * vm) \
                / length
            curvature = (gm - g) / POLISH_STEP
            if budget < math.inf and not (curvature > 0.0 and 0.5 * g * g / curvature <= budget):
                return False, h, (nx, ny, nz), None, None, calls
        floor = abs(g) / POLISH_MAX_STEP
        u = -g / (curvature if curvature > floor else floor)
        for _ in range(POLISH_BACKTRACKS + 1):
            mx, my, mz = unit((nx + u * tx, ny + u * ty, nz + u * tz))
            v, _, _ = support(mx, my, mz)
            calls += 1
            hm = v[0] * mx + v[1] * my + v[2] * mz
            if hm <= h + rise or calls >= max_calls:
                break
            u *= 0.5
        if hm > h + rise:
            return False, h, (nx, ny, nz), None, None, calls
        tx, ty, tz = my * ez - mz * ey, mz * ex - mx * ez, mx * ey - my * ex
        gm = v[0] * tx + v[1] * ty + v[2] * tz
        if (gm - g) * u > 0.0:
            curvature = (gm - g) / u                 # secant update
        nx, ny, nz, h, g = mx, my, mz, hm, gm
    # The segment's ends at the final normal (tilted a hair either way along e), and its point
    # on the ray (at h·n).
    (w1, a1, b1), (w2, a2, b2) = (
        support(*unit((nx + s * FOLD_STEP * ex, ny + s * FOLD_STEP * ey, nz + s * FOLD_STEP * ez)))
        for s in (1.0, -1.0))
    calls += 2
    flat = FOLD_FLATNESS * scale
    if abs(w1[0] * nx + w1[1] * ny + w1[2] * nz - h) > flat or \
            abs(w2[0] * nx + w2[1] * ny + w2[2] * nz - h) > flat or h > h_start + rise:
        return False, h, (nx, ny, nz), None, None, calls   # not a straight fold after all
    dx, dy, dz = w1[0] - w2[0], w1[1] - w2[1], w1[2] - w2[2]
    dd = dx * dx + dy * dy + dz * dz
    if dd == 0.0:
        return False, h, (nx, ny, nz), None, None, calls
    lam = ((h * nx - w2[0]) * dx + (h * ny - w2[1]) * dy + (h * nz - w2[2]) * dz) / dd
    if not -FOLD_OVERHANG <= lam <= 1.0 + FOLD_OVERHANG:
        return False, h, (nx, ny, nz), None, None, calls   # the ray passes beside the segment
    lam = min(max(lam, 0.0), 1.0)
    # The segment's point must lie on the ray: the fold of a cone's side turns with the normal,
    # so Newton across a fixed e can settle beside it.
    px = w2[0] + lam * dx - h * nx
    py = w2[1] + lam * dy - h * ny
    pz = w2[2] + lam * dz - h * nz
    if px * px + py * py + pz * pz > tol * tol:
        return False, h, (nx, ny, nz), None, None, calls
    pa = tuple(y + lam * (x - y) for x, y in zip(a1, a2))
    pb = tuple(y + lam * (x - y) for x, y in zip(b1, b2))
    return True, h, (nx, ny, nz), pa, pb, calls


def polished_points(pa, pb, depth, n, probed, scale):
    """Depth and contact points of a polished answer with pa − pb == depth · n exactly.

    The polish leaves the support point off the ray by up to its tolerance, sideways. The
    residual goes to whichever shape's support point moved under the probes' tilts
    (``probe_shape``): one that moved both ways is curved there, its tangent plane is normal to
    n, and it slides along it staying on the shape to second order; one that moved one way
    slides along that line (an edge); one that stayed put (a vertex, a point shape) would be
    moved off its shape, and takes nothing unless neither can. A depth a rounding below zero
    (touching) is zero.
    """
    depth = depth if depth > 0.0 else 0.0
    rx = pa[0] - pb[0] - depth * n[0]
    ry = pa[1] - pb[1] - depth * n[1]
    rz = pa[2] - pb[2] - depth * n[2]
    along = rx * n[0] + ry * n[1] + rz * n[2]
    if depth + along >= 0.0:
        depth += along
        rx, ry, rz = rx - along * n[0], ry - along * n[1], rz - along * n[2]
    (_, _, a1, b1, _), (_, _, a2, b2, _) = probed.probes
    bx, by, bz = _slide(rx, ry, rz, pb, b1, b2)
    rx, ry, rz = rx - bx, ry - by, rz - bz
    ax, ay, az = _slide(rx, ry, rz, pa, a1, a2)
    hx, hy, hz = 0.5 * (rx - ax), 0.5 * (ry - ay), 0.5 * (rz - az)
    pa = (pa[0] - ax - hx, pa[1] - ay - hy, pa[2] - az - hz)
    pb = (pb[0] + bx + hx, pb[1] + by + hy, pb[2] + bz + hz)
    return depth, pa, pb


def _slide(rx, ry, rz, p, q1, q2):
    """The part of the sideways residual r a shape can take at a polished contact, from its
    support point p and the two probes' q1, q2 (see ``polished_points``): all of it on a
    curved patch (the probes moved two ways), the part along an edge (one way), none at a
    vertex. Written out: every polished answer pays it."""
    px, py, pz = p
    ax, ay, az = q1[0] - px, q1[1] - py, q1[2] - pz
    bx, by, bz = q2[0] - px, q2[1] - py, q2[2] - pz
    aa, bb = ax * ax + ay * ay + az * az, bx * bx + by * by + bz * bz
    if aa < bb:
        ax, ay, az, aa, bx, by, bz, bb = bx, by, bz, bb, ax, ay, az, aa
    if aa == 0.0:
        return 0.0, 0.0, 0.0                         # a vertex: it did not move
    cx, cy, cz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    if cx * cx + cy * cy + cz * cz > PARALLEL_SIN2 * aa * bb and bb > 0.0:
        return rx, ry, rz                            # moved two ways: a curved patch
    c = (rx * ax + ry * ay + rz * az) / aa           # one way: along that line
    return c * ax, c * ay, c * az


# --- small vector helpers ---------------------------------------------------------------------

def _reject(x, y, z, e):
    """Unit vector along (x, y, z) with its component along the unit vector e removed."""
    c = x * e[0] + y * e[1] + z * e[2]
    return unit((x - c * e[0], y - c * e[1], z - c * e[2]))

