"""Findings as a level designer means them, on small levels a designer would build: resting
contact is never "too close", stacks support each other, sunk and floating objects, the support
angle, and the fix each finding carries (applying it resolves the finding)."""

import math

import numpy as np
import pytest

from convex_tools.core import Box, Cylinder, Sphere, posed, translated
from convex_tools.core.level import (FLOATING, OVERLAP, SUNK, TOO_CLOSE, TOUCH_TOLERANCE,
                                     Stats, check_shapes)
from convex_tools.core.rules import EntryInfo, Rules

RULES = """
[defaults]
clearance = 0.05
floating = 0.01

[groups.ground]
names = ["Floor*", "Ramp*", "Wall*"]
static = true

[groups.crates]
names = ["Crate*"]
must_rest = true
embed = 0.02

[groups.balls]
names = ["Ball*"]
must_rest = true

[[pair]]
groups = ["ground", "*"]
clearance = 0.0
"""


def floor(top=0.0, name="Floor"):
    return name, translated(Box((10.0, 10.0, 0.1)), (0.0, 0.0, top - 0.1))


def crate(x=0.0, y=0.0, bottom=0.0, size=1.0, name="Crate"):
    h = size / 2
    return name, translated(Box((h, h, h)), (x, y, bottom + h))


def drum(x=0.0, y=0.0, bottom=0.0, size=1.0, name="Crate"):
    """An upright drum in the crates' group (curved: its pairs go to the single queries)."""
    h = size / 2
    return name, translated(Cylinder(h, h), (x, y, bottom + h))


def check(*items, rules=RULES, **options):
    names = [n for n, _ in items]
    shapes = [s for _, s in items]
    return check_shapes(shapes, names, rules=Rules.from_text(rules), **options)


def kinds(found):
    return sorted((f.kind, f.object_a, f.object_b) for f in found)


# --- resting contact ------------------------------------------------------------------------
def test_a_crate_resting_on_the_floor_is_not_too_close():
    assert check(floor(), crate()) == []


def test_without_rules_resting_on_the_floor_is_still_not_too_close():
    # The implicit rules of --clearance alone: support needs no group.
    found = check_shapes([floor()[1], crate()[1]], ["Floor", "Crate"], clearance=0.05)
    assert found == []


def test_a_stack_supports_itself():
    assert check(floor(), crate(name="Crate.1"), crate(bottom=1.0, name="Crate.2"),
                 crate(bottom=2.0, name="Crate.3")) == []


def test_balls_stacked_on_balls_rest_on_each_other():
    # Ball 2 sits on ball 1 exactly (centres 1 apart): a point contact, found by the lift test.
    found = check(floor(), ("Ball.1", translated(Sphere(0.5), (0, 0, 0.5))),
                  ("Ball.2", translated(Sphere(0.5), (0, 0, 1.5))))
    assert found == []


def test_a_gap_within_the_floating_tolerance_still_rests():
    assert check(floor(), crate(bottom=0.009)) == []


def test_a_gap_beyond_the_floating_tolerance_floats_with_its_drop():
    (f,) = check(floor(), crate(bottom=0.011))
    assert (f.kind, f.object_a, f.object_b) == (FLOATING, "Crate", "Floor")
    assert f.distance == pytest.approx(0.011)
    assert f.move == "Crate"
    np.testing.assert_allclose(f.translation, [0, 0, -0.011], atol=1e-9)
    assert f.rule == "group crates must_rest"


def test_floating_above_a_crate_drops_onto_that_crate():
    (f,) = check(floor(), crate(name="Crate.1"), crate(x=0.2, bottom=1.5, size=0.5,
                                                       name="Crate.2"))
    assert (f.kind, f.object_a, f.object_b) == (FLOATING, "Crate.2", "Crate.1")
    assert f.distance == pytest.approx(0.5)


def test_floating_with_nothing_below_has_no_drop():
    (f,) = check(crate(bottom=3.0))
    assert (f.kind, f.object_b, f.distance, f.move) == (FLOATING, None, None, None)


