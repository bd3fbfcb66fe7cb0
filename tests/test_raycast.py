"""GJK ray cast (seed 004 Alg. 3) against closed-form ray intersections.

Accuracy asked of the ray cast: 1e-9 on polytopes and rounded shapes (spheres, capsules, round
boxes, ellipsoids: their margins make the cast exact), 1e-7 relative on other curved surfaces
(cylinder and cone sides, where GJK converges only linearly and stalls near 1e-8 (cylinder) to
2e-7 (cone) of the shape's size; their normals are good to a few 1e-4).
"""

import math

import numpy as np
import pytest

from convex_tools.core import (Box, Capsule, Cone, ConvexHullOf, Cylinder, Disc, Ellipsoid, Hull,
                               MinkowskiSum, Point, Rectangle, RoundBox, SeparationCache,
                               Segment, Sphere, Status, Transformed, posed, translated)
from convex_tools.core.raycast import ray_cast

from conftest import random_rotation

POLY = 1e-9      # polytopes and rounded shapes: exact up to rounding
CURVED = 1e-7    # smooth surfaces without a margin, relative to the shape's size
# Cone sides: GJK's floor there is measured at ~2e-7 of the shape's size (the simplex near a
# generator line is a sliver whose plane is known only to ~1e-10 at the apex's distance).
CONE_SIDE = 3e-7
# Normals on cylinder and cone sides: the last clipping plane passes through the hit point, so
# its tilt α from the true tangent plane satisfies R α² / 2 <= the hit's distance from the
# surface (~1e-8 R at GJK's floor there): α ~ 1e-4.
RULED_NORMAL = 5e-4


# --- closed-form intersections --------------------------------------------------------------

def sphere_hit(origin, direction, centre, radius):
    """Smallest t >= 0 with |origin + t d - centre| = radius, or None."""
    o = np.asarray(origin, float) - centre
    d = np.asarray(direction, float)
    a, b, c = d @ d, o @ d, o @ o - radius * radius
    disc = b * b - a * c
    if disc < 0.0:
        return None
    if c <= 0.0:
        return 0.0
    t = (-b - math.sqrt(disc)) / a
    return t if t >= 0.0 else None


def box_hit(origin, direction, lower, upper):
    """Slab method: entry t of the ray into the box [lower, upper], and the entry face normal."""
    t0, t1, normal = 0.0, math.inf, np.zeros(3)
    for k in range(3):
        if direction[k] == 0.0:
            if not lower[k] <= origin[k] <= upper[k]:
                return None, None
            continue
        ta = (lower[k] - origin[k]) / direction[k]
        tb = (upper[k] - origin[k]) / direction[k]
        near, far = min(ta, tb), max(ta, tb)
        if near > t0:
            t0, normal = near, np.eye(3)[k] * (-1.0 if direction[k] > 0 else 1.0)
        t1 = min(t1, far)
    return (t0, normal) if t0 <= t1 else (None, None)


def unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def random_ray_at(rng, target_spread=0.5, distance=5.0):
    """A ray from a random point at ``distance`` toward a random point near the origin."""
    origin = unit(rng.normal(size=3)) * distance
    return origin, rng.normal(size=3) * target_spread - origin


def assert_on_ray(hit, origin, direction):
    np.testing.assert_allclose(hit.point, np.asarray(origin) + hit.t * np.asarray(direction),
                               atol=1e-12, rtol=0)


# --- spheres, boxes, rounded shapes ----------------------------------------------------------

def test_sphere_random_rays(rng):
    sphere = translated(Sphere(1.5), (0.3, -0.2, 0.1))
    centre = np.array((0.3, -0.2, 0.1))
    hits = 0
    for _ in range(200):
        origin, direction = random_ray_at(rng, 1.0)
        expected = sphere_hit(origin, direction, centre, 1.5)
        hit = ray_cast(sphere, origin, direction)
        if expected is None:
            assert hit is None
            continue
        hits += 1
        assert hit.t == pytest.approx(expected, abs=POLY)
        assert_on_ray(hit, origin, direction)
        np.testing.assert_allclose(hit.normal, (hit.point - centre) / 1.5, atol=POLY)
        assert hit.status is Status.CONVERGED
    assert hits > 100


def test_direction_need_not_be_unit():
    # From x = -5 toward the unit sphere with a direction of length 4: the hit at x = -1 is t = 1.
    hit = ray_cast(Sphere(1.0), (-5.0, 0.0, 0.0), (4.0, 0.0, 0.0))
    assert hit.t == pytest.approx(1.0, abs=POLY)
    np.testing.assert_allclose(hit.point, (-1.0, 0.0, 0.0), atol=POLY)
    np.testing.assert_allclose(hit.normal, (-1.0, 0.0, 0.0), atol=POLY)


