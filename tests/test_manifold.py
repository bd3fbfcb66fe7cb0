"""Contact manifolds (``contact_manifold``): corners of the contact region on the mid-plane."""

import itertools
import math

import numpy as np
import pytest

from convex_tools.core.hull import Hull
from convex_tools.core.manifold import contact_manifold, sample_feature, support_feature
from convex_tools.core.penetration import penetration
from convex_tools.core.results import Manifold, Status
from convex_tools.core.shapes import (Box, Capsule, Cone, ConvexHullOf, Cylinder, MinkowskiSum,
                                      RoundBox, Sphere, posed, translated)

from geometry_helpers import rotation


GROUND = translated(Box((5, 5, 1)), (0, 0, -1))          # top face at z = 0


def crate(rot_z=0.3, offset=(1.0, 0.5), sink=0.01, nudge=(0.0, 0.0, 0.0), tilt=0.0):
    r = rotation((0, 0, 1), rot_z) @ rotation((1, 0, 0), tilt)
    centre = np.array((offset[0], offset[1], 0.5 - sink)) + np.asarray(nudge)
    return posed(Box((0.5, 0.5, 0.5)), r, centre), r, centre


def sorted_rows(points):
    return points[np.lexsort(points.T[::-1])]


def test_box_on_a_large_box_gives_its_four_bottom_corners_on_the_mid_plane():
    a, r, centre = crate()
    m = contact_manifold(a, GROUND)
    assert isinstance(m, Manifold)
    np.testing.assert_allclose(m.normal, (0, 0, -1), atol=1e-12)
    assert len(m) == 4
    np.testing.assert_allclose(m.depths, 0.01, atol=1e-12)
    # The crate's bottom corners, lowered onto the mid-plane z = −0.005.
    corners = np.array([r @ np.array((x, y, -0.5)) + centre
                        for x, y in itertools.product((-0.5, 0.5), repeat=2)])
    corners[:, 2] = -0.005
    np.testing.assert_allclose(sorted_rows(m.points), sorted_rows(corners), atol=1e-12)


@pytest.mark.parametrize("nudge", [(1e-6, 0, 0), (0, -1e-6, 0), (0, 0, 1e-6), (1e-6, 1e-6, -1e-6)])
def test_box_on_a_box_keeps_its_corners_when_nudged(nudge):
    base = contact_manifold(crate()[0], GROUND)
    moved = contact_manifold(crate(nudge=nudge)[0], GROUND)
    assert len(moved) == len(base) == 4
    np.testing.assert_allclose(sorted_rows(moved.points), sorted_rows(base.points), atol=2e-6)


@pytest.mark.parametrize("tilt", [1e-6, -1e-6, 0.005])
def test_box_on_a_box_keeps_its_corners_when_tilted_slightly(tilt):
    m = contact_manifold(crate(tilt=tilt)[0], GROUND)
    assert len(m) == 4
    # The bottom corners of the tilted crate (centre at z = 0.49) lie at
    # 0.49 − 0.5 cos t ∓ 0.5 sin t: that far below the ground's top face.
    low, high = (0.5 * math.cos(tilt) - 0.49 + s * 0.5 * abs(math.sin(tilt)) for s in (-1, 1))
    assert m.depths.min() == pytest.approx(low, abs=1e-12)
    assert m.depths.max() == pytest.approx(high, abs=1e-12)


def test_stacked_boxes_give_the_overlap_rectangle():
    # Cubes of side 2, the top one shifted by (0.3, 0.2) and sunk 0.05: overlap x −0.7..1,
    # y −0.8..1.
    m = contact_manifold(Box((1, 1, 1)), translated(Box((1, 1, 1)), (0.3, 0.2, 1.95)))
    expected = np.array([(x, y, 0.975) for x in (-0.7, 1.0) for y in (-0.8, 1.0)])
    np.testing.assert_allclose(sorted_rows(m.points), sorted_rows(expected), atol=1e-12)
    np.testing.assert_allclose(m.depths, 0.05, atol=1e-12)


def test_edge_on_a_face_gives_two_points():
    edge_down = posed(Box((0.5, 0.5, 0.5)), rotation((1, 0, 0), math.pi / 4),
                      (0, 0, 0.5 * 2 ** 0.5 - 0.01))
    m = contact_manifold(edge_down, GROUND)
    expected = np.array([(-0.5, 0, -0.005), (0.5, 0, -0.005)])
    np.testing.assert_allclose(sorted_rows(m.points), expected, atol=1e-9)
    np.testing.assert_allclose(m.depths, 0.01, atol=1e-9)


