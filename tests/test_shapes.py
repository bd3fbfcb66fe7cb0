"""Support mappings: each returns a point of its shape that is farthest along the direction.

Each primitive is checked against an independent membership test and a dense sample of its
points (drawn from its definition, not from its support mapping).
"""

import math

import numpy as np
import pytest

from convex_tools.core import (Box, Capsule, Cone, ConvexHullOf, Cylinder, Disc, Ellipsoid,
                               MinkowskiSum, Point, Rectangle, RoundBox, Segment, Sphere,
                               Transformed, posed, translated)

from geometry_helpers import random_rotation, rigid

TOL = 1e-12


def sample_box(rng, n, he):
    return rng.uniform(-1, 1, size=(n, 3)) * he


def sample_ball(rng, n, r):
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    return d * r * rng.uniform(0, 1, size=(n, 1)) ** (1 / 3)


def sample_surface_sphere(rng, n, r):
    d = rng.normal(size=(n, 3))
    return d / np.linalg.norm(d, axis=1)[:, None] * r


def sample_cylinder(rng, n, r, h, apex_scale=None):
    theta = rng.uniform(0, 2 * np.pi, n)
    rad = np.sqrt(rng.uniform(0, 1, n)) * r
    z = rng.uniform(-h, h, n)
    if apex_scale:  # a cone: the radius shrinks linearly to 0 at z = +h
        rad = rad * (h - z) / (2 * h)
    return np.stack([rad * np.cos(theta), rad * np.sin(theta), z], axis=1)


# (shape, points sampled from its definition, membership test)
def cases(rng):
    n = 4000
    yield Point(), np.zeros((1, 3)), lambda p: np.allclose(p, 0)
    yield (Segment(1.5), np.stack([np.zeros(n), np.zeros(n), rng.uniform(-1.5, 1.5, n)], 1),
           lambda p: abs(p[0]) < TOL and abs(p[1]) < TOL and abs(p[2]) <= 1.5 + TOL)
    yield (Sphere(2.0), sample_surface_sphere(rng, n, 2.0),
           lambda p: np.linalg.norm(p) <= 2.0 + TOL)
    radii = np.array([1.0, 2.0, 0.5])
    yield (Ellipsoid(radii), sample_surface_sphere(rng, n, 1.0) * radii,
           lambda p: np.sum((p / radii) ** 2) <= 1 + 1e-12)
    he = np.array([1.0, 0.5, 2.0])
    yield (Box(he), sample_box(rng, n, he),
           lambda p: np.all(np.abs(p) <= he + TOL))
    yield (Rectangle((1.0, 3.0)), sample_box(rng, n, np.array([1.0, 3.0, 0.0])),
           lambda p: abs(p[0]) <= 1 + TOL and abs(p[1]) <= 3 + TOL and p[2] == 0)
    yield (Disc(1.5), sample_cylinder(rng, n, 1.5, 0.0),
           lambda p: math.hypot(p[0], p[1]) <= 1.5 + TOL and p[2] == 0)
    seg = np.stack([np.zeros(n), np.zeros(n), rng.uniform(-1, 1, n)], 1)
    yield (Capsule(0.5, 1.0), seg + sample_surface_sphere(rng, n, 0.5),
           lambda p: math.hypot(p[0], p[1], max(abs(p[2]) - 1.0, 0.0)) <= 0.5 + TOL)
    yield (Cylinder(1.0, 2.0), sample_cylinder(rng, n, 1.0, 2.0),
           lambda p: math.hypot(p[0], p[1]) <= 1 + TOL and abs(p[2]) <= 2 + TOL)
    yield (Cone(1.0, 1.0), sample_cylinder(rng, n, 1.0, 1.0, apex_scale=True),
           lambda p: abs(p[2]) <= 1 + TOL and math.hypot(p[0], p[1]) <= (1 - p[2]) / 2 + TOL)
    yield (RoundBox((1.0, 1.0, 0.5), 0.25),
           sample_box(rng, n, np.array([1.0, 1.0, 0.5])) + sample_surface_sphere(rng, n, 0.25),
           lambda p: np.linalg.norm(np.maximum(np.abs(p) - [1, 1, 0.5], 0)) <= 0.25 + TOL)


def directions(rng, n=200):
    d = rng.normal(size=(n, 3))
    axes = np.vstack([np.eye(3), -np.eye(3), [[1, 1, 0], [0, -1, 1], [1e-9, 0, 1]]])
    return np.vstack([axes, d])


