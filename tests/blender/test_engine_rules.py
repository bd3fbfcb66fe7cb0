"""Each engine naming rule of docs/engines.md, built from the engine's own examples: Unreal's
UCX_[RenderMeshName]_## and its prefix list, Godot's suffix table and its importer's handling of
counters, case and Empties."""

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import api, level_check, objects  # noqa: E402
from convex_tools.core.level import OVERLAP, Stats  # noqa: E402
from convex_tools.proxies import ProxyIndex, godot_fixed, godot_has, parse_name  # noqa: E402

from bpy_helpers import boxes  # noqa: E402

UNIT = [((-0.5, -0.5, 0.0), (0.5, 0.5, 1.0))]
# Blender keeps locations in single precision: coordinates like 0.9 come back within this.
FLOAT32 = 1e-6


def _empty(name, display, location=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0), size=1.0):
    empty = bpy.data.objects.new(name, None)
    empty.empty_display_type = display
    empty.empty_display_size = size
    empty.location, empty.scale = location, scale
    bpy.context.scene.collection.objects.link(empty)
    return empty


def _skipped(**options):
    stats = Stats()
    findings = level_check.check_scene(stats=stats, **options)
    left_out = {**dict(stats.skipped_objects),
                **{name: "excluded: " + why for name, why in stats.excluded_objects}}
    return findings, left_out, stats


# --- Unreal ----------------------------------------------------------------------------------
@pytest.mark.parametrize("prefix, kind", [("UCX_", "HULL"), ("UBX_", "BOX"), ("USP_", "SPHERE"),
                                          ("UCP_", "CAPSULE")])
def test_unreal_prefixes_from_epics_list(addon, prefix, kind):
    # "meshes with certain prefixes will be imported as collision primitives for the mesh with
    # the corresponding unprefixed name. Supported prefixes are: UBX_ UCP_ USP_ UCX_"
    owner = boxes("SM_Pillar", UNIT)
    proxy = boxes(f"{prefix}SM_Pillar", [((-0.5, -0.5, 0.0), (0.5, 0.5, 3.0))])
    index = ProxyIndex(engine="unreal")
    assert index.owner_of(proxy) == owner
    assert [(p.obj, p.kind) for p in index.parts_of(owner)] == [(proxy, kind)]
    # Godot alone does not read Unreal's prefixes: the proxy is a mesh of its own.
    assert ProxyIndex(engine="godot").owner_of(proxy) is None


def test_unreal_numbered_proxies_of_one_mesh(addon):
    # Epic's UCX_[RenderMeshName]_##: two convex pieces of one mesh, each its own hull.
    table = boxes("Table", [((-1, -0.5, 0.9), (1, 0.5, 1.0)), ((-1, -0.5, 0), (-0.9, 0.5, 0.9))])
    boxes("UCX_Table_01", [((-1, -0.5, 0.9), (1, 0.5, 1.0))])
    boxes("UCX_Table_02", [((-1, -0.5, 0), (-0.9, 0.5, 0.9))])
    boxes("Crate", [((0.0, -0.2, 0.0), (0.4, 0.2, 0.5))])      # under the top, clear of the leg
    bpy.context.view_layer.update()
    assert list(api.shape_from_object(table).names) == ["UCX_Table_01", "UCX_Table_02"]
    notes = ProxyIndex().notes
    assert "without its last part '_01'" in notes["UCX_Table_01"]
    findings, _, stats = _skipped()
    assert findings == [] and stats.objects == 2


def test_a_ucx_name_that_reads_two_ways_is_warned_about(addon):
    # Not documented: a last part that is not a number. With no "Crate_Lid" the proxy is the
    # crate's (the case: it used to be skipped as naming no object).
    crate = boxes("Crate", UNIT)
    lid_proxy = boxes("UCX_Crate_Lid", [((-0.5, -0.5, 1.0), (0.5, 0.5, 1.1))])
    index = ProxyIndex()
    assert index.owner_of(lid_proxy) == crate
    assert "'_Lid'" in index.notes["UCX_Crate_Lid"] and "number" in index.notes["UCX_Crate_Lid"]
    # Which owner it resolved to, and why, is said in the report too.
    assert index.warnings == [("UCX_Crate_Lid", "note: " + index.notes["UCX_Crate_Lid"])]
    # With an object "Crate_Lid" too, the name reads two ways: the whole name wins, warned.
    lid = boxes("Crate_Lid", [((-0.5, -0.5, 1.0), (0.5, 0.5, 1.1))])
    index = ProxyIndex()
    assert index.owner_of(lid_proxy) == lid
    ((name, message),) = [w for w in index.warnings if not w[1].startswith("note:")]
    assert name == "UCX_Crate_Lid" and "reads two ways" in message and "'Crate'" in message


