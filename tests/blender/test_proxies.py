"""Collision proxies by name (Unreal UCX_/UBX_/USP_/UCP_, Godot -col/-colonly/-convcol/
-convcolonly) and Compound Parent rigid bodies: an object with proxies is checked through them,
and the proxies are not checked as objects of their own."""

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import api, level_check, objects  # noqa: E402
from convex_tools.core import distance as core_distance  # noqa: E402
from convex_tools.core.level import OVERLAP, TOO_CLOSE, Stats  # noqa: E402
from convex_tools.proxies import ProxyIndex, parse_name  # noqa: E402

from bpy_helpers import boxes, rigid  # noqa: E402


# --- names --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, convention, kind, owners", [
    # Unreal: one hull per UCX proxy by default (One Convex Hull Per UCX is on in Unreal).
    ("UCX_Crate", "UCX_", "HULL", ("Crate",)),
    ("UCX_Crate_01", "UCX_", "HULL", ("Crate_01", "Crate")),
    ("UBX_Door_02", "UBX_", "BOX", ("Door_02", "Door")),
    ("USP_Ball", "USP_", "SPHERE", ("Ball",)),
    ("UCP_Guard_1", "UCP_", "CAPSULE", ("Guard_1", "Guard")),
    # A Blender duplicate of an asset and its proxies: Blender's pairing (Crate.001), then what
    # the importer reads (Crate).
    ("UCX_Crate_01.001", "UCX_", "HULL", ("Crate_01.001", "Crate.001", "Crate")),
    # Godot: a -colonly object is a body of its own; its owners are the visual's names.
    ("Wall-colonly", "-colonly", "MESH", ("Wall",)),
    ("Wall_convcolonly", "-convcolonly", "HULL", ("Wall",)),
    # Blender's ".003" reaches Godot as "_003": the body is "Wall_003", beside "Wall.003".
    ("Wall-colonly.003", "-colonly", "MESH", ("Wall_003", "Wall")),
    # Found in any case after "$", but Godot takes it out only as written: the name stays.
    ("Wall$ColOnly", "-colonly", "MESH", ("Wall$ColOnly",)),
    ("Wall$colonly", "-colonly", "MESH", ("Wall",)),
    ("Terrain-col", "-col", "MESH", ()),
    ("Rock_convcol", "-convcol", "HULL", ()),
])
def test_proxy_names_say_what_they_are_and_whose(name, convention, kind, owners):
    parsed = parse_name(name)
    assert (parsed.convention, parsed.kind, parsed.owners) == (convention, kind, owners)


def test_one_convex_hull_per_ucx_off_splits_a_ucx_proxy_into_its_loose_parts():
    assert parse_name("UCX_Crate", one_hull_per_ucx=False).kind == "CONVEX_PARTS"
    assert parse_name("UBX_Crate", one_hull_per_ucx=False).kind == "BOX"


@pytest.mark.parametrize("name", ["Crate", "UCX_", "UCXCrate", "Protocol", "Cube.001",
                                  "Wallcol", "Wall-collider", "ucx_Crate_7", "Ucx_Crate"])
def test_ordinary_names_are_not_proxies(name):
    assert parse_name(name) is None


# --- scenes -------------------------------------------------------------------------------------
@pytest.fixture
def table(addon):
    """A table (top 2 × 1 at z 0.9–1.0 on four 0.1 m legs) with a crate under its top: the
    convex hull of the table's mesh swallows the crate, its UCX proxies do not."""
    legs = [((x, y, 0.0), (x + 0.1, y + 0.1, 0.9)) for x in (-1.0, 0.9) for y in (-0.5, 0.4)]
    top = ((-1.0, -0.5, 0.9), (1.0, 0.5, 1.0))
    visual = boxes("Table", [top] + legs)
    proxy_top = boxes("UCX_Table_01", [top])
    proxy_legs = boxes("UCX_Table_02", legs)
    for proxy in (proxy_top, proxy_legs):
        proxy.parent = visual
        proxy.hide_set(True)        # as artists keep them: hidden, still the collision
    crate = boxes("Crate", [((-0.3, -0.3, 0.0), (0.3, 0.3, 0.6))])   # 0.3 under the top
    bpy.context.view_layer.update()
    return visual, proxy_top, proxy_legs, crate


