"""Concave objects in the level check and the operators: one hull per loose part (CONVEX_PARTS),
the evaluated triangles (MESH, and rigid bodies with a Mesh collision shape), findings that name
the parts, and drawings of the parts that touch."""

import csv
import io
import json

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import api, level_check, objects, operators  # noqa: E402
from convex_tools.core import Compound, TriangleMesh  # noqa: E402
from convex_tools.core.level import OVERLAP, TOO_CLOSE  # noqa: E402

from bpy_helpers import boxes, grid_surface, rigid, select  # noqa: E402

# An arch: two legs 0.6 wide with a 1.8 m opening between them, a lintel on top (three loose
# parts of one mesh, legs first).
ARCH = [((-1.5, -0.3, 0.0), (-0.9, 0.3, 2.4)), ((0.9, -0.3, 0.0), (1.5, 0.3, 2.4)),
        ((-1.5, -0.3, 2.4), (1.5, 0.3, 3.0))]


@pytest.fixture
def arch_and_pillar(addon):
    """The arch (CONVEX_PARTS) and a 0.8 × 0.8 × 2 pillar in its opening: 0.5 from each leg,
    0.4 under the lintel."""
    arch = boxes("Arch", ARCH)
    arch.convex_tools.kind = 'CONVEX_PARTS'
    pillar = boxes("Pillar", [((-0.4, -0.4, 0.0), (0.4, 0.4, 2.0))])
    bpy.context.view_layer.update()
    return arch, pillar


def test_convex_parts_gives_one_hull_per_loose_part(arch_and_pillar):
    arch, pillar = arch_and_pillar
    shape = api.shape_from_object(arch)
    assert isinstance(shape, Compound) and len(shape) == 3
    # Each part is the box it was modelled as (its extreme corners).
    for k, (lower, upper) in enumerate(ARCH):
        np.testing.assert_allclose(shape.part(k).support([1, 1, 1]), upper, atol=1e-12)
        np.testing.assert_allclose(shape.part(k).support([-1, -1, -1]), lower, atol=1e-12)
    assert objects.describe(arch) == "Convex Tools setting: convex parts, 3 hulls"


def test_an_arch_and_a_pillar_through_its_opening_are_not_a_finding(arch_and_pillar):
    arch, pillar = arch_and_pillar
    assert level_check.check_scene() == []
    # The nearest part is the lintel, 0.4 above the pillar's top.
    (f,) = level_check.check_scene(clearance=0.45)
    assert (f.kind, f.object_a, f.object_b) == (TOO_CLOSE, "Arch", "Pillar")
    assert f.distance == pytest.approx(0.4) and (f.part_a, f.part_b) == ("part 2", None)
    # As one convex hull the arch would swallow the pillar: the false finding of issue 11.
    arch.convex_tools.kind = 'HULL'
    (f,) = level_check.check_scene()
    assert f.kind == OVERLAP


def terrain(half_size=5.0, cells=20, **kw):
    """A flat terrain at z = 0 of 2 × cells² triangles (MESH from its Shape setting)."""
    obj = grid_surface("Terrain", half_size, cells, **kw)
    obj.convex_tools.kind = 'MESH'
    return obj


def test_a_prop_resting_on_terrain_touches_it_without_overlapping(addon):
    ground = terrain()
    boxes("Crate", [((0.3, 0.2, 0.0), (1.3, 1.2, 1.0))])
    bpy.context.view_layer.update()
    assert isinstance(api.shape_from_object(ground), TriangleMesh)
    assert objects.describe(ground) == "Convex Tools setting: mesh, 800 triangles"
    assert level_check.check_scene() == []


