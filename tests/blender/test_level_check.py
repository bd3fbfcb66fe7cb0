"""check_scene on Blender objects: which pairs it reports, with which options, and how."""

import json

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from bpy_helpers import cube  # noqa: E402
from convex_tools import level_check  # noqa: E402
from convex_tools.core.level import (OVERLAP, TOO_CLOSE, TOUCH_TOLERANCE,  # noqa: E402
                                     CheckCancelled, Stats, report_json)


@pytest.fixture
def empty_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    yield bpy.context.scene


def pairs(findings):
    return [(f.kind, f.object_a, f.object_b) for f in findings]


def test_overlapping_cubes_are_reported_with_their_depth(empty_scene):
    cube("A", (0, 0, 0))
    cube("B", (0.7, 0, 0))  # 1 - 0.7 = 0.3 deep along x
    (f,) = level_check.check_scene()
    assert (f.kind, f.object_a, f.object_b) == (OVERLAP, "A", "B")
    assert f.distance == pytest.approx(-0.3, abs=1e-5)
    assert np.linalg.norm(f.point_b - f.point_a) == pytest.approx(0.3, abs=1e-5)


def test_scaled_and_rotated_objects_use_their_world_shape(empty_scene):
    # B is 3 m long along x after scaling, then turned 90° about z: it reaches y = 1.5, and A
    # (from y = 1.3) overlaps it by 0.2. Unrotated, B would end at y = 0.5, far from A.
    cube("A", (0, 1.8, 0))
    cube("B", (0, 0, 0), scale=(3, 1, 1), rotation=(0, 0, np.pi / 2))
    (f,) = level_check.check_scene()
    assert f.kind == OVERLAP and f.distance == pytest.approx(-0.2, abs=1e-5)


def test_resting_cubes_touch_without_overlapping(empty_scene):
    cube("Bottom", (0, 0, 0))
    cube("Top", (0, 0, 1.0))
    assert level_check.check_scene() == []


def test_clearance_reports_pairs_closer_than_it(empty_scene):
    cube("A", (0, 0, 0))
    cube("B", (1.03, 0, 0))  # a 0.03 gap
    cube("C", (0, 3, 0))
    (f,) = level_check.check_scene(clearance=0.05)
    assert (f.kind, f.object_a, f.object_b) == (TOO_CLOSE, "A", "B")
    assert f.distance == pytest.approx(0.03, abs=1e-5)
    assert level_check.check_scene(clearance=0.02) == []


def test_only_the_given_objects_are_checked(empty_scene):
    a, b = cube("A", (0, 0, 0)), cube("B", (0.5, 0, 0))
    cube("C", (0.5, 0.5, 0))
    assert pairs(level_check.check_scene([a, b])) == [(OVERLAP, "A", "B")]
    assert pairs(level_check.check_scene(["A", "C"])) == [(OVERLAP, "A", "C")]


def test_collection_restricts_the_check(empty_scene):
    props = bpy.data.collections.new("Props")
    empty_scene.collection.children.link(props)
    cube("A", (0, 0, 0), collection=props)
    cube("B", (0.5, 0, 0), collection=props)
    cube("Outside", (0.2, 0, 0))
    assert pairs(level_check.check_scene(collection="Props")) == [(OVERLAP, "A", "B")]
    assert pairs(level_check.check_scene(collection=props)) == [(OVERLAP, "A", "B")]


def test_ignored_collection_objects_and_patterns_are_left_out(empty_scene):
    ground = bpy.data.collections.new("Ground")
    empty_scene.collection.children.link(ground)
    cube("Floor", (0, 0, -0.4), scale=(10, 10, 1), collection=ground)
    cube("Crate", (0, 0, 0.3))
    cube("Wall.001", (0.6, 0, 0.3))
    found = level_check.check_scene(ignore=["Ground", "Wall.*"])
    assert found == []
    assert pairs(level_check.check_scene(ignore=[ground])) == [(OVERLAP, "Crate", "Wall.001")]


