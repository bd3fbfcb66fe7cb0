"""Each operator's result equals the core query on the same world-space shapes, to 1e-12.

The scenes are the hard cases of the conversion: a mesh with modifiers (the hull of the
*evaluated* mesh), rotated and non-uniformly scaled objects (the full world matrix), and
rigid-body primitives built independently here from Blender's sizing rules.
"""

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import core, objects, operators  # noqa: E402
from convex_tools.core import Box, Capsule, Cone, Cylinder, Sphere, Transformed  # noqa: E402

from bpy_helpers import add, select  # noqa: E402

EXACT = 1e-12


def shape(obj):
    return objects.shape_from_object(obj)


def cursor():
    """The 3D cursor as Blender stores it (float32: 0.3 is stored as 0.30000001192...)."""
    return np.array(bpy.context.scene.cursor.location, dtype=float)


def last(query):
    assert operators.last_query["query"] == query
    return operators.last_query["result"]


def assert_vectors_equal(got, expected):
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=0.0, atol=EXACT)


def modified_and_scaled_pair(gap_x):
    """A: beveled, arrayed, rotated and non-uniformly scaled cube; B: a tilted, squashed cylinder."""
    a = add("cube", "A", size=2.0, location=(0.0, 0.0, 0.0), rotation=(0.2, 0.4, 0.1))
    a.scale = (1.5, 0.7, 1.0)
    a.modifiers.new("bevel", 'BEVEL').width = 0.2
    array = a.modifiers.new("array", 'ARRAY')
    array.count = 2
    b = add("cylinder", "B", radius=0.8, depth=2.0, location=(gap_x, 0.5, 0.3))
    b.rotation_euler = (0.5, 0.0, 0.3)
    b.scale = (1.0, 1.3, 0.6)
    bpy.context.view_layer.update()
    return a, b


def test_distance_operator_equals_core_with_modifiers_rotation_and_scale(addon):
    a, b = modified_and_scaled_pair(gap_x=7.0)
    select(a, b, active=b)
    assert bpy.ops.object.convex_distance() == {'FINISHED'}
    got = last("distance")
    expected = core.distance(shape(a), shape(b))
    assert not expected.intersecting and expected.distance > 0.5
    assert got.distance == pytest.approx(expected.distance, abs=EXACT)
    assert_vectors_equal(got.point_a, expected.point_a)
    assert_vectors_equal(got.point_b, expected.point_b)


@pytest.mark.parametrize("method", ["EPA", "MPR", "HYBRID"])
def test_penetration_operator_equals_core_for_each_method(addon, method):
    a, b = modified_and_scaled_pair(gap_x=4.2)
    select(a, b, active=b)
    assert bpy.ops.object.convex_penetration(method=method) == {'FINISHED'}
    got = last("penetration")
    expected = core.penetration(shape(a), shape(b), method.lower())
    assert expected is not None and expected.depth > 0.0
    assert got.depth == pytest.approx(expected.depth, abs=EXACT)
    assert_vectors_equal(got.normal, expected.normal)
    assert_vectors_equal(got.point_a, expected.point_a)
    assert_vectors_equal(got.point_b, expected.point_b)


def test_contact_operator_equals_core_manifold(addon):
    a, b = modified_and_scaled_pair(gap_x=4.2)
    select(a, b, active=b)
    assert bpy.ops.object.convex_contact() == {'FINISHED'}
    got = last("contact")
    expected = core.contact_manifold(shape(a), shape(b))
    assert expected is not None and len(expected.points) >= 1
    assert_vectors_equal(got.normal, expected.normal)
    assert_vectors_equal(got.points, expected.points)
    assert_vectors_equal(got.depths, expected.depths)


def test_ray_cast_operator_equals_core_on_a_scaled_rotated_modified_mesh(addon):
    a, _ = modified_and_scaled_pair(gap_x=7.0)
    select(a)
    bpy.context.scene.cursor.location = (0.3, -6.0, 0.2)
    assert bpy.ops.object.convex_ray_cast(axis='Y') == {'FINISHED'}
    got = last("ray_cast")
    expected = core.ray_cast(shape(a), cursor(), (0.0, 1.0, 0.0))
    assert expected is not None and 3.0 < expected.t < 6.0
    assert got.t == pytest.approx(expected.t, abs=EXACT)
    assert_vectors_equal(got.point, expected.point)
    assert_vectors_equal(got.normal, expected.normal)


def _view3d_override():
    for screen in bpy.data.screens:
        for area in screen.areas:
            if area.type == 'VIEW_3D':
                region = next(r for r in area.regions if r.type == 'WINDOW')
                return screen, area, region
    pytest.skip("no 3D view in the factory screens")


def test_ray_cast_along_the_view_direction_uses_the_viewport(addon):
    a, _ = modified_and_scaled_pair(gap_x=7.0)
    select(a)
    screen, area, region = _view3d_override()
    rv3d = area.spaces.active.region_3d
    # The viewport looks along the -Z axis of its view rotation.
    view_direction = -np.array(rv3d.view_rotation.to_matrix(), dtype=float)[:, 2]
    origin = np.array(a.matrix_world.translation) - 8.0 * view_direction
    bpy.context.scene.cursor.location = origin
    origin = cursor()
    with bpy.context.temp_override(screen=screen, area=area, region=region):
        assert bpy.ops.object.convex_ray_cast(axis='VIEW') == {'FINISHED'}
    got = last("ray_cast")
    expected = core.ray_cast(shape(a), origin, view_direction)
    assert expected is not None
    # The view's direction in float64 differs from the float32 rotation by ~1e-8.
    assert got.t == pytest.approx(expected.t, abs=1e-6)
    np.testing.assert_allclose(got.point, expected.point, atol=1e-6)


