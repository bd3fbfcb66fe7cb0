"""Make Colliders (object.convex_make_collision): the colliders it makes are named, parented,
hidden and shaped so that the engines and the Level Check pair them, the check then finds what
it finds with hand-made proxies, and the names and findings survive Blender's FBX and glTF
exporters and importers."""

import os
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

import convex_tools  # noqa: E402
from convex_tools import api, colliders, level_check, objects  # noqa: E402
from convex_tools.core.level import OVERLAP  # noqa: E402
from convex_tools.proxies import ProxyIndex  # noqa: E402

from bpy_helpers import add, boxes, select  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Coordinates go through single precision in Blender and through the FBX and glTF files:
# positions of a few metres come back within this.
FILE_PRECISION = 1e-5
# Blender keeps an object's rotation in single precision: a quarter turn is exact within this.
FLOAT32 = 1e-6


def make(*objs, **options):
    select(*objs)
    assert bpy.ops.object.convex_make_collision(**options) == {'FINISHED'}
    return sorted((o for o in bpy.data.objects if o.get(colliders.OWNER_PROPERTY)),
                  key=lambda o: o.name)


def findings_of(findings):
    return sorted((f.kind, f.object_a, f.object_b or "",
                   None if f.distance is None else round(f.distance, 4), f.part_a or "",
                   f.part_b or "") for f in findings)


# --- the operator -------------------------------------------------------------------------------
def test_make_colliders_needs_a_selected_object_and_says_so(addon):
    boxes("Crate", [((0, 0, 0), (1, 1, 1))])
    select()
    assert not bpy.ops.object.convex_make_collision.poll()
    with pytest.raises(RuntimeError, match="Select mesh-like objects"):
        bpy.ops.object.convex_make_collision()
    options = colliders.OBJECT_OT_convex_make_collision.bl_options
    assert {'REGISTER', 'UNDO'} <= options


def test_an_unreal_hull_collider_is_parented_hidden_and_checked_through(addon):
    ball = add("uv_sphere", "Ball", radius=1.0, location=(2.0, 0.0, 1.0))    # 482 vertices
    (collider,) = make(ball)
    assert collider.name == "UCX_Ball_01" and collider.parent == ball
    assert np.allclose(np.array(collider.matrix_parent_inverse), np.eye(4))
    assert collider.hide_get() and collider.hide_render and collider.display_type == 'WIRE'
    assert [c.name for c in collider.users_collection] == [colliders.COLLECTION_NAME]
    # At most 32 corners (the default), each a vertex of the ball: a hull inside the ball's.
    corners = np.array([v.co for v in collider.data.vertices])
    ball_vertices = np.array([v.co for v in ball.data.vertices])
    assert 24 <= len(corners) <= colliders.DEFAULT_VERTEX_LIMIT
    assert np.min(np.linalg.norm(corners[:, None] - ball_vertices[None], axis=2), axis=1).max() \
        < 1e-9
    # The check now goes through it, and the Sidebar says so.
    assert ProxyIndex().parts_of(ball)[0].obj == collider
    assert objects.describe(ball) == "UCX proxy: 1 hull"
    lines = colliders.status_lines(ball, ProxyIndex())
    assert lines[0] == "Checked through 1 collider: UCX_Ball_01"
    # Making them again replaces them: no second set, no Blender ".001".
    again = make(ball, vertex_limit=8)
    assert [c.name for c in again] == ["UCX_Ball_01"] and len(again[0].data.vertices) <= 8
    assert not any("." in o.name for o in bpy.data.objects)


def test_the_vertex_limit_keeps_the_farthest_corners():
    rng = np.random.default_rng(7)
    points = rng.normal(size=(2000, 3))
    points /= np.linalg.norm(points, axis=1)[:, None]         # on the unit sphere
    for limit in (4, 12, 32, 100):
        corners = colliders.limited_corners(points, limit)
        assert 4 <= len(corners) <= limit
        # Spread over the sphere: every direction has a corner within reach.
        gap = 1.0 - (colliders.fibonacci_directions(500) @ corners.T).max(axis=1).min()
        assert gap < {4: 0.8, 12: 0.4, 32: 0.2, 100: 0.08}[limit]
    box = np.array([(x, y, z) for x in (0, 1) for y in (0, 2) for z in (0, 3)], dtype=float)
    assert len(colliders.limited_corners(np.vstack([box, box * 0.5]), 32)) == 8
    with pytest.raises(ValueError, match="at least 4"):
        colliders.limited_corners(points, 3)


