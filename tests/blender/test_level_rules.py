"""Level rules through Blender: the rules file or Text in the scene, groups by collection and by
custom property, passive bodies as static, the fix and drop operators (result and undo), and
lengths in the scene's units."""

import pytest

bpy = pytest.importorskip("bpy")

import numpy as np  # noqa: E402

from bpy_helpers import cube  # noqa: E402
from convex_tools import api, level_check  # noqa: E402
from convex_tools.core.rules import RulesError  # noqa: E402

RULES = """
[defaults]
clearance = 0.05

[groups.ground]
collections = ["Ground"]
static = true

[groups.crates]
names = ["Crate*"]
must_rest = true

[groups.markers]
property = "marker=true"

[[pair]]
groups = ["ground", "*"]
clearance = 0.0

[[pair]]
groups = ["markers", "*"]
ignore = true
"""


@pytest.fixture(scope="module")
def addon(registered):
    """The add-on registered for this module (``conftest.registered``)."""
    return registered


def add(name, location, scale=(1, 1, 1), collection=None):
    return cube(name, location, scale, collection=collection)


@pytest.fixture
def level(addon):
    """A floor (in the Ground collection) with a crate resting on it, one sunk 0.1, one
    floating 0.3 above it and one 0.02 from the first."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    ground = bpy.data.collections.new("Ground")
    scene.collection.children.link(ground)
    add("Floor", (0, 0, -0.5), (20, 20, 1), ground)
    add("Crate.rest", (0, 0, 0.5))
    add("Crate.sunk", (3, 0, 0.4))
    add("Crate.float", (6, 0, 0.8))
    add("Crate.near", (1.02, 0, 0.5))
    bpy.context.view_layer.update()
    return scene


def found(**options):
    return sorted((f.kind, f.object_a, f.object_b) for f in api.check_scene(**options))


def write_rules(tmp_path, text=RULES):
    path = tmp_path / "rules.toml"
    path.write_text(text)
    return path


def test_rules_file_argument(level, tmp_path):
    assert found(rules=str(write_rules(tmp_path))) == [
        ("floating", "Crate.float", "Floor"), ("sunk", "Crate.sunk", "Floor"),
        ("too_close", "Crate.near", "Crate.rest")]


def test_the_scene_rules_file_is_used_when_none_is_given(level, tmp_path):
    level.convex_level.rules_file = str(write_rules(tmp_path))
    assert ("sunk", "Crate.sunk", "Floor") in found()


def test_a_text_datablock_holds_the_rules(level):
    text = bpy.data.texts.new("level_rules.toml")
    text.write(RULES)
    level.convex_level.rules_text = text
    assert ("floating", "Crate.float", "Floor") in found()
    # A Text passed directly works too, and names itself in errors.
    bad = bpy.data.texts.new("bad")
    bad.write("[defaults]\nclearance = -2\n")
    with pytest.raises(RulesError, match="Text bad:2: defaults.clearance"):
        api.check_scene(rules=bad)


def test_without_rules_nothing_resting_on_the_floor_is_too_close(level):
    kinds = found(clearance=0.05)
    assert not [k for k in kinds if "Floor" in k[1:] and k[0] == "too_close"]
    assert ("too_close", "Crate.near", "Crate.rest") in kinds


def test_a_passive_rigid_body_is_static_and_supports(level, tmp_path):
    # Without the ground group the floor is movable: the sunk crate merely overlaps it...
    rules = RULES.replace('collections = ["Ground"]', 'collections = ["Nothing"]')
    assert ("overlap", "Crate.sunk", "Floor") in found(rules=str(write_rules(tmp_path, rules)))
    # ...until it is a passive rigid body.
    floor = bpy.data.objects["Floor"]
    with bpy.context.temp_override(active_object=floor, object=floor,
                                   selected_objects=[floor]):
        bpy.ops.rigidbody.object_add(type='PASSIVE')
    assert ("sunk", "Crate.sunk", "Floor") in found(rules=str(write_rules(tmp_path, rules)))


def test_a_group_by_custom_property(level, tmp_path):
    marker = add("Marker", (3, 0, 0.5), (0.3, 0.3, 0.3))
    marker["marker"] = True
    bpy.context.view_layer.update()
    kinds = found(rules=str(write_rules(tmp_path)))
    assert not [k for k in kinds if "Marker" in k]


def test_findings_carry_rule_severity_and_fix(level, tmp_path):
    findings = {f.kind: f for f in api.check_scene(rules=str(write_rules(tmp_path)))}
    sunk = findings["sunk"]
    assert (sunk.move, sunk.rule, sunk.severity) == ("Crate.sunk", "defaults (embed 0)",
                                                     "error")
    np.testing.assert_allclose(sunk.translation, [0, 0, 0.1], atol=1e-6)
    assert findings["too_close"].rule == "defaults"


def stored(scene):
    return [(f.kind, f.object_a, f.object_b) for f in scene.convex_level.findings]


def test_apply_fix_moves_the_object_and_undo_puts_it_back(level, tmp_path):
    settings = level.convex_level
    settings.rules_file = str(write_rules(tmp_path))
    assert bpy.ops.object.convex_check_level() == {'FINISHED'}
    index = stored(level).index(("sunk", "Crate.sunk", "Floor"))
    item = settings.findings[index]
    assert item.move == "Crate.sunk" and item.severity == "error"
    assert bpy.ops.object.convex_resolve(index=index) == {'FINISHED'}
    crate = bpy.data.objects["Crate.sunk"]
    assert crate.location.z == pytest.approx(0.5, abs=1e-6)
    assert ("sunk", "Crate.sunk", "Floor") not in stored(level)
    # Checked again: resolved.
    assert ("sunk", "Crate.sunk", "Floor") not in found()


def undo_step(operator, **properties):
    """Run ``operator`` as the interface does an undoable one: Blender pushes an undo step
    after it (headless, operators called from Python push none: the test pushes it)."""
    result = operator(**properties)
    bpy.ops.ed.undo_push(message="after")
    return result


def test_apply_fix_and_drop_are_undone_in_one_step(level, tmp_path):
    from convex_tools.fixes import OBJECT_OT_convex_drop_to_support, OBJECT_OT_convex_resolve

    # Both change data: Blender keeps an undo step for each (the UNDO flag).
    assert 'UNDO' in OBJECT_OT_convex_resolve.bl_options
    assert 'UNDO' in OBJECT_OT_convex_drop_to_support.bl_options
    settings = level.convex_level
    settings.rules_file = str(write_rules(tmp_path))
    bpy.ops.object.convex_check_level()
    index = stored(level).index(("sunk", "Crate.sunk", "Floor"))
    bpy.ops.ed.undo_push(message="before the fix")
    assert undo_step(bpy.ops.object.convex_resolve, index=index) == {'FINISHED'}
    assert bpy.data.objects["Crate.sunk"].location.z == pytest.approx(0.5, abs=1e-6)
    bpy.ops.ed.undo()
    assert bpy.data.objects["Crate.sunk"].location.z == pytest.approx(0.4, abs=1e-6)
    crate = bpy.data.objects["Crate.float"]
    for obj in bpy.context.selected_objects:
        obj.select_set(False)
    crate.select_set(True)
    bpy.context.view_layer.objects.active = crate
    bpy.ops.ed.undo_push(message="before the drop")
    assert undo_step(bpy.ops.object.convex_drop_to_support) == {'FINISHED'}
    assert bpy.data.objects["Crate.float"].location.z == pytest.approx(0.5, abs=1e-6)
    bpy.ops.ed.undo()
    assert bpy.data.objects["Crate.float"].location.z == pytest.approx(0.8, abs=1e-6)


def test_apply_fix_without_a_fix_says_why(level, tmp_path):
    settings = level.convex_level
    settings.rules_file = str(write_rules(tmp_path))
    bpy.ops.object.convex_check_level()
    item = settings.findings.add()
    item.kind, item.object_a, item.object_b = "overlap", "Floor", "Wall"
    with pytest.raises(RuntimeError, match="No automatic fix for Floor / Wall: both objects "
                                           "are static"):
        bpy.ops.object.convex_resolve(index=len(settings.findings) - 1)


def test_apply_fix_polls_for_findings(level):
    level.convex_level.findings.clear()
    assert not bpy.ops.object.convex_resolve.poll()


def test_drop_to_support_lands_on_what_is_below(level):
    for obj in bpy.context.selected_objects:
        obj.select_set(False)
    crate = bpy.data.objects["Crate.float"]
    top = add("Crate.top", (0.2, 0, 3.0), (0.5, 0.5, 0.5))   # above Crate.rest
    crate.select_set(True)
    top.select_set(True)
    bpy.context.view_layer.objects.active = crate
    assert bpy.ops.object.convex_drop_to_support() == {'FINISHED'}
    assert crate.location.z == pytest.approx(0.5, abs=1e-6)
    # Onto the crate below it: its top is at 1.0, the half-size crate's centre 0.25 above.
    assert top.location.z == pytest.approx(1.25, abs=1e-6)


def test_drop_to_support_polls_for_a_selection(level):
    for obj in bpy.context.selected_objects:
        obj.select_set(False)
    assert not bpy.ops.object.convex_drop_to_support.poll()


def test_lengths_in_the_scene_units(level):
    units = level.unit_settings
    units.system, units.length_unit, units.scale_length = 'METRIC', 'CENTIMETERS', 1.0
    assert level_check.length_text(level, 0.123) == "12.3 cm"
    units.scale_length = 0.01        # one Blender unit is a centimetre
    assert level_check.length_text(level, 12.3) == "12.3 cm"
    units.system = 'IMPERIAL'
    units.length_unit = 'INCHES'
    units.scale_length = 1.0
    assert level_check.length_text(level, 0.0254) == "1.00 in"


def test_the_rules_file_chooses_the_engine_unless_the_flag_does(level, tmp_path):
    # A Godot-only proxy: "-colonly" is not Unreal's, so under Unreal it is an object of its
    # own; under Godot it is the crate's collision and the look beside it is not checked.
    add("Crate.look", (9, 9, 0.5))
    add("Crate.look-colonly", (9, 9, 0.5))
    bpy.context.view_layer.update()
    godot = write_rules(tmp_path, RULES.replace("[defaults]", '[defaults]\nengine = "godot"'))
    names = {n for f in api.check_scene(rules=str(godot)) for n in (f.object_a, f.object_b)}
    assert "Crate.look" not in names
    unreal = {n for f in api.check_scene(rules=str(godot), engine="unreal")
              for n in (f.object_a, f.object_b)}
    assert {"Crate.look", "Crate.look-colonly"} <= unreal      # two crates in one place