def test_unreal_prefix_case(addon):
    crate = boxes("Crate", UNIT)
    lower = boxes("ucx_Crate", UNIT)
    other_case = boxes("UCX_CRATE_01", UNIT)
    index = ProxyIndex()
    # Epic writes the prefixes in upper case: "ucx_" is a mesh of its own, with a warning.
    assert index.owner_of(lower) is None
    assert any(n == "ucx_Crate" and "Epic's case" in m for n, m in index.warnings)
    # Owner names match in any case, and the note says so.
    assert index.owner_of(other_case) == crate
    assert "another letter case" in index.notes["UCX_CRATE_01"]
    assert ("UCX_CRATE_01", "note: " + index.notes["UCX_CRATE_01"]) in index.warnings


def test_one_convex_hull_per_ucx_follows_unreals_default(addon):
    # An L of two loose boxes as one UCX proxy: one hull by default (Unreal's default), which
    # fills the corner of the L where a crate stands; two hulls with the option off.
    owner = boxes("Corner", [((0, 0, 0), (4, 1, 2)), ((0, 1, 0), (1, 4, 2))])
    boxes("UCX_Corner", [((0, 0, 0), (4, 1, 2)), ((0, 1, 0), (1, 4, 2))])
    boxes("Crate", [((2.0, 2.0, 0.0), (2.5, 2.5, 0.5))])
    bpy.context.view_layer.update()
    assert objects.describe(owner) == "UCX proxy: 1 hull"
    findings, _, _ = _skipped()
    assert [(f.kind, f.object_a, f.object_b) for f in findings] == [(OVERLAP, "Corner", "Crate")]
    assert _skipped(one_hull_per_ucx=False)[0] == []
    assert objects.describe(owner, proxies=ProxyIndex(one_hull_per_ucx=False)) == \
        "UCX proxy: 2 hulls"
    bpy.context.scene.convex_level.one_hull_per_ucx = False      # the scene setting
    assert _skipped()[0] == []


def test_a_proxy_under_an_empty_pairs_by_name_and_is_warned_about(addon):
    crate = boxes("Crate", UNIT)
    props = bpy.data.objects.new("Props", None)
    bpy.context.scene.collection.objects.link(props)
    proxy = boxes("UCX_Crate_01", UNIT)
    proxy.parent = props
    index = ProxyIndex()
    assert index.owner_of(proxy) == crate
    ((name, message),) = index.warnings
    assert name == "UCX_Crate_01" and "parented to 'Props'" in message and "by name" in message
    # A proxy that names nothing is not rescued by its parent: skipped, and the reason says so.
    stray = boxes("UCX_01", UNIT)
    stray.parent = crate
    index = ProxyIndex()
    assert index.owner_of(stray) is None
    assert "does not follow its parent 'Crate'" in index.orphans["UCX_01"]


def test_a_pairing_through_blenders_duplicate_suffix_is_warned_about(addon):
    boxes("Crate", UNIT)
    copy = boxes("Crate.001", UNIT, location=(5, 0, 0))
    proxy = boxes("UCX_Crate_01.001", UNIT, location=(5, 0, 0))
    index = ProxyIndex()
    assert index.owner_of(proxy) == copy           # what the artist meant
    ((name, message),) = index.warnings
    assert name == "UCX_Crate_01.001" and "'.001'" in message
    assert "attaches it to 'Crate' instead" in message
    # An exact name with the suffix in it is no trap: no warning.
    boxes("UCX_Crate.001", UNIT, location=(5, 0, 0))
    assert [n for n, _ in ProxyIndex().warnings] == ["UCX_Crate_01.001"]


