"""GJK distance, closest points and separating-axis intersection."""

import math

import numpy as np
import pytest

from convex_tools.core import (Box, Capsule, Cone, Cylinder, Ellipsoid, Hull, Point, RoundBox,
                               Segment, SeparationCache, Sphere, Status, Transformed, distance,
                               intersect, posed, translated)
from convex_tools.core import gjk, simplex

from geometry_helpers import random_rotation, rigid

EXACT = 1e-9


def rot_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


# --- analytic answers ------------------------------------------------------------------------

def test_sphere_sphere_distance_and_points_are_exact():
    a = translated(Sphere(1.0), (1, 2, 3))
    b = translated(Sphere(0.5), (1 + 3, 2 + 4, 3))      # centres 5 apart
    r = distance(a, b)
    assert r.distance == pytest.approx(5 - 1.5, abs=EXACT)
    np.testing.assert_allclose(r.point_a, [1 + 0.6, 2 + 0.8, 3], atol=EXACT)
    np.testing.assert_allclose(r.point_b, [4 - 0.3, 6 - 0.4, 3], atol=EXACT)
    assert not r.intersecting


def test_axis_aligned_boxes_distance_is_the_norm_of_the_axis_gaps():
    rng = np.random.default_rng(7)
    for _ in range(200):
        ha, hb = rng.uniform(0.1, 2, 3), rng.uniform(0.1, 2, 3)
        ca, cb = rng.uniform(-5, 5, 3), rng.uniform(-5, 5, 3)
        gaps = np.maximum(np.abs(cb - ca) - ha - hb, 0.0)
        r = distance(translated(Box(ha), ca), translated(Box(hb), cb))
        assert r.distance == pytest.approx(np.linalg.norm(gaps), abs=EXACT)
        assert r.intersecting == (np.linalg.norm(gaps) == 0.0)


