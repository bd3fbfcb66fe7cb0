"""Compound shapes: the public queries answer part by part, as brute force over part pairs does."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convex_tools.core import (Box, Capsule, Compound, Cylinder, Ellipsoid, Hull, Sphere,
                               Transformed, contact_manifold, distance, gjk, intersect,
                               penetration, posed, ray_cast, signed_distance, sweep, translated)
from convex_tools.core import Status
from convex_tools.core.level import OVERLAP, TOO_CLOSE, check_shapes, report_csv, report_json

from geometry_helpers import random_rotation, rigid


# --- scenes with analytic answers ----------------------------------------------------------------
def arch():
    """Two pillars and a lintel: the opening is |x| < 1, 0 <= z < 3 (inner faces at x = ±1,
    the lintel's underside at z = 3)."""
    pillar = Box((0.5, 0.5, 1.5))
    return Compound([translated(pillar, (-1.5, 0, 1.5)), translated(pillar, (1.5, 0, 1.5)),
                     translated(Box((2.0, 0.5, 0.25)), (0, 0, 3.25))],
                    names=["PillarL", "PillarR", "Lintel"])


def u_shape():
    """A U open to +z: floor z in [0, 0.2], walls x in [-1.2, -1] and [1, 1.2] up to z = 2."""
    return Compound([translated(Box((1.2, 1.0, 0.1)), (0, 0, 0.1)),
                     translated(Box((0.1, 1.0, 1.0)), (-1.1, 0, 1.0)),
                     translated(Box((0.1, 1.0, 1.0)), (1.1, 0, 1.0))])


def hull_of(compound):
    points = np.vstack([np.array([p.support(d) for d in np.vstack((np.eye(3), -np.eye(3),
                                                                    np.array(list(_corners()))))])
                        for p in compound.parts])
    return Hull(points)


def _corners():
    for x in (-1, 1):
        for y in (-1, 1):
            for z in (-1, 1):
                yield (x, y, z)


def test_sphere_in_an_arch_opening_is_as_far_as_the_inner_faces():
    ball = translated(Sphere(0.4), (0.2, 0.0, 1.5))
    result = distance(ball, arch())
    # Nearest inner face: the right pillar's at x = 1, from a ball reaching x = 0.6.
    assert result.distance == pytest.approx(0.4)
    assert not result.intersecting
    assert (result.part_a, result.part_b) == (None, 1)
    assert result.point_b == pytest.approx([1.0, 0.0, 1.5])
    assert not intersect(ball, arch())


def test_the_arch_convex_hull_would_report_the_sphere_as_overlapping():
    # Why compounds exist: the hull fills the opening.
    ball = translated(Sphere(0.4), (0.2, 0.0, 1.5))
    assert distance(ball, hull_of(arch())).intersecting


def test_pillar_through_the_arch_opening_overlaps_only_when_wider_than_it():
    fits = translated(Box((0.9, 0.3, 1.4)), (0, 0, 1.0))
    assert penetration(fits, arch()) is None
    assert signed_distance(fits, arch()) == pytest.approx(0.1)
    wide = translated(Box((1.05, 0.3, 1.0)), (0, 0, 1.0))
    contact = penetration(wide, arch())
    # Pushed out of either pillar by 0.05 (each overlaps it by 1.05 - 1).
    assert contact.depth == pytest.approx(0.05)
    assert abs(contact.normal[0]) == pytest.approx(1.0)
    assert contact.part_b in (0, 1)


def test_a_ray_into_a_u_shape_hits_the_inner_wall():
    hit = ray_cast(u_shape(), origin=(0.0, 0.0, 1.0), direction=(1.0, 0.0, 0.0))
    # From the middle of the U along +x: the right wall's inner face at x = 1.
    assert hit.t == pytest.approx(1.0)
    assert hit.point == pytest.approx([1.0, 0.0, 1.0])
    assert hit.normal == pytest.approx([-1.0, 0.0, 0.0])
    assert hit.part == 2


def test_a_ray_from_above_passes_the_opening_and_hits_the_floor():
    hit = ray_cast(u_shape(), origin=(0.3, 0.0, 5.0), direction=(0.0, 0.0, -2.0))
    assert hit.t == pytest.approx(2.4)          # from z = 5 to the floor's top at 0.2, at speed 2
    assert hit.normal == pytest.approx([0.0, 0.0, 1.0]) and hit.part == 0


def test_a_ray_that_misses_every_part_returns_none():
    assert ray_cast(u_shape(), (0.0, 5.0, 1.0), (1.0, 0.0, 0.0)) is None
    assert ray_cast(u_shape(), (0.0, 0.0, 1.0), (1.0, 0.0, 0.0), max_t=0.9) is None


def test_a_sphere_swept_into_the_u_touches_the_nearest_wall_first():
    ball = translated(Sphere(0.25), (-0.5, 0.0, 1.0))
    hit = sweep(ball, u_shape(), translation_a=(3.0, 0.0, 0.0))
    # Its right side starts at x = -0.25 and meets the right wall's face x = 1 after 1.25 of 3.
    assert hit.t == pytest.approx(1.25 / 3.0)
    assert hit.normal == pytest.approx([1.0, 0.0, 0.0])
    assert (hit.part_a, hit.part_b) == (None, 2)


def test_a_sweep_that_starts_overlapping_is_at_time_zero():
    ball = translated(Sphere(0.25), (1.0, 0.0, 1.0))
    assert sweep(ball, u_shape(), (3.0, 0.0, 0.0)).t == 0.0


def test_a_box_on_two_slabs_gets_the_corners_of_its_footprint_over_both():
    floor = Compound([translated(Box((1.0, 2.0, 0.5)), (-1.0, 0, -0.5)),
                      translated(Box((1.0, 2.0, 0.5)), (1.0, 0, -0.5))])
    crate = translated(Box((0.5, 0.5, 0.5)), (0.2, 0.1, 0.45))     # sunk 0.05
    m = contact_manifold(floor, crate)
    assert m.normal == pytest.approx([0.0, 0.0, 1.0])
    assert len(m) == 4
    corners = sorted(map(tuple, np.round(m.points[:, :2], 9)))
    assert corners == [(-0.3, -0.4), (-0.3, 0.6), (0.7, -0.4), (0.7, 0.6)]
    assert m.depths == pytest.approx([0.05] * 4)
    assert {p for p, _ in m.parts} == {0, 1}


def test_a_compound_manifold_says_how_its_deepest_contact_ended():
    floor = Compound([translated(Box((1.0, 2.0, 0.5)), (-1.0, 0, -0.5)),
                      translated(Box((1.0, 2.0, 0.5)), (1.0, 0, -0.5))])
    sunk = translated(Box((0.5, 0.5, 0.5)), (0.2, 0.1, 0.45))      # 0.05 into both slabs
    resting = translated(Box((0.5, 0.5, 0.5)), (0.2, 0.1, 0.5))     # on them, depth 0
    assert contact_manifold(floor, sunk).status is Status.CONVERGED
    assert contact_manifold(floor, resting).status is Status.TOUCHING


def test_deepest_penetration_over_the_parts_names_the_deeper_part():
    # A ball overlapping part 0 by 0.1 and part 1 by 0.3.
    c = Compound([translated(Box((1, 1, 1)), (-1.9, 0, 0)),
                  translated(Box((1, 1, 1)), (0, 1.7, 0))])
    ball = translated(Sphere(1.0), (0.0, 0.0, 0.0))
    contact = penetration(c, ball)
    assert contact.depth == pytest.approx(0.3)
    assert contact.part_a == 1
    assert contact.normal == pytest.approx([0.0, -1.0, 0.0])


# --- compound against compound: brute force over all part pairs ----------------------------------
def random_part(rng, centre_spread=4.0):
    makers = [lambda: Box(rng.uniform(0.2, 0.8, 3)), lambda: Sphere(rng.uniform(0.2, 0.7)),
              lambda: Capsule(rng.uniform(0.1, 0.4), rng.uniform(0.1, 0.6)),
              lambda: Cylinder(rng.uniform(0.2, 0.6), rng.uniform(0.1, 0.6)),
              lambda: Ellipsoid(rng.uniform(0.2, 0.7, 3))]
    shape = makers[rng.integers(len(makers))]()
    return posed(shape, random_rotation(rng), rng.uniform(-centre_spread, centre_spread, 3))


def random_compound(rng, n, offset=(0.0, 0.0, 0.0)):
    return Compound([translated(random_part(rng), offset) for _ in range(n)])


@pytest.mark.parametrize("seed", range(6))
def test_compound_distance_is_the_minimum_over_all_part_pairs(seed):
    rng = np.random.default_rng(seed)
    a = random_compound(rng, 7)
    b = random_compound(rng, 9, offset=(rng.uniform(6, 11), 0, 0))
    brute = [(gjk.distance(p, q).distance, i, j) for i, p in enumerate(a.parts)
             for j, q in enumerate(b.parts)]
    best, i, j = min(brute)
    result = distance(a, b)
    assert result.distance == pytest.approx(best, abs=1e-9)
    assert gjk.distance(a.parts[result.part_a], b.parts[result.part_b]).distance == \
        pytest.approx(best, abs=1e-9)
    # The witness points lie on the parts named.
    assert gjk.distance(a.parts[result.part_a], translated(Sphere(0), result.point_a)).distance \
        == pytest.approx(0.0, abs=1e-7)
    assert gjk.distance(b.parts[result.part_b], translated(Sphere(0), result.point_b)).distance \
        == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_compound_queries_agree_with_brute_force_when_parts_overlap(seed):
    rng = np.random.default_rng(100 + seed)
    a = random_compound(rng, 6)
    b = random_compound(rng, 6, offset=(rng.uniform(2, 5), 0, 0))
    pairs = [(i, j) for i in range(len(a)) for j in range(len(b))]
    touching = [(i, j) for i, j in pairs if gjk.intersect(a.parts[i], b.parts[j])]
    assert intersect(a, b) == bool(touching)
    contact = penetration(a, b)
    if not touching:
        assert contact is None
        return
    from convex_tools.core.penetration import penetration as convex_penetration
    depths = [convex_penetration(a.parts[i], b.parts[j]) for i, j in touching]
    deepest = max(c.depth for c in depths if c is not None)
    assert contact.depth == pytest.approx(deepest, abs=1e-9)
    assert signed_distance(a, b) == pytest.approx(-deepest, abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 6), st.floats(0.0, 12.0))
