"""A shape of the user's own needs only ``support_xyz`` (README): a plain class, not a ``Shape``
subclass, works in every query and every composite, with the defaults of a sharp shape.

The user's shape here is an octahedron |x - c|₁ <= r off the origin (so that a default centre
at the origin would be outside it); every answer is compared with the same octahedron built as a
``Hull`` of its six vertices.
"""

import math

import numpy as np
import pytest

from convex_tools.core import (Box, ConvexHullOf, Hull, MinkowskiSum, Sphere, Transformed,
                               contact_manifold, distance, intersect, penetration, ray_cast,
                               signed_distance, sweep, sweep_rotating, translated)
from convex_tools.core.shapes import Custom

from geometry_helpers import rigid

CENTER = (7.0, -2.0, 1.0)
RADIUS = 1.5


class Octahedron:
    """The user's shape: only a support mapping, returning a list (not a tuple) on purpose."""

    def support_xyz(self, x, y, z):
        axis = max(range(3), key=lambda i: abs((x, y, z)[i]))
        p = list(CENTER)
        p[axis] += math.copysign(RADIUS, (x, y, z)[axis])
        return p


def reference():
    vertices = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            p = list(CENTER)
            p[axis] += sign * RADIUS
            vertices.append(p)
    return Hull(np.array(vertices))


BOX = translated(Box((0.5, 0.5, 0.5)), (8.2, -2.0, 1.0))   # overlaps the octahedron's +x tip
FAR_BOX = translated(Box((0.5, 0.5, 0.5)), (11.0, -2.0, 1.0))


def test_distance_and_signed_distance_match_the_built_in_shape():
    mine, ref = Octahedron(), reference()
    r, expected = distance(mine, FAR_BOX), distance(ref, FAR_BOX)
    assert r.distance == pytest.approx(2.0, abs=1e-12)          # tip at x = 8.5, box from 10.5
    assert r.distance == pytest.approx(expected.distance, abs=1e-12)
    np.testing.assert_allclose(r.point_a, (8.5, -2.0, 1.0), atol=1e-12)
    assert signed_distance(mine, BOX) == pytest.approx(signed_distance(ref, BOX), abs=1e-12)
    assert signed_distance(mine, BOX) == pytest.approx(-0.8, abs=1e-12)   # tip 8.5 into 7.7


@pytest.mark.parametrize("method", ["gjk", "mpr"])
def test_intersect_uses_a_centre_inside_the_shape(method):
    mine = Octahedron()
    assert intersect(mine, BOX, method=method)
    assert not intersect(mine, FAR_BOX, method=method)
    # Custom's default centre is the mean of the six axis support points: the octahedron's centre.
    np.testing.assert_allclose(Custom(mine).center_xyz(), CENTER, atol=1e-15)


@pytest.mark.parametrize("method", ["epa", "mpr", "hybrid"])
def test_penetration_matches_the_built_in_shape(method):
    c = penetration(Octahedron(), BOX, method)
    ref = penetration(reference(), BOX, method)
    assert c.depth == pytest.approx(0.8, abs=1e-12)
    assert c.depth == pytest.approx(ref.depth, abs=1e-12)
    np.testing.assert_allclose(c.normal, ref.normal, atol=1e-9)
    np.testing.assert_allclose(c.point_a - c.point_b, c.depth * c.normal, atol=1e-12)


def test_contact_manifold_ray_cast_and_sweeps_work():
    mine = Octahedron()
    m = contact_manifold(mine, BOX)
    assert m is not None and np.all(m.depths >= 0.0)
    hit = ray_cast(mine, (0.0, -2.0, 1.0), (1.0, 0.0, 0.0))
    assert hit.t == pytest.approx(5.5, abs=1e-12)                # the -x tip at x = 5.5
    np.testing.assert_allclose(hit.normal, ray_cast(reference(), (0.0, -2.0, 1.0),
                                                    (1.0, 0.0, 0.0)).normal, atol=1e-9)
    s = sweep(mine, FAR_BOX, (4.0, 0.0, 0.0))
    assert s.t == pytest.approx(0.5, abs=1e-12)                  # closes the gap of 2 by 4 t
    start, end = rigid(), rigid(translation=(4.0, 0.0, 0.0))
    rotating = sweep_rotating(mine, start, end, FAR_BOX)
    assert rotating.t == pytest.approx(0.5, abs=1e-8)


