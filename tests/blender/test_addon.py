"""The add-on through the real bpy module: objects → shapes, operators, overlays, lifecycle."""

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import core, objects  # noqa: E402
from convex_tools.core import (Box, Capsule, Cone, Cylinder, Ellipsoid, Hull, Sphere,  # noqa: E402
                               Transformed)

from bpy_helpers import add, select  # noqa: E402
from test_packaging import archive  # noqa: E402,F401  (the built extension, a fixture)


def world(obj):
    return np.array(obj.matrix_world)


def same_support(a, b, tol=1e-12):
    rng = np.random.default_rng(1)
    for d in rng.normal(size=(64, 3)):
        assert a.support(d) @ d == pytest.approx(b.support(d) @ d, abs=tol)


# --- objects → shapes ------------------------------------------------------------------------

def test_rigid_body_primitives_follow_blenders_sizing(addon):
    cube = add("cube", "Body", size=2.0, location=(1, 2, 3), rotation=(0.3, 0.2, 0.1))
    cube.scale = (1.0, 2.0, 0.5)   # non-uniform scale applies through the world matrix
    bpy.context.view_layer.update()
    bpy.ops.rigidbody.object_add()
    size = np.array([1.0, 1.0, 1.0])  # half the local bounds of a size-2 cube
    expected = {
        "BOX": Box(size),
        "SPHERE": Sphere(1.0),
        "CAPSULE": Capsule(1.0, 0.0),    # radius max(x, y); half height z - radius
        "CYLINDER": Cylinder(1.0, 1.0),
        "CONE": Cone(1.0, 1.0),
    }
    for shape, local in expected.items():
        cube.rigid_body.collision_shape = shape
        same_support(objects.shape_from_object(cube), Transformed(local, world(cube)))


def test_capsule_from_a_tall_mesh_keeps_blenders_total_height(addon):
    obj = add("cylinder", "Tall", radius=0.5, depth=4.0)
    obj.convex_tools.kind = 'CAPSULE'
    shape = objects.shape_from_object(obj)
    assert shape.support([0, 0, 1])[2] == pytest.approx(2.0)      # total half height = z size
    assert shape.support([1, 0, 0])[0] == pytest.approx(0.5)


def test_hull_is_of_the_evaluated_mesh_with_modifiers(addon):
    cube = add("cube", "Arrayed", size=2.0)
    array = cube.modifiers.new("array", 'ARRAY')
    array.count = 3                                   # three cubes side by side along +x
    shape = objects.shape_from_object(cube)
    assert shape.support([1, 0, 0])[0] == pytest.approx(5.0)
    assert shape.support([-1, 0, 0])[0] == pytest.approx(-1.0)


def test_text_and_curves_go_through_their_evaluated_mesh_and_empties_are_refused(addon):
    bpy.ops.object.text_add()
    text = bpy.context.active_object
    assert isinstance(objects.shape_from_object(text), Transformed)
    bpy.ops.object.empty_add()
    with pytest.raises(objects.ConversionError, match="no geometry"):
        objects.shape_from_object(bpy.context.active_object)


def test_moving_an_object_reuses_its_hull_and_editing_rebuilds_it(addon):
    obj = add("ico_sphere", "Rock", subdivisions=3)
    objects.shape_from_object(obj)
    builds = objects.hull_builds
    obj.location.x += 3.0
    obj.rotation_euler.z += 1.0
    bpy.context.view_layer.update()
    moved = objects.shape_from_object(obj)
    assert objects.hull_builds == builds
    assert moved.support([1, 0, 0])[0] > 3.5
    obj.data.vertices[0].co.x += 0.5
    obj.data.update()
    objects.shape_from_object(obj)
    assert objects.hull_builds == builds + 1


def test_margin_setting_adds_a_world_space_sphere(addon):
    cube = add("cube", "Padded", size=2.0)
    cube.convex_tools.kind = 'BOX'
    cube.convex_tools.margin = 0.25
    assert objects.shape_from_object(cube).support([1, 0, 0])[0] == pytest.approx(1.25)


