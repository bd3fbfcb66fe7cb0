"""Bulk reads of the file's objects (``bulk.ObjectTable``): the same values as one object at a
time, for the matrices the depsgraph evaluates (parents, constraints, drivers, animation), and
the level check built on them measures what the one-by-one shapes measure."""

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from bpy_helpers import cube  # noqa: E402
from convex_tools import level_check  # noqa: E402
from convex_tools.bulk import ObjectTable  # noqa: E402
from convex_tools.core.placement import world_aabbs  # noqa: E402
from convex_tools.objects import shape_from_object  # noqa: E402


@pytest.fixture
def moved_level(registered):
    """Crates whose world matrices only the depsgraph knows: parented under a turned, scaled
    parent, moved by a constraint, turned by a driver, animated; and a collection instance."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    base = cube("Base", (0.0, 0.0, 0.0))
    base.rotation_euler = (0.0, 0.0, 0.5)
    base.scale = (2.0, 1.0, 1.0)
    child = cube("Child", (3.0, 0.0, 0.0))
    child.parent = base                       # its matrix_world now follows Base
    target = cube("Target", (10.0, 4.0, 0.0))
    follower = cube("Follower", (0.0, 0.0, 0.0))
    follower.constraints.new('COPY_LOCATION').target = target
    turned = cube("Turned", (0.0, 8.0, 0.0))
    driver = turned.driver_add("rotation_euler", 2).driver
    driver.type = 'SCRIPTED'
    driver.use_self = False
    driver.expression = "0.25 * 3"
    moving = cube("Moving", (0.0, -8.0, 0.0))
    moving.keyframe_insert("location", frame=1)
    moving.location = (20.0, -8.0, 0.0)
    moving.keyframe_insert("location", frame=11)
    scene.frame_set(6)                        # halfway: x = 10 (Bézier: the midpoint)
    kit = bpy.data.collections.new("Kit")
    scene.collection.children.link(kit)
    cube("Piece", (0.5, 0.0, 0.0), collection=kit)
    bpy.context.view_layer.layer_collection.children["Kit"].exclude = True
    empty = bpy.data.objects.new("Shelf", None)
    empty.instance_type = 'COLLECTION'
    empty.instance_collection = kit
    empty.location = (-6.0, 0.0, 1.0)
    empty.rotation_euler = (0.0, 0.0, 1.0)
    scene.collection.objects.link(empty)
    return scene


def test_bulk_matrices_are_the_evaluated_world_matrices(moved_level):
    depsgraph = bpy.context.evaluated_depsgraph_get()
    table = ObjectTable()
    assert len(table) == len(bpy.data.objects) == 8
    for obj in bpy.data.objects:
        one = np.array(obj.matrix_world, dtype=float)
        assert np.array_equal(table.matrix(obj.name), one), obj.name
        assert np.array_equal(np.array(obj.evaluated_get(depsgraph).matrix_world), one)
    # (and the depsgraph did move them: not the matrices of the bare locations)
    assert table.matrix("Follower")[:3, 3] == pytest.approx([10.0, 4.0, 0.0])
    assert math.atan2(table.matrix("Turned")[1, 0], table.matrix("Turned")[0, 0]) == \
        pytest.approx(0.75, abs=1e-6)
    assert table.matrix("Moving")[0, 3] == pytest.approx(10.0, abs=1e-5)
    child = table.matrix("Child")
    assert child[:3, 3] == pytest.approx([3 * 2 * math.cos(0.5), 3 * 2 * math.sin(0.5), 0.0],
                                         abs=1e-5)


def test_bulk_types_and_flags_are_the_objects_own(moved_level):
    bpy.data.objects["Target"].hide_viewport = True
    table = ObjectTable()
    for k, obj in enumerate(bpy.data.objects):
        assert table.names[k] == obj.name
        assert table.types[k] == obj.type
        assert table.hide_viewport[k] == obj.hide_viewport
        assert table.instance_type[k] == ObjectTable.instance_code(obj.instance_type)
    assert table.of_types({"EMPTY"}).tolist() == [o.type == 'EMPTY' for o in bpy.data.objects]


def test_the_check_places_every_object_where_its_own_shape_is(moved_level):
    # Four of the crates share one mesh's hull, placed all at once from the bulk matrices; the
    # boxes the check measures are those of each object's shape made on its own.
    depsgraph = bpy.context.evaluated_depsgraph_get()
    run = level_check.LevelRun(None, 0.05)
    run.run()
    assert run.shape_cache.reused >= 5
    assert sorted(run.names) == ["Base", "Child", "Follower", "Moving", "Shelf/Piece",
                                 "Target", "Turned"]
    alone = [shape_from_object(e.obj, depsgraph=depsgraph, placement=e.placement)
             for e in run.kept]
    lower, upper = world_aabbs(alone)
    assert np.allclose(run.check.lower, lower, rtol=0.0, atol=1e-9)
    assert np.allclose(run.check.upper, upper, rtol=0.0, atol=1e-9)
    # The instance sits where the empty puts it: 0.5 along its x turned by 1 radian.
    shelf = run.names.index("Shelf/Piece")
    centre = 0.5 * (run.check.lower[shelf] + run.check.upper[shelf])
    assert centre == pytest.approx([-6.0 + 0.5 * math.cos(1.0), 0.5 * math.sin(1.0), 1.0],
                                   abs=1e-6)


def test_instance_matrices_read_through_their_buffer_are_the_matrices(addon):
    # Vertex instancing of a turned, scaled crate on a tilted grid: each instance's matrix as
    # bytes (read while the depsgraph iterator holds it) gives back np.array(matrix) exactly.
    from convex_tools.bulk import matrices_of_bytes, matrix_bytes

    bpy.ops.mesh.primitive_grid_add(x_subdivisions=6, y_subdivisions=5, size=12,
                                    rotation=(0.2, 0.0, 0.4))
    grid = bpy.context.object
    crate = cube("Crate", (0.0, 0.0, 0.0), scale=(0.3, 0.5, 0.7), rotation=(0.1, 0.2, 0.3))
    crate.parent = grid
    grid.instance_type = 'VERTS'
    depsgraph = bpy.context.evaluated_depsgraph_get()
    chunks, arrays = [], []
    for inst in depsgraph.object_instances:
        if inst.is_instance:
            chunks.append(matrix_bytes(inst.matrix_world))
            arrays.append(np.array(inst.matrix_world, dtype=float))
    assert len(arrays) == len(grid.data.vertices) == 42
    assert np.array_equal(matrices_of_bytes(chunks), np.array(arrays))
    # (the instances differ: one per vertex of the grid)
    assert len({tuple(a[:3, 3].round(6)) for a in arrays}) == 42


def test_a_linked_object_sharing_a_local_ones_name_keeps_its_own_matrix(registered, tmp_path):
    # A library's "Crate" at x = 20 beside the file's own "Crate" at the origin: two objects of
    # one name. Each is checked where it stands (a lookup by name would give both one matrix).
    bpy.ops.wm.read_factory_settings(use_empty=True)
    cube("Crate", (20.0, 0.0, 0.0))
    library = str(tmp_path / "library.blend")
    bpy.ops.wm.save_as_mainfile(filepath=library)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    cube("Crate", (0.0, 0.0, 0.0))
    cube("Neighbour", (20.6, 0.0, 0.0))         # overlaps the linked crate by 0.4
    with bpy.data.libraries.load(library, link=True) as (source, target):
        target.objects = ["Crate"]
    bpy.context.scene.collection.objects.link(target.objects[0])
    table = ObjectTable()
    assert sorted(table.names) == ["Crate", "Crate", "Neighbour"]
    assert table.matrix("Crate") is None and "Crate" not in table.row
    run = level_check.LevelRun(None, 0.0)
    found = run.run()
    # (The two share a reported name, so the check keeps one of them: the file's own.)
    assert [e.obj.library is None for e in run.kept if e.name == "Crate"] == [True]
    for entry, lower, upper in zip(run.kept, run.check.lower, run.check.upper):
        centre = 0.5 * (lower + upper)
        assert centre == pytest.approx(np.array(entry.obj.matrix_world)[:3, 3], abs=1e-6)
    assert found == []          # the local crate is 20 m from the neighbour


def test_rows_of_a_collections_objects_are_their_places_in_the_table(moved_level):
    table = ObjectTable()
    kit = bpy.data.collections["Kit"]
    assert [table.names[k] for k in table.rows_of(kit.objects)] == ["Piece"]
    scene_objects = bpy.context.scene.collection.objects
    assert sorted(table.names[k] for k in table.rows_of(scene_objects)) == \
        sorted(o.name for o in scene_objects)
    # An object made after the table was read is not in it: left out.
    cube("Late", (0.0, 0.0, 0.0), collection=kit)
    assert [table.names[k] for k in table.rows_of(kit.objects)] == ["Piece"]
    assert len(table.rows_of(bpy.data.collections.new("Empty").objects)) == 0


def test_instances_take_their_object_or_instancers_clearance_each(registered):
    # Two shelves instance one kit; the first shelf asks 0.3 of everything on it, the second
    # nothing; the kit's crate asks 0.1 itself, its bad crate holds text. The values are read
    # once per object and given to every instance: each keeps its own answer.
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    kit = bpy.data.collections.new("Kit")
    scene.collection.children.link(kit)
    cube("Plain", (0.0, 0.0, 0.0), collection=kit)
    cube("Own", (2.0, 0.0, 0.0), collection=kit)["convex_clearance"] = 0.1
    cube("Bad", (4.0, 0.0, 0.0), collection=kit)["convex_clearance"] = "wide"
    bpy.context.view_layer.layer_collection.children["Kit"].exclude = True
    for name, x, asks in (("ShelfA", 0.0, 0.3), ("ShelfB", 10.0, None)):
        empty = bpy.data.objects.new(name, None)
        empty.instance_type = 'COLLECTION'
        empty.instance_collection = kit
        empty.location = (x, 20.0, 0.0)
        if asks is not None:
            empty["convex_clearance"] = asks
        scene.collection.objects.link(empty)
    run = level_check.LevelRun(None, 0.0)
    flag, own, unchecked = level_check._clearance_levels(run.pending, None)
    got = {e.name: v for e, v in zip(run.pending, own)}
    assert got == {"ShelfA/Plain": 0.3, "ShelfA/Own": pytest.approx(0.1), "ShelfA/Bad": None,
                   "ShelfB/Plain": None, "ShelfB/Own": pytest.approx(0.1), "ShelfB/Bad": None}
    assert [name for name, _ in unchecked] == ["ShelfA/Bad", "ShelfB/Bad"]
    assert all("must be a number" in why for _, why in unchecked)
    assert flag == [None] * 6


def test_a_check_run_in_steps_survives_objects_added_meanwhile(registered):
    # The Check Level operator measures in steps while the user goes on working: what was read
    # at the start stays what is checked, whatever is added in between (and the objects the
    # table read keep their rows).
    bpy.ops.wm.read_factory_settings(use_empty=True)
    for k in range(200):
        cube(f"C{k:03d}", (1.5 * (k % 20), 1.5 * (k // 20), 0.0))
    cube("Close", (0.9, 0.0, 0.0))               # overlaps C000 and C001 by 0.1 and 0.4
    run = level_check.LevelRun(None, 0.0)
    run.step(0.0)                                  # one chunk converted
    assert 0 < run.converted < len(run.pending)
    for k in range(30):
        cube(f"New{k}", (0.5 + 0.01 * k, 0.0, 0.0))    # over C000: not part of this check
    bpy.data.objects["C150"].location.x += 50.0        # moved after the check started
    bpy.context.view_layer.update()
    while not run.step(0.05):
        pass
    found = run.findings
    assert len(run.names) == 201 and "New0" not in run.names
    assert [(f.object_a, f.object_b) for f in found] == [("C000", "Close"), ("C001", "Close")]
    assert sorted(-f.distance for f in found) == pytest.approx([0.1, 0.4], abs=1e-5)
