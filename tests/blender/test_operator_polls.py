"""The operators behave like Blender's own: in a wrong context the button is greyed out and its
tooltip says what to do (``poll`` with ``poll_message_set``), and in the right one each operator
runs without an exception and reports exactly one line.

Blender puts the poll message into the RuntimeError that calling an operator whose poll fails
raises, after "Operator bpy.ops.object.<name>.poll() ": ``poll_message`` reads it there.
"""

import re

import pytest

bpy = pytest.importorskip("bpy")

from bpy_helpers import BOX_FACES, add, select  # noqa: E402

PAIR_QUERIES = ["convex_distance", "convex_penetration", "convex_contact", "convex_watch_add"]
ONE_OR_MORE_QUERIES = ["convex_ray_cast", "convex_convert"]
QUERIES = PAIR_QUERIES + ONE_OR_MORE_QUERIES + ["convex_sweep"]


def poll_message(operator):
    """The tooltip of ``operator``'s greyed-out button: its poll fails, and calling it raises
    Blender's RuntimeError carrying the poll message."""
    op = getattr(bpy.ops.object, operator)
    assert op.poll() is False
    with pytest.raises(RuntimeError) as error:
        op()
    prefix = f"Operator bpy.ops.object.{operator}.poll() "
    text = str(error.value)
    assert text.startswith(prefix), text
    return text[len(prefix):]


def cubes(count, spacing=3.0):
    return [add("cube", f"Crate{k}", size=2.0, location=(spacing * k, 0.0, 0.0))
            for k in range(count)]


def empty(name="Empty"):
    bpy.ops.object.empty_add(location=(0.0, 5.0, 0.0))
    obj = bpy.context.active_object
    obj.name = name
    return obj


# --- selection -----------------------------------------------------------------------------

@pytest.mark.parametrize("operator", PAIR_QUERIES)
@pytest.mark.parametrize("make_selection, message", [
    (lambda: select(), "Select exactly two mesh-like objects (none selected)"),
    (lambda: select(*cubes(1)), "Select exactly two mesh-like objects (1 selected)"),
    (lambda: select(*cubes(3)), "Select exactly two mesh-like objects (3 selected)"),
    # An empty has no shape: it is named, so that one sees why the selection does not count.
    (lambda: select(*cubes(1), empty()),
     "Select exactly two mesh-like objects (1 selected; Empty has no geometry)"),
])
def test_pair_queries_need_exactly_two_mesh_like_objects(addon, operator, make_selection,
                                                         message):
    make_selection()
    assert poll_message(operator) == message


def test_many_selected_non_geometry_objects_are_named_up_to_two(addon):
    select(*cubes(1), empty("Marker"), empty("Spawn"), empty("Trigger"))
    assert poll_message("convex_distance") == \
        "Select exactly two mesh-like objects (1 selected; Marker, Spawn, … have no geometry)"


def test_a_whole_level_selected_is_counted_up_to_a_hundred(addon):
    # The poll runs on every redraw of the Sidebar: it stops counting at a hundred.
    mesh = bpy.data.meshes.new("Crate")
    mesh.from_pydata([(x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)], [],
                     [list(f) for f in BOX_FACES])
    crates = []
    for k in range(150):
        obj = bpy.data.objects.new(f"Crate{k}", mesh)
        obj.location = (2.0 * k, 0.0, 0.0)
        bpy.context.scene.collection.objects.link(obj)
        crates.append(obj)
    select(*crates)
    assert poll_message("convex_distance") == "Select exactly two mesh-like objects (99+ selected)"
    assert bpy.ops.object.convex_ray_cast.poll() and bpy.ops.object.convex_sweep.poll()


@pytest.mark.parametrize("operator", ONE_OR_MORE_QUERIES)
@pytest.mark.parametrize("make_selection, message", [
    (lambda: select(), "Select at least one mesh-like object (none selected)"),
    (lambda: select(empty()),
     "Select at least one mesh-like object (none selected; Empty has no geometry)"),
])
def test_ray_cast_and_show_shapes_need_a_mesh_like_object(addon, operator, make_selection,
                                                          message):
    make_selection()
    assert poll_message(operator) == message