# --- operators equal the core --------------------------------------------------------------

def scene_pair():
    a = add("cube", "A", size=2.0, location=(0, 0, 0), rotation=(0.2, 0.4, 0.1))
    a.scale = (1.5, 0.7, 1.0)
    a.modifiers.new("bevel", 'BEVEL').width = 0.2
    b = add("cylinder", "B", radius=0.8, depth=2.0, location=(4.0, 0.5, 0.3))
    b.rotation_euler = (0.5, 0.0, 0.3)
    bpy.context.view_layer.update()
    return a, b


def test_distance_operator_equals_core_distance_of_world_shapes(addon):
    a, b = scene_pair()
    select(a, b, active=b)
    assert bpy.ops.object.convex_distance() == {'FINISHED'}
    expected = core.distance(objects.shape_from_object(a), objects.shape_from_object(b))
    text = bpy.context.scene.convex_tools.last_result
    assert f"{expected.distance:.6g}" in text
    from convex_tools import api
    res = api.distance(a, b)
    assert res.distance == pytest.approx(expected.distance, abs=1e-12)
    np.testing.assert_allclose(res.point_a, expected.point_a, atol=1e-12)


def test_penetration_and_contact_operators_on_a_box_resting_in_a_box(addon):
    floor = add("cube", "Floor", size=2.0)
    floor.scale = (5.0, 5.0, 1.0)
    box = add("cube", "Crate", size=2.0, location=(0.3, -0.2, 1.9))  # 0.1 into the floor
    bpy.context.view_layer.update()
    select(box, floor, active=floor)
    for method in ('EPA', 'MPR', 'HYBRID'):
        assert bpy.ops.object.convex_penetration(method=method) == {'FINISHED'}
        assert "depth 0.1" in bpy.context.scene.convex_tools.last_result
    from convex_tools import api
    contact = api.penetration(box, floor)
    # Blender stores the location in float32: the depth is 2 - float32(1.9), not exactly 0.1.
    assert contact.depth == pytest.approx(2.0 - float(np.float32(1.9)), abs=1e-12)
    np.testing.assert_allclose(contact.normal, [0, 0, -1], atol=1e-9)   # from crate to floor
    assert bpy.ops.object.convex_contact() == {'FINISHED'}
    assert "4 points" in bpy.context.scene.convex_tools.last_result


def test_ray_cast_operator_hits_the_nearest_selected_object(addon):
    near = add("cube", "Near", size=2.0, location=(0, 0, 0))
    far = add("uv_sphere", "Far", radius=1.0, location=(0, 0, -5))
    select(near, far)
    bpy.context.scene.cursor.location = (0.2, 0.1, 10.0)
    assert bpy.ops.object.convex_ray_cast(axis='NEG_Z') == {'FINISHED'}
    assert bpy.context.scene.convex_tools.last_result == "Ray hits Near at t = 9"


def test_sweep_operator_stops_the_active_object_at_first_contact(addon):
    wall = add("cube", "Wall", size=2.0, location=(5, 0, 0))
    mover = add("cube", "Mover", size=2.0, location=(0, 0, 0))
    select(wall, mover, active=mover)
    assert bpy.ops.object.convex_sweep(translation=(6.0, 0.0, 0.0)) == {'FINISHED'}
    assert bpy.context.scene.convex_tools.last_result == "Mover first touches Wall at t = 0.5"
    assert bpy.ops.object.convex_sweep(mode='TARGET') == {'FINISHED'}
    assert "t = 0.6" in bpy.context.scene.convex_tools.last_result  # 3 of the 5 to the target


# --- watch ---------------------------------------------------------------------------------

def test_watch_updates_when_an_object_moves(addon):
    a = add("cube", "A", size=2.0, location=(0, 0, 0))
    b = add("cube", "B", size=2.0, location=(4, 0, 0))
    select(a, b, active=b)
    bpy.ops.object.convex_watch_add()
    pair = bpy.context.scene.convex_tools.watch_pairs[0]
    assert pair.result == "d = 2"
    b.location.x -= 0.1
    bpy.context.view_layer.update()   # the depsgraph handler re-runs the pair
    assert pair.result == "d = 1.9"