def test_property_compound_distance_is_the_minimum_over_its_parts(seed, n, shift):
    rng = np.random.default_rng(seed)
    compound = random_compound(rng, n)
    probe = translated(random_part(rng, 1.0), (shift, 0.0, 0.0))
    expected = min(gjk.distance(p, probe).distance for p in compound.parts)
    assert distance(compound, probe).distance == pytest.approx(expected, abs=1e-9)
    assert distance(probe, compound).distance == pytest.approx(expected, abs=1e-9)


# --- contract: symmetry, invariance, witnesses ---------------------------------------------------
def test_swapping_the_arguments_swaps_points_parts_and_the_normal():
    wide = translated(Box((1.05, 0.3, 1.0)), (0.01, 0, 1.0))
    ab, ba = penetration(wide, arch()), penetration(arch(), wide)
    assert ab.depth == pytest.approx(ba.depth)
    assert ab.normal == pytest.approx(-ba.normal)
    assert ab.point_a == pytest.approx(ba.point_b) and ab.point_b == pytest.approx(ba.point_a)
    assert (ab.part_a, ab.part_b) == (ba.part_b, ba.part_a)
    ball = translated(Sphere(0.4), (0.2, 0.0, 1.5))
    d1, d2 = distance(ball, arch()), distance(arch(), ball)
    assert (d1.part_a, d1.part_b) == (d2.part_b, d2.part_a)
    assert d1.point_a == pytest.approx(d2.point_b)


