"""The level check as a build gate (issue 19): several files in one run, exit codes, the
baseline round trip, JUnit / SARIF / JSON reports (each validated), shards and merge, safe
report writes, files whose scripts must not run, and glTF / FBX / OBJ inputs."""

import datetime
import hashlib
import io
import json
import os
import re
import stat
import subprocess
import sys
import threading

import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import cli, level_check  # noqa: E402

from bpy_helpers import boxes  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report_checks import (every_report_is_valid, junit_suites,  # noqa: E402,F401
                           sarif_results, valid_report)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check_level.py")


def _cube(name, location, size=1.0):
    half = 0.5 * size
    return boxes(name, [((-half, -half, -half), (half, half, half))], location)


def _save(path, cubes, units=None):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    for name, location, *size in cubes:
        _cube(name, location, *size)
    if units:
        for key, value in units.items():
            setattr(bpy.context.scene.unit_settings, key, value)
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return str(path)


# Crate 0.2 into Barrel; Keg 0.03 from Barrel (a finding with --clearance 0.05).
CRATES = [("Crate", (0, 0, 0)), ("Barrel", (0.8, 0, 0)), ("Keg", (1.83, 0, 0))]
# Chair 0.1 into Table.
ROOM = [("Table", (0, 0, 0)), ("Chair", (0.9, 0, 0)), ("Lamp", (4, 0, 0))]
CLEAN = [("A", (0, 0, 0)), ("B", (3, 0, 0))]


@pytest.fixture(scope="module")
def levels(tmp_path_factory):
    """Small levels saved once for the module: clean, crates, room; and an unreadable file."""
    folder = tmp_path_factory.mktemp("levels")
    made = {"clean": _save(folder / "clean.blend", CLEAN),
            "crates": _save(folder / "crates.blend", CRATES),
            "room": _save(folder / "room.blend", ROOM)}
    broken = folder / "broken.blend"
    broken.write_bytes(b"not a blend file")
    made["broken"] = str(broken)
    return made


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    result = cli.run([str(a) for a in argv], out=out, err=err)
    return result, out.getvalue(), err.getvalue()


def kinds(report_data):
    return [(os.path.basename(s["file"]), f["kind"], f["object_a"], f["object_b"])
            for s in report_data["files"] for f in s["findings"]]


def without_time(text):
    """A JSON report without its generated_at line (the one field that differs by run)."""
    return re.sub(r'"generated_at": "[^"]*"', '"generated_at": ""', text)


# --- several files, exit codes ----------------------------------------------------------------
def test_clean_files_exit_with_0(levels, tmp_path):
    report = tmp_path / "r.json"
    result, out, _ = run(levels["clean"], levels["clean"], "--json", report)
    assert result.code == cli.EXIT_CLEAN
    data = valid_report(report)
    # A file named twice is checked once.
    assert [s["file"] for s in data["files"]] == [levels["clean"]]


def test_several_files_are_checked_in_one_run_with_a_table_each(levels, tmp_path):
    report = tmp_path / "r.json"
    result, out, err = run(levels["room"], levels["clean"], levels["crates"], "--clearance",
                           "0.05", "--json", report)
    assert result.code == cli.EXIT_FINDINGS
    data = valid_report(report)
    # Sections in the sorted order of the files, each with its own findings.
    assert [os.path.basename(s["file"]) for s in data["files"]] == [
        "clean.blend", "crates.blend", "room.blend"]
    assert kinds(data) == [("crates.blend", "overlap", "Barrel", "Crate"),
                           ("crates.blend", "too_close", "Barrel", "Keg"),
                           ("room.blend", "overlap", "Chair", "Table")]
    assert data["counts"]["overlap"] == 2 and data["gate"]["gating"] == 3
    assert out.count("Checked 3 objects of") == 2 and out.count("Checked 2 objects of") == 1
    assert "No findings" in out and "depth 0.100 m" in out and "depth 0.200 m" in out
    # Progress across the files on stderr.
    assert "[1/3]" in err and "[3/3]" in err