def test_a_prop_sunk_a_tenth_into_terrain_is_sunk_a_tenth(addon):
    terrain()
    boxes("Crate", [((0.3, 0.2, -0.1), (1.3, 1.2, 0.9))])
    bpy.context.view_layer.update()
    (f,) = level_check.check_scene()
    # The terrain (a triangle mesh: static) supports the crate, which is sunk into it.
    assert (f.kind, f.object_a, f.object_b) == ("sunk", "Crate", "Terrain")
    assert f.depth == pytest.approx(0.1)
    # Moving the crate along point_b - point_a leaves it resting: straight up.
    np.testing.assert_allclose(f.point_b - f.point_a, [0, 0, 0.1], atol=1e-9)
    assert f.move == "Crate"
    np.testing.assert_allclose(f.translation, [0, 0, 0.1], atol=1e-9)
    assert f.part_a is None and f.part_b.startswith("triangle ")


def test_a_rigid_body_with_a_mesh_shape_is_its_triangles(addon):
    # A U-shaped channel (floor and two walls, open at the top) with a box inside it: apart from
    # the walls, resting on the floor. Its hull would hold the box.
    channel = boxes("Channel", [((-2, -1, 0), (-1.8, 1, 2)), ((1.8, -1, 0), (2, 1, 2)),
                                ((-1.8, -1, 0), (1.8, 1, 0.2))])
    rigid(channel, 'MESH')
    boxes("Box", [((-0.5, -0.5, 0.2), (0.5, 0.5, 1.2))])
    bpy.context.view_layer.update()
    assert isinstance(api.shape_from_object(channel), TriangleMesh)
    assert objects.describe(channel) == "Rigid body: mesh, 36 triangles"
    assert level_check.check_scene() == []
    channel.rigid_body.collision_shape = 'CONVEX_HULL'
    assert [f.kind for f in level_check.check_scene()] == [OVERLAP]


def test_two_triangle_meshes_are_never_checked_against_each_other(addon):
    terrain()
    other = grid_surface("Room", 2.0, 4)           # lies in the terrain's plane
    other.convex_tools.kind = 'MESH'
    bpy.context.view_layer.update()
    assert level_check.check_scene() == []


def test_findings_name_their_parts_in_every_report(addon, tmp_path):
    from convex_tools import cli, overlay

    terrain()
    boxes("Crate", [((0.3, 0.2, -0.1), (1.3, 1.2, 0.9))])
    path = tmp_path / "level.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    out = tmp_path / "out.txt"
    with open(out, "w") as stream:
        result = cli.run([str(path), "--json", str(tmp_path / "r.json"),
                          "--csv", str(tmp_path / "r.csv"), "--picture",
                          str(tmp_path / "f.png"), "--picture-size", "64x40"],
                         out=stream, err=stream)
    assert result.code == 1
    (finding,) = json.loads((tmp_path / "r.json").read_text())["files"][0]["findings"]
    assert finding["part_a"] is None and finding["part_b"].startswith("triangle ")
    (row,) = csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text()))
    assert row["part_a"] == "" and row["part_b"] == finding["part_b"]
    assert f"Terrain [{finding['part_b']}]" in out.read_text()
    # The picture outlines the terrain's triangle that touches (3 edges at z = 0, by the crate),
    # not the terrain's 10 m box; the crate's box edges lie at z = -0.1 and 0.9.
    assert (tmp_path / "f.png").exists()
    (drawing,) = overlay.drawings([level_check.OVERLAY_KEY])
    ground = [(a, b) for a, b, role in drawing.lines if role == "sunk"
              and abs(a[2]) < 1e-9 and abs(b[2]) < 1e-9]
    assert len(ground) == 3
    ends = np.array([p for segment in ground for p in segment])
    assert np.all((ends[:, 0] >= -0.5) & (ends[:, 0] <= 2.0) & (ends[:, 1] >= -0.5)
                  & (ends[:, 1] <= 2.0))