@pytest.mark.parametrize("shape, prefix, expected", [
    # An owner 2 × 1 × 4 centred at (0, 0, 2) in its frame, placed at (5, 0, 0).
    ('BOX', "UBX_", ([4.0, -0.5, 0.0], [6.0, 0.5, 4.0])),
    ('SPHERE', "USP_", ([3.0, -2.0, 0.0], [7.0, 2.0, 4.0])),     # radius 2, the largest half
    ('CAPSULE', "UCP_", ([4.0, -1.0, 0.0], [6.0, 1.0, 4.0])),    # along Z, radius 1
])
def test_unreal_primitive_colliders_are_the_primitives_the_check_fits(addon, shape, prefix,
                                                                     expected):
    owner = boxes("Pillar", [((-1, -0.5, 0), (1, 0.5, 4))], location=(5, 0, 0))
    (collider,) = make(owner, shape=shape, engine='UNREAL')
    assert collider.name == f"{prefix}Pillar_01"
    lower, upper = api.shape_from_object(owner).aabb()
    np.testing.assert_allclose([lower, upper], expected, atol=1e-9)


def test_a_capsule_collider_lies_along_the_longest_axis(addon):
    log = boxes("Log", [((-2, -0.5, -0.5), (2, 0.5, 0.5))])
    make(log, shape='CAPSULE')
    (capsule,) = (api.shape_from_object(log).part(i) for i in range(1))
    np.testing.assert_allclose(capsule.support([1, 0, 0]), [2, 0, 0], atol=FLOAT32)
    np.testing.assert_allclose(capsule.support([0, 0, 1])[2], 0.5, atol=FLOAT32)
    np.testing.assert_allclose(capsule.support([1, 0, 1]), [1.5 + 0.5 ** 1.5, 0, 0.5 ** 1.5],
                               atol=FLOAT32)       # a round end, not a box corner


def test_godot_colliders_follow_the_scene_preset(addon):
    bpy.context.scene.convex_level.engine = 'GODOT'
    rock = boxes("Rock", [((0, 0, 0), (2, 2, 2))])
    arch = boxes("Arch", [((5, 0, 0), (5.5, 1, 3)), ((7.5, 0, 0), (8, 1, 3)),
                          ((5, 0, 3), (8, 1, 3.5))])
    (body,) = make(rock)
    assert body.name == "Rock-convcolonly"
    (parts,) = [c for c in make(arch, shape='PARTS') if c.name.startswith("Arch")]
    assert parts.name == "Arch-colonly" and len(parts.data.polygons) == 36   # 3 boxes' hulls
    index = ProxyIndex(engine="godot")
    assert index.visual_of(body) == rock and index.visual_of(parts) == arch
    # A crate in the arch's opening touches none of its parts: one body, no finding.
    boxes("Crate", [((6, 0.2, 0), (7, 0.8, 1))])
    boxes("Lamp", [((1.5, 1.5, 1.5), (2.5, 2.5, 2.5))])      # 0.5 into the rock
    findings = level_check.check_scene()
    assert [(f.object_a, f.object_b) for f in findings] == [("Lamp", "Rock-convcolonly")]
    # The scene preset "both" makes Unreal colliders.
    bpy.context.scene.convex_level.engine = 'BOTH'
    assert colliders.default_engine(bpy.context.scene) == "UNREAL"