def test_ucx_proxies_replace_their_object_one_hull_each_by_default(table):
    visual, proxy_top, proxy_legs, crate = table
    shape = api.shape_from_object(visual)
    # Unreal's default: each UCX proxy is one hull, so the legs' proxy is one hull around the
    # four legs, and it holds the crate (as it would in Unreal).
    assert list(shape.names) == ["UCX_Table_01", "UCX_Table_02"]
    stats = Stats()
    (f,) = level_check.check_scene(stats=stats)
    assert (f.kind, f.object_a, f.object_b, f.part_b) == (OVERLAP, "Crate", "Table",
                                                          "UCX_Table_02")
    assert stats.objects == 2          # the table and the crate; the proxies are the table


def test_ucx_proxies_split_into_loose_parts_with_one_hull_per_ucx_off(table):
    visual, proxy_top, proxy_legs, crate = table
    index = ProxyIndex(one_hull_per_ucx=False)
    shape = objects.shape_from_object(visual, proxies=index)
    # One hull per loose part of a proxy: the top, then the four legs.
    assert list(shape.names) == ["UCX_Table_01", "UCX_Table_02 part 0", "UCX_Table_02 part 1",
                                 "UCX_Table_02 part 2", "UCX_Table_02 part 3"]
    # The crate's top is 0.3 under the table top, and clear of the legs.
    assert core_distance(api.shape_from_object(crate), shape).distance == pytest.approx(0.3)
    assert level_check.check_scene(one_hull_per_ucx=False) == []
    # The scene setting does the same.
    bpy.context.scene.convex_level.one_hull_per_ucx = False
    assert level_check.check_scene() == []
    # Without the proxies the table is its hull, which holds the crate.
    visual.convex_tools.kind = 'HULL'
    (f,) = level_check.check_scene()
    assert (f.kind, f.object_a, f.object_b) == (OVERLAP, "Crate", "Table")


def test_a_finding_on_a_proxied_object_names_the_proxy_part(table):
    visual, proxy_top, proxy_legs, crate = table
    (f,) = level_check.check_scene(clearance=0.35, one_hull_per_ucx=False)
    assert (f.kind, f.object_a, f.object_b) == (TOO_CLOSE, "Crate", "Table")
    assert f.distance == pytest.approx(0.3) and f.part_b == "UCX_Table_01"


def test_a_selected_proxy_stands_for_its_owner(table):
    visual, proxy_top, proxy_legs, crate = table
    level_run = level_check.LevelRun([proxy_legs, crate], clearance=0.35)
    assert [e.name for e in level_run.pending] == ["Table", "Crate"]


def test_the_panel_says_which_representation_an_object_uses(table):
    visual, proxy_top, proxy_legs, crate = table
    assert objects.describe(visual) == "UCX proxies: 2 hulls"
    assert objects.describe(visual, proxies=ProxyIndex(one_hull_per_ucx=False)) == \
        "UCX proxies: 5 hulls"
    assert objects.describe(crate) == "Evaluated mesh: convex hull"
    visual.convex_tools.kind = 'BOX'
    assert objects.describe(visual) == "Convex Tools setting: box (UCX proxies ignored)"


def test_an_unreal_proxy_without_its_object_is_skipped_with_the_reason(addon):
    boxes("UCX_Gone_01", [((0, 0, 0), (1, 1, 1))])
    boxes("Crate", [((0.5, 0, 0), (1.5, 1, 1))])
    stats = Stats()
    assert level_check.check_scene(stats=stats) == []
    assert stats.objects == 1
    ((name, reason),) = stats.skipped_objects
    assert name == "UCX_Gone_01" and "collision proxy of 'Gone'" in reason


def test_box_sphere_and_capsule_proxies_are_fitted_to_the_proxy_object(addon):
    # Fitted to each proxy's mesh (its bounds' centre and size), wherever its origin is.
    owner = boxes("Guard", [((-5, -5, 0), (5, 5, 1))])          # its own mesh is not used
    boxes("UBX_Guard_01", [((-1, -1, 0), (1, 1, 1))])
    boxes("USP_Guard_02", [((3, -1, -1), (5, 1, 1))])             # sphere of radius 1 at x 4
    boxes("UCP_Guard_03", [((-4.5, -0.5, 0), (-3.5, 0.5, 3))])    # capsule r 0.5, 3 tall
    bpy.context.view_layer.update()
    shape = api.shape_from_object(owner)
    assert list(shape.names) == ["UBX_Guard_01", "UCP_Guard_03", "USP_Guard_02"]
    # Farthest points along +x, +z and -x: the sphere's, the capsule's top, the capsule's side.
    box, capsule, sphere = (shape.part(i) for i in range(3))
    np.testing.assert_allclose(box.support([1, 1, 1]), [1, 1, 1], atol=1e-12)
    np.testing.assert_allclose(sphere.support([1, 0, 0]), [5, 0, 0], atol=1e-12)
    np.testing.assert_allclose(capsule.support([0, 0, 1]), [-4, 0, 3], atol=1e-12)
    np.testing.assert_allclose(capsule.support([-1, 0, 0])[0], -4.5, atol=1e-12)