def test_the_check_level_operator_lists_the_parts_and_draws_the_touching_part(addon):
    from convex_tools import overlay

    terrain()
    boxes("Crate", [((0.3, 0.2, -0.1), (1.3, 1.2, 0.9))])
    bpy.context.view_layer.update()
    bpy.ops.object.convex_check_level()
    (item,) = bpy.context.scene.convex_level.findings
    assert (item.part_a, item.part_b[:9]) == ("", "triangle ")
    assert level_check.pair_text(item) == f"Crate / Terrain [{item.part_b}]"
    # The terrain side is outlined by its triangle (3 edges at z = 0), not the terrain's box.
    outline_a, outline_b = level_check.stored_outlines(item)
    assert outline_b.shape == (3, 2, 3) and np.allclose(outline_b[:, :, 2], 0.0)
    assert outline_a.shape == (12, 2, 3)      # the crate: its box
    drawn = {tuple(map(tuple, np.round(seg, 9))) for seg in outline_b}
    lines = {tuple(map(tuple, np.round((a, b), 9))) for a, b, role in
             overlay.drawings([level_check.OVERLAY_KEY])[0].lines if role == "sunk"}
    assert drawn <= lines


# --- operators --------------------------------------------------------------------------------
def outlined_corners(drawing):
    """The ends of a drawing's part outlines (role "part"), rounded."""
    return {tuple(np.round(p, 6)) for a, b, role in drawing.lines if role == "part"
            for p in (a, b)}


def box_corners(lower, upper):
    return {(float(x), float(y), float(z)) for x in (lower[0], upper[0])
            for y in (lower[1], upper[1]) for z in (lower[2], upper[2])}


def test_distance_operator_names_and_draws_the_nearest_part(arch_and_pillar):
    from convex_tools import overlay

    arch, pillar = arch_and_pillar
    select(pillar, arch, active=arch)
    assert bpy.ops.object.convex_distance() == {'FINISHED'}
    result = operators.last_query["result"]
    assert result.distance == pytest.approx(0.4) and result.part_b == 2
    assert bpy.context.scene.convex_tools.last_result == \
        "Distance Pillar – Arch (part 2): 0.4"
    # The lintel (part 2) is outlined, and only it: its eight corners.
    (drawing,) = overlay.drawings(["query"])
    assert outlined_corners(drawing) == box_corners(*ARCH[2])


def test_ray_cast_operator_reports_the_triangle_it_hits(addon):
    terrain()
    bpy.context.scene.cursor.location = (0.26, 0.13, 3.0)
    select(bpy.data.objects["Terrain"])
    assert bpy.ops.object.convex_ray_cast(axis='NEG_Z') == {'FINISHED'}
    hit = operators.last_query["result"]
    assert hit.t == pytest.approx(3.0) and hit.normal == pytest.approx([0, 0, 1])
    assert f"(triangle {hit.part})" in bpy.context.scene.convex_tools.last_result


def test_sweep_operator_drops_a_crate_onto_terrain(addon):
    terrain()
    crate = boxes("Crate", [((0.3, 0.2, 2.0), (1.3, 1.2, 3.0))])
    select(bpy.data.objects["Terrain"], crate, active=crate)
    assert bpy.ops.object.convex_sweep(translation=(0, 0, -4)) == {'FINISHED'}
    hit = operators.last_query["result"]
    assert hit.t == pytest.approx(0.5)            # 2 of its 4 metres down
    assert "Terrain (triangle" in bpy.context.scene.convex_tools.last_result


def test_penetration_and_contact_operators_on_a_mesh(addon):
    terrain()
    crate = boxes("Crate", [((0.3, 0.2, -0.1), (1.3, 1.2, 0.9))])
    select(bpy.data.objects["Terrain"], crate, active=bpy.data.objects["Terrain"])
    assert bpy.ops.object.convex_penetration(method='EPA') == {'FINISHED'}
    assert operators.last_query["result"].depth == pytest.approx(0.1)
    assert bpy.ops.object.convex_contact() == {'FINISHED'}
    manifold = operators.last_query["result"]
    assert np.max(manifold.depths) == pytest.approx(0.1, abs=1e-6)


