"""The command line level check: output, reports, exit codes."""

import csv
import io
import os
import re
import subprocess
import sys

import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import cli  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report_checks import every_report_is_valid, valid_report  # noqa: E402,F401


def _cube(name, location, collection=None):
    import bmesh

    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bm.to_mesh(mesh)
    bm.free()
    obj = bpy.data.objects.new(name, mesh)
    obj.location = location
    (collection or bpy.context.scene.collection).objects.link(obj)
    return obj


@pytest.fixture
def level(tmp_path):
    """A saved level: Crate overlaps Barrel by 0.2, Keg is 0.03 from Barrel, all on a Floor."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ground = bpy.data.collections.new("Ground")
    bpy.context.scene.collection.children.link(ground)
    floor = _cube("Floor", (0, 0, -0.5), ground)
    floor.scale = (20, 20, 1)
    _cube("Crate", (0, 0, 0.5))
    _cube("Barrel", (0.8, 0, 0.5))
    _cube("Keg", (1.83, 0, 0.5))
    _cube("Lonely", (5, 5, 0.5))
    path = str(tmp_path / "level.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    return path


@pytest.fixture
def clean_level(tmp_path):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _cube("A", (0, 0, 0))
    _cube("B", (3, 0, 0))
    path = str(tmp_path / "clean.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    return path


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    result = cli.run([str(a) for a in argv], out=out, err=err)
    return result, out.getvalue(), err.getvalue()


def test_findings_exit_with_1_and_print_a_table(level):
    result, out, _ = run(level, "--clearance", "0.05", "--ignore", "Ground")
    assert result.code == cli.EXIT_FINDINGS
    assert "2 findings: 1 overlap, 1 too close" in out
    assert "Barrel" in out and "Crate" in out and "Keg" in out
    assert "depth 0.200 m" in out and "gap 0.0300 m" in out   # the scene is in metres


def test_a_clean_level_exits_with_0(clean_level):
    result, out, _ = run(clean_level)
    assert result.code == cli.EXIT_CLEAN
    assert "No findings" in out


def test_without_ignoring_the_floor_nothing_resting_on_it_is_too_close(level):
    # Crate, Barrel, Keg and Lonely stand on the floor: resting contact, never "too close".
    result, _, _ = run(level, "--clearance", "0.05")
    assert {f.kind for f in result.findings} <= {"overlap", "too_close"}
    assert not [f for f in result.findings if "Floor" in (f.object_a, f.object_b)]


def test_missing_file_exits_with_2_and_says_so(tmp_path):
    result, _, err = run(tmp_path / "nope.blend")
    assert result.code == cli.EXIT_ERROR
    assert "no such file" in err


def test_corrupt_file_exits_with_2_and_says_so(tmp_path):
    bad = tmp_path / "bad.blend"
    bad.write_bytes(b"this is not a blend file")
    result, _, err = run(bad)
    assert result.code == cli.EXIT_ERROR
    assert "not a readable .blend file" in err


@pytest.mark.parametrize("argv,message", [
    (["--clearance", "-1"], "length >= 0"),
    (["--clearance", "wide"], "length in metres"),
    (["--object-clearance", "Door"], "PATTERN=METRES"),
    (["--picture-size", "huge"], "1600x1000"),
    (["--collection", "Nope"], "no collection named 'Nope'"),
    (["--camera", "Nope"], "no camera named 'Nope'"),
    (["--frobnicate"], "unrecognized arguments"),
])
def test_bad_arguments_exit_with_2_and_name_the_problem(level, argv, message):
    result, _, err = run(level, *argv)
    assert result.code == cli.EXIT_ERROR
    assert message in err


def test_help_exits_with_0(capsys):
    result = cli.run(["--help"])
    assert result.code == 0
    assert "--clearance" in capsys.readouterr().out


def test_json_and_csv_reports_hold_every_finding(level, tmp_path):
    (tmp_path / "out").mkdir()
    report, table = tmp_path / "out" / "report.json", tmp_path / "out" / "report.csv"
    result, out, _ = run(level, "--clearance", "0.05", "--ignore", "Ground",
                         "--json", report, "--csv", table)
    data = valid_report(report)
    assert data["counts"] == {"overlap": 1, "sunk": 0, "too_close": 1, "floating": 0}
    assert data["options"]["clearance"] == 0.05 and data["options"]["ignore"] == ["Ground"]
    (section,) = data["files"]
    assert section["file"] == level and section["objects_checked"] == 4
    assert section["scene"] == "Scene"
    assert section["units"] == {"system": "METRIC", "scale_length": 1.0,
                                "length_unit": "METERS"}
    assert [(f["kind"], f["object_a"], f["object_b"]) for f in section["findings"]] == [
        ("overlap", "Barrel", "Crate"), ("too_close", "Barrel", "Keg")]
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert [r["object_b"] for r in rows] == ["Crate", "Keg"]
    assert float(rows[0]["distance"]) == pytest.approx(-0.2, abs=1e-5)


def test_checking_twice_writes_identical_reports(level, tmp_path):
    outputs = []
    for k in range(2):
        report, table = tmp_path / f"r{k}.json", tmp_path / f"r{k}.csv"
        run(level, "--clearance", "0.05", "--json", report, "--csv", table)
        # (generated_at is the time of the run: the one field that may differ)
        outputs.append((re.sub(r'"generated_at": "[^"]*"', "", report.read_text()),
                        table.read_text()))
    assert outputs[0] == outputs[1]


def test_options_reach_the_check(level):
    result, _, _ = run(level, "--ignore", "Ground", "--ignore-pair", "Cr*", "Barrel")
    assert result.code == cli.EXIT_CLEAN
    result, _, _ = run(level, "--ignore", "Ground", "--object-clearance", "Keg=0.1")
    assert [(f.kind, f.object_a, f.object_b) for f in result.findings] == [
        ("overlap", "Barrel", "Crate"), ("too_close", "Barrel", "Keg")]
    result, _, _ = run(level, "--ignore", "Ground", "--touch-tolerance", "0.5")
    assert result.code == cli.EXIT_CLEAN
    result, _, _ = run(level, "--collection", "Ground")
    assert result.code == cli.EXIT_CLEAN and result.stats.objects == 1


def test_quiet_prints_the_summary_line_only(level):
    result, out, err = run(level, "--ignore", "Ground", "--quiet")
    assert out == "1 finding: 1 overlap, 0 too close (4 objects of " + level + ")\n"
    assert err == ""


def test_the_open_file_is_checked_when_none_is_given(level):
    bpy.ops.wm.open_mainfile(filepath=level)
    result, out, _ = run("--ignore", "Ground")
    assert result.code == cli.EXIT_FINDINGS and "level.blend" in out


def test_blender_command_takes_check_and_its_options(level, capsys):
    bpy.ops.wm.open_mainfile(filepath=level)
    assert cli.blender_command(["check", "--ignore", "Ground"]) == cli.EXIT_FINDINGS
    assert cli.blender_command(["check", level, "--ignore", "Ground", "--ignore-pair", "*",
                                "*"]) == cli.EXIT_CLEAN
    assert cli.blender_command(["frobnicate"]) == cli.EXIT_ERROR
    assert cli.blender_command([]) == cli.EXIT_ERROR
    assert "unknown command" in capsys.readouterr().err


def test_script_runs_the_check_in_a_fresh_process(level, tmp_path):
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = os.path.join(root, "scripts", "check_level.py")
    done = subprocess.run([sys.executable, script, level, "--ignore", "Ground"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "1 finding: 1 overlap" in done.stdout
    done = subprocess.run([sys.executable, script, str(tmp_path / "missing.blend")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no such file" in done.stderr


def test_picture_shows_the_findings_in_their_colour(level, tmp_path):
    picture = tmp_path / "findings.png"
    result, out, _ = run(level, "--ignore", "Ground", "--picture", picture,
                         "--picture-size", "240x150")
    assert result.code == cli.EXIT_FINDINGS
    assert "No picture" not in out and picture.exists()
    image = bpy.data.images.load(str(picture))
    try:
        import numpy as np

        assert tuple(image.size) == (240, 150)
        pixels = np.array(image.pixels[:]).reshape(-1, 4)
        # The overlapping pair is drawn in the overlap colour: strongly red pixels exist.
        red = (pixels[:, 0] > 0.5) & (pixels[:, 1] < 0.25) & (pixels[:, 2] < 0.25)
        assert red.sum() > 20
    finally:
        bpy.data.images.remove(image)
    # Nothing of the drawing stays behind in the file.
    assert not [o for o in bpy.data.objects if o.name.startswith(("ConvexMarker", "ConvexLevel"))]


# --- output paths ----------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["--json", "--csv", "--picture"])
def test_a_folder_as_output_path_exits_with_2_and_says_so(level, tmp_path, option):
    folder = tmp_path / "reports"
    folder.mkdir()
    result, _, err = run(level, option, folder)
    assert result.code == cli.EXIT_ERROR
    assert f"{option} {folder} is a folder; give a file name" in err
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("path, reason", [
    ("/proc/convex_tools_report.json", "cannot write there"),      # a file system taking no files
    ("{tmp}/level.blend/report.json", "level.blend is a file, not a folder"),
])
def test_an_unwritable_output_path_exits_with_2_before_any_work(level, tmp_path, path, reason):
    result, out, err = run(level, "--json", path.format(tmp=tmp_path))
    assert result.code == cli.EXIT_ERROR
    assert reason in err and "Traceback" not in err
    assert out == ""           # nothing was checked


def test_the_script_exits_with_2_for_a_folder_and_prints_no_traceback(level, tmp_path):
    done = subprocess.run([sys.executable, SCRIPT, level, "--json", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "is a folder" in done.stderr and "Traceback" not in done.stderr


def test_a_failed_write_leaves_the_old_report_whole(level, tmp_path, monkeypatch):
    from convex_tools import files

    report = tmp_path / "report.json"
    report.write_text('{"old": true}\n')

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", disk_full)
    result, _, err = run(level, "--json", report)
    assert result.code == cli.EXIT_ERROR
    assert "cannot write" in err and "No space left on device" in err
    # Written to a temporary file and renamed: the old file was never truncated, and the
    # temporary file is gone.
    assert report.read_text() == '{"old": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["level.blend", "report.json"]


@pytest.mark.parametrize("suffix, magic", [
    (".png", b"\x89PNG"), (".jpg", b"\xff\xd8\xff"), (".jpeg", b"\xff\xd8\xff"),
    (".webp", b"RIFF"), (".tif", b"II*\x00"), (".bmp", b"BM"),
])
def test_the_picture_suffix_chooses_its_format(level, tmp_path, suffix, magic):
    picture = tmp_path / f"findings{suffix}"
    result, _, err = run(level, "--ignore", "Ground", "--picture", picture,
                         "--picture-size", "64x40")
    assert result.code == cli.EXIT_FINDINGS, err
    assert picture.read_bytes().startswith(magic)


@pytest.mark.parametrize("name", ["findings.gif", "findings"])
def test_a_picture_suffix_of_no_known_format_exits_with_2(level, tmp_path, name):
    # Regression: --picture x.jpg wrote PNG bytes under .jpg.
    result, out, err = run(level, "--picture", tmp_path / name)
    assert result.code == cli.EXIT_ERROR
    assert "the suffix chooses the format: .png, .jpg" in err
    assert out == "" and not (tmp_path / name).exists()


# --- clearances ------------------------------------------------------------------------------

def test_clearance_0_says_which_objects_keep_their_own(level, tmp_path):
    bpy.ops.wm.open_mainfile(filepath=level)
    bpy.data.objects["Keg"]["convex_clearance"] = 0.05      # Keg is 0.03 from Barrel
    bpy.ops.wm.save_mainfile()
    report = tmp_path / "r.json"
    result, out, _ = run(level, "--clearance", "0", "--ignore", "Ground", "--json", report)
    assert [(f.kind, f.object_a, f.object_b) for f in result.findings] == [
        ("overlap", "Barrel", "Crate"), ("too_close", "Barrel", "Keg")]
    assert "(clearance 0 m, own clearance on 1 object;" in out
    assert valid_report(report)["files"][0]["objects_with_own_clearance"] == 1
    help_text = cli.build_parser().format_help()
    assert "only objects with their own clearance are checked for gaps" in " ".join(
        help_text.split())


# --- interrupted and unfinished runs ---------------------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check_level.py")

# Runs scripts/check_level.py in a fresh process with LevelRun.step wrapped: at the step given,
# the process sends itself SIGINT (what Ctrl-C does) or dies at once (os._exit, as a killed
# process would), after the steps before it did their work one chunk at a time ("--jobs 1":
# every step in this process). With "sigint-workers", the SIGINT comes instead when the
# findings of the given task of the worker processes (--jobs 2) arrive, before they are kept.
DRIVER = """
import os, runpy, signal, sys
sys.path.insert(0, {root!r})
from convex_tools import level_check
from convex_tools.core import level

