"""Gilbert–Johnson–Keerthi distance and separating-axis intersection (seed 000 §3, seed 001 §2.3).

GJK searches the configuration space obstacle C = A − B for its point ``v`` nearest the origin:
the distance of A and B is |v|. Each iteration asks C for its support point ``w`` along −v,
adds it to a simplex of at most four points and replaces ``v`` by the simplex's point nearest the
origin (``simplex.closest_to_origin``). Two bounds bracket the answer throughout:

    upper bound  |v|          (v is a point of C)
    lower bound  v·w / |v|    (every point x of C has x·v >= w·v, since w minimises x·v over C)

and the search stops when they meet within a relative *and* an absolute tolerance. Closest points
on A and B are the same barycentric combination of the support points that built the simplex.

Rounded shapes (``shape.margin > 0``) are handled as in seed 001 §2.3.4: GJK runs on the cores,
whose distance minus the margins is the exact distance when the cores are apart.

Separating-axis GJK (``intersect``) stops as soon as some v has v·w > 0: v then separates A and
B. Given the last separating axis in a ``SeparationCache`` (ISA-GJK, seed 000 §3), a repeated
query on a slowly moving pair usually ends after a single support call.

Layering (docs/ARCHITECTURE.md): this module uses the foundations (``simplex``,
``geometry``, ``results``, ``validation``), ``shapes``, and ``mpr``'s portal test for a run that
stops short without separating the shapes (``undecided``); ``queries`` chooses between it and
MPR, and ``penetration``, ``sweep`` and ``concave`` call it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import compress

import numpy as np

from . import mpr, validation
from .geometry import COORDINATE_ROUNDING, centre_difference, norm2, sub
from .results import DistanceResult, SeparationCache, Status
from .shapes import Point, Transformed, contact_size, no_larger
from .simplex import (CANCELLATION_RATIO, SOLVERS, closest_to_origin, combine, from_nearest,
                      refined_weights)

# Hard cap on support calls per query. Polytope pairs end in under 20, curved pairs in under 60
# (seed 001 §4.1.3 reports at most 10–60); reaching the cap means numerical trouble, not slowness.
MAX_ITERATIONS = 128

# Stop when |v| − lower bound <= REL_TOLERANCE · |v|: the distance is known to 1e-10 relative.
# (On the cores of rounded shapes, relative to the distance of the shapes themselves, |v| less
# their margins: the cores of a 1 mm round box touching a 1 m one lie about the large one's
# margin apart, 0.3 m say, and 1e-10 of that, 3e-11 m, is more than 1e-8 of the small box.
# Where the cores lie within the margins the answer is a depth, margins − |v|, and relative to
# it only up to SIZE_RATIO times the smaller shape (``size``): a 1 mm ellipsoid 0.39 deep in a
# 1 m sphere was 2.7e-11 short, 3e-8 of its own size.)
# Polytopes end exactly (a repeated support point) before this matters; curved shapes converge
# about linearly, and each factor 100 here costs them ~2.5 support calls on the thesis benchmark
# (ellipsoid pairs: 8.2 calls at 1e-6, 13.4 at 1e-10, 15.9 at 1e-12). Callers may pass their own.
REL_TOLERANCE = 1e-10

# ...or when it is below SIZE_TOLERANCE times the size of the CSO (the largest |w| seen): a
# scale-free absolute tolerance, so that nearly touching curved shapes, whose relative gap
# |v|−lower / |v| stalls on rounding long before 1e-10, still stop on a distance known to 1e-10
# of the shapes' size. It also keeps the test above the rounding noise of v·w (~1e-16·|v|·|w|)
# for shapes placed 1e6 units from the origin. There is no absolute tolerance in model units:
# shapes 1e-13 across are measured as precisely, relative to their size, as shapes 1 across.
SIZE_TOLERANCE = 1e-10

# Support points far from the origin relative to their shapes' size round at the size of their
# coordinates (``geometry.COORDINATE_ROUNDING`` of the largest): distances below that are
# touching.

# Given the smaller shape's size (``run``'s ``size``), SIZE_TOLERANCE applies to SIZE_RATIO times
# it where that is less than the size of the CSO: a 2 m box beside a 1e6 m ellipsoid has its
# distance to 1e-9 of 2 m, not 1e-10 of 1e6 m. (Shapes of comparable size, C within SIZE_RATIO
# of the smaller, keep C's tolerance and GJK its cost.) The duality gap is then only trusted
# above its own rounding, GAP_ROUNDING of |v|·|w| (v·w sums three products of that size: ~3
# ulps; here 45).
SIZE_RATIO = 10.0
GAP_ROUNDING = 1e-14

# A step that does not shorten v ends the search (NO_PROGRESS: rounding stalled it) at once
# only when the duality gap |v|² − v·w is below this fraction of |v|²; with a larger gap the
# step may have been just below the rounding of a thin simplex, and the search goes on for up
# to STALL_RETRIES such steps per query.
STALL_GAP = 1e-3
STALL_RETRIES = 2

# The origin counts as inside the simplex (the shapes touch or overlap) when
# |v|² <= CONTAINMENT_TOLERANCE · max |w_i|² over the simplex points (van den Bergen's ε_tol):
# |v| is then within rounding of zero relative to the size of the simplex.
CONTAINMENT_TOLERANCE = 1e-26

DISTANCE = "distance"
INTERSECT = "intersect"


@dataclass
class GJKRun:
    """The state GJK ended in: its status, v, and the final simplex (for EPA and contact points)."""

    status: Status
    v: tuple
    points: list
    points_a: list
    points_b: list
    weights: list
    iterations: int
    support_calls: int
    lower_bound: float = 0.0
    scale: float = 0.0     # largest |w| seen: the size the rounding tolerances are relative to
    size: float | None = None   # the smaller shape's size, if given: the touching tolerance's

    @property
    def distance(self) -> float:
        vx, vy, vz = self.v
        return math.sqrt(vx * vx + vy * vy + vz * vz)

    @property
    def intersecting(self) -> bool:
        return self.status in (Status.INTERSECTING, Status.TOUCHING)

    @property
    def reach(self) -> float:
        """Largest |coordinate| of the final simplex's support points: where they round."""
        return max([abs(c) for p in self.points_a + self.points_b for c in p] + [0.0])

    def touching(self) -> float:
        """``touching_tolerance`` of this run."""
        return touching_tolerance(self.scale, self.reach, self.size)

    def closest_points(self) -> tuple:
        """Points on A and B as the barycentric combination of the simplex's support points."""
        return combine(self.points_a, self.weights), combine(self.points_b, self.weights)