def test_penetration_contract_depth_normal_and_separation(rng):
    # Only one part overlaps, so moving A out of it by depth * normal leaves the two touching.
    ball = translated(Sphere(0.5), (1.0, 0.0, 3.85))      # dips 0.15 into the lintel only
    contact = penetration(ball, arch())
    assert contact.depth == pytest.approx(0.15)
    assert np.linalg.norm(contact.normal) == pytest.approx(1.0)
    assert contact.point_a - contact.point_b == pytest.approx(contact.depth * contact.normal)
    moved = translated(ball, -contact.depth * contact.normal)
    assert signed_distance(moved, arch()) == pytest.approx(0.0, abs=1e-9)


def test_compound_results_do_not_change_under_a_rigid_motion(rng):
    m = rigid(random_rotation(rng), rng.uniform(-5, 5, 3))
    ball = translated(Sphere(0.4), (0.2, 0.0, 1.5))
    before = distance(ball, arch())
    after = distance(Transformed(ball, m), arch().transformed(m))
    assert after.distance == pytest.approx(before.distance, abs=1e-9)
    assert after.point_b == pytest.approx(m[:3, :3] @ before.point_b + m[:3, 3], abs=1e-9)
    assert after.part_b == before.part_b


def test_convex_pairs_report_no_parts():
    a, b = Box((1, 1, 1)), translated(Box((1, 1, 1)), (1.5, 0, 0))
    assert distance(a, b).part_a is None and penetration(a, b).part_b is None
    assert ray_cast(a, (-5, 0, 0), (1, 0, 0)).part is None