def test_vertex_on_a_face_gives_one_point():
    corner_down = posed(Box((0.5, 0.5, 0.5)), rotation((1, 1, 0), math.atan(2 ** 0.5)),
                        (0, 0, 0.5 * 3 ** 0.5 - 0.02))
    m = contact_manifold(corner_down, GROUND)
    assert len(m) == 1
    assert m.depths[0] == pytest.approx(0.02, abs=1e-9)
    np.testing.assert_allclose(m.points[0], (0, 0, -0.01), atol=1e-9)


def test_sphere_gives_the_single_deepest_point():
    m = contact_manifold(translated(Sphere(0.5), (0.2, 0.1, 0.45)), GROUND)
    assert len(m) == 1
    np.testing.assert_allclose(m.points[0], (0.2, 0.1, -0.025), atol=1e-12)
    assert m.depths[0] == pytest.approx(0.05, abs=1e-12)


def test_standing_cylinder_samples_its_cap():
    # The cap (a disc) comes from the perturbed sampling: corners on its rim, all 0.02 deep.
    m = contact_manifold(translated(Cylinder(0.5, 0.5), (0.3, -0.2, 0.48)), GROUND)
    assert len(m) == 4
    np.testing.assert_allclose(m.depths, 0.02, atol=1e-12)
    radii = np.linalg.norm(m.points[:, :2] - (0.3, -0.2), axis=1)
    np.testing.assert_allclose(radii, 0.5, atol=1e-12)
    np.testing.assert_allclose(m.points[:, 2], -0.01, atol=1e-12)
    # Spread over the disc: the four span a large part of it.
    spread = max(np.linalg.norm(p - q) for p in m.points for q in m.points)
    assert spread > 0.95


@pytest.mark.parametrize("shape", [Cylinder(0.5, 0.6), Capsule(0.5, 0.6)])
def test_lying_cylinder_and_capsule_touch_along_a_line(shape):
    lying = posed(shape, rotation((1, 0, 0), math.pi / 2), (0.1, 0.0, 0.48))
    m = contact_manifold(lying, GROUND)
    expected = np.array([(0.1, -0.6, -0.01), (0.1, 0.6, -0.01)])
    np.testing.assert_allclose(sorted_rows(m.points), expected, atol=1e-9)
    np.testing.assert_allclose(m.depths, 0.02, atol=1e-9)


def test_cone_on_its_base_and_on_its_tip():
    base = contact_manifold(translated(Cone(0.5, 0.5), (0, 0, 0.48)), GROUND)
    assert len(base) == 4
    np.testing.assert_allclose(base.depths, 0.02, atol=1e-12)
    tip = contact_manifold(posed(Cone(0.5, 0.5), rotation((1, 0, 0), math.pi), (0, 0, 0.48)),
                           GROUND)
    assert len(tip) == 1
    np.testing.assert_allclose(tip.points[0], (0, 0, -0.01), atol=1e-12)


def test_round_box_uses_its_core_face():
    m = contact_manifold(translated(RoundBox((0.5, 0.5, 0.5), 0.1), (0, 0, 0.58)), GROUND)
    expected = np.array([(x, y, -0.01) for x in (-0.5, 0.5) for y in (-0.5, 0.5)])
    np.testing.assert_allclose(sorted_rows(m.points), sorted_rows(expected), atol=1e-12)


def test_hull_resting_on_a_face():
    cube = Hull(np.array(list(itertools.product((-0.5, 0.5), repeat=3))))
    m = contact_manifold(translated(cube, (0, 0, 0.49)), GROUND)
    assert len(m) == 4
    np.testing.assert_allclose(m.depths, 0.01, atol=1e-12)


def test_non_uniformly_scaled_box():
    slab = posed(Box((1, 1, 1)), rotation((0, 0, 1), 0.2), (0, 0, 0.19), scale=(2.0, 0.5, 0.2))
    m = contact_manifold(slab, GROUND)
    assert len(m) == 4
    np.testing.assert_allclose(m.depths, 0.01, atol=1e-12)


def test_max_points_and_validation():
    a, _, _ = crate()
    assert len(contact_manifold(a, GROUND, max_points=1)) == 1
    assert len(contact_manifold(a, GROUND, max_points=2)) == 2
    assert len(contact_manifold(a, GROUND, max_points=8)) == 4
    # The cylinder's cap is a 16-gon: more points on request.
    assert len(contact_manifold(translated(Cylinder(0.5, 0.5), (0, 0, 0.48)), GROUND,
                                max_points=8)) == 8
    with pytest.raises(ValueError, match="max_points"):
        contact_manifold(a, GROUND, max_points=0)


def test_apart_is_none():
    assert contact_manifold(translated(Box((0.5, 0.5, 0.5)), (0, 0, 0.6)), GROUND) is None


