"""Every public query against its contract (API.md), as an adversarial tester would run them.

Each example builds a pair of shapes of any kind (primitives, hulls — flat, collinear, with
duplicate points —, composites, a user's plain class), in random poses, at a scale anywhere in
the supported range (1e-39 to 1e39: ``validation``), the second shape up to 1e6 times larger or
smaller than the first, placed at random, exactly touching, nearly touching or concentric. Then
every query runs on it and each answer is checked against what the contract promises:

- no NaN, and no exception inside the supported range;
- distance >= 0; closest points on their shapes with |point_a - point_b| == distance;
  ``intersecting`` exactly when the distance is 0; the same distance both ways round;
- depth >= 0, unit normal, point_a - point_b == depth * normal, contact points on their shapes,
  and translating A by -depth * normal leaves the shapes touching; EPA's depth is no deeper
  than MPR's (EPA's is the least); signed_distance agrees with distance and depth;
- intersect (GJK and MPR) agrees with distance, except within tolerance of touching;
- contact manifold: unit normal, depths >= 0, each point midway between the two surfaces;
- ray casts: t in [0, max_t], point == origin + t * direction, a unit outward normal whose plane
  supports the shape at the point (zero exactly when the ray starts inside), a miss misses;
- sweeps: t in [0, 1], touching at t and not overlapping, a unit normal (zero at t == 0),
  and a miss means the swept shape never meets the other;
- an answer whose status is CONVERGED is never wrong (looser statuses still obey the basic
  contract: finite, depth >= 0, unit normal).

Outside the supported range the constructors and queries raise a ValueError naming the argument
and the range. Points are measured against their shapes with GJK from the point: its lower
bound v·w/|v| (the shape lies beyond the plane through the support point w) certifies how far
a point is at least outside, whatever GJK's own precision. Distances and depths after a
translation are measured both ways: GJK's certified lower bound when apart, and when overlapping
an upper bound no failed measurement can spoil (``overlap_at_most``: EPA's or MPR's depth where
CONVERGED, else how far A − B reaches along a normal, or where the answer's own ray leaves it).
The tolerances are relative to the smaller shape where the contract is (contact points), to the
larger where the answer is a property of both (depth, distance), plus the rounding of the
coordinates (~1e-16 of their magnitude, allowed 3e-14).

Hypothesis draws the examples (fixed in CI, ``CI=true``): the whole module runs in seconds.
"""

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convex_tools.core import (Box, Capsule, Cone, ConvexHullOf, Cylinder, Disc, Ellipsoid, Hull,
                               MinkowskiSum, Point, Rectangle, RoundBox, Segment, Sphere, Status,
                               Transformed, contact_manifold, distance, intersect, penetration,
                               posed, ray_cast, signed_distance, sweep, sweep_rotating,
                               translated)
from convex_tools.core import gjk, validation
from convex_tools.core.shapes import contact_size
from convex_tools.core.sweep import ADVANCE_TOLERANCE, _RigidMotion

from geometry_helpers import random_rotation, rigid

# Contact points lie on their shapes within this fraction of the smaller shape's size ...
POINT_TOLERANCE = 1e-8
# ... depths, distances and touching within this fraction of the larger shape's size (the
# size of A - B, which the algorithms' tolerances are relative to) ...
SIZE_TOLERANCE = 1e-8
# ... plus the rounding of coordinates of this magnitude relative to the largest of them (a
# hundred ulps or so: the manifold's corners go through two frame changes and a plane fit).
ROUNDING = 3e-14


class Octahedron:
    """A user's shape: a plain class with nothing but ``support_xyz`` (|x|₁ <= r)."""

    def __init__(self, r):
        self.r = r

    def support_xyz(self, x, y, z):
        axis = max(range(3), key=lambda i: abs((x, y, z)[i]))
        p = [0.0, 0.0, 0.0]
        p[axis] = math.copysign(self.r, (x, y, z)[axis])
        return p


def _points(rng, n, size, rank):
    """n points of extent ~size spanning a space of dimension ``rank`` (0 to 3)."""
    basis = np.linalg.qr(rng.normal(size=(3, 3)))[0][:, :rank]
    p = rng.uniform(-size, size, (n, rank)) @ basis.T if rank else np.zeros((n, 3))
    return p


