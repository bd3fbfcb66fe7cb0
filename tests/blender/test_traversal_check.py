"""The traversal check through Blender: the level collected as the level check collects it,
walkable and blocking objects by the rules, starts by name or point, the [traversal] keys, the
Sidebar operator and the map (overlay and picture)."""

import pytest

bpy = pytest.importorskip("bpy")

from bpy_helpers import boxes  # noqa: E402
from convex_tools import overlay, traversal_check  # noqa: E402
from convex_tools.core.rules import Rules  # noqa: E402

RULES = """
[groups.level]
names = ["Floor", "Wall*", "Beam"]
static = true

[groups.foliage]
names = ["Bush*"]
blocks_agent = false
"""


@pytest.fixture(scope="module")
def addon(registered):
    """The add-on registered for this module (``conftest.registered``)."""
    return registered


def box(name, lower, upper):
    return boxes(name, [(lower, upper)])


def start(name, location):
    obj = bpy.data.objects.new(name, None)
    obj.location = location
    bpy.context.scene.collection.objects.link(obj)
    return obj


@pytest.fixture
def rooms(addon):
    """Two 10 × 10 m rooms joined by a doorway ``door`` wide in a wall at x = 10, a start in
    the west room; the rules in the scene."""
    bpy.ops.wm.read_factory_settings(use_empty=True)

    def build(door):
        box("Floor", (0, 0, -0.2), (20, 10, 0))
        box("Wall.S", (9.8, 0, 0), (10.2, 5 - door / 2, 3))
        box("Wall.N", (9.8, 5 + door / 2, 0), (10.2, 10, 3))
        start("PlayerStart", (2, 5, 0.1))
        text = bpy.data.texts.new("rules.toml")
        text.write(RULES)
        bpy.context.scene.convex_level.rules_text = text
        bpy.context.view_layer.update()
    return build


def kinds(run):
    return sorted((f.kind, f.object_a, f.object_b) for f in run.findings
                  if f.kind != "unreachable" or f.object_a == "Floor")


def test_a_doorway_narrower_than_the_agent_cuts_the_east_room_off(rooms):
    rooms(0.6)                          # 2r = 0.7
    run = traversal_check.run_traversal()
    assert run.start_names == ["PlayerStart"]
    assert kinds(run) == [("narrow", "Wall.N", "Wall.S"), ("unreachable", "Floor", None)]
    (narrow,) = [f for f in run.findings if f.kind == "narrow"]
    assert narrow.extra["width"] == pytest.approx(0.6, abs=1e-5)
    assert narrow.severity == "error" and narrow.rule.startswith("traversal")
    (east,) = [f for f in run.findings if f.kind == "unreachable" and f.object_a == "Floor"]
    # The east room's floor, less a band of the agent's radius along the wall (its other
    # edges are open: a capsule over the floor's edge still stands), within cells.
    assert east.area == pytest.approx((20 - 10.2 - 0.35) * 10, rel=0.01)


def test_a_wide_doorway_joins_the_rooms(rooms):
    rooms(1.0)
    run = traversal_check.run_traversal()
    assert not [f for f in run.findings if f.object_a == "Floor"]
    assert run.result.reachable_area == pytest.approx(2 * 10 * 10, rel=0.1)


def test_the_rules_traversal_table_sets_the_agent_and_the_flags_beat_it(rooms):
    rooms(0.6)
    text = bpy.context.scene.convex_level.rules_text
    text.write("\n[traversal]\nagent_radius = 0.25\nmin_area = 5\n")
    run = traversal_check.run_traversal()
    assert run.result.agent.radius == 0.25
    assert kinds(run) == []                   # a 0.5 m agent goes through 0.6 m
    assert traversal_check.run_traversal(radius=0.35).result.agent.radius == 0.35


def test_a_bush_does_not_block_and_a_crate_does(rooms):
    rooms(1.0)
    box("Bush.1", (9.8, 4.5, 0), (10.2, 5.5, 1))        # in the doorway: foliage
    assert not [f for f in traversal_check.run_traversal().findings if f.object_a == "Floor"]
    bpy.data.objects.remove(bpy.data.objects["Bush.1"])
    box("Crate", (9.8, 4.5, 0), (10.2, 5.5, 1))          # a crate in the doorway blocks it
    bpy.context.view_layer.update()
    found = traversal_check.run_traversal().findings
    assert [f for f in found if f.kind == "unreachable" and f.object_a == "Floor"]


def test_movable_props_are_not_walkable(rooms):
    rooms(1.0)
    box("Crate", (2, 2, 0), (3, 3, 1))       # a crate's top: standable area, but not walkable
    run = traversal_check.run_traversal()
    assert "Crate" not in {f.object_a for f in run.findings}
    assert not [z for z in run.result.sample_z if abs(z - 1.0) < 1e-6]