def test_godot_colonly_is_a_body_of_its_own_beside_its_visual(addon):
    wall = boxes("Wall", [((0, 0, 0), (4, 0.2, 3))])
    collision = boxes("Wall-colonly", [((0, 0, 0), (4, 0.2, 3))])
    ground = boxes("Ground-col", [((-10, -10, -1), (10, 10, 0))])
    rock = boxes("Rock_convcol", [((5, 5, 0), (6, 6, 1)), ((7, 5, 0), (8, 6, 1))])
    lone = boxes("Cliff-colonly", [((20, 0, 0), (21, 1, 1))])
    bpy.context.view_layer.update()
    index = ProxyIndex()
    # Godot replaces Wall-colonly by a StaticBody3D named "Wall": a body of its own, the mesh
    # "Wall" beside it keeps its look and has no collision.
    assert index.owner_of(collision) is None and index.visual_of(collision) == wall
    assert "Wall" in index.excluded and "Wall-colonly" in index.excluded["Wall"]
    assert objects.describe(collision, proxies=index) == "Godot -colonly suffix: mesh, 12 triangles"
    assert objects.describe(wall, proxies=index) == "Godot -colonly body: mesh, 12 triangles"
    assert objects.describe(ground, proxies=index) == "Godot -col suffix: mesh, 12 triangles"
    assert objects.describe(rock, proxies=index) == "Godot -convcol suffix: convex hull"
    assert objects.describe(lone, proxies=index) == "Godot -colonly suffix: mesh, 12 triangles"
    assert index.visual_of(lone) is None
    stats = Stats()
    level_check.check_scene(stats=stats)
    # Wall-colonly, Ground-col, Rock_convcol, Cliff-colonly; Wall is listed as excluded.
    assert stats.objects == 4
    assert [n for n, _ in stats.excluded_objects] == ["Wall"]


def test_a_godot_convcolonly_body_is_checked_as_a_convex_hull_and_named_as_itself(addon):
    # The rock's collision reaches 1 m out where its look is a 0.2 m slab: a crate 0.6 m out
    # overlaps the collision by 0.4, the look not at all.
    rock = boxes("Rock", [((0, 0, 0), (4, 0.2, 3))])
    body = boxes("Rock-convcolonly", [((0, 0, 0), (4, 1, 3))])
    boxes("Crate", [((0, 0.6, 0), (1, 1.6, 1))])
    bpy.context.view_layer.update()
    assert objects.describe(rock) == "Godot -convcolonly body: 1 hull"
    assert list(api.shape_from_object(rock).names) == ["Rock-convcolonly"]
    stats = Stats()
    (f,) = level_check.check_scene(stats=stats)
    # The finding names the body, and the index names the visual beside it.
    assert (f.kind, f.object_a, f.object_b) == (OVERLAP, "Crate", "Rock-convcolonly")
    assert f.distance == pytest.approx(-0.4)
    assert ProxyIndex().visual_name(f.object_b) == "Rock" == rock.name
    assert ProxyIndex().finding_extra(f.object_a, f.object_b) == {"visual_b": "Rock"}
    assert ProxyIndex().finding_extra("Shelf_B/Rock-convcolonly") == {"visual_a": "Shelf_B/Rock"}
    assert stats.objects == 2
    assert body.name in ProxyIndex().notes