def test_every_primitive_support_is_a_farthest_point_of_the_shape(rng):
    for shape, samples, contains in cases(rng):
        for d in directions(rng):
            s = shape.support(d)
            assert contains(s), (shape, d, s)
            # No sampled point of the shape reaches farther along d.
            assert s @ d >= np.max(samples @ d) - 1e-9 * np.linalg.norm(d), (shape, d)


def test_rounded_shapes_are_their_core_plus_a_sphere(rng):
    for shape in (Sphere(1.5), Capsule(0.5, 2.0), RoundBox((1, 2, 3), 0.5),
                  MinkowskiSum(Box((1, 1, 1)), Sphere(0.25)),
                  posed(Capsule(1.0, 1.0), random_rotation(rng), (1, 2, 3), scale=2.0)):
        for d in directions(rng, 50):
            u = d / np.linalg.norm(d)
            expected = shape.core.support(d) + shape.margin * u
            # Compare heights along d: ties on flat core faces make the points themselves vary.
            assert shape.support(d) @ u == pytest.approx(expected @ u, abs=1e-12)


def test_similarity_transform_scales_the_margin_but_a_squash_removes_it():
    assert posed(Sphere(1.0), scale=3.0).margin == pytest.approx(3.0)
    squashed = posed(Sphere(1.0), scale=(1.0, 1.0, 0.5))
    assert squashed.margin == 0.0 and squashed.core is squashed


