"""The main job, ``bash scripts/demo.sh``: it runs from any folder, finds exactly what it planted,
and the README's description of it matches what it prints."""

import json
import os
import re
import subprocess

import pytest

pytest.importorskip("bpy")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``bash scripts/demo.sh`` run once from a folder of its own: (its output, the folder)."""
    tmp_path = tmp_path_factory.mktemp("demo")
    done = subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo.sh"), "--out",
                           str(tmp_path), "--no-picture"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    return done, tmp_path


def test_demo_sh_builds_checks_and_matches_the_readme(demo):
    done, tmp_path = demo
    assert done.returncode == 0, done.stdout + done.stderr
    planted = re.search(r"Demo OK: the check found exactly the (\d+) planted problems",
                        done.stdout)
    assert planted, done.stdout
    planted = int(planted.group(1))
    assert planted == 29
    built = re.search(r"Built the demo level: (\d+) props and concave set pieces .* on a floor, "
                      r"(\d+) objects in all", done.stdout)
    assert built, done.stdout
    props, objects = map(int, built.groups())
    report = json.loads((tmp_path / "report.json").read_text())
    checked = report["files"][0]["objects_checked"]
    assert report["complete"] is True
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = " ".join(f.read().split())
    assert f"{props} props of every shape kind" in readme
    assert f"on a floor, {objects} objects in all. It checks {checked} of them" in readme
    assert f"It finds exactly the {planted} problems planted among them — 18 overlaps, 6 too " \
           f"close, 3 sunk" in readme and "and 2 floating" in readme
    kinds = [f["kind"] for f in report["files"][0]["findings"]]
    assert [kinds.count(k) for k in ("overlap", "too_close", "sunk", "floating")] == \
        [18, 6, 3, 2]
    # One finding per planted problem: none found twice (the script compares sets); and the
    # traversal check's six (three places, each with its reason).
    level = [f for f in report["files"][0]["findings"] if f["kind"] in
             ("overlap", "too_close", "sunk", "floating")]
    assert len(level) == planted
    travel = sorted((f["kind"], f["object_a"]) for f in report["files"][0]["findings"]
                    if f not in level)
    assert travel == [("low_headroom", "Pen"), ("narrow", "Closet"), ("step", "Platform"),
                      ("unreachable", "Floor"), ("unreachable", "Floor"),
                      ("unreachable", "Platform")]
    assert report["files"][0]["traversal"]["starts"] == ["PlayerStart"]
    assert "Saved as" not in done.stdout and "EGL" not in done.stderr


def test_the_demos_concave_set_pieces_give_exactly_their_planted_findings(demo):
    # The three problems planted among the concave set pieces, each naming the part that
    # touches; and nothing else of theirs: not the column under the arch, the crates resting on
    # the terrain, in the room and on the shelves, nor the crate under the UCX-proxied table.
    done, tmp_path = demo
    assert done.returncode == 0, done.stdout + done.stderr
    findings = json.loads((tmp_path / "report.json").read_text())["files"][0]["findings"]
    pieces = ("Terrain", "Room", "Arch", "Column", "Table", "Shelf_")
    # Depths to the float precision of Blender's vertex coordinates.
    concave = sorted((f["object_b"], round(-f["distance"], 4), f["part_b"].split()[0])
                     for f in findings if (f["object_b"] or "").startswith(pieces)
                     or f["object_a"].startswith(pieces))
    assert concave == [("Room", 0.15, "triangle"), ("Shelf_C/Shelf", 0.1, "part"),
                       ("Terrain", 0.1, "triangle")]