def test_watch_redraws_the_closest_segment_after_a_move_of_a_tenth(addon):
    from convex_tools import overlay, watch
    a = add("cube", "A", size=2.0, location=(0, 0, 0))
    b = add("cube", "B", size=2.0, location=(4, 0, 0.5))
    select(a, b, active=b)
    bpy.ops.object.convex_watch_add()

    def drawn_segment():
        (drawing,) = overlay.drawings([watch.OVERLAY_KEY])
        (segment,) = [(p, q) for p, q, role in drawing.lines if role == "closest"]
        return np.array(segment)

    before = drawn_segment()
    assert before[1][0] - before[0][0] == pytest.approx(2.0)   # face x=1 to face x=3
    b.location.x -= 0.1
    bpy.context.view_layer.update()
    after = drawn_segment()
    assert after[1][0] - after[0][0] == pytest.approx(1.9, abs=1e-6)
    assert after[1][0] == pytest.approx(before[1][0] - 0.1, abs=1e-6)   # B's end followed B


# --- pictures ------------------------------------------------------------------------------

def test_closest_points_are_drawn_at_their_projected_pixels(addon, tmp_path):
    from convex_tools import overlay, picture, preferences, result_drawings
    a = add("cube", "A", size=2.0, location=(-2, 0, 0))
    b = add("uv_sphere", "B", radius=1.0, location=(2.5, 0, 0.5))
    res = core.distance(objects.shape_from_object(a), objects.shape_from_object(b))
    overlay.clear()
    overlay.show("query", result_drawings.distance_drawing(res))
    path = str(tmp_path / "distance.png")
    width, height = 320, 200
    view_projection = picture.render_picture(path, width=width, height=height)
    pixels = picture.load_png(path)
    project = overlay.projector(view_projection, width, height)
    colour = np.array(preferences.DEFAULT_COLORS["closest"][:3])
    for p in (res.point_a, res.point_b, 0.5 * (res.point_a + res.point_b)):
        x, y = project(p)
        i, j = int(round(y)), int(round(x))
        window = pixels[max(i - 2, 0):i + 3, max(j - 2, 0):j + 3, :3]
        assert np.min(np.linalg.norm(window - colour, axis=2)) < 0.05, (p, x, y)


# --- lifecycle -----------------------------------------------------------------------------

def installed():
    """Everything registration puts into Blender, as (description, present) pairs."""
    from convex_tools import cli, level_check, live, overlay, proxies, ui, watch
    return [
        ("Object.convex_tools", hasattr(bpy.types.Object, "convex_tools")),
        ("Scene.convex_tools", hasattr(bpy.types.Scene, "convex_tools")),
        ("Scene.convex_level", hasattr(bpy.types.Scene, "convex_level")),
        ("draw handlers", bool(overlay._handles)),
        ("depsgraph handler", watch._on_depsgraph_update in
         bpy.app.handlers.depsgraph_update_post),
        ("load_post handler", level_check._show_findings_on_load in bpy.app.handlers.load_post),
        ("proxy index handler", proxies.forget in bpy.app.handlers.depsgraph_update_post),
        *((f"live check {name} handler", handler in getattr(bpy.app.handlers, name))
          for name, handler in live._HANDLERS),
        ("Object menu entry", ui._object_menu in bpy.types.VIEW3D_MT_object._dyn_ui_initialize()),
        ("-c convex_tools command", cli._command_handle is not None),
        *((cls.__name__, cls.is_registered) for cls in convex_tools_classes()),
    ]


def convex_tools_classes():
    import convex_tools
    return convex_tools.classes()


def assert_nothing_installed():
    assert [name for name, present in installed() if present] == []
    assert not hasattr(bpy.types, "OBJECT_OT_convex_distance")
    assert not hasattr(bpy.types, "VIEW3D_PT_convex_tools")