def test_sweep_needs_something_to_hit(addon):
    select(*cubes(1))
    assert poll_message("convex_sweep") == (
        "Select the objects to sweep against, then the one to move (two or more mesh-like "
        "objects) (1 selected)")


@pytest.mark.parametrize("active", ["an empty", "nothing"])
def test_sweep_needs_the_object_to_move_active(addon, active):
    crates = cubes(2)
    marker = empty()
    select(*crates, marker, active=marker)
    if active == "nothing":
        bpy.context.view_layer.objects.active = None
    assert poll_message("convex_sweep") == \
        "Make the object to move the active one (Shift-click it)"


# --- mode ----------------------------------------------------------------------------------

def enter(mode):
    """Two crates selected, the active one in ``mode``."""
    crates = cubes(2)
    select(*crates)
    bpy.ops.object.mode_set(mode=mode)
    assert bpy.context.mode != 'OBJECT'


@pytest.mark.parametrize("operator", QUERIES)
def test_queries_in_edit_mode_say_to_leave_it(addon, operator):
    # Blender's generic "context is incorrect" told nothing: the sentence says what to do.
    enter('EDIT')
    assert poll_message(operator) == "Leave Edit Mode (Tab) to measure objects"


def test_queries_in_sculpt_mode_say_to_switch_to_object_mode(addon):
    enter('SCULPT')
    assert poll_message("convex_distance") == \
        "Switch from Sculpt Mode to Object Mode to measure objects"


def overlapping_crates():
    a = add("cube", "Crate", size=2.0)
    b = add("cube", "Barrel", size=2.0, location=(1.5, 0.0, 0.0))    # 0.5 into the crate
    return a, b


def checked_scene():
    """Two overlapping crates, checked: one finding in the Sidebar list."""
    overlapping_crates()
    assert bpy.ops.object.convex_check_level() == {'FINISHED'}
    assert len(bpy.context.scene.convex_level.findings) == 1


@pytest.mark.parametrize("operator, message", [
    ("convex_check_level", "Leave Edit Mode (Tab) to check the level"),
    ("convex_live_check", "Leave Edit Mode (Tab) to check the level"),
    ("convex_select_finding", "Leave Edit Mode (Tab) to select objects"),
    ("convex_select_offending", "Leave Edit Mode (Tab) to select objects"),
])
def test_level_operators_in_edit_mode_say_to_leave_it(addon, operator, message):
    checked_scene()
    select(bpy.data.objects["Crate"])
    bpy.ops.object.mode_set(mode='EDIT')
    assert poll_message(operator) == message


# --- what the level operators need ---------------------------------------------------------

@pytest.mark.parametrize("operator, message", [
    ("convex_select_finding", "No findings: run Check Level first"),
    ("convex_select_offending", "No findings: run Check Level first"),
    ("convex_clear_level", "Nothing to clear: Check Level has not run"),
    ("convex_watch_remove", "The watch list is empty: add a pair with Watch Pair"),
])
def test_list_operators_need_something_in_their_list(addon, operator, message):
    overlapping_crates()
    assert poll_message(operator) == message


def test_check_level_of_a_collection_needs_the_collection(addon):
    overlapping_crates()
    bpy.context.scene.convex_level.scope = 'COLLECTION'
    assert poll_message("convex_check_level") == "Choose the collection to check"


def test_check_level_of_the_selection_needs_two_objects(addon):
    crate, _ = overlapping_crates()
    select(crate)
    bpy.context.scene.convex_level.scope = 'SELECTED'
    assert poll_message("convex_check_level") == \
        "Select at least two objects, or check the collection or the scene"


# --- the right context: no exception, one line --------------------------------------------

# A report as Blender prints it in background mode: "Info: …", "Warning: …", "Error: …".
REPORT_LINE = re.compile(r"^(Info|Warning|Error|Operator): ", re.MULTILINE)


def reports_of(capfd, run):
    """The report lines printed while ``run()`` runs (and what it returned)."""
    capfd.readouterr()
    result = run()
    out, err = capfd.readouterr()
    return result, REPORT_LINE.findall(out + err), out + err


