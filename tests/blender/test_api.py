"""``convex_tools.api``: objects or their names in, core results out; wrong arguments are a
``ValueError`` that names the argument, never an AttributeError from deep inside."""

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import api, objects  # noqa: E402
from convex_tools.level_check import Stats  # noqa: E402

from bpy_helpers import add  # noqa: E402


@pytest.fixture
def pair(addon):
    a = add("cube", "A", size=2.0, location=(0, 0, 0))
    b = add("cube", "B", size=2.0, location=(5, 0, 0))    # faces 3 apart
    bpy.context.view_layer.update()
    return a, b


def test_every_function_takes_object_names_as_check_scene_does(pair):
    a, b = pair
    assert api.distance("A", "B").distance == pytest.approx(3.0)
    assert api.distance(a, "B").distance == pytest.approx(3.0)
    np.testing.assert_allclose(api.shape_from_object("B").support([1, 1, 1]), [6, 1, 1])
    assert api.penetration("A", "B") is None
    assert api.contact_manifold("A", "B") is None
    assert api.ray_cast("B", (0, 0, 0), (1, 0, 0)).t == pytest.approx(4.0)
    assert api.sweep("A", "B", (4, 0, 0)).t == pytest.approx(0.75)


@pytest.mark.parametrize("call, message", [
    (lambda: api.distance("A", 42), "obj_b must be a Blender object or the name of one, got int"),
    (lambda: api.distance(None, "B"), "obj_a must be a Blender object or the name of one, got "
                                      "None"),
    (lambda: api.penetration("A", bpy.data.meshes[0]), "obj_b must be .* got Mesh"),
    (lambda: api.contact_manifold(3.5, "B"), "obj_a must be .* got float"),
    (lambda: api.ray_cast([1, 2], (0, 0, 0), (1, 0, 0)), "obj must be .* got list"),
    (lambda: api.sweep("A", "Nope", (1, 0, 0)), "obj_b: there is no object named 'Nope'"),
    (lambda: api.shape_from_object("Nope"), "obj: there is no object named 'Nope'"),
    (lambda: api.shape_from_object(42), "obj must be a Blender object"),
    (lambda: api.check_scene(objects=["A", 42]), "objects must be a Blender object"),
    (lambda: api.check_scene(objects=["A", "Nope"]), "there is no object named 'Nope'"),
])
def test_anything_but_an_object_or_its_name_is_a_value_error_naming_the_argument(pair, call,
                                                                                 message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_deleted_object_is_a_value_error(pair):
    a, b = pair
    bpy.data.objects.remove(b)
    with pytest.raises(ValueError, match="obj_b is an object that was deleted"):
        api.distance(a, b)


EMPTY_MESH_KINDS = ["BOX", "SPHERE", "CAPSULE", "CYLINDER", "CONE", "ELLIPSOID", "ROUND_BOX",
                    "HULL"]


@pytest.mark.parametrize("kind", EMPTY_MESH_KINDS)
def test_an_empty_mesh_becomes_no_shape_whatever_its_setting(addon, kind):
    # Regression: with BOX (or any primitive) an empty mesh became a box of size zero at its
    # origin, and the Level Check counted it as checked.
    empty = bpy.data.objects.new("Empty", bpy.data.meshes.new("nothing"))
    bpy.context.scene.collection.objects.link(empty)
    empty.convex_tools.kind = kind
    with pytest.raises(objects.ConversionError, match="'Empty' has no vertices"):
        objects.shape_from_object(empty)


@pytest.mark.parametrize("kind", EMPTY_MESH_KINDS)
def test_the_level_check_skips_an_empty_mesh_and_says_why(addon, kind):
    add("cube", "Crate", size=2.0)
    empty = bpy.data.objects.new("Empty", bpy.data.meshes.new("nothing"))
    bpy.context.scene.collection.objects.link(empty)
    empty.convex_tools.kind = kind
    stats = Stats()
    assert api.check_scene(stats=stats) == []
    assert stats.objects == 1
    assert stats.skipped_objects == [("Empty", "'Empty' has no vertices to build a shape from")]


def test_an_empty_curve_with_a_primitive_setting_is_skipped_too(addon):
    curve = bpy.data.objects.new("Wire", bpy.data.curves.new("nothing", 'CURVE'))
    bpy.context.scene.collection.objects.link(curve)
    curve.convex_tools.kind = 'SPHERE'
    with pytest.raises(objects.ConversionError, match="'Wire' has no vertices"):
        objects.shape_from_object(curve)