def test_ignored_pairs_match_name_patterns(empty_scene):
    cube("Lamp", (0, 0, 0))
    cube("Pillar", (0.5, 0, 0))
    cube("Crate", (0, 0.6, 0))
    found = level_check.check_scene(ignore_pairs=[("Pillar*", "Lamp*")])
    assert pairs(found) == [(OVERLAP, "Crate", "Lamp"), (OVERLAP, "Crate", "Pillar")]
    assert pairs(level_check.check_scene(ignore_pairs=["Lamp:Pillar", "Crate:*"])) == []


def test_custom_property_gives_an_object_its_own_clearance(empty_scene):
    door = cube("Door", (0, 0, 0))
    door[level_check.CLEARANCE_PROPERTY] = 0.5
    cube("Crate", (1.3, 0, 0))   # 0.3 from the door
    cube("Barrel", (0, 3, 0))
    cube("Keg", (1.3, 3, 0))     # 0.3 from the barrel: fine without a clearance
    (f,) = level_check.check_scene()
    assert (f.kind, f.object_a, f.object_b, f.clearance) == (TOO_CLOSE, "Crate", "Door", 0.5)


def test_clearances_argument_overrides_by_name_or_pattern(empty_scene):
    door = cube("Door", (0, 0, 0))
    door[level_check.CLEARANCE_PROPERTY] = 0.5
    cube("Crate", (1.3, 0, 0))
    assert level_check.check_scene(clearances={"Door": 0.1}) == []
    (f,) = level_check.check_scene(clearances={"Cr*": 0.4, "Door": 0.0})
    assert f.clearance == 0.4


def test_malformed_custom_clearance_leaves_that_object_unchecked_with_the_reason(empty_scene):
    # Issue 19: one object's bad property no longer fails the whole check; that object is left
    # out (its overlap with C is not reported) and listed with the reason.
    cube("A", (0, 0, 0))["convex_clearance"] = "wide"
    cube("B", (3, 0, 0))
    cube("C", (0.5, 0, 0))
    cube("D", (3.5, 0, 0))
    run = level_check.LevelRun(None)
    found = run.run()
    assert [(f.kind, f.object_a, f.object_b) for f in found] == [(OVERLAP, "B", "D")]
    assert run.unchecked == [("A", "A: custom property convex_clearance must be a number, "
                                   "got 'wide'")]
    assert run.stats.objects == 3


def test_touch_tolerance_separates_touching_from_overlapping(empty_scene):
    cube("A", (0, 0, 0))
    cube("B", (1.0 - 0.5 * TOUCH_TOLERANCE, 0, 0))
    assert level_check.check_scene() == []
    assert len(level_check.check_scene(touch_tolerance=TOUCH_TOLERANCE / 10)) == 1


def test_modifiers_count_through_the_evaluated_mesh(empty_scene):
    # An array of 3 cubes reaches x = 2.5; a cube at x = 2.8 overlaps only the array's end.
    bar = cube("Bar", (0, 0, 0))
    bar.modifiers.new("Array", 'ARRAY').count = 3
    cube("Crate", (2.8, 0, 0))
    (f,) = level_check.check_scene()
    assert (f.object_a, f.object_b) == ("Bar", "Crate")
    assert f.distance == pytest.approx(-0.2, abs=1e-4)


def test_objects_without_geometry_are_skipped(empty_scene):
    cube("A", (0, 0, 0))
    empty = bpy.data.objects.new("Empty", None)
    empty_scene.collection.objects.link(empty)
    light = bpy.data.objects.new("Light", bpy.data.lights.new("Light", 'POINT'))
    empty_scene.collection.objects.link(light)
    stats = Stats()
    assert level_check.check_scene(stats=stats) == []
    assert stats.objects == 1


def test_same_scene_twice_gives_identical_reports(empty_scene):
    rng = np.random.default_rng(5)
    for k in range(60):
        cube(f"C{k:02d}", rng.uniform(0, 5, 3), rng.uniform(0.5, 1.5, 3), rng.uniform(0, 3, 3))
    first = report_json(level_check.check_scene(clearance=0.1))
    second = report_json(level_check.check_scene(clearance=0.1))
    assert first == second
    assert json.loads(first)["findings"]


