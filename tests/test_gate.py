"""The gate (no Blender): severities, --fail-on, the baseline's keys, matching, expiry,
tolerance, fixed entries, pruning, --strict, and the exit code."""

import datetime
import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from convex_tools.core import Box, translated
from convex_tools.core import gate
from convex_tools.core import report as rp
from convex_tools.core.level import Finding, check_shapes
from report_checks import valid_report

TODAY = datetime.date(2026, 6, 1)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def box(x=0.0, half=0.5):
    return translated(Box((half, half, half)), (x, 0.0, 0.0))


def level(overlap_at=0.8, keg_at=1.85):
    """Crate overlaps Barrel by 1.8 - overlap_at ... (unit boxes: depth 1 - overlap_at); Keg is
    keg_at - overlap_at - 1 from Barrel; clearance 0.1."""
    return check_shapes([box(), box(overlap_at), box(keg_at)], ["Crate", "Barrel", "Keg"],
                        clearance=0.1)


def report(*files, status=rp.CHECKED):
    """A report of (file, findings) pairs."""
    return rp.new_report([rp.file_section(name, findings=found, status=status)
                          for name, found in files], options={}, version="0.1.0")


def statuses(r):
    return [(s["file"], f["kind"], f["status"], f["gating"]) for s, f in rp.all_findings(r)]


# --- severities -------------------------------------------------------------------------------
def test_errors_fail_the_gate_and_a_clean_run_passes():
    assert gate.apply(report(("a.blend", level()))) == gate.EXIT_FINDINGS
    assert gate.apply(report(("a.blend", []))) == gate.EXIT_CLEAN


def test_warnings_pass_unless_fail_on_warning():
    found = [Finding("Crate", "Floor", "floating", 0.3, None, None, severity="warning")]
    assert gate.apply(report(("a.blend", found))) == gate.EXIT_CLEAN
    r = report(("a.blend", found))
    assert gate.apply(r, fail_on="warning") == gate.EXIT_FINDINGS
    assert r["gate"]["gating"] == 1 and r["gate"]["fail_on"] == "warning"


def test_a_file_that_could_not_be_checked_is_exit_2_whatever_the_others_found():
    r = rp.new_report([rp.file_section("a.blend", findings=level()),
                       rp.file_section("b.blend", status=rp.FAILED, error="b.blend: no such "
                                                                          "file")],
                      options={}, version="0.1.0")
    assert gate.apply(r) == gate.EXIT_ERROR
    assert r["gate"]["errors"] == ["b.blend: b.blend: no such file"]
    valid_report(rp.to_json(r))


def test_an_unknown_fail_on_is_a_value_error():
    with pytest.raises(ValueError, match="fail_on"):
        gate.apply(report(), fail_on="info")


# --- the baseline round trip -----------------------------------------------------------------
def test_a_baseline_of_the_findings_makes_the_same_run_pass():
    accepted = gate.baseline_from_report(report(("a.blend", level())))
    again = gate.parse_baseline(accepted.to_text(), "baseline.json")
    r = report(("a.blend", level()))
    assert gate.apply(r, again, today=TODAY) == gate.EXIT_CLEAN
    assert statuses(r) == [("a.blend", "overlap", "baselined", False),
                           ("a.blend", "too_close", "baselined", False)]
    valid_report(rp.to_json(r))


def test_the_baseline_file_is_sorted_small_and_keyed_by_file_kind_and_objects():
    text = gate.baseline_from_report(report(("b.blend", level()), ("a.blend", level()))).to_text()
    data = json.loads(text)
    assert data["convex_tools_baseline"] == 1 and data["tolerance"] == gate.DEFAULT_TOLERANCE
    assert [(e["file"], e["kind"], e["objects"]) for e in data["entries"]] == [
        ("a.blend", "overlap", ["Barrel", "Crate"]), ("a.blend", "too_close", ["Barrel", "Keg"]),
        ("b.blend", "overlap", ["Barrel", "Crate"]), ("b.blend", "too_close", ["Barrel", "Keg"])]
    assert data["entries"][0] == {"file": "a.blend", "kind": "overlap",
                                  "objects": ["Barrel", "Crate"], "distance": -0.2}


def test_a_new_finding_gates_beside_baselined_ones():
    accepted = gate.baseline_from_report(report(("a.blend", level(keg_at=3.0))))   # overlap only
    r = report(("a.blend", level()))
    assert gate.apply(r, accepted, today=TODAY) == gate.EXIT_FINDINGS
    assert statuses(r) == [("a.blend", "overlap", "baselined", False),
                           ("a.blend", "too_close", "new", True)]