def segment_segment_distance(p1, q1, p2, q2):
    """Reference: minimum of |P(s) - Q(t)| over the unit square, by its KKT candidates."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    best = math.inf

    def at(s, t):
        return np.linalg.norm(p1 + s * d1 - (p2 + t * d2))

    a, e, b, c, f = d1 @ d1, d2 @ d2, d1 @ d2, d1 @ r, d2 @ r
    den = a * e - b * b
    if den > 1e-15:  # interior stationary point
        s, t = (b * f - c * e) / den, (a * f - b * c) / den
        if 0 <= s <= 1 and 0 <= t <= 1:
            best = at(s, t)
    for s in (0.0, 1.0):  # edges of the square: 1D clamped minimisers
        t = np.clip((b * s + f) / e, 0, 1)
        best = min(best, at(s, t))
    for t in (0.0, 1.0):
        s = np.clip((b * t - c) / a, 0, 1)
        best = min(best, at(s, t))
    return best


def test_capsule_capsule_distance_is_segment_distance_minus_radii():
    rng = np.random.default_rng(3)
    for _ in range(300):
        ra, rb, ha, hb = rng.uniform(0.05, 0.5, 4)
        Ra, Rb = random_rotation(rng), random_rotation(rng)
        ca, cb = rng.uniform(-3, 3, 3), rng.uniform(-3, 3, 3)
        a = Transformed(Capsule(ra, ha), rigid(Ra, ca))
        b = Transformed(Capsule(rb, hb), rigid(Rb, cb))
        za, zb = Ra[:, 2], Rb[:, 2]
        ref = segment_segment_distance(ca - ha * za, ca + ha * za, cb - hb * zb, cb + hb * zb)
        r = distance(a, b)
        assert r.distance == pytest.approx(max(ref - ra - rb, 0.0), abs=EXACT)


def test_parallel_capsules_side_by_side():
    a = Capsule(0.5, 2.0)
    b = translated(Capsule(0.25, 1.0), (2.0, 0, 0.5))
    assert distance(a, b).distance == pytest.approx(2.0 - 0.75, abs=EXACT)


def test_box_sphere_face_edge_and_corner():
    box = Box((1.0, 2.0, 3.0))
    for centre, expected in [((3, 0, 0), 2 - 0.5),                     # face
                             ((2, 3, 0), math.sqrt(2) - 0.5),            # edge
                             ((2, 3, 4), math.sqrt(3) - 0.5)]:           # corner
        r = distance(box, translated(Sphere(0.5), centre))
        assert r.distance == pytest.approx(expected, abs=EXACT)
        clamped = np.clip(centre, [-1, -2, -3], [1, 2, 3])
        np.testing.assert_allclose(r.point_a, clamped, atol=EXACT)


def test_point_to_hull_of_a_cube():
    cube = Hull([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    for p, expected in [((3, 0, 0), 2.0), ((2, 2, 0), math.sqrt(2)), ((2, -3, 4), math.sqrt(14))]:
        r = distance(translated(Point(), p), cube)
        assert r.distance == pytest.approx(expected, abs=EXACT)


def test_rotated_box_corner_edge_faces_a_box_face():
    # B turned 45° about z presents its vertical edge at x0 - √2 toward A's face at x = 1.
    x0 = 5.0
    b = posed(Box((1, 1, 1)), rot_z(math.pi / 4), (x0, 0.3, 0.2))
    r = distance(Box((1, 1, 1)), b)
    assert r.distance == pytest.approx(x0 - math.sqrt(2) - 1, abs=EXACT)


def test_box_corners_pointing_at_each_other_along_the_diagonal():
    # Rz(-45°) takes the corner (1,1,1) to (√2, 0, 1); Ry(atan(1/√2)) then lays it on +x at √3.
    ry = math.atan(1 / math.sqrt(2))
    c, s = math.cos(ry), math.sin(ry)
    rot = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]) @ rot_z(-math.pi / 4)
    np.testing.assert_allclose(rot @ [1, 1, 1], [math.sqrt(3), 0, 0], atol=1e-15)
    a = posed(Box((1, 1, 1)), rot)
    b = posed(Box((1, 1, 1)), rot_z(math.pi) @ rot, (10, 0, 0))   # its corner points along -x
    r = distance(a, b)
    assert r.distance == pytest.approx(10 - 2 * math.sqrt(3), abs=EXACT)
    np.testing.assert_allclose(r.point_a, [math.sqrt(3), 0, 0], atol=EXACT)
    np.testing.assert_allclose(r.point_b, [10 - math.sqrt(3), 0, 0], atol=EXACT)


def test_ellipsoid_to_plane_like_box_is_its_semi_axis_gap():
    e = posed(Ellipsoid((1.0, 2.0, 0.5)), translation=(0, 0, 3.0))
    floor = translated(Box((10, 10, 1)), (0, 0, -1))       # top face at z = 0
    r = distance(e, floor)
    assert r.distance == pytest.approx(2.5, abs=EXACT)


def test_cylinder_and_cone_against_boxes():
    cyl = posed(Cylinder(1.0, 2.0), rot_z(0.3), (0, 0, 0))
    assert distance(cyl, translated(Box((1, 1, 1)), (4, 0, 0))).distance == \
        pytest.approx(2.0, abs=EXACT)
    cone = Cone(1.0, 1.0)  # apex at z = 1
    assert distance(cone, translated(Box((1, 1, 1)), (0, 0, 3))).distance == \
        pytest.approx(1.0, abs=EXACT)


# --- invariants ------------------------------------------------------------------------------

def thesis_like_shapes(rng):
    hull_points = rng.normal(size=(50, 3))
    hull_points /= np.linalg.norm(hull_points, axis=1)[:, None]
    return [Box((1, 1, 1)), Ellipsoid((0.5, 1.0, 0.75)), RoundBox((1, 1, 1), 0.5),
            Hull(hull_points), Cone(1.0, 1.0), Cylinder(0.5, 1.0), Capsule(0.3, 0.8),
            Sphere(0.7)]


def random_pairs(rng, n, spread=3.0):
    shapes = thesis_like_shapes(rng)
    for _ in range(n):
        sa, sb = shapes[rng.integers(len(shapes))], shapes[rng.integers(len(shapes))]
        ma = rigid(random_rotation(rng), rng.uniform(-spread, spread, 3))
        mb = rigid(random_rotation(rng), rng.uniform(-spread, spread, 3))
        yield Transformed(sa, ma), Transformed(sb, mb)


def test_closest_points_lie_on_the_shapes_and_realise_the_distance():
    rng = np.random.default_rng(11)
    for a, b in random_pairs(rng, 400):
        r = distance(a, b)
        if r.intersecting:
            continue
        n = (r.point_b - r.point_a) / r.distance                       # unit, A toward B
        assert np.linalg.norm(r.point_b - r.point_a) == pytest.approx(r.distance, rel=1e-9)
        # point_a is A's support along n and point_b B's along -n: the surfaces face each other.
        assert a.support(n) @ n == pytest.approx(r.point_a @ n, abs=1e-7)
        assert b.support(-n) @ n == pytest.approx(r.point_b @ n, abs=1e-7)
        assert r.status in (Status.CONVERGED, Status.REPEATED_SUPPORT, Status.NO_PROGRESS)


def test_distance_is_symmetric_and_invariant_under_a_common_rigid_motion():
    rng = np.random.default_rng(5)
    for a, b in random_pairs(rng, 200):
        r = distance(a, b)
        assert distance(b, a).distance == pytest.approx(r.distance, abs=1e-8)
        m = rigid(random_rotation(rng), rng.uniform(-100, 100, 3))
        moved = distance(Transformed(a, m), Transformed(b, m))
        assert moved.distance == pytest.approx(r.distance, abs=1e-8)
        # (The points themselves may differ where closest points are not unique: parallel faces.)
        assert np.linalg.norm(moved.point_a - moved.point_b) == pytest.approx(moved.distance,
                                                                             abs=1e-9)


def test_intersect_agrees_with_distance():
    rng = np.random.default_rng(9)
    for a, b in random_pairs(rng, 500, spread=1.5):
        d = distance(a, b)
        if d.distance > 1e-9:
            assert not intersect(a, b)
        elif d.intersecting:
            assert intersect(a, b)


# --- degenerate and extreme input ------------------------------------------------------------

def test_touching_boxes_have_distance_zero():
    r = distance(Box((1, 1, 1)), translated(Box((1, 1, 1)), (2.0, 0.5, 0.25)))
    assert r.distance == pytest.approx(0.0, abs=1e-12)
    assert intersect(Box((1, 1, 1)), translated(Box((1, 1, 1)), (2.0, 0.5, 0.25)))


def test_touching_spheres_and_overlapping_spheres():
    assert distance(Sphere(1), translated(Sphere(1), (2, 0, 0))).distance == 0.0
    r = distance(Sphere(1), translated(Sphere(1), (1.5, 0, 0)))
    assert r.intersecting and r.distance == 0.0
    # The reported common point is inside both balls.
    assert np.linalg.norm(r.point_a) <= 1 + 1e-12
    assert np.linalg.norm(r.point_a - [1.5, 0, 0]) <= 1 + 1e-12


def test_concentric_spheres_and_identical_boxes_intersect():
    assert distance(Sphere(1), Sphere(2)).intersecting
    assert distance(Box((1, 1, 1)), Box((1, 1, 1))).intersecting
    assert intersect(Sphere(1), Sphere(1))


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_results_scale_with_the_scene(scale):
    offset = np.array([1e6, -2e6, 3e6]) if scale == 1.0 else np.zeros(3)
    a = posed(Box((1, 1, 1)), translation=offset, scale=scale)
    b = posed(Box((1, 1, 1)), rot_z(math.pi / 4), offset + [5 * scale, 0, 0], scale=scale)
    r = distance(a, b)
    assert r.distance == pytest.approx((5 - math.sqrt(2) - 1) * scale, rel=1e-9)


def test_far_from_origin_pair_keeps_its_precision():
    offset = np.array([1e6, 1e6, 1e6])
    r = distance(translated(Sphere(1.0), offset), translated(Sphere(1.0), offset + [3, 0, 0]))
    assert r.distance == pytest.approx(1.0, abs=1e-9)


def test_flat_and_collinear_shapes():
    square = Hull([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 0]])
    assert distance(square, translated(Point(), (0.5, 0.5, 2))).distance == \
        pytest.approx(2.0, abs=EXACT)
    stick = Hull([[0, 0, 0], [1, 0, 0], [2, 0, 0], [2, 0, 0]])
    assert distance(stick, translated(Sphere(0.5), (1, 3, 0))).distance == \
        pytest.approx(2.5, abs=EXACT)


def test_distance_rejects_non_shapes():
    with pytest.raises(ValueError, match="a must be"):
        distance("box", Box((1, 1, 1)))
    with pytest.raises(ValueError, match="method"):
        intersect(Box((1, 1, 1)), Box((1, 1, 1)), method="sat")


def test_every_run_ends_with_a_named_status_within_the_cap():
    rng = np.random.default_rng(13)
    for a, b in random_pairs(rng, 300, spread=2.0):
        res = gjk.run(a.support_xyz, b.support_xyz, (1.0, 0.0, 0.0))
        assert res.support_calls <= gjk.MAX_ITERATIONS
        assert res.status is not Status.ITERATION_LIMIT
        assert all(math.isfinite(c) for c in res.v)


# --- frame coherence (ISA-GJK) -----------------------------------------------------------

def test_cached_separating_axis_ends_repeated_queries_in_one_support_call():
    cache = SeparationCache()
    a = Box((1, 1, 1))
    for step in range(100):  # B drifts and turns slowly, staying separated
        b = posed(Box((1, 1, 1)), rot_z(0.002 * step), (3.0 + 0.001 * step, 0.01 * step, 0))
        assert not intersect(a, b, cache=cache)
    assert cache.hits >= 99   # every query after the first ended on its first support call


def test_cached_axis_warm_starts_distance():
    cache = SeparationCache()
    a = Ellipsoid((1, 2, 3))
    cold = warm = 0
    for step in range(50):
        b = translated(Box((1, 1, 1)), (5 + 0.001 * step, 0.002 * step, 0))
        warm += distance(a, b, cache=cache).support_calls
        cold += distance(a, b).support_calls
    assert warm < cold


def test_nearly_touching_cones_converge_to_points_on_their_surfaces():
    # Found by the 100k benchmark: cone rim against cone side 9.1e-5 apart. The simplex drifts
    # along a flat valley of the CSO at constant |v|; GJK must stop on the size-relative
    # tolerance (or the best-gap state), not on a stall with loosened bounds.
    ma = np.array([[0.05171827343193236, 0.826533201893214, 0.5605069904661067, 0.5201190101009594],
                   [0.9960180140793702, -0.0018789288326475084, -0.08913240295105707,
                    1.4168788709297093],
                   [-0.07261773765828605, 0.5628848335091239, -0.8233391332754676,
                    -1.1334990095892512], [0, 0, 0, 1]])
    mb = np.array([[0.6457441672435271, 0.5573254030998942, 0.5219222792049639, 0.7759433347594911],
                   [-0.41556182344704523, -0.3169191980688484, 0.8525670605816089,
                    1.2580707480971136],
                   [0.64056447088824, -0.7674311805985852, 0.026954437125096542,
                    0.9456878951814973], [0, 0, 0, 1]])
    a, b = Transformed(Cone(1, 1), ma), Transformed(Cone(1, 1), mb)
    r = distance(a, b)
    n = (r.point_b - r.point_a) / r.distance
    # The gap between the support planes along n (a lower bound) meets |pb - pa| (an upper one).
    assert b.support(-n) @ n - a.support(n) @ n == pytest.approx(r.distance, abs=1e-9)
    assert r.status is Status.CONVERGED


def test_subnormal_centre_difference_does_not_lose_the_search_direction():
    # Centres 1e-175 apart: the raw difference squared underflows inside the ellipsoid supports,
    # whose zero-direction fallback points, tipped by these rotations, would make that axis look
    # separating. The axis must be rescaled first.
    c, s = math.cos(0.7), math.sin(0.7)
    rot = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    a = posed(Ellipsoid((1.0, 2.0, 0.5)), rot, (1e-175, 0.0, 0.0))
    b = posed(Ellipsoid((0.5, 1.0, 2.0)), rot.T, (0.0, 0.0, 0.0))
    assert intersect(a, b)
    assert distance(a, b).intersecting


def test_a_point_just_inside_a_large_cylinders_side_is_not_reported_apart():
    # Found by adversarial probing: a point 4e-10 inside a cylinder of radius 5987 stalled GJK
    # (sliver simplices along the side line), and the stall returned the state with the least
    # duality gap, 9e-5 away, although with the origin in C the gap measures nothing and later
    # states were shorter. Now within GJK's size-relative tolerance of touching.
    rot = [[-0.08916743184488785, -0.46868694721134574, 0.8788524987800266],
           [0.8174066438543743, 0.46974509220376226, 0.33344553818158507],
           [-0.5691182194245019, 0.7481123537706005, 0.34122186104482877]]
    cylinder = posed(Cylinder(5987.0, 3312.0), rot)
    point = translated(Point(), (143.20765057652258, 539.3999592135025, -6232.900757695815))
    assert distance(cylinder, point).distance <= 1e-10 * 7000


@pytest.mark.parametrize("size", [1e-13, 1e-12, 1e-30])
def test_tiny_boxes_are_measured_relative_to_their_size(size):
    # Found by adversarial probing: boxes of half extent 1e-13, 3e-13 apart (a gap of 1e-13),
    # gave 3e-13 with status CONVERGED: GJK stopped on an absolute tolerance of 1e-12.
    box = Box((size, size, size))
    r = distance(box, translated(box, (3 * size, 0.0, 0.0)))
    assert r.distance == pytest.approx(size, rel=1e-9)
    np.testing.assert_allclose(r.point_a, (size, 0.0, 0.0), rtol=0, atol=1e-9 * size)


# --- needles: A − B 1e6 times longer than wide (found probing issue 10's extremes) -------------

NEEDLE = [(-278.6996845554968, -432.32695957727265, -308.9024638906121),
          (278.699509578335, 432.3272107875673, 308.90258944849484),
          (-278.69847020202724, -432.3265247378731, -308.901717571076),
          (278.6989255020162, 432.3264989689924, 308.9014544237871)]


def test_a_needle_tetrahedron_holding_the_origin_holds_it():
    # GJK's tetrahedron on a capsule's segment core (1200 long) beside a shape 1e-3 across at
    # its middle: two ends 1e-3 apart at each end. Cramer's weights are ~1e-10 accurate along
    # its length, so their residual check refused them, and its faces answered 4.4e-5 away
    # from the origin it holds (exact weights 0.307, 0.409, 0.193, 0.091): GJK stalled there.
    v, weights = simplex.closest_to_origin(NEEDLE)
    assert v == (0.0, 0.0, 0.0)
    np.testing.assert_allclose(weights, (0.3074661, 0.4091590, 0.1925341, 0.0908408), atol=1e-7)
    # Seen from its far end (all three edges from the first point 1e6 times longer than the
    # others) a needle passed the flatness test; it is not flat.
    far_end = [(-2.9029714662827674e+17, -2.1656447406934938e+17, -1.4580594005439232e+16),
               (6.677478546838728e+17, 4.9814669316130304e+17, 3.3538082906391296e+16),
               (6.677472061607834e+17, 4.9814575491549286e+17, 3.3539414101373056e+16),
               (6.677469972203126e+17, 4.981448783173632e+17, 3.3537999500049536e+16)]
    v, weights = simplex.closest_to_origin(far_end)
    assert v == (0.0, 0.0, 0.0) and min(weights) > 0.04


def test_a_segment_through_a_disc_a_millionth_its_length_intersects_it():
    # The needle stall as a query: distance said 2.2e10 apart (NO_PROGRESS) for a disc of
    # radius 1e12 and a segment of half length 1e18 through its centre, 1e18 from the origin.
    centre = (-9.687922338157964e+17, 8.042683547288334e+17, 7.463008191609338e+17)
    disc = Transformed(Cylinder(1e12, 0.0), rigid(
        [[-0.20713794880275294, -0.46244739210665753, -0.8621115239338465],
         [0.5752995585533002, -0.7703318795894951, 0.2749894783741615],
         [-0.791280157778625, -0.4390116226500919, 0.42561074596862253]], centre))
    segment = Transformed(Segment(1e18), rigid(
        [[0.16769953127466652, -0.9688257385511668, 0.18235557444466463],
         [0.7204884454453595, -0.005808631542911122, -0.693442614625989],
         [0.6728842895996208, 0.2476750857885894, 0.697053645489089]], centre))
    for a, b in ((disc, segment), (segment, disc)):
        r = distance(a, b)
        assert r.intersecting and r.distance == 0.0
