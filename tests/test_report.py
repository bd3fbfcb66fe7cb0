"""The report model and its writers (no Blender): JSON against its schema, CSV, JUnit XML,
SARIF 2.1.0, and lengths in the scene's units."""

import csv
import io
import json
import xml.etree.ElementTree as ET

import pytest

from convex_tools.core import Box, translated
from convex_tools.core import gate
from convex_tools.core import report as rp
from convex_tools.core.level import Finding, check_shapes
from report_checks import errors, junit_suites, sarif_results, schema, valid_report

METRES = {"system": "METRIC", "scale_length": 1.0, "length_unit": "METERS"}
CENTIMETRES = {"system": "METRIC", "scale_length": 0.01, "length_unit": "CENTIMETERS"}


def box(x=0.0, y=0.0, z=0.0, half=0.5):
    return translated(Box((half, half, half)), (x, y, z))


def crates():
    """Crate 0.2 into Barrel; Keg 0.05 from Barrel (clearance 0.1)."""
    return check_shapes([box(), box(0.8), box(1.85)], ["Crate", "Barrel", "Keg"],
                        clearance=0.1)


def model(sections=None, **meta):
    if sections is None:
        sections = [rp.file_section("a.blend", findings=crates(), scene="Scene", units=METRES,
                                    objects_checked=3),
                    rp.file_section("b.blend", scene="Scene", units=METRES, objects_checked=2)]
    return rp.new_report(sections, options={"clearance": 0.1}, version="0.1.0",
                         blender_version="5.0.1", **meta)


# --- units ------------------------------------------------------------------------------------
def test_the_table_in_a_centimetre_scene_says_centimetres():
    # A level modelled in centimetres: 1 Blender unit = 1 cm. Boxes of half size 50 cm, 80 cm
    # apart, overlap by 100 - 80 = 20 cm.
    (f,) = check_shapes([box(half=50), box(80, half=50)], ["Crate", "Barrel"])
    text = rp.report_table([f], units=CENTIMETRES)
    assert "depth 20.0 cm" in text
    # The JSON keeps Blender units.
    assert rp.file_section("x.blend", findings=[f])["findings"][0]["distance"] == \
        pytest.approx(-20.0)


def test_count_line_names_the_kinds_found():
    assert rp.count_line(crates()) == "2 findings: 1 overlap, 1 too close"
    sunk = Finding("Post", "Floor", "sunk", -0.24, None, None)
    assert rp.count_line([sunk]) == "1 finding: 0 overlaps, 0 too close, 1 sunk"
    assert rp.count_line([]).startswith("No findings")


# --- JSON ---------------------------------------------------------------------------------------
def test_the_json_report_matches_its_schema_gated_and_ungated():
    report = model()
    valid_report(rp.to_json(report))          # ungated: what a shard writes
    gate.apply(report)
    data = valid_report(rp.to_json(report))
    assert data["schema_version"] == rp.SCHEMA_VERSION
    assert data["tool"] == {"name": "convex_tools", "version": "0.1.0"}
    assert [s["file"] for s in data["files"]] == ["a.blend", "b.blend"]
    assert data["counts"]["overlap"] == 1 and data["counts"]["too_close"] == 1
    assert data["files"][1]["counts"]["overlap"] == 0


def test_the_schema_rejects_what_it_does_not_describe():
    # The validator is not a rubber stamp: each of these breaks the schema in one place.
    good = json.loads(rp.to_json(model()))
    assert errors(good, schema()) == []
    for breaking in (
            lambda r: r.pop("schema_version"),
            lambda r: r.update(surprise=1),
            lambda r: r["files"][0]["findings"][0].update(kind="wobbly"),
            lambda r: r["files"][0]["findings"][0].update(point_a=[0.0, 1.0]),
            lambda r: r["files"][0].update(status="fine"),
            lambda r: r.update(rules={"path": "r.toml", "sha256": "xyz"}),
            lambda r: r.update(generated_at="yesterday")):
        broken = json.loads(rp.to_json(model()))
        breaking(broken)
        assert errors(broken, schema()), breaking


def test_a_report_read_back_writes_the_same_bytes():
    report = model(generated_at="2026-01-01T00:00:00Z")
    gate.apply(report)
    text = rp.to_json(report)
    again = rp.from_json(text)
    assert rp.to_json(again) == text
    assert rp.to_sarif(again) == rp.to_sarif(report)
    assert rp.to_junit(again) == rp.to_junit(report)


@pytest.mark.parametrize("text, message", [
    ("not json", "not a JSON report"),
    ('{"findings": []}', "not a level check report"),
    ('{"schema_version": 99, "files": []}', "schema_version 99"),
])
def test_reading_something_else_is_a_value_error(text, message):
    with pytest.raises(ValueError, match=message):
        rp.from_json(text, "r.json")


# --- CSV ----------------------------------------------------------------------------------------
def test_csv_has_a_row_per_finding_with_its_file_after_the_old_columns():
    report = model()
    gate.apply(report)
    rows = list(csv.DictReader(io.StringIO(rp.to_csv(report))))
    assert [(r["file"], r["kind"], r["object_a"], r["object_b"], r["gating"]) for r in rows] == [
        ("a.blend", "overlap", "Barrel", "Crate", "true"),
        ("a.blend", "too_close", "Barrel", "Keg", "true")]
    header = rp.to_csv(report).splitlines()[0].split(",")
    assert tuple(header[:len(rp.CSV_COLUMNS)]) == rp.CSV_COLUMNS