# Each kind: (name, make(rng, size)) -> a shape of largest dimension ~size in its own frame.
KINDS = [
    ("point", lambda rng, s: Point()),
    ("segment", lambda rng, s: Segment(s)),
    ("sphere", lambda rng, s: Sphere(s)),
    ("ellipsoid", lambda rng, s: Ellipsoid(s * rng.uniform(0.3, 1.0, 3))),
    ("box", lambda rng, s: Box(s * rng.uniform(0.3, 1.0, 3))),
    ("flat box", lambda rng, s: Box((s, 0.0, 0.5 * s))),
    ("rectangle", lambda rng, s: Rectangle(s * rng.uniform(0.3, 1.0, 2))),
    ("disc", lambda rng, s: Disc(s)),
    ("capsule", lambda rng, s: Capsule(0.4 * s, 0.6 * s)),
    ("cylinder", lambda rng, s: Cylinder(s * rng.uniform(0.3, 1.0), s * rng.uniform(0.3, 1.0))),
    ("flat cylinder", lambda rng, s: Cylinder(s, 0.0)),
    ("cone", lambda rng, s: Cone(s * rng.uniform(0.3, 1.0), s * rng.uniform(0.3, 1.0))),
    ("round box", lambda rng, s: RoundBox(0.7 * s * rng.uniform(0.3, 1.0, 3), 0.3 * s)),
    ("hull", lambda rng, s: Hull(_points(rng, 12, s, 3))),
    ("flat hull", lambda rng, s: Hull(_points(rng, 8, s, 2))),
    ("collinear hull", lambda rng, s: Hull(_points(rng, 5, s, 1))),
    ("duplicate-point hull", lambda rng, s: Hull(np.repeat(_points(rng, 4, s, 3), 3, axis=0))),
    ("minkowski sum", lambda rng, s: MinkowskiSum(Box((0.6 * s,) * 3), Segment(0.4 * s))),
    ("convex hull of", lambda rng, s: ConvexHullOf(Sphere(0.5 * s),
                                                   translated(Box((0.3 * s,) * 3), (0.5 * s, 0, 0)))),
    ("user's class", lambda rng, s: Octahedron(s)),
]
KIND_NAMES = [name for name, _ in KINDS]
PLACEMENTS = ("random", "touching", "nearly touching", "concentric")