def test_an_entry_no_longer_found_is_reported_fixed():
    accepted = gate.baseline_from_report(report(("a.blend", level())))
    r = report(("a.blend", level(keg_at=3.0)))
    assert gate.apply(r, accepted, today=TODAY) == gate.EXIT_CLEAN
    (fixed,) = r["gate"]["fixed"]
    assert (fixed["file"], fixed["kind"], fixed["objects"]) == ("a.blend", "too_close",
                                                                ["Barrel", "Keg"])


def test_an_expired_entry_gates_again_from_the_day_after():
    accepted = gate.baseline_from_report(report(("a.blend", level(keg_at=3.0))))
    accepted.entries[0]["expires"] = "2026-05-31"
    assert gate.apply(report(("a.blend", level(keg_at=3.0))), accepted,
                      today=datetime.date(2026, 5, 31)) == gate.EXIT_CLEAN
    r = report(("a.blend", level(keg_at=3.0)))
    assert gate.apply(r, accepted, today=TODAY) == gate.EXIT_FINDINGS
    assert statuses(r) == [("a.blend", "overlap", "expired", True)]
    assert r["files"][0]["findings"][0]["baseline"]["expires"] == "2026-05-31"


def test_a_finding_worse_than_its_entry_by_more_than_the_tolerance_gates():
    accepted = gate.baseline_from_report(report(("a.blend", level(keg_at=3.0))))  # 0.2 deep
    # 0.2005 deep: within the 0.001 tolerance.
    r = report(("a.blend", level(overlap_at=0.7995, keg_at=3.0)))
    assert gate.apply(r, accepted, today=TODAY) == gate.EXIT_CLEAN
    # 0.25 deep: worse.
    r = report(("a.blend", level(overlap_at=0.75, keg_at=3.0)))
    assert gate.apply(r, accepted, today=TODAY) == gate.EXIT_FINDINGS
    assert statuses(r) == [("a.blend", "overlap", "worse", True)]
    # Shallower than accepted is fine.
    r = report(("a.blend", level(overlap_at=0.9, keg_at=3.0)))
    assert gate.apply(r, accepted, today=TODAY) == gate.EXIT_CLEAN


def test_a_smaller_gap_than_accepted_gates():
    accepted = gate.baseline_from_report(report(("a.blend", level(overlap_at=3.0, keg_at=4.05))))
    # Keg 0.05 from Barrel accepted; now 0.02.
    found = check_shapes([box(3.0), box(4.02)], ["Barrel", "Keg"], clearance=0.1)
    r = report(("a.blend", found))
    assert gate.apply(r, accepted, today=TODAY) == gate.EXIT_FINDINGS
    assert statuses(r) == [("a.blend", "too_close", "worse", True)]


def test_the_same_objects_in_another_file_are_another_key():
    accepted = gate.baseline_from_report(report(("a.blend", level())))
    r = report(("b.blend", level()))
    assert gate.apply(r, accepted, today=TODAY) == gate.EXIT_FINDINGS
    # a.blend was not checked: its entries are not fixed.
    assert r["gate"]["fixed"] == []


def test_an_incomplete_file_declares_nothing_fixed():
    accepted = gate.baseline_from_report(report(("a.blend", level())))
    r = report(("a.blend", []), status=rp.INCOMPLETE)
    gate.apply(r, accepted, today=TODAY)
    assert r["gate"]["fixed"] == []


def test_prune_drops_the_fixed_entries_and_keeps_other_files():
    accepted = gate.baseline_from_report(report(("a.blend", level()), ("b.blend", level())))
    r = report(("a.blend", level(keg_at=3.0)))
    gate.apply(r, accepted, today=TODAY)
    kept = gate.pruned(accepted, r["gate"]["fixed"])
    assert [(e["file"], e["kind"]) for e in kept.entries] == [
        ("a.blend", "overlap"), ("b.blend", "overlap"), ("b.blend", "too_close")]


def test_writing_again_keeps_reasons_expiries_and_other_files():
    accepted = gate.baseline_from_report(report(("a.blend", level()), ("b.blend", level())))
    accepted.entries[0]["reason"] = "accepted for the demo"
    accepted.entries[0]["expires"] = "2027-01-01"
    written = gate.baseline_from_report(report(("a.blend", level())), accepted)
    data = json.loads(written.to_text())["entries"]
    assert [(e["file"], e["kind"]) for e in data] == [
        ("a.blend", "overlap"), ("a.blend", "too_close"), ("b.blend", "overlap"),
        ("b.blend", "too_close")]
    assert data[0]["reason"] == "accepted for the demo" and data[0]["expires"] == "2027-01-01"


# --- keys ---------------------------------------------------------------------------------------
def finding(**fields):
    base = dict(object_a="A", object_b="B", kind="overlap", distance=-0.1, part_a=None,
                part_b=None)
    base.update(fields)
    return base


def test_named_parts_are_in_the_key_and_positions_are_not():
    named = gate.finding_key("a.blend", finding(part_a="UCX_Crate_01"))
    assert named["parts"] == ["UCX_Crate_01", None]
    assert "parts" not in gate.finding_key("a.blend", finding(part_a="triangle 17",
                                                              part_b="part 3"))


