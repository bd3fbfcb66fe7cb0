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


def test_last_result_is_the_public_way_to_the_last_query(addon):
    from convex_tools import api
    assert api.last_result() is None                      # nothing has run yet
    a, b = modified_and_scaled_pair(gap_x=4.2)
    select(a, b, active=b)
    bpy.ops.object.convex_penetration(method='MPR')
    got = api.last_result()
    assert (got.query, got.objects, got.settings) == ("penetration", ("A", "B"), {"method": 'MPR'})
    assert got.result is operators.last_query["result"]
    assert got.result.depth == pytest.approx(
        core.penetration(shape(a), shape(b), "mpr").depth, abs=EXACT)
    bpy.ops.object.convex_clear()
    assert api.last_result() is None


# --- settings: the Sidebar's by default, the operator's own when given, and redo -------------

def floor_and_crate():
    """A rock 0.1 into a wide floor."""
    floor = add("cube", "Floor", size=2.0)
    floor.scale = (5.0, 5.0, 1.0)
    crate = add("ico_sphere", "Rock", radius=1.0, subdivisions=2, location=(0.3, -0.2, 1.9))
    crate.rotation_euler = (0.3, 0.2, 0.1)
    bpy.context.view_layer.update()
    select(crate, floor, active=floor)
    return crate, floor


def settings():
    return bpy.context.scene.convex_tools


@pytest.mark.parametrize("method", ["EPA", "MPR", "HYBRID"])
def test_penetration_takes_the_sidebar_method_unless_given_one(addon, method):
    crate, floor = floor_and_crate()
    settings().penetration_method = method
    assert bpy.ops.object.convex_penetration() == {'FINISHED'}
    assert operators.last_query["settings"] == {"method": method}
    expected = core.penetration(shape(crate), shape(floor), method.lower())
    assert last("penetration").depth == pytest.approx(expected.depth, abs=EXACT)
    other = 'MPR' if method != 'MPR' else 'EPA'
    assert bpy.ops.object.convex_penetration(method=other) == {'FINISHED'}
    assert operators.last_query["settings"] == {"method": other}
    assert settings().penetration_method == method      # the Sidebar keeps its own


def test_ray_cast_max_distance_stops_the_ray(addon):
    select(add("cube", "Crate", size=2.0))
    bpy.context.scene.cursor.location = (0.0, 0.0, 10.0)
    # The top face is 9 below the cursor.
    assert bpy.ops.object.convex_ray_cast(axis='NEG_Z', max_distance=8.5) == {'FINISHED'}
    assert last("ray_cast") is None
    assert settings().last_result == "The ray misses every selected object within 8.5"
    assert bpy.ops.object.convex_ray_cast(axis='NEG_Z', max_distance=9.5) == {'FINISHED'}
    assert last("ray_cast").t == pytest.approx(9.0, abs=EXACT)


def test_ray_cast_along_a_direction_of_any_length_measures_t_as_distance(addon):
    select(add("cube", "Crate", size=2.0))
    bpy.context.scene.cursor.location = (-4.0, 0.0, 7.0)
    # Along (3, 0, -4), whose unit is (0.6, 0, -0.8): the top face (z = 1) is 6 below, reached
    # after 6 / 0.8 = 7.5 units, at x = -4 + 0.6 * 7.5 = 0.5.
    settings().ray_axis = 'DIRECTION'
    settings().ray_direction = (3.0, 0.0, -4.0)
    assert bpy.ops.object.convex_ray_cast() == {'FINISHED'}
    hit = last("ray_cast")
    assert hit.t == pytest.approx(7.5, abs=1e-9)
    np.testing.assert_allclose(hit.point, [0.5, 0.0, 1.0], atol=1e-9)
    assert operators.last_query["settings"]["direction"] == pytest.approx([0.6, 0.0, -0.8])


def test_ray_cast_takes_the_sidebar_axis_and_distance_unless_given(addon):
    select(add("cube", "Crate", size=2.0))
    bpy.context.scene.cursor.location = (0.0, 10.0, 0.0)
    settings().ray_axis = 'NEG_Y'
    settings().ray_max_distance = 5.0
    bpy.ops.object.convex_ray_cast()
    assert last("ray_cast") is None                        # 9 to the face, 5 allowed
    bpy.ops.object.convex_ray_cast(max_distance=0.0)       # 0: without limit
    assert last("ray_cast").t == pytest.approx(9.0, abs=EXACT)
    bpy.ops.object.convex_ray_cast(axis='Y')               # away from the cube
    assert last("ray_cast") is None


