"""The batched engine (core.batch) and the posed-shape table under it (core.placement): the same
answers as the single queries, pair by pair, on every shape kind, degenerate and touching pairs
included; what it hands back to the single queries; and the level check built on it."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convex_tools.core import (Box, Capsule, Compound, Cone, ConvexHullOf, Cylinder, Disc,
                               Ellipsoid, Hull, MinkowskiSum, Point, Rectangle, RoundBox,
                               Segment, Sphere, Transformed, distance, query_all, translated)
from convex_tools.core import batch, batch_epa, penetration
from convex_tools.core.level import LevelCheck, check_shapes, run_to_end
from convex_tools.core.placement import (CONE, HULL, OTHER, POLY, ROUND, LazyShapes, Placed,
                                         PoseTable, world_aabbs)
from geometry_helpers import random_rotation
from test_contracts import off_shape

# Distances agree to this fraction of the larger shape's size (or of the distance, if larger).
AGREEMENT = 1e-9


def kinds(rng):
    flat = rng.normal(size=(12, 3)) * (1.0, 1.0, 0.0)       # a flat hull
    line = np.outer(rng.normal(size=6), (0.3, -0.2, 0.9))   # a segment given as a hull
    return [Point(), Segment(0.7), Box((0.3, 0.5, 0.9)), Rectangle((0.4, 0.2)), Disc(0.6),
            Cylinder(0.5, 0.8), Ellipsoid((0.3, 0.6, 0.9)), Cone(0.5, 0.7), Sphere(0.4),
            Capsule(0.3, 0.6), RoundBox((0.2, 0.3, 0.4), 0.1), Hull(rng.normal(size=(50, 3))),
            Hull(flat), Hull(line)]


def pose(rng, spread=4.0, stretch=False):
    m = np.eye(4)
    linear = random_rotation(rng) * rng.choice((1.0, 0.5, 2.0))
    if stretch:
        linear = linear @ np.diag(rng.uniform(0.5, 2.0, 3))
    m[:3, :3] = linear
    m[:3, 3] = rng.uniform(-spread, spread, 3)
    return m


def posed_set(rng, n, spread=4.0):
    shapes = kinds(rng)
    return [Transformed(shapes[rng.integers(len(shapes))], pose(rng, spread, rng.random() < 0.3))
            for _ in range(n)]


def size(shape):
    return shape.extent()[0]


def assert_same_as_single(shapes, pairs, result):
    """Every pair the batch answered agrees with ``distance``; its points lie on the shapes."""
    answered = 0
    for k, (i, j) in enumerate(np.asarray(pairs).tolist()):
        if result.code[k] == batch.FALLBACK:
            continue
        answered += 1
        a, b = shapes[i], shapes[j]
        single = distance(a, b)
        scale = max(size(a), size(b), single.distance)
        assert bool(result.intersecting[k]) == single.intersecting, (k, a, b)
        assert abs(result.distance[k] - single.distance) <= AGREEMENT * scale, (k, a, b)
        for point, shape in ((result.point_a[k], a), (result.point_b[k], b)):
            assert off_shape(shape, point) <= 1e-9 * max(size(a), size(b)), (k, shape)
        if not single.intersecting:
            gap = np.linalg.norm(result.point_b[k] - result.point_a[k])
            assert gap == pytest.approx(result.distance[k], rel=1e-12, abs=1e-15)
    return answered


# --- the posed-shape table -------------------------------------------------------------------

def test_table_supports_and_margins_match_the_shapes(rng):
    shapes = [Transformed(k, pose(rng, stretch=s)) for k in kinds(rng) for s in (False, True)]
    shapes += kinds(rng)                     # bare shapes: the identity
    table = PoseTable.from_shapes(shapes)
    assert (table.family != OTHER).all()
    n = len(shapes)
    for trial in range(40):
        d = rng.normal(size=(3, n)) * 10.0 ** rng.uniform(-30, 30)
        s = table.support(np.arange(n), d)
        for k, shape in enumerate(shapes):
            assert table.margin[k] == pytest.approx(shape.margin, rel=1e-12)
            # A support point of the core: the same height along d as the core's own.
            ref = np.array(shape.core.support_xyz(*d[:, k]))
            u = d[:, k] / np.linalg.norm(d[:, k])
            assert u @ s[:, k] == pytest.approx(u @ ref, rel=1e-12, abs=1e-12)


def test_families_follow_the_margin_rule():
    stretch = np.diag([1.0, 2.0, 3.0, 1.0])
    table = PoseTable.from_shapes([Sphere(1.0), Transformed(Sphere(1.0), stretch),
                                   Transformed(Capsule(0.5, 1.0), np.diag([2.0, 2, 2, 1])),
                                   Cone(1.0, 1.0), Hull(np.eye(3)), Cylinder(1.0, 1.0),
                                   MinkowskiSum(Box((1, 1, 1)), Sphere(1.0)),
                                   Compound([Box((1, 1, 1))])])
    assert table.family.tolist() == [POLY, ROUND, POLY, CONE, HULL, ROUND, OTHER, OTHER]
    # A similarity scales the margin; a stretch keeps the whole sphere (no margin).
    assert table.margin[:3].tolist() == [1.0, 0.0, 1.0 * 1.0]
    assert table.margin[2] == pytest.approx(1.0)        # Capsule radius 0.5 scaled by 2


def test_world_aabbs_equal_the_shapes_own_boxes(rng):
    shapes = posed_set(rng, 200) + [Compound([Box((1, 1, 1)), translated(Sphere(1), (3, 0, 0))])]
    placed = [Placed(s.shape, s.matrix) if isinstance(s, Transformed) else s for s in shapes]
    lower, upper = world_aabbs(placed)
    for k, shape in enumerate(shapes):
        lo, hi = shape.aabb()
        np.testing.assert_allclose(lower[k], lo, atol=1e-12)
        np.testing.assert_allclose(upper[k], hi, atol=1e-12)


def test_lazy_shapes_make_each_placed_shape_once():
    lazy = LazyShapes([Placed(Box((1, 1, 1)), np.eye(4)), Sphere(1.0)])
    first = lazy[0]
    assert isinstance(first, Transformed) and lazy[0] is first
    assert isinstance(lazy.raw(1), Sphere) and len(lazy) == 2


# --- the batched GJK -------------------------------------------------------------------------

def test_batch_matches_single_on_every_kind(rng):
    shapes = posed_set(rng, 600)
    pairs = rng.integers(0, len(shapes), size=(1500, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    result = batch.run(PoseTable.from_shapes(shapes), pairs[:, 0], pairs[:, 1])
    answered = assert_same_as_single(shapes, pairs, result)
    assert answered >= 0.97 * len(pairs)       # fallbacks are rare
    assert result.intersecting.any() and (~result.intersecting).any()


def test_touching_identical_and_degenerate_pairs(rng):
    box = Box((1.0, 1.0, 1.0))
    flat = Hull(rng.normal(size=(20, 3)) * (1, 1, 0))
    shapes = [translated(box, (0, 0, 0)), translated(box, (2, 0, 0)),        # face to face
              translated(box, (2, 2, 2)),                                     # corner to corner
              translated(box, (0, 0, 0)),                                     # identical
              translated(Sphere(1.0), (0, 0, 3)), translated(Sphere(1.0), (0, 0, 5)),  # touching
              translated(Sphere(1.0), (0, 0, 3)),                             # concentric
              translated(flat, (0, 0, 1.5)), translated(flat, (0, 0, 1.5)),    # flat, coplanar
              translated(Segment(1.0), (0, 0, 0)), translated(Segment(1.0), (3, 0, 0)),
              translated(Segment(1.0), (0, 0, 0))]                            # crossing itself
    pairs = np.array([(0, 1), (0, 2), (0, 3), (4, 5), (4, 6), (7, 8), (0, 7), (9, 10),
                      (9, 11), (1, 2), (3, 4)])
    result = batch.run(PoseTable.from_shapes(shapes), pairs[:, 0], pairs[:, 1])
    assert_same_as_single(shapes, pairs, result)
    # What the batch decided itself, it decided right; a touching pair may go to the single
    # query, which then answers it.
    assert result.code[2] == batch.INTERSECTING and result.distance[2] == 0.0   # identical
    assert result.distance[7] == pytest.approx(3.0)                             # segments
    for (i, j), r in zip(pairs.tolist(), batch.distances(shapes, pairs, distance)):
        assert r.engine in ("batch", "single")
        assert r.distance == pytest.approx(distance(shapes[i], shapes[j]).distance, abs=1e-9)


def test_scale_invariance(rng):
    shapes = posed_set(rng, 100)
    pairs = rng.integers(0, 100, size=(200, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    base = batch.run(PoseTable.from_shapes(shapes), pairs[:, 0], pairs[:, 1])
    for scale in (1e-13, 1e13):
        big = [Transformed(s.shape, np.diag([scale, scale, scale, 1.0]) @ s.matrix)
               for s in shapes]
        res = batch.run(PoseTable.from_shapes(big), pairs[:, 0], pairs[:, 1])
        both = (base.code != batch.FALLBACK) & (res.code != batch.FALLBACK)
        assert both.mean() > 0.95
        np.testing.assert_allclose(res.distance[both] / scale, base.distance[both],
                                   rtol=1e-8, atol=1e-8)
        assert (res.intersecting[both] == base.intersecting[both]).all()


def test_shapes_it_cannot_batch_go_to_the_single_query():
    class Mine:                                   # a user's shape: only a support mapping
        def support_xyz(self, x, y, z):
            n = math.sqrt(x * x + y * y + z * z) or 1.0
            return (x / n + 5.0, y / n, z / n)

    shapes = [Box((1, 1, 1)), MinkowskiSum(Box((1, 1, 1)), translated(Sphere(0.5), (4, 0, 0))),
              ConvexHullOf(translated(Sphere(1), (4, 0, 0)), translated(Sphere(1), (4, 6, 0))),
              Mine()]
    pairs = np.array([(0, 1), (0, 2), (0, 3)])
    results = batch.distances(shapes, pairs, distance)
    assert [r.engine for r in results] == ["single"] * 3
    assert [r.distance for r in results] == pytest.approx([1.5, 2.0, 3.0])


def test_screen_certifies_only_true_clearances_and_overlaps(rng):
    shapes = posed_set(rng, 400, spread=3.0)
    pairs = rng.integers(0, 400, size=(1200, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    need = rng.choice((0.0, 0.05, 0.5), size=len(pairs))
    sc = batch.screen(PoseTable.from_shapes(shapes), pairs, need)
    clear, deep = sc.clear, sc.deep
    assert clear.any() and deep.any() and not (clear & deep).any()
    assert sc.measured.any() and not (sc.measured & ~deep).any()
    for k, (i, j) in enumerate(pairs.tolist()):
        single = distance(shapes[i], shapes[j])
        if clear[k]:
            assert not single.intersecting and single.distance >= need[k]
        if deep[k]:
            assert single.intersecting


def polytope_set(rng, n, spread=1.2):
    flat = Hull(rng.normal(size=(12, 3)) * (1.0, 1.0, 0.0))
    kinds = [Box((1, 1, 1)), Box((0.3, 1.2, 0.5)), Hull(rng.normal(size=(50, 3))),
             Hull(rng.normal(size=(8, 3))), Hull(rng.normal(size=(300, 3))), Sphere(0.7),
             Capsule(0.4, 0.8), RoundBox((0.5, 0.5, 0.5), 0.2), Segment(1.0), Point(),
             Rectangle((0.8, 0.5)), flat]
    return [Transformed(kinds[rng.integers(len(kinds))], pose(rng, spread))
            for _ in range(n)]


def test_batched_depths_equal_the_single_epa(rng):
    """Overlapping polytope cores (boxes, hulls, flat hulls, points, segments, and the cores of
    spheres, capsules and round boxes): the batched EPA's depth and normal are EPA's, and its
    contact satisfies the contract."""
    shapes = polytope_set(rng, 2400)
    pairs = np.arange(2400).reshape(-1, 2)
    sc = batch.screen(PoseTable.from_shapes(shapes), pairs, np.zeros(len(pairs)))
    assert sc.measured.sum() >= 0.9 * sc.deep.sum() > 200
    for k in np.flatnonzero(sc.measured).tolist():
        a, b = shapes[pairs[k, 0]], shapes[pairs[k, 1]]
        single = penetration(a, b)
        scale = max(size(a), size(b))
        assert sc.depth[k] == pytest.approx(single.depth, abs=1e-10 * scale)
        np.testing.assert_allclose(sc.normal[k], single.normal, atol=1e-9)
        assert np.linalg.norm(sc.normal[k]) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(sc.point_a[k] - sc.point_b[k], sc.depth[k] * sc.normal[k],
                                   atol=1e-12 * scale)
        for point, shape in ((sc.point_a[k], a), (sc.point_b[k], b)):
            assert off_shape(shape, point) <= 1e-9 * scale
        # Moving A back by the depth leaves the two touching.
        moved = translated(a, -sc.depth[k] * sc.normal[k])
        assert abs(distance(moved, b).distance) <= 1e-9 * scale


def _crate():
    """A crate 1 × 0.8 × 0.9 standing on its bottom face at local z = 0."""
    return Hull(np.array([(x, y, z) for x in (-0.5, 0.5) for y in (-0.4, 0.4)
                          for z in (0.0, 0.9)]))


def _standing(shape_local, x, y, yaw, bottom, scale=1.0, offset=0.0):
    """``shape_local`` turned by ``yaw`` about +Z and moved so that its bottom (at local
    z = ``bottom``) stands on the plane z = 0 at (x, y); the whole scene then scaled by
    ``scale`` and moved by ``offset`` along every axis."""
    c, s = math.cos(yaw), math.sin(yaw)
    m = np.eye(4)
    m[:3, :3] = scale * np.array(((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0)))
    m[:3, 3] = (scale * x + offset, scale * y + offset, -scale * bottom + offset)
    return Transformed(shape_local, m)


def test_props_on_one_ground_plane_are_measured_by_the_batch(rng):
    """Props standing on one floor with upright sides: GJK's simplex lies in the floor's plane
    through the origin (every level direction finds bottom corners at z = 0), so GJK ends on a
    flat simplex although the props overlap deeply. The batch lifts it into a tetrahedron and
    measures the depth by EPA, as the single query does; props that only touch side by side or
    stand apart are not called deep."""
    crate = _crate()
    rock = Hull(np.vstack([rng.normal(size=(20, 3)) * (0.5, 0.4, 0.3) + (0, 0, 0.4),
                           [(0.3, 0.2, 0.0), (-0.3, 0.1, 0.0), (0.0, -0.3, 0.0)]]))
    rock = Hull(rock.vertices[rock.vertices[:, 2] >= 0.0])
    shapes = []
    for _ in range(300):
        a = _standing(crate if rng.random() < 0.5 else rock, 0.0, 0.0,
                      rng.uniform(0, 2 * math.pi), 0.0)
        b = _standing(crate if rng.random() < 0.5 else rock, *rng.uniform(-0.6, 0.6, 2),
                      rng.uniform(0, 2 * math.pi), 0.0)
        shapes += [a, b]
    # Two crates side by side, faces touching: not deep (the origin on C's boundary).
    shapes += [_standing(crate, 0.0, 0.0, 0.0, 0.0), _standing(crate, 1.0, 0.0, 0.0, 0.0)]
    pairs = np.arange(len(shapes)).reshape(-1, 2)
    table = PoseTable.from_shapes(shapes)
    res = batch.run(table, pairs[:, 0], pairs[:, 1])
    sc = batch.screen(table, pairs, np.zeros(len(pairs)))
    assert not res.deep[-1] and not sc.measured[-1]
    contacts = [penetration(shapes[2 * k], shapes[2 * k + 1]) for k in range(len(pairs) - 1)]
    overlapping = [k for k, c in enumerate(contacts) if c is not None and c.depth > 1e-6]
    assert len(overlapping) > 200
    # Nearly every overlapping pair is measured by the batch (without the lift: two in three).
    assert sc.measured[overlapping].mean() >= 0.95
    for k in np.flatnonzero(sc.measured).tolist():
        a, b = shapes[pairs[k, 0]], shapes[pairs[k, 1]]
        single = penetration(a, b)
        scale = max(size(a), size(b))
        assert sc.depth[k] == pytest.approx(single.depth, abs=1e-10 * scale)
        for point, shape in ((sc.point_a[k], a), (sc.point_b[k], b)):
            assert off_shape(shape, point) <= 1e-9 * scale
        moved = translated(a, -sc.depth[k] * sc.normal[k])
        assert abs(distance(moved, b).distance) <= 1e-9 * scale


def test_props_resting_on_a_floor_are_measured_by_the_batch(rng):
    """Props resting on a floor, and crates stacked on crates: the origin is on C's boundary
    (depth zero), GJK ends on a simplex through it, and the batch measures the contact by its
    EPA as the single query does — depth zero, the floor's normal — instead of handing every
    resting prop to the single query."""
    ground = translated(Box((30.0, 30.0, 0.1)), (0.0, 0.0, -0.1))
    crate = _crate()
    shapes = [ground]
    pairs = []
    for k in range(200):
        x, y = rng.uniform(-25, 25, 2)
        shapes.append(_standing(crate if k % 2 else Box((0.3, 0.3, 0.3)), x, y,
                                rng.uniform(0, 2 * math.pi), 0.0 if k % 2 else -0.3))
        pairs.append((0, len(shapes) - 1))
        if k % 4 == 1:                      # a crate on the crate, turned
            shapes.append(_standing(crate, x, y, rng.uniform(0, 2 * math.pi), -0.9))
            pairs.append((len(shapes) - 2, len(shapes) - 1))
    pairs = np.array(pairs)
    sc = batch.screen(PoseTable.from_shapes(shapes), pairs, np.full(len(pairs), 0.05))
    assert sc.measured.mean() >= 0.95
    for k in np.flatnonzero(sc.measured).tolist():
        a, b = shapes[pairs[k, 0]], shapes[pairs[k, 1]]
        single = penetration(a, b)
        scale = max(size(a), size(b))
        assert sc.depth[k] == pytest.approx(single.depth, abs=1e-10 * scale)
        assert sc.depth[k] <= 1e-9 * scale                       # resting: touching
        np.testing.assert_allclose(sc.normal[k], single.normal, atol=1e-9)
        assert abs(abs(sc.normal[k][2]) - 1.0) <= 1e-9            # up (or down)
        for point, shape in ((sc.point_a[k], a), (sc.point_b[k], b)):
            assert off_shape(shape, point) <= 1e-9 * scale


def test_drums_standing_on_a_floor_are_measured_and_balls_handed_back(rng):
    """A drum standing on a floor meets it in a flat face of C (its cap over the floor): the
    batched EPA ends there in its first steps, as exactly as the single query. A ball resting
    on the floor touches it in a curved point, which EPA never reaches exactly: handed back
    after a few calls (the single query polishes it)."""
    ground = translated(Box((30.0, 30.0, 0.1)), (0.0, 0.0, -0.1))
    shapes, pairs = [ground], []
    for k in range(120):
        x, y = rng.uniform(-25, 25, 2)
        r = rng.uniform(0.2, 0.6)
        if k % 3:
            shapes.append(_standing(Cylinder(r, 0.5), x, y, rng.uniform(0, 2 * math.pi), -0.5))
        else:
            shapes.append(translated(Sphere(r), (x, y, r)))
        pairs.append((0, len(shapes) - 1))
    pairs = np.array(pairs)
    sc = batch.screen(PoseTable.from_shapes(shapes), pairs, np.full(len(pairs), 0.05))
    drums = np.arange(len(pairs)) % 3 != 0
    assert sc.measured[drums].mean() >= 0.95 and not sc.measured[~drums].any()
    for k in np.flatnonzero(sc.measured).tolist():
        a, b = shapes[pairs[k, 0]], shapes[pairs[k, 1]]
        single = penetration(a, b)
        assert sc.depth[k] == pytest.approx(single.depth, abs=1e-12) == 0.0
        np.testing.assert_allclose(sc.normal[k], single.normal, atol=1e-9)
        for point, shape in ((sc.point_a[k], a), (sc.point_b[k], b)):
            assert off_shape(shape, point) <= 1e-9 * size(b)


@pytest.mark.parametrize("scale,offset", [(1e-6, 0.0), (1e6, 0.0), (1e3, 1e8), (1e-3, 1e5)])
def test_resting_props_at_extreme_scales_and_offsets(rng, scale, offset):
    """The same resting props (crates, boxes, drums on a floor) scaled from a micrometre to
    kilometres and moved 1e8 away: what the batch measures equals the single query (its
    tolerances are relative to the shapes and their coordinates); where rounding of the
    coordinates leaves a contact undecided (1e8 times the props' size away) it hands the pair
    back rather than guess."""
    def standing(shape, x, y, yaw, bottom):
        return _standing(shape, x, y, yaw, bottom, scale, offset)

    crate = _crate()
    props = (crate, Box((0.3, 0.3, 0.3)), Cylinder(0.4, 0.5))
    bottoms = (0.0, -0.3, -0.5)
    shapes = [standing(Box((30.0, 30.0, 0.1)), 0.0, 0.0, 0.0, 0.1)]
    for k in range(60):
        x, y = rng.uniform(-25, 25, 2)
        shapes.append(standing(props[k % 3], x, y, rng.uniform(0, 2 * math.pi),
                               bottoms[k % 3]))
    pairs = np.array([(0, k) for k in range(1, len(shapes))])
    sc = batch.screen(PoseTable.from_shapes(shapes), pairs, np.full(len(pairs), 0.05 * scale))
    assert sc.measured.mean() >= (0.5 if offset / scale > 1e7 else 0.95)
    for k in np.flatnonzero(sc.measured).tolist():
        a, b = shapes[pairs[k, 0]], shapes[pairs[k, 1]]
        single = penetration(a, b)
        assert sc.depth[k] == pytest.approx(single.depth, abs=1e-10 * scale)
        np.testing.assert_allclose(sc.normal[k], single.normal, atol=1e-9)


def test_batched_epa_hands_over_what_it_cannot_finish(rng):
    shapes = polytope_set(rng, 400)
    pairs = np.arange(400).reshape(-1, 2)
    table = PoseTable.from_shapes(shapes)
    res = batch.run(table, pairs[:, 0], pairs[:, 1])
    rows = np.flatnonzero(np.isfinite(res.tet_a[:, 0, 0]))
    # With a cap of two support calls only pairs done by then finish; the rest fall back with
    # no answer.
    saved = batch_epa.MAX_ITERATIONS
    batch_epa.MAX_ITERATIONS = 2
    try:
        out = batch_epa.run(table, pairs[rows, 0], pairs[rows, 1], res.tet_a[rows],
                            res.tet_b[rows])
    finally:
        batch_epa.MAX_ITERATIONS = saved
    finished = out.code == batch_epa.CONVERGED
    assert (out.support_calls[finished] <= 2).all()
    assert np.isnan(out.depth[~finished]).all() and (~finished).any()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), gap=st.floats(-0.5, 0.5))
def test_property_batch_equals_single(seed, gap):
    """Two random shapes of any kind, the second moved so that their centres are ``gap`` plus
    their radii apart along a random axis: touching, overlapping and apart alike."""
    rng = np.random.default_rng(seed)
    a, b = posed_set(rng, 2, spread=0.0)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    offset = np.eye(4)
    offset[:3, 3] = axis * (size(a) + size(b) + gap) * 0.5
    shapes = [a, Transformed(b.shape, offset @ b.matrix)]
    pairs = np.array([(0, 1), (1, 0)])
    result = batch.run(PoseTable.from_shapes(shapes), pairs[:, 0], pairs[:, 1])
    assert_same_as_single(shapes, pairs, result)


def test_query_all_with_distance_is_batched(rng):
    shapes = posed_set(rng, 150, spread=5.0)
    results = list(query_all(shapes, distance, margin=0.2))
    assert results and {r.engine for _, _, r in results} <= {"batch", "single"}
    assert sum(r.engine == "batch" for _, _, r in results) > 0.95 * len(results)
    for i, j, r in results:
        assert r.distance == pytest.approx(distance(shapes[i], shapes[j]).distance,
                                           rel=1e-9, abs=1e-9 * size(shapes[i]))


# --- the level check on it -------------------------------------------------------------------

def level(rng, n=300):
    shapes = posed_set(rng, n, spread=0.35 * n ** (1 / 3) * 2)
    return shapes, [f"S{k:04d}" for k in range(n)]


@pytest.fixture
def small_batches(monkeypatch):
    """The batch used on these small test levels (real ones below 512 pairs skip it)."""
    from convex_tools.core import level as core_level
    monkeypatch.setattr(core_level, "MIN_PAIRS_FOR_BATCH", 1)


def test_level_findings_do_not_depend_on_the_batch_or_the_jobs(rng, small_batches):
    from convex_tools.core.level import Stats, report_json

    shapes, names = level(rng)
    single = check_shapes(shapes, names, clearance=0.1, batched=False)
    stats = Stats()
    batched = check_shapes(shapes, names, clearance=0.1, stats=stats)
    assert stats.batch_clear and stats.batch_depths and stats.batch_distances
    parallel = check_shapes(shapes, names, clearance=0.1, jobs=2)
    # The jobs change nothing, byte for byte.
    assert batched and report_json(parallel) == report_json(batched)
    # The batch finds the same pairs, kinds and distances as the single queries (its depths
    # are EPA's to rounding; witness points may differ only where the contact is a segment
    # or a face, any point of which is a witness).
    assert [(f.object_a, f.object_b, f.kind) for f in batched] == \
        [(f.object_a, f.object_b, f.kind) for f in single]
    index = {n: k for k, n in enumerate(names)}
    for f, g in zip(batched, single):
        a, b = shapes[index[f.object_a]], shapes[index[f.object_b]]
        scale = max(size(a), size(b))
        assert f.distance == pytest.approx(g.distance, abs=1e-9 * scale)
        for point, shape in ((f.point_a, a), (f.point_b, b)):
            assert off_shape(shape, point) <= 1e-9 * scale
    assert sum(np.allclose(f.point_a, g.point_a, atol=1e-9) for f, g in zip(batched, single)) \
        >= 0.9 * len(single)


def test_small_levels_are_measured_by_the_single_queries(rng):
    from convex_tools.core.level import MIN_PAIRS_FOR_BATCH, Stats

    shapes, names = level(rng, 60)
    stats = Stats()
    check_shapes(shapes, names, clearance=0.1, stats=stats)
    assert 0 < stats.narrow < MIN_PAIRS_FOR_BATCH and stats.single == stats.narrow


def test_level_workers_share_out_the_single_queries(rng, monkeypatch, small_batches):
    from convex_tools.core import level as core_level
    monkeypatch.setattr(core_level, "MIN_PAIRS_FOR_JOBS", 1)
    monkeypatch.setattr(core_level, "PAIRS_PER_TASK", 4)
    shapes, names = level(rng, 200)
    check = LevelCheck(shapes, names, clearance=0.2)
    found = run_to_end(check, jobs=2)
    assert check.finished and check.stats.times["jobs"] == 2
    stats = check.stats
    assert stats.single + stats.batch_clear + stats.batch_depths + stats.batch_distances \
        == check.total
    assert found == check_shapes(shapes, names, clearance=0.2, jobs=1)


def test_the_batchs_last_few_pairs_go_to_the_single_queries(rng, monkeypatch, small_batches):
    """The level check leaves each engine's slow tail to the single queries: more single
    queries, the same findings as the batch run to the end (to its agreement with them)."""
    from convex_tools.core import batch_epa
    from convex_tools.core.level import Stats

    shapes, names = level(rng, 300)
    tail = Stats()
    handed = check_shapes(shapes, names, clearance=0.1, stats=tail)
    monkeypatch.setattr(batch, "HAND_BACK_PAIRS", 0)
    monkeypatch.setattr(batch_epa, "HAND_BACK_PAIRS", 0)
    full = Stats()
    kept = check_shapes(shapes, names, clearance=0.1, stats=full)
    assert tail.single > full.single and tail.batch_depths < full.batch_depths
    assert [(f.object_a, f.object_b, f.kind) for f in handed] == \
        [(f.object_a, f.object_b, f.kind) for f in kept]
    index = {n: k for k, n in enumerate(names)}
    for f, g in zip(handed, kept):
        scale = max(size(shapes[index[f.object_a]]), size(shapes[index[f.object_b]]))
        assert f.distance == pytest.approx(g.distance, abs=1e-9 * scale)


def test_screen_hands_back_only_when_asked(rng):
    shapes = polytope_set(rng, 400)
    pairs = np.arange(400).reshape(-1, 2)
    table = PoseTable.from_shapes(shapes)
    every = batch.screen(table, pairs, np.zeros(len(pairs)))
    tail = batch.screen(table, pairs, np.zeros(len(pairs)), hand_back=True)
    assert every.measured.sum() > tail.measured.sum()
    # What the hand-back leaves is neither clear, apart nor measured (the single query's).
    left = every.measured & ~tail.measured
    assert left.any() and not (tail.clear | tail.apart)[left].any()
    both = every.measured & tail.measured
    np.testing.assert_array_equal(every.depth[both], tail.depth[both])


def test_jobs_must_be_positive():
    check = LevelCheck([Box((1, 1, 1))], ["A"])
    with pytest.raises(ValueError, match="jobs"):
        run_to_end(check, jobs=0)


def test_a_level_of_a_users_own_shapes_is_checked():
    class Ball:                                # only a support mapping, no base class
        def __init__(self, x):
            self.x = x

        def support_xyz(self, dx, dy, dz):
            n = math.sqrt(dx * dx + dy * dy + dz * dz) or 1.0
            return (self.x + dx / n, dy / n, dz / n)

    found = check_shapes([Ball(0.0), Ball(1.5), Ball(5.0)], ["A", "B", "C"])
    assert [(f.object_a, f.object_b, f.kind) for f in found] == [("A", "B", "overlap")]
    assert found[0].depth == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"shapes\[1\]"):
        check_shapes([Ball(0.0), "ball"], ["A", "B"])