def run(support_a, support_b, axis=None, mode=DISTANCE, max_iterations=MAX_ITERATIONS,
        rel_tolerance=REL_TOLERANCE, size=None, margins=0.0) -> GJKRun:
    """GJK on C = A − B given the two support mappings (``support_xyz`` callables).

    ``axis`` is the first search direction (a cached separating axis or last ``v``); any non-zero
    vector works, the centre difference of the shapes is a good default. In ``INTERSECT`` mode the
    loop ends at the first separating axis (status SEPARATED, ``v`` the axis). ``size``, the
    smaller shape's size (``shapes.contact_size``), makes the absolute tolerances relative to it
    instead of to the size of C (see ``GAP_ROUNDING``). ``margins``: on the cores of rounded
    shapes, the sum of their margins; the relative tolerance is then one of the shapes' own
    distance (or depth), |v| − margins, not of the cores'.
    """
    vx, vy, vz = axis if axis is not None else (1.0, 0.0, 0.0)
    # Scale the axis to a largest component of 1: a subnormal centre difference (1e-175)
    # would otherwise underflow to a zero direction inside the support mappings.
    big = max(abs(vx), abs(vy), abs(vz))
    if big == 0.0 or not math.isfinite(big):
        vx, vy, vz = 1.0, 0.0, 0.0
    else:
        vx, vy, vz = vx / big, vy / big, vz / big
    W, A, B, lam = [], [], [], []
    vv = math.inf          # |v|², the squared upper bound (unknown until the simplex has a point)
    lower = 0.0            # the best lower bound v·w/|v| seen so far
    max_w2 = 0.0           # largest |w|² seen: the scale for the rounding-aware tolerances
    status = Status.ITERATION_LIMIT
    early_out = mode == INTERSECT
    sqrt = math.sqrt
    calls = 0
    best_gap, best = math.inf, None  # the state with the tightest bounds, for a stalled ending
    stalls = 0             # steps that did not shorten v although the gap was large
    # The gap's absolute tolerance over |v|, for the CSO's size so far: SIZE_TOLERANCE of it,
    # or of SIZE_RATIO times the smaller shape where that is less (plus GAP_ROUNDING of it).
    absolute = 0.0
    fine = math.inf if size is None else SIZE_RATIO * size
    # (Module constants as locals: the loop reads them every step.)
    solvers, cancellation, containment = SOLVERS, CANCELLATION_RATIO, CONTAINMENT_TOLERANCE
    while calls < max_iterations:
        # Support point of A − B along −v.
        # (``geometry.support_of_difference``, written out: the loop's commonest call)
        a = support_a(-vx, -vy, -vz)
        b = support_b(vx, vy, vz)
        wx, wy, wz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
        w = (wx, wy, wz)
        calls += 1
        vw = vx * wx + vy * wy + vz * wz
        w2 = wx * wx + wy * wy + wz * wz
        if w2 > max_w2:
            max_w2 = w2
            scale = sqrt(w2)
            absolute = SIZE_TOLERANCE * scale if fine >= scale else \
                SIZE_TOLERANCE * fine + GAP_ROUNDING * scale
        if vw > 0.0 and early_out:     # v separates A and B (SA-GJK)
            status = Status.SEPARATED
            break
        if calls > 1:
            # Duality gap |v|² − v·w = |v|·(upper bound − lower bound v·w/|v|).
            norm_v = sqrt(vv)
            if vw > lower * norm_v:
                lower = vw / norm_v
            gap = vv - vw
            if margins == 0.0:
                own = vv
            elif norm_v >= margins:
                own = norm_v * (norm_v - margins)
            else:                      # a depth: relative to it, but no more than to `fine`
                own = norm_v * min(margins - norm_v, fine)
            if gap <= rel_tolerance * own or gap <= absolute * norm_v:
                status = Status.CONVERGED
                break
            if gap < best_gap and vw > 0.0:
                # (Only states that separate count: with the origin in C every v·w <= 0, the
                # gap is no measure of v's quality, and the latest v is the shortest.)
                # (The lists by reference and their length: W, A and B are only appended to
                # or replaced by new lists, so their first len(W) items stay this state.)
                best_gap, best = gap, ((vx, vy, vz), W, A, B, len(W), lam, vv)
            if w in W:                 # a repeated support point: no further progress possible
                status = Status.REPEATED_SUPPORT
                break
        W.append(w)
        A.append(a)
        B.append(b)
        (vx, vy, vz), lam = solvers[len(W)](*W)     # ``simplex.solve``, one call less a step
        new_vv = vx * vx + vy * vy + vz * vz
        if new_vv * cancellation < max_w2 and (new_vv > 0.0 or len(W) < 4):
            # v is 1e4 times shorter than the simplex: the solve (relative to its first point)
            # may have cancelled (``simplex.closest_to_origin``); again from the nearest point.
            (vx, vy, vz), lam = from_nearest(W)
            new_vv = vx * vx + vy * vy + vz * vz
        if 0.0 in lam:                 # keep the smallest sub-simplex that expresses v
            # (The weights are >= 0: ``compress`` keeps the points whose weight is not 0.)
            W = list(compress(W, lam))
            A = list(compress(A, lam))
            B = list(compress(B, lam))
            lam = list(filter(None, lam))
        if len(W) == 4 or new_vv <= containment * max_w2:
            status = Status.INTERSECTING if len(W) == 4 or new_vv == 0.0 else Status.TOUCHING
            vv = new_vv
            break
        if new_vv >= vv:               # rounding stalled the descent
            if vv - vw > STALL_GAP * vv and stalls < STALL_RETRIES:
                # ... although the duality gap is still large: the step was below the
                # rounding of the simplex (a CSO as thin as 1e-6 of its width: a disc through a
                # small cone), and the next support point, across the slab, decides. Go on, a
                # few times (with the origin just inside a curved C the gap stays large too,
                # and there the stall is real).
                stalls += 1
                vv = new_vv
                continue
            status = Status.NO_PROGRESS
            # On a flat valley of a curved CSO, v can drift sideways at constant |v| and loosen
            # the bounds it had: end on the state whose duality gap was smallest.
            if best is not None:
                (vx, vy, vz), W, A, B, n, lam, vv = best
                W, A, B = W[:n], A[:n], B[:n]
            else:
                vv = new_vv
            break
        vv = new_vv
    res = GJKRun(status, (vx, vy, vz), W, A, B, lam, calls, calls, lower, math.sqrt(max_w2),
                 size)
    if status not in (Status.NO_PROGRESS, Status.REPEATED_SUPPORT):
        return res
    if lower > 0.0:
        # Apart, but a stall on a sliver simplex can leave the bounds far apart (a 2 m segment
        # beside a flat hull 1e-6 across: 1.6e-9 and 4.7e-9): the support along the simplex's
        # own normal may tighten the lower one (``_certify``).
        if calls < max_iterations and vv - math.sqrt(vv) * lower > STALL_GAP * vv:
            _certify(res, support_a, support_b, early_out)
        return res
    # Stalled, never certified apart: on a sliver simplex v points where rounding put it, and
    # the support along the simplex's own normal may still show C short of the origin. (Only
    # beyond the smaller shape's touching tolerance, ``size``; a caller that gives no size
    # keeps C's own, within which a stall is touching, below.)
    reach = res.reach
    if calls < max_iterations and vv > touching_tolerance(res.scale, reach, size) ** 2 \
            and _certify(res, support_a, support_b, early_out):
        return res
    if vv <= touching_tolerance(res.scale, reach) ** 2:
        # Stalled within the touching tolerance of the origin and not certified apart: on a
        # CSO as thin as 1e-6 of its length (a needle, a slab) v is rounding noise there, and
        # the shapes may overlap by up to the CSO's thickness. They touch, as far as GJK can
        # tell (``intersect`` says so too). (The tolerance is C's, not the smaller shape's:
        # the stall is where rounding of C's points stopped the descent.)
        res.status = Status.TOUCHING
    return res


