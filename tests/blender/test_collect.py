"""What the level check measures (``collect.collect_entries``): instances of every kind read
from the evaluated depsgraph, each at its world matrix and named by its path and index;
objects disabled in viewports and Boolean cutters excluded with the reason; the eye icon
ignored."""

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import collect, level_check  # noqa: E402
from convex_tools.core.level import OVERLAP  # noqa: E402
from convex_tools.core.placement import Placed  # noqa: E402
from convex_tools.proxies import ProxyIndex  # noqa: E402

from bpy_helpers import boxes, mesh_object, rigid  # noqa: E402

UNIT = ((-0.5, -0.5, -0.5), (0.5, 0.5, 0.5))


# --- scene building ------------------------------------------------------------------------------
def cube(name, location=(0.0, 0.0, 0.0), collection=None):
    """A unit cube centred on its origin."""
    return boxes(name, [UNIT], location=location, collection=collection)


def asset_collection(name, exclude=True, parent=None):
    """A collection of source objects, excluded from the view layer as asset collections are."""
    coll = bpy.data.collections.new(name)
    (parent or bpy.context.scene.collection).children.link(coll)
    if exclude:
        layer_of(coll).exclude = True
    return coll


def layer_of(coll):
    def find(layer):
        if layer.collection == coll:
            return layer
        for child in layer.children:
            found = find(child)
            if found is not None:
                return found
        return None
    return find(bpy.context.view_layer.layer_collection)


def points(name, coords, location=(0.0, 0.0, 0.0), collection=None, faces=()):
    return mesh_object(name, coords, faces, location=location, collection=collection)


def scatter_tree(instance_node, separate=False, keep_input=False):
    """A geometry-nodes tree: Instance on Points of ``instance_node`` ("object": an Object Info
    node as instance, "collection": a Collection Info node, "cube": a Cube node) on the input's
    points; ``keep_input`` joins the input geometry to the instances."""
    tree = bpy.data.node_groups.new("Scatter", 'GeometryNodeTree')
    tree.interface.new_socket("Geometry", in_out='INPUT', socket_type='NodeSocketGeometry')
    tree.interface.new_socket("Geometry", in_out='OUTPUT', socket_type='NodeSocketGeometry')
    group_in = tree.nodes.new("NodeGroupInput")
    group_out = tree.nodes.new("NodeGroupOutput")
    on_points = tree.nodes.new("GeometryNodeInstanceOnPoints")
    if instance_node == "object":
        source = tree.nodes.new("GeometryNodeObjectInfo")
        source.inputs["As Instance"].default_value = True
        geometry = source.outputs["Geometry"]
    elif instance_node == "collection":
        source = tree.nodes.new("GeometryNodeCollectionInfo")
        source.inputs["Separate Children"].default_value = separate
        geometry = source.outputs["Instances"]
    else:
        source = tree.nodes.new("GeometryNodeMeshCube")
        geometry = source.outputs["Mesh"]
    tree.links.new(group_in.outputs[0], on_points.inputs["Points"])
    tree.links.new(geometry, on_points.inputs["Instance"])
    if keep_input:
        join = tree.nodes.new("GeometryNodeJoinGeometry")
        tree.links.new(group_in.outputs[0], join.inputs[0])
        tree.links.new(on_points.outputs["Instances"], join.inputs[0])
        tree.links.new(join.outputs[0], group_out.inputs[0])
    else:
        tree.links.new(on_points.outputs["Instances"], group_out.inputs[0])
    return tree, source


def scatter(name, coords, source, location=(0.0, 0.0, 0.0), collection=None, faces=(),
            keep_input=False):
    """A points object scattering ``source`` (an object or a collection) on its points."""
    obj = points(name, coords, location, collection, faces)
    kind = "collection" if isinstance(source, bpy.types.Collection) else "object"
    tree, node = scatter_tree(kind, keep_input=keep_input)
    node.inputs[kind.title()].default_value = source
    obj.modifiers.new("Scatter", 'NODES').node_group = tree
    return obj


