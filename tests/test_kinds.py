"""The table of shape kinds (core.kinds): every convex shape type of the core has its entry, and a
primitive added through the table alone is batched, gets its closed-form ray and its support
feature, with no edit anywhere else."""

import inspect
import math

import numpy as np
import pytest

import convex_tools.core as core
from convex_tools.core import (Box, Cylinder, Hull, Sphere, batch, contact_manifold, distance,
                               kinds, posed, ray_cast, translated)
from convex_tools.core.manifold import support_feature
from convex_tools.core.placement import OTHER, POLY, ROUND, PoseTable
from convex_tools.core.ray_closed_forms import closed_form
from convex_tools.core.shapes import Custom, Shape
from geometry_helpers import random_rotation

# Batched and single distances agree to this fraction of the shapes' size (as in test_batch).
AGREEMENT = 1e-9
# Closed-form ray hits are exact to rounding of coordinates of about 10.
EXACT = 1e-13


def _core_shape_types():
    """Every Shape subclass defined in a module of the core (imports them all first)."""
    found, todo = set(), [Shape]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return {t for t in found if t.__module__.startswith("convex_tools.core.")}


def test_every_convex_shape_type_of_the_core_has_its_own_kind():
    exported = {t for t in vars(core).values()
                if inspect.isclass(t) and issubclass(t, Shape) and t is not Shape}
    types = exported | _core_shape_types()
    # The primitives, composites, hulls and mesh triangles are all among them.
    assert {Box, Sphere, Hull, core.Triangle, core.Transformed, Custom} <= types
    missing = sorted(t.__name__ for t in types if kinds.own_kind(t) is None)
    assert missing == [], f"add a kinds.Kind for {missing} (see docs/ARCHITECTURE.md)"


# --- a primitive added through the table alone -------------------------------------------------

class Tablet(Shape):
    """A flat slab, ``half_extents`` (hx, hy, ht): a new primitive with a support of its own (a
    table top, a floor tile, a pressure plate)."""

    __slots__ = ("_he", "_frozen")

    def __init__(self, half_extents):
        super().__init__()
        self._he = tuple(float(h) for h in half_extents)
        self._freeze()

    @property
    def half_extents(self):
        return np.array(self._he)

    def support_xyz(self, x, y, z):
        hx, hy, ht = self._he
        return (math.copysign(hx, x), math.copysign(hy, y), math.copysign(ht, z))


class RoundTablet(Shape):
    """A ``Tablet`` swept by a ball of ``radius``: a rounded primitive (core and margin)."""

    __slots__ = ("_he", "_r", "_frozen")

    def __init__(self, half_extents, radius):
        super().__init__()
        self._he = tuple(float(h) for h in half_extents)
        self._r = float(radius)
        self._margin = self._r
        self._core = Tablet(self._he)
        self._freeze()

    @property
    def half_extents(self):
        return np.array(self._he)

    @property
    def radius(self):
        return self._r

    def support_xyz(self, x, y, z):
        n = math.sqrt(x * x + y * y + z * z) or 1.0
        hx, hy, ht = self._he
        r = self._r / n
        return (math.copysign(hx, x) + x * r, math.copysign(hy, y) + y * r,
                math.copysign(ht, z) + z * r)


def half(tablet):
    return tuple(tablet.half_extents.tolist())


def _tablet_kind():
    return kinds.Kind(
        Tablet,
        batch=lambda t: (kinds.POLY, dict(zip((kinds.HX, kinds.HY, kinds.HZ), half(t))), 0.0),
        ray=lambda t: (kinds.RAY_BOX, half(t)),
        feature=lambda t: (kinds.FEATURE_BOX, half(t)))


def _round_tablet_kind():
    # Batched as its core plus the margin; no closed-form ray (the GJK ray cast); curved.
    return kinds.Kind(
        RoundTablet,
        batch=lambda t: (kinds.POLY, dict(zip((kinds.HX, kinds.HY, kinds.HZ), half(t))),
                         t.radius),
        feature=lambda t: (kinds.FEATURE_CURVED,))


@pytest.fixture
def tablets():
    """Tablet and RoundTablet in the table for one test, taken out after it."""
    kinds.register(_tablet_kind())
    kinds.register(_round_tablet_kind())
    yield
    kinds.unregister(Tablet)
    kinds.unregister(RoundTablet)