def test_an_unreadable_file_is_exit_2_and_the_others_are_still_checked(levels, tmp_path):
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    result, _, err = run(levels["crates"], levels["broken"], tmp_path / "missing.blend",
                         levels["clean"], "--json", report, "--junit", junit)
    assert result.code == cli.EXIT_ERROR
    assert "not a readable .blend file" in err and "missing.blend: no such file" in err
    data = valid_report(report)
    status = {os.path.basename(s["file"]): s["status"] for s in data["files"]}
    assert status == {"broken.blend": "error", "clean.blend": "checked",
                      "crates.blend": "checked", "missing.blend": "error"}
    assert kinds(data) == [("crates.blend", "overlap", "Barrel", "Crate")]
    suites = junit_suites(junit.read_text())
    assert suites[levels["broken"]][0][1] == "error"
    assert suites[levels["crates"]][0][1] == "failure"


def test_ctrl_c_in_the_second_file_keeps_the_first_and_exits_with_130(levels, tmp_path,
                                                                     monkeypatch):
    real = level_check.LevelRun.run
    calls = []

    def second_interrupted(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(level_check.LevelRun, "run", second_interrupted)
    report = tmp_path / "r.json"
    result, _, err = run(levels["clean"], levels["crates"], levels["room"], "--json", report)
    assert result.code == cli.EXIT_INTERRUPTED
    data = valid_report(report)
    assert data["complete"] is False
    assert data["incomplete_reason"].startswith("interrupted (Ctrl-C) while")
    # The first file whole, the second as far as it got, the third never opened.
    assert [(os.path.basename(s["file"]), s["status"]) for s in data["files"]] == [
        ("clean.blend", "checked"), ("crates.blend", "incomplete")]
    assert "Interrupted" in err


def test_quiet_prints_one_line_a_file(levels):
    result, out, err = run(levels["clean"], levels["crates"], "--quiet")
    assert result.code == cli.EXIT_FINDINGS
    lines = out.splitlines()
    assert lines[0] == f"No findings: nothing overlaps and every pair keeps its clearance " \
                       f"(2 objects of {levels['clean']})"
    assert lines[1] == f"1 finding: 1 overlap, 0 too close (3 objects of {levels['crates']})"
    assert err == ""


def test_reports_are_the_same_for_any_jobs(levels, tmp_path):
    texts = []
    for jobs in ("1", "2"):
        report = tmp_path / f"r{jobs}.json"
        run(levels["crates"], levels["room"], "--clearance", "0.05", "--json", report,
            "--jobs", jobs)
        texts.append(without_time(report.read_text()))
    assert texts[0] == texts[1]


def test_the_script_checks_several_files_in_one_fresh_process(levels, tmp_path):
    report = tmp_path / "r.json"
    done = subprocess.run([sys.executable, SCRIPT, levels["clean"], levels["crates"],
                           "--quiet", "--json", str(report)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    # A line a file, then the gate's verdict over both.
    assert done.stdout.splitlines()[-1] == "2 files, 1 finding; 1 fails the gate (--fail-on " \
                                           "error)"
    assert len(done.stdout.splitlines()) == 3
    assert valid_report(report)["tool"]["version"] == "0.1.0"


# --- what the report records ------------------------------------------------------------------
def test_the_report_records_versions_rules_units_and_time(levels, tmp_path, monkeypatch):
    rules = tmp_path / "rules.toml"
    rules.write_text("[defaults]\nclearance = 0.0\n")
    seen = {}
    real = level_check.LevelRun

    def recording(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(level_check, "LevelRun", recording)
    report = tmp_path / "r.json"
    run(levels["crates"], "--rules", rules, "--floating", "0.02", "--include-hidden",
        "--include-cutters", "--engine", "godot", "--json", report)
    # The flags reach the check.
    assert (seen["rules"], seen["floating"], seen["include_hidden"], seen["include_cutters"],
            seen["engine"]) == (str(rules), 0.02, True, True, "godot")
    data = valid_report(report)
    assert data["rules"] == {"path": str(rules),
                             "sha256": hashlib.sha256(rules.read_bytes()).hexdigest()}
    assert data["blender_version"] == bpy.app.version_string
    assert data["options"]["floating"] == 0.02 and data["options"]["engine"] == "godot"
    generated = datetime.datetime.strptime(data["generated_at"], "%Y-%m-%dT%H:%M:%SZ")
    assert abs((datetime.datetime.utcnow() - generated).total_seconds()) < 600


def test_a_rules_error_is_exit_2_with_its_message(levels, monkeypatch, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text("[defaults]\nclearence = 1\n")

    def broken_rules(*args, **kwargs):
        raise ValueError(f"{rules}: line 2: unknown key 'clearence' in [defaults]")

    monkeypatch.setattr(level_check, "LevelRun", broken_rules)
    result, _, err = run(levels["crates"], "--rules", rules)
    assert result.code == cli.EXIT_ERROR
    assert "line 2: unknown key 'clearence'" in err
    result, _, err = run(levels["crates"], "--rules", tmp_path / "none.toml")
    assert result.code == cli.EXIT_ERROR and "--rules" in err and "No such file" in err


def test_text_is_in_the_scenes_units(tmp_path):
    # A level modelled in centimetres: Table and Chair, 100 cm cubes, 88 cm apart: 12 cm deep.
    level = _save(tmp_path / "cm.blend", [("Table", (0, 0, 0), 100.0),
                                          ("Chair", (88, 0, 0), 100.0)],
                  units={"scale_length": 0.01, "length_unit": 'CENTIMETERS'})
    report = tmp_path / "r.json"
    result, out, _ = run(level, "--json", report)
    assert "depth 12.0 cm" in out
    (section,) = valid_report(report)["files"]
    assert section["units"] == {"system": "METRIC", "scale_length": pytest.approx(0.01),
                                "length_unit": "CENTIMETERS"}
    # JSON stays in Blender units.
    assert section["findings"][0]["distance"] == pytest.approx(-12.0, abs=1e-6)


def test_a_pattern_matching_nothing_in_any_file_is_a_warning_and_strict_makes_it_an_error(
        levels, tmp_path):
    # Keg is in crates.blend only: no warning.
    result, _, err = run(levels["clean"], levels["crates"], "--ignore", "Keg")
    assert result.code == cli.EXIT_FINDINGS and "Warning" not in err
    report = tmp_path / "r.json"
    result, _, err = run(levels["clean"], levels["crates"], "--ignore", "Nope*",
                         "--ignore-pair", "Crate", "Ghost", "--json", report)
    assert result.code == cli.EXIT_FINDINGS
    assert "Warning: --ignore Nope* matches nothing in any file" in err
    assert "Warning: --ignore-pair Crate Ghost matches nothing in any file" in err
    assert valid_report(report)["warnings"] == [
        "--ignore Nope* matches nothing in any file",
        "--ignore-pair Crate Ghost matches nothing in any file"]
    result, _, err = run(levels["clean"], levels["crates"], "--ignore", "Nope*", "--strict")
    assert result.code == cli.EXIT_ERROR and "Error: --strict: --ignore Nope*" in err


def test_fail_on_chooses_which_severities_fail(levels, tmp_path):
    # The rules make every finding a warning: they pass unless --fail-on warning.
    rules = tmp_path / "rules.toml"
    rules.write_text('[defaults]\nseverity = "warning"\n')
    junit, sarif = tmp_path / "r.xml", tmp_path / "r.sarif"
    result, _, _ = run(levels["clean"], levels["crates"], "--rules", rules, "--junit", junit,
                       "--sarif", sarif)
    assert result.code == cli.EXIT_CLEAN
    assert [c[1] for c in junit_suites(junit.read_text())[levels["crates"]]] == ["passed"]
    assert [r["level"] for r in sarif_results(sarif.read_text())] == ["warning"]
    result, _, _ = run(levels["clean"], levels["crates"], "--rules", rules, "--fail-on",
                       "warning")
    assert result.code == cli.EXIT_FINDINGS


def test_a_rule_group_matching_no_object_in_any_file_is_a_warning(levels, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[groups.crates]\nnames = ["Crate*"]\n\n'
                     '[groups.decals]\nnames = ["Decal*"]\n')
    report = tmp_path / "r.json"
    result, _, err = run(levels["clean"], levels["crates"], "--rules", rules, "--json", report)
    assert result.code == cli.EXIT_FINDINGS
    data = valid_report(report)
    # crates matches in crates.blend only: no warning; decals matches nowhere.
    assert data["warnings"] == [f"{rules}: group decals matches nothing in any file"]
    assert f"Warning: {rules}: group decals matches nothing in any file" in err
    assert "group crates" not in err
    sha = hashlib.sha256(rules.read_bytes()).hexdigest()
    assert [s["rules"] for s in data["files"]] == [{"path": str(rules), "sha256": sha}] * 2
    result, _, _ = run(levels["clean"], levels["crates"], "--rules", rules, "--strict")
    assert result.code == cli.EXIT_ERROR


# --- JUnit and SARIF --------------------------------------------------------------------------
def test_junit_and_sarif_describe_every_file(levels, tmp_path):
    junit, sarif = tmp_path / "r.xml", tmp_path / "r.sarif"
    result, _, _ = run(levels["clean"], levels["crates"], "--clearance", "0.05",
                       "--junit", junit, "--sarif", sarif)
    assert result.code == cli.EXIT_FINDINGS
    suites = junit_suites(junit.read_text())
    assert suites[levels["clean"]] == [("no findings", "passed", None)]
    assert [c[:2] for c in suites[levels["crates"]]] == [
        ("overlap: Barrel / Crate", "failure"), ("too_close: Barrel / Keg", "failure")]
    results = sarif_results(sarif.read_text())
    assert [(r["ruleId"], r["level"]) for r in results] == [("overlap", "error"),
                                                            ("too_close", "error")]
    location = results[0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"].endswith("crates.blend")
    assert [x["name"] for x in location["logicalLocations"]] == ["Barrel", "Crate"]


# --- the baseline round trip --------------------------------------------------------------------
def _edit(path, **moves):
    """Open a saved level, move objects (name=(x, y, z)), add (name=("new", location)) and
    save it."""
    bpy.ops.wm.open_mainfile(filepath=path)
    for name, where in moves.items():
        if where[0] == "new":
            _cube(name, where[1])
        else:
            bpy.data.objects[name].location = where
    bpy.ops.wm.save_mainfile()


def test_the_baseline_round_trip(levels, tmp_path):
    crates = _save(tmp_path / "crates.blend", CRATES)
    room = levels["room"]
    baseline = tmp_path / "baseline.json"
    args = ("--clearance", "0.05")

    # Write: every finding of both files accepted.
    result, out, _ = run(crates, room, *args, "--write-baseline", baseline)
    assert result.code == cli.EXIT_FINDINGS
    entries = json.loads(baseline.read_text())["entries"]
    assert sorted((os.path.basename(e["file"]), e["kind"], e["objects"]) for e in entries) == [
        ("crates.blend", "overlap", ["Barrel", "Crate"]),
        ("crates.blend", "too_close", ["Barrel", "Keg"]),
        ("room.blend", "overlap", ["Chair", "Table"])]

    # Pass: nothing new.
    report, sarif = tmp_path / "r.json", tmp_path / "r.sarif"
    result, out, _ = run(crates, room, *args, "--baseline", baseline, "--json", report,
                         "--sarif", sarif)
    assert result.code == cli.EXIT_CLEAN, out
    assert {f["status"] for s in valid_report(report)["files"] for f in s["findings"]} == {
        "baselined"}
    assert all(r["suppressions"] for r in sarif_results(sarif.read_text()))

    # A new finding gates; the accepted ones do not.
    _edit(crates, Bottle=("new", (5, 0, 0)), Jug=("new", (5.5, 0, 0)))
    result, out, _ = run(crates, room, *args, "--baseline", baseline, "--json", report)
    assert result.code == cli.EXIT_FINDINGS
    gating = [(f["object_a"], f["object_b"], f["status"]) for s in valid_report(report)["files"]
              for f in s["findings"] if f["gating"]]
    assert gating == [("Bottle", "Jug", "new")]

    # Worse than accepted (Crate now 0.3 into Barrel) gates; Jug moved away.
    _edit(crates, Crate=(0.1, 0, 0), Jug=(9, 0, 0))
    result, _, _ = run(crates, room, *args, "--baseline", baseline, "--json", report)
    assert result.code == cli.EXIT_FINDINGS
    (section,) = [s for s in valid_report(report)["files"] if s["file"] == crates]
    assert [f["status"] for f in section["findings"]] == ["worse", "baselined"]

    # Fixed: Keg moved away is reported, the rest still accepted (Crate back where it was).
    _edit(crates, Crate=(0, 0, 0), Keg=(3, 0, 0))
    result, out, _ = run(crates, room, *args, "--baseline", baseline, "--json", report)
    assert result.code == cli.EXIT_CLEAN
    assert f"Fixed (in the baseline, no longer found): {crates}: too_close Barrel / Keg" in out
    (fixed,) = valid_report(report)["gate"]["fixed"]
    assert fixed["objects"] == ["Barrel", "Keg"]

    # Prune, checking crates.blend only: its fixed entry goes, room.blend's entries stay.
    before = baseline.read_text()
    result, _, err = run(crates, *args, "--baseline", baseline, "--prune-baseline")
    assert result.code == cli.EXIT_CLEAN and "Pruned 1 fixed entry" in err
    entries = json.loads(baseline.read_text())["entries"]
    assert sorted((os.path.basename(e["file"]), e["kind"]) for e in entries) == [
        ("crates.blend", "overlap"), ("room.blend", "overlap")]
    assert baseline.read_text() != before

    # Expiry: an entry that expired gates again.
    data = json.loads(baseline.read_text())
    (entry,) = [e for e in data["entries"] if e["file"] == crates]
    entry["expires"] = "2000-01-01"
    entry["reason"] = "to be fixed in the art pass"
    baseline.write_text(json.dumps(data))
    result, _, _ = run(crates, *args, "--baseline", baseline, "--json", report)
    assert result.code == cli.EXIT_FINDINGS
    (finding,) = valid_report(report)["files"][0]["findings"]
    assert finding["status"] == "expired" and finding["baseline"]["reason"] == \
        "to be fixed in the art pass"


def test_an_interrupted_run_never_prunes_the_baseline(levels, tmp_path, monkeypatch):
    baseline = tmp_path / "baseline.json"
    run(levels["crates"], "--write-baseline", baseline)
    text = baseline.read_text()
    real = level_check.LevelRun.run

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(level_check.LevelRun, "run", interrupted)
    result, _, err = run(levels["crates"], "--baseline", baseline, "--prune-baseline")
    assert result.code == cli.EXIT_INTERRUPTED
    assert "Not pruned" in err and baseline.read_text() == text
    monkeypatch.setattr(level_check.LevelRun, "run", real)


def test_a_broken_baseline_is_exit_2_naming_it(levels, tmp_path):
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"entries": []}')
    result, out, err = run(levels["crates"], "--baseline", baseline)
    assert result.code == cli.EXIT_ERROR and f"{baseline}: not a baseline" in err
    assert out == ""
    result, _, err = run(levels["crates"], "--prune-baseline")
    assert result.code == cli.EXIT_ERROR and "--prune-baseline rewrites the --baseline" in err
    result, _, err = run(levels["crates"], "--baseline", baseline, "--prune-baseline",
                         "--write-baseline", baseline)
    assert result.code == cli.EXIT_ERROR and "not both" in err


# --- shards -------------------------------------------------------------------------------------
def test_two_shards_merged_are_one_run_byte_for_byte(levels, tmp_path):
    files = [levels["room"], levels["clean"], levels["crates"], levels["broken"]]
    args = ("--clearance", "0.05")
    baseline = tmp_path / "baseline.json"
    run(levels["room"], *args, "--write-baseline", baseline)   # room's finding accepted
    gate = ("--baseline", baseline)
    one = {k: tmp_path / f"one.{k}" for k in ("json", "xml", "sarif", "csv")}
    single, _, _ = run(*files, *args, *gate, "--json", one["json"], "--junit", one["xml"],
                       "--sarif", one["sarif"], "--csv", one["csv"])
    shards = []
    for k in (1, 2):
        shard = tmp_path / f"shard{k}.json"
        result, _, _ = run(*files, *args, "--shard", f"{k}/2", "--json", shard)
        assert result.code == cli.EXIT_CLEAN            # a shard does not gate
        data = valid_report(shard)
        assert data["gate"] is None and data["shard"]["index"] == k
        assert "gating" not in json.dumps(data["files"])
        shards.append(shard)
    # Each file in exactly one shard.
    assert sorted(s["file"] for p in shards for s in valid_report(p)["files"]) == sorted(files)
    merged = {k: tmp_path / f"merged.{k}" for k in ("json", "xml", "sarif", "csv")}
    result, _, err = run("merge", shards[1], shards[0], *gate, "--json", merged["json"],
                         "--junit", merged["xml"], "--sarif", merged["sarif"],
                         "--csv", merged["csv"])
    assert "broken.blend: not a readable .blend file" in err
    # broken.blend makes both exit 2; the reports are the same but for generated_at.
    assert result.code == single.code == cli.EXIT_ERROR
    assert without_time(merged["json"].read_text()) == without_time(one["json"].read_text())
    for k in ("xml", "sarif", "csv"):
        assert merged[k].read_text() == one[k].read_text(), k
    valid_report(merged["json"])


def test_shards_merged_give_the_same_exit_code_for_findings(levels, tmp_path):
    files = [levels["clean"], levels["crates"], levels["room"]]
    single, _, _ = run(*files)
    shards = []
    for k in (1, 2, 3):
        shards.append(tmp_path / f"s{k}.json")
        run(*files, "--shard", f"{k}/3", "--json", shards[-1])
    result, _, _ = run("merge", *shards)
    assert result.code == single.code == cli.EXIT_FINDINGS
    assert cli.blender_command(["merge", *map(str, shards), "--quiet"]) == cli.EXIT_FINDINGS


def test_more_shards_than_files_leaves_a_shard_empty(levels, tmp_path):
    files = [levels["clean"], levels["crates"]]
    shards = []
    for k in (1, 2, 3):
        shards.append(tmp_path / f"s{k}.json")
        result, _, _ = run(*files, "--shard", f"{k}/3", "--json", shards[-1])
        assert result.code == cli.EXIT_CLEAN
    assert [len(valid_report(p)["files"]) for p in shards] == [0, 1, 1]
    result, _, _ = run("merge", *shards)
    assert result.code == cli.EXIT_FINDINGS


def test_merge_runs_without_blender(levels, tmp_path):
    files = [levels["clean"], levels["crates"]]
    shards = []
    for k in (1, 2):
        shards.append(str(tmp_path / f"s{k}.json"))
        run(*files, "--shard", f"{k}/2", "--json", shards[-1])
    # bpy cannot be imported in this process: the merge step of a CI pipeline needs Python and
    # numpy only.
    code = ("import runpy, sys; sys.modules['bpy'] = None; "
            f"sys.argv = [{SCRIPT!r}, 'merge', *sys.argv[1:]]; "
            f"runpy.run_path({SCRIPT!r}, run_name='__main__')")
    junit = tmp_path / "all.xml"
    done = subprocess.run([sys.executable, "-c", code, *shards, "--junit", str(junit)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == cli.EXIT_FINDINGS, done.stderr
    assert list(junit_suites(junit.read_text())) == files


def test_merge_refuses_a_missing_or_foreign_shard(levels, tmp_path):
    files = [levels["clean"], levels["crates"]]
    first, other = tmp_path / "s1.json", tmp_path / "other.json"
    run(*files, "--shard", "1/2", "--json", first)
    result, _, err = run("merge", first)
    assert result.code == cli.EXIT_ERROR and "shard 2/2 missing" in err
    run(*files, "--clearance", "0.1", "--shard", "2/2", "--json", other)
    result, _, err = run("merge", first, other)
    assert result.code == cli.EXIT_ERROR and "checked with other options" in err
    whole = tmp_path / "whole.json"
    run(*files, "--json", whole)
    result, _, err = run("merge", whole)
    assert result.code == cli.EXIT_ERROR and "not a shard's report" in err


@pytest.mark.parametrize("argv, message", [
    (["--shard", "3/2"], "1 <= K <= N"),
    (["--shard", "1/2"], "--shard writes its findings with --json"),
    (["--shard", "1/2", "--json", "x.json", "--junit", "x.xml"], "give --junit to merge"),
    (["--picture", "x.png", "EXTRA"], "one file"),
])
def test_shard_and_picture_arguments_are_checked(levels, argv, message, tmp_path):
    argv = [str(tmp_path / a) if a.endswith((".json", ".xml", ".png")) else a for a in argv]
    argv = [levels["clean"] if a == "EXTRA" else a for a in argv]
    result, _, err = run(levels["crates"], *argv)
    assert result.code == cli.EXIT_ERROR and message in err


# --- safe report writes -------------------------------------------------------------------------
def test_a_symlinked_report_is_written_through_to_its_target(levels, tmp_path):
    target_dir = tmp_path / "published"
    target_dir.mkdir()
    target = target_dir / "report.json"
    target.write_text("an old report\n")
    link = tmp_path / "link.json"
    link.symlink_to(os.path.relpath(target, tmp_path))
    result, _, _ = run(levels["crates"], "--json", link)
    assert result.code == cli.EXIT_FINDINGS
    # The link is still a link, and the pipeline reading through it reads this run's report.
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(target, tmp_path)
    assert valid_report(target)["files"][0]["file"] == levels["crates"]
    # Nothing left behind in either folder.
    assert sorted(p.name for p in target_dir.iterdir()) == ["report.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "published"]


def test_a_fifo_gets_the_final_report_and_stays_a_fifo(levels, tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo).read()), daemon=True)
    reader.start()
    result, _, _ = run(levels["crates"], "--json", fifo)
    reader.join(timeout=30)
    assert result.code == cli.EXIT_FINDINGS
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    # One write: the final report (never the placeholder written before the check).
    assert valid_report(received[0])["complete"] is True


def test_a_full_device_is_exit_2_and_stays_a_device(levels):
    # Regression: --csv /dev/full exited 1 with no error, and as root left a regular file
    # where the device was.
    result, _, err = run(levels["crates"], "--csv", "/dev/full")
    assert result.code == cli.EXIT_ERROR and "No space left on device" in err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_dash_writes_the_report_to_standard_output(levels, capsys):
    result, out, err = run(levels["crates"], "--sarif", "-")
    assert result.code == cli.EXIT_FINDINGS
    # The report is the whole of stdout; the table went to stderr.
    sarif_results(capsys.readouterr().out)
    assert out == "" and "1 finding: 1 overlap" in err


def test_a_report_on_stdout_is_all_of_stdout_in_a_fresh_process(levels):
    # Regression guard: Blender prints "Read blend: ..." on the process's stdout.
    done = subprocess.run([sys.executable, SCRIPT, levels["crates"], levels["clean"],
                           "--json", "-"], capture_output=True, text=True, timeout=120)
    assert done.returncode == cli.EXIT_FINDINGS, done.stderr
    assert len(valid_report(done.stdout)["files"]) == 2
    assert "1 finding: 1 overlap" in done.stderr


def test_a_missing_folder_is_exit_2_naming_it_and_is_not_made(levels, tmp_path):
    folder = tmp_path / "reports" / "today"
    result, out, err = run(levels["crates"], "--junit", folder / "r.xml")
    assert result.code == cli.EXIT_ERROR
    assert f"the folder {folder} does not exist" in err and out == ""
    assert not (tmp_path / "reports").exists()


# --- files whose scripts would run --------------------------------------------------------------
DRIVER = """
import runpy, sys
import bpy
bpy.context.preferences.filepaths.use_scripts_auto_execute = True   # a trusting setup
if sys.argv[1] == "open":      # the control: Blender's own open with scripts allowed
    bpy.ops.wm.open_mainfile(filepath=sys.argv[2], use_scripts=True)
else:
    sys.argv = [{script!r}] + sys.argv[2:]
    runpy.run_path({script!r}, run_name="__main__")
"""


def test_scripts_in_a_checked_file_never_run(tmp_path):
    marker = tmp_path / "the_script_ran.txt"
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _cube("A", (0, 0, 0))
    text = bpy.data.texts.new("autorun.py")
    text.write(f"open({str(marker)!r}, 'w').write('ran')\n")
    text.use_module = True          # "Register": runs when the file is loaded, if trusted
    level = str(tmp_path / "scripted.blend")
    bpy.ops.wm.save_as_mainfile(filepath=level)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(script=SCRIPT))
    done = subprocess.run([sys.executable, str(driver), "check", level, "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    # The control: the same file opened with scripts allowed does run it (so the check above
    # could have failed).
    subprocess.run([sys.executable, str(driver), "open", level], capture_output=True,
                   timeout=120)
    assert marker.read_text() == "ran"


# --- other formats ------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix, export", [
    (".glb", lambda p: bpy.ops.export_scene.gltf(filepath=p)),
    (".fbx", lambda p: bpy.ops.export_scene.fbx(filepath=p)),
    (".obj", lambda p: bpy.ops.wm.obj_export(filepath=p)),
])
def test_gltf_fbx_and_obj_files_are_imported_and_checked(tmp_path, suffix, export):
    _save(tmp_path / "crates.blend", CRATES)
    path = str(tmp_path / f"crates{suffix}")
    export(path)
    report = tmp_path / "r.json"
    result, _, _ = run(path, "--clearance", "0.05", "--json", report)
    assert result.code == cli.EXIT_FINDINGS
    (section,) = valid_report(report)["files"]
    assert section["file"] == path and section["status"] == "checked"
    # Names as imported; the same findings as the .blend.
    assert [(f["kind"], f["object_a"], f["object_b"]) for f in section["findings"]] == [
        ("overlap", "Barrel", "Crate"), ("too_close", "Barrel", "Keg")]
    assert section["findings"][0]["distance"] == pytest.approx(-0.2, abs=1e-5)


def test_unreal_collision_names_travel_in_fbx(tmp_path):
    # UCX_Crate_01 is Crate's collision (Unreal's naming), 6 m away from Crate's mesh: with
    # the name as imported, Crate is checked through it and its mesh's overlap with Barrel is
    # not a finding.
    _save(tmp_path / "crates.blend", CRATES + [("UCX_Crate_01", (6, 0, 0))])
    path = str(tmp_path / "crates.fbx")
    bpy.ops.export_scene.fbx(filepath=path)
    result, _, _ = run(path, "--clearance", "0.05")
    assert [(f.kind, f.object_a, f.object_b) for f in result.findings] == [
        ("too_close", "Barrel", "Keg")]


@pytest.mark.parametrize("name, message", [
    ("bad.glb", "bad.glb: the gltf importer could not read it"),
    ("bad.fbx", "bad.fbx: the fbx importer could not read it"),
    ("notes.txt", "notes.txt: not a readable file (the suffixes read are .blend, .glb"),
])
def test_an_unreadable_file_of_another_format_is_an_error_for_that_file(levels, tmp_path,
                                                                        name, message):
    bad = tmp_path / name
    bad.write_bytes(b"glTF but not really")
    report = tmp_path / "r.json"
    result, _, err = run(bad, levels["crates"], "--json", report)
    assert result.code == cli.EXIT_ERROR
    assert message in err
    status = {s["file"]: s["status"] for s in valid_report(report)["files"]}
    assert status == {str(bad): "error", levels["crates"]: "checked"}


# --- the Sidebar's export -------------------------------------------------------------------------
@pytest.fixture
def checked_scene(addon):
    for name, location in CRATES:
        _cube(name, location)
    bpy.context.scene.convex_level.clearance = 0.05
    bpy.ops.object.convex_check_level()
    return bpy.context.scene


def test_the_sidebar_exports_the_command_lines_schema_in_each_format(checked_scene, tmp_path):
    paths = {k: tmp_path / f"r.{k}" for k in ("json", "csv", "xml", "sarif")}
    for path in paths.values():
        bpy.ops.object.convex_export_level_report(filepath=str(path))
    data = valid_report(paths["json"])
    (section,) = data["files"]
    assert data["options"]["clearance"] == pytest.approx(0.05)
    assert section["scene"] == checked_scene.name and section["objects_checked"] == 3
    assert [(f["kind"], f["object_a"], f["object_b"]) for f in section["findings"]] == [
        ("overlap", "Barrel", "Crate"), ("too_close", "Barrel", "Keg")]
    assert paths["csv"].read_text().startswith("kind,object_a,object_b")
    (cases,) = junit_suites(paths["xml"].read_text()).values()
    assert [c[1] for c in cases] == ["failure", "failure"]
    assert len(sarif_results(paths["sarif"].read_text())) == 2


def test_the_sidebar_export_records_the_scenes_rules(checked_scene, tmp_path):
    text = bpy.data.texts.new("level_rules.toml")
    text.write("[defaults]\nclearance = 0.05\n")
    checked_scene.convex_level.rules_text = text
    bpy.ops.object.convex_check_level()
    path = tmp_path / "r.json"
    bpy.ops.object.convex_export_level_report(filepath=str(path))
    data = valid_report(path)
    sha = hashlib.sha256(text.as_string().encode("utf-8")).hexdigest()
    assert data["rules"] == data["files"][0]["rules"] == {"path": "Text level_rules.toml",
                                                          "sha256": sha}
    # The rules say the clearance.
    assert data["options"]["clearance"] is None
    assert len(data["files"][0]["findings"]) == 2


def test_the_sidebar_refuses_a_suffix_of_no_known_format(checked_scene, tmp_path):
    with pytest.raises(RuntimeError, match=r"the suffix chooses the format, one of \.json, "
                                           r"\.csv, \.xml, \.sarif"):
        bpy.ops.object.convex_export_level_report(filepath=str(tmp_path / "r.txt"))
    assert not (tmp_path / "r.txt").exists()
