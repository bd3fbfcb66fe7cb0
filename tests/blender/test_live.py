"""The live check: its findings equal a full re-check's after any sequence of edits, and a move
re-measures only the moved object's pairs.

Each edit is followed by ``view_layer.update()``, which runs the depsgraph handler as Blender
does after a change in the viewport; ``api.live_findings()`` then finishes what the handler left
(headless no timer runs). The reference is a full check with the Level Check panel's settings,
made afresh (``operators.level_run``), as the Check Level button makes it.
"""

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import api, live, operators  # noqa: E402

from bpy_helpers import add  # noqa: E402

# Witness points and distances of a pair measured in another order of shape making (a shape
# shared from another instance of its mesh is carried by a matrix product) agree to rounding.
ROUNDING = 1e-9

# A must-rest group for the props: a crate lifted off the floor floats, one pushed into the
# floor (static) sinks.
RULES = """
[groups.floor]
names = ["Floor"]
static = true
[groups.props]
names = ["Crate*", "Barrel*"]
must_rest = true
clearance = 0.1
"""


def full_check():
    run = operators.level_run(bpy.context)
    return run.run()


# The Level Check list keeps its numbers in single precision (Blender's float properties).
STORED = 1e-6


def _close(a, b, tolerance=ROUNDING) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= tolerance
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tolerance) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tolerance) for k in a)
    return a == b


def assert_same_findings(got, expected, tolerance=ROUNDING):
    got_dicts = [f.to_dict() for f in got]
    expected_dicts = [f.to_dict() for f in expected]
    assert [(d["kind"], d["object_a"], d["object_b"]) for d in got_dicts] == \
        [(d["kind"], d["object_a"], d["object_b"]) for d in expected_dicts]
    for g, e in zip(got_dicts, expected_dicts):
        assert _close(g, e, tolerance), (g, e)


def crate(name, location, size=1.0):
    return add("cube", name, size=size, location=location)


def storeroom():
    """A floor and two rows of crates, some touching, one stacked, one barrel in a corner."""
    floor = add("cube", "Floor", size=2.0, location=(0.0, 0.0, -0.25))
    floor.scale = (8.0, 8.0, 0.25)             # its top at z = 0, where the crates stand
    for k in range(6):
        crate(f"Crate.{k:03d}", (1.05 * k - 3.0, -1.0, 0.5))
        crate(f"Crate.{k + 6:03d}", (1.3 * k - 3.0, 1.0, 0.5))
    crate("Crate.stacked", (-3.0, -1.0, 1.5))
    add("cylinder", "Barrel", radius=0.4, depth=1.0, location=(5.0, 5.0, 0.5))
    bpy.context.view_layer.update()


@pytest.fixture
def live_room(addon):
    storeroom()
    bpy.context.scene.convex_level.clearance = 0.1
    bpy.context.scene.convex_tools.live_check = True
    yield
    bpy.context.scene.convex_tools.live_check = False


def test_turning_it_on_gives_the_full_checks_findings(live_room):
    found = api.live_findings()
    assert found, "the storeroom has crates closer than 0.1"
    assert_same_findings(found, full_check())
    assert bpy.context.scene.convex_level.summary.endswith("(live)")
    assert len(bpy.context.scene.convex_level.findings) == len(found)


def test_a_move_re_measures_only_the_moved_objects_pairs(live_room):
    api.live_findings()
    check = live.current().run.check
    measured_before = check.stats.single
    obj = bpy.data.objects["Crate.008"]       # in the second row, 0.3 from each neighbour
    obj.location.x += 0.25                    # now 0.05 from Crate.009
    bpy.context.view_layer.update()
    work = live.current().last_work
    # The handler did the update itself (well within its budget): nothing is left pending.
    assert not live.current().pending
    assert work["objects"] == 1
    # Measured again: its pairs with the floor it stands on and with Crate.009; Crate.007 is
    # now 0.55 away, beyond the clearance, and nothing else is near.
    assert work["pairs"] == 2 and check.stats.single - measured_before == 2
    found = api.live_findings()
    assert ("too_close", "Crate.008", "Crate.009") in [(f.kind, f.object_a, f.object_b)
                                                       for f in found]
    assert_same_findings(found, full_check())


