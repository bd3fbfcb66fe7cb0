"""Level checks on core shapes (no Blender): which pairs are findings, and what they report."""

import csv
import io
import json
import math

import numpy as np
import pytest

from convex_tools.core import Box, Capsule, Cone, Cylinder, Ellipsoid, Sphere, posed, translated
from convex_tools.core.gjk import distance
from convex_tools.core.rules import Rules
from convex_tools.core.level import (OVERLAP, TOO_CLOSE, TOUCH_TOLERANCE, CheckCancelled,
                                     Finding, LevelCheck, Stats, check_shapes, pair_is_ignored,
                                     report_csv, report_json, report_table)

# Rules under which nothing supports anything: no gap counts as resting (floating tolerance 0)
# and only a push exactly up would (support angle 0).
NO_SUPPORT = Rules.from_text("[defaults]\nfloating = 0\nsupport_angle = 0\n")


def unit_box(x=0.0, y=0.0, z=0.0):
    return translated(Box((0.5, 0.5, 0.5)), (x, y, z))


# --- what counts as a finding ---------------------------------------------------------------
def test_overlapping_boxes_are_an_overlap_with_their_depth():
    # Unit cubes 0.8 apart along x overlap by 1 - 0.8 = 0.2.
    (f,) = check_shapes([unit_box(), unit_box(0.8)], ["A", "B"])
    assert (f.object_a, f.object_b, f.kind) == ("A", "B", OVERLAP)
    assert f.distance == pytest.approx(-0.2)
    assert f.depth == pytest.approx(0.2)
    # point_b - point_a is the depth vector: moving A by it leaves the cubes touching.
    assert np.linalg.norm(f.point_b - f.point_a) == pytest.approx(0.2)
    assert (f.point_b - f.point_a)[0] == pytest.approx(-0.2)


def test_spheres_overlap_by_radii_minus_centre_distance():
    # Radii 1 and 0.5, centres 1.2 apart: depth 1.5 - 1.2 = 0.3.
    (f,) = check_shapes([Sphere(1.0), translated(Sphere(0.5), (0, 1.2, 0))], ["big", "small"])
    assert f.kind == OVERLAP
    assert f.distance == pytest.approx(-0.3, abs=1e-9)


def test_boxes_resting_face_to_face_are_not_an_overlap():
    assert check_shapes([unit_box(), unit_box(1.0)], ["A", "B"]) == []


def test_overlap_within_touch_tolerance_is_touching():
    shapes = [unit_box(), unit_box(1.0 - 0.5 * TOUCH_TOLERANCE)]
    assert check_shapes(shapes, ["A", "B"]) == []


def test_overlap_beyond_touch_tolerance_is_reported():
    shapes = [unit_box(), unit_box(1.0 - 3 * TOUCH_TOLERANCE)]
    (f,) = check_shapes(shapes, ["A", "B"])
    assert f.kind == OVERLAP and f.depth == pytest.approx(3 * TOUCH_TOLERANCE)


def test_touch_tolerance_is_an_option():
    shapes = [unit_box(), unit_box(0.95)]  # 0.05 deep
    assert check_shapes(shapes, ["A", "B"], touch_tolerance=0.1) == []
    assert len(check_shapes(shapes, ["A", "B"], touch_tolerance=0.01)) == 1


def test_gap_below_clearance_is_too_close_with_closest_points():
    # Unit cubes with a 0.05 gap, clearance 0.1.
    (f,) = check_shapes([unit_box(), unit_box(1.05)], ["A", "B"], clearance=0.1)
    assert f.kind == TOO_CLOSE
    assert f.distance == pytest.approx(0.05)
    assert f.clearance == 0.1
    assert f.point_a[0] == pytest.approx(0.5) and f.point_b[0] == pytest.approx(0.55)


def test_gap_at_or_above_clearance_is_fine():
    assert check_shapes([unit_box(), unit_box(1.2)], ["A", "B"], clearance=0.1) == []


