"""A mesh object's hull is built with the mesh's own triangles (a closed convex mesh is certified
as its own hull without Quickhull): the corners must be those of the points alone, convex or not."""

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import objects  # noqa: E402
from convex_tools.core import Hull  # noqa: E402


def _corners(hull):
    return sorted(map(tuple, np.round(np.asarray(hull.vertices), 12).tolist()))


@pytest.mark.parametrize("make", [
    lambda: bpy.ops.mesh.primitive_uv_sphere_add(segments=24, ring_count=12),     # convex
    lambda: bpy.ops.mesh.primitive_cylinder_add(vertices=20),                      # convex, flat caps
    lambda: bpy.ops.mesh.primitive_monkey_add(),                                   # open, concave
    lambda: bpy.ops.mesh.primitive_torus_add(),                                    # not one shell
], ids=["uv_sphere", "cylinder", "suzanne", "torus"])
def test_hull_with_faces_has_the_corners_of_the_points_alone(addon, make):
    objects.clear_cache()
    make()
    obj = bpy.context.active_object
    coords, _, triangles = objects.read_geometry(obj, bpy.context.evaluated_depsgraph_get(),
                                                 triangles=True)
    shape = objects.local_shape(obj, "HULL", bpy.context.evaluated_depsgraph_get())
    assert _corners(shape) == _corners(Hull(coords))
    assert len(triangles) > 0  # the faces path was offered the mesh's triangles


def test_cached_hull_is_keyed_by_faces_too():
    points = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
    closed = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    objects.clear_cache()
    with_faces = objects.hull_of(points, closed)
    without = objects.hull_of(points)
    assert with_faces is not without          # different keys: built once each
    assert objects.hull_of(points, closed) is with_faces
    assert _corners(with_faces) == _corners(without)
