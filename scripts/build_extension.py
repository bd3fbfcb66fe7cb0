#!/usr/bin/env python3
"""Build the Blender extension archive ``convex_tools-<version>.zip`` and validate it.

    scripts/run.sh python scripts/build_extension.py [--out DIR]

The add-on package is the ``convex_tools/`` folder of the repository and the manifest is
``blender_manifest.toml`` at the repository top level. Blender imports the *root* of an extension
archive as the package ``bl_ext.<repository>.convex_tools``, so the archive must hold the manifest
next to the contents of ``convex_tools/`` (its ``__init__.py``, ``core/`` ...). The script therefore:

1. stages the manifest and a copy of ``convex_tools/`` (without tests, ``__pycache__``, ``*.pyc``)
   in a temporary folder;
2. builds the archive from it with Blender's own extension tool (``blender_ext.py build`` from
   the ``bl_pkg`` add-on bundled with Blender / the bpy module), which applies the manifest's
   ``[build] paths_exclude_pattern`` and checks the manifest;
3. validates the archive with ``blender_ext.py validate`` (tags checked against Blender's list);
4. checks the archive layout (manifest and ``__init__.py`` at the root, every module of the
   package present, nothing excluded leaking in).

The exit status is 0 only when every step passed. ``blender_ext.py`` is found inside the
installed bpy module (or Blender install); ``--blender-ext PATH`` or the environment variable
``BLENDER_EXT_CLI`` overrides that.
"""

from __future__ import annotations

import argparse
import fnmatch
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "blender_manifest.toml")
PACKAGE_DIR = os.path.join(ROOT, "convex_tools")

# Never copied into the staging folder (the manifest's [build] section filters again).
STAGING_IGNORE = ("__pycache__", "*.pyc", "*.pyo", "tests", "test_*.py", ".*", "*.zip")

_BL_PKG_CLI = os.path.join("scripts", "addons_core", "bl_pkg", "cli", "blender_ext.py")
_TAGS_PY = os.path.join("scripts", "modules", "_bpy_internal", "extensions", "tags.py")


@dataclass
class BuildResult:
    ok: bool = False
    archive: str = ""
    files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)


def read_manifest(path: str = MANIFEST) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def _resource_roots() -> list[str]:
    """Blender's versioned resource folders (``.../bpy/5.0``), without importing bpy."""
    roots = []
    spec = importlib.util.find_spec("bpy")
    if spec is not None and spec.origin:
        bpy_dir = os.path.dirname(spec.origin)
        roots += sorted(glob.glob(os.path.join(bpy_dir, "[0-9]*.[0-9]*")), reverse=True)
    return roots


def find_blender_ext(explicit: str | None = None) -> str | None:
    """The path of Blender's ``blender_ext.py`` command line tool, or None."""
    for candidate in (explicit, os.environ.get("BLENDER_EXT_CLI")):
        if candidate:
            return candidate if os.path.isfile(candidate) else None
    for root in _resource_roots():
        path = os.path.join(root, _BL_PKG_CLI)
        if os.path.isfile(path):
            return path
    return None


def find_valid_tags(blender_ext: str) -> str:
    """Blender's list of valid tags (``tags.py``) next to the tool, or "" (no tag check)."""
    # blender_ext.py is <res>/scripts/addons_core/bl_pkg/cli/blender_ext.py.
    res = blender_ext
    for _ in range(5):
        res = os.path.dirname(res)
    path = os.path.join(res, _TAGS_PY)
    return path if os.path.isfile(path) else ""


def _run(cmd: list[str], result: BuildResult, rename: tuple[str, str] | None = None) -> bool:
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    out = (proc.stdout + proc.stderr).strip()
    if rename:  # Report the staged manifest under its real name.
        out = out.replace(*rename)
    for line in out.splitlines():
        result.log.append("    " + line)
    if proc.returncode != 0:
        lines = out.splitlines() or ["(no output)"]
        first_error = next((line for line in lines if "ERROR" in line), lines[-1])
        result.errors.append(f"{os.path.basename(cmd[1])} {cmd[2]} exited with {proc.returncode}: "
                             + first_error)
        return False
    return True


def _package_sources() -> list[str]:
    """Archive names expected from ``convex_tools/``: every .py not under tests or caches."""
    names = []
    for dirpath, dirnames, filenames in os.walk(PACKAGE_DIR):
        dirnames[:] = [d for d in dirnames
                       if not any(fnmatch.fnmatch(d, p) for p in STAGING_IGNORE)]
        for name in filenames:
            if name.endswith(".py") and not any(fnmatch.fnmatch(name, p) for p in STAGING_IGNORE):
                rel = os.path.relpath(os.path.join(dirpath, name), PACKAGE_DIR)
                names.append(rel.replace(os.sep, "/"))
    return sorted(names)


