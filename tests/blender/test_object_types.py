"""Which object types become shapes: one answer (``objects.GEOMETRY_TYPES``) for the conversion,
the operators and the Level Check."""

import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import api, objects  # noqa: E402
from convex_tools.level_check import Stats  # noqa: E402

from bpy_helpers import select  # noqa: E402


def _link(name, data):
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def _mesh_cube(name, x):
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(x, 0, 0))
    obj = bpy.context.active_object
    obj.name = name
    return obj


def one_object_of_every_type():
    """An object of each type Blender has, far apart; name -> object."""
    made = {"Mesh": _mesh_cube("Mesh", 0.0)}
    bpy.ops.curve.primitive_bezier_circle_add(location=(3, 0, 0))
    made["Curve"] = bpy.context.active_object
    bpy.ops.surface.primitive_nurbs_surface_sphere_add(location=(6, 0, 0))
    made["Surface"] = bpy.context.active_object
    bpy.ops.object.text_add(location=(9, 0, 0))
    made["Text"] = bpy.context.active_object
    bpy.ops.object.metaball_add(location=(12, 0, 0))
    made["Meta"] = bpy.context.active_object
    hair = bpy.data.hair_curves.new("Hair")
    hair.add_curves([4])
    made["Hair"] = _link("Hair", hair)
    made["PointCloud"] = _link("PointCloud", bpy.data.pointclouds.new("PointCloud"))
    made["Empty"] = _link("Empty", None)
    made["Light"] = _link("Light", bpy.data.lights.new("Light", 'POINT'))
    made["Camera"] = _link("Camera", bpy.data.cameras.new("Camera"))
    made["Volume"] = _link("Volume", bpy.data.volumes.new("Volume"))
    for name, obj in made.items():
        obj.name = name
    bpy.context.view_layer.update()
    return made


def test_every_object_type_either_converts_or_is_refused_with_a_conversion_error(addon):
    made = one_object_of_every_type()
    converted = set()
    for name, obj in made.items():
        if obj.type in objects.GEOMETRY_TYPES:
            objects.shape_from_object(obj)        # no exception
            converted.add(name)
        else:
            with pytest.raises(objects.ConversionError, match="no geometry"):
                objects.shape_from_object(obj)
    assert converted == {"Mesh", "Curve", "Surface", "Text", "Meta"}


def test_hair_curves_and_point_clouds_have_no_mesh_to_take_a_hull_of(addon):
    # Why they are not geometry types: Blender cannot turn them into a mesh.
    made = one_object_of_every_type()
    for name in ("Hair", "PointCloud"):
        evaluated = made[name].evaluated_get(bpy.context.evaluated_depsgraph_get())
        with pytest.raises(RuntimeError, match="does not have geometry"):
            evaluated.to_mesh()


def test_the_level_check_checks_exactly_the_objects_that_convert(addon):
    made = one_object_of_every_type()
    stats = Stats()
    api.check_scene(stats=stats)
    assert stats.objects == len([o for o in made.values() if o.type in objects.GEOMETRY_TYPES])
    assert stats.skipped_objects == []


@pytest.mark.parametrize("name, accepted", [("Curve", True), ("Meta", True), ("Hair", False),
                                            ("PointCloud", False), ("Empty", False)])
def test_operators_accept_the_same_objects_as_the_level_check(addon, name, accepted):
    made = one_object_of_every_type()
    select(made["Mesh"], made[name], active=made[name])
    if accepted:
        assert bpy.ops.object.convex_distance() == {'FINISHED'}
    else:
        with pytest.raises(RuntimeError, match="mesh-like"):
            bpy.ops.object.convex_distance()