def test_objects_that_need_not_rest_never_float():
    assert check(floor(), ("Lamp", translated(Sphere(0.2), (0, 0, 3.0)))) == []


def test_the_floating_flag_makes_every_movable_object_rest():
    found = check(floor(), ("Lamp", translated(Sphere(0.2), (0, 0, 3.0))), floating=0.01)
    assert kinds(found) == [(FLOATING, "Lamp", "Floor")]
    assert found[0].rule == "flag --floating"


# --- sunk -----------------------------------------------------------------------------------
@pytest.mark.parametrize("depth,sunk", [(0.02 + TOUCH_TOLERANCE - 1e-6, False),
                                        (0.02 + TOUCH_TOLERANCE + 1e-6, True),
                                        (0.15, True)])
def test_sunk_beyond_the_allowed_embed(depth, sunk):
    found = check(floor(), crate(bottom=-depth))
    if not sunk:
        assert found == []
        return
    (f,) = found
    assert (f.kind, f.object_a, f.object_b) == (SUNK, "Crate", "Floor")
    assert f.depth == pytest.approx(depth)
    # The fix lifts it to its allowed embed.
    np.testing.assert_allclose(f.translation, [0, 0, depth - 0.02], atol=1e-9)
    assert f.rule == "group crates embed"


def test_sunk_into_a_movable_crate_is_an_overlap():
    # Two movable crates stacked into each other: not "sunk" (only static supporters sink).
    (f,) = check(floor(), crate(name="Crate.1"), crate(bottom=0.9, size=0.8, name="Crate.2"))
    assert (f.kind, f.object_a, f.object_b) == (OVERLAP, "Crate.1", "Crate.2")
    assert f.depth == pytest.approx(0.1)
    assert f.move == "Crate.2"                      # the smaller of the two moves
    np.testing.assert_allclose(f.translation, [0, 0, 0.1], atol=1e-9)


def test_pushed_sideways_into_a_wall_is_an_overlap_not_sunk():
    # The crate's side at x = 0.5, the wall's face at x = 0.45.
    wall = ("Wall", translated(Box((0.1, 5.0, 2.0)), (0.55, 0.0, 2.0)))
    (f,) = check(floor(), crate(x=0.0), wall)
    assert (f.kind, f.object_a, f.object_b) == (OVERLAP, "Crate", "Wall")
    assert f.depth == pytest.approx(0.05)
    assert f.move == "Crate"
    np.testing.assert_allclose(f.translation, [-0.05, 0, 0], atol=1e-9)


# --- support angle --------------------------------------------------------------------------
def ramp(slope_degrees):
    """A static slab tilted about y by ``slope_degrees``; its top face passes through the
    origin."""
    a = math.radians(slope_degrees)
    turn = np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])
    return "Ramp", posed(Box((5.0, 5.0, 0.1)), turn, turn @ np.array([0.0, 0.0, -0.1]))


def crate_on_ramp(slope_degrees, size=0.5):
    a = math.radians(slope_degrees)
    turn = np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])
    h = size / 2
    return "Crate", posed(Box((h, h, h)), turn, turn @ np.array([0.0, 0.0, h]))


@pytest.mark.parametrize("slope,rests", [(44.0, True), (46.0, False)])
def test_support_within_the_support_angle(slope, rests):
    found = check(ramp(slope), crate_on_ramp(slope))
    if rests:
        assert found == []
    else:
        (f,) = found
        assert f.kind == FLOATING


# --- too close ------------------------------------------------------------------------------
def test_neighbours_keep_their_clearance_and_the_fix_moves_the_smaller_apart():
    # Crate.1's side at x = 0.5, Crate.2's at 0.53: a gap of 0.03 where 0.05 is needed.
    found = check(floor(), crate(name="Crate.1"), crate(x=0.93, size=0.8, name="Crate.2"),
                  rules=RULES.replace('[groups.crates]\nnames = ["Crate*"]',
                                      '[groups.crates]\nnames = ["Crate*"]\nclearance = 0.05'))
    (f,) = found
    assert (f.kind, f.object_a, f.object_b) == (TOO_CLOSE, "Crate.1", "Crate.2")
    assert f.distance == pytest.approx(0.03) and f.clearance == pytest.approx(0.05)
    assert f.move == "Crate.2"
    np.testing.assert_allclose(f.translation, [0.02, 0, 0], atol=1e-9)
    assert f.rule == "groups crates/crates"


