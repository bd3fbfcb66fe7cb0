"""Ray casts: closed forms for the primitives, the polished GJK ray cast for everything else.

The issue asks for exact hits on the analytic cases — 1e-9 on polytopes, 1e-7 relative on curved
surfaces — and correct unit outward normals. The closed forms (boxes, spheres, ellipsoids,
capsules, cylinders, cones, discs, rectangles, segments, points, also inside ``Transformed``)
reach rounding, ~1e-15 of the shape's size; so does the GJK ray cast once polished, which the
tests below hold to ``POLISHED``. References are computed independently, in extended precision
where the formula would lose digits in doubles.
"""

import math

import numpy as np
import pytest

from convex_tools.core import (Box, Capsule, Cone, ConvexHullOf, Cylinder, Disc, Ellipsoid, Hull,
                               MinkowskiSum, Point, Rectangle, RoundBox, SeparationCache,
                               Segment, Sphere, Status, Transformed, posed, translated)
from convex_tools.core import ray_closed_forms, ray_polish
from convex_tools.core.raycast import ray_cast

from geometry_helpers import random_rotation

POLY = 1e-9       # the bound on polytopes (and shapes with margins)
CURVED = 1e-7     # the bound on curved surfaces, relative to the shape's size
EXACT = 1e-12     # what closed forms deliver on non-grazing rays (rounding: ~1e-15)
POLISHED = 1e-10  # what the polished GJK ray cast delivers on curved surfaces (~1e-13 seen)
LD = np.longdouble  # 80-bit extended precision on x86 (64-bit mantissa): the references' floats


# --- references -------------------------------------------------------------------------------

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


def _roots(a, b, c):
    """Real roots of a t² + b t + c (extended precision, the textbook formula)."""
    if a == 0:
        return [] if b == 0 else [-c / b]
    disc = b * b - 4 * a * c
    if disc < 0:
        return []
    s = np.sqrt(disc)
    return [(-b - s) / (2 * a), (-b + s) / (2 * a)]


def _first_inside(origin, direction, candidates, inside):
    """The smallest candidate t >= 0 whose point passes ``inside`` (the entry: every boundary
    crossing is a candidate), as a double; None if none does."""
    o, d = np.asarray(origin, LD), np.asarray(direction, LD)
    for t in sorted(t for t in candidates if t >= 0):
        if inside(o + t * d):
            return float(t)
    return None


def cylinder_hit(origin, direction, radius, half):
    """Entry t into Cylinder(radius, half) and its normal: side (radial) or cap (±z)."""
    o, d = np.asarray(origin, LD), np.asarray(direction, LD)
    r, h, tol = LD(radius), LD(half), LD(1e-15) * (radius + half)
    inside = lambda p: p[0] ** 2 + p[1] ** 2 <= (r + tol) ** 2 and abs(p[2]) <= h + tol
    candidates = _roots(d[0] ** 2 + d[1] ** 2, 2 * (o[0] * d[0] + o[1] * d[1]),
                        o[0] ** 2 + o[1] ** 2 - r * r)
    if d[2] != 0:
        candidates += [(-h - o[2]) / d[2], (h - o[2]) / d[2]]
    t = _first_inside(origin, direction, candidates, inside)
    if t is None:
        return None, None
    p = o + LD(t) * d
    if abs(abs(p[2]) - h) <= tol:
        return t, np.array((0.0, 0.0, float(np.sign(p[2]))))
    return t, unit((float(p[0]), float(p[1]), 0.0))


def cone_hit(origin, direction, radius, half):
    """Entry t into Cone(radius, half) and its normal: the slant normal or the base's -z."""
    o, d = np.asarray(origin, LD), np.asarray(direction, LD)
    k, h = LD(radius) / (2 * LD(half)), LD(half)
    tol = LD(1e-15) * (radius + half)
    inside = lambda p: -h - tol <= p[2] and np.hypot(p[0], p[1]) <= k * (h - p[2]) + tol
    w0 = h - o[2]  # |xy|² = k² (h - z)², with h - z = w0 - d_z t
    candidates = _roots(d[0] ** 2 + d[1] ** 2 - k * k * d[2] ** 2,
                        2 * (o[0] * d[0] + o[1] * d[1] + k * k * w0 * d[2]),
                        o[0] ** 2 + o[1] ** 2 - k * k * w0 * w0)
    if d[2] != 0:
        candidates.append((-h - o[2]) / d[2])
    t = _first_inside(origin, direction, candidates, inside)
    if t is None:
        return None, None
    p = o + LD(t) * d
    if abs(p[2] + h) <= tol:
        return t, np.array((0.0, 0.0, -1.0))
    return t, slant_normal(p, radius, half)


def slant_normal(point, radius, half):
    """Outward normal of a cone's side at ``point``: radial out, tilted up by the slope."""
    k = radius / (2.0 * half)
    x, y = float(point[0]), float(point[1])
    rho = math.hypot(x, y)
    return unit((x / rho, y / rho, k))


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