def test_ray_cast_along_the_view_without_a_viewport_is_a_one_line_error(addon):
    select(add("cube", "Cube", size=2.0))
    with pytest.raises(RuntimeError, match="No 3D view") as error:
        bpy.ops.object.convex_ray_cast(axis='VIEW')
    assert "\n" not in str(error.value).strip()


def test_sweep_operator_equals_core_sweep(addon):
    a, b = modified_and_scaled_pair(gap_x=7.0)
    select(b, a, active=a)
    translation = (9.0, 0.4, 0.1)
    assert bpy.ops.object.convex_sweep(translation=translation) == {'FINISHED'}
    got = last("sweep")
    # Operator properties are float32, as the operator receives them.
    expected = core.sweep(shape(a), shape(b), np.float32(translation).astype(float))
    assert expected is not None and 0.0 < expected.t < 1.0
    assert got.t == pytest.approx(expected.t, abs=EXACT)
    assert_vectors_equal(got.point, expected.point)
    assert_vectors_equal(got.normal, expected.normal)


# Blender's rigid-body sizing for a mesh whose local half bounds are (hx, hy, hz) = (1, 0.5, 1.5):
# box = the half bounds; sphere radius = the largest; capsule/cylinder/cone along Z with radius
# max(hx, hy) = 1; capsule total half height hz, so its segment's half length is hz - radius.
HALF = (1.0, 0.5, 1.5)
RIGID_BODY_SHAPES = {
    "BOX": Box(HALF),
    "SPHERE": Sphere(1.5),
    "CAPSULE": Capsule(1.0, 0.5),
    "CYLINDER": Cylinder(1.0, 1.5),
    "CONE": Cone(1.0, 1.5),
}


@pytest.mark.parametrize("collision_shape", sorted(RIGID_BODY_SHAPES))
def test_rigid_body_primitives_in_operators_equal_core_on_blenders_sizes(addon, collision_shape):
    body = add("cube", "Body", size=2.0, location=(0.5, -0.3, 0.2), rotation=(0.3, -0.2, 0.7))
    body.data.transform(np.diag([HALF[0], HALF[1], HALF[2], 1.0]).tolist())
    body.scale = (1.2, 0.8, 1.1)   # non-uniform object scale on top of the mesh's own size
    bpy.ops.rigidbody.object_add()
    body.rigid_body.collision_shape = collision_shape
    probe = add("ico_sphere", "Probe", radius=0.5, subdivisions=2, location=(5.0, 1.0, 2.0))
    bpy.context.view_layer.update()
    expected_body = Transformed(RIGID_BODY_SHAPES[collision_shape], np.array(body.matrix_world))

    select(probe, body, active=probe)   # A = the body (not active), B = the probe
    assert bpy.ops.object.convex_distance() == {'FINISHED'}
    got = last("distance")
    expected = core.distance(expected_body, shape(probe))
    assert got.distance == pytest.approx(expected.distance, abs=EXACT)
    assert_vectors_equal(got.point_a, expected.point_a)

    bpy.context.scene.cursor.location = (0.5, -0.3, 8.0)
    select(body)
    assert bpy.ops.object.convex_ray_cast(axis='NEG_Z') == {'FINISHED'}
    got_hit = last("ray_cast")
    expected_hit = core.ray_cast(expected_body, cursor(), (0.0, 0.0, -1.0))
    assert got_hit.t == pytest.approx(expected_hit.t, abs=EXACT)
    assert_vectors_equal(got_hit.normal, expected_hit.normal)


def test_rigid_body_convex_hull_with_margin_grows_by_the_margin(addon):
    body = add("cube", "Body", size=2.0)
    bpy.ops.rigidbody.object_add()
    body.rigid_body.collision_shape = 'CONVEX_HULL'
    body.rigid_body.use_margin = True
    body.rigid_body.collision_margin = 0.1
    probe = add("cube", "Probe", size=2.0, location=(3.0, 0.0, 0.0))
    select(body, probe, active=probe)
    assert bpy.ops.object.convex_distance() == {'FINISHED'}
    # faces 1 apart, less the body's margin (0.1 as Blender stores it, in float32)
    assert last("distance").distance == pytest.approx(1.0 - float(np.float32(0.1)), abs=1e-12)


def test_clear_forgets_the_last_result(addon):
    a, b = modified_and_scaled_pair(gap_x=7.0)
    select(a, b)
    bpy.ops.object.convex_distance()
    assert operators.last_query
    bpy.ops.object.convex_clear()
    assert operators.last_query == {}
    assert bpy.context.scene.convex_tools.last_result == ""


@pytest.mark.parametrize("operator, needed", [
    ("convex_distance", 2), ("convex_penetration", 2), ("convex_contact", 2),
    ("convex_sweep", 2), ("convex_watch_add", 2), ("convex_ray_cast", 1), ("convex_convert", 1),
])
def test_every_query_refuses_a_wrong_selection_in_one_line(addon, operator, needed):
    bpy.ops.object.empty_add(location=(3, 0, 0))       # not geometry: never counts
    empty = bpy.context.active_object
    meshes = [add("cube", "Only", size=2.0)] if needed == 2 else []
    select(*meshes, empty, active=empty)
    with pytest.raises(RuntimeError, match=f"Select at least {needed}") as error:
        getattr(bpy.ops.object, operator)()
    assert len(str(error.value).strip().splitlines()) == 1