def prepare_pair():
    a, b = overlapping_crates()
    select(a, b, active=b)


def prepare_sweep():
    wall = add("cube", "Wall", size=2.0, location=(0.0, 0.0, -4.0))
    mover = add("cube", "Mover", size=2.0)
    select(wall, mover, active=mover)


def prepare_ray():
    select(add("cube", "Crate", size=2.0))
    bpy.context.scene.cursor.location = (0.0, 0.0, 5.0)


def prepare_watched():
    prepare_pair()
    assert bpy.ops.object.convex_watch_add() == {'FINISHED'}


# Every operator of ``operators``, in a context where it can run, with the arguments a button
# gives (Export Report, which opens a file browser, is tested with its formats).
RUNS = {
    "convex_distance": (prepare_pair, {}),
    "convex_penetration": (prepare_pair, {}),
    "convex_contact": (prepare_pair, {}),
    "convex_ray_cast": (prepare_ray, {"axis": 'NEG_Z'}),
    "convex_sweep": (prepare_sweep, {}),
    "convex_convert": (prepare_ray, {}),
    "convex_clear": (prepare_pair, {}),
    "convex_watch_add": (prepare_pair, {}),
    "convex_watch_remove": (prepare_watched, {}),
    "convex_check_level": (overlapping_crates, {}),
    "convex_select_finding": (checked_scene, {"index": 0, "frame": False}),
    "convex_select_offending": (checked_scene, {}),
    "convex_clear_level": (checked_scene, {}),
    "convex_live_check": (overlapping_crates, {}),
}


def test_every_operator_but_export_is_in_the_table_above():
    import convex_tools
    operators = {cls.bl_idname.split(".")[1] for cls in convex_tools.classes()
                 if issubclass(cls, bpy.types.Operator)
                 and cls.__module__ == "convex_tools.operators"}
    assert operators - set(RUNS) == {"convex_export_level_report"}


@pytest.mark.parametrize("operator", sorted(RUNS))
def test_each_operator_runs_in_its_context_and_reports_one_line(addon, capfd, operator):
    prepare, arguments = RUNS[operator]
    prepare()
    op = getattr(bpy.ops.object, operator)
    assert op.poll()
    result, reports, printed = reports_of(capfd, lambda: op(**arguments))
    assert result == {'FINISHED'}
    assert len(reports) == 1, printed


def test_clear_overlays_says_what_it_cleared(addon, capfd):
    prepare_pair()
    bpy.ops.object.convex_distance()
    _, _, printed = reports_of(capfd, bpy.ops.object.convex_clear)
    assert printed.strip() == "Info: Cleared the Convex Tools overlays and the last result"


def test_check_level_names_what_it_skipped_in_its_one_line(addon, capfd):
    overlapping_crates()
    # An Unreal collision proxy that names no object: skipped, as the engine would drop it.
    add("cube", "UCX_Gone", size=1.0, location=(0.0, 8.0, 0.0))
    result, reports, printed = reports_of(capfd, bpy.ops.object.convex_check_level)
    assert result == {'FINISHED'} and len(reports) == 1, printed
    (line,) = [s for s in printed.splitlines() if REPORT_LINE.match(s)]
    assert line.startswith("Warning: 2 objects: 1 overlap, 0 too close; skipped 1: UCX_Gone (")


def test_a_query_that_cannot_convert_an_object_reports_one_error_line(addon):
    # A mesh with no vertices passes the poll (it is mesh-like) and fails in one sentence.
    mesh = bpy.data.meshes.new("Nothing")
    hollow = bpy.data.objects.new("Nothing", mesh)
    bpy.context.scene.collection.objects.link(hollow)
    select(hollow, add("cube", "Crate", size=2.0))
    assert bpy.ops.object.convex_distance.poll()
    with pytest.raises(RuntimeError) as error:
        bpy.ops.object.convex_distance()
    assert len(str(error.value).strip().splitlines()) == 1
    assert "Nothing" in str(error.value)