def test_transformed_support_matches_the_mapped_support_under_shear_and_scale(rng):
    m = rigid(random_rotation(rng), (3, -2, 1))
    m[:3, :3] = m[:3, :3] @ np.array([[2.0, 0.5, 0], [0, 0.3, 0.2], [0, 0, 1.5]])  # shear + scale
    box = Transformed(Box((1, 2, 0.5)), m)
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-2, 2) for sz in (-0.5, 0.5)])
    world = corners @ m[:3, :3].T + m[:3, 3]
    for d in directions(rng):
        assert box.support(d) @ d == pytest.approx(np.max(world @ d), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("linear", ["rotation", "shear", "identity"])
def test_inlined_transformed_supports_equal_the_composed_mapping(rng, linear):
    # Transformed inlines the primitives' mappings for speed: each must give what composing
    # B s(Bᵀ v) + c gives, including the zero direction and directions along the local axes.
    m = rigid(random_rotation(rng), (3, -2, 1))
    if linear == "shear":
        m[:3, :3] = m[:3, :3] @ np.array([[2.0, 0.5, 0], [0, 0.3, 0.2], [0, 0, 1.5]])
    elif linear == "identity":
        m[:3, :3] = np.eye(3)
    b, c = m[:3, :3], m[:3, 3]
    local_axes = np.vstack([b @ axis for axis in np.eye(3)]) if linear != "identity" else \
        np.eye(3)
    dirs = np.vstack([directions(rng, 50), [[0.0, 0.0, 0.0]], local_axes, -local_axes])
    inverse = np.linalg.inv(b)
    for shape, _, inside in cases(rng):
        posed_shape = Transformed(shape, m)
        for d in dirs:
            expected = b @ shape.support(b.T @ d) + c
            got = np.array(posed_shape.support_xyz(*map(float, d)))
            # Along a local axis the support is a tie (a box face): any point of it will do, so
            # compare how far the point reaches and that it is a point of the shape.
            assert got @ d == pytest.approx(expected @ d, rel=1e-12, abs=1e-12)
            local = inverse @ (got - c)
            local[np.abs(local) < 1e-12] = 0.0     # flat shapes test z == 0 exactly
            assert inside(local)
            if np.all(np.abs(b.T @ d) > 1e-6):
                np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_aabb_of_a_rotated_scaled_box_is_the_bound_of_its_corners(rng):
    m = rigid(random_rotation(rng), (1, 2, 3))
    m[:3, :3] = m[:3, :3] @ np.diag([1.0, 3.0, 0.2])
    shape = Transformed(Box((1, 1, 1)), m)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    world = corners @ m[:3, :3].T + m[:3, 3]
    lower, upper = shape.aabb()
    np.testing.assert_allclose(lower, world.min(0), atol=1e-12)
    np.testing.assert_allclose(upper, world.max(0), atol=1e-12)


def test_aabb_of_a_translated_sphere():
    lower, upper = translated(Sphere(2.0), (1, 2, 3)).aabb()
    np.testing.assert_allclose(lower, [-1, 0, 1])
    np.testing.assert_allclose(upper, [3, 4, 5])


def test_nested_transforms_fold_into_one_matrix(rng):
    inner = posed(Box((1, 2, 3)), random_rotation(rng), (1, 0, 0))
    m2 = rigid(random_rotation(rng), (0, 5, 0)) @ np.diag([1.0, 2.0, 1.0, 1.0])
    outer = Transformed(inner, m2)
    assert not isinstance(outer.shape, Transformed)
    for d in directions(rng, 20):
        expected = m2[:3, :3] @ inner.support(m2[:3, :3].T @ d) + m2[:3, 3]
        np.testing.assert_allclose(outer.support(d), expected, atol=1e-12)


def test_convex_hull_of_two_shapes_takes_the_farther_support():
    shape = ConvexHullOf(translated(Sphere(1.0), (-3, 0, 0)), translated(Box((1, 1, 1)), (3, 0, 0)))
    np.testing.assert_allclose(shape.support([-1, 0, 0]), [-4, 0, 0])
    np.testing.assert_allclose(shape.support([1, 0.001, 0.001]), [4, 1, 1])
    np.testing.assert_allclose(shape.center_xyz(), [0, 0, 0])


def test_zero_direction_returns_a_point_of_the_shape_without_nan():
    for shape in (Sphere(1), Ellipsoid((1, 2, 3)), Cylinder(1, 1), Cone(1, 1), Disc(1),
                  Capsule(1, 1), RoundBox((1, 1, 1), 1), posed(Sphere(1), scale=(1, 2, 3))):
        assert np.all(np.isfinite(shape.support([0, 0, 0])))


def test_cone_apex_and_base_rim():
    cone = Cone(1.0, 1.0)
    np.testing.assert_allclose(cone.support([0, 0, 1]), [0, 0, 1])
    np.testing.assert_allclose(cone.support([1, 0, 0]), [1, 0, -1])
    # Exactly along the slant normal every point of the slant edge is a support: either end is.
    assert cone.support([2, 0, 1]) @ [2, 0, 1] == pytest.approx(1.0)


@pytest.mark.parametrize("make, message", [
    (lambda: Sphere(-1), "radius"),
    (lambda: Sphere(float("nan")), "radius"),
    (lambda: Box((1, float("inf"), 1)), "half_extents"),
    (lambda: Box((1, 1)), "half_extents"),
    (lambda: Ellipsoid((1, -2, 3)), "radii"),
    (lambda: Capsule(1, -1), "half_height"),
    (lambda: Cylinder(-1, 1), "radius"),
    (lambda: Cone(1, float("nan")), "half_height"),
    (lambda: RoundBox((1, 1, 1), -0.1), "radius"),
    (lambda: Rectangle((1, 2, 3)), "half_extents"),
    (lambda: Segment("long"), "half_length"),
    (lambda: Transformed(Box((1, 1, 1)), np.diag([1.0, 0.0, 1.0, 1.0])), "singular"),
    (lambda: Transformed(Box((1, 1, 1)), np.full((4, 4), np.nan)), "finite"),
    (lambda: Transformed(Box((1, 1, 1)), np.eye(3)[:2]), "4x4"),
    (lambda: Transformed("box", np.eye(4)), "shape"),
    (lambda: MinkowskiSum(Box((1, 1, 1)), None), "b"),
])
def test_constructors_reject_bad_input_naming_the_problem(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_support_rejects_a_nan_direction():
    with pytest.raises(ValueError, match="direction"):
        Sphere(1).support([np.nan, 0, 0])


def test_shapes_are_immutable():
    box = Box((1, 2, 3))
    with pytest.raises(AttributeError):
        box._he = (9, 9, 9)


def test_tiny_but_invertible_matrix_is_accepted():
    shape = Transformed(Box((1, 1, 1)), np.diag([1e-6, 1e-6, 1e-6, 1.0]))
    np.testing.assert_allclose(shape.support([1, 1, 1]), [1e-6, 1e-6, 1e-6])


def test_transformed_copies_the_matrix_and_leaves_the_callers_array_alone():
    m = np.eye(4)
    m[:3, 3] = (1, 2, 3)
    shape = Transformed(Box((1, 1, 1)), m)
    m[0, 3] = 100.0                       # the caller may keep using (and changing) its array
    np.testing.assert_allclose(shape.support([1, 0, 0]), [2, 3, 4])   # corner (1,1,1) + (1,2,3)


def test_polytope_and_smooth_flags_follow_the_shape_through_transforms_and_composites():
    from convex_tools.core.hull import Hull
    rng = np.random.default_rng(8)
    pose_m = rigid(random_rotation(rng), (1, 2, 3))
    polytopes = [Point(), Segment(1.0), Box((1, 2, 3)), Rectangle((1, 2)),
                 Hull(rng.normal(size=(20, 3)))]
    smooth = [Point(), Sphere(1.0), Ellipsoid((1, 2, 3))]
    curved = [Cylinder(1, 1), Cone(1, 1), Capsule(1, 1), RoundBox((1, 1, 1), 0.5), Disc(1.0)]
    for shape in polytopes:
        assert shape.polytope and Transformed(shape, pose_m).polytope
    for shape in smooth:
        assert shape.smooth and Transformed(shape, pose_m).smooth
    for shape in curved + smooth[1:]:
        assert not shape.polytope and not Transformed(shape, pose_m).polytope
    for shape in curved + polytopes[1:]:
        assert not shape.smooth
    assert MinkowskiSum(Box((1, 1, 1)), Segment(2.0)).polytope
    assert not MinkowskiSum(Box((1, 1, 1)), Sphere(1.0)).polytope
    assert ConvexHullOf(Box((1, 1, 1)), translated(Box((1, 1, 1)), (3, 0, 0))).polytope
    assert not ConvexHullOf(Box((1, 1, 1)), Sphere(1.0)).polytope


# --- the supported range (validation.MAX_COORDINATE, MIN_SIZE) ------------------------------

@pytest.mark.parametrize("make, message", [
    # Found by adversarial probing: a scale of 1e103 raised OverflowError from the determinant
    # test, and a uniform 1e-110 was called singular although it is invertible.
    (lambda: Transformed(Box((1, 1, 1)), np.diag([1e103, 1e103, 1e103, 1.0])),
     r"matrix must have a scale .* between 1e-40 and 1e\+40 \(the supported range\)"),
    (lambda: Transformed(Box((1, 1, 1)), np.diag([1e-110, 1e-110, 1e-110, 1.0])),
     r"matrix must have a scale .* between 1e-40 and 1e\+40"),
    (lambda: translated(Sphere(1), (1e160, 0, 0)),
     r"offset must have every coordinate within ±1e\+40"),
    (lambda: Transformed(Box((1, 1, 1)), rigid(translation=(0, 0, -1e41))),
     r"matrix must have a translation with every coordinate within ±1e\+40"),
    (lambda: Sphere(1e41), r"radius must be 0 or between 1e-40 and 1e\+40"),
    (lambda: Box((1, 1e-45, 1)), r"half_extents must each be 0 or between 1e-40"),
    # Composites of shapes in range can leave it: the constructor that would says so.
    (lambda: Transformed(Box((1e30, 1e30, 1e30)), np.diag([1e30, 1e30, 1e30, 1.0])),
     r"matrix would place points of the shape 1e\+60 from the origin, beyond 1e\+40"),
    (lambda: Transformed(Box((1e-30, 1e-30, 1e-30)), np.diag([1e-30, 1e-30, 1e-30, 1.0])),
     r"matrix would make the shape 1e-60 across, below 1e-40"),
    (lambda: MinkowskiSum(Box((1e40, 1e40, 1e40)), Sphere(1e40)),
     r"b would place points of the shape 2e\+40 from the origin"),
])
def test_out_of_range_input_is_a_value_error_naming_the_argument_and_the_range(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_shapes_across_the_supported_range_are_accepted():
    # Uniform scales down to 1e-40 are invertible, not singular; zero sizes stay valid.
    tiny = Transformed(Box((1, 1, 1)), np.diag([1e-30, 1e-30, 1e-30, 1.0]))
    np.testing.assert_allclose(tiny.support([1, 1, 1]), [1e-30] * 3, rtol=1e-15)
    huge = Transformed(Sphere(1e20), rigid(translation=(1e39, 0, 0)))
    np.testing.assert_allclose(huge.support([1, 0, 0]), [1e39 + 1e20, 0, 0], rtol=1e-15)
    assert Box((1e-40, 0.0, 1e40)).half_extents.tolist() == [1e-40, 0.0, 1e40]


def test_support_accepts_any_finite_direction_length():
    # The direction is scaled by a power of two before the mapping squares it: (1e200, 0, 0)
    # overflowed to inf and the sphere answered its centre, (1e-310, 0, 0) underflowed to zero.
    for length in (1e-310, 1e-150, 1.0, 1e200, 1e308):
        np.testing.assert_allclose(Sphere(2.0).support([length, 0, 0]), [2, 0, 0])
        np.testing.assert_allclose(posed(Ellipsoid((1, 2, 3))).support([0, 0, -length]),
                                   [0, 0, -3])