@pytest.mark.parametrize("operator", ["convex_penetration", "convex_contact"])
def test_depth_of_two_triangle_meshes_is_a_one_line_error(addon, operator):
    # Two surfaces have no inside to be deep in: the core refuses, the operator says why.
    ground = terrain()
    other = grid_surface("Slope", 2.0, 2, height=lambda x, y: 0.1 * x)
    other.convex_tools.kind = 'MESH'
    select(ground, other, active=other)
    with pytest.raises(RuntimeError, match="two TriangleMesh surfaces is not defined"):
        getattr(bpy.ops.object, operator)()
    assert bpy.ops.object.convex_distance() == {'FINISHED'}


def test_show_shapes_draws_every_part(arch_and_pillar):
    from convex_tools import overlay

    arch, pillar = arch_and_pillar
    select(arch)
    assert bpy.ops.object.convex_convert() == {'FINISHED'}
    (drawing,) = overlay.drawings(["shapes"])
    # The wires run between the corners of the three boxes, and reach every one of them.
    corners = {(float(x), float(y), float(z)) for lower, upper in ARCH
               for x in (lower[0], upper[0]) for y in (lower[1], upper[1])
               for z in (lower[2], upper[2])}
    ends = {tuple(np.round(p, 5)) for a, b, _ in drawing.lines for p in (a, b)}
    assert ends == {tuple(np.round(c, 5)) for c in corners}
    assert "convex parts, 3 hulls" in bpy.context.scene.convex_tools.last_result


def test_watch_measures_a_compound_pair_as_it_moves(arch_and_pillar):
    from convex_tools import overlay, watch

    arch, pillar = arch_and_pillar
    settings = bpy.context.scene.convex_tools
    item = settings.watch_pairs.add()
    item.object_a, item.object_b = pillar, arch
    settings.watch_enabled = True
    watch.refresh(bpy.context.scene)
    assert item.result == "d = 0.4 (- / part 2)"
    pillar.location.x = 0.3                       # now 0.2 from the right leg
    bpy.context.view_layer.update()
    watch.refresh(bpy.context.scene)
    assert item.result == "d = 0.2 (- / part 1)"
    # Its drawing outlines the right leg, the part now nearest.
    drawings = [d for d in overlay.drawings() if outlined_corners(d)]
    assert [outlined_corners(d) for d in drawings] == [box_corners(*ARCH[1])]


# --- loose parts ------------------------------------------------------------------------------
def _parts_by_brute_force(n, edges):
    """Connected components by repeated merging of sets (slow and obvious)."""
    groups = [{v} for v in range(n)]
    for a, b in edges:
        ga = next(g for g in groups if a in g)
        gb = next(g for g in groups if b in g)
        if ga is not gb:
            groups.remove(gb)
            ga |= gb
    return sorted(sorted(g) for g in groups)


@pytest.mark.parametrize("rounds", [objects.LOOSE_PART_ROUNDS, 1])
def test_loose_parts_are_the_connected_components_of_the_edges(rounds, monkeypatch):
    # Shuffled chains, a star, isolated vertices; with one round the union-find finishes.
    monkeypatch.setattr(objects, "LOOSE_PART_ROUNDS", rounds)
    rng = np.random.default_rng(5)
    n = 200
    order = rng.permutation(n)
    edges = [(order[k], order[k + 1]) for k in range(0, 80)]          # one long chain
    edges += [(order[100], order[k]) for k in range(101, 140)]        # a star
    edges += [(order[k], order[k + 1]) for k in range(150, 170, 2)]   # ten pairs
    rng.shuffle(edges)
    found = objects.loose_parts(n, np.array(edges))
    assert sorted(sorted(p.tolist()) for p in found) == _parts_by_brute_force(n, edges)
    # Ordered by their first vertex, which makes part numbers stable.
    assert [int(p.min()) for p in found] == sorted(int(p.min()) for p in found)