def test_a_zero_ray_direction_is_a_one_line_error(addon):
    select(add("cube", "Crate", size=2.0))
    with pytest.raises(RuntimeError, match="The ray direction is zero") as error:
        bpy.ops.object.convex_ray_cast(axis='DIRECTION', direction=(0.0, 0.0, 0.0))
    assert len(str(error.value).strip().splitlines()) == 1


def wall_and_mover():
    wall = add("cube", "Wall", size=2.0, location=(5.0, 0.0, 0.0))
    mover = add("cube", "Mover", size=2.0)
    select(wall, mover, active=mover)


def test_sweep_takes_the_sidebar_translation_and_motion_unless_given(addon):
    wall_and_mover()
    settings().sweep_translation = (12.0, 0.0, 0.0)
    assert bpy.ops.object.convex_sweep() == {'FINISHED'}
    assert last("sweep").t == pytest.approx(0.25, abs=EXACT)     # 3 of 12 to touch
    assert bpy.ops.object.convex_sweep(translation=(6.0, 0.0, 0.0)) == {'FINISHED'}
    assert last("sweep").t == pytest.approx(0.5, abs=EXACT)
    settings().sweep_mode = 'TARGET'
    assert bpy.ops.object.convex_sweep() == {'FINISHED'}
    assert last("sweep").t == pytest.approx(0.6, abs=EXACT)      # 3 of the 5 to the target
    assert bpy.ops.object.convex_sweep(mode='TRANSLATION') == {'FINISHED'}
    assert last("sweep").t == pytest.approx(0.25, abs=EXACT)


def test_sweep_to_a_target_among_several_objects_is_a_one_line_error(addon):
    add("cube", "Crate", size=2.0, location=(0.0, 5.0, 0.0))
    wall_and_mover()
    bpy.data.objects["Crate"].select_set(True)
    with pytest.raises(RuntimeError, match="exactly one other object \\(2 selected\\)"):
        bpy.ops.object.convex_sweep(mode='TARGET')


@pytest.mark.parametrize("operator, has_settings", [
    ("convex_distance", False), ("convex_contact", False), ("convex_convert", False),
    ("convex_penetration", True), ("convex_ray_cast", True), ("convex_sweep", True),
])
def test_only_queries_with_settings_enter_the_undo_history(addon, operator, has_settings):
    # Blender redoes only operators that pushed an undo step (operators.REDO_OPTIONS says where
    # that is written); the others change no data worth undoing.
    options = getattr(bpy.types, f"OBJECT_OT_{operator}").bl_options
    assert ('UNDO' in options) == has_settings and 'REGISTER' in options


def run_from_a_button(operator, **arguments):
    """Run ``operator`` as a button does: registered in the window manager's list of
    operators, with an undo step (the undo system needs one step first in background mode)."""
    bpy.ops.ed.undo_push(message="before")
    op = getattr(bpy.ops.object, operator)
    assert op('EXEC_DEFAULT', True, **arguments) == {'FINISHED'}
    last_op = bpy.context.window_manager.operators[-1]
    assert last_op.bl_idname == f"OBJECT_OT_{operator}"
    return last_op


def adjust_last_operation(last_op, **values):
    """What Adjust Last Operation does when a value changes: set it on the last operator and
    redo it (undo its step, run it again), in a 3D viewport as the panel is. Called with undo
    on, as from the panel, so that the redone operator pushes its step again and the next
    adjustment undoes that one only."""
    for name, value in values.items():
        setattr(last_op.properties, name, value)
    window = bpy.context.window
    area = next((a for a in window.screen.areas if a.type == 'VIEW_3D'), None)
    if area is None:
        pytest.skip("no 3D view in the factory screen")
    region = next(r for r in area.regions if r.type == 'WINDOW')
    with bpy.context.temp_override(window=window, area=area, region=region):
        assert bpy.ops.ed.undo_redo('EXEC_DEFAULT', True) == {'FINISHED'}