def test_progress_runs_to_one_and_cancel_raises(empty_scene):
    for k in range(40):
        cube(f"C{k:02d}", (0.8 * k, 0, 0))
    seen = []
    level_check.check_scene(progress=lambda fraction, phase: seen.append(fraction))
    assert seen[-1] == 1.0 and seen == sorted(seen)
    with pytest.raises(CheckCancelled):
        level_check.check_scene(should_cancel=lambda: True)


def test_findings_match_brute_force_on_a_random_level(empty_scene):
    from convex_tools.api import shape_from_object
    from convex_tools.core.gjk import distance
    from convex_tools.core.penetration import penetration

    rng = np.random.default_rng(11)
    objs = [cube(f"C{k:02d}", rng.uniform(0, 6, 3), rng.uniform(0.4, 1.4, 3),
                 rng.uniform(0, 3, 3)) for k in range(45)]
    clearance = 0.2
    found = {(f.object_a, f.object_b): f for f in level_check.check_scene(clearance=clearance)}
    depsgraph = bpy.context.evaluated_depsgraph_get()
    shapes = {o.name: shape_from_object(o, depsgraph=depsgraph) for o in objs}
    names = sorted(shapes)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            r = distance(shapes[a], shapes[b])
            if r.intersecting:
                c = penetration(shapes[a], shapes[b])
                signed = 0.0 if c is None else -c.depth
            else:
                signed = r.distance
            if abs(signed - clearance) < 1e-6 or abs(signed + TOUCH_TOLERANCE) < 1e-6:
                continue
            assert ((a, b) in found) == (signed < clearance), (a, b, signed)
            if (a, b) in found:
                assert found[(a, b)].distance == pytest.approx(signed, abs=1e-7)


def test_check_scene_is_part_of_the_api(empty_scene):
    from convex_tools import api

    cube("A", (0, 0, 0))
    cube("B", (0.9, 0, 0))
    (f,) = api.check_scene(None, 0.0, ignore=["Nothing"])
    assert (f.object_a, f.object_b, f.kind) == ("A", "B", OVERLAP)


def test_shared_shapes_give_the_same_findings_as_one_by_one(empty_scene):
    # Linked duplicates at random poses and scales, some with a modifier stack, some rigid
    # bodies (fitted primitives move only rigidly: they are shared only at equal scales), some
    # parented: sharing shapes between instances must not change a single number.
    rng = np.random.default_rng(21)
    objs = []
    for k in range(80):
        scale = (1.0, 1.0, 1.0) if k % 4 == 0 else tuple(rng.uniform(0.5, 1.5, 3))
        obj = cube(f"C{k:02d}", rng.uniform(0, 7, 3), scale, rng.uniform(0, 3, 3))
        if k % 3 == 0:
            bevel = obj.modifiers.new("Bevel", 'BEVEL')
            bevel.width = 0.1
            obj.modifiers.new("Array", 'ARRAY').count = 2
        objs.append(obj)
    rigid = [o for k, o in enumerate(objs) if k % 5 == 1]
    with bpy.context.temp_override(active_object=rigid[0], object=rigid[0],
                                   selected_objects=rigid, selected_editable_objects=rigid):
        bpy.ops.rigidbody.objects_add(type='PASSIVE')
    for k, obj in enumerate(rigid):
        obj.rigid_body.collision_shape = ('BOX', 'SPHERE', 'CAPSULE', 'CONVEX_HULL')[k % 4]
        # A hull with a collision margin: a sphere added in world units, shared only at equal
        # scales (three of these have scale 1).
        obj.rigid_body.use_margin = k % 4 == 3
        obj.rigid_body.collision_margin = 0.05
    objs[7].parent = objs[8]
    bpy.context.view_layer.update()

    def run(share):
        level_run = level_check.LevelRun(clearance=0.15, share_shapes=share)
        return level_run.run(), level_run.shape_cache

    shared, cache = run(True)
    alone, _ = run(False)
    assert cache.reused > 20  # the sharing did happen
    assert len(shared) > 10
    assert [(f.kind, f.object_a, f.object_b) for f in shared] == \
        [(f.kind, f.object_a, f.object_b) for f in alone]
    for a, b in zip(shared, alone):
        assert a.distance == pytest.approx(b.distance, abs=1e-6)


