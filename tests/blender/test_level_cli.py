"""The command line level check: output, reports, exit codes."""

import csv
import io
import json
import os

import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import cli  # noqa: E402


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
    assert "depth 0.2000" in out and "gap 0.0300" in out


def test_a_clean_level_exits_with_0(clean_level):
    result, out, _ = run(clean_level)
    assert result.code == cli.EXIT_CLEAN
    assert "No findings" in out


def test_without_ignoring_the_floor_everything_touching_it_is_too_close(level):
    result, _, _ = run(level, "--clearance", "0.05")
    touching_floor = {f.object_b if f.object_a == "Floor" else f.object_a
                      for f in result.findings if "Floor" in (f.object_a, f.object_b)}
    assert touching_floor == {"Crate", "Barrel", "Keg", "Lonely"}


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
    report, table = tmp_path / "out" / "report.json", tmp_path / "out" / "report.csv"
    result, out, _ = run(level, "--clearance", "0.05", "--ignore", "Ground",
                         "--json", report, "--csv", table)
    data = json.loads(report.read_text())
    assert data["counts"] == {"overlap": 1, "too_close": 1}
    assert data["options"]["clearance"] == 0.05 and data["options"]["ignore"] == ["Ground"]
    assert data["objects_checked"] == 4
    assert [(f["kind"], f["object_a"], f["object_b"]) for f in data["findings"]] == [
        ("overlap", "Barrel", "Crate"), ("too_close", "Barrel", "Keg")]
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert [r["object_b"] for r in rows] == ["Crate", "Keg"]
    assert float(rows[0]["distance"]) == pytest.approx(-0.2, abs=1e-5)


def test_checking_twice_writes_identical_reports(level, tmp_path):
    outputs = []
    for k in range(2):
        report, table = tmp_path / f"r{k}.json", tmp_path / f"r{k}.csv"
        run(level, "--clearance", "0.05", "--json", report, "--csv", table)
        outputs.append((report.read_text(), table.read_text()))
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


def test_quiet_prints_the_counts_only(level):
    result, out, _ = run(level, "--ignore", "Ground", "--quiet")
    assert "1 finding: 1 overlap, 0 too close" in out
    assert "object A" not in out


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