def test_collider_names_avoid_the_engines_traps(addon):
    duplicate = boxes("Crate.001", [((0, 0, 0), (1, 1, 1))])
    (collider,) = make(duplicate)
    # Exported names lose nothing: the object is renamed, and the proxy names it exactly.
    assert duplicate.name == "Crate_001" and collider.name == "UCX_Crate_001_01"
    # "Door_01" would take "UCX_Door_01" for itself: the number is skipped.
    door = boxes("Door", [((3, 0, 0), (4, 1, 2))])
    boxes("Door_01", [((6, 0, 0), (7, 1, 2))])
    (door_collider,) = [c for c in make(door) if c.name.startswith("UCX_Door")]
    assert door_collider.name == "UCX_Door_02"
    index = ProxyIndex()
    assert index.owner_of(door_collider) == door and index.owner_of(collider) == duplicate
    assert index.warnings == []


# --- the check finds the same, and through the exporters ------------------------------------------
def _demo():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import demo_level
    finally:
        sys.path.pop(0)
    demo_level.build_demo_level()
    return demo_level


def _demo_findings(demo_level):
    # The demo level carries its rules (a Text datablock the check reads from the scene).
    return findings_of(level_check.check_scene())


def test_colliders_made_on_the_demo_find_what_the_hand_made_proxies_find(addon):
    demo_level = _demo()
    hand_made = _demo_findings(demo_level)
    assert len(hand_made) == 29           # the demo's planted problems
    table = bpy.data.objects["Table"]
    for proxy in [o for o in bpy.data.objects if o.name.startswith("UCX_Table")]:
        bpy.data.objects.remove(proxy)
    made = make(table, shape='PARTS', engine='UNREAL')
    assert [c.name for c in made] == [f"UCX_Table_{k:02d}" for k in range(1, 6)]
    # The plain crates among the props get hull colliders (a cube's hull is the cube).
    crates = [o for o in bpy.data.collections["Props"].objects
              if o.name.startswith("Crate") and not o.modifiers and o.rigid_body is None
              and o.convex_tools.kind == 'AUTO']
    assert len(crates) > 20
    make(*crates, shape='HULL', engine='UNREAL', rename=False)
    index = ProxyIndex()
    assert all(index.parts_of(c) for c in crates) and index.warnings == []
    # The same pairs, kinds and distances; a crate's finding now names its collider as the
    # part that touches.
    made_findings = _demo_findings(demo_level)
    assert [f[:4] for f in made_findings] == [f[:4] for f in hand_made]
    assert {f[5] for f in made_findings if f[2].startswith("Crate")} - {""} <= {
        f"UCX_{c.name}_01" for c in crates}


def _small_level(engine):
    """A table with a crate under it, two stools pushed together, a wall whose collision
    reaches past its look and a lamp in it (for Godot, a -noimp helper across everything):
    colliders made for the table and the wall."""
    top = ((-1.0, -0.5, 0.9), (1.0, 0.5, 1.0))
    legs = [((x, y, 0.0), (x + 0.1, y + 0.1, 0.9)) for x in (-1.0, 0.9) for y in (-0.5, 0.4)]
    table = boxes("Table", [top] + legs)
    boxes("Crate", [((-0.3, -0.3, 0.0), (0.3, 0.3, 0.6))])
    boxes("Stool", [((3, 0, 0), (4, 1, 1))])
    boxes("Stool_B", [((3.8, 0, 0), (4.8, 1, 1))])
    wall = boxes("Wall", [((6, 0, 0), (10, 0.2, 3))])
    boxes("Lamp", [((7, 0.6, 0), (8, 1.6, 1))])
    make(table, shape='PARTS', engine=engine)
    # The wall's collision is a box 1 m deep (its look: 0.2 m).
    select(wall)
    wall.data.vertices.foreach_set("co", np.array(
        [(x, y, z) for x in (6, 10) for y in (0, 1) for z in (0, 3)], dtype=float).ravel())
    wall.data.update()
    make(wall, shape='BOX', engine=engine)
    wall.data.vertices.foreach_set("co", np.array(
        [(x, y, z) for x in (6, 10) for y in (0, 0.2) for z in (0, 3)], dtype=float).ravel())
    wall.data.update()
    if engine == 'GODOT':          # removed by Godot on import: no finding
        boxes("Helper-noimp", [((-5, -5, 0), (12, 5, 3))])
    bpy.context.view_layer.update()


