"""The main job, ``bash scripts/demo.sh``: it runs from any folder, finds exactly what it planted,
and the README's description of it matches what it prints."""

import json
import os
import re
import subprocess

import pytest

pytest.importorskip("bpy")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_demo_sh_builds_checks_and_matches_the_readme(tmp_path):
    done = subprocess.run(["bash", os.path.join(ROOT, "scripts", "demo.sh"), "--out",
                           str(tmp_path), "--no-picture"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Demo OK: the check found exactly the 26 planted problems" in done.stdout
    built = re.search(r"Built the demo level: (\d+) props on a floor \((\d+) objects\)",
                      done.stdout)
    assert built, done.stdout
    props, objects = map(int, built.groups())
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["complete"] is True and report["objects_checked"] == props
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = " ".join(f.read().split())
    assert f"{props} props of every shape kind" in readme
    assert f"on a floor, {objects} objects in all. It checks the {props} props" in readme
    assert "Saved as" not in done.stdout and "EGL" not in done.stderr