def _simplex_normal(v, W):
    """v with its components along the simplex W's edges removed: the normal of the segment or
    triangle W (v's sub-simplex, v in its relative interior) that points the way v does.

    v is W's point nearest the origin, rounded to ε·|w| absolute: on a segment of C 0.9 long
    and 4e-9 from the origin (two segments a hair apart, one 1e6 times shorter) its direction
    is 2e-8 rad off, and the support point along it lands at the edge's wrong end, 2e-8 beyond
    a gap of 4e-9. The edge's normal is exact to ε relative."""
    if len(W) == 2:
        (px, py, pz), q = W
        ex, ey, ez = q[0] - px, q[1] - py, q[2] - pz
        ee = ex * ex + ey * ey + ez * ez
        if ee == 0.0:
            return v
        t = (v[0] * ex + v[1] * ey + v[2] * ez) / ee
        return v[0] - t * ex, v[1] - t * ey, v[2] - t * ez
    if len(W) == 3:
        n = mpr.plane_normal(*W)
        if n[0] * v[0] + n[1] * v[1] + n[2] * v[2] < 0.0:
            return -n[0], -n[1], -n[2]
        return n
    return v


def _certify(res: GJKRun, support_a, support_b, early_out) -> bool:
    """One support call along the stalled simplex's normal (``_simplex_normal``): where C lies
    beyond the origin along it by more than the rounding of its points, that support value
    becomes the run's lower bound and the run is certified apart (``undecided`` no longer, not
    touching; SEPARATED in ``INTERSECT`` mode; True). The status otherwise stays the stall's.

    GJK's analogue of EPA's seed-3006 case: two segments a hair apart (one 1e6 times shorter),
    where v's direction is rounded off and MPR's portal test, on a tetrahedron as flat as C, is
    no better; 1e-12 apart beside a 1 m segment, GJK's v is exact but within C's touching
    tolerance."""
    ux, uy, uz = _simplex_normal(res.v, res.points)
    norm_u = math.sqrt(ux * ux + uy * uy + uz * uz)
    if not 0.0 < norm_u < math.inf:
        return False
    a = support_a(-ux, -uy, -uz)
    b = support_b(ux, uy, uz)
    res.support_calls += 1
    low = ((a[0] - b[0]) * ux + (a[1] - b[1]) * uy + (a[2] - b[2]) * uz) / norm_u
    reach = max(res.reach, abs(a[0]), abs(a[1]), abs(a[2]), abs(b[0]), abs(b[1]), abs(b[2]))
    if not low > GAP_ROUNDING * res.scale + COORDINATE_ROUNDING * reach:
        return False
    res.lower_bound = max(res.lower_bound, low)
    if early_out:
        res.status, res.v = Status.SEPARATED, (ux, uy, uz)
    return True


