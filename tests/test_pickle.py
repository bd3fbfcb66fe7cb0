"""Shapes cross process boundaries: pickled (as spawn-based multiprocessing sends them) they come
back as equal shapes, giving the same answers (issue 22: "Box is immutable" in a user's pool)."""

import multiprocessing
import pickle

import numpy as np
import pytest

from convex_tools.core import (Box, Capsule, Compound, Cone, ConvexHullOf, Cylinder, Disc,
                               Ellipsoid, Hull, MinkowskiSum, Point, Rectangle, RoundBox, Segment,
                               Sphere, Triangle, TriangleMesh, distance, posed, translated)
from convex_tools.core.shapes import Custom

from test_contracts import Octahedron

CUBE = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)

SHAPES = {
    "point": Point(),
    "segment": Segment(0.5),
    "sphere": Sphere(0.7),
    "ellipsoid": Ellipsoid((0.3, 0.5, 0.9)),
    "box": Box((0.5, 0.25, 1.0)),
    "rectangle": Rectangle((0.5, 0.25)),
    "disc": Disc(0.4),
    "capsule": Capsule(0.2, 0.6),
    "cylinder": Cylinder(0.4, 0.3),
    "cone": Cone(0.5, 0.5),
    "round box": RoundBox((0.3, 0.2, 0.1), 0.05),
    "hull": Hull(CUBE * (0.5, 0.3, 0.2)),
    "flat hull": Hull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]),
    "minkowski sum": MinkowskiSum(Box((0.2, 0.2, 0.2)), Sphere(0.1)),
    "convex hull of": ConvexHullOf(Sphere(0.3), translated(Box((0.1,) * 3), (0.5, 0, 0))),
    "transformed": posed(Cylinder(0.3, 0.5), np.diag([1.0, -1.0, -1.0]), (0.2, 0.1, 0.0),
                         scale=(1.0, 2.0, 0.5)),
    "custom": Custom(Octahedron(0.6)),
    "triangle": Triangle((0, 0, 0), (1, 0, 0), (0, 1, 0)),
}
PROBE = translated(Box((0.1, 0.2, 0.3)), (2.0, 0.5, -0.25))


@pytest.mark.parametrize("name", SHAPES)
def test_a_shape_pickles_to_one_with_the_same_supports_and_distance(name):
    shape = SHAPES[name]
    back = pickle.loads(pickle.dumps(shape))
    assert type(back) is type(shape)
    for d in np.random.default_rng(0).normal(size=(20, 3)):
        np.testing.assert_array_equal(back.support(d), shape.support(d))
    assert back.margin == shape.margin
    assert distance(back, PROBE).distance == distance(shape, PROBE).distance
    with pytest.raises(AttributeError, match="immutable"):
        back._margin = 1.0                      # still immutable once rebuilt


def test_a_compound_pickles_with_its_part_names():
    compound = Compound([SHAPES["box"], translated(SHAPES["sphere"], (2, 0, 0))],
                        names=["crate", "ball"])
    back = pickle.loads(pickle.dumps(compound))
    assert back.names == ("crate", "ball")
    r, s = distance(compound, PROBE), distance(back, PROBE)
    assert (s.distance, s.part_a) == (r.distance, r.part_a)


def test_a_mesh_pickles_reporting_the_rows_it_was_given():
    # Row 1 is degenerate and dropped: the rebuilt mesh still names row 2 as 2.
    v = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 0, 0]]
    mesh = TriangleMesh(v, [[0, 1, 2], [0, 1, 4], [1, 3, 2]], drop_degenerate=True)
    back = pickle.loads(pickle.dumps(mesh))
    assert back.dropped == 1
    assert [back.part_id(i) for i in range(len(back))] == [0, 2]
    np.testing.assert_array_equal(back.triangles, mesh.triangles)


def _distance_of(pair):
    a, b = pair
    return distance(a, b).distance


def test_a_spawned_pool_measures_shapes_sent_to_it():
    pairs = [(SHAPES["box"], PROBE), (SHAPES["transformed"], PROBE), (SHAPES["hull"], PROBE),
             (SHAPES["cone"], translated(SHAPES["capsule"], (0.1, 0.0, 0.2)))]
    expected = [_distance_of(p) for p in pairs]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_distance_of, pairs) == expected
