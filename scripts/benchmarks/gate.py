"""The level check as a build gate: many files in one run against one run per file.

Builds ``FILES`` scattered levels of ``OBJECTS`` objects each (``demo_level.
build_scattered_level``, a seed per file), saves them, and times, wall clock, end to end as CI
runs them:

- *one run*: ``check_level.py`` over every file in one process (Blender's start-up and the
  add-on's registration paid once);
- *a run per file*: ``check_level.py`` once per file, each a fresh process.

Both write a JSON report per run; the file sections must be the same (the one run's sections
equal, byte for byte, the separate runs' sections), and so must the exit codes' verdicts.

    python scripts/bench.py gate            # 20 files of 1,000 objects
    python scripts/bench.py gate --quick    # 5 files of 300 objects
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

FILES, OBJECTS = 20, 1_000
QUICK_FILES, QUICK_OBJECTS = 5, 300
CLEARANCE = "0.05"

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check_level.py")


def run(args):
    try:
        import bpy  # noqa: F401
    except ImportError:
        print("skipped: needs the bpy module (source scripts/env.sh)")
        return
    import demo_level    # scripts/ is on the path (bench.py)

    files, objects = (QUICK_FILES, QUICK_OBJECTS) if args.quick else (FILES, OBJECTS)
    with tempfile.TemporaryDirectory(prefix="convex_gate_bench_") as folder:
        t0 = time.perf_counter()
        paths = [_level(demo_level, folder, k, objects) for k in range(files)]
        print(f"built {files} levels of {objects} objects in {time.perf_counter() - t0:.1f} s",
              flush=True)

        one_json = os.path.join(folder, "one.json")
        t0 = time.perf_counter()
        one_code = _check(paths, one_json)
        one_seconds = time.perf_counter() - t0

        separate_codes, sections = [], []
        t0 = time.perf_counter()
        for k, path in enumerate(paths):
            report = os.path.join(folder, f"separate{k}.json")
            separate_codes.append(_check([path], report))
            sections.append(_sections(report)[0])
        separate_seconds = time.perf_counter() - t0

        same = _sections(one_json) == sections
        findings = sum(len(s["findings"]) for s in sections)
        verdict = max(separate_codes) == one_code
    print(f"{files} files x {objects} objects ({findings} findings in all):")
    print(f"  one run                  {one_seconds:7.2f} s   ({one_seconds / files:.2f} s a file)")
    print(f"  a run per file           {separate_seconds:7.2f} s   "
          f"({separate_seconds / files:.2f} s a file)")
    print(f"  one run is {separate_seconds / one_seconds:.1f}x faster; same file sections: "
          f"{'yes' if same else 'NO'}; same verdict (exit {one_code}): "
          f"{'yes' if verdict else 'NO'}")


def _level(demo_level, folder, k, objects):
    import bpy

    demo_level.build_scattered_level(objects, seed=100 + k)
    path = os.path.join(folder, f"level{k:02d}.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    return path


def _check(paths, report):
    done = subprocess.run([sys.executable, SCRIPT, *paths, "--clearance", CLEARANCE, "--quiet",
                           "--json", report], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"check_level.py exited with {done.returncode}: {done.stderr}")
    return done.returncode


def _sections(report):
    with open(report, encoding="utf-8") as f:
        return json.load(f)["files"]