_UNDECIDED = (Status.NO_PROGRESS, Status.REPEATED_SUPPORT, Status.ITERATION_LIMIT)


def undecided(res: GJKRun) -> bool:
    """Whether a run that did not find the shapes overlapping has not shown them apart either:
    it stopped short (a repeated support point, no progress, the iteration cap) without ever
    finding a separating support plane (lower bound <= 0), and not within touching. On a needle
    or slab of C far from the origin GJK can stop so 1e-4 from an origin C holds 1e-3 deep;
    ``mpr.holding_tetrahedron`` decides instead."""
    return res.lower_bound <= 0.0 and res.status in _UNDECIDED


def is_point(shape) -> bool:
    """Whether ``shape`` is a point (a sphere's core), bare or posed."""
    return isinstance(shape, Point) or (isinstance(shape, Transformed)
                                        and isinstance(shape.shape, Point))


def _point_pair(a, b):
    """(a, b, v = a − b, |v|) of two points (``is_point``): GJK's answer on them."""
    pa, pb = a.support_xyz(1.0, 0.0, 0.0), b.support_xyz(1.0, 0.0, 0.0)
    v = (pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2])
    return pa, pb, v, math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def points_run(a, b, size=None) -> GJKRun:
    """What ``run`` ends with on two points ``a`` and ``b`` (``is_point``: the cores of two
    spheres), without running it: v = a − b, converged (intersecting where they coincide), the
    points themselves the simplex. Two spheres are the commonest pair of a scene of balls, and
    GJK would take two support calls to find what one subtraction gives."""
    pa, pb, v, d = _point_pair(a, b)
    return GJKRun(Status.CONVERGED if d > 0.0 else Status.INTERSECTING, v, [v], [pa], [pb],
                  [1.0], 1, 1, d, d, size)