# --- edge cases ----------------------------------------------------------------------------------
def test_a_compound_of_one_part_answers_as_the_part():
    from convex_tools.core.penetration import penetration as convex_penetration

    crate = posed(Box((0.3, 0.4, 0.5)), random_rotation(np.random.default_rng(3)), (0.1, 0, 0))
    one = Compound([crate])
    ball, near = translated(Sphere(0.5), (2.0, 0.3, 0.0)), translated(Sphere(0.5), (0.6, 0, 0))
    d, expected = distance(one, ball), gjk.distance(crate, ball)
    assert d.distance == pytest.approx(expected.distance, abs=1e-12)
    assert (d.part_a, d.part_b) == (0, None)
    c, expected = penetration(near, one), convex_penetration(near, crate)
    assert c.depth == pytest.approx(expected.depth, abs=1e-12) and (c.part_a, c.part_b) == \
        (None, 0)
    assert c.normal == pytest.approx(expected.normal, abs=1e-12)
    assert ray_cast(one, (-5, 0.1, 0), (1, 0, 0)).t == \
        pytest.approx(ray_cast(crate, (-5, 0.1, 0), (1, 0, 0)).t, abs=1e-12)
    assert sweep(ball, one, (-3, 0, 0)).t == \
        pytest.approx(sweep(ball, crate, (-3, 0, 0)).t, abs=1e-12)


def test_a_huge_and_a_tiny_part_each_answer_at_their_own_scale():
    # A 20 km block with a 2 mm pebble on it; a 1 mm ball just above the pebble, then on the
    # block beside it.
    ground = Compound([translated(Box((1e4, 1e4, 1e4)), (0, 0, -1e4)),
                       translated(Box((1e-3, 1e-3, 1e-3)), (0, 0, 1e-3))])
    ball = translated(Sphere(1e-3), (0, 0, 3.5e-3))            # 0.5 mm above the pebble
    d = distance(ball, ground)
    assert d.distance == pytest.approx(5e-4, rel=1e-9) and d.part_b == 1
    sunk = penetration(ball, ground.transformed(rigid(translation=(0, 0, 1e-3))))
    # (the pebble's top now at 3 mm: the ball's bottom 2.5 mm is 0.5 mm in)
    assert sunk.depth == pytest.approx(5e-4, rel=1e-9) and sunk.part_b == 1
    beside = translated(Sphere(1e-3), (3.0, 0, 9e-4))           # 0.1 mm into the block
    c = penetration(beside, ground)
    assert c.depth == pytest.approx(1e-4, rel=1e-6) and c.part_b == 0
    assert c.normal == pytest.approx([0, 0, -1], abs=1e-9)
    hit = ray_cast(ground, (0, 0, 1.0), (0, 0, -1))
    assert hit.t == pytest.approx(1.0 - 2e-3, rel=1e-12) and hit.part == 1


def test_a_sweep_grazing_a_parts_edge_is_the_convex_sweep():
    # A ball rolling along x just touches the top edge of the box (at x = -1, z = 1).
    ball, box = translated(Sphere(0.5), (-3.0, 0.0, 1.5)), translated(Box((1, 1, 1)), (0, 0, 0))
    graze = sweep(ball, Compound([box]), (6.0, 0.0, 0.0))
    expected = sweep(ball, box, (6.0, 0.0, 0.0))
    assert graze.t == pytest.approx(expected.t, abs=1e-12)
    assert graze.t == pytest.approx(1.0 / 3.0, abs=1e-6)     # its bottom reaches z = 1 at x = -1
    assert graze.normal == pytest.approx(expected.normal, abs=1e-12)
    assert sweep(translated(ball, (0, 0, 1e-6)), Compound([box]), (6.0, 0.0, 0.0)) is None