def test_the_stored_list_and_drawing_follow_a_move(live_room):
    api.live_findings()
    bpy.data.objects["Barrel"].location = (-1.9, 1.0, 0.5)    # into Crate.007
    bpy.context.view_layer.update()
    api.live_findings()
    kinds = {(item.kind, item.object_a, item.object_b)
             for item in bpy.context.scene.convex_level.findings}
    assert ("overlap", "Barrel", "Crate.007") in kinds


def edit_at_random(rng, step):
    """One edit a level designer makes: a move, a new object, a deletion, a rename, a setting
    the rules read, or a rotation."""
    crates = sorted(o.name for o in bpy.data.objects if o.name.startswith(("Crate", "Barrel")))
    what = rng.choice(["move", "move", "move", "grab", "add", "delete", "rename", "clearance",
                       "property", "rotate"])
    obj = bpy.data.objects[str(rng.choice(crates))]
    if what == "move":
        obj.location = np.array(obj.location) + rng.uniform(-0.6, 0.6, 3) * (1.0, 1.0, 0.3)
    elif what == "grab":
        for name in rng.choice(crates, size=min(4, len(crates)), replace=False):
            bpy.data.objects[str(name)].location.x += 0.3
    elif what == "add":
        crate(f"Crate.new{step}", tuple(rng.uniform(-3.0, 3.0, 2)) + (0.5,))
    elif what == "delete" and len(crates) > 3:
        bpy.data.objects.remove(obj)
    elif what == "rename":
        obj.name = f"Crate.renamed{step}"
    elif what == "clearance":
        bpy.context.scene.convex_level.clearance = float(rng.choice([0.0, 0.05, 0.2]))
    elif what == "property":
        obj["convex_clearance"] = float(rng.choice([0.0, 0.3]))
    elif what == "rotate":
        obj.rotation_euler.z += 0.4
    bpy.context.view_layer.update()
    return what


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_random_edits_the_live_findings_equal_a_full_check(live_room, seed):
    rng = np.random.default_rng(seed)
    api.live_findings()
    done = []
    for step in range(14):
        done.append(edit_at_random(rng, step))
        if step % 3 == 2:       # several edits may pile up before the findings are read
            assert_same_findings(api.live_findings(), full_check())
    assert_same_findings(api.live_findings(), full_check())
    assert "move" in done


@pytest.mark.parametrize("seed", [4, 5])
def test_moves_rotations_and_grabs_are_taken_in_place_and_match_a_full_check(live_room, seed):
    rng = np.random.default_rng(seed)
    api.live_findings()
    names = sorted(o.name for o in bpy.data.objects if o.name != "Floor")
    for step in range(12):
        for name in rng.choice(names, size=int(rng.integers(1, 5)), replace=False):
            obj = bpy.data.objects[str(name)]
            obj.location = np.array(obj.location) + rng.uniform(-0.5, 0.5, 3) * (1, 1, 0.2)
            obj.rotation_euler.z += float(rng.uniform(-0.3, 0.3))
        bpy.context.view_layer.update()
        found = api.live_findings()
        assert_same_findings(found, full_check())
        # The list, changed row by row, reads back as the findings.
        stored = [item.to_finding() for item in bpy.context.scene.convex_level.findings]
        assert_same_findings(stored, found, STORED)
    assert live.current().full_checks == 1      # the first one only: every move in place


def test_edits_under_level_rules_keep_floating_and_sunk_current(live_room):
    text = bpy.data.texts.new("rules.toml")
    text.write(RULES)
    bpy.context.scene.convex_level.rules_text = text       # a rule change: starts over
    bpy.context.view_layer.update()
    assert_same_findings(api.live_findings(), full_check())
    bpy.data.objects["Crate.003"].location.z += 0.5        # lifted: floats
    bpy.data.objects["Crate.010"].location.z -= 0.2        # pushed into the static floor
    bpy.context.view_layer.update()
    found = api.live_findings()
    kinds = {(f.kind, f.object_a) for f in found}
    assert ("floating", "Crate.003") in kinds and ("sunk", "Crate.010") in kinds
    assert_same_findings(found, full_check())
    bpy.data.objects["Crate.003"].location.z -= 0.5        # back down: supported again
    bpy.context.view_layer.update()
    found = api.live_findings()
    assert ("floating", "Crate.003") not in {(f.kind, f.object_a) for f in found}
    assert_same_findings(found, full_check())


