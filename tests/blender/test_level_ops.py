"""The Check Level operator, its stored findings and the selection operators (background mode)."""

import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import cli, operators  # noqa: E402


@pytest.fixture(scope="module")
def addon(registered):
    """The add-on registered for this module (``conftest.registered``)."""
    return registered


@pytest.fixture
def scene(addon):
    import bmesh

    bpy.ops.wm.read_factory_settings(use_empty=True)
    mesh = bpy.data.meshes.new("cube")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bm.to_mesh(mesh)
    bm.free()
    scene = bpy.context.scene
    ground = bpy.data.collections.new("Ground")
    scene.collection.children.link(ground)
    for name, location, coll in [("Crate", (0, 0, 0.5), None), ("Barrel", (0.8, 0, 0.5), None),
                                 ("Keg", (1.83, 0, 0.5), None), ("Lonely", (5, 5, 0.5), None),
                                 ("Floor", (0, 0, -0.5), ground)]:
        obj = bpy.data.objects.new(name, mesh)
        obj.location = location
        (coll or scene.collection).objects.link(obj)
    bpy.data.objects["Floor"].scale = (20, 20, 1)
    bpy.context.view_layer.update()
    return scene


def stored(scene):
    return [(f.kind, f.object_a, f.object_b) for f in scene.convex_level.findings]


def test_check_level_stores_its_findings_in_the_scene(scene):
    settings = scene.convex_level
    settings.clearance = 0.05
    settings.ignore_collection = bpy.data.collections["Ground"]
    assert bpy.ops.object.convex_check_level() == {'FINISHED'}
    assert stored(scene) == [("overlap", "Barrel", "Crate"), ("too_close", "Barrel", "Keg")]
    assert settings.findings[0].distance == pytest.approx(-0.2, abs=1e-5)
    assert "1 overlap" in settings.summary


def test_check_level_on_the_selection_only(scene):
    settings = scene.convex_level
    settings.scope = 'SELECTED'
    for obj in scene.objects:
        obj.select_set(obj.name in {"Keg", "Barrel"})
    bpy.ops.object.convex_check_level()
    assert stored(scene) == []  # 0.03 apart, no clearance asked
    settings.clearance = 0.05
    bpy.ops.object.convex_check_level()
    assert stored(scene) == [("too_close", "Barrel", "Keg")]


def test_check_level_on_a_collection(scene):
    settings = scene.convex_level
    settings.scope = 'COLLECTION'
    settings.collection = None
    assert not bpy.ops.object.convex_check_level.poll()
    settings.collection = bpy.data.collections["Ground"]
    bpy.ops.object.convex_check_level()
    assert stored(scene) == [] and settings.summary.startswith("1 object:")


def test_ignore_pairs_setting_takes_comma_separated_patterns(scene):
    settings = scene.convex_level
    settings.ignore_collection = bpy.data.collections["Ground"]
    settings.ignore_pairs = "Crate:Barrel, Nothing*:Else*"
    bpy.ops.object.convex_check_level()
    assert stored(scene) == []


def test_select_offending_selects_every_object_of_a_finding(scene):
    settings = scene.convex_level
    settings.clearance = 0.05
    settings.ignore_collection = bpy.data.collections["Ground"]
    bpy.ops.object.convex_check_level()
    bpy.ops.object.convex_select_offending()
    assert sorted(o.name for o in bpy.context.selected_objects) == ["Barrel", "Crate", "Keg"]


def test_select_finding_selects_the_pair(scene):
    settings = scene.convex_level
    settings.clearance = 0.05
    settings.ignore_collection = bpy.data.collections["Ground"]
    bpy.ops.object.convex_check_level()
    bpy.ops.object.convex_select_finding(index=1, frame=False)
    assert sorted(o.name for o in bpy.context.selected_objects) == ["Barrel", "Keg"]
    assert bpy.context.view_layer.objects.active.name == "Barrel"


def test_clicking_a_row_selects_its_pair(scene):
    settings = scene.convex_level
    settings.ignore_collection = bpy.data.collections["Ground"]
    bpy.ops.object.convex_check_level()
    settings.active_index = 0
    assert sorted(o.name for o in bpy.context.selected_objects) == ["Barrel", "Crate"]