# Scales in the supported range (10^k) and size ratios (10^k) of B to A.
SCALES = st.sampled_from([-39, -30, -13, -6, 0, 0, 0, 3, 6, 13, 30, 38])
RATIOS = st.sampled_from([-6, -3, -1, 0, 0, 0, 1, 3, 6])
# Long random runs (``scripts/random_runs.sh`` sets RANDOM_RUNS=1): 3,000 examples a seed.
LONG_RUNS = os.environ.get("RANDOM_RUNS") == "1"
SETTINGS = settings(max_examples=3000 if LONG_RUNS else 250, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Case:
    """A pair of posed shapes with their sizes and the tolerances the contract allows them."""

    def __init__(self, kind_a, kind_b, scale_exp, ratio_exp, placement, seed):
        rng = np.random.default_rng(seed)
        self.rng = rng
        size_a = 10.0 ** scale_exp
        size_b = size_a * 10.0 ** ratio_exp
        if size_b > 1e39 or size_b < 1e-39:        # keep both in range (ratios shift the scale)
            size_a, size_b = size_a / 10.0 ** ratio_exp, size_a
        self.size_a, self.size_b = size_a, size_b
        shape_a = dict(KINDS)[kind_a](rng, size_a)
        shape_b = dict(KINDS)[kind_b](rng, size_b)
        # Far from the world origin (up to 1e3 sizes away): coordinates round at that magnitude.
        origin = rng.uniform(-1, 1, 3) * min(max(size_a, size_b) * 10.0 ** rng.integers(0, 4),
                                             1e39)
        offset = self._place(rng, shape_a, shape_b, origin, placement,
                             max(size_a, size_b) * np.array([-1e-9, 1e-9, -1e-6, 1e-6]))
        # The smaller shape's size as the engine measures it (``contact_size``: its extent,
        # which its contact-point tolerances are relative to; a point has none), as
        # ``test_extreme_ratios`` takes it: a user's shape of size parameter 1e-39 is 1.7e-39
        # across, and Newton's polish leaves a point within 1e-8 of that.
        self.small = contact_size(self.a, self.b) or min(size_a, size_b)
        self.large = max(size_a, size_b)
        self.coords = max(float(np.max(np.abs(origin))), float(np.max(np.abs(offset)))) \
            + 2.0 * self.large
        self.rounding = ROUNDING * self.coords
        self.touch = SIZE_TOLERANCE * self.large + self.rounding

    def _place(self, rng, shape_a, shape_b, origin, placement, nudges):
        """A posed at ``origin``, B posed and placed by ``placement`` (a nearly touching B moved
        from touching by one of ``nudges`` along the contact direction); B's offset."""
        size_a, size_b = self.size_a, self.size_b
        self.a = Transformed(shape_a, rigid(self._linear(rng), origin))
        b0 = Transformed(shape_b, rigid(self._linear(rng)))
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        if placement == "random":
            offset = origin + rng.uniform(-1.5, 1.5, 3) * (size_a + size_b)
        elif placement == "concentric":
            offset = origin
        else:
            # B's support point along -d on A's along d: support planes meeting, shapes touching.
            offset = self.a.support(d) - b0.support(-d)
            if placement == "nearly touching":
                offset = offset + d * rng.choice(nudges)
        self.b = Transformed(b0, rigid(translation=offset))
        self.d = d
        return offset

    @staticmethod
    def _linear(rng):
        """A rotation, one time in four stretched by up to 2 along random axes (not a
        similarity: a margin becomes part of the shape then)."""
        rotation = random_rotation(rng)
        if rng.integers(4):
            return rotation
        return rotation @ np.diag(rng.uniform(0.5, 1.0, 3)) @ random_rotation(rng)

    def point_tolerance(self):
        return POINT_TOLERANCE * self.small + self.rounding

    def ray_tolerance(self):
        """How far a ray's hit on A may lie off it: the point tolerance of A's own size."""
        return POINT_TOLERANCE * contact_size(self.a, self.a) + self.rounding

    def describe(self):
        return f"A {self.a!r}\nB {self.b!r}"


def separation(a, b):
    """A certified lower bound on the distance of a and b (0 if they touch or overlap): GJK's
    best v·w/|v|, which no precision problem of GJK's can make too large."""
    run = gjk.run(validation.shape("a", a).support_xyz, validation.shape("b", b).support_xyz,
                  None, gjk.DISTANCE)
    return 0.0 if run.intersecting else max(run.lower_bound, 0.0)


def off_shape(shape, point):
    """How far ``point`` lies outside ``shape`` at least (0 inside)."""
    return separation(shape, translated(Point(), point))


def assert_finite(*values):
    for v in values:
        assert np.all(np.isfinite(v)), f"non-finite {v}"


def assert_unit(n):
    assert abs(float(np.linalg.norm(n)) - 1.0) <= 1e-12, f"normal {n} is not unit"


def assert_on(case, shape, point, what, tolerance=None):
    gap = off_shape(shape, point)
    if tolerance is None:
        tolerance = case.point_tolerance()
    assert gap <= tolerance, f"{what} is {gap:.3g} off its shape"


def overlap(a, b):
    """How deeply a and b overlap (0 if apart) as EPA and MPR measure it: the least of their
    depths, both boundary points of A − B when verified."""
    depths = [c.depth for c in (penetration(a, b, "epa"), penetration(a, b, "mpr"))
              if c is not None]
    return min(depths) if len(depths) == 2 else 0.0


def reach(a, b, u):
    """How far A − B reaches beyond the origin along unit u: h(u) = max a·u − min b·u, from one
    support call on each shape. Whenever the shapes overlap, their depth is at most this (the
    depth is the least h over all directions)."""
    u = np.asarray(u, dtype=float)
    a, b = validation.shape("a", a), validation.shape("b", b)
    return float(np.dot(a.support(u), u) - np.dot(b.support(-u), u))


def overlap_at_most(a, b, normals=(), target=None):
    """An upper bound on how deeply a and b overlap (0 if apart): the depth of EPA or MPR where
    CONVERGED or TOUCHING, else how far A − B reaches along their normals and along ``normals``
    (each such reach bounds the depth from above whatever the status of the answer it came from,
    so a measurement that failed cannot fail the check it serves). Above ``target``, the
    distance to the boundary along the first of ``normals`` bounds it too (``exit_at_most``,
    then ``exit_in_plane``), and ``target`` itself where a is apart from b once moved by it
    along that normal (``_moved_apart``: a segment beside a shape 1e6 times smaller)."""
    contacts = (penetration(a, b, "epa"), penetration(a, b, "mpr"))
    if any(c is None for c in contacts):
        return 0.0
    bounds = [c.depth for c in contacts if c.status in (Status.CONVERGED, Status.TOUCHING)]
    # (Unit directions only: a zero normal would "reach" nowhere and bound nothing.)
    starts = [u / np.linalg.norm(u) for u in map(np.asarray, list(normals)
                                                 + [c.normal for c in contacts])
              if np.all(np.isfinite(u)) and np.any(u)]
    for u in starts:
        bounds.append(max(reach(a, b, u), 0.0))
    if not bounds:
        return min(c.depth for c in contacts)      # nothing better: the answers as they are
    if target is not None and normals and starts and min(bounds) > target:
        bound, u = exit_at_most(a, b, starts[0], starts)
        bounds.append(bound)
        if min(bounds) > target:
            bounds.append(exit_in_plane(a, b, starts[0], u))
        if min(bounds) > target and _moved_apart(a, b, -target * starts[0]):
            bounds.append(target)
    return min(bounds)


def segment_ends(shape):
    """The two ends of ``shape`` if it is a segment (a ``Segment`` or a hull of collinear
    points, posed), else None."""
    inner = validation.shape("shape", shape)
    while isinstance(inner, Transformed):
        inner = inner.shape
    if not (isinstance(inner, Segment) or (isinstance(inner, Hull) and inner.dim == 1)):
        return None
    shape = validation.shape("shape", shape)
    for d in np.eye(3):
        p, q = shape.support(d), shape.support(-d)
        if np.any(p != q):
            return p, q
    return None


def _moved_apart(a, b, offset):
    """Whether a moved by ``offset`` is certainly apart from b, when one of the two is a
    segment: a plane that the whole segment lies beyond and the other shape short of, found
    from the segment's point nearest the other shape (a golden-section search along it, each
    step a point-to-shape distance, which is well conditioned where GJK on a needle of A − B
    1e6 times longer than wide stalls near touching). The plane's test is two support values:
    a certificate, whatever the search's own precision. False when neither is a segment or no
    plane is found."""
    for seg, other, shift in ((a, b, offset), (b, a, -offset)):
        ends = segment_ends(seg)
        if ends is None:
            continue
        p, q = ends[0] + shift, ends[1] + shift

        def gap(lam):
            return distance(other, translated(Point(), p + lam * (q - p))).distance

        lam, _ = golden_least(gap, 0.0, 1.0)
        nearest = distance(other, translated(Point(), p + lam * (q - p)))
        u = nearest.point_b - nearest.point_a          # from the other shape to the segment
        if not nearest.distance > 0.0 or not np.any(u):
            return False
        # The plane along u, and (for a nearest point inside the segment, where the two are
        # the same but for rounding) along u made square to the segment, which a long segment
        # needs: tilted by 1e-11 it would reach 1e-11 of its length nearer at one end.
        along = (q - p) / np.linalg.norm(q - p)
        other = validation.shape("other", other)

        def margin(v):
            return min(float(p @ v), float(q @ v)) - float(other.support(v) @ v)

        if margin(u / np.linalg.norm(u)) > 0.0:
            return True
        # Else the best plane square to the segment: over the half circle of such directions
        # about u's square part, the margin is unimodal (a point against a convex shape, both
        # projected along the segment); golden-section search for its largest.
        t1 = u - (u @ along) * along
        if not np.any(t1):
            return False
        t1 /= np.linalg.norm(t1)
        t2 = np.cross(along, t1)

        def square(theta):
            return margin(math.cos(theta) * t1 + math.sin(theta) * t2)

        return -golden_least(lambda theta: -square(theta), -math.pi / 2.0, math.pi / 2.0)[1] > 0.0
    return False


def golden_least(f, lo, hi, steps=80):
    """(x, f(x)) at the least of a unimodal ``f`` on [lo, hi], by golden-section search."""
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = hi - golden * (hi - lo), lo + golden * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(steps):
        if f1 < f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - golden * (hi - lo)
            f1 = f(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + golden * (hi - lo)
            f2 = f(x2)
    return (x1, f1) if f1 < f2 else (x2, f2)


# Directions ``exit_at_most`` tries before giving up (each one support call on each shape).
EXIT_SEARCH_CALLS = 2000


def exit_at_most(a, b, r, starts):
    """An upper bound on where the ray t·r from the origin leaves A − B (0 if the origin is
    outside), and the direction u that gives it: min h(u) / (u·r) over the directions u
    tried, each a supporting plane the ray meets. A compass search from ``starts`` over the
    unit sphere: the step doubles along a direction that improved and shrinks fourfold when
    none does. The depth of a and b is no more than this; unlike the reach along one normal, it
    converges where A − B is folded (a thin flat shape's rim), whose least reach lies in a
    kinked valley a compass search creeps along (but not where no compass direction falls in
    the valley: ``exit_in_plane``)."""
    r = np.asarray(r, dtype=float) / np.linalg.norm(r)

    def along(u):
        ru = float(u @ r)
        return reach(a, b, u) / ru if ru > 0.0 else math.inf

    best, u = min((along(s), tuple(s)) for s in starts)      # (unit: ``overlap_at_most``)
    u = np.asarray(u)
    step, calls, first = 1e-2, len(starts), 0
    while step > 1e-15 and calls < EXIT_SEARCH_CALLS and best > 0.0:
        t1, t2 = _tangents(u)
        for k in range(16):
            angle = (first + k) % 16 * (np.pi / 8)
            v = u + step * (math.cos(angle) * t1 + math.sin(angle) * t2)
            v /= np.linalg.norm(v)
            value = along(v)
            calls += 1
            if value < best:
                # Down a valley: the same way first next time, with a longer step.
                best, u, first, step = value, v, (first + k) % 16, 2.0 * step
                break
        else:
            step *= 0.25
    return max(best, 0.0), u


# ``exit_in_plane``: how far from r (tangent units, about radians) its search looks, and the
# golden-section steps of each of its two nested searches (61 support values each inner search).
EXIT_PLANE_HALF = 1e-2
EXIT_PLANE_STEPS = 60


def _tangents(u):
    """Two unit vectors square to unit u and to each other."""
    t1 = np.cross(u, (1.0, 0.0, 0.0) if abs(u[0]) < 0.6 else (0.0, 1.0, 0.0))
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(u, t1)


def exit_in_plane(a, b, r, centre):
    """An upper bound on where the ray t·r from the origin leaves A − B: the least support value
    h(u) over the u with u·r = 1 within EXIT_PLANE_HALF of ``centre`` (``exit_at_most``'s
    direction; r itself if that does not face along r). Every such h(u) bounds the exit
    (t·r ∈ C gives t = (t·r)·u <= h(u)), and h is convex on that plane (a support function), so
    a golden-section search in each of two coordinates, one nested in the other, finds its
    least even where the compass search stalls: in the kinked valley of a fold of A − B (a
    sphere touching a cylinder's side), where the directions that improve lie in a sliver
    around the valley that none of the compass's sixteen falls in (~3,700 support values)."""
    r = np.asarray(r, dtype=float) / np.linalg.norm(r)
    t1, t2 = _tangents(r)
    centre = np.asarray(centre, dtype=float)
    centre = centre / float(centre @ r) if float(centre @ r) > 0.0 else r   # (on u·r = 1)
    cx, cy, half = float(centre @ t1), float(centre @ t2), EXIT_PLANE_HALF

    def h(x, y):
        u = r + x * t1 + y * t2
        length = float(np.linalg.norm(u))
        return reach(a, b, u / length) * length

    def least_across(x):
        return golden_least(lambda y: h(x, y), cy - half, cy + half, EXIT_PLANE_STEPS)[1]

    _, best = golden_least(least_across, cx - half, cx + half, EXIT_PLANE_STEPS)
    return max(best, 0.0)


def assert_touching(case, a, b, what, slack=0.0, normals=()):
    gap = separation(a, b)
    assert gap <= case.touch + slack, f"{what}: apart by {gap:.3g}"
    if gap == 0.0:
        depth = overlap_at_most(a, b, normals, target=case.touch + slack)
        assert depth <= case.touch + slack, f"{what}: overlapping by {depth:.3g}"


# --- the checks, one per query -------------------------------------------------------------------

def check_distance(case):
    a, b = case.a, case.b
    r = distance(a, b)
    assert_finite(r.distance, r.point_a, r.point_b)
    assert r.distance >= 0.0
    assert r.intersecting == (r.distance == 0.0)
    assert float(np.linalg.norm(r.point_a - r.point_b)) == \
        pytest.approx(r.distance, abs=case.rounding + 1e-12 * r.distance)
    if r.intersecting:
        # A common point: on the smaller shape, within the touching tolerance of the larger.
        small, large = (a, b) if case.size_a <= case.size_b else (b, a)
        assert_on(case, small, r.point_a, "the common point")
        assert off_shape(large, r.point_a) <= case.touch
    else:
        assert_on(case, a, r.point_a, "point_a")
        assert_on(case, b, r.point_b, "point_b")
    assert distance(b, a).distance == pytest.approx(r.distance, abs=case.touch)
    if r.distance > case.touch and r.status is Status.CONVERGED:
        # The closest points are closest: the gap between the support planes along their
        # direction (a lower bound on the distance) meets it. (Not when they touch: then the
        # direction is rounding noise. Nearly touching, it is off by the points' rounding over
        # the distance, and a support plane tilted by that moves by as much times the size.
        # A stalled GJK says so: on a needle 1e-6 as thick as long, v is only ~1e-5 accurate.)
        n = (r.point_b - r.point_a) / r.distance
        lower = -reach(a, b, n)
        slack = case.touch + case.large * case.rounding / r.distance
        assert lower == pytest.approx(r.distance, abs=slack)
    # What the other queries are checked against: the distance if GJK converged, else the
    # certified lower bound (a stall says the distance is uncertain, not that it is wrong).
    gap = r.distance if r.status is Status.CONVERGED or r.intersecting else separation(a, b)
    return r, gap


def check_contact(case, c, method):
    a, b = case.a, case.b
    assert_finite(c.depth, c.normal, c.point_a, c.point_b)
    assert c.depth >= 0.0
    assert_unit(c.normal)
    np.testing.assert_allclose(c.point_a - c.point_b, c.depth * c.normal, rtol=0,
                               atol=case.rounding + 1e-12 * c.depth)
    if c.status is Status.TOUCHING:
        # Touching within the tolerance (of the larger shape): one point between them.
        assert c.depth == 0.0
        assert off_shape(a, c.point_a) <= case.touch and off_shape(b, c.point_b) <= case.touch
        return
    if c.status is not Status.CONVERGED:
        return          # the status says the answer is not exact; the basics above still hold
    assert_on(case, a, c.point_a, f"{method} point_a")
    assert_on(case, b, c.point_b, f"{method} point_b")
    assert_touching(case, translated(a, -c.depth * c.normal), b, f"{method} translated",
                    normals=[c.normal])


def check_penetration(case, r, gap):
    contacts = {m: penetration(case.a, case.b, m) for m in ("epa", "mpr", "hybrid")}
    for method, c in contacts.items():
        if c is None:
            # Apart (or touching within rounding): distance agrees.
            if gap == 0.0:
                assert overlap_at_most(case.a, case.b) <= case.touch
            continue
        assert gap <= case.touch, f"{method}: overlap but apart"
        check_contact(case, c, method)
    epa_c, mpr_c = contacts["epa"], contacts["mpr"]
    if epa_c is not None and mpr_c is not None and epa_c.status is Status.CONVERGED:
        # EPA's depth is the least (certified to 1e-3 relative on curved shapes, polished
        # beyond): no deeper than MPR's boundary point, and the same both ways round.
        slack = case.touch + 1e-3 * epa_c.depth
        assert epa_c.depth <= mpr_c.depth + slack, "EPA deeper than MPR's estimate"
        # (Not the normal: symmetric pairs have several least directions.)
        other = penetration(case.b, case.a)
        if other is not None and other.status is Status.CONVERGED:
            assert other.depth == pytest.approx(epa_c.depth, abs=slack), "EPA not symmetric"
    s = signed_distance(case.a, case.b)
    assert math.isfinite(s)
    if gap > case.touch:
        assert s == pytest.approx(r.distance, abs=case.touch + r.distance - gap)
    elif epa_c is not None and epa_c.status is Status.CONVERGED:
        assert s == pytest.approx(-epa_c.depth, abs=case.touch + 1e-3 * epa_c.depth)
    return epa_c


def check_intersect(case, r, gap):
    for method in ("gjk", "mpr"):
        hit = intersect(case.a, case.b, method)
        if gap > case.touch:
            assert not hit, f"intersect {method}: apart by {gap:.3g} but intersecting"
        elif r.intersecting and overlap(case.a, case.b) > case.touch:
            assert hit, f"intersect {method}: overlapping but not intersecting"


def check_manifold(case, contact):
    m = contact_manifold(case.a, case.b)
    if contact is None:
        assert m is None
        return
    assert m is not None
    assert_finite(m.normal, m.points, m.depths)
    assert_unit(m.normal)
    assert len(m.points) >= 1 and np.all(m.depths >= 0.0)
    if contact.status is not Status.CONVERGED:
        return
    # Each corner lies midway between the surfaces: half its depth along ±n reaches each shape.
    for p, depth in zip(m.points, m.depths):
        assert_on(case, case.a, p + 0.5 * depth * m.normal, "manifold point on A")
        assert_on(case, case.b, p - 0.5 * depth * m.normal, "manifold point on B")


def check_ray(case):
    a, rng = case.a, case.rng
    centre = np.asarray(a.center_xyz())
    origin = centre + rng.normal(size=3) * case.size_a * 3.0
    target = centre + rng.normal(size=3) * case.size_a * 0.5
    direction = (target - origin) * 10.0 ** rng.integers(-3, 4)
    max_t = float(rng.choice([math.inf, 1.0 / float(np.max(np.abs(direction))) * case.size_a]))
    hit = ray_cast(a, origin, direction, max_t=max_t)
    if hit is None:
        # A miss: the segment of the ray up to max_t (or past the shape's bounding sphere about
        # its centre) does not meet it.
        past = (float(np.linalg.norm(origin - centre)) + 3.0 * case.size_a) \
            / float(np.linalg.norm(direction))
        end = min(max_t, past)
        segment = ConvexHullOf(translated(Point(), origin),
                               translated(Point(), origin + end * direction))
        if separation(a, segment) == 0.0:
            assert overlap_at_most(a, segment) <= case.touch, "the ray missed the shape it crosses"
        return
    assert_finite(hit.t, hit.point, hit.normal)
    assert 0.0 <= hit.t <= max_t
    np.testing.assert_allclose(hit.point, origin + hit.t * direction, rtol=0,
                               atol=case.rounding)
    # (A ray meets A alone: its hit is exact to A's own size, which B's, up to 1e6 times
    # smaller, is no measure of.)
    assert_on(case, a, hit.point, "ray hit", case.ray_tolerance())
    if hit.t == 0.0:
        assert not np.any(hit.normal)
        assert off_shape(a, origin) <= case.point_tolerance()
        return
    assert_unit(hit.normal)
    assert float(hit.normal @ direction) <= 0.0, "the ray leaves through its hit"
    if hit.status is Status.CONVERGED:
        # The normal's plane through the hit supports the shape (convexity).
        assert float(a.support(hit.normal) @ hit.normal - hit.point @ hit.normal) <= \
            SIZE_TOLERANCE * case.size_a + case.rounding


def check_sweep(case):
    a, b, rng = case.a, case.b, case.rng
    motion = (np.asarray(b.center_xyz()) - np.asarray(a.center_xyz()) + rng.normal(size=3)
              * (case.size_a + case.size_b)) * rng.uniform(0.2, 2.0)
    if not np.any(motion):
        return
    hit = sweep(a, b, motion)
    swept = MinkowskiSum(a, ConvexHullOf(Point(), translated(Point(), motion)))
    slack = SIZE_TOLERANCE * float(np.linalg.norm(motion))
    if hit is None:
        if separation(swept, b) == 0.0:
            assert overlap_at_most(swept, b) <= case.touch + slack, "the sweep missed a contact"
        return
    assert_finite(hit.t, hit.point, hit.normal)
    assert 0.0 <= hit.t <= 1.0
    if hit.t == 0.0:
        assert not np.any(hit.normal)
        return
    assert_unit(hit.normal)
    moved = translated(a, hit.t * motion)
    assert_touching(case, moved, b, "sweep at t", slack, normals=[hit.normal, -hit.normal])
    # The contact point is between the shapes at t, which touch within the tolerance of the
    # larger: within that of both.
    assert off_shape(moved, hit.point) <= case.touch + slack, "sweep point off A"
    assert off_shape(b, hit.point) <= case.touch + slack, "sweep point off B"


def check_sweep_rotating(case):
    a, b, rng = case.a, case.b, case.rng
    start = rigid()
    turn = random_rotation(rng)
    end = rigid(turn, (np.asarray(b.center_xyz()) - np.asarray(a.center_xyz())) * 0.5)
    hit = sweep_rotating(a, start, end, b)
    if hit is None:
        return
    assert_finite(hit.t, hit.point, hit.normal)
    assert 0.0 <= hit.t <= 1.0
    if hit.t == 0.0:
        assert not np.any(hit.normal)
        return
    assert_unit(hit.normal)
    if hit.status is Status.CONVERGED:
        # A in its pose at t touches B: conservative advancement stops within its tolerance of
        # the shapes' size, their radii about their pose origins (here the world origin, up to
        # 1e3 sizes away).
        motion_a = _RigidMotion("a", start, end, validation.shape("a", a))
        motion_b = _RigidMotion("b", None, None, validation.shape("b", b))
        slack = ADVANCE_TOLERANCE * (motion_a.radius + motion_b.radius)
        assert_touching(case, motion_a.at(hit.t), b, "rotating sweep at t", slack,
                        normals=[hit.normal, -hit.normal])


# Examples these checks found, each failing before its fix (the first ten on the code before
# this module existed, the next two on this branch's own intermediate GJK, five more probing
# issue 10's extremes, the rest issue 22's), replayed:
FOUND = [
    # GJK stalled on a slab 1e-6 as thick as wide (a disc through a small cone): apart by 5e5.
    ("cone", "flat cylinder", 6, 6, "concentric", 3331021768),
    # A sliver simplex (a far vertex with weight 1e-7) cancelled against the answer: a sweep
    # of two polytopes ended NO_PROGRESS 1e-7 of their size apart.
    ("user's class", "box", 0, 3, "nearly touching", 3552848710),
    # Touching within tolerance, the depth clamped to 0 but the points kept apart.
    ("flat cylinder", "round box", 0, 3, "touching", 2217190535),
    # The normal normalised by |v| instead of the points' own distance: not unit (1 + 8e-9).
    ("capsule", "cone", 0, 6, "nearly touching", 8834073),
    # Cores touching at the rounding of their coordinates: v was noise, taken as the normal.
    ("flat hull", "sphere", -13, 6, "concentric", 2772900504),
    # The polish's residual split evenly moved a point shape's contact point off the point.
    ("point", "ellipsoid", 0, 3, "concentric", 3332246458),
    # Manifold clip tolerances relative to coordinates (1e-9 of 6e15) and to the larger
    # feature let corners off the smaller shape.
    ("hull", "round box", 13, 0, "concentric", 3482472613),
    ("user's class", "cone", 0, 3, "concentric", 939455401),
    # A sweep's witness replaced by a rim's support point along an unpolished normal: 2e-6 off
    # a round box of 1e-6.
    ("flat cylinder", "round box", 0, -6, "nearly touching", 368690673),
    # distance's common point of overlapping shapes taken on the larger shape, off the smaller.
    ("collinear hull", "flat hull", 0, -6, "concentric", 1840391397),
    # GJK stalled 6e-11 from the origin on a needle (a segment around a cone 1e-6 across)
    # and reported the shapes apart, though they overlap by 3e-7 (signed_distance said so).
    ("collinear hull", "cone", 0, -6, "concentric", 1706867267),
    # A disc 2e7 from the origin: GJK's tetrahedron in its plane had a noise height, passed
    # the flatness test, and Cramer's weights put the "common" point 0.03 off the point inside.
    ("point", "flat cylinder", 6, -3, "concentric", 2978787551),
    # Needles of A − B, 1e6 times longer than wide: the float weights of a tetrahedron holding
    # the origin failed their residual check (or it passed the flatness test, seen from its
    # far end), and GJK stalled (NO_PROGRESS) ~1e-8 of the length from the origin. Penetration
    # took margins − |v| of the stalled cores as an exact depth (CONVERGED, 4.6e-4 or, at
    # 1e12, 3.2e4 too shallow); distance said a segment through a disc was apart; a rotating
    # sweep advanced on the stall past the contact and said CONVERGED.
    ("capsule", "capsule", 3, -6, "concentric", 18501),
    ("capsule", "rectangle", 12, -6, "concentric", 3631050818),
    ("flat cylinder", "segment", 12, 6, "concentric", 3675845870),
    ("hull", "collinear hull", 12, 6, "concentric", 100125505),
    # A slab (a disc 1e6 times wider than the hull beside it): GJK stalled (1.2e5 after 5.3e3
    # the step before), conservative advancement stepped past the contact, and the rotating
    # sweep said CONVERGED (it now gives the stalled distance's status).
    ("duplicate-point hull", "disc", 6, 6, "nearly touching", 3303905065),
    # Issue 22's replays. Sliver triangles of A − B (edges 1e6 times longer than the third)
    # solved by Cramer's rule from a vertex: v tilted, GJK stalled or EPA started off.
    ("duplicate-point hull", "capsule", 13, 6, "concentric", 2963867269),
    ("duplicate-point hull", "collinear hull", 12, 3, "concentric", 50555822),
    ("segment", "ellipsoid", 6, -6, "concentric", 4013574205),
    ("ellipsoid", "collinear hull", -6, 6, "concentric", 4229171177),
    # A point in a flat disc: EPA's start tried planes of triangles 1e-5 of C's size, tilted
    # by their rounding; the disc's own plane (its widest triangle) shows them touching.
    ("flat cylinder", "point", -6, -1, "touching", 1037381884),
    # Touching within the tolerance of the larger shape: the common point went midway, off the
    # smaller one by half that tolerance.
    ("round box", "sphere", -13, -6, "nearly touching", 2075906240),
    ("sphere", "sphere", -39, 6, "nearly touching", 0),
    ("sphere", "sphere", -39, -6, "nearly touching", 0),
    ("sphere", "sphere", -39, 6, "nearly touching", 63),
    ("sphere", "sphere", -39, -6, "nearly touching", 63),
    # A touching simplex 1e-3 of C's size from the origin: EPA's tolerances were relative to
    # it, not to C (now given GJK's size of C), and could not grow it into a tetrahedron
    # holding the origin (now MPR's does).
    ("flat cylinder", "flat cylinder", -30, 6, "nearly touching", 217),
    ("flat cylinder", "flat cylinder", 13, 6, "nearly touching", 217),
    # A residual split evenly put the small capsule's point 1e-5 of its size off it.
    ("capsule", "capsule", -39, 6, "concentric", 42011),
    # Issue 22, a longer random run. GJK stalled 2.8e-23 from touching on shapes 1e-13 across
    # and MPR's tetrahedron gave the common point, 1.1e-20 off the cylinder (1e-7 of the size)
    # by its weights' rounding; the stalled points, 2.8e-23 apart, are kept now.
    ("flat hull", "cylinder", -13, 0, "touching", 3540),
    # GJK stalled on a cylinder 1e6 times larger than the shape it touches; MPR's tetrahedron
    # gave the common point on the larger shape, 7e-7 of the smaller one's size off it.
    ("cylinder", "user's class", -39, -6, "touching", 1504),
    # A segment through a shape 1e6 times smaller at the bottom of the range: EPA could not
    # start on the touching translated needle (FAILED) and only a plane the moved segment lies
    # beyond (``_moved_apart``) shows MPR's depth right.
    ("segment", "user's class", -39, -6, "concentric", 57366),
    # MPR's pass 2 ended on a portal with two vertices a hair apart (a sphere 1e3 times smaller
    # under a shear, nearly touching a box swept along a segment): its normal, from the far
    # vertex, was noise, and the portal's point nearest the origin, inside C, came out
    # CONVERGED, 5e-7 short of the boundary. Its normal comes from its two shorter edges now
    # (``mpr._portal_dir``).
    ("minkowski sum", "sphere", 0, -3, "nearly touching", 4294967294),
    # A user's shape of size parameter 1e-39 (1.7e-39 across) nearly touching a cone 1e3 times
    # larger: Newton's polish left the contact point 1.3e-47 off it, within its tolerance of
    # 1e-8 of the shape's extent, past 1e-8 of the size parameter the check used to take
    # (``Case.small`` is the engine's measure now, ``contact_size``; 28 Nov 2026).
    ("cone", "user's class", -39, -3, "nearly touching", 1917348193),
]


@SETTINGS
@given(st.sampled_from(KIND_NAMES), st.sampled_from(KIND_NAMES), SCALES, RATIOS,
       st.sampled_from(PLACEMENTS), st.integers(0, 2**32 - 1))
def test_every_query_keeps_its_contract(kind_a, kind_b, scale, ratio, placement, seed):
    case = Case(kind_a, kind_b, scale, ratio, placement, seed)
    r, gap = check_distance(case)
    contact = check_penetration(case, r, gap)
    check_intersect(case, r, gap)
    check_manifold(case, contact)
    check_ray(case)
    check_sweep(case)
    check_sweep_rotating(case)


@pytest.mark.parametrize("kind_a, kind_b, scale, ratio, placement, seed", FOUND)
def test_examples_found_keep_the_contract(kind_a, kind_b, scale, ratio, placement, seed):
    test_every_query_keeps_its_contract.hypothesis.inner_test(kind_a, kind_b, scale, ratio,
                                                              placement, seed)


# --- outside the supported range ----------------------------------------------------------------

@pytest.mark.parametrize("exponent", [41, 100, 300, -41, -100, -300])
@pytest.mark.parametrize("kind", KIND_NAMES)
def test_shapes_outside_the_range_are_a_value_error_naming_the_argument(kind, exponent):
    if kind == "point":         # a point has no size: placed far away, or scaled to nothing
        with pytest.raises(ValueError, match="supported range"):
            if exponent > 0:
                posed(Point(), translation=(10.0 ** exponent, 0, 0))
            else:
                posed(Point(), scale=10.0 ** exponent)
        return
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="supported range") as error:
        shape = dict(KINDS)[kind](rng, 10.0 ** exponent)
        distance(shape, Box((1, 1, 1)))
    assert str(validation.MAX_COORDINATE if exponent > 0 else validation.MIN_SIZE).replace(
        "+", "") in str(error.value).replace("+", "")


@pytest.mark.parametrize("make, argument", [
    (lambda: posed(Box((1, 1, 1)), translation=(1e300, 0, 0)), "translation"),
    (lambda: posed(Box((1, 1, 1)), scale=1e-300), "matrix"),
    (lambda: Transformed(Sphere(1e30), np.diag([1e20, 1e20, 1e20, 1])), "matrix"),
    (lambda: ray_cast(Box((1, 1, 1)), (0, 0, 1e300), (0, 0, -1)), "origin"),
    (lambda: ray_cast(Box((1, 1, 1)), (0, 0, 5), (0, 0, -1e300)), "direction"),
    (lambda: sweep(Box((1, 1, 1)), Box((1, 1, 1)), (1e300, 0, 0)), "translation_a"),
    # A hull is built at any scale (``convex_hull`` is scale-free); queries refuse it.
    (lambda: distance(Hull([[0, 0, 0], [1e300, 0, 0], [0, 1, 0]]), Box((1, 1, 1))), "a"),
    (lambda: Transformed(Hull([[0, 0, 0], [1e-60, 0, 0], [0, 1e-60, 0]]), np.eye(4)), "shape"),
])
def test_out_of_range_arguments_name_themselves_and_the_range(make, argument):
    with pytest.raises(ValueError, match=rf"{argument}.*supported range"):
        make()