def test_reduction_keeps_the_deepest_point():
    # A cylinder cap tilted inside the feature angle: its rim is deepest on one side.
    cyl = posed(Cylinder(0.5, 0.5), rotation((1, 0, 0), 0.01), (0, 0, 0.48))
    m = contact_manifold(cyl, GROUND)
    c = penetration(cyl, GROUND)
    assert m.depths.max() == pytest.approx(c.depth, abs=1e-9)


def test_perturbed_sampling_finds_box_corners_and_ignores_curved_surfaces():
    box = posed(Box((1, 2, 3)), rotation((1, 1, 0), 0.3))
    n = rotation((1, 1, 0), 0.3) @ np.array((0, 0, 1.0))
    corners = {tuple(np.round(p, 9)) for p in sample_feature(box, n)}
    assert len(corners) == 4
    ellipsoid_points = sample_feature(posed(MinkowskiSum(Sphere(1), Sphere(0.5)), None), n)
    assert len({tuple(np.round(p, 9)) for p in ellipsoid_points}) == 1


def test_support_feature_of_a_minkowski_sum_of_boxes():
    pts = support_feature(MinkowskiSum(Box((1, 1, 1)), Box((0.5, 0.5, 0.5))), (0, 0, 1))
    top = {tuple(np.round(p, 12)) for p in pts}
    assert {(x, y, 1.5) for x in (-1.5, -0.5, 0.5, 1.5) for y in (-1.5, -0.5, 0.5, 1.5)} >= \
        {(x, y, 1.5) for x in (-1.5, 1.5) for y in (-1.5, 1.5)}
    assert all(p[2] == 1.5 for p in top)


@pytest.mark.parametrize("seed", range(30))
def test_random_box_pairs_points_lie_between_the_surfaces(seed):
    """Each corner ± half its depth along the normal lies on A (above) and on B (below)."""
    rng = np.random.default_rng(seed)
    ha, hb = rng.uniform(0.2, 1.0, 3), rng.uniform(0.2, 1.0, 3)
    ra = rotation(rng.normal(size=3), rng.uniform(0, math.pi))
    rb = rotation(rng.normal(size=3), rng.uniform(0, math.pi))
    ta, tb = rng.uniform(-0.6, 0.6, 3), rng.uniform(-0.6, 0.6, 3)
    a, b = posed(Box(ha), ra, ta), posed(Box(hb), rb, tb)
    m = contact_manifold(a, b)
    if m is None:
        return
    c = penetration(a, b)
    assert 1 <= len(m) <= 4
    assert np.all(m.depths >= 0.0)
    assert m.depths.max() <= c.depth + 1e-9
    for p, d in zip(m.points, m.depths):
        on_a = ra.T @ (p + 0.5 * d * m.normal - ta)
        on_b = rb.T @ (p - 0.5 * d * m.normal - tb)
        # (the clipper admits points within its merge tolerance of an edge, for coincident edges)
        assert np.all(np.abs(on_a) <= ha + 1e-8)
        assert np.all(np.abs(on_b) <= hb + 1e-8)


def test_tiny_shapes_keep_their_features():
    # Found by adversarial probing: "level with the top" allowed 1e-12 in model units, so at a
    # scale of 1e-13 a hull of a sphere and a box took the box's face, 0.2 of the size below
    # the sphere's top, into its feature. The allowance is now relative to the coordinates.
    for s in (1e-13, 1.0):
        shape = ConvexHullOf(Sphere(0.5 * s), translated(Box((0.3 * s,) * 3), (0.5 * s, 0, 0)))
        feature = support_feature(shape, np.array((0.0, 0.0, 1.0)))
        np.testing.assert_allclose(feature, [(0.0, 0.0, 0.5 * s)], rtol=0, atol=1e-15 * s)


def test_status_is_the_penetrations_it_comes_from():
    # Faces 0.1 into each other: an exact contact; faces exactly touching: zero depth, TOUCHING,
    # as the penetration says.
    overlapping = contact_manifold(Box((1, 1, 1)), translated(Box((1, 1, 1)), (1.9, 0.3, 0)))
    assert overlapping.status is Status.CONVERGED
    touching = contact_manifold(Box((1, 1, 1)), translated(Box((1, 1, 1)), (2.0, 0.3, 0)))
    assert touching.status is Status.TOUCHING
    assert touching.depths == pytest.approx([0.0] * 4)
    single = contact_manifold(translated(Sphere(0.5), (0.2, 0.1, 0.45)), GROUND)
    assert single.status is penetration(translated(Sphere(0.5), (0.2, 0.1, 0.45)), GROUND).status