def test_adjust_last_operation_changes_the_penetration_method(addon):
    crate, floor = floor_and_crate()
    expected = {m: core.penetration(shape(crate), shape(floor), m.lower()).depth
                for m in ("EPA", "MPR")}
    last_op = run_from_a_button("convex_penetration")
    # The panel shows the method the run took from the Sidebar, not an empty "default".
    assert last_op.properties.method == 'EPA'
    assert operators.last_query["settings"] == {"method": 'EPA'}
    assert last("penetration").depth == pytest.approx(expected["EPA"], abs=EXACT)
    adjust_last_operation(last_op, method='MPR')
    # (MPR's polished depth agrees with EPA's to ~1e-15 here: the settings say which ran.)
    assert operators.last_query["settings"] == {"method": 'MPR'}
    assert last("penetration").depth == pytest.approx(expected["MPR"], abs=EXACT)
    assert settings().last_result.endswith("(MPR)")
    assert settings().penetration_method == 'EPA'       # the Sidebar keeps its own


def test_adjust_last_operation_changes_the_ray_and_the_sweep(addon):
    select(add("cube", "Crate", size=2.0))
    bpy.context.scene.cursor.location = (0.0, 0.0, 10.0)
    last_op = run_from_a_button("convex_ray_cast", axis='NEG_Z')
    assert last("ray_cast").t == pytest.approx(9.0, abs=EXACT)
    adjust_last_operation(last_op, max_distance=4.0)
    assert last("ray_cast") is None
    adjust_last_operation(last_op, axis='Y')                       # sideways: misses
    assert last("ray_cast") is None
    adjust_last_operation(last_op, max_distance=0.0, axis='DIRECTION', direction=(0.0, 0.0, -7.0))
    assert last("ray_cast").t == pytest.approx(9.0, abs=EXACT)      # t is the distance
    assert operators.last_query["settings"]["direction"] == pytest.approx([0.0, 0.0, -1.0])

    bpy.data.objects["Crate"].location = (5.0, 0.0, 0.0)
    mover = add("cube", "Mover", size=2.0, location=(0.0, 0.0, 0.0))
    select(bpy.data.objects["Crate"], mover, active=mover)
    last_op = run_from_a_button("convex_sweep", translation=(6.0, 0.0, 0.0))
    assert last("sweep").t == pytest.approx(0.5, abs=EXACT)
    adjust_last_operation(last_op, translation=(12.0, 0.0, 0.0))
    assert last("sweep").t == pytest.approx(0.25, abs=EXACT)
    adjust_last_operation(last_op, mode='TARGET')
    assert last("sweep").t == pytest.approx(0.6, abs=EXACT)


class _Row:
    def __init__(self, drawn):
        self.active, self.drawn = True, drawn

    def prop(self, owner, name):
        self.drawn.append((name, self.active))


class _Layout:
    """Records what a draw() puts in the panel: (property, active) in order."""

    def __init__(self):
        self.use_property_split, self.drawn = False, []

    def row(self):
        return _Row(self.drawn)


@pytest.mark.parametrize("operator, values, drawn", [
    ("OBJECT_OT_convex_ray_cast", {"axis": 'NEG_Z'},
     [("axis", True), ("direction", False), ("max_distance", True)]),
    ("OBJECT_OT_convex_ray_cast", {"axis": 'DIRECTION'},
     [("axis", True), ("direction", True), ("max_distance", True)]),
    ("OBJECT_OT_convex_sweep", {"mode": 'TARGET'}, [("mode", True), ("translation", False)]),
    ("OBJECT_OT_convex_sweep", {"mode": 'TRANSLATION'},
     [("mode", True), ("translation", True)]),
    ("OBJECT_OT_convex_penetration", {"method": 'MPR'}, [("method", True)]),
])
def test_adjust_last_operation_greys_out_what_does_not_apply(addon, operator, values, drawn):
    from types import SimpleNamespace
    cls = getattr(operators, operator)
    panel = SimpleNamespace(layout=_Layout(), scene_defaults=cls.scene_defaults,
                            applies_only=cls.applies_only, **values)
    cls.draw(panel, bpy.context)
    assert panel.layout.use_property_split and panel.layout.drawn == drawn