def test_touching_pair_is_too_close_when_a_clearance_is_asked():
    (f,) = check_shapes([unit_box(), unit_box(1.0)], ["A", "B"], clearance=0.1)
    assert f.kind == TOO_CLOSE and abs(f.distance) <= TOUCH_TOLERANCE


def test_without_clearance_separated_pairs_are_never_findings():
    assert check_shapes([unit_box(), unit_box(1.0001)], ["A", "B"]) == []


def test_far_apart_boxes_never_reach_the_narrow_phase():
    stats = Stats()
    check_shapes([unit_box(), unit_box(5.0)], ["A", "B"], clearance=1.0, stats=stats)
    assert stats.candidates == 0 and stats.narrow == 0


def test_aabb_gap_culls_pairs_whose_boxes_are_farther_than_the_clearance():
    # Boxes 1.5 apart diagonally in x and y: their fattened boxes (0.6 each way) overlap, but
    # the gap between the boxes is sqrt(0.5² + 0.5²) ≈ 0.71 > 0.6.
    stats = Stats()
    found = check_shapes([unit_box(), unit_box(1.5, 1.5)], ["A", "B"], clearance=0.6, stats=stats)
    assert found == [] and stats.candidates == 1 and stats.culled == 1 and stats.narrow == 0


# --- per-object clearance -------------------------------------------------------------------
def test_pair_needs_the_larger_of_its_two_clearances():
    shapes = [unit_box(), unit_box(1.3), unit_box(2.6)]  # gaps of 0.3 between A-B and B-C
    # B needs 0.5 around it: both of its neighbours are too close; A and C need nothing.
    found = check_shapes(shapes, ["A", "B", "C"], clearances=[None, 0.5, None])
    assert [(f.object_a, f.object_b, f.clearance) for f in found] == [("A", "B", 0.5),
                                                                       ("B", "C", 0.5)]


def test_clearances_by_name_override_the_default():
    shapes = [unit_box(), unit_box(1.3), unit_box(2.6)]
    found = check_shapes(shapes, ["A", "B", "C"], clearance=0.5, clearances={"B": 0.0, "C": 0.0})
    # A still needs 0.5, so A-B (gap 0.3) is too close; B-C need nothing.
    assert [(f.object_a, f.object_b) for f in found] == [("A", "B")]


def test_clearances_must_match_the_shapes():
    with pytest.raises(ValueError, match="clearances"):
        check_shapes([unit_box(), unit_box(3)], ["A", "B"], clearances=[0.1])


def test_negative_clearance_is_rejected():
    with pytest.raises(ValueError, match="clearance"):
        check_shapes([unit_box()], ["A"], clearance=-1.0)


def test_duplicate_names_are_rejected():
    with pytest.raises(ValueError, match="unique"):
        check_shapes([unit_box(), unit_box(5)], ["A", "A"])


# --- ignoring pairs -------------------------------------------------------------------------
def test_ignored_pairs_match_patterns_in_either_order():
    shapes = [unit_box(), unit_box(0.5), unit_box(1.0, 0.5)]
    names = ["Floor", "Crate.001", "Crate.002"]
    found = check_shapes(shapes, names, ignore_pairs=[("Crate*", "Floor")])
    assert [(f.object_a, f.object_b) for f in found] == [("Crate.001", "Crate.002")]


def test_ignored_pairs_can_be_written_as_one_string():
    assert pair_is_ignored("Floor", "Crate.7", ["Floor*:Crate.*"])
    assert pair_is_ignored("Crate.7", "Floor", ["Floor*:Crate.*"])
    assert not pair_is_ignored("Crate.7", "Crate.8", ["Floor*:Crate.*"])


def test_malformed_ignored_pair_is_rejected():
    with pytest.raises(ValueError, match="two name patterns"):
        check_shapes([unit_box()], ["A"], ignore_pairs=["Floor"])


# --- reporting ------------------------------------------------------------------------------
def test_findings_are_sorted_by_kind_then_names_and_each_pair_is_reported_once():
    shapes = [unit_box(5.0), unit_box(0.0), unit_box(0.5), unit_box(5.5), unit_box(1.55)]
    names = ["z", "m", "b", "a", "k"]
    found = check_shapes(shapes, names, clearance=0.1)
    keys = [(f.kind, f.object_a, f.object_b) for f in found]
    assert keys == [(OVERLAP, "a", "z"), (OVERLAP, "b", "m"), (TOO_CLOSE, "b", "k")]