def test_starts_by_name_point_and_pattern(rooms):
    rooms(0.6)
    start("PlayerStart.east", (15, 5, 0.1))
    both = traversal_check.run_traversal()
    assert both.start_names == ["PlayerStart", "PlayerStart.east"]
    assert not [f for f in both.findings if f.object_a == "Floor"]
    east = traversal_check.run_traversal(starts=["15,5,0"])
    assert east.start_names == ["15,5,0"]
    with pytest.raises(ValueError, match="no object of that name"):
        traversal_check.run_traversal(starts=["Nobody"])


def test_the_operator_stores_the_findings_and_draws_the_map(rooms):
    rooms(0.6)
    assert bpy.ops.object.convex_check_traversal() == {'FINISHED'}
    settings = bpy.context.scene.convex_traversal
    assert "unreachable" in settings.summary
    stored = {(i.kind, i.object_a) for i in bpy.context.scene.convex_level.findings}
    assert ("narrow", "Wall.N") in stored and ("unreachable", "Floor") in stored
    (drawing,) = overlay.drawings([traversal_check.MAP_KEY])
    assert {"reachable", "unreachable"} <= set(drawing.areas)
    # A run of cells is one quad: far fewer triangles than cells.
    cells = len(traversal_check._last_run.result.sample_z)
    assert sum(len(t) for t in drawing.areas.values()) < cells / 4
    settings.show_map = False
    assert overlay.drawings([traversal_check.MAP_KEY]) == []


def test_the_operator_needs_object_mode(rooms):
    rooms(1.0)
    floor = bpy.data.objects["Floor"]
    bpy.context.view_layer.objects.active = floor
    bpy.ops.object.mode_set(mode='EDIT')
    try:
        assert not bpy.ops.object.convex_check_traversal.poll()
    finally:
        bpy.ops.object.mode_set(mode='OBJECT')


def test_the_map_picture(rooms, tmp_path):
    from test_pictures import png_size

    rooms(0.6)
    run = traversal_check.run_traversal()
    path = tmp_path / "map.png"
    traversal_check.map_picture(str(path), run, bpy.context.scene, 320, 200)
    assert png_size(path) == (320, 200)


def test_agent_of_reads_rules_then_given_values():
    rules = Rules.from_text("[traversal]\nagent_height = 2.0\nmax_slope = 30\n")
    agent = traversal_check.agent_of(rules, max_step=0.3, radius=None)
    assert (agent.radius, agent.height, agent.max_step, agent.max_slope) == \
        (0.35, 2.0, 0.3, 30.0)


def test_a_collision_proxy_blocks_the_doorway_as_the_engine_would(rooms):
    # The gate's own mesh is a thin bar up high; its UCX proxy fills the doorway: the proxy is
    # what blocks the player.
    rooms(1.0)
    gate = box("Gate", (9.8, 4.5, 2.5), (10.2, 5.5, 2.6))
    proxy = box("UCX_Gate_01", (9.8, 4.5, 0.0), (10.2, 5.5, 2.6))
    bpy.context.view_layer.update()           # (the gate's matrix, for the parent inverse)
    proxy.parent = gate
    proxy.matrix_parent_inverse = gate.matrix_world.inverted()
    bpy.context.view_layer.update()
    found = traversal_check.run_traversal().findings
    assert [f for f in found if f.kind == "unreachable" and f.object_a == "Floor"]
    # Without the proxy the bar is high enough to walk under.
    bpy.data.objects.remove(proxy)
    bpy.context.view_layer.update()
    found = traversal_check.run_traversal().findings
    assert not [f for f in found if f.kind == "unreachable" and f.object_a == "Floor"]


def test_instanced_walls_make_the_narrow_door(addon):
    # The wall pieces live in a collection instanced once at x = 10: the door between the two
    # instances' walls is 0.6 wide; the narrow reason names the instances by their paths.
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    box("Floor", (0, 0, -0.2), (20, 10, 0))
    kit = bpy.data.collections.new("WallKit")
    scene.collection.children.link(kit)
    for name, lower, upper in (("Wall.S", (-0.2, 0, 0), (0.2, 4.7, 3)),
                               ("Wall.N", (-0.2, 5.3, 0), (0.2, 10, 3))):
        obj = box(name, lower, upper)
        scene.collection.objects.unlink(obj)
        kit.objects.link(obj)
    bpy.context.view_layer.layer_collection.children["WallKit"].exclude = True
    empty = bpy.data.objects.new("Walls", None)
    empty.instance_type, empty.instance_collection = 'COLLECTION', kit
    empty.location = (10, 0, 0)
    scene.collection.objects.link(empty)
    start("PlayerStart", (2, 5, 0.1))
    text = bpy.data.texts.new("rules.toml")
    text.write('[groups.level]\nnames = ["Floor", "Wall*", "Walls/*"]\nstatic = true\n')
    scene.convex_level.rules_text = text
    bpy.context.view_layer.update()
    run = traversal_check.run_traversal()
    (narrow,) = [f for f in run.findings if f.kind == "narrow"]
    assert {narrow.object_a, narrow.object_b} == {"Walls/Wall.S", "Walls/Wall.N"}
    assert narrow.extra["width"] == pytest.approx(0.6, abs=1e-5)