@pytest.mark.parametrize("axis", range(3))
@pytest.mark.parametrize("sign", (-1.0, 1.0))
def test_box_faces(axis, sign):
    half = np.array((1.0, 2.0, 0.5))
    origin = np.array((0.3, -0.4, 0.2))
    origin[axis] = 10.0 * sign
    direction = np.zeros(3)
    direction[axis] = -sign
    hit = ray_cast(Box(half), origin, direction)
    assert hit.t == pytest.approx(10.0 - half[axis], abs=POLY)
    np.testing.assert_allclose(hit.normal, np.eye(3)[axis] * sign, atol=POLY)


def test_box_random_rays_match_slab_method(rng):
    half = np.array((1.0, 0.5, 0.7))
    for _ in range(200):
        origin, direction = random_ray_at(rng, 1.0)
        expected, normal = box_hit(origin, direction, -half, half)
        hit = ray_cast(Box(half), origin, direction)
        if expected is None:
            assert hit is None
            continue
        assert hit.t == pytest.approx(expected, abs=POLY)
        np.testing.assert_allclose(hit.normal, normal, atol=1e-9)


def test_box_edge_hit_normal_in_the_edge_cone():
    # Aimed at the edge x = y = 1 (z = 0.3) along the diagonal of the xy plane.
    hit = ray_cast(Box((1.0, 1.0, 1.0)), (4.0, 4.0, 0.3), (-1.0, -1.0, 0.0))
    assert hit.t == pytest.approx(3.0, abs=POLY)
    np.testing.assert_allclose(hit.point, (1.0, 1.0, 0.3), atol=POLY)
    # Any unit normal between +x and +y is valid at the edge.
    assert hit.normal[0] >= -POLY and hit.normal[1] >= -POLY
    assert hit.normal[2] == pytest.approx(0.0, abs=POLY)
    assert np.linalg.norm(hit.normal) == pytest.approx(1.0)


def test_box_corner_hit():
    hit = ray_cast(Box((1.0, 2.0, 3.0)), (3.0, 4.0, 5.0), (-1.0, -1.0, -1.0))
    assert hit.t == pytest.approx(2.0, abs=POLY)
    np.testing.assert_allclose(hit.point, (1.0, 2.0, 3.0), atol=POLY)
    assert np.all(hit.normal >= -POLY)  # in the corner's normal cone


def test_capsule_side_and_caps():
    capsule = Capsule(0.5, 1.0)
    # Side: horizontal ray at height 0.4 reaches the cylinder part at x = -0.5.
    hit = ray_cast(capsule, (-5.0, 0.0, 0.4), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(4.5, abs=POLY)
    np.testing.assert_allclose(hit.normal, (-1.0, 0.0, 0.0), atol=POLY)
    # Cap: vertical ray at x = 0.3 meets the top hemisphere at z = 1 + sqrt(0.25 - 0.09) = 1.4.
    hit = ray_cast(capsule, (0.3, 0.0, 5.0), (0.0, 0.0, -1.0))
    assert hit.t == pytest.approx(3.6, abs=POLY)
    np.testing.assert_allclose(hit.normal, (0.6, 0.0, 0.8), atol=POLY)


def test_capsule_random_rays(rng):
    capsule = Capsule(0.5, 1.0)
    for _ in range(100):
        origin, direction = random_ray_at(rng, 1.0)
        # Capsule = union over the segment of spheres: the entry is the earliest sphere/side hit.
        candidates = [sphere_hit(origin, direction, (0, 0, z), 0.5) for z in (-1.0, 1.0)]
        o2, d2 = origin[:2], direction[:2]
        a, b, c = d2 @ d2, o2 @ d2, o2 @ o2 - 0.25
        if a > 0 and b * b - a * c >= 0:
            t = (-b - math.sqrt(b * b - a * c)) / a
            if t >= 0 and abs(origin[2] + t * direction[2]) <= 1.0:
                candidates.append(t)
        candidates = [t for t in candidates if t is not None]
        hit = ray_cast(capsule, origin, direction)
        if not candidates:
            assert hit is None
            continue
        assert hit.t == pytest.approx(min(candidates), abs=POLY)


def test_round_box_face_and_corner():
    rb = RoundBox((1.0, 1.0, 1.0), 0.25)
    hit = ray_cast(rb, (0.2, 0.3, 9.0), (0.0, 0.0, -1.0))
    assert hit.t == pytest.approx(9.0 - 1.25, abs=POLY)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, 1.0), atol=POLY)
    # Along the diagonal the hit is on the corner sphere of radius 0.25 around (1, 1, 1).
    hit = ray_cast(rb, (5.0, 5.0, 5.0), (-1.0, -1.0, -1.0))
    assert hit.t == pytest.approx(4.0 - 0.25 / math.sqrt(3.0), abs=POLY)
    np.testing.assert_allclose(hit.normal, unit((1, 1, 1)), atol=POLY)