def test_an_incomplete_csv_starts_with_the_mark():
    report = model(complete=False, incomplete_reason="interrupted (Ctrl-C)")
    assert rp.to_csv(report).startswith("# INCOMPLETE: interrupted (Ctrl-C)")


# --- JUnit --------------------------------------------------------------------------------------
def test_junit_has_a_suite_per_file_and_a_failing_case_per_gating_finding():
    sections = [rp.file_section("a.blend", findings=crates(), units=METRES),
                rp.file_section("clean.blend", units=METRES),
                rp.file_section("broken.blend", status=rp.FAILED,
                                error="broken.blend: not a readable .blend file")]
    report = model(sections)
    # The too_close finding is a warning: it passes under --fail-on error.
    report["files"][0]["findings"][1]["severity"] = "warning"
    gate.apply(report)
    suites = junit_suites(rp.to_junit(report))
    assert list(suites) == ["a.blend", "clean.blend", "broken.blend"]
    (overlap, close) = suites["a.blend"]
    assert overlap[:2] == ("overlap: Barrel / Crate", "failure")
    assert close[:2] == ("too_close: Barrel / Keg", "passed")
    first_line = close[2].splitlines()[0]
    assert "gap 0.0500 m < 0.100 m" in first_line and first_line.endswith("(warning)")
    assert suites["clean.blend"] == [("no findings", "passed", None)]
    assert suites["broken.blend"][0][1] == "error"
    root = ET.fromstring(rp.to_junit(report))
    assert root.get("failures") == "1" and root.get("errors") == "1"


def test_baselined_findings_are_passing_cases_that_say_so():
    report = model()
    accepted = gate.baseline_from_report(report)
    gate.apply(report, accepted)
    cases = junit_suites(rp.to_junit(report))["a.blend"]
    assert [c[1] for c in cases] == ["passed", "passed"]
    assert all("baselined" in c[2] for c in cases)


# --- SARIF --------------------------------------------------------------------------------------
def test_sarif_has_a_rule_per_kind_levels_from_severity_and_objects_as_logical_locations():
    report = model()
    report["files"][0]["findings"][1]["severity"] = "warning"
    gate.apply(report)
    results = sarif_results(rp.to_sarif(report))
    assert [(r["ruleId"], r["level"]) for r in results] == [("overlap", "error"),
                                                            ("too_close", "warning")]
    location = results[0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "a.blend"
    assert [x["name"] for x in location["logicalLocations"]] == ["Barrel", "Crate"]
    assert "suppressions" not in results[0]
    assert results[0]["message"]["text"].startswith("overlap: Barrel / Crate, depth 0.200 m")


def test_sarif_marks_baselined_findings_suppressed_with_the_reason():
    report = model()
    accepted = gate.baseline_from_report(report)
    accepted.entries[0]["reason"] = "the barrel is moved in the art pass"
    gate.apply(report, accepted)
    results = sarif_results(rp.to_sarif(report))
    suppressed = [r for r in results if r.get("suppressions")]
    assert len(suppressed) == 2
    assert suppressed[0]["suppressions"][0]["justification"] == \
        "the barrel is moved in the art pass"
    # The fingerprint follows the baseline key: the same finding, the same fingerprint.
    again = model()
    gate.apply(again)
    assert [r["partialFingerprints"] for r in sarif_results(rp.to_sarif(again))] == \
        [r["partialFingerprints"] for r in results]


def test_sarif_uris_are_escaped_relative_references():
    assert rp.artifact_uri("levels/big level.blend") == "levels/big%20level.blend"
    assert rp.artifact_uri("/abs/a.blend") == "file:///abs/a.blend"


def test_the_check_of_every_report_a_test_wrote_finds_a_broken_one(tmp_path):
    from report_checks import check_every_report

    report = model()
    gate.apply(report)
    (tmp_path / "r.json").write_text(rp.to_json(report))
    (tmp_path / "r.xml").write_text(rp.to_junit(report))
    (tmp_path / "r.sarif").write_text(rp.to_sarif(report))
    (tmp_path / "baseline.json").write_text(gate.baseline_from_report(report).to_text())
    assert check_every_report(tmp_path) == 3
    broken = json.loads(rp.to_json(report))
    del broken["files"][0]["units"]
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "r.json").write_text(json.dumps(broken))
    with pytest.raises(AssertionError, match="missing 'units'"):
        check_every_report(tmp_path)


@pytest.mark.parametrize("extra, text", [
    ({"kind": "narrow", "width": 0.45}, "width 0.450 m"),
    ({"kind": "low_headroom", "clearance": 1.5}, "headroom 1.50 m"),
    ({"kind": "step", "height": 0.6}, "step 0.600 m"),
    ({"kind": "unreachable", "cells": 12, "area": 8.55}, "area 8.55 m²"),
])
def test_traversal_findings_say_what_is_too_small(extra, text):
    f = {"object_a": "Beam", "object_b": None, "distance": None, "clearance": 0.0,
         "objects": ["Beam"], "point": [1.0, 2.0, 0.0], **extra}
    assert rp.measure_text(f, METRES) == text
    assert text in rp.report_table([f], units=METRES)