# --- Godot -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, suffix, found", [
    ("Wall-colonly", "colonly", True), ("Wall_COLONLY", "colonly", True),
    ("Wall$colonly", "colonly", True), ("Wall$ColOnly_extra", "colonly", True),
    ("Wall-colonly.001", "colonly", True),       # Blender's counter reaches Godot as _001
    ("Wall-colonly 2", "colonly", True), ("Wall-convcolonly", "colonly", False),
    ("Wallcolonly", "colonly", False), ("Wall-colonly-x", "colonly", False),
])
def test_godot_finds_a_suffix_as_its_importer_does(name, suffix, found):
    assert godot_has(name, suffix) is found


@pytest.mark.parametrize("name, suffix, fixed", [
    ("Wall-colonly", "colonly", "Wall"), ("Wall-colonly.003", "colonly", "Wall_003"),
    ("Wall$colonly", "colonly", "Wall"), ("Wall$ColOnly", "colonly", "Wall$ColOnly"),
    ("Rock_convcolonly2", "convcolonly", "Rock2"),
])
def test_godot_takes_a_suffix_out_as_its_importer_does(name, suffix, fixed):
    assert godot_fixed(name, suffix) == fixed


def test_godot_noimp_is_removed_with_its_children(addon):
    # "Objects that have the -noimp suffix will be removed at import-time no matter what
    # their type is": a helper overlapping the crate is no finding, nor is its child.
    boxes("Crate", UNIT)
    helper = boxes("Helper-noimp", UNIT)
    child = boxes("Gizmo", UNIT)
    child.parent = helper
    findings, skipped, stats = _skipped(engine="godot")
    assert findings == [] and stats.objects == 1
    assert skipped["Helper-noimp"] == "excluded: removed by Godot on import (-noimp)"
    assert "with its parent 'Helper-noimp'" in skipped["Gizmo"]
    # Unreal has no such rule: the same file overlaps three ways.
    assert len(_skipped(engine="unreal")[0]) == 3
    # The scene's engine preset chooses when the check is not told.
    bpy.context.scene.convex_level.engine = 'GODOT'
    assert _skipped()[0] == []
    bpy.context.scene.convex_level.engine = 'UNREAL'
    assert len(_skipped()[0]) == 3


def test_godot_colonly_makes_a_body_of_its_own_beside_the_visual(addon):
    # The docs' example of separating look and collision: "-colonly ... will remove the mesh
    # upon importing and will create a StaticBody3D collision instead".
    visual = boxes("Barrel.002", UNIT)
    body = boxes("Barrel-colonly.002", [((-0.5, -0.5, 0.0), (0.5, 0.5, 1.5))])
    boxes("Lamp", [((-0.2, -0.2, 1.3), (0.2, 0.2, 1.6))])       # in the body, above the look
    nameless = boxes("-colonly", UNIT, location=(9, 9, 0))
    index = ProxyIndex(engine="godot")
    assert index.visual_of(body) == visual and index.owner_of(body) is None
    assert "named 'Barrel_002' in Godot" in index.notes[body.name]
    assert index.excluded[nameless.name].startswith("removed by Godot")
    findings, skipped, _ = _skipped(engine="godot")
    ((f),) = findings
    # A -colonly mesh is a trimesh static body: the lamp resting 0.2 into its top is sunk.
    assert (f.kind, f.object_a, f.object_b) == ("sunk", "Lamp", "Barrel-colonly.002")
    # The report names the visual object beside the Godot body.
    assert f.to_dict()["visual_b"] == "Barrel.002"
    assert skipped["Barrel.002"].startswith("excluded: the visual of 'Barrel-colonly.002'")


