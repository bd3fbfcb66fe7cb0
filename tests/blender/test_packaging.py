"""The extension package: the archive builds, Blender's validator accepts it, and Blender installs,
enables and runs it from an isolated user folder (in a child process, so this one stays clean)."""

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
import zipfile

import pytest

bpy = pytest.importorskip("bpy")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "build_extension.py")
MODULE = "bl_ext.user_default.convex_tools"


def _load_build_script():
    spec = importlib.util.spec_from_file_location("build_extension", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _run_build(out_dir, *extra):
    return subprocess.run([sys.executable, SCRIPT, "--out", str(out_dir), *extra],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    out = tmp_path_factory.mktemp("ext_build")
    proc = _run_build(out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(os.path.join(ROOT, "blender_manifest.toml"), "rb") as fh:
        manifest = tomllib.load(fh)
    path = out / f"{manifest['id']}-{manifest['version']}.zip"
    assert path.is_file(), proc.stdout
    return path, proc.stdout


def test_build_script_builds_and_validates(archive):
    path, output = archive
    assert path.name == "convex_tools-0.1.0.zip"
    assert "Success parsing TOML" in output  # Blender's validator ran on the archive.
    assert output.strip().splitlines()[-1].startswith("OK: ")


def test_blender_validator_accepts_the_archive(archive):
    """Independently of the script's summary: run Blender's own validator on the archive."""
    build_extension = _load_build_script()
    tool = build_extension.find_blender_ext()
    assert tool and os.path.isfile(tool), "blender_ext.py not found in the bpy module"
    tags = build_extension.find_valid_tags(tool)
    assert tags, "Blender's tags.py not found"
    proc = subprocess.run([sys.executable, tool, "validate", f"--valid-tags={tags}", str(archive[0])],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


def test_archive_layout_and_manifest(archive):
    with zipfile.ZipFile(archive[0]) as zf:
        names = set(zf.namelist())
        manifest = tomllib.loads(zf.read("blender_manifest.toml").decode())
    # The package's contents sit at the archive root (Blender imports the root as the package).
    for required in ("blender_manifest.toml", "__init__.py", "core/__init__.py", "core/gjk.py",
                     "operators.py", "api.py"):
        assert required in names, sorted(names)
    assert not any(n.startswith("convex_tools/") for n in names), sorted(names)
    for name in names:
        parts = name.split("/")
        assert "__pycache__" not in parts and not name.endswith((".pyc", ".pyo")), name
        assert "tests" not in parts[:-1] and not parts[-1].startswith("test_"), name
        assert not parts[-1].startswith("."), name
    # Every module of the package made it in.
    package = os.path.join(ROOT, "convex_tools")
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "tests")]
        for filename in filenames:
            if filename.endswith(".py") and not filename.startswith("test_"):
                rel = os.path.relpath(os.path.join(dirpath, filename), package).replace(os.sep, "/")
                assert rel in names, f"{rel} missing from the archive"

    assert manifest["schema_version"] == "1.0.0"
    assert manifest["id"] == "convex_tools"
    assert manifest["version"] == "0.1.0"
    assert manifest["name"] == "Convex Tools"
    assert manifest["type"] == "add-on"
    assert manifest["blender_version_min"] == "4.2.0"
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"]
    assert manifest["permissions"]["files"] == "Write collision reports and pictures"
    assert len(manifest["tagline"]) <= 64 and manifest["tagline"][-1].isalnum()
    assert {"Physics", "Object"} <= set(manifest["tags"])


def test_validator_rejects_a_bad_manifest(tmp_path):
    """The script really relies on Blender's checks: a tagline ending in '.' fails the build."""
    with open(os.path.join(ROOT, "blender_manifest.toml"), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    bad = [('tagline = "Ends with punctuation."' if line.startswith("tagline") else line)
           for line in lines]
    manifest = tmp_path / "blender_manifest.toml"
    manifest.write_text("\n".join(bad) + "\n", encoding="utf-8")
    proc = _run_build(tmp_path / "out", "--manifest", str(manifest))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tagline" in proc.stdout and "FAILED" in proc.stdout
    assert not (tmp_path / "out" / "convex_tools-0.1.0.zip").exists()


# Runs in a fresh Python with BLENDER_USER_RESOURCES pointing at an empty folder: installs the
# archive into the "user_default" extension repository, checks that Blender enabled it, measures
# two cubes 1 m apart with the add-on's operator, then disables the add-on.
CHILD = textwrap.dedent('''
    import json, os, sys
    import bpy, addon_utils

    archive, user_root = sys.argv[1], sys.argv[2]
    module = "bl_ext.user_default.convex_tools"
    out = {}
    repo = next(r for r in bpy.context.preferences.extensions.repos if r.module == "user_default")
    out["repo_dir"] = repo.directory
    out["install"] = sorted(bpy.ops.extensions.package_install_files(
        filepath=archive, repo="user_default", enable_on_install=True))
    out["enabled"] = module in bpy.context.preferences.addons
    out["loaded"] = list(addon_utils.check(module))
    out["module_file"] = sys.modules[module].__file__
    out["repo_checkout_imported"] = "convex_tools" in sys.modules

    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0.0, 0.0, 0.0))
    a = bpy.context.active_object
    a.name = "CubeA"
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=(3.0, 0.0, 0.0))
    b = bpy.context.active_object
    b.name = "CubeB"
    a.select_set(True)
    b.select_set(True)
    bpy.context.view_layer.objects.active = b

    out["operator"] = sorted(bpy.ops.object.convex_distance())
    out["last_result"] = bpy.context.scene.convex_tools.last_result
    import importlib
    api = importlib.import_module(module + ".api")  # the add-on's scripting API, as installed
    out["api_distance"] = float(api.distance(a, b).distance)

    bpy.ops.preferences.addon_disable(module=module)
    out["disabled"] = module not in bpy.context.preferences.addons
    out["operator_gone"] = not hasattr(bpy.types, "OBJECT_OT_convex_distance")
    print("RESULT " + json.dumps(out))
''')


def test_install_enable_and_run_operator(archive, tmp_path):
    user_root = tmp_path / "blender_user"
    user_root.mkdir()
    child = tmp_path / "child.py"
    child.write_text(CHILD, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLENDER_USER_")}
    env["BLENDER_USER_RESOURCES"] = str(user_root)
    # The child must use the installed extension, never the repository checkout.
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in env.get("PYTHONPATH", "").split(os.pathsep)
        if p and os.path.abspath(p) != ROOT)
    proc = subprocess.run([sys.executable, str(child), str(archive[0]), str(user_root)],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=120)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, output
    result = json.loads(lines[-1][len("RESULT "):])

    assert result["repo_dir"].startswith(str(user_root)), result
    assert result["install"] == ["FINISHED"], output
    assert result["enabled"] and result["loaded"] == [True, True], output
    installed = os.path.join(result["repo_dir"], "convex_tools", "__init__.py")
    assert os.path.samefile(result["module_file"], installed), result
    assert not result["repo_checkout_imported"], result
    assert result["operator"] == ["FINISHED"], output
    # The operator's one-line result ("Distance CubeA – CubeB: 1"), also printed as its report.
    text = result["last_result"]
    assert "CubeA" in text and "CubeB" in text, output
    numbers = re.findall(r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", text)
    assert numbers and float(numbers[-1]) == pytest.approx(1.0, abs=1e-5), output
    assert text in proc.stdout, output
    assert result["api_distance"] == pytest.approx(1.0, abs=1e-6), result
    assert result["disabled"] and result["operator_gone"], output