@pytest.mark.parametrize("engine", ['UNREAL', 'GODOT'])
@pytest.mark.parametrize("fmt", ["fbx", "gltf"])
def test_a_level_with_colliders_survives_fbx_and_gltf(addon, tmp_path, engine, fmt):
    _small_level(engine)
    options = {"engine": engine.lower()}
    before = findings_of(level_check.check_scene(**options))
    wall_collider = "UBX_Wall_01" if engine == 'UNREAL' else "Wall-convcolonly"
    assert [(f[0], f[1], f[2]) for f in before] == (
        [(OVERLAP, "Lamp", "Wall"), (OVERLAP, "Stool", "Stool_B")] if engine == 'UNREAL' else
        [(OVERLAP, "Lamp", wall_collider), (OVERLAP, "Stool", "Stool_B")])
    names = sorted(o.name for o in bpy.data.objects)
    path = str(tmp_path / f"level.{'fbx' if fmt == 'fbx' else 'glb'}")
    if fmt == "fbx":
        bpy.ops.export_scene.fbx(filepath=path)
    else:
        bpy.ops.export_scene.gltf(filepath=path)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    convex_tools.register()
    if fmt == "fbx":
        bpy.ops.import_scene.fbx(filepath=path)
    else:
        bpy.ops.import_scene.gltf(filepath=path)
    assert sorted(o.name for o in bpy.data.objects) == names
    after = level_check.check_scene(**options)
    assert [f[:3] for f in findings_of(after)] == [f[:3] for f in before]
    for old, new in zip(before, findings_of(after)):
        assert new[3] == pytest.approx(old[3], abs=FILE_PRECISION)


class _Layout:
    """Stands in for a panel's layout: records labels and operators drawn."""

    def __init__(self, drawn):
        self.drawn = drawn

    def label(self, text="", **_):
        self.drawn.append(text)

    def operator(self, idname, **_):
        self.drawn.append(idname)

    def __getattr__(self, _name):
        return lambda *args, **kwargs: self


def test_the_collision_panel_offers_make_colliders_and_says_what_the_check_does(addon):
    from types import SimpleNamespace

    crate = boxes("Crate", [((0, 0, 0), (1, 1, 1))])
    helper = boxes("Helper-noimp", [((0, 0, 0), (1, 1, 1))])

    def drawn_for(obj):
        drawn = []
        context = SimpleNamespace(scene=bpy.context.scene, active_object=obj)
        colliders.VIEW3D_PT_convex_collision.draw(SimpleNamespace(layout=_Layout(drawn)),
                                                  context)
        return drawn

    drawn = drawn_for(crate)
    assert "object.convex_make_collision" in drawn
    assert "No colliders: checked through its own shape" in drawn
    make(crate)
    assert "Checked through 1 collider: UCX_Crate_01" in drawn_for(crate)
    assert "Collision of 'Crate'" in drawn_for(bpy.data.objects["UCX_Crate_01"])
    assert "Not checked: removed by Godot on import (-noimp)" in drawn_for(helper)
    # In the Object menu's Convex Tools submenu too (F3 finds it by its label).
    from convex_tools import ui

    menu = []
    ui.VIEW3D_MT_convex_tools.draw(SimpleNamespace(layout=_Layout(menu)), bpy.context)
    assert "object.convex_make_collision" in menu


def test_an_object_without_vertices_gets_no_collider_and_the_reason(addon):
    hollow = bpy.data.objects.new("Hollow", bpy.data.meshes.new("Hollow"))
    bpy.context.scene.collection.objects.link(hollow)
    crate = boxes("Crate", [((0, 0, 0), (1, 1, 1))])
    select(hollow, crate)
    assert bpy.ops.object.convex_make_collision() == {'FINISHED'}      # the crate's
    assert [o.name for o in bpy.data.objects if o.get(colliders.OWNER_PROPERTY)] == \
        ["UCX_Crate_01"]
    select(hollow)
    with pytest.raises(RuntimeError, match="No colliders made"):
        bpy.ops.object.convex_make_collision(shape='BOX')
    with pytest.raises(ValueError, match="no vertices"):
        colliders.make_colliders(hollow, "HULL")