def test_godot_colonly_empties_by_display_type(addon):
    # "Single arrow will create a SeparationRayShape3D. Cube will create a BoxShape3D. Image
    # will create a WorldBoundaryShape3D. Sphere (and the others not listed) will create a
    # SphereShape3D." Each collider is a body of its own, of size 1 scaled by the Empty.
    box = _empty("Blocker-colonly", 'CUBE', (0, 0, 1), (2.0, 1.0, 1.0))
    ball = _empty("Bumper-colonly", 'PLAIN_AXES', (10, 0, 1))
    ray = _empty("Feet-colonly", 'SINGLE_ARROW', (20, 0, 0.9))
    plane = _empty("Ground-colonly", 'IMAGE', (0, 0, 0))
    index = ProxyIndex(engine="godot")
    assert [index.own_mark(o).kind for o in (box, ball, ray)] == ["BOX", "SPHERE", "RAY"]
    assert "infinite plane" in index.excluded[plane.name]
    assert any("Collada" in m for n, m in index.warnings if n == box.name)
    np.testing.assert_allclose(api.shape_from_object(box).aabb()[1], [2, 1, 2], atol=1e-12)
    np.testing.assert_allclose(api.shape_from_object(ball).aabb()[0], [9, -1, 0], atol=1e-12)
    lower, upper = api.shape_from_object(ray).aabb()      # 1 down from the Empty
    np.testing.assert_allclose([lower, upper], [[20, 0, -0.1], [20, 0, 0.9]], atol=FLOAT32)
    assert objects.describe(box, proxies=index) == "Godot -colonly Empty: box"
    # A crate 0.5 into the box; the ray reaches 0.1 into the floor slab.
    boxes("Crate", [((1.5, -0.5, 0.0), (2.5, 0.5, 1.0))])
    boxes("Slab", [((15, -5, -1), (25, 5, 0))])
    findings, skipped, stats = _skipped(engine="godot")
    pairs = sorted((f.object_a, f.object_b, round(-f.distance, 6)) for f in findings)
    assert pairs == [("Blocker-colonly", "Crate", 0.5), ("Feet-colonly", "Slab", 0.1)]
    assert skipped["Ground-colonly"].startswith("excluded")
    # The Display Size is ignored by Godot, and said so.
    box.empty_display_size = 2.0
    assert any("Display Size" in m for n, m in ProxyIndex(engine="godot").warnings
               if n == box.name)


def test_godot_rigid_col_and_convcol_mark_the_object_itself(addon):
    l_shape = [((0, 0, 0), (4, 1, 2)), ((0, 1, 0), (1, 4, 2))]
    for name in ("Rock-rigid", "Rock-convcol", "Rock-col"):
        boxes(name, l_shape)
    index = ProxyIndex(engine="godot")
    kinds = {n: index.own_mark(bpy.data.objects[n]).kind
             for n in ("Rock-rigid", "Rock-convcol", "Rock-col")}
    assert kinds == {"Rock-rigid": "HULL", "Rock-convcol": "HULL", "Rock-col": "MESH"}


def test_godot_navmesh_and_occonly_are_not_collision(addon):
    boxes("Crate", UNIT)
    boxes("Floor-navmesh", UNIT)
    boxes("Wall-occonly", UNIT)
    boxes("Wall-occ", [((5, 5, 0), (6, 6, 1))])          # an occluder that keeps its mesh
    findings, skipped, stats = _skipped(engine="godot")
    assert findings == [] and stats.objects == 2
    assert "navigation mesh" in skipped["Floor-navmesh"]
    assert "occluder" in skipped["Wall-occonly"]


def test_godot_reads_a_mesh_datas_name_last(addon):
    rock = boxes("Rock", UNIT)
    rock.data.name = "RockMesh-convcol"
    assert ProxyIndex(engine="godot").own_mark(rock).kind == "HULL"
    assert ProxyIndex(engine="unreal").own_mark(rock) is None


def test_names_that_read_two_ways_in_both(addon):
    wall = boxes("Wall-colonly", UNIT)
    proxy = boxes("UCX_Wall-colonly", UNIT)
    index = ProxyIndex(engine="both")
    assert index.owner_of(proxy) == wall
    assert any(n == "UCX_Wall-colonly" and "reads two ways" in m for n, m in index.warnings)
    godot = ProxyIndex(engine="godot")
    assert godot.owner_of(proxy) is None and godot.own_mark(proxy).convention == "-colonly"


def test_engine_must_be_known(addon):
    with pytest.raises(ValueError, match="engine must be one of"):
        ProxyIndex(engine="unity")
    with pytest.raises(ValueError, match="engine must be one of"):
        parse_name("UCX_Crate", engine="")
    assert ProxyIndex(engine="GODOT").engine == "godot"          # the Sidebar's spelling