# --- Compound Parent rigid bodies ----------------------------------------------------------------
def test_a_compound_parent_is_made_of_its_rigid_body_children(addon):
    # The parent's own mesh (a big block) is not part of its compound, as in Blender.
    parent = rigid(boxes("Bench", [((-2, -1, 0), (2, 1, 1))]), 'COMPOUND')
    legs = []
    for name, x in (("LegL", -1.25), ("LegR", 1.25)):
        # Blender fits a rigid body's box around its origin: the legs have theirs at the centre.
        leg = rigid(boxes(name, [((-0.25, -0.25, -0.5), (0.25, 0.25, 0.5))],
                          location=(x, 0, 0.5)), 'BOX')
        leg.parent = parent
        legs.append(leg)
    ball = boxes("Ball", [((-0.4, -0.4, 0), (0.4, 0.4, 0.8))])     # between the legs
    bpy.context.view_layer.update()
    shape = api.shape_from_object(parent)
    assert list(shape.names) == ["LegL", "LegR"]
    assert objects.describe(parent) == "Rigid body: compound of 2 children, 2 boxes"
    assert api.distance(parent, ball).distance == pytest.approx(0.6)   # 1.0 - 0.4 each side
    stats = Stats()
    assert level_check.check_scene(stats=stats) == []
    assert stats.objects == 2          # the bench and the ball; the legs are the bench


def test_a_compound_parent_without_children_is_skipped_with_the_reason(addon):
    rigid(boxes("Lonely", [((0, 0, 0), (1, 1, 1))]), 'COMPOUND')
    boxes("Crate", [((0.5, 0, 0), (1.5, 1, 1))])
    stats = Stats()
    assert level_check.check_scene(stats=stats) == []
    ((name, reason),) = stats.skipped_objects
    assert name == "Lonely" and "without rigid-body children" in reason


class _Layout:
    """Stands in for a panel's layout: records the labels drawn, accepts everything else."""

    def __init__(self, labels):
        self.labels = labels

    def label(self, text="", **_):
        self.labels.append(text)

    def __getattr__(self, _name):
        return lambda *args, **kwargs: self

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)


def test_the_sidebar_shows_the_active_objects_representation(table):
    from types import SimpleNamespace

    from convex_tools import ui

    visual = table[0]
    labels = []
    panel = SimpleNamespace(layout=_Layout(labels))
    context = SimpleNamespace(scene=bpy.context.scene, active_object=visual,
                              evaluated_depsgraph_get=bpy.context.evaluated_depsgraph_get)
    ui.VIEW3D_PT_convex_tools.draw(panel, context)
    assert "UCX proxies: 2 hulls" in labels


def test_the_index_reads_further_every_name_an_engine_may_read(addon):
    # The index reads only the names its pass over all names picks out; that pass must pick
    # every name ``_read`` would find something in or warn about (and may pick more).
    from convex_tools import proxies

    mesh = bpy.data.meshes.new("Plain")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [], [(0, 1, 2)])
    named_col = bpy.data.meshes.new("Hull-col")       # Godot's last resort: the mesh's name
    named_col.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [], [(0, 1, 2)])
    names = ["Crate", "UCX_Crate", "ucx_Crate_01", "UBX_", "uSp_Ball", "Wall-colonly",
             "Wall$ColOnly", "Rock_CONVCOL.002", "Tree-noimp", "Nav-NavMesh", "Occ_occonly",
             "Body-rigid", "Ab", "Abc_", "Xİcol", "İ-colonly", "Shelf", "Collider", "Zebra"]
    scene = bpy.context.scene
    for name in names:
        obj = bpy.data.objects.new(name, named_col if name == "Shelf" else mesh)
        scene.collection.objects.link(obj)
    empty = bpy.data.objects.new("Box-colonly", None)
    scene.collection.objects.link(empty)
    index = ProxyIndex()
    objs = list(bpy.data.objects)
    picked = set(proxies._maybe_marked([o.name for o in objs], [o.type for o in objs], objs))
    for k, obj in enumerate(objs):
        probe = ProxyIndex(objects=[])
        if probe._read(obj) is not None or probe.warnings:
            assert k in picked, obj.name
    assert {objs[k].name for k in picked} >= {"UCX_Crate", "ucx_Crate_01", "uSp_Ball", "Shelf",
                                               "Box-colonly", "Tree-noimp", "Body-rigid"}
    assert "Crate" not in {objs[k].name for k in picked}
    # What the index made of them: the lower-case prefixes warned about, the mesh-named one a
    # mark, the -noimp one removed.
    assert {n for n, _ in index.warnings} >= {"ucx_Crate_01", "uSp_Ball"}
    assert index.own_mark(bpy.data.objects["Shelf"]).convention == "-col (mesh data)"
    assert "Tree-noimp" in index.excluded