def _initial_axis(a, b, cache):
    if cache is not None and cache.axis is not None:
        return cache.axis
    return centre_difference(a, b)


def distance(a, b, cache: SeparationCache | None = None,
             rel_tolerance: float = REL_TOLERANCE) -> DistanceResult:
    """Distance and closest points of shapes ``a`` and ``b`` (in one common frame).

    ``cache`` (a ``SeparationCache``) warm-starts the search from the last ``v`` of this pair;
    ``rel_tolerance`` bounds the relative error of the distance on curved shapes.

    Supported range (``validation``): shapes within ±1e40 of the origin, non-zero sizes from
    1e-40; the distance is exact to 1e-10 of the size of A − B there, and the points lie on
    their shapes.
    """
    a = validation.shape("a", a)
    b = validation.shape("b", b)
    ma, mb = a.margin, b.margin
    ca, cb = a.core, b.core
    if is_point(ca) and is_point(cb):
        # Two points (sphere cores): their difference is GJK's answer (the distance needs none
        # of ``points_run``'s simplex: this pair is the commonest in a scene of spheres; its
        # lines written out, ``_point_pair``'s call is 7% of the query).
        pa, pb = ca.support_xyz(1.0, 0.0, 0.0), cb.support_xyz(1.0, 0.0, 0.0)
        v = (pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2])
        d = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
        res = GJKRun(Status.CONVERGED if d > 0.0 else Status.INTERSECTING, v, [], [], [], [],
                     0, 0)
    else:
        res = run(ca.support_xyz, cb.support_xyz, _initial_axis(ca, cb, cache),
                  rel_tolerance=rel_tolerance, size=contact_size(a, b), margins=ma + mb)
        pa, pb = res.closest_points()
        d = res.distance
        if res.lower_bound <= 0.0 and res.status in _UNDECIDED and not res.intersecting:
            held, points_a, points_b = mpr.holding_tetrahedron(ca, cb)
            if held:
                # The cores overlap: a common point is the origin's barycentric combination
                # of the tetrahedron's points, taken on the smaller shape (as below). Its
                # weights miss the origin by their rounding, and the point misses the other
                # shape by as much: on a sliver tetrahedron of shapes 1e-13 across, 1e-7 of
                # their size. GJK's stalled points are |v| apart; the nearer pair is kept.
                weights = closest_to_origin([sub(p, q) for p, q in zip(points_a, points_b)])[1]
                qa, qb = combine(points_a, weights), combine(points_b, weights)
                if norm2(sub(qa, qb)) > d * d:
                    qa, qb = pa, pb
                p = np.array(qa if no_larger(a, b) else qb)
                return DistanceResult(0.0, p, p.copy(), True, res.iterations,
                                      res.support_calls, Status.INTERSECTING)
    if cache is not None:
        cache.record(res.v, res.support_calls)
    margins = ma + mb
    if res.intersecting or d <= margins:
        if not res.intersecting and d > 0.0:
            # Cores apart but within the margins: a point at fraction ma/(ma+mb) along the core
            # segment lies within ma of A's core and within mb of B's, so in both shapes.
            t = ma / margins
            common = tuple(pa[i] + t * (pb[i] - pa[i]) for i in range(3))
        else:
            # The simplex holds the origin to within CONTAINMENT_TOLERANCE of the size of A − B:
            # pa is on A, pb on B, |pa − pb| within it. The common point is taken on the smaller
            # shape (a point exactly on it, and within that tolerance of the larger).
            if len(res.points) == 4 and \
                    norm2(sub(pa, pb)) > (COORDINATE_ROUNDING * res.reach) ** 2:
                # A sliver tetrahedron's weights miss the origin by more than rounding (a 2 m
                # segment through a disc 1e-6 across: the point on the disc 1.1e-10 off the
                # segment); one step of refinement on their residual.
                pa, pb = refined_weights(res.points_a, res.points_b, res.weights)[1:]
            common = pa if no_larger(a, b) else pb
        p = np.array(common)
        status = res.status if res.intersecting else Status.INTERSECTING
        return DistanceResult(0.0, p, p.copy(), True, res.iterations, res.support_calls, status)
    # Unit normal from A toward B is −v/|v| (v = pa − pb); move the core points out by the margins.
    # The points' own distance, not |v|: the two differ by the rounding of the points'
    # coordinates, and |point_a − point_b| == distance must hold for the points returned.
    dx, dy, dz = pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]
    d = math.sqrt(dx * dx + dy * dy + dz * dz)
    if d <= margins:
        t = ma / margins if margins > 0.0 else 0.0
        p = np.array(tuple(pa[i] + t * (pb[i] - pa[i]) for i in range(3)))
        return DistanceResult(0.0, p, p.copy(), True, res.iterations, res.support_calls,
                              Status.INTERSECTING)
    nx, ny, nz = dx / d, dy / d, dz / d
    point_a = np.array((pa[0] + ma * nx, pa[1] + ma * ny, pa[2] + ma * nz))
    point_b = np.array((pb[0] - mb * nx, pb[1] - mb * ny, pb[2] - mb * nz))
    return DistanceResult(d - margins, point_a, point_b, False, res.iterations,
                          res.support_calls, res.status)