def test_instance_paths_keep_their_index():
    k12 = gate.finding_key("a.blend", finding(object_a="Scatter/Rock [instance 12]"))
    k13 = gate.finding_key("a.blend", finding(object_a="Scatter/Rock [instance 13]"))
    assert k12 != k13


def test_traversal_findings_are_keyed_by_objects_and_point_rounded_to_the_cell():
    def walk(point, **extra):
        # As core.traversal makes them: object_a (and b) named, the objects and a point.
        return dict(object_a="Wall", object_b="Crate", kind="narrow", distance=None,
                    objects=["Wall", "Crate"], point=point, **extra)

    a = gate.finding_key("a.blend", walk([1.02, 2.0, 0.0]))
    b = gate.finding_key("a.blend", walk([0.98, 2.04, 0.0]))
    c = gate.finding_key("a.blend", walk([1.5, 2.0, 0.0]))
    assert a == b != c and a["objects"] == ["Wall", "Crate"]
    # A finding saying its own cell size is rounded to it.
    assert gate.finding_key("a.blend", walk([1.5, 2.0, 0.0], cell_size=1.0))["cell"] == [2, 2, 0]


@pytest.mark.parametrize("text, message", [
    ("[]", "not a baseline"),
    ('{"convex_tools_baseline": 1, "entries": [{"file": "a", "kind": "overlap"}]}',
     "entry 1: objects must be a list"),
    ('{"convex_tools_baseline": 1, "entries": [{"file": "a", "kind": "overlap", "objects": [],'
     ' "expires": "soon"}]}', "entry 1: expires must be a date"),
    ('{"convex_tools_baseline": 1, "entries": [{"file": "a", "kind": "overlap", "objects": [],'
     ' "why": "x"}]}', "unknown key"),
    ('{"convex_tools_baseline": 1, "tolerance": -1}', "tolerance"),
    ("{", "not a JSON baseline"),
])
def test_a_broken_baseline_is_a_value_error_naming_the_file(text, message):
    with pytest.raises(ValueError, match=message) as raised:
        gate.parse_baseline(text, "levels/baseline.json")
    assert "levels/baseline.json" in str(raised.value)


# --- unmatched patterns and --strict ------------------------------------------------------------
def section(name, unmatched=(), unchecked=()):
    return rp.file_section(name, unmatched=unmatched, objects_unchecked=unchecked)


def test_a_pattern_is_a_warning_only_when_no_file_matches_it():
    r = rp.new_report([section("a.blend", ["--ignore Nope", "--ignore Floor*"]),
                       section("b.blend", ["--ignore Nope"])], options={}, version="0")
    assert gate.apply(r) == gate.EXIT_CLEAN
    assert r["warnings"] == ["--ignore Nope matches nothing in any file"]


def test_strict_makes_unmatched_patterns_and_unchecked_objects_errors():
    r = rp.new_report([section("a.blend", ["--ignore Nope"])], options={}, version="0")
    assert gate.apply(r, strict=True) == gate.EXIT_ERROR
    r = rp.new_report([section("a.blend", unchecked=[{"object": "Keg", "reason": "bad"}])],
                      options={}, version="0")
    assert gate.apply(r) == gate.EXIT_CLEAN
    assert gate.apply(r, strict=True) == gate.EXIT_ERROR
    assert r["gate"]["errors"] == ["--strict: a.blend: Keg was not checked (bad)"]


def test_gating_again_gives_the_same_report():
    r = report(("a.blend", level()))
    gate.apply(r, fail_on="warning")
    first = rp.to_json(r)
    gate.ungated(r)
    gate.apply(r, fail_on="warning")
    assert rp.to_json(r) == first
    assert np.isfinite(r["files"][0]["findings"][0]["distance"])


_REUSE = """
import resource, sys
import numpy as np
if sys.argv[1] == "tuned":
    from convex_tools.cli import keep_freed_memory
    assert keep_freed_memory()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
a = np.ones(20 << 17); del a                 # 20 MB, allocated and freed
before = faults(); a = np.ones(20 << 17)     # and again: fresh pages, or the freed ones?
print(faults() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or
                    platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_the_command_line_keeps_the_memory_it_frees_for_its_next_arrays():
    # A level check frees and allocates arrays of tens of megabytes stage after stage; by
    # default glibc hands freed memory back, and the next array faults its pages in anew.
    def second_allocation_faults(mode):
        done = subprocess.run([sys.executable, "-c", _REUSE, mode], capture_output=True,
                              text=True, check=True, env=dict(os.environ, PYTHONPATH=ROOT))
        return int(done.stdout)

    default, tuned = second_allocation_faults("default"), second_allocation_faults("tuned")
    assert default > 100 and tuned * 10 < default