# --- cylinders and cones ---------------------------------------------------------------------

def test_cylinder_caps():
    hit = ray_cast(Cylinder(1.0, 2.0), (0.5, -0.3, 7.0), (0.0, 0.0, -2.0))
    assert hit.t == pytest.approx(2.5, abs=EXACT)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, 1.0), atol=EXACT)
    hit = ray_cast(Cylinder(1.0, 2.0), (0.5, -0.3, -7.0), (0.02, 0.0, 1.0))
    assert hit.t == pytest.approx(5.0, abs=EXACT)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, -1.0), atol=EXACT)


def test_cylinder_sides_have_radial_normals(rng):
    for _ in range(20):
        y, z = rng.uniform(-0.95, 0.95), rng.uniform(-1.9, 1.9)
        hit = ray_cast(Cylinder(1.0, 2.0), (-5.0, y, z), (1.0, 0.0, 0.0))
        x = -math.sqrt(1.0 - y * y)
        assert hit.t == pytest.approx(5.0 + x, abs=EXACT)
        np.testing.assert_allclose(hit.normal, (x, y, 0.0), atol=EXACT)
        assert np.linalg.norm(hit.normal) == pytest.approx(1.0, abs=1e-15)


def test_cylinder_random_rays_match_reference(rng):
    hits = 0
    for _ in range(300):
        origin, direction = random_ray_at(rng, 1.0)
        expected, normal = cylinder_hit(origin, direction, 0.8, 1.2)
        hit = ray_cast(Cylinder(0.8, 1.2), origin, direction)
        assert (hit is None) == (expected is None)
        if hit is None:
            continue
        hits += 1
        assert hit.t == pytest.approx(expected, abs=EXACT)
        assert_on_ray(hit, origin, direction)
        np.testing.assert_allclose(hit.normal, normal, atol=1e-9)  # ~1e-15 but at rims
    assert hits > 70


def test_cylinder_rim_normal_is_in_the_rim_cone():
    # Diagonally onto the rim point (1, 0, 1) from above and outside: both the side and the cap
    # are entered at t = 1. The side wins ties, so the normal is radial, (1, 0, 0); any unit
    # vector between +x and +z would be valid at the rim.
    hit = ray_cast(Cylinder(1.0, 1.0), (2.0, 0.0, 2.0), (-1.0, 0.0, -1.0))
    assert hit.t == pytest.approx(1.0, abs=EXACT)
    np.testing.assert_allclose(hit.point, (1.0, 0.0, 1.0), atol=EXACT)
    np.testing.assert_allclose(hit.normal, (1.0, 0.0, 0.0), atol=EXACT)


def test_cone_apex_base_and_rim():
    cone = Cone(1.0, 1.0)
    # Straight down onto the apex (0, 0, 1): +z, the axis of the apex's normal cone.
    hit = ray_cast(cone, (0.0, 0.0, 4.0), (0.0, 0.0, -1.0))
    assert hit.t == pytest.approx(3.0, abs=EXACT)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, 1.0), atol=EXACT)
    # Up into the base disc at z = -1.
    hit = ray_cast(cone, (0.4, 0.2, -6.0), (0.0, 0.0, 1.0))
    assert hit.t == pytest.approx(5.0, abs=EXACT)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, -1.0), atol=EXACT)
    # In the base plane toward the axis: the base rim at (-1, 0, -1), on the side's slant.
    hit = ray_cast(cone, (-3.0, 0.0, -1.0), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(2.0, abs=EXACT)
    np.testing.assert_allclose(hit.normal, unit((-2.0, 0.0, 1.0)), atol=EXACT)
    # Diagonally onto the rim point (0, -1, -1) from below and outside: the base (-z) and the
    # side (0, -2, 1)/√5 are entered together; the side wins ties, inside the rim's normal cone.
    hit = ray_cast(cone, (0.0, -3.0, -3.0), (0.0, 1.0, 1.0))
    assert hit.t == pytest.approx(2.0, abs=EXACT)
    np.testing.assert_allclose(hit.normal, unit((0.0, -2.0, 1.0)), atol=EXACT)


def test_cone_apex_normal_is_in_its_normal_cone():
    # Onto the apex from a direction inside its normal cone: +z supports the cone at the apex.
    hit = ray_cast(Cone(1.0, 1.0), (0.1, 0.2, 3.0), (-0.05, -0.1, -1.0))
    assert hit.t == pytest.approx(2.0, abs=EXACT)
    np.testing.assert_allclose(hit.point, (0.0, 0.0, 1.0), atol=EXACT)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, 1.0), atol=EXACT)