def test_touching_neighbours_are_too_close_and_the_fix_opens_the_whole_gap():
    # Two orbs (not must-rest) touching side by side: no direction between their closest
    # points, so the fix's comes from the contact normal.
    (f,) = check(floor(), ("Orb.1", translated(Sphere(0.5), (0, 0, 0.5))),
                 ("Orb.2", translated(Sphere(0.25), (0.75, 0, 0.5))))
    assert f.kind == TOO_CLOSE and f.distance == pytest.approx(0.0, abs=1e-9)
    assert f.move == "Orb.2"
    np.testing.assert_allclose(f.translation, [0.05, 0, 0], atol=1e-6)


# --- fixes resolve their findings -----------------------------------------------------------
def apply(items, finding):
    out = []
    for name, shape in items:
        if name == finding.move:
            shape = translated(shape, finding.translation)
        out.append((name, shape))
    return out


@pytest.mark.parametrize("items", [
    [floor(), crate(bottom=-0.15)],                                       # sunk
    [floor(), crate(name="Crate.1"), crate(bottom=0.9, size=0.8, name="Crate.2")],  # overlap
    [floor(), crate(bottom=0.4)],                                         # floating
    [floor(), crate(x=0.0), ("Wall", translated(Box((0.1, 5.0, 2.0)), (0.55, 0.0, 2.0)))],
    [floor(), ("Orb.1", translated(Sphere(0.5), (0, 0, 0.5))),
     ("Orb.2", translated(Sphere(0.25), (0.75, 0, 0.5)))],              # too close, touching
])
def test_applying_the_fix_resolves_the_finding(items):
    (f,) = check(*items)
    assert f.move is not None
    assert check(*apply(items, f)) == []


def test_two_static_objects_have_no_fix():
    # Two walls standing on the floor, one 0.1 into the other's side.
    (f,) = check(floor(), ("Wall", translated(Box((0.1, 5.0, 2.0)), (0.0, 0.0, 2.0))),
                 ("Wall.2", translated(Box((0.1, 5.0, 2.0)), (0.1, 0.0, 2.0))))
    assert f.kind == OVERLAP and f.move is None and f.translation is None


def test_an_instance_a_fix_cannot_move_says_what_instances_it():
    infos = [EntryInfo("Floor", "Floor", is_mesh=False, mover="Floor"),
             EntryInfo("Scatter/Rock [instance 3]", "Rock", mover=None, instanced_by="Scatter")]
    found = check_shapes([floor()[1], translated(Sphere(0.3), (0, 0, 0.1))],
                         [i.name for i in infos], rules=Rules.from_text(
                             '[groups.ground]\nnames = ["Floor"]\nstatic = true\n'),
                         infos=infos)
    (f,) = found
    assert f.kind == SUNK and f.move is None and f.translation is None
    assert f.to_dict()["instanced_by"] == "Scatter"


def test_findings_carry_rule_and_severity():
    rules = RULES + '[severity]\nfloating = "warning"\n'
    (f,) = check(floor(), crate(bottom=0.5), rules=rules)
    assert (f.kind, f.severity, f.rule) == (FLOATING, "warning", "group crates must_rest")
    data = f.to_dict()
    assert data["severity"] == "warning" and data["move"] == "Crate"
    assert data["translation"] == pytest.approx([0, 0, -0.5])