what, at = sys.argv[1], int(sys.argv[2])
original_step = level_check.LevelRun.step
original_add = level.LevelCheck.add_findings
calls = [0]

def step(self, seconds=0.05, shapes_only=False):
    calls[0] += 1
    if calls[0] == at:
        if what == "sigint":
            os.kill(os.getpid(), signal.SIGINT)
        else:
            os._exit(9)
    return original_step(self, 0.0, shapes_only)     # one chunk per call

def add_findings(self, found):          # (called only with the workers' findings)
    calls[0] += 1
    if calls[0] == at:
        os.kill(os.getpid(), signal.SIGINT)
    return original_add(self, found)

if what == "sigint-workers":
    level.LevelCheck.add_findings = add_findings
else:
    level_check.LevelRun.step = step
sys.argv = [{script!r}] + sys.argv[3:]
runpy.run_path({script!r}, run_name="__main__")
"""


@pytest.fixture
def long_level(tmp_path, registered):
    """A row of 800 drums (cubes whose Convex shape is a Cylinder), each 0.1 into the next:
    799 curved overlaps, which the batch hands to the single queries, over several steps of
    pairs (a row of cubes the batch measures whole, in one step)."""
    import bmesh

    bpy.ops.wm.read_factory_settings(use_empty=True)
    mesh = bpy.data.meshes.new("cube")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bm.to_mesh(mesh)
    bm.free()
    for k in range(800):
        obj = bpy.data.objects.new(f"Cube{k:03d}", mesh)
        obj.convex_tools.kind = 'CYLINDER'
        obj.location = (0.9 * k, 0.0, 0.0)
        bpy.context.scene.collection.objects.link(obj)
    path = str(tmp_path / "long.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    return path


def drive(tmp_path, what, at, *argv):
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(root=ROOT, script=SCRIPT))
    return subprocess.run([sys.executable, str(driver), what, str(at), *map(str, argv)],
                          capture_output=True, text=True, timeout=180)


def test_ctrl_c_writes_the_findings_so_far_marked_incomplete_and_exits_with_130(long_level,
                                                                               tmp_path):
    report, table, picture = tmp_path / "r.json", tmp_path / "r.csv", tmp_path / "f.png"
    for old in (report, table, picture):
        old.write_text("an earlier check's report\n")
    # Steps 1-13 make the 800 shapes (64 a step; the 13th also builds the pair check), 14-15
    # measure 512 of the 799 pairs (256 a step); Ctrl-C comes at step 16.
    done = drive(tmp_path, "sigint", 16, long_level, "--json", report, "--csv", table,
                 "--picture", picture, "--jobs", "1")
    assert done.returncode == cli.EXIT_INTERRUPTED, done.stderr
    assert "Traceback" not in done.stderr
    assert "Interrupted: the 512 findings found so far are not the whole level" in done.stderr
    # The printed counts say they are partial (never "No findings" for an unfinished check).
    assert "Partly checked 800 objects" in done.stdout
    assert ("INCOMPLETE, interrupted (Ctrl-C) while measuring pairs (512/799): 512 findings so "
            "far (512 overlaps, 0 too close)") in done.stdout
    data = valid_report(report)
    assert data["complete"] is False
    assert data["incomplete_reason"] == "interrupted (Ctrl-C) while measuring pairs (512/799)"
    assert data["counts"]["overlap"] == 512 and data["counts"]["too_close"] == 0
    assert data["files"][0]["status"] == "incomplete"
    lines = table.read_text().splitlines()
    assert lines[0].startswith("# INCOMPLETE: interrupted (Ctrl-C)")
    assert lines[1].startswith("kind,object_a,object_b") and len(lines) == 2 + 512
    # The earlier check's picture is gone rather than taken for this one's.
    assert not picture.exists()
    assert "removed" in done.stderr


def test_ctrl_c_while_worker_processes_measure_keeps_their_findings_so_far(long_level,
                                                                           tmp_path):
    # The 799 pairs go to two worker processes 128 at a time (PAIRS_PER_TASK); Ctrl-C comes
    # as the third task's findings arrive, after two tasks' (256 overlaps) were kept.
    report = tmp_path / "r.json"
    done = drive(tmp_path, "sigint-workers", 3, long_level, "--json", report, "--jobs", "2")
    assert done.returncode == cli.EXIT_INTERRUPTED, done.stderr
    assert "Traceback" not in done.stderr
    assert "Interrupted: the 256 findings found so far are not the whole level" in done.stderr
    data = valid_report(report)
    assert data["complete"] is False and data["counts"]["overlap"] == 256
    assert data["incomplete_reason"] == "interrupted (Ctrl-C) while measuring pairs (256/799)"


def test_ctrl_c_while_making_shapes_prints_no_all_clear(long_level, tmp_path):
    done = drive(tmp_path, "sigint", 3, long_level, "--quiet", "--jobs", "1")
    assert done.returncode == cli.EXIT_INTERRUPTED, done.stderr
    assert done.stdout == ("INCOMPLETE, interrupted (Ctrl-C) while making shapes (128/800 "
                           "objects): 0 findings so far (0 overlaps, 0 too close) (128 objects of "
                           f"{long_level})\n")
    assert "No findings" not in done.stdout


def test_a_run_killed_midway_leaves_reports_that_say_it_did_not_finish(long_level, tmp_path):
    report, table = tmp_path / "r.json", tmp_path / "r.csv"
    report.write_text('{"complete": true, "counts": {"overlap": 0, "sunk": 0, "too_close": 0, "floating": 0}}\n')
    done = drive(tmp_path, "kill", 15, long_level, "--json", report, "--csv", table,
                 "--jobs", "1")
    assert done.returncode == 9
    data = valid_report(report)
    assert data["complete"] is False and data["files"] == []
    assert "has not finished" in data["incomplete_reason"]
    assert table.read_text().startswith("# INCOMPLETE: the check has not finished")


def test_an_error_in_the_file_leaves_reports_that_say_so(level, tmp_path):
    report = tmp_path / "r.json"
    report.write_text('{"complete": true}\n')
    result, _, err = run(level, "--collection", "Nope", "--json", report)
    assert result.code == cli.EXIT_ERROR and "no collection named 'Nope'" in err
    data = valid_report(report)
    (section,) = data["files"]
    assert section["status"] == "error" and "no collection named 'Nope'" in section["error"]
    assert data["gate"]["exit_code"] == cli.EXIT_ERROR


def test_a_bad_clearance_property_leaves_that_object_unchecked_and_the_run_goes_on(level,
                                                                                 tmp_path):
    # Regression: one object's convex_clearance = "wide" failed the whole run with exit 2 and
    # no findings.
    bpy.ops.wm.open_mainfile(filepath=level)
    bpy.data.objects["Keg"]["convex_clearance"] = "wide"
    bpy.ops.wm.save_mainfile()
    report = tmp_path / "r.json"
    result, _, err = run(level, "--clearance", "0.05", "--ignore", "Ground", "--json", report)
    # Crate still overlaps Barrel; Keg (0.03 from Barrel) is not checked, so no too_close.
    assert result.code == cli.EXIT_FINDINGS
    assert [(f.kind, f.object_a, f.object_b) for f in result.findings] == [
        ("overlap", "Barrel", "Crate")]
    assert "Not checked Keg: Keg: custom property convex_clearance must be a number" in err
    (section,) = valid_report(report)["files"]
    assert section["objects_unchecked"] == [{
        "object": "Keg", "reason": "Keg: custom property convex_clearance must be a number, "
                                   "got 'wide'"}]
    assert section["objects_checked"] == 3
    # --strict: an object left unchecked is an error.
    result, _, err = run(level, "--clearance", "0.05", "--ignore", "Ground", "--strict")
    assert result.code == cli.EXIT_ERROR and "--strict: " in err and "Keg was not checked" in err


# --- Blender's own output ----------------------------------------------------------------------

def test_quiet_prints_one_line_even_from_a_fresh_process_with_a_picture(level, tmp_path):
    # Regression: Blender's "Read blend" line on stdout and its EGL_BAD_MATCH lines on stderr.
    done = subprocess.run([sys.executable, SCRIPT, level, "--ignore", "Ground", "--quiet",
                           "--picture", str(tmp_path / "f.png"), "--picture-size", "64x40"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout == f"1 finding: 1 overlap, 0 too close (4 objects of {level})\n"
    assert done.stderr == ""


def test_without_quiet_blenders_useful_lines_stay_and_egl_noise_goes(level, tmp_path):
    done = subprocess.run([sys.executable, SCRIPT, level, "--ignore", "Ground",
                           "--picture", str(tmp_path / "f.png"), "--picture-size", "64x40"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "Read blend" in done.stdout
    assert "EGL" not in done.stderr and "Checking" in done.stderr