def test_cone_sides_have_slant_normals(rng):
    cone = Cone(1.0, 1.0)
    for _ in range(20):
        z = rng.uniform(-0.9, 0.5)
        radius = (1.0 - z) / 2.0  # radius of the horizontal section at height z
        y = rng.uniform(-0.9, 0.9) * radius
        hit = ray_cast(cone, (-5.0, y, z), (1.0, 0.0, 0.0))
        x = -math.sqrt(radius * radius - y * y)
        assert hit.t == pytest.approx(5.0 + x, abs=EXACT)
        # The side rises 2 per unit of radius: its normal is (2 x/r, 2 y/r, 1) normalised.
        np.testing.assert_allclose(hit.normal, unit((2 * x / radius, 2 * y / radius, 1.0)),
                                   atol=EXACT)


@pytest.mark.parametrize("radius, half", [(1.0, 1.0), (0.3, 1.5), (2.0, 0.2)])
def test_cone_random_rays_match_reference(rng, radius, half):
    hits = 0
    for _ in range(300):
        origin, direction = random_ray_at(rng, 1.2)
        expected, normal = cone_hit(origin, direction, radius, half)
        hit = ray_cast(Cone(radius, half), origin, direction)
        assert (hit is None) == (expected is None)
        if hit is None:
            continue
        hits += 1
        assert hit.t == pytest.approx(expected, abs=EXACT)
        assert_on_ray(hit, origin, direction)
        np.testing.assert_allclose(hit.normal, normal, atol=1e-9)  # ~1e-15 but at the rim
    assert hits > 15


# --- closed forms against the GJK ray cast -----------------------------------------------------

PRIMITIVES = [Box((1.0, 0.5, 0.7)), Sphere(0.8), Ellipsoid((0.5, 1.0, 0.75)), Capsule(0.5, 1.0),
              Cylinder(1.0, 1.0), Cylinder(0.05, 1.0), Cone(1.0, 1.0), Cone(1.0, 0.1),
              Disc(1.0), Rectangle((1.0, 0.5))]


def random_pose(rng, scaled):
    m = np.eye(4)
    linear = random_rotation(rng)
    if scaled:
        linear = linear @ np.diag(rng.uniform(0.5, 2.0, 3))
    m[:3, :3] = linear
    m[:3, 3] = rng.uniform(-0.5, 0.5, 3)
    return m


@pytest.mark.parametrize("base", PRIMITIVES, ids=repr)
def test_closed_form_agrees_with_gjk_ray_cast(rng, base):
    # Random poses (rotated, half of them non-uniformly scaled) and random rays: both paths
    # agree on hit or miss, t and normal. The polished GJK ray cast is the reference here.
    hits = 0
    for i in range(100):
        shape = Transformed(base, random_pose(rng, scaled=i % 2 == 1))
        origin, direction = random_ray_at(rng, 0.8, distance=6.0)
        exact, reference = ray_cast(shape, origin, direction), \
            ray_cast(shape, origin, direction, method="gjk")
        assert (exact is None) == (reference is None)
        if exact is None:
            continue
        hits += 1
        assert exact.t == pytest.approx(reference.t, abs=POLISHED * np.linalg.norm(direction))
        np.testing.assert_allclose(exact.normal, reference.normal, atol=POLISHED)
        assert exact.support_calls == 0 < reference.support_calls
    assert hits >= 5


@pytest.mark.parametrize("base", [Box((1.0, 0.5, 0.7)), Cylinder(1.0, 1.0), Cone(1.0, 1.0),
                                  Capsule(0.5, 1.0), Ellipsoid((0.5, 1.0, 0.75))], ids=repr)
def test_closed_form_normals_are_unit_and_outward(rng, base):
    # Outward: the normal's support plane passes through the hit point (it supports the shape
    # there), and the ray enters against it.
    for _ in range(100):
        shape = Transformed(base, random_pose(rng, scaled=True))
        origin, direction = random_ray_at(rng, 0.8, distance=6.0)
        hit = ray_cast(shape, origin, direction)
        if hit is None:
            continue
        n = hit.normal
        assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-15)
        assert n @ direction < 0.0
        assert shape.support(n) @ n == pytest.approx(hit.point @ n, abs=EXACT * 10)


def test_subclasses_keep_the_gjk_ray_cast():
    # Dispatch is on the exact type: a subclass may change the support mapping.
    class Tube(Cylinder):
        pass

    hit = ray_cast(Tube(1.0, 1.0), (-5.0, 0.3, 0.2), (1.0, 0.0, 0.0))
    assert hit.support_calls > 0
    assert hit.t == pytest.approx(5.0 - math.sqrt(1.0 - 0.09), abs=POLISHED)
    np.testing.assert_allclose(hit.normal, (-math.sqrt(0.91), 0.3, 0.0), atol=POLISHED)


# --- grazing, near misses, inside, surface, away, max_t ----------------------------------------