def test_excluded_collections_are_not_part_of_the_level(empty_scene):
    wip = bpy.data.collections.new("WIP")
    empty_scene.collection.children.link(wip)
    cube("A", (0, 0, 0))
    cube("Draft", (0.5, 0, 0), collection=wip)
    assert len(level_check.check_scene()) == 1
    bpy.context.view_layer.layer_collection.children["WIP"].exclude = True
    assert level_check.check_scene() == []


def test_a_large_level_is_batched_and_the_same_for_any_jobs(empty_scene):
    """Past MIN_PAIRS_FOR_BATCH pairs the batch screens and measures most pairs; the report is
    the same byte for byte in one process and in two, and has the single queries' findings."""
    from convex_tools.core.level import MIN_PAIRS_FOR_BATCH, Stats

    rng = np.random.default_rng(11)
    side = 26.0
    for k in range(1100):
        cube(f"C{k:04d}", (*rng.uniform(0, side, 2), 0.5), rng.uniform(0.4, 1.2, 3),
             (0.0, 0.0, rng.uniform(0, 3)))
    stats = Stats()
    one = level_check.check_scene(clearance=0.1, stats=stats, jobs=1)
    assert stats.narrow >= MIN_PAIRS_FOR_BATCH
    assert stats.batch_clear and stats.batch_depths and stats.single < stats.narrow / 2
    two = level_check.check_scene(clearance=0.1, jobs=2)
    assert report_json(one) == report_json(two)
    bpy_run = level_check.LevelRun(None, 0.1, batched=False)
    single = bpy_run.run()
    assert [(f.object_a, f.object_b, f.kind) for f in single] == \
        [(f.object_a, f.object_b, f.kind) for f in one]
    assert max(abs(f.distance - g.distance) for f, g in zip(single, one)) <= 1e-9


def test_shared_shapes_follow_each_objects_convex_settings(empty_scene, registered):
    # Linked duplicates of one sphere mesh: one checked as a box by its Shape setting, one with
    # a margin. Given the first one's hull, they would be measured as the bare sphere.
    bpy.ops.mesh.primitive_uv_sphere_add(location=(0, 0, 0))
    ball = bpy.context.object
    boxed, padded = ball.copy(), ball.copy()
    for obj, x in ((boxed, 5.0), (padded, 10.0)):
        empty_scene.collection.objects.link(obj)
        obj.location = (x, 0, 0)
    boxed.convex_tools.kind = 'BOX'
    padded.convex_tools.margin = 0.25
    depsgraph = bpy.context.evaluated_depsgraph_get()
    cache = level_check.SharedShapes()
    shapes = [cache.shape(o, depsgraph) for o in (ball, boxed, padded)]
    shapes = [s.make() if hasattr(s, "make") else s for s in shapes]
    diagonal = np.array([1.0, 1.0, 1.0])
    assert np.linalg.norm(shapes[0].support(diagonal)) == pytest.approx(1.0, abs=0.05)
    assert shapes[1].support(diagonal) == pytest.approx([6.0, 1.0, 1.0], abs=1e-5)  # a corner
    assert shapes[2].support(np.array([1.0, 0, 0]))[0] == pytest.approx(11.25, abs=1e-5)
    # A duplicate at its defaults again shares the first shape.
    plain = ball.copy()
    empty_scene.collection.objects.link(plain)
    reused = cache.reused
    cache.shape(plain, bpy.context.evaluated_depsgraph_get())
    assert cache.reused == reused + 1