def test_object_a_is_the_name_that_sorts_first_and_points_follow_it():
    (f,) = check_shapes([unit_box(0.8), unit_box()], ["Zeta", "Alpha"])
    assert (f.object_a, f.object_b) == ("Alpha", "Zeta")
    # Alpha is the cube at the origin: its witness point is on its +x face region.
    assert f.point_a[0] <= 0.5 + 1e-9 and f.point_b[0] >= 0.3 - 1e-9


def test_same_level_twice_gives_identical_reports():
    rng = np.random.default_rng(3)
    shapes, names = random_level(rng, 80)
    first = check_shapes(shapes, names, clearance=0.2)
    second = check_shapes(list(reversed(shapes)), list(reversed(names)), clearance=0.2)
    assert report_json(first) == report_json(second)
    assert report_csv(first) == report_csv(second)


def test_progress_reports_every_chunk_up_to_the_total():
    calls = []
    shapes, names = random_level(np.random.default_rng(1), 60)
    check_shapes(shapes, names, clearance=0.3, progress=lambda d, t: calls.append((d, t)))
    assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1]
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_cancel_stops_the_check_and_keeps_what_was_found():
    # A row of overlapping upright drums: curved overlaps, which the batch hands to the single
    # queries, measured step by step (a row of cubes is measured by the batch in one go).
    shapes = [translated(Cylinder(0.5, 0.5), (0.8 * k, 0.0, 0.0)) for k in range(600)]
    names = [f"C{k:03d}" for k in range(600)]
    with pytest.raises(CheckCancelled) as info:
        check_shapes(shapes, names, should_cancel=lambda: True)
    assert 0 < len(info.value.findings) < 599


def test_level_check_runs_in_steps():
    shapes = [unit_box(0.8 * k) for k in range(10)]
    check = LevelCheck(shapes, [f"C{k}" for k in range(10)])
    assert check.total == 9
    assert not check.step(4) and check.done == 4
    assert check.step(100) and check.done == 9
    assert len(check.findings) == 9


def test_json_report_round_trips():
    found = check_shapes([unit_box(), unit_box(0.8)], ["A", "B"])
    data = json.loads(report_json(found, file="level.blend"))
    assert data["file"] == "level.blend"
    assert data["counts"] == {OVERLAP: 1, "sunk": 0, TOO_CLOSE: 0, "floating": 0}
    (row,) = data["findings"]
    assert row["object_a"] == "A" and row["distance"] == pytest.approx(-0.2)
    assert len(row["point_a"]) == 3


def test_csv_report_has_one_row_per_finding():
    found = check_shapes([unit_box(), unit_box(0.8), unit_box(1.85)], ["A", "B", "C"],
                         clearance=0.1)
    rows = list(csv.DictReader(io.StringIO(report_csv(found))))
    assert [(r["kind"], r["object_a"], r["object_b"]) for r in rows] == [
        (OVERLAP, "A", "B"), (TOO_CLOSE, "B", "C")]
    assert float(rows[1]["distance"]) == pytest.approx(0.05)


def test_table_names_each_pair():
    found = check_shapes([unit_box(), unit_box(0.8)], ["Crate", "Barrel"])
    text = report_table(found)
    assert "Barrel" in text and "Crate" in text and "depth 0.2000" in text
    assert "No findings" in report_table([])


def test_table_names_the_parts_of_concave_objects():
    # A crate 0.2 into the second of two slabs making one compound.
    from convex_tools.core import Compound

    slabs = Compound([unit_box(), unit_box(3.0)], names=["Left", "Right"])
    (f,) = check_shapes([slabs, unit_box(3.8)], ["Wall", "Crate"])
    row = report_table([f]).splitlines()[-1]
    assert row.split()[:3] == [OVERLAP, "Crate", "Wall"] and "Wall [Right]" in row