def test_an_unregistered_primitive_is_left_to_the_generic_paths():
    tablet = Tablet((1.0, 0.5, 0.1))
    assert kinds.kind_of(Tablet) is kinds.UNKNOWN
    assert PoseTable.from_shapes([tablet]).family.tolist() == [OTHER]
    assert closed_form(tablet) is None
    hit = ray_cast(tablet, (0.3, 0.2, 5.0), (0.0, 0.0, -1.0))
    assert hit.support_calls > 0                     # the GJK ray cast


def test_a_registered_primitive_is_batched_like_the_single_query(tablets, rng):
    # Tablets on a floor, beside crates and barrels: the batch answers every pair itself and
    # agrees with the single query on the tablet's own support mapping.
    shapes = [posed(Tablet((0.6, 0.4, 0.05)), random_rotation(rng), rng.uniform(-1.5, 1.5, 3))
              for _ in range(8)]
    shapes += [translated(Box((0.5, 0.5, 0.5)), (0.2, -0.3, 0.4)),
               translated(Cylinder(0.3, 0.6), (-0.8, 0.5, 0.0)),
               translated(Box((3.0, 3.0, 0.1)), (0.0, 0.0, -2.0))]
    table = PoseTable.from_shapes(shapes)
    assert table.family.tolist()[:8] == [POLY] * 8
    pairs = [(i, j) for i in range(len(shapes)) for j in range(i + 1, len(shapes))]
    results = batch.distances(shapes, pairs, distance, table=table)
    intersecting = 0
    for (i, j), result in zip(pairs, results):
        single = distance(shapes[i], shapes[j])
        assert result.engine == "batch"
        assert result.intersecting == single.intersecting
        assert result.distance == pytest.approx(single.distance, abs=AGREEMENT * 6.0)
        intersecting += single.intersecting
    assert 0 < intersecting < len(pairs)             # both verdicts were exercised


def test_a_registered_rounded_primitive_splits_its_margin_as_the_table_says(tablets, rng):
    rounded = RoundTablet((0.5, 0.3, 0.05), 0.1)
    similar = posed(rounded, random_rotation(rng) * 2.0, (0.0, 0.0, 1.0))
    stretched = posed(rounded, np.diag((1.0, 2.0, 0.5)), (1.5, 0.0, 0.0))
    table = PoseTable.from_shapes([similar, stretched, Box((0.5, 0.5, 0.5))])
    # Under a similarity the core (POLY) and a margin scaled by 2; otherwise the whole: ROUND.
    assert table.family.tolist() == [POLY, ROUND, POLY]
    assert table.margin.tolist() == pytest.approx([0.2, 0.0, 0.0], abs=1e-15)
    results = batch.distances([similar, stretched, Box((0.5, 0.5, 0.5))], [(0, 2), (1, 2)],
                              distance, table=table)
    for result, shape in zip(results, (similar, stretched)):
        single = distance(shape, Box((0.5, 0.5, 0.5)))
        assert result.engine == "batch"
        assert result.distance == pytest.approx(single.distance, abs=AGREEMENT * 2.0)


def test_a_registered_primitive_gets_its_closed_form_ray(tablets):
    # Straight down onto a tablet lying 2 above the floor: the top face at z = 2 + 0.1.
    tablet = translated(Tablet((1.0, 0.5, 0.1)), (0.0, 0.0, 2.0))
    hit = ray_cast(tablet, (0.3, 0.2, 5.0), (0.0, 0.0, -1.0))
    assert hit.support_calls == 0                    # exact, no GJK
    assert hit.t == pytest.approx(5.0 - 2.1, abs=EXACT)
    np.testing.assert_array_equal(hit.normal, (0.0, 0.0, 1.0))
    # A rounded tablet has no closed form in its entry: the GJK ray cast, still on the surface.
    rounded = translated(RoundTablet((1.0, 0.5, 0.1), 0.2), (0.0, 0.0, 2.0))
    assert closed_form(rounded.shape) is None
    hit = ray_cast(rounded, (0.3, 0.2, 5.0), (0.0, 0.0, -1.0))
    assert hit.support_calls > 0
    assert hit.t == pytest.approx(5.0 - 2.3, abs=1e-9)