def test_ellipsoid_random_rays(rng):
    radii = np.array((2.0, 1.0, 0.5))
    for _ in range(100):
        origin, direction = random_ray_at(rng, 1.0)
        # In coordinates scaled by 1/radii the ellipsoid is the unit sphere; t is unchanged.
        expected = sphere_hit(origin / radii, direction / radii, np.zeros(3), 1.0)
        hit = ray_cast(Ellipsoid(radii), origin, direction)
        if expected is None:
            assert hit is None
            continue
        assert hit.t == pytest.approx(expected, abs=POLY)
        np.testing.assert_allclose(hit.normal, unit(hit.point / radii ** 2), atol=POLY)


# --- cylinders and cones -------------------------------------------------------------------

def test_cylinder_caps():
    hit = ray_cast(Cylinder(1.0, 2.0), (0.5, -0.3, 7.0), (0.0, 0.0, -2.0))
    assert hit.t == pytest.approx(2.5, abs=POLY)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, 1.0), atol=POLY)
    hit = ray_cast(Cylinder(1.0, 2.0), (0.5, -0.3, -7.0), (0.02, 0.0, 1.0))
    assert hit.t == pytest.approx(5.0, abs=POLY)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, -1.0), atol=POLY)


def test_cylinder_sides(rng):
    for _ in range(20):
        y, z = rng.uniform(-0.95, 0.95), rng.uniform(-1.9, 1.9)
        hit = ray_cast(Cylinder(1.0, 2.0), (-5.0, y, z), (1.0, 0.0, 0.0))
        x = -math.sqrt(1.0 - y * y)
        assert hit.t == pytest.approx(5.0 + x, abs=CURVED)
        np.testing.assert_allclose(hit.normal, (x, y, 0.0), atol=RULED_NORMAL)