def test_checking_the_selection_follows_the_selection(live_room):
    from bpy_helpers import select
    bpy.context.scene.convex_level.scope = 'SELECTED'
    # The first row's crates stand 0.05 apart, closer than the clearance.
    select(bpy.data.objects["Crate.000"], bpy.data.objects["Crate.001"])
    bpy.context.view_layer.update()
    assert [(f.object_a, f.object_b) for f in api.live_findings()] == [("Crate.000",
                                                                        "Crate.001")]
    select(*(bpy.data.objects[f"Crate.{k:03d}"] for k in range(3, 6)))
    bpy.context.view_layer.update()
    found = api.live_findings()
    assert [(f.object_a, f.object_b) for f in found] == [("Crate.003", "Crate.004"),
                                                         ("Crate.004", "Crate.005")]
    assert_same_findings(found, full_check())


def test_a_broken_rules_text_stops_it_in_a_sentence_until_it_is_fixed(live_room):
    text = bpy.data.texts.new("rules.toml")
    text.write("[groups.props\nnames = 3\n")
    bpy.context.scene.convex_level.rules_text = text
    bpy.context.view_layer.update()
    assert api.live_findings() == []
    summary = bpy.context.scene.convex_level.summary
    assert summary.startswith("Live check stopped: ") and "\n" not in summary
    text.clear()
    text.write(RULES)          # fixed in the Text Editor (no depsgraph update)
    found = api.live_findings()
    assert found and bpy.context.scene.convex_level.summary.endswith("(live)")
    assert_same_findings(found, full_check())


def test_undo_brings_back_the_findings_of_the_state_it_restores(live_room):
    bpy.ops.ed.undo_push(message="before the move")
    before = api.live_findings()
    bpy.data.objects["Crate.001"].location.x += 0.5           # into Crate.002
    bpy.context.view_layer.update()
    bpy.ops.ed.undo_push(message="moved")
    moved = api.live_findings()
    assert ("overlap", "Crate.001", "Crate.002") in [(f.kind, f.object_a, f.object_b)
                                                     for f in moved]
    bpy.ops.ed.undo()
    bpy.context.view_layer.update()
    after = api.live_findings()
    assert_same_findings(after, full_check())
    assert_same_findings(after, before)


def test_an_edited_mesh_is_measured_with_its_new_geometry(live_room):
    api.live_findings()
    obj = bpy.data.objects["Crate.004"]
    mesh = obj.data
    for v in mesh.vertices:                # stretch it along +x into Crate.005
        if v.co.x > 0.0:
            v.co.x += 0.3
    mesh.update()
    bpy.context.view_layer.update()
    found = api.live_findings()
    assert ("overlap", "Crate.004", "Crate.005") in [(f.kind, f.object_a, f.object_b)
                                                     for f in found]
    assert_same_findings(found, full_check())


def test_work_beyond_the_budget_goes_to_a_timer(live_room, monkeypatch):
    api.live_findings()
    monkeypatch.setattr(live, "OBJECTS_PER_CHUNK", 1)
    monkeypatch.setattr(live, "FRAME_BUDGET", 0.0)     # every chunk is past the budget
    for name in ("Crate.000", "Crate.001", "Crate.002"):
        bpy.data.objects[name].location.y += 0.1
    bpy.context.view_layer.update()
    state = live.current()
    assert state.pending and len(state.dirty) == 2      # one chunk done, two left
    assert bpy.app.timers.is_registered(live._tick)
    assert live._tick() == live.TICK_INTERVAL           # a tick does one more chunk
    assert len(state.dirty) == 1
    assert_same_findings(api.live_findings(), full_check())


def test_live_findings_when_off_is_a_clear_error(addon):
    with pytest.raises(ValueError, match="The live check is off"):
        api.live_findings()


def test_the_operator_toggles_it_and_reports_one_line(addon, capfd):
    storeroom()
    capfd.readouterr()
    assert bpy.ops.object.convex_live_check() == {'FINISHED'}
    assert bpy.context.scene.convex_tools.live_check and live.current() is not None
    assert bpy.ops.object.convex_live_check() == {'FINISHED'}
    assert not bpy.context.scene.convex_tools.live_check and live.current() is None
    out = capfd.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("Info: Live check")]
    assert lines[0].startswith("Info: Live check on: ") and lines[1] == "Info: Live check off"