def collection_instance(name, coll, location=(0.0, 0.0, 0.0), parent_collection=None):
    empty = bpy.data.objects.new(name, None)
    empty.instance_type = 'COLLECTION'
    empty.instance_collection = coll
    empty.location = location
    (parent_collection or bpy.context.scene.collection).objects.link(empty)
    return empty


def collected(objects=None, collection=None, ignore=(), **flags):
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    return collect.collect_entries(objects, collection, ignore, bpy.context.view_layer.objects,
                                   ProxyIndex(), depsgraph, **flags)


def by_name(result):
    return {e.name: e for e in result.entries}


def world_box(entry):
    """(lower, upper) corners of the entry's world shape, as the level check makes it."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    shape = level_check.SharedShapes().shape(entry.obj, depsgraph, entry.placement)
    if isinstance(shape, Placed):
        shape = shape.make()
    lower, upper = shape.aabb()
    return np.asarray(lower), np.asarray(upper)


def centre(entry):
    lower, upper = world_box(entry)
    return 0.5 * (lower + upper)


@pytest.fixture
def rock(addon):
    """A unit cube "Rock" at x 100 in an excluded "Assets" collection (a source, not in the
    level)."""
    return cube("Rock", (100.0, 0.0, 0.0), asset_collection("Assets"))


# --- geometry nodes ------------------------------------------------------------------------------
def test_instance_on_points_checks_each_rock_at_its_point(rock):
    scatter("Scatter", [(0, 0, 0), (3, 0, 0), (6, 0, 0)], rock, location=(0, 5, 1))
    entries = by_name(collected())
    assert set(entries) == {f"Scatter/Rock [instance {k}]" for k in range(3)}
    for k in range(3):
        entry = entries[f"Scatter/Rock [instance {k}]"]
        # Object Info in Original space: the rock's mesh on the point, the scatter's matrix in
        # front; the rock's own location (x 100) plays no part.
        np.testing.assert_allclose(centre(entry), [3.0 * k, 5.0, 1.0], atol=1e-6)
        np.testing.assert_allclose(world_box(entry)[1] - world_box(entry)[0], [1, 1, 1],
                                   atol=1e-6)
        assert entry.obj == rock                       # the original object, not an evaluated copy
        assert (entry.mover, entry.instanced_by) == (None, "Scatter")
        assert entry.selectable.name == "Scatter"


def test_a_scatter_whose_output_is_instances_only_is_neither_checked_nor_skipped(rock):
    scatter("Scatter", [(0, 0, 0), (3, 0, 0)], rock)
    result = collected()
    assert "Scatter" not in by_name(result)
    assert result.skipped == [] and result.excluded == []


def test_an_instancer_with_geometry_of_its_own_is_checked_with_its_instances(rock):
    floor = [(-4, -4, -1), (4, -4, -1), (4, 4, -1), (-4, 4, -1)]
    scatter("Ground", floor, rock, faces=[(0, 1, 2, 3)], keep_input=True)
    entries = by_name(collected())
    assert set(entries) == {"Ground"} | {f"Ground/Rock [instance {k}]" for k in range(4)}
    assert entries["Ground"].mover == "Ground"
    # Each rock sits on a corner of the ground, whose own mesh is the plane at z -1.
    np.testing.assert_allclose(centre(entries["Ground/Rock [instance 2]"]), [4, 4, -1],
                               atol=1e-6)
    assert world_box(entries["Ground"])[1][2] == pytest.approx(-1.0)


def test_the_instance_index_follows_the_points_order_not_their_id_attribute(rock):
    obj = scatter("Scatter", [(0, 0, 0), (2, 0, 0), (4, 0, 0)], rock)
    # Distribute Points on Faces gives points an "id" attribute, which Blender's persistent_id
    # reports instead of the index.
    ids = obj.data.attributes.new("id", 'INT', 'POINT')
    ids.data.foreach_set("value", [700, 5, 42])
    entries = by_name(collected())
    for k in range(3):
        np.testing.assert_allclose(centre(entries[f"Scatter/Rock [instance {k}]"]),
                                   [2.0 * k, 0, 0], atol=1e-6)


def test_the_objects_one_point_instances_share_its_index(addon):
    rocks = asset_collection("Rocks")
    cube("RockA", (0, 0, 0), rocks)
    cube("RockB", (0, 0, 2), rocks)
    scatter("Scatter", [(0, 0, 0), (5, 0, 0)], rocks)
    entries = by_name(collected())
    assert set(entries) == {f"Scatter/{r} [instance {k}]" for r in ("RockA", "RockB")
                            for k in range(2)}
    # The collection's objects keep their places relative to each other on every point.
    np.testing.assert_allclose(centre(entries["Scatter/RockB [instance 1]"]), [5, 0, 2],
                               atol=1e-6)
    assert entries["Scatter/RockB [instance 1]"].collections[:1] == ("Rocks",)


def test_node_tree_geometry_instances_are_skipped_with_the_reason(addon):
    obj = points("Cubes", [(0, 0, 0), (3, 0, 0)])
    tree, _ = scatter_tree("cube")
    obj.modifiers.new("Cubes", 'NODES').node_group = tree
    result = collected()
    assert result.entries == []
    assert [name for name, _ in result.skipped] == ["Cubes/Cubes [instance 0]",
                                                      "Cubes/Cubes [instance 1]"]
    assert "realize the instances" in result.skipped[0][1]


def test_instances_of_an_object_scaled_to_zero_are_skipped_with_the_reason(rock):
    rock.scale = (1.0, 1.0, 0.0)
    scatter("Scatter", [(0, 0, 0)], rock)
    result = collected()
    assert result.entries == []
    assert result.skipped == [("Scatter/Rock [instance 0]", "'Rock' has a matrix that cannot "
                               "be inverted (scale 0), so its instances cannot be placed")]


def test_a_scattered_object_is_checked_through_its_collision_proxy(rock):
    # The rock's UCX proxy is a 2 m box around it: rocks on points 1.5 apart keep 0.5 between
    # their meshes, but their proxies overlap by 0.5.
    proxy = boxes("UCX_Rock", [((-1, -1, -1), (1, 1, 1))], location=(100, 0, 0),
                  collection=bpy.data.collections["Assets"])
    proxy.parent = rock
    proxy.matrix_parent_inverse = rock.matrix_world.inverted()
    scatter("Scatter", [(0, 0, 0), (1.5, 0, 0)], rock)
    assert set(by_name(collected())) == {"Scatter/Rock [instance 0]", "Scatter/Rock [instance 1]"}
    (f,) = level_check.check_scene()
    assert {f.object_a, f.object_b} == {"Scatter/Rock [instance 0]", "Scatter/Rock [instance 1]"}
    assert f.depth == pytest.approx(0.5, abs=1e-6)


def test_a_collection_scatter_of_an_object_and_its_proxy_gives_one_entry_per_point(addon):
    rocks = asset_collection("Rocks")
    cube("Rock", (0, 0, 0), rocks)
    boxes("UCX_Rock", [((-1, -1, -1), (1, 1, 1))], collection=rocks)
    scatter("Scatter", [(0, 0, 0), (1.5, 0, 0)], rocks)
    entries = by_name(collected())
    assert set(entries) == {"Scatter/Rock [instance 0]", "Scatter/Rock [instance 1]"}
    lower, upper = world_box(entries["Scatter/Rock [instance 1]"])
    np.testing.assert_allclose([lower, upper], [[0.5, -1, -1], [2.5, 1, 1]], atol=1e-6)


def test_a_scatter_inside_a_collection_instance_is_named_through_it(rock):
    field = asset_collection("FieldKit")
    scatter("Scatter", [(0, 0, 0), (2, 0, 0)], rock, collection=field)
    collection_instance("Field", field, location=(0, 30, 0))
    entries = by_name(collected())
    assert set(entries) == {"Field/Scatter/Rock [instance 0]", "Field/Scatter/Rock [instance 1]"}
    entry = entries["Field/Scatter/Rock [instance 1]"]
    np.testing.assert_allclose(centre(entry), [2, 30, 0], atol=1e-6)
    assert (entry.mover, entry.instanced_by, entry.selectable.name) == (None, "Scatter", "Field")


# --- particles, vertices, faces -----------------------------------------------------------------
def test_particle_instances_sit_on_their_particles_in_particle_order(rock):
    emitter = points("Emitter", [(0, 0, 0), (4, 0, 0), (4, 4, 0), (0, 4, 0)],
                     faces=[(0, 1, 2, 3)], location=(0, 0, 10))
    system = emitter.modifiers.new("Rocks", 'PARTICLE_SYSTEM').particle_system
    # Emitted at frame 1 and left where they are born.
    system.settings.type = 'EMITTER'
    system.settings.physics_type = 'NO'
    system.settings.frame_start = system.settings.frame_end = 1
    system.settings.lifetime = 1000
    system.settings.count = 5
    system.settings.render_type = 'OBJECT'
    system.settings.instance_object = rock
    system.settings.particle_size = 0.25
    result = collected()
    entries = by_name(result)
    assert set(entries) == {"Emitter"} | {f"Emitter/Rock [instance {k}]" for k in range(5)}
    depsgraph = bpy.context.evaluated_depsgraph_get()
    particles = emitter.evaluated_get(depsgraph).particle_systems[0].particles
    for k in range(5):
        entry = entries[f"Emitter/Rock [instance {k}]"]
        lower, upper = world_box(entry)
        np.testing.assert_allclose(0.5 * (lower + upper), np.array(particles[k].location),
                                   atol=1e-5)
        np.testing.assert_allclose(upper - lower, [0.25] * 3, atol=1e-5)
        assert entry.instanced_by == "Emitter" and entry.mover is None


def test_vertex_instancing_puts_the_child_on_every_vertex(addon):
    parent = points("Parent", [(0, 0, 0), (4, 0, 0), (4, 4, 0), (0, 4, 0)],
                    faces=[(0, 1, 2, 3)], location=(0, 0, 5))
    parent.instance_type = 'VERTS'
    child = cube("Post", (0, 0, 1))
    child.parent = parent         # no parent inverse: 1 above each vertex
    entries = by_name(collected())
    corners = [(0, 0), (4, 0), (4, 4), (0, 4)]
    for k, (x, y) in enumerate(corners):
        np.testing.assert_allclose(centre(entries[f"Parent/Post [instance {k}]"]), [x, y, 6],
                                   atol=1e-6)
    # The parent's own quad and the child itself are in the level too, as Blender shows them.
    assert {"Parent", "Post"} <= set(entries) and len(entries) == 6


def test_an_instancer_not_shown_in_viewports_is_excluded_its_instances_kept(addon):
    parent = points("Parent", [(0, 0, 0), (4, 0, 0), (4, 4, 0), (0, 4, 0)],
                    faces=[(0, 1, 2, 3)])
    parent.instance_type = 'VERTS'
    parent.show_instancer_for_viewport = False
    cube("Post", (0, 0, 1)).parent = parent
    result = collected()
    assert sorted(by_name(result)) == ["Parent/Post [instance 0]", "Parent/Post [instance 1]",
                                       "Parent/Post [instance 2]", "Parent/Post [instance 3]",
                                       "Post"]
    assert [n for n, _ in result.excluded] == ["Parent"]
    assert "Parent" in by_name(collected(include_hidden=True))


def test_face_instancing_puts_the_child_on_every_face_centre(addon):
    parent = points("Tiles", [(0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0), (4, 0, 0), (4, 2, 0)],
                    faces=[(0, 1, 2, 3), (1, 4, 5, 2)])
    parent.instance_type = 'FACES'
    cube("Stone", (0, 0, 1)).parent = parent
    entries = by_name(collected())
    np.testing.assert_allclose(centre(entries["Tiles/Stone [instance 0]"]), [1, 1, 1], atol=1e-6)
    np.testing.assert_allclose(centre(entries["Tiles/Stone [instance 1]"]), [3, 1, 1], atol=1e-6)


# --- collection instances ------------------------------------------------------------------------
def test_nested_collection_instances_keep_their_paths_and_move_the_outer_empty(addon):
    shelf = asset_collection("Shelf")
    cube("Crate", (1, 0, 0), shelf)
    room = asset_collection("Room")
    collection_instance("ShelfInRoom", shelf, location=(0, 5, 0), parent_collection=room)
    collection_instance("Room_1", room, location=(20, 0, 0))
    entries = by_name(collected())
    assert set(entries) == {"Room_1/ShelfInRoom/Crate"}
    entry = entries["Room_1/ShelfInRoom/Crate"]
    np.testing.assert_allclose(centre(entry), [21, 5, 0], atol=1e-9)
    assert (entry.mover, entry.instanced_by) == ("Room_1", None)
    assert [o.name for o in entry.instancers] == ["Room_1", "ShelfInRoom"]
    assert entry.collections == ("Shelf", "Room")


# --- what is left out ----------------------------------------------------------------------------
def test_the_eye_icon_keeps_an_object_checked_the_monitor_icon_excludes_it(addon):
    cube("Eye", (0, 0, 0)).hide_set(True)
    cube("Monitor", (3, 0, 0)).hide_viewport = True
    result = collected()
    assert [e.name for e in result.entries] == ["Eye"]
    assert result.excluded == [("Monitor", "disabled in viewports (monitor icon)")]
    assert {e.name for e in collected(include_hidden=True).entries} == {"Eye", "Monitor"}


def test_a_disabled_scatter_brought_back_is_skipped_as_blender_does_not_evaluate_it(rock):
    scatter("Scatter", [(0, 0, 0), (3, 0, 0)], rock).hide_viewport = True
    assert collected().excluded == [("Scatter", "disabled in viewports (monitor icon)")]
    result = collected(include_hidden=True)
    # Not checked as the bare points it is before its modifiers, and not silently dropped (the
    # rock of the excluded asset collection comes back as an object of its own).
    assert [e.name for e in result.entries] == ["Rock"]
    assert [n for n, _ in result.skipped] == ["Scatter"]
    assert "does not evaluate" in result.skipped[0][1]


def test_objects_of_excluded_and_disabled_collections_are_excluded_with_the_collection(addon):
    cube("Shown", (0, 0, 0))
    cube("Parked", (3, 0, 0), asset_collection("Parking"))
    outer = asset_collection("Blockout", exclude=False)
    outer.hide_viewport = True
    inner = asset_collection("Walls", exclude=False, parent=outer)
    cube("OldWall", (6, 0, 0), inner)
    hidden_eye = asset_collection("Later", exclude=False)
    cube("EyeHidden", (9, 0, 0), hidden_eye)
    layer_of(hidden_eye).hide_viewport = True        # the collection's eye: still checked
    # Also in an enabled collection: checked (enabled anywhere wins); in two disabled ones:
    # the first Blender lists tells why.
    both = cube("Both", (12, 0, 0), inner)
    hidden_eye.objects.link(both)
    twice = cube("Twice", (15, 0, 0), inner)
    drafts = asset_collection("Drafts", exclude=False)
    drafts.hide_viewport = True
    drafts.objects.link(twice)
    bpy.data.objects["Shown"].hide_set(True)          # the object's eye: still checked
    result = collected()
    assert {e.name for e in result.entries} == {"Shown", "EyeHidden", "Both"}
    first = twice.users_collection[0].name            # (Blender's order)
    assert dict(result.excluded) == {
        "OldWall": "in collection 'Blockout', disabled in viewports",
        "Twice": f"in collection '{'Drafts' if first == 'Drafts' else 'Blockout'}', "
                 f"disabled in viewports"}
    # An excluded collection's objects are not in the view layer; asked for, they are named.
    asked = collected(objects=[bpy.data.objects["Parked"], bpy.data.objects["Shown"]])
    assert asked.excluded == [("Parked", "in collection 'Parking', excluded from the view layer")]
    everything = collected(include_hidden=True)
    assert {e.name for e in everything.entries} == {"Shown", "EyeHidden", "OldWall", "Parked",
                                                    "Both", "Twice"}


def test_a_boolean_cutter_is_excluded_not_reported_as_overlapping_the_wall(addon):
    wall = boxes("Wall", [((0, 0, 0), (4, 0.2, 3))])
    door = boxes("DoorCutter", [((1, -0.5, 0), (2, 0.7, 2))])
    door.display_type = 'WIRE'
    mod = wall.modifiers.new("Door", 'BOOLEAN')
    mod.object = door
    result = collected()
    assert [e.name for e in result.entries] == ["Wall"]
    assert result.excluded == [("DoorCutter", "Boolean operand of 'Wall' (modifier 'Door')")]
    assert level_check.check_scene() == []
    assert {e.name for e in collected(include_cutters=True).entries} == {"Wall", "DoorCutter"}


def test_cutters_of_a_collection_operand_are_excluded(addon):
    wall = boxes("Wall", [((0, 0, 0), (4, 0.2, 3))])
    cutters = asset_collection("Cutters", exclude=False)
    boxes("Window", [((1, -0.5, 1), (2, 0.7, 2))], collection=cutters)
    boxes("Vent", [((3, -0.5, 2), (3.5, 0.7, 2.5))], collection=cutters)
    mod = wall.modifiers.new("Holes", 'BOOLEAN')
    mod.operand_type = 'COLLECTION'
    mod.collection = cutters
    result = collected()
    assert [e.name for e in result.entries] == ["Wall"]
    assert sorted(n for n, _ in result.excluded) == ["Vent", "Window"]


def test_a_cutter_disabled_in_viewports_needs_both_flags_to_come_back(addon):
    wall = boxes("Wall", [((0, 0, 0), (4, 0.2, 3))])
    door = boxes("DoorCutter", [((1, -0.5, 0), (2, 0.7, 2))])
    door.hide_viewport = True
    wall.modifiers.new("Door", 'BOOLEAN').object = door
    assert collected().excluded == [("DoorCutter", "disabled in viewports (monitor icon)")]
    assert collected(include_hidden=True).excluded == [
        ("DoorCutter", "Boolean operand of 'Wall' (modifier 'Door')")]
    both = collected(include_hidden=True, include_cutters=True)
    assert {e.name for e in both.entries} == {"Wall", "DoorCutter"} and both.excluded == []


def test_a_cutter_inside_a_collection_instance_is_excluded_by_its_path(addon):
    kit = asset_collection("WallKit")
    wall = boxes("Wall", [((0, 0, 0), (4, 0.2, 3))], collection=kit)
    door = boxes("DoorCutter", [((1, -0.5, 0), (2, 0.7, 2))], collection=kit)
    wall.modifiers.new("Door", 'BOOLEAN').object = door
    collection_instance("WallA", kit)
    result = collected()
    assert [e.name for e in result.entries] == ["WallA/Wall"]
    assert [n for n, _ in result.excluded] == ["WallA/DoorCutter"]


def test_what_the_proxy_rules_exclude_is_excluded_with_their_reason(addon):
    cube("Crate", (0, 0, 0))
    cube("Marker-noimp", (3, 0, 0))
    result = collected()
    assert [e.name for e in result.entries] == ["Crate"]
    assert result.excluded == [("Marker-noimp", "removed by Godot on import (-noimp)")]
    # The level check lists it among what it left out (not among what it could not check).
    stats = level_check.Stats()
    level_check.check_scene(stats=stats)
    assert stats.skipped_objects == []
    assert stats.excluded_objects == [("Marker-noimp", "removed by Godot on import (-noimp)")]


def test_ignore_names_and_patterns_that_match_nothing_are_returned(rock):
    scatter("Scatter", [(0, 0, 0), (3, 0, 0)], rock)
    cube("Floor", (0, 0, -5))
    bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", 'SUN'))
    result = collected(ignore=["Floor", "Scatter/Rock [instance 1]", "Sun", "Flor", "Tree*",
                               "Scatter/*"])
    assert result.entries == []
    # "Sun" names a light (nothing to check, but not a typo).
    assert result.unmatched_ignores == ["Flor", "Tree*"]


# --- entry fields --------------------------------------------------------------------------------
def test_entries_carry_collections_properties_and_passive(rock):
    props = asset_collection("Props", exclude=False)
    crates = asset_collection("Crates", exclude=False, parent=props)
    crate = cube("Crate", (0, 0, 0), crates)
    crate["convex_group"] = "props"
    crate["weight"] = 12
    crate["tags"] = [1, 2]                 # not a plain value: left out
    floor = rigid(cube("Floor", (0, 0, -3)), 'BOX')
    obj = scatter("Scatter", [(0, 0, 5)], rock)
    obj["convex_group"] = "rocks"
    obj["biome"] = "forest"
    rock["convex_group"] = "rock"
    # A duplicate also linked into a second collection: its own answer, not the crate's (the
    # answer is shared by the objects the same collections hold).
    twin = cube("Twin", (0, 0, 9), crates)
    asset_collection("Other", exclude=False).objects.link(twin)
    entries = by_name(collected())
    assert entries["Crate"].collections == ("Crates", "Props")
    assert entries["Twin"].collections == ("Crates", "Other", "Props")
    assert entries["Crate"].properties == {"convex_group": "props", "weight": 12}
    assert entries["Floor"].passive and not entries["Crate"].passive
    assert floor.rigid_body.type == 'PASSIVE'
    instance = entries["Scatter/Rock [instance 0]"]
    # The instanced object's own property wins over its instancer's.
    assert instance.properties == {"convex_group": "rock", "biome": "forest"}
    assert instance.collections == ("Assets",)       # the scatter is in the scene's collection


def test_level_check_keeps_entry_and_its_run_lists_what_it_left_out(rock):
    scatter("Scatter", [(0, 0, 0), (3, 0, 0)], rock)
    cube("Marker-noimp", (9, 0, 0))
    assert level_check.Entry is collect.Entry
    run = level_check.LevelRun(None)
    assert [e.name for e in run.pending] == ["Scatter/Rock [instance 0]",
                                             "Scatter/Rock [instance 1]"]
    assert run.skipped == []
    assert run.excluded == [("Marker-noimp", "removed by Godot on import (-noimp)")]
    plain = collect.Entry("Rock", rock)
    assert (plain.mover, plain.instanced_by, plain.placement) == ("Rock", None, None)


# --- end to end ----------------------------------------------------------------------------------
def test_check_scene_finds_scattered_rocks_overlapping_each_other_and_a_crate(rock):
    # Unit rocks on points 0.8 apart: 0.2 into each other; the crate 0.2 into the second.
    scatter("Scatter", [(0, 0, 0), (0.8, 0, 0)], rock)
    cube("Crate", (1.6, 0, 0))
    stats = level_check.Stats()
    findings = level_check.check_scene(stats=stats)
    pairs = {frozenset((f.object_a, f.object_b)): f for f in findings}
    assert set(pairs) == {frozenset(("Scatter/Rock [instance 0]", "Scatter/Rock [instance 1]")),
                          frozenset(("Crate", "Scatter/Rock [instance 1]"))}
    for f in findings:
        assert f.kind == OVERLAP
        assert f.depth == pytest.approx(0.2, abs=1e-6)
    # The rock's shape is made once and moved to its other instance.
    assert stats.objects == 3 and stats.shapes_shared >= 1


def test_a_scatter_hidden_with_the_eye_still_has_its_instances_checked(rock):
    scatter("Scatter", [(0, 0, 0), (3, 0, 0)], rock).hide_set(True)
    result = collected()
    assert set(by_name(result)) == {"Scatter/Rock [instance 0]", "Scatter/Rock [instance 1]"}
    assert result.skipped == [] and result.excluded == []
    # The depsgraph lists only visible objects' instances: the scatter was shown for a moment,
    # and is hidden (and unselected) again.
    obj = bpy.data.objects["Scatter"]
    assert obj.hide_get() and not obj.select_get()