def test_a_users_plain_shape_is_a_part_and_meets_compounds():
    class Ball:          # a shape of the user's own: support_xyz only (README)
        def __init__(self, centre, radius):
            self.centre, self.radius = centre, radius

        def support_xyz(self, x, y, z):
            n = math.sqrt(x * x + y * y + z * z) or 1.0
            return tuple(c + self.radius * d / n for c, d in zip(self.centre, (x, y, z)))

    pair = Compound([Ball((-2.0, 0.0, 0.0), 0.5), Ball((2.0, 0.0, 0.0), 0.5)])
    assert distance(pair, translated(Sphere(0.5), (0, 0, 0))).distance == pytest.approx(1.0)
    assert distance(Ball((0.0, 0.0, 0.0), 0.5), pair).distance == pytest.approx(1.0)
    assert penetration(Ball((1.2, 0, 0), 0.5), pair).depth == pytest.approx(0.2)
    assert sweep(Ball((0, 0, 0), 0.5), pair, (2.0, 0, 0)).t == pytest.approx(0.5)


# --- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("parts,message", [
    ([], "parts must not be empty"),
    (None, "parts must be a sequence"),
    ("box", "parts must be a sequence"),
    ([Box((1, 1, 1)), "box"], r"parts\[1\] must be a convex_tools shape"),
    ([Box((1, 1, 1)), Compound([Sphere(1)])], r"parts\[1\] is a Compound, not a convex shape"),
])
def test_bad_parts_are_refused_by_name(parts, message):
    with pytest.raises(ValueError, match=message):
        Compound(parts)


def test_names_must_match_the_parts():
    with pytest.raises(ValueError, match="names has 1 entries for 2 parts"):
        Compound([Sphere(1), Sphere(2)], names=["one"])


def test_a_compound_never_poses_as_a_convex_shape():
    # Given straight to a convex algorithm or composite, it is refused, not hulled.
    with pytest.raises(ValueError, match="convex_tools shape"):
        gjk.distance(arch(), Sphere(1))
    with pytest.raises(ValueError, match="convex_tools shape"):
        Transformed(arch(), np.eye(4))
    assert not hasattr(arch(), "support_xyz")


def test_query_arguments_are_checked_by_name():
    with pytest.raises(ValueError, match="direction must be a non-zero vector"):
        ray_cast(arch(), (0, 0, 0), (0, 0, 0))
    with pytest.raises(ValueError, match="max_t"):
        ray_cast(arch(), (0, 0, 0), (1, 0, 0), max_t=math.nan)
    with pytest.raises(ValueError, match="translation_a"):
        sweep(arch(), Sphere(1), (0, 0, math.inf))
    with pytest.raises(ValueError, match="method"):
        penetration(arch(), Sphere(1), method="guess")
    with pytest.raises(ValueError, match="b must be a convex_tools shape"):
        distance(arch(), "sphere")
    with pytest.raises(ValueError, match="sweep_rotating takes convex shapes"):
        from convex_tools.core import sweep_rotating
        sweep_rotating(arch(), np.eye(4), np.eye(4), Sphere(1))


# --- the level check -----------------------------------------------------------------------------
def test_level_check_leaves_a_pillar_under_an_arch_alone_and_names_the_parts_it_hits():
    shapes = [arch(), translated(Box((0.5, 0.3, 1.0)), (0, 0, 1.0)),
              translated(Box((0.3, 0.3, 0.3)), (1.0, 0.0, 3.7))]
    found = check_shapes(shapes, ["Arch", "Pillar", "Crate"], clearance=0.05)
    # The pillar stands 0.5 from each inner face; the crate sits 0.1 deep on the lintel.
    assert [(f.object_a, f.object_b, f.kind) for f in found] == [("Arch", "Crate", OVERLAP)]
    (f,) = found
    assert f.distance == pytest.approx(-0.1)
    assert (f.part_a, f.part_b) == ("Lintel", None)
    row = report_json(found)
    assert '"part_a": "Lintel"' in row and '"part_b": null' in row
    assert report_csv(found).splitlines()[0].endswith(",part_a,part_b")
    assert report_csv(found).splitlines()[1].endswith(",Lintel,")


def test_level_check_reports_a_clearance_gap_to_a_compound_part():
    shapes = [u_shape(), translated(Sphere(0.2), (0.75, 0.0, 1.0))]
    (f,) = check_shapes(shapes, ["U", "Ball"], clearance=0.1)
    # The ball reaches x = 0.95, 0.05 short of the right wall (part 2).
    assert f.kind == TOO_CLOSE and f.distance == pytest.approx(0.05)
    assert (f.object_a, f.part_a, f.object_b, f.part_b) == ("Ball", None, "U", "part 2")