def test_a_registered_primitive_gets_its_support_feature(tablets):
    tablet = Tablet((1.0, 0.5, 0.1))
    top = support_feature(tablet, (0.0, 0.0, 1.0))
    assert sorted(map(tuple, top)) == [(-1.0, -0.5, 0.1), (-1.0, 0.5, 0.1), (1.0, -0.5, 0.1),
                                      (1.0, 0.5, 0.1)]
    side = support_feature(tablet, (1.0, 0.0, 0.0))  # the thin side face: four corners too
    assert sorted(map(tuple, side)) == [(1.0, -0.5, -0.1), (1.0, -0.5, 0.1), (1.0, 0.5, -0.1),
                                       (1.0, 0.5, 0.1)]
    # A tablet resting 1e-3 deep on a crate: the manifold has the tablet's four corners.
    resting = translated(Tablet((0.2, 0.1, 0.02)), (0.0, 0.0, 0.5 + 0.02 - 1e-3))
    manifold = contact_manifold(resting, Box((0.5, 0.5, 0.5)))
    assert len(manifold.points) == 4
    assert manifold.depths == pytest.approx([1e-3] * 4, abs=1e-12)
    np.testing.assert_allclose(sorted(map(tuple, manifold.points[:, :2].round(12))),
                               [(-0.2, -0.1), (-0.2, 0.1), (0.2, -0.1), (0.2, 0.1)])


def test_unregistering_takes_a_kind_out_of_every_path(tablets):
    tablet = Tablet((1.0, 0.5, 0.1))
    assert kinds.kind_of(Tablet) is kinds.own_kind(Tablet)       # resolved and cached
    kinds.unregister(Tablet)
    try:
        assert kinds.kind_of(Tablet) is kinds.UNKNOWN
        assert PoseTable.from_shapes([tablet]).family.tolist() == [OTHER]
        assert closed_form(tablet) is None
    finally:
        kinds.register(_tablet_kind())               # the fixture takes it out again


# --- subclasses, and what the table refuses ----------------------------------------------------

def test_a_subclass_inherits_its_base_kind_but_not_its_closed_form_ray():
    class Crate(Box):
        pass

    crate = Crate((0.5, 0.5, 0.5))
    assert kinds.own_kind(Crate) is None
    assert kinds.kind_of(Crate) is kinds.own_kind(Box)
    assert PoseTable.from_shapes([crate]).family.tolist() == [POLY]
    assert len(support_feature(crate, (0.0, 0.0, 1.0))) == 4
    assert closed_form(crate) is None                # it may have changed the support mapping
    assert closed_form(Box((0.5, 0.5, 0.5))) is not None


def test_a_subclass_with_its_own_entry_gets_its_closed_form_ray():
    class Crate(Box):
        pass

    kinds.register(kinds.Kind(Crate, batch=kinds.own_kind(Box).batch,
                              ray=kinds.own_kind(Box).ray, feature=kinds.own_kind(Box).feature))
    try:
        hit = ray_cast(Crate((0.5, 0.5, 0.5)), (0.0, 0.0, 5.0), (0.0, 0.0, -1.0))
        assert hit.support_calls == 0
        assert hit.t == 4.5
    finally:
        kinds.unregister(Crate)


def test_a_user_shape_is_sampled_and_not_batched():
    class Ball:
        def support_xyz(self, x, y, z):
            n = math.sqrt(x * x + y * y + z * z) or 1.0
            return (x / n, y / n, z / n)

    ball = Custom(Ball())
    assert kinds.kind_of(Custom).batch is None
    assert PoseTable.from_shapes([ball]).family.tolist() == [OTHER]
    # The sampled feature of a ball along +z: the top point and the samples kept near it.
    feature = support_feature(ball, (0.0, 0.0, 1.0))
    np.testing.assert_allclose(feature[0], (0.0, 0.0, 1.0))


@pytest.mark.parametrize("bad", [
    lambda: kinds.Kind(int),
    lambda: kinds.Kind(Box((1, 1, 1))),
    lambda: kinds.Kind(Tablet, batch=3),
    lambda: kinds.Kind(Tablet, feature=None),
    lambda: kinds.register("Tablet"),
    lambda: kinds.register(kinds.Kind(Box)),         # Box has its entry already
    lambda: kinds.unregister(Tablet),                # never registered here
])
def test_the_table_refuses_bad_entries(bad):
    with pytest.raises(ValueError):
        bad()