def test_cone_apex_base_and_rim():
    cone = Cone(1.0, 1.0)
    # Straight down onto the apex (0, 0, 1).
    hit = ray_cast(cone, (0.0, 0.0, 4.0), (0.0, 0.0, -1.0))
    assert hit.t == pytest.approx(3.0, abs=POLY)
    # Up into the base disc at z = -1.
    hit = ray_cast(cone, (0.4, 0.2, -6.0), (0.0, 0.0, 1.0))
    assert hit.t == pytest.approx(5.0, abs=POLY)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, -1.0), atol=POLY)
    # In the base plane toward the axis: the base rim at (-1, 0, -1).
    hit = ray_cast(cone, (-3.0, 0.0, -1.0), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(2.0, abs=CURVED)
    # Diagonally onto the rim point (0, -1, -1) from below and outside.
    hit = ray_cast(cone, (0.0, -3.0, -3.0), (0.0, 1.0, 1.0))
    assert hit.t == pytest.approx(2.0, abs=CURVED)


def test_cone_sides(rng):
    cone = Cone(1.0, 1.0)
    for _ in range(20):
        z = rng.uniform(-0.9, 0.5)
        radius = (1.0 - z) / 2.0  # radius of the horizontal section at height z
        y = rng.uniform(-0.9, 0.9) * radius
        hit = ray_cast(cone, (-5.0, y, z), (1.0, 0.0, 0.0))
        x = -math.sqrt(radius * radius - y * y)
        assert hit.t == pytest.approx(5.0 + x, abs=CONE_SIDE * 2.0)  # size 2
        # The side rises 2 per unit of radius: its normal is (2 x/r, 2 y/r, 1) normalised.
        np.testing.assert_allclose(hit.normal, unit((2 * x / radius, 2 * y / radius, 1.0)),
                                   atol=RULED_NORMAL)


# --- grazing, near misses, inside, surface, away, max_t ----------------------------------------

def test_graze_sphere_tangent():
    # Tangent to the unit sphere at (0, 1, 0). A tangent ray's hit parameter is ill-conditioned:
    # at t = 5 - s the ray is only s²/2 from the sphere, so stopping within the termination
    # tolerance 1e-12 of the surface leaves s ~ sqrt(2e-12) ~ 1.4e-6. The point is on the surface.
    hit = ray_cast(Sphere(1.0), (-5.0, 1.0, 0.0), (1.0, 0.0, 0.0))
    assert hit is not None
    assert hit.t == pytest.approx(5.0, abs=1e-5)
    assert np.linalg.norm(hit.point) == pytest.approx(1.0, abs=1e-12)


def test_graze_box_along_face():
    # Sliding in the plane of the top face: enters at the face's edge x = -1.
    hit = ray_cast(Box((1.0, 1.0, 1.0)), (-5.0, 0.2, 1.0), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(4.0, abs=POLY)


@pytest.mark.parametrize("offset, hits", [(1e-9, False), (-1e-9, True)])
def test_near_miss_sphere(offset, hits):
    hit = ray_cast(Sphere(1.0), (-5.0, 1.0 + offset, 0.0), (1.0, 0.0, 0.0))
    assert (hit is not None) == hits


@pytest.mark.parametrize("offset, hits", [(1e-9, False), (-1e-9, True)])
def test_near_miss_box_edge(offset, hits):
    # Diagonal ray passing the edge x = y = 1 at distance ~offset.
    d = offset * math.sqrt(2.0)
    hit = ray_cast(Box((1.0, 1.0, 1.0)), (1.0 + d + 3.0, 1.0 + d - 3.0, 0.0), (-1.0, 1.0, 0.0))
    assert (hit is not None) == hits


@pytest.mark.parametrize("offset, hits", [(1e-9, False), (-1e-9, True)])
def test_near_miss_capsule(offset, hits):
    hit = ray_cast(Capsule(0.5, 1.0), (-5.0, 0.5 + offset, 0.3), (1.0, 0.0, 0.0))
    assert (hit is not None) == hits


@pytest.mark.parametrize("shape", [Sphere(1.0), Box((1.0, 1.0, 1.0)), Cylinder(1.0, 1.0),
                                   Ellipsoid((1.0, 2.0, 3.0)), Cone(1.0, 1.0)])
def test_origin_inside_hits_at_zero_with_zero_normal(shape):
    hit = ray_cast(shape, (0.1, -0.05, -0.2), (0.3, 1.0, -0.2))
    assert hit.t == 0.0
    np.testing.assert_array_equal(hit.normal, np.zeros(3))
    np.testing.assert_array_equal(hit.point, (0.1, -0.05, -0.2))
    assert hit.status is Status.INTERSECTING


@pytest.mark.parametrize("shape, origin", [
    (Box((1.0, 1.0, 1.0)), (1.0, 0.2, 0.3)),
    (Sphere(1.0), (1.0, 0.0, 0.0)),
    (Capsule(0.5, 1.0), (0.5, 0.0, 0.0)),
])
@pytest.mark.parametrize("direction", [(-1.0, 0.0, 0.0), (0.0, 1.0, 0.0)])
def test_origin_on_surface_hits_at_zero(shape, origin, direction):
    # Shapes are closed sets: a ray starting on the surface meets the shape at t = 0.
    hit = ray_cast(shape, origin, direction)
    assert hit is not None and hit.t == 0.0


@pytest.mark.parametrize("shape", [Sphere(1.0), Box((1.0, 1.0, 1.0)), Cylinder(1.0, 1.0),
                                   Hull(np.eye(3))])
def test_pointing_away_misses(shape):
    assert ray_cast(shape, (-5.0, 0.1, 0.2), (-1.0, 0.0, 0.0)) is None


def test_max_t_limits_the_ray():
    box = Box((1.0, 1.0, 1.0))
    assert ray_cast(box, (-5.0, 0.0, 0.0), (1.0, 0.0, 0.0), max_t=3.9) is None
    assert ray_cast(box, (-5.0, 0.0, 0.0), (1.0, 0.0, 0.0), max_t=4.0).t == pytest.approx(4.0)
    assert ray_cast(Sphere(1.0), (-5.0, 0.0, 0.0), (2.0, 0.0, 0.0), max_t=1.99) is None
    assert ray_cast(box, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), max_t=0.0).t == 0.0


# --- composites and transforms -------------------------------------------------------------

def test_non_uniformly_scaled_rotated_box_matches_slab_method(rng):
    for _ in range(50):
        rotation = random_rotation(rng)
        scale = rng.uniform(0.3, 3.0, 3)
        offset = rng.normal(size=3)
        shape = posed(Box((1.0, 0.5, 0.25)), rotation, offset, scale)
        origin, direction = random_ray_at(rng, 1.5, distance=8.0)
        origin = origin + offset
        # In the box's own frame the ray is M⁻¹(origin - offset) + t M⁻¹ direction.
        inv = np.linalg.inv(rotation @ np.diag(scale))
        expected, _ = box_hit(inv @ (origin - offset), inv @ direction,
                              -np.array((1.0, 0.5, 0.25)), np.array((1.0, 0.5, 0.25)))
        hit = ray_cast(shape, origin, direction)
        if expected is None:
            assert hit is None
            continue
        assert hit.t == pytest.approx(expected, abs=POLY)
        # The normal is M⁻ᵀ of the local face normal: perpendicular to the face in world.
        assert np.linalg.norm(hit.normal) == pytest.approx(1.0)


def test_scaled_sphere_is_an_ellipsoid(rng):
    rotation = random_rotation(rng)
    shape = posed(Sphere(1.0), rotation, (1.0, 2.0, 3.0), (2.0, 1.0, 0.5))
    for _ in range(50):
        origin, direction = random_ray_at(rng, 1.0)
        origin = origin + (1.0, 2.0, 3.0)
        local_o = rotation.T @ (origin - (1.0, 2.0, 3.0)) / (2.0, 1.0, 0.5)
        local_d = rotation.T @ direction / (2.0, 1.0, 0.5)
        expected = sphere_hit(local_o, local_d, np.zeros(3), 1.0)
        hit = ray_cast(shape, origin, direction)
        if expected is None:
            assert hit is None
            continue
        assert hit.t == pytest.approx(expected, abs=POLY)
        local_point = rotation.T @ (hit.point - (1.0, 2.0, 3.0)) / (2.0, 1.0, 0.5)
        normal = rotation @ (local_point / (2.0, 1.0, 0.5))  # gradient of |M⁻¹(x - c)|²
        np.testing.assert_allclose(hit.normal, unit(normal), atol=POLY)


def test_sheared_box():
    # Shear x += z: the top face (z = 1) moves to x in [0, 2]; a vertical ray at x = 1.5 hits it.
    m = np.eye(4)
    m[0, 2] = 1.0
    sheared = Transformed(Box((1.0, 1.0, 1.0)), m)
    hit = ray_cast(sheared, (1.5, 0.0, 5.0), (0.0, 0.0, -1.0))
    assert hit.t == pytest.approx(4.0, abs=POLY)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, 1.0), atol=POLY)
    # The face x = 1 becomes the tilted plane x - z = 1, normal M⁻ᵀ(1, 0, 0) = (1, 0, -1).
    hit = ray_cast(sheared, (5.0, 0.0, 0.5), (-1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(3.5, abs=POLY)
    np.testing.assert_allclose(hit.normal, unit((1.0, 0.0, -1.0)), atol=POLY)


def test_minkowski_sum_of_boxes_is_a_box(rng):
    shape = MinkowskiSum(Box((1.0, 0.5, 0.25)), translated(Box((0.5, 0.5, 0.5)), (1, 0, 0)))
    for _ in range(50):
        origin, direction = random_ray_at(rng, 1.5)
        expected, _ = box_hit(origin, direction, np.array((-0.5, -1.0, -0.75)),
                              np.array((2.5, 1.0, 0.75)))
        hit = ray_cast(shape, origin, direction)
        assert (hit is None) == (expected is None)
        if hit is not None:
            assert hit.t == pytest.approx(expected, abs=POLY)


def test_hull_of_two_spheres_is_a_capsule(rng):
    hull = ConvexHullOf(translated(Sphere(0.5), (0, 0, -1)), translated(Sphere(0.5), (0, 0, 1)))
    capsule = Capsule(0.5, 1.0)
    for _ in range(50):
        origin, direction = random_ray_at(rng, 1.0)
        a, b = ray_cast(hull, origin, direction), ray_cast(capsule, origin, direction)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.t == pytest.approx(b.t, abs=POLY)


def test_minkowski_box_sphere_matches_round_box(rng):
    summed = MinkowskiSum(Box((1.0, 0.5, 0.7)), Sphere(0.2))
    rounded = RoundBox((1.0, 0.5, 0.7), 0.2)
    for _ in range(50):
        origin, direction = random_ray_at(rng, 1.0)
        a, b = ray_cast(summed, origin, direction), ray_cast(rounded, origin, direction)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.t == pytest.approx(b.t, abs=POLY)
            np.testing.assert_allclose(a.normal, b.normal, atol=1e-9)


def test_hull_cube_points_is_a_box(rng):
    cube = Hull(np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float))
    for _ in range(50):
        origin, direction = random_ray_at(rng, 1.5)
        expected, normal = box_hit(origin, direction, -np.ones(3), np.ones(3))
        hit = ray_cast(cube, origin, direction)
        assert (hit is None) == (expected is None)
        if hit is not None:
            assert hit.t == pytest.approx(expected, abs=POLY)
            np.testing.assert_allclose(hit.normal, normal, atol=1e-9)


@pytest.mark.parametrize("shape, t", [
    (Point(), 5.0), (Segment(1.0), 5.0), (Rectangle((1.0, 1.0)), 5.0), (Disc(1.0), 5.0)])
def test_degenerate_shapes(shape, t):
    # Along -x through the origin; flat shapes seen edge-on still have the origin's line.
    hit = ray_cast(shape, (5.0, 0.0, 0.0), (-1.0, 0.0, 0.0))
    expected = {"rectangle": 4.0, "disc": 4.0}.get(shape.kind, t)
    assert hit.t == pytest.approx(expected, abs=CURVED)


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_relative_accuracy_at_any_scale(scale):
    hit = ray_cast(Box((scale, scale, scale)), (-5 * scale, 0.1 * scale, 0.0), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(4 * scale, rel=1e-12)
    hit = ray_cast(Sphere(scale), (-5 * scale, 0.0, 0.0), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(4 * scale, rel=1e-12)


# --- warm start -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [Capsule(0.5, 1.0), Ellipsoid((1.0, 2.0, 1.5)),
                                   Hull(np.random.default_rng(5).normal(size=(50, 3)))])
def test_cache_makes_coherent_hits_cheaper(shape):
    # Starting from the last normal, the first clip lands next to the new hit point.
    cache = SeparationCache()
    warm = cold = 0
    for k in range(30):
        origin, direction = (-5.0, 0.01 * k, 0.2 + 0.01 * k), (1.0, 0.02, 0.0)
        a = ray_cast(shape, origin, direction, cache=cache)
        b = ray_cast(shape, origin, direction)
        assert a.t == pytest.approx(b.t, abs=POLY)
        warm, cold = warm + a.iterations, cold + b.iterations
    assert cache.calls == 30
    assert warm < cold


@pytest.mark.parametrize("shape", [Box((1.0, 1.0, 1.0)), Capsule(0.5, 1.0), Cylinder(1.0, 1.0)])
def test_cache_rejects_coherent_misses_at_once(shape):
    # Rays passing above the shape: the last separating axis usually still separates.
    cache = SeparationCache()
    for k in range(30):
        assert ray_cast(shape, (-5.0, 3.0 + 0.01 * k, 0.2), (1.0, 0.02, 0.0), cache=cache) is None
    assert cache.hits >= 20


def test_cache_gives_the_same_hits(rng):
    cache = SeparationCache()
    capsule = posed(Capsule(0.5, 1.0), random_rotation(rng), (0.2, 0.1, 0.0), (1.0, 2.0, 1.0))
    for k in range(20):
        origin, direction = (-5.0, 0.01 * k, 0.02 * k), (1.0, 0.05, 0.0)
        a = ray_cast(capsule, origin, direction, cache=cache)
        b = ray_cast(capsule, origin, direction)
        assert a.t == pytest.approx(b.t, abs=CURVED)


# --- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"direction": (0.0, 0.0, 0.0)}, "direction must be a non-zero"),
    ({"origin": (math.nan, 0.0, 0.0)}, "origin must be finite"),
    ({"origin": (math.inf, 0.0, 0.0)}, "origin must be finite"),
    ({"direction": (1.0, math.nan, 0.0)}, "direction must be finite"),
    ({"origin": (1.0, 2.0)}, "origin must be 3 numbers"),
    ({"max_t": -1.0}, "max_t"),
    ({"max_t": math.nan}, "max_t"),
    ({"max_t": "far"}, "max_t"),
])
def test_bad_input_raises(kwargs, message):
    args = {"origin": (-5.0, 0.0, 0.0), "direction": (1.0, 0.0, 0.0)}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        ray_cast(Sphere(1.0), **args)


def test_non_shape_raises():
    with pytest.raises(ValueError, match="shape"):
        ray_cast("sphere", (0, 0, 0), (1, 0, 0))