def intersect(a, b, cache: SeparationCache | None = None) -> bool:
    """True when ``a`` and ``b`` overlap or touch: separating-axis GJK with its early out,
    warm-started by ``cache`` (``queries.intersect`` chooses between this and MPR). Touching
    is decided to 1e-10 of the size of A − B at any scale of the supported range
    (``validation``)."""
    a = validation.shape("a", a)
    b = validation.shape("b", b)
    size = contact_size(a, b)
    res = run(a.support_xyz, b.support_xyz, _initial_axis(a, b, cache), INTERSECT, size=size)
    if cache is not None:
        cache.record(res.v, res.support_calls)
    if res.status is Status.SEPARATED:
        return False
    if res.intersecting:
        return True
    # Stopped without a separating axis and without containing the origin. With v·w <= 0 the
    # duality gap is at least |v|², so convergence means |v| is within tolerance of zero:
    # the shapes touch (to the smaller shape's tolerance, as ``distance`` measures it).
    if res.distance <= touching_tolerance(res.scale, res.reach, size):
        return True
    if undecided(res):
        # A stall: within C's own rounding-level tolerance it is touching too (as ``run``
        # says); beyond it, MPR's portal test decides (as ``distance`` asks it).
        if res.distance <= touching_tolerance(res.scale, res.reach):
            return True
        held = mpr.holding_tetrahedron(a, b)[0]
        if held is not None:
            return held
    return False


def touching_tolerance(scale: float, reach: float = 0.0, size: float | None = None) -> float:
    """Distances at or below this count as touching for shapes whose CSO has size ``scale``,
    the smaller of which has ``size`` (None: unknown, then ``scale``), and whose support points
    have coordinates up to ``reach`` (which round at that size)."""
    if size is not None and SIZE_RATIO * size < scale:
        scale = SIZE_RATIO * size
    return SIZE_TOLERANCE * scale + COORDINATE_ROUNDING * reach