def test_findings_do_not_depend_on_jobs_or_batching():
    rng = np.random.default_rng(5)
    items = [floor()]
    for k in range(1600):
        x, y = rng.uniform(-9, 9, 2)
        bottom = float(rng.choice([0.0, 0.005, 0.03, -0.05, 0.4]))
        # (Crates and drums: the drums' pairs, curved, are what the worker processes measure;
        # crates on the floor the batch measures whole.)
        prop = drum if k % 2 else crate
        items.append(prop(x, y, bottom, float(rng.uniform(0.2, 0.6)), name=f"Crate.{k:04d}"))
    one = check(*items)
    stats = Stats()
    assert one == check(*items, jobs=2, stats=stats)  # byte for byte, whatever the jobs
    assert stats.times.get("jobs") == 2               # (worker processes measured pairs)
    # The single queries give the same findings (witness points may differ where a face
    # touches a face: any point of the contact region is a witness).
    single = check(*items, batched=False)
    assert [f.sort_key() for f in one] == [f.sort_key() for f in single]
    for f, g in zip(one, single):
        assert f.distance == pytest.approx(g.distance, abs=1e-9)
        assert (f.move, f.rule, f.severity) == (g.move, g.rule, g.severity)
    assert {f.kind for f in one} >= {SUNK, FLOATING, OVERLAP}


# --- depth against a triangle mesh ----------------------------------------------------------
def stair():
    """A floor (z = 0, x < 1) rising by a 0.88 riser at x = 1 to a tread (x > 1), as one
    triangle mesh (10 m wide)."""
    from convex_tools.core.trimesh import TriangleMesh

    v = np.array([[-3, -5, 0], [1, -5, 0], [1, 5, 0], [-3, 5, 0],          # floor
                  [1, -5, 0.88], [1, 5, 0.88], [4, -5, 0.88], [4, 5, 0.88]], dtype=float)
    t = [(0, 1, 2), (0, 2, 3),            # floor, facing up
         (1, 4, 5), (1, 5, 2),            # riser, facing -x (toward the floor)
         (4, 6, 7), (4, 7, 5)]            # tread, facing up
    return "Stair", TriangleMesh(v, np.array(t))


def test_a_crate_into_a_riser_and_the_floor_is_as_deep_as_its_deepest_intrusion():
    # Issue 18's example: 0.1 into the riser and 0.08 into the floor below it is 0.1 deep,
    # not the 0.88 of the step above it; each touched triangle is listed.
    crate_ = ("Crate", translated(Box((0.25, 0.25, 0.25)), (1.1 - 0.25, 0.0, 0.25 - 0.08)))
    (f,) = check(stair(), crate_)
    assert (f.kind, f.object_a, f.object_b) == (SUNK, "Crate", "Stair")
    assert f.depth == pytest.approx(0.1, abs=1e-9)
    # (A floor triangle the crate only reaches into across the floor's diagonal is left
    # sideways across it: by a hair, per triangle as the definition says.)
    depths = {round(c["depth"], 9) for c in f.contacts}
    assert {0.08, 0.1} <= depths and max(depths) == 0.1
    assert f.part_b.startswith("triangle ")


def test_pushed_into_a_thin_mesh_wall_is_the_push_not_the_wall():
    # A crate 0.14 into a 0.15-thick wall (a closed mesh): 0.14, not the wall's 1.0 height.
    from convex_tools.core.trimesh import TriangleMesh

    lo, hi = np.array([0.0, -5.0, 0.0]), np.array([0.15, 5.0, 1.0])
    corners = np.array([[(hi if k & 4 else lo)[0], (hi if k & 2 else lo)[1],
                         (hi if k & 1 else lo)[2]] for k in range(8)])
    faces = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
             (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    wall = TriangleMesh(corners, np.array(faces))
    found = check(floor(), ("Wall", wall),
                  ("Crate", translated(Box((0.25, 0.25, 0.25)), (-0.25 + 0.14, 0.0, 0.25))))
    (f,) = [f for f in found if "Wall" in (f.object_a, f.object_b)]
    assert f.kind == OVERLAP and f.depth == pytest.approx(0.14, abs=1e-9)
    np.testing.assert_allclose(f.translation, [-0.14, 0, 0], atol=1e-9)