def test_unregister_leaves_nothing_behind_and_register_again_works():
    import convex_tools
    bpy.ops.wm.read_factory_settings(use_empty=True)
    handlers_before = {name: len(getattr(bpy.app.handlers, name))
                       for name in ("depsgraph_update_post", "load_post", "undo_post",
                                    "redo_post")}
    for _ in range(2):
        convex_tools.register()
        assert [name for name, present in installed() if not present] == []
        convex_tools.unregister()
        assert_nothing_installed()
        assert {name: len(getattr(bpy.app.handlers, name))
                for name in handlers_before} == handlers_before


def test_unregister_stops_a_running_live_check():
    import convex_tools
    from convex_tools import live
    bpy.ops.wm.read_factory_settings(use_empty=True)
    convex_tools.register()
    add("cube", "Crate", size=2.0)
    bpy.context.scene.convex_tools.live_check = True
    assert live.current() is not None and bpy.app.timers.is_registered(live._tick)
    convex_tools.unregister()
    assert live.current() is None and not bpy.app.timers.is_registered(live._tick)
    assert_nothing_installed()


def test_unregistering_twice_raises_nothing():
    # Regression: the second unregister raised AttributeError (Scene has no convex_level).
    import convex_tools
    convex_tools.register()
    convex_tools.unregister()
    convex_tools.unregister()
    assert_nothing_installed()


def test_registering_twice_installs_everything_once():
    # Regression: the second register raised ValueError (already registered as a subclass).
    import convex_tools
    from convex_tools import level_check, overlay, ui, watch
    convex_tools.register()
    try:
        convex_tools.register()
        assert len(overlay._handles) == 2
        assert bpy.app.handlers.depsgraph_update_post.count(watch._on_depsgraph_update) == 1
        assert bpy.app.handlers.load_post.count(level_check._show_findings_on_load) == 1
        from convex_tools import live
        for name, handler in live._HANDLERS:
            assert getattr(bpy.app.handlers, name).count(handler) == 1, name
        assert bpy.types.VIEW3D_MT_object._dyn_ui_initialize().count(ui._object_menu) == 1
    finally:
        convex_tools.unregister()
    assert_nothing_installed()


def test_the_classes_tuple_holds_every_class_the_add_on_defines():
    import importlib
    import pkgutil

    import convex_tools
    registrable = (bpy.types.Operator, bpy.types.Panel, bpy.types.Menu, bpy.types.UIList,
                   bpy.types.PropertyGroup, bpy.types.AddonPreferences)
    defined = set()
    for info in pkgutil.iter_modules(convex_tools.__path__):
        if info.name == "core":
            continue
        module = importlib.import_module(f"convex_tools.{info.name}")
        defined.update(value for value in vars(module).values()
                       if isinstance(value, type) and issubclass(value, registrable)
                       and value.__module__ == module.__name__)
    classes = convex_tools.classes()
    assert len(set(classes)) == len(classes)
    assert set(classes) == defined


def test_register_installs_handlers_menu_and_classes(addon):
    from convex_tools import overlay
    assert len(overlay._handles) == 2     # POST_VIEW geometry and POST_PIXEL labels
    assert [name for name, present in installed() if not present] == []


