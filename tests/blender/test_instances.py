"""Instanced collections in the level check: each instance checked with its own world matrix and
reported by the path of names that leads to it; nested instancing included."""

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import instances, level_check  # noqa: E402
from convex_tools.core.level import OVERLAP, Stats  # noqa: E402

from bpy_helpers import boxes  # noqa: E402


def instancer(name, collection, location=(0, 0, 0), rotation=(0, 0, 0), parent_collection=None):
    empty = bpy.data.objects.new(name, None)
    empty.instance_type = 'COLLECTION'
    empty.instance_collection = collection
    empty.location, empty.rotation_euler = location, rotation
    (parent_collection or bpy.context.scene.collection).objects.link(empty)
    return empty


def asset_collection(name, exclude=True):
    """A collection linked to the scene and (as asset collections usually are) excluded from
    the view layer, so that only its instances are in the level."""
    coll = bpy.data.collections.new(name)
    bpy.context.scene.collection.children.link(coll)
    if exclude:
        bpy.context.view_layer.layer_collection.children[name].exclude = True
    return coll


@pytest.fixture
def shelves(addon):
    """A "Shelf" collection (a unit crate at x 1, offset 0.5) instanced twice; a barrel cuts
    0.2 into the second instance's crate."""
    shelf = asset_collection("Shelf")
    shelf.instance_offset = (0.5, 0.0, 0.0)
    boxes("Crate", [((-0.5, -0.5, 0.0), (0.5, 0.5, 1.0))], location=(1.0, 0.0, 0.0),
          collection=shelf)
    instancer("Shelf_A", shelf, location=(0, 0, 0), rotation=(0, 0, np.pi / 2))
    instancer("Shelf_B", shelf, location=(10, 0, 0))
    # Shelf_B's crate spans x 10.0–11.0: the barrel (x 10.8–11.8) is 0.2 into it.
    boxes("Barrel", [((10.8, -0.3, 0.0), (11.8, 0.3, 1.0))])
    bpy.context.view_layer.update()
    return shelf


def test_each_instance_is_checked_with_its_own_matrix_and_a_readable_name(shelves):
    stats = Stats()
    (f,) = level_check.check_scene(stats=stats)
    assert (f.kind, f.object_a, f.object_b) == (OVERLAP, "Barrel", "Shelf_B/Crate")
    assert f.depth == pytest.approx(0.2)
    assert stats.objects == 3          # Barrel, Shelf_A/Crate, Shelf_B/Crate


def test_instance_matrices_are_the_ones_blender_draws(shelves):
    # Every instance of the crate sits where Blender's depsgraph puts it.
    depsgraph = bpy.context.evaluated_depsgraph_get()
    drawn = sorted((np.array(i.matrix_world) for i in depsgraph.object_instances
                    if i.is_instance and i.object.original.name == "Crate"),
                   key=lambda m: m[0, 3])
    ours = []
    for empty in ("Shelf_A", "Shelf_B"):
        (inst,) = instances.expand(bpy.data.objects[empty])
        ours.append(inst.placement @ np.array(inst.obj.matrix_world))
    assert len(drawn) == 2
    # Blender's own product is in single precision.
    np.testing.assert_allclose(sorted(ours, key=lambda m: m[0, 3]), drawn, atol=1e-6)


def test_nested_instances_are_named_by_their_path(shelves):
    room = asset_collection("Room")
    instancer("ShelfInRoom", shelves, location=(0, 5, 0), parent_collection=room)
    boxes("Table", [((-1, -1, 0), (1, 1, 1))], location=(0, -5, 0), collection=room)
    instancer("Room_1", room, location=(20, 0, 0))
    bpy.context.view_layer.update()
    entries = level_check.LevelRun(None).pending
    names = {e.name for e in entries}
    assert {"Room_1/ShelfInRoom/Crate", "Room_1/Table"} <= names
    (inst,) = [e for e in entries if e.name == "Room_1/ShelfInRoom/Crate"]
    world = inst.placement @ np.array(inst.obj.matrix_world)
    # Room at x 20, the shelf 5 along y in it, its crate 1 - 0.5 along x in the shelf.
    np.testing.assert_allclose(world[:3, 3], [20.5, 5.0, 0.0], atol=1e-12)
    assert inst.selectable.name == "Room_1"


def test_hidden_in_viewport_objects_are_not_instanced_but_eye_hidden_ones_are(addon):
    kit = asset_collection("Kit", exclude=False)
    boxes("Shown", [((0, 0, 0), (1, 1, 1))], collection=kit)
    boxes("Hidden", [((0, 3, 0), (1, 4, 1))], collection=kit).hide_viewport = True
    boxes("Eye", [((0, 6, 0), (1, 7, 1))], collection=kit).hide_set(True)
    assert [o.name for o in instances.instanced_objects(kit)] == ["Shown", "Eye"]


def test_ignoring_an_instancer_ignores_its_instances(shelves):
    assert level_check.check_scene(ignore=["Shelf_B"]) == []
    assert level_check.check_scene(ignore=["Crate"]) == []       # the instanced object's name
    assert len(level_check.check_scene(ignore=["Shelf_A"])) == 1


def test_selecting_a_finding_with_an_instance_selects_its_instancer(shelves):
    bpy.ops.object.convex_check_level()
    assert bpy.ops.object.convex_select_finding(index=0, frame=False) == {'FINISHED'}
    assert {o.name for o in bpy.context.selected_objects} == {"Barrel", "Shelf_B"}