def test_check_level_and_clear_while_live_leave_the_list_to_the_live_check(live_room):
    found = api.live_findings()
    bpy.context.scene.convex_level.clearance = 0.1
    assert bpy.ops.object.convex_clear_level() == {'FINISHED'}
    assert len(bpy.context.scene.convex_level.findings) == 0
    assert_same_findings(api.live_findings(), found)
    stored = [item.to_finding() for item in bpy.context.scene.convex_level.findings]
    assert_same_findings(stored, found, STORED)
    bpy.data.objects["Crate.001"].location.x += 0.5           # into Crate.002
    bpy.context.view_layer.update()
    assert bpy.ops.object.convex_check_level() == {'FINISHED'}
    moved = api.live_findings()
    stored = [item.to_finding() for item in bpy.context.scene.convex_level.findings]
    assert_same_findings(stored, moved, STORED)
    assert ("overlap", "Crate.001", "Crate.002") in [(f.kind, f.object_a, f.object_b)
                                                     for f in moved]


def test_rigid_bodies_reported_moved_with_another_are_not_measured_again(live_room):
    from bpy_helpers import rigid
    for k in range(6):
        rigid(crate(f"Barrel.rb{k}", (2.0 * k - 5.0, 4.0, 0.5)), 'BOX', 'ACTIVE')
    bpy.context.view_layer.update()
    api.live_findings()
    # Blender reports every active rigid body as moved when one moves.
    bpy.data.objects["Barrel.rb0"].location.x += 0.3
    bpy.data.objects["Crate.001"].location.y += 0.1
    bpy.context.view_layer.update()
    assert live.current().last_work["objects"] == 2
    assert_same_findings(api.live_findings(), full_check())


def test_the_outlines_drawn_are_the_full_checks(live_room):
    found = api.live_findings()
    run = live.current().run
    for mine, full in zip(live.outlines_of(run, found), run.outlines(found)):
        for a, b in zip(mine, full):
            np.testing.assert_array_equal(a, b)


def test_a_rotated_and_scaled_object_is_classified_with_its_new_size(live_room):
    # The classification scales its tolerances by each pair's box: it must be the new one.
    api.live_findings()
    obj = bpy.data.objects["Crate.003"]
    obj.rotation_euler.z = 0.7
    obj.scale = (1.6, 0.8, 1.0)
    bpy.context.view_layer.update()
    found = api.live_findings()
    check = live.current().run.check
    sizes = np.linalg.norm(check.upper - check.lower, axis=1)
    if getattr(check, "_size_list", None) is not None:
        np.testing.assert_array_equal(check._size_list, sizes)
    assert_same_findings(found, full_check())


def test_a_move_while_the_full_check_runs_is_taken_in(addon):
    storeroom()
    bpy.context.scene.convex_level.clearance = 0.1
    bpy.context.scene.convex_tools.live_check = True
    state = live.current()
    assert state.work(0.0) is False          # the shapes are made, the pairs not measured yet
    assert state.building is not None and state.building.check is not None
    bpy.data.objects["Crate.001"].location.x += 0.5           # into Crate.002
    bpy.context.view_layer.update()
    found = api.live_findings()
    assert ("overlap", "Crate.001", "Crate.002") in [(f.kind, f.object_a, f.object_b)
                                                     for f in found]
    assert_same_findings(found, full_check())
    bpy.context.scene.convex_tools.live_check = False


def test_an_unusable_own_clearance_leaves_the_object_out_as_a_full_check_does(live_room):
    api.live_findings()
    bpy.data.objects["Crate.001"]["convex_clearance"] = "wide"
    bpy.data.objects["Crate.001"].location.x += 0.01
    bpy.context.view_layer.update()
    found = api.live_findings()
    assert "Crate.001" not in {n for f in found for n in (f.object_a, f.object_b)}
    assert_same_findings(found, full_check())


def test_a_file_saved_with_live_on_opens_with_it_on(live_room, tmp_path):
    found = api.live_findings()
    path = str(tmp_path / "room.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert live.current() is None
    bpy.ops.wm.open_mainfile(filepath=path)
    assert live.current() is not None
    assert_same_findings(api.live_findings(), found)


def test_undoing_the_toggle_stops_the_live_check(addon):
    storeroom()
    bpy.ops.ed.undo_push(message="off")
    assert bpy.ops.object.convex_live_check('EXEC_DEFAULT', True) == {'FINISHED'}
    assert live.current() is not None
    bpy.ops.ed.undo()
    assert not bpy.context.scene.convex_tools.live_check and live.current() is None
    bpy.ops.ed.redo()
    assert bpy.context.scene.convex_tools.live_check and live.current() is not None
    assert_same_findings(api.live_findings(), full_check())
    bpy.context.scene.convex_tools.live_check = False