def test_finding_equality_compares_values():
    a = Finding("A", "B", OVERLAP, -0.1, np.zeros(3), np.ones(3))
    b = Finding("A", "B", OVERLAP, -0.1, np.zeros(3), np.ones(3))
    assert a == b and a != Finding("A", "B", OVERLAP, -0.2, np.zeros(3), np.ones(3))


# --- exactly the brute-force pairs ----------------------------------------------------------
def random_rotation(rng):
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def random_level(rng, n, extent=None):
    """``n`` shapes of every kind, randomly posed and scaled, at a density that gives findings."""
    extent = extent or 1.6 * n ** (1 / 3)
    makers = [lambda: Box(rng.uniform(0.2, 0.8, 3)),
              lambda: Sphere(rng.uniform(0.2, 0.7)),
              lambda: Capsule(rng.uniform(0.1, 0.4), rng.uniform(0.1, 0.5)),
              lambda: Cylinder(rng.uniform(0.2, 0.6), rng.uniform(0.1, 0.6)),
              lambda: Cone(rng.uniform(0.2, 0.6), rng.uniform(0.2, 0.6)),
              lambda: Ellipsoid(rng.uniform(0.2, 0.7, 3))]
    shapes = []
    for k in range(n):
        shape = makers[k % len(makers)]()
        scale = rng.uniform(0.6, 1.6, 3) if k % 3 == 0 else None
        shapes.append(posed(shape, random_rotation(rng), rng.uniform(0, extent, 3), scale))
    return shapes, [f"obj{k:03d}" for k in range(n)]


def brute_force_signed(a, b):
    r = distance(a, b)
    if not r.intersecting:
        return r.distance
    from convex_tools.core.penetration import penetration
    c = penetration(a, b)
    return 0.0 if c is None else -c.depth


@pytest.mark.parametrize("seed,clearance", [(0, 0.0), (1, 0.15), (2, 0.4), (3, 0.0)])
def test_findings_are_exactly_the_pairs_below_the_clearance(seed, clearance):
    rng = np.random.default_rng(seed)
    shapes, names = random_level(rng, 45)
    # Without support (no contact counts as resting), every pair is judged by its distance.
    found = {(f.object_a, f.object_b): f
             for f in check_shapes(shapes, names, clearance, rules=NO_SUPPORT)}
    assert found, "the random level should have findings"
    margin = 1e-6  # pairs this close to the threshold could go either way
    for i in range(len(shapes)):
        for j in range(i + 1, len(shapes)):
            signed = brute_force_signed(shapes[i], shapes[j])
            finding = found.get((names[i], names[j]))
            below = signed < -TOUCH_TOLERANCE or (clearance > 0 and signed < clearance)
            if abs(signed - clearance) < margin or abs(signed + TOUCH_TOLERANCE) < margin:
                continue
            assert (finding is not None) == below, (names[i], names[j], signed)
            if finding is not None:
                assert finding.distance == pytest.approx(signed, abs=1e-7)
                assert finding.kind == (OVERLAP if signed < -TOUCH_TOLERANCE else TOO_CLOSE)


def test_sphere_level_matches_the_analytic_distances():
    # Spheres have a closed-form signed distance: |c1 - c2| - r1 - r2.
    rng = np.random.default_rng(7)
    n = 120
    centres = rng.uniform(0, 8, (n, 3))
    radii = rng.uniform(0.2, 0.8, n)
    shapes = [translated(Sphere(r), c) for r, c in zip(radii, centres)]
    names = [f"s{k:03d}" for k in range(n)]
    clearance = 0.25
    found = {(f.object_a, f.object_b): f.distance
             for f in check_shapes(shapes, names, clearance, rules=NO_SUPPORT)}
    expected = {}
    for i in range(n):
        for j in range(i + 1, n):
            s = float(np.linalg.norm(centres[i] - centres[j]) - radii[i] - radii[j])
            if s < clearance:
                expected[(names[i], names[j])] = s
    assert found.keys() == expected.keys()
    for key, s in expected.items():
        assert found[key] == pytest.approx(s, abs=1e-9)