_ABSOLUTE_IMPORT = re.compile(r"^\s*(from\s+convex_tools[\s.]|import\s+convex_tools\b)", re.M)


def check_archive(path: str, result: BuildResult) -> None:
    """Layout checks that Blender's validator does not make."""
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        result.files = names
        for required in ("blender_manifest.toml", "__init__.py"):
            if required not in names:
                result.errors.append(f"archive lacks {required} at its root")
        for rel in _package_sources():
            if rel not in names:
                result.errors.append(f"archive lacks convex_tools/{rel}")
        for name in names:
            parts = name.split("/")
            if ("__pycache__" in parts or name.endswith((".pyc", ".pyo"))
                    or "tests" in parts[:-1] or parts[-1].startswith("test_")):
                result.errors.append(f"archive holds an excluded file: {name}")
            if name.endswith(".py"):
                # Installed, the package is bl_ext.<repo>.convex_tools: absolute imports break.
                text = zf.read(name).decode("utf-8", "replace")
                if _ABSOLUTE_IMPORT.search(text):
                    result.warnings.append(f"{name} imports convex_tools absolutely; use relative "
                                           "imports (installed, the package is "
                                           "bl_ext.<repo>.convex_tools)")


def build(out_dir: str, blender_ext: str | None = None, manifest_path: str = MANIFEST) -> BuildResult:
    result = BuildResult()
    manifest = read_manifest(manifest_path)
    ext_id, version = manifest.get("id", "?"), manifest.get("version", "?")
    os.makedirs(out_dir, exist_ok=True)
    result.archive = os.path.join(os.path.abspath(out_dir), f"{ext_id}-{version}.zip")

    tool = find_blender_ext(blender_ext)
    if tool is None:
        result.errors.append("Blender's blender_ext.py not found (is bpy installed? run this "
                             "script as `scripts/run.sh python scripts/build_extension.py`; or "
                             "pass --blender-ext / BLENDER_EXT_CLI)")
        return result
    tags = find_valid_tags(tool)
    tag_args = [f"--valid-tags={tags}"] if tags else ["--valid-tags="]
    if not tags:
        result.warnings.append("Blender's tags.py not found: tags were not validated")
    result.log.append(f"  tool: {tool}")

    if os.path.exists(result.archive):
        os.remove(result.archive)

    with tempfile.TemporaryDirectory(prefix="convex_tools_ext_") as staging:
        shutil.copytree(PACKAGE_DIR, staging, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(*STAGING_IGNORE))
        shutil.copy2(manifest_path, os.path.join(staging, "blender_manifest.toml"))
        result.log.append("  build:")
        if not _run([sys.executable, tool, "build", "--source-dir", staging,
                     "--output-filepath", result.archive, *tag_args], result,
                    rename=(os.path.join(staging, "blender_manifest.toml"), manifest_path)):
            return result

    if not os.path.isfile(result.archive):
        result.errors.append(f"the build did not write {result.archive}")
        return result
    result.log.append("  validate:")
    if not _run([sys.executable, tool, "validate", *tag_args, result.archive], result):
        return result
    check_archive(result.archive, result)
    result.ok = not result.errors
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "build"),
                        help="output folder (default: build/ in the repository)")
    parser.add_argument("--blender-ext", default=None,
                        help="path of Blender's blender_ext.py (default: found in the bpy module)")
    parser.add_argument("--manifest", default=MANIFEST,
                        help="manifest to build with (default: blender_manifest.toml in the repository)")
    parser.add_argument("--verbose", "-v", action="store_true", help="list the archive's files")
    args = parser.parse_args(argv)

    manifest = read_manifest(args.manifest)
    result = build(args.out, args.blender_ext, os.path.abspath(args.manifest))
    print(f"Extension {manifest.get('id')} {manifest.get('version')} "
          f"(Blender >= {manifest.get('blender_version_min')})")
    for line in result.log:
        print(line)
    if args.verbose:
        for name in result.files:
            print(f"    {name}")
    for warning in result.warnings:
        print(f"WARNING: {warning}")
    for error in result.errors:
        print(f"ERROR: {error}")
    if result.ok:
        size = os.path.getsize(result.archive)
        print(f"OK: {result.archive} ({len(result.files)} files, {size / 1024:.1f} KiB), "
              "validated by Blender's extension validator")
        return 0
    print("FAILED: the extension was not built or did not validate")
    return 1


if __name__ == "__main__":
    sys.exit(main())