def test_clear_empties_the_list(scene):
    bpy.ops.object.convex_check_level()
    assert scene.convex_level.findings
    bpy.ops.object.convex_clear_level()
    assert not scene.convex_level.findings and scene.convex_level.summary == ""


def test_export_writes_the_report(scene, tmp_path):
    import json

    scene.convex_level.ignore_collection = bpy.data.collections["Ground"]
    bpy.ops.object.convex_check_level()
    path = tmp_path / "r.json"
    bpy.ops.object.convex_export_level_report(filepath=str(path))
    data = json.loads(path.read_text())
    assert data["counts"]["overlap"] == 1 and data["counts"]["too_close"] == 0


def test_findings_are_drawn_in_the_overlay(scene):
    from convex_tools import level_check, overlay

    scene.convex_level.ignore_collection = bpy.data.collections["Ground"]
    bpy.ops.object.convex_check_level()
    drawings = getattr(overlay, "_drawings", None) or getattr(overlay, "drawings", None)
    if drawings is None:
        pytest.skip("the overlay keeps its drawings private")
    assert level_check.OVERLAY_KEY in drawings


def test_the_panel_and_list_are_registered_in_the_convex_tab(addon):
    assert bpy.types.VIEW3D_PT_convex_level.bl_category == "Convex"
    assert hasattr(bpy.types, "CONVEX_UL_level_findings")
    assert cli._command_handle is not None


def test_invoking_in_background_runs_to_the_end(scene):
    # No event loop drives a modal timer headless, so invoke falls back to execute.
    scene.convex_level.ignore_collection = bpy.data.collections["Ground"]
    assert bpy.ops.object.convex_check_level('INVOKE_DEFAULT') == {'FINISHED'}
    assert stored(scene) == [("overlap", "Barrel", "Crate")]


class _Event:
    def __init__(self, type):
        self.type = type


class _ModalDriver:
    """Drives the operator's modal() by hand, as the window manager would with timer events."""

    _op = operators.OBJECT_OT_convex_check_level
    modal = _op.modal
    _stop = _op._stop
    _finish = _op._finish

    def __init__(self, context):
        self._timer = None
        self._run = operators.level_run(context)
        self.reports = []

    def report(self, kind, message):
        self.reports.append((kind, message))


def test_modal_check_works_in_slices_until_done(scene):
    scene.convex_level.ignore_collection = bpy.data.collections["Ground"]
    driver = _ModalDriver(bpy.context)
    assert driver.modal(bpy.context, _Event('MOUSEMOVE')) == {'PASS_THROUGH'}
    results = [driver.modal(bpy.context, _Event('TIMER')) for _ in range(50)]
    assert {'FINISHED'} in results
    assert stored(scene) == [("overlap", "Barrel", "Crate")]


def test_escape_cancels_and_keeps_what_was_found(scene):
    driver = _ModalDriver(bpy.context)
    assert driver.modal(bpy.context, _Event('ESC')) == {'CANCELLED'}
    assert scene.convex_level.summary.startswith("Cancelled")
    assert driver.reports and driver.reports[-1][0] == {'WARNING'}


def test_a_cancelled_check_exports_its_findings_marked_incomplete(scene, tmp_path):
    import json

    driver = _ModalDriver(bpy.context)
    driver.modal(bpy.context, _Event('ESC'))
    assert scene.convex_level.complete is False
    report, table = tmp_path / "r.json", tmp_path / "r.csv"
    bpy.ops.object.convex_export_level_report(filepath=str(report))
    bpy.ops.object.convex_export_level_report(filepath=str(table))
    data = json.loads(report.read_text())
    assert data["complete"] is False and data["incomplete_reason"] == "the check was cancelled"
    assert table.read_text().startswith("# INCOMPLETE: the check was cancelled")
    # A check that runs to the end is complete again.
    bpy.ops.object.convex_check_level()
    bpy.ops.object.convex_export_level_report(filepath=str(report))
    assert json.loads(report.read_text())["complete"] is True


def test_export_to_a_folder_is_a_one_line_error(scene, tmp_path):
    bpy.ops.object.convex_check_level()
    with pytest.raises(RuntimeError, match="Cannot write .*: it is a folder, not a file"):
        bpy.ops.object.convex_export_level_report(filepath=str(tmp_path))