def test_composites_and_transforms_accept_the_users_shape():
    mine = Octahedron()
    moved = Transformed(mine, rigid(translation=(-7.0, 2.0, -1.0)))   # centred on the origin
    assert distance(moved, translated(Box((1, 1, 1)), (4.0, 0, 0))).distance == \
        pytest.approx(1.5, abs=1e-12)
    rounded = MinkowskiSum(mine, Sphere(0.5))
    assert distance(rounded, FAR_BOX).distance == pytest.approx(1.5, abs=1e-9)
    both = ConvexHullOf(mine, translated(Sphere(0.1), (20.0, -2.0, 1.0)))
    assert intersect(both, FAR_BOX)                               # the hull spans the box


def test_a_users_rounded_shape_with_margin_and_core():
    class Ball:                    # a sphere of radius 2 at the origin, as core point + margin
        margin = 2.0
        core = Transformed(Sphere(0.0), np.eye(4))

        def support_xyz(self, x, y, z):
            n = math.sqrt(x * x + y * y + z * z) or 1.0
            return (2.0 * x / n, 2.0 * y / n, 2.0 * z / n)

    c = penetration(Ball(), translated(Sphere(1.0), (2.5, 0.0, 0.0)))
    assert c.depth == pytest.approx(0.5, abs=1e-12)


def test_user_shapes_are_checked_with_errors_naming_them():
    class NoCore:
        margin = 1.0

        def support_xyz(self, x, y, z):
            return (0.0, 0.0, 0.0)

    class Broken:
        def support_xyz(self, x, y, z):
            return (math.nan, 0.0, 0.0)

    with pytest.raises(ValueError, match="a has a margin, so it needs a core"):
        distance(NoCore(), Box((1, 1, 1)))
    with pytest.raises(ValueError, match=r"b\.support_xyz returned a non-finite point"):
        distance(Box((1, 1, 1)), Broken())
    with pytest.raises(ValueError, match="b must be a convex_tools shape"):
        distance(Box((1, 1, 1)), 42)
    with pytest.raises(ValueError, match="shape must be a convex_tools shape"):
        ray_cast(object(), (0, 0, 0), (1, 0, 0))


def test_a_users_shape_out_of_the_supported_range_is_refused():
    class Far:
        def support_xyz(self, x, y, z):
            return (1e160 + x, y, z)

    with pytest.raises(ValueError, match=r"a would place points of the shape 1e\+160 from"):
        distance(Far(), Box((1, 1, 1)))


def test_a_users_own_centre_is_used():
    class Centred(Octahedron):
        def center_xyz(self):
            return [7.0, -2.0, 1.25]           # inside, not the default mean of the six tips

    assert Custom(Centred()).center_xyz() == (7.0, -2.0, 1.25)
    assert intersect(Centred(), BOX, method="mpr")


class CountingOctahedron(Octahedron):
    """The octahedron, counting the calls to its support mapping."""

    def __init__(self):
        self.calls = 0

    def support_xyz(self, x, y, z):
        self.calls += 1
        return super().support_xyz(x, y, z)


@pytest.mark.parametrize("method", ["gjk", "mpr"])
def test_intersect_wraps_the_users_shape_once(method):
    # Regression: intersect checked the shape and dropped the adapter, and the algorithm
    # wrapped it again: the six axis support points of the adapter (its box and centre) were
    # taken twice. Once wrapped, a query costs those six plus its own support calls.
    mine = CountingOctahedron()
    assert intersect(mine, BOX, method=method)
    once = Custom(CountingOctahedron())
    assert once.user.calls == 6
    assert intersect(once, BOX, method=method)
    assert mine.calls == once.user.calls