def test_settings_survive_save_and_reload(addon, tmp_path):
    cube = add("cube", "Saved", size=2.0)
    cube.convex_tools.kind = 'ROUND_BOX'
    cube.convex_tools.round_radius = 0.3
    cube.convex_tools.margin = 0.05
    settings = bpy.context.scene.convex_tools
    settings.penetration_method = 'MPR'
    settings.ray_axis, settings.ray_direction, settings.ray_max_distance = \
        'DIRECTION', (0.0, 0.6, -0.8), 12.5
    settings.sweep_mode, settings.sweep_translation = 'TARGET', (1.0, 2.0, 3.0)
    other = add("cube", "Other", size=2.0, location=(4, 0, 0))
    pair = bpy.context.scene.convex_tools.watch_pairs.add()
    pair.object_a, pair.object_b, pair.query = cube, other, 'PENETRATION'
    path = str(tmp_path / "saved.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=path)
    cube = bpy.data.objects["Saved"]
    assert cube.convex_tools.kind == 'ROUND_BOX'
    assert cube.convex_tools.round_radius == pytest.approx(0.3)
    assert cube.convex_tools.margin == pytest.approx(0.05)
    settings = bpy.context.scene.convex_tools
    assert settings.penetration_method == 'MPR'
    assert (settings.ray_axis, settings.ray_max_distance) == ('DIRECTION', 12.5)
    assert tuple(settings.ray_direction) == pytest.approx((0.0, 0.6, -0.8))
    assert settings.sweep_mode == 'TARGET'
    assert tuple(settings.sweep_translation) == pytest.approx((1.0, 2.0, 3.0))
    (pair,) = bpy.context.scene.convex_tools.watch_pairs
    assert (pair.object_a.name, pair.object_b.name, pair.query) == ("Saved", "Other", 'PENETRATION')


def test_watch_follows_shape_settings_as_well_as_motion(addon):
    a = add("cube", "A", size=2.0, location=(0, 0, 0))
    b = add("cube", "B", size=2.0, location=(4, 0, 0))
    select(a, b, active=b)
    bpy.ops.object.convex_watch_add()
    pair = bpy.context.scene.convex_tools.watch_pairs[0]
    b.convex_tools.kind = 'BOX'
    b.convex_tools.margin = 0.5          # B grows by 0.5 toward A
    from convex_tools import watch
    watch.refresh(bpy.context.scene)
    assert pair.result == "d = 1.5"


def test_per_object_clearance_setting_is_used_by_the_level_check(addon):
    from convex_tools import api
    door = add("cube", "Door", size=2.0, location=(0, 0, 0))
    add("cube", "Crate", size=2.0, location=(2.3, 0, 0))      # 0.3 from the door
    assert api.check_scene(clearance=0.0) == []
    door.convex_tools.use_clearance = True
    door.convex_tools.clearance = 0.5
    findings = api.check_scene(clearance=0.0)
    assert [(f.object_a, f.object_b, f.kind) for f in findings] == [("Crate", "Door", "too_close")]
    assert findings[0].distance == pytest.approx(0.3, abs=1e-6)


# --- the last result, from the installed extension -------------------------------------------

# Installs the archive into an empty user folder's "user_default" repository, measures two cubes
# 1 apart with the operator, and reads the last result as a script would: through the API of the
# package Blender registered (bl_ext.user_default.convex_tools), not a checkout's convex_tools.
LAST_RESULT_CHILD = '''
import json, sys
import bpy

bpy.ops.extensions.package_install_files(filepath=sys.argv[1], repo="user_default",
                                         enable_on_install=True)
for obj in list(bpy.data.objects):
    bpy.data.objects.remove(obj)
bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0.0, 0.0, 0.0))
bpy.context.active_object.name = "CubeA"
bpy.ops.mesh.primitive_cube_add(size=2.0, location=(3.0, 0.0, 0.0))
bpy.context.active_object.name = "CubeB"
bpy.ops.object.select_all(action='SELECT')
bpy.ops.object.convex_distance()
from bl_ext.user_default.convex_tools import api
last = api.last_result()
print("RESULT " + json.dumps({"query": last.query, "objects": last.objects,
                              "distance": last.result.distance,
                              "checkout_imported": "convex_tools" in sys.modules}))
'''


def test_a_script_reads_the_last_result_from_the_installed_extensions_api(archive, tmp_path):
    import json
    import os
    import subprocess
    import sys
    child = tmp_path / "child.py"
    child.write_text(LAST_RESULT_CHILD, encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BLENDER_USER_") and k != "PYTHONPATH"}
    env["BLENDER_USER_RESOURCES"] = str(tmp_path / "user")
    proc = subprocess.run([sys.executable, str(child), str(archive[0])], capture_output=True,
                          text=True, env=env, cwd=str(tmp_path), timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout + proc.stderr
    result = json.loads(lines[-1][len("RESULT "):])
    assert (result["query"], result["objects"]) == ("distance", ["CubeA", "CubeB"])
    assert result["distance"] == pytest.approx(1.0, abs=1e-6)
    assert not result["checkout_imported"]