def test_graze_sphere_tangent():
    # Tangent to the unit sphere at (0, 1, 0): a closed set, so the ray touches it there.
    hit = ray_cast(Sphere(1.0), (-5.0, 1.0, 0.0), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(5.0, abs=EXACT)
    np.testing.assert_allclose(hit.normal, (0.0, 1.0, 0.0), atol=EXACT)


def test_graze_box_along_face():
    # Sliding in the plane of the top face: enters at the face's edge x = -1.
    hit = ray_cast(Box((1.0, 1.0, 1.0)), (-5.0, 0.2, 1.0), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(4.0, abs=EXACT)


@pytest.mark.parametrize("shape, origin, direction, t", [
    (Cylinder(1.0, 1.0), (-5.0, 1.0, 0.3), (1.0, 0.0, 0.0), 5.0),      # along a side line
    (Cylinder(1.0, 1.0), (-5.0, 0.2, 1.0), (1.0, 0.0, 0.0), 5.0 - math.sqrt(0.96)),  # in a cap
    (Cone(1.0, 1.0), (-5.0, 0.5, 0.0), (1.0, 0.0, 0.0), 5.0),          # tangent to the side
    (Capsule(0.5, 1.0), (-5.0, 0.5, 0.3), (1.0, 0.0, 0.0), 5.0),       # along a side line
    (Ellipsoid((1.0, 2.0, 3.0)), (-5.0, 2.0, 0.0), (1.0, 0.0, 0.0), 5.0),
])
def test_grazing_rays_touch(shape, origin, direction, t):
    hit = ray_cast(shape, origin, direction)
    assert hit is not None and hit.t == pytest.approx(t, abs=1e-7)  # the touch is ill-posed
    assert np.linalg.norm(hit.normal) == pytest.approx(1.0)


NEAR_MISSES = [  # (shape, origin, direction, unit vector along which 'offset' moves the ray away)
    (Sphere(1.0), (-5.0, 1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
    (Box((1.0, 1.0, 1.0)), (4.0, -2.0, 0.0), (-1.0, 1.0, 0.0), unit((1.0, 1.0, 0.0))),  # edge
    (Capsule(0.5, 1.0), (-5.0, 0.5, 0.3), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
    (Cylinder(1.0, 1.0), (-5.0, 1.0, 0.3), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),           # side
    (Cylinder(1.0, 1.0), (4.0, 0.0, -2.0), (-1.0, 0.0, 1.0), unit((1.0, 0.0, 1.0))),    # rim
    (Cone(1.0, 1.0), (-5.0, 0.5, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),               # side
    (Cone(1.0, 1.0), (-5.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),               # apex
    (Cone(1.0, 1.0), (1.0, -3.0, 2.0), (0.0, 1.0, -1.0), (1.0, 0.0, 0.0)),              # rim
    (Ellipsoid((1.0, 2.0, 3.0)), (-5.0, 2.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
    (Disc(1.0), (-5.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),                    # edge-on
    (Segment(1.0), (-5.0, 0.0, 0.5), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
    (Point(), (-5.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
]


@pytest.mark.parametrize("shape, origin, direction, away", NEAR_MISSES,
                         ids=lambda v: repr(v) if hasattr(v, "support") else "")
@pytest.mark.parametrize("offset, hits", [(1e-9, False), (-1e-13, True)])
def test_near_miss(shape, origin, direction, away, offset, hits):
    # 1e-9 outside misses; 1e-13 inside (or on a zero-thickness shape, within its thickening)
    # hits.
    origin = np.asarray(origin) + offset * np.asarray(away)
    assert (ray_cast(shape, origin, direction) is not None) == hits


@pytest.mark.parametrize("shape, origin, direction, away",
                         [case for case in NEAR_MISSES if type(case[0]) not in (Cylinder, Cone)],
                         ids=lambda v: repr(v) if hasattr(v, "support") else "")
def test_gjk_ray_cast_resolves_near_misses_on_exact_shapes(shape, origin, direction, away):
    # The GJK ray cast resolves a 1e-9 miss where it converges exactly: polytopes, margins, flat
    # shapes, points. (On smooth surfaces without a margin it stalls ~1e-8 from the surface and
    # calls that the hit: there a 1e-9 miss is beyond it, and only closed forms resolve it.)
    origin = np.asarray(origin) + 1e-9 * np.asarray(away)
    assert ray_cast(shape, origin, direction, method="gjk") is None
    if type(shape) not in (Disc, Segment, Point):  # solid: 1e-9 inside hits
        inside = origin - 2e-9 * np.asarray(away)
        assert ray_cast(shape, inside, direction, method="gjk") is not None


INSIDE = [Sphere(1.0), Box((1.0, 1.0, 1.0)), Cylinder(1.0, 1.0), Ellipsoid((1.0, 2.0, 3.0)),
          Cone(1.0, 1.0), Capsule(0.5, 1.0), RoundBox((0.5, 0.5, 0.5), 0.2),
          posed(Cone(1.0, 1.0), scale=(2.0, 1.0, 0.5), translation=(0.0, 0.0, 0.1))]


@pytest.mark.parametrize("shape", INSIDE, ids=repr)
def test_origin_inside_hits_at_zero_with_zero_normal(shape):
    hit = ray_cast(shape, (0.1, -0.05, -0.2), (0.3, 1.0, -0.2))
    assert hit.t == 0.0
    np.testing.assert_array_equal(hit.normal, np.zeros(3))
    np.testing.assert_array_equal(hit.point, (0.1, -0.05, -0.2))
    assert hit.status is Status.INTERSECTING


ON_SURFACE = [
    (Box((1.0, 1.0, 1.0)), (1.0, 0.2, 0.3)), (Box((1.0, 1.0, 1.0)), (1.0, 1.0, 1.0)),
    (Sphere(1.0), (1.0, 0.0, 0.0)), (Capsule(0.5, 1.0), (0.5, 0.0, 0.0)),
    (Capsule(0.5, 1.0), (0.0, 0.0, 1.5)), (Cylinder(1.0, 1.0), (0.6, 0.8, 0.0)),
    (Cylinder(1.0, 1.0), (0.3, 0.2, 1.0)), (Cylinder(1.0, 1.0), (1.0, 0.0, -1.0)),
    (Cone(1.0, 1.0), (0.0, 0.0, 1.0)), (Cone(1.0, 1.0), (0.5, 0.0, 0.0)),
    (Cone(1.0, 1.0), (0.2, 0.1, -1.0)), (Cone(1.0, 1.0), (0.0, -1.0, -1.0)),
    (Ellipsoid((1.0, 2.0, 4.0)), (0.0, 0.0, 4.0)), (Disc(1.0), (0.3, 0.4, 0.0)),
    (Rectangle((1.0, 2.0)), (1.0, -2.0, 0.0)), (Segment(1.0), (0.0, 0.0, 0.5)),
    (Point(), (0.0, 0.0, 0.0)),
]


@pytest.mark.parametrize("shape, origin", ON_SURFACE, ids=lambda v: repr(v))
@pytest.mark.parametrize("direction", [(-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.3, -0.2, 1.0)])
def test_origin_on_surface_hits_at_zero(shape, origin, direction):
    # Shapes are closed sets: a ray starting on the surface meets the shape at t = 0, whichever
    # way it points.
    hit = ray_cast(shape, origin, direction)
    assert hit is not None and hit.t == 0.0
    np.testing.assert_array_equal(hit.normal, np.zeros(3))


@pytest.mark.parametrize("shape", [Sphere(1.0), Box((1.0, 1.0, 1.0)), Cylinder(1.0, 1.0),
                                   Cone(1.0, 1.0), Capsule(0.5, 1.0), Hull(np.eye(3))], ids=repr)
def test_pointing_away_misses(shape):
    assert ray_cast(shape, (-5.0, 0.1, 0.2), (-1.0, 0.0, 0.0)) is None


def test_max_t_limits_the_ray():
    box = Box((1.0, 1.0, 1.0))
    assert ray_cast(box, (-5.0, 0.0, 0.0), (1.0, 0.0, 0.0), max_t=3.9) is None
    assert ray_cast(box, (-5.0, 0.0, 0.0), (1.0, 0.0, 0.0), max_t=4.0).t == pytest.approx(4.0)
    assert ray_cast(Sphere(1.0), (-5.0, 0.0, 0.0), (2.0, 0.0, 0.0), max_t=1.99) is None
    assert ray_cast(box, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), max_t=0.0).t == 0.0


@pytest.mark.parametrize("shape", PRIMITIVES + [Point(), Segment(1.0)], ids=repr)
def test_max_t_just_short_of_the_hit_misses(shape):
    # Aimed at the middle (through the point and the segment): the hit at t is found with
    # max_t = t, and missed with max_t a hair shorter — for every closed form.
    origin, direction = (-4.0, 0.0, 0.0), (1.0, 0.0, 0.0)
    hit = ray_cast(shape, origin, direction)
    assert ray_cast(shape, origin, direction, max_t=hit.t).t == hit.t
    assert ray_cast(shape, origin, direction, max_t=hit.t * (1.0 - 1e-12)) is None


AXIS_RAYS = [  # rays with zero components: along and across the axis, through the centre
    ((0.0, 0.0, 5.0), (0.0, 0.0, -1.0)), ((0.0, 0.0, -5.0), (0.0, 0.0, 2.0)),
    ((5.0, 0.0, 0.0), (-1.0, 0.0, 0.0)), ((0.0, -5.0, 0.0), (0.0, 3.0, 0.0)),
    ((0.3, 0.2, 5.0), (0.0, 0.0, -1.0)), ((5.0, 5.0, 0.0), (-1.0, -1.0, 0.0)),
]


@pytest.mark.parametrize("shape", PRIMITIVES + [Point(), Segment(1.0), RoundBox((1, 1, 1), 0.1)],
                         ids=repr)
@pytest.mark.parametrize("origin, direction", AXIS_RAYS)
def test_zero_direction_components_give_finite_answers(shape, origin, direction):
    # Divisions by zero components (slabs parallel to the ray, a ray along the axis of the
    # side quadratic) must not leak NaN or inf; GJK is the reference.
    hit = ray_cast(shape, origin, direction)
    reference = ray_cast(shape, origin, direction, method="gjk")
    assert (hit is None) == (reference is None)
    if hit is not None:
        assert np.all(np.isfinite(hit.point)) and np.all(np.isfinite(hit.normal))
        assert hit.t == pytest.approx(reference.t, abs=POLISHED)


def test_ray_along_a_cone_generator():
    # Parallel to the generator through (1, 0, -1) and the apex: the side quadratic is linear.
    # The ray lies on the side, entering at the base rim.
    hit = ray_cast(Cone(1.0, 1.0), (2.0, 0.0, -3.0), (-1.0, 0.0, 2.0))
    assert hit.t == pytest.approx(1.0, abs=EXACT)
    # Parallel to it but outside: the line meets the double cone once, below the base: a miss.
    assert ray_cast(Cone(1.0, 1.0), (2.1, 0.0, -3.0), (-1.0, 0.0, 2.0)) is None
    # Parallel to it but inside: enters through the base.
    hit = ray_cast(Cone(1.0, 1.0), (1.9, 0.0, -3.0), (-1.0, 0.0, 2.0))
    assert hit.t == pytest.approx(1.0, abs=EXACT)
    np.testing.assert_allclose(hit.normal, (0.0, 0.0, -1.0), atol=EXACT)


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


def union_hit(parts, origin, direction):
    """First hit of the ray on a union of shapes: the earliest of their own first hits."""
    hits = [h for h in (ray_cast(p, origin, direction) for p in parts) if h is not None]
    return min(hits, key=lambda h: h.t) if hits else None


# MinkowskiSum(Cylinder(r, h), Box(a, b, c)) is a rounded rectangle extruded along z: the union
# of two boxes and four cylinders at the box's vertical edges.
R, HALF, A, B, C = 0.4, 0.6, 0.5, 0.3, 0.2
ROUNDED_PRISM = MinkowskiSum(Cylinder(R, HALF), Box((A, B, C)))
ROUNDED_PRISM_PARTS = [Box((A + R, B, HALF + C)), Box((A, B + R, HALF + C))] + [
    translated(Cylinder(R, HALF + C), (sx * A, sy * B, 0.0)) for sx in (-1, 1) for sy in (-1, 1)]
# The hull of a cone and its copy raised by S is the cone swept along that segment: a cylinder
# of the base's radius S tall, under the raised cone.
CR, CH, S = 0.7, 0.8, 0.9
TALL_CONE = ConvexHullOf(Cone(CR, CH), translated(Cone(CR, CH), (0.0, 0.0, S)))
TALL_CONE_PARTS = [translated(Cylinder(CR, S / 2), (0.0, 0.0, -CH + S / 2)),
                   translated(Cone(CR, CH), (0.0, 0.0, S))]


@pytest.mark.parametrize("shape, parts", [(ROUNDED_PRISM, ROUNDED_PRISM_PARTS),
                                          (TALL_CONE, TALL_CONE_PARTS)], ids=["sum", "hull"])
def test_polish_makes_curved_composites_exact(rng, shape, parts, monkeypatch):
    # No closed form for these: the GJK ray cast alone stalls on their curved sides (t within
    # ~1e-7, normals within ~1e-3); its polish brings both to rounding.
    rays = [random_ray_at(rng, 0.6) for _ in range(150)]
    errors = {}
    for steps in (0, ray_polish.MAX_POLISH_STEPS):
        monkeypatch.setattr(ray_polish, "MAX_POLISH_STEPS", steps)
        t_error = n_error = 0.0
        for origin, direction in rays:
            hit, expected = ray_cast(shape, origin, direction), union_hit(parts, origin, direction)
            assert (hit is None) == (expected is None)
            if hit is not None:
                t_error = max(t_error, abs(hit.t - expected.t))
                n_error = max(n_error, np.linalg.norm(hit.normal - expected.normal))
        errors[steps] = t_error, n_error
    cast_only, polished = errors[0], errors[ray_polish.MAX_POLISH_STEPS]
    assert cast_only[1] > 1e-6  # the cast's normals are visibly off ...
    assert polished[0] <= POLISHED and polished[1] <= POLISHED  # ... the polished ones exact


def test_polish_leaves_polytopes_alone(rng):
    # On a hull the cast's normal is exact already: no polish, no support calls for it.
    hull = Hull(rng.normal(size=(40, 3)))
    for _ in range(50):
        origin, direction = random_ray_at(rng, 0.5)
        hit = ray_cast(hull, origin, direction)
        if hit is not None and hit.t > 0.0:
            assert hit.support_calls <= hit.iterations + 1


def test_polish_on_a_transformed_composite(rng):
    # A scaled, rotated rounded prism: polished GJK in the local frame, normals mapped by M⁻ᵀ,
    # against the union of the transformed parts (each a closed form).
    m = random_pose(rng, scaled=True)
    shape = Transformed(ROUNDED_PRISM, m)
    parts = [Transformed(p, m) for p in ROUNDED_PRISM_PARTS]
    for _ in range(60):
        origin, direction = random_ray_at(rng, 0.8)
        hit, expected = ray_cast(shape, origin, direction), union_hit(parts, origin, direction)
        assert (hit is None) == (expected is None)
        if hit is not None:
            assert hit.t == pytest.approx(expected.t, abs=POLISHED)
            np.testing.assert_allclose(hit.normal, expected.normal, atol=POLISHED)


@pytest.mark.parametrize("shape, t", [
    (Point(), 5.0), (Segment(1.0), 5.0), (Rectangle((1.0, 1.0)), 4.0), (Disc(1.0), 4.0)])
def test_degenerate_shapes(shape, t):
    # Along -x through the origin; flat shapes seen edge-on still have the origin's line.
    for method in ("auto", "gjk"):
        hit = ray_cast(shape, (5.0, 0.0, 0.0), (-1.0, 0.0, 0.0), method=method)
        # A point or a segment is met DEGENERATE_THICKNESS × 5 early by the closed form.
        assert hit.t == pytest.approx(t, abs=10 * ray_closed_forms.DEGENERATE_THICKNESS * 5.0)


ZERO_SIZED = [Box((1.0, 0.0, 0.5)), Box((0.0, 0.0, 0.7)), Cylinder(0.0, 1.0), Cylinder(1.0, 0.0),
              Cone(0.0, 1.0), Cone(1.0, 0.0), Capsule(0.0, 1.0), Capsule(0.5, 0.0), Sphere(0.0),
              Ellipsoid((1.0, 0.0, 0.5)), Disc(0.0), Rectangle((0.0, 1.0))]


@pytest.mark.parametrize("shape", ZERO_SIZED, ids=repr)
def test_zero_sizes_are_hit_through_their_middle(shape):
    # Every primitive with zero sizes still contains the origin: rays through it hit there,
    # from any side, and agree with the GJK ray cast; a ray 1e-9 beside a point misses.
    for direction in ((1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, 1.0), (0.6, 0.8, 0.0)):
        d = np.asarray(direction)
        hit = ray_cast(shape, -3.0 * d, d)
        reference = ray_cast(shape, -3.0 * d, d, method="gjk")
        assert hit is not None and reference is not None
        assert hit.t == pytest.approx(reference.t, abs=1e-9)
        assert 0.0 < hit.t <= 3.0
        assert np.all(np.isfinite(hit.normal))
    assert ray_cast(Sphere(0.0), (-3.0, 1e-9, 0.0), (1.0, 0.0, 0.0)) is None


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_relative_accuracy_at_any_scale(scale):
    hit = ray_cast(Box((scale, scale, scale)), (-5 * scale, 0.1 * scale, 0.0), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(4 * scale, rel=1e-12)
    hit = ray_cast(Sphere(scale), (-5 * scale, 0.0, 0.0), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(4 * scale, rel=1e-12)


# --- warm start -----------------------------------------------------------------------------

COMPOSITES = [Hull(np.random.default_rng(5).normal(size=(50, 3))), ROUNDED_PRISM,
              MinkowskiSum(Box((0.5, 0.5, 0.5)), Sphere(0.3))]


@pytest.mark.parametrize("shape", COMPOSITES, ids=["hull", "sum", "rounded"])
def test_cache_makes_coherent_hits_cheaper(shape):
    # Starting from the last normal, the first clip lands next to the new hit point.
    cache = SeparationCache()
    warm = cold = 0
    for k in range(30):
        origin, direction = (-5.0, 0.01 * k, 0.2 + 0.01 * k), (1.0, 0.02, 0.0)
        a = ray_cast(shape, origin, direction, cache=cache)
        b = ray_cast(shape, origin, direction)
        assert a.t == pytest.approx(b.t, abs=POLISHED)
        warm, cold = warm + a.iterations, cold + b.iterations
    assert cache.calls == 30
    assert warm < cold


@pytest.mark.parametrize("shape", COMPOSITES + [Box((1.0, 1.0, 1.0))], ids=repr)
def test_cache_rejects_coherent_misses_at_once(shape):
    # Rays passing above the shape: the last separating axis usually still separates.
    cache = SeparationCache()
    for k in range(30):
        origin = (-5.0, 3.0 + 0.01 * k, 0.2)
        assert ray_cast(shape, origin, (1.0, 0.02, 0.0), cache=cache, method="gjk") is None
    assert cache.hits >= 20


def test_cache_gives_the_same_hits(rng):
    cache = SeparationCache()
    capsule = posed(Capsule(0.5, 1.0), random_rotation(rng), (0.2, 0.1, 0.0), (1.0, 2.0, 1.0))
    for method in ("auto", "gjk"):
        for k in range(20):
            origin, direction = (-5.0, 0.01 * k, 0.02 * k), (1.0, 0.05, 0.0)
            a = ray_cast(capsule, origin, direction, cache=cache, method=method)
            b = ray_cast(capsule, origin, direction, method=method)
            assert a.t == pytest.approx(b.t, abs=POLISHED)


@pytest.mark.parametrize("make", [lambda: Box((1.0, 1.0, 1.0)), lambda: Hull(np.eye(3)),
                                  lambda: translated(Cylinder(1.0, 1.0), (0.0, 0.0, 0.1))])
def test_casting_does_not_keep_shapes_alive(make):
    # Plans are cached per shape, weakly: a shape nobody holds any more is freed.
    import gc
    import weakref
    shape = make()
    ray_cast(shape, (-5.0, 0.1, 0.1), (1.0, 0.0, 0.0))
    ray_cast(shape, (-5.0, 0.1, 0.1), (1.0, 0.0, 0.0), method="gjk")
    alive = weakref.ref(shape)
    del shape
    gc.collect()
    assert alive() is None


def test_closed_forms_record_their_normals():
    # A closed form makes no support calls, but a cache shared with GJK casts still learns.
    cache = SeparationCache()
    hit = ray_cast(Box((1.0, 1.0, 1.0)), (-5.0, 0.0, 0.0), (1.0, 0.0, 0.0), cache=cache)
    assert cache.calls == 1 and cache.last_support_calls == 0 == hit.support_calls
    np.testing.assert_allclose(cache.axis, (-1.0, 0.0, 0.0))


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


def test_unknown_method_raises():
    with pytest.raises(ValueError, match="method"):
        ray_cast(Sphere(1.0), (-5, 0, 0), (1, 0, 0), method="exact")


# --- extreme magnitudes (issue 10, item 3) ------------------------------------------------------

@pytest.mark.parametrize("method", ["auto", "gjk"])
@pytest.mark.parametrize("length", [1e-200, 1e-100, 1e100, 1e200])
def test_direction_of_any_supported_length_hits_at_the_same_point(method, length):
    # Found by adversarial probing: a direction of 1e200 hit a unit sphere from outside at t = 0
    # (the closed form's |d|² r² overflowed), 1e100 broke point == origin + t·direction. The
    # cast now runs on the direction scaled by a power of two, and t back by the same.
    origin = np.array((-5.0, 0.2, 0.0))
    direction = np.array((length, 0.0, 0.0))
    hit = ray_cast(posed(Sphere(1.0), random_rotation(np.random.default_rng(2))), origin,
                   direction, method=method)
    assert hit.status is Status.CONVERGED
    expected_t = (5.0 - math.sqrt(1.0 - 0.04)) / length
    assert hit.t == pytest.approx(expected_t, rel=1e-12)
    np.testing.assert_allclose(hit.point, origin + hit.t * direction, rtol=0, atol=1e-15)
    np.testing.assert_allclose(hit.normal, (-math.sqrt(0.96), 0.2, 0.0), atol=1e-9)


def test_max_t_scales_with_the_direction():
    hit = ray_cast(Sphere(1.0), (-5.0, 0.0, 0.0), (1e150, 0.0, 0.0), max_t=4e-150)
    assert hit.t == pytest.approx(4e-150, rel=1e-15)
    assert ray_cast(Sphere(1.0), (-5.0, 0.0, 0.0), (1e150, 0.0, 0.0), max_t=3.9e-150) is None


@pytest.mark.parametrize("origin, direction, message", [
    # These returned NaN points and normals.
    ((-5.0, 0.0, 0.0), (1e-310, 0.0, 0.0), r"direction must have a length between 1e-200"),
    ((-1e200, 0.0, 0.0), (1.0, 0.0, 0.0), r"origin must have every coordinate within ±1e\+40"),
    ((-5.0, 0.0, 0.0), (1e250, 0.0, 0.0), r"direction must have a length .* and 1e\+200"),
    ((-5.0, 0.0, 0.0), (0.0, 0.0, 0.0), r"direction must be a non-zero vector"),
])
def test_out_of_range_rays_are_a_value_error_naming_the_argument(origin, direction, message):
    with pytest.raises(ValueError, match=message):
        ray_cast(Sphere(1.0), origin, direction)


def test_a_direction_is_in_range_by_its_length_not_its_largest_component():
    # Each component below 1e-200 and the length 1.2e-200, inside the range: refused before,
    # the range being tested on the largest component while the message and README say length.
    tiny = (0.0, -7.2e-201, -9.6e-201)              # length 1.2e-200, toward the centre
    hit = ray_cast(Sphere(1.0), (0.0, 3.0, 4.0), tiny)
    assert hit.t == pytest.approx(4.0 / 1.2e-200, rel=1e-12)
    np.testing.assert_allclose(hit.point, (0.0, 0.6, 0.8), atol=1e-15)
    # Each component below 1e200, the length 1.2e200 beyond it: accepted before.
    with pytest.raises(ValueError, match=r"direction must have a length .*\(length 1.2"):
        ray_cast(Sphere(1.0), (-5.0, 0.0, 0.0), (7e199, 7e199, 7e199))
