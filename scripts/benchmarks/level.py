"""Level check at scale: 1k / 10k / 100k scattered objects at a fixed density, end to end, three
ways; and levels with concave objects beside a convex-only level of the same size.

Each level is built by ``demo_level.build_scattered_level`` (one prop per 9 m² of floor: shared
primitive meshes, non-uniform scales, rigid-body primitives, a few meshes with modifiers), saved,
and opened again; the time is then ``check_scene`` on the open file, the way a user runs it
(object -> shape conversion included, the hull cache emptied first), split by phase. Each size
is checked in three modes, each on the file opened afresh:

- *single*: every candidate pair by the single queries, in this process (the check as it was
  before the batched engine);
- *batched*: the batched engine screens the pairs, the single queries measure the rest;
- *batched+jobs*: as batched, the single queries shared out to one worker process per core.

The findings of the three must be the same byte for byte (the JSON reports are compared). The
columns give, per mode, the check's wall time, the narrow phase's µs per candidate pair (after
the box cull) and the whole check's µs per object. A last row checks a level where no two
objects share geometry: the cost of one hull per object.

Concave levels (issue 11), at ``CONCAVE_SIZE`` objects and the same density, each beside the
convex-only level of that size (its "× convex" column is the ratio of µs per object):
- *compound-heavy*: one object in five a kit piece whose Shape is Convex Parts (arches of 3
  loose boxes, tables of 5, L-walls of 2; one shared mesh per kind), the rest convex props
  (``demo_level.build_compound_level``);
- *terrain*: the props standing on one terrain object of 100,352 triangles (a 224 × 224 grid of
  hills) whose Shape is Triangle Mesh, most 6–30 cm clear of the ground, a tenth within the
  clearance, a twentieth sunk up to 5 cm (``demo_level.build_terrain_level``).

    python scripts/bench.py level                  # 1k, 10k, 100k, 1k unique; 10k concave levels
    python scripts/bench.py level --configs 10000  # only the scattered sizes up to 10k
    python scripts/bench.py level --quick          # 300, 1k, 200 unique; 1k concave (20k triangles)
    python scripts/bench.py level --baseline ../old   # also time another checkout's check
                                                      # (e.g. git worktree add ../old 560ddc2)
"""

from __future__ import annotations

import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (300, 1_000)
# The worst case besides: every object its own geometry (no instancing, no shared hulls).
UNIQUE_SIZE = 1_000
QUICK_UNIQUE_SIZE = 200
REPEATS = 3            # opens + checks per size and mode (median reported)
REPEATS_LARGE = 1      # for sizes above LARGE (each run is long and barely noisy)
LARGE = 20_000
CLEARANCE = 0.05
# (label, batched, jobs): jobs None is one worker process per core.
MODES = (("single", False, 1), ("batched", True, 1), ("batched+jobs", True, None))

PHASES = ("collect", "shapes", "aabbs", "broad_phase", "cull", "narrow_phase")

# Concave levels: objects, and terrain cells (2 × cells² triangles).
CONCAVE_SIZE, QUICK_CONCAVE_SIZE = 10_000, 1_000
TERRAIN_CELLS, QUICK_TERRAIN_CELLS = 224, 100


def _check_once(path, batched=True, jobs=1, root=None):
    """Open ``path`` and check it as a fresh Blender session would: in a new process (as the
    command line runs it: one that opened several large files before is slower for it) with
    the add-on registered; ``root``: another checkout's code to run instead (``--baseline``,
    its LevelRun as it was: ``batched`` and ``jobs`` None). (open s, check s, stats, findings,
    concave objects)."""
    with tempfile.TemporaryDirectory(prefix="convex_level_run_") as folder:
        out = os.path.join(folder, "result.pickle")
        env = child_env(root)
        # (run from the temporary folder: ``python -c`` puts the working folder first on the
        # path, which would import this checkout's code for the baseline too)
        subprocess.run([sys.executable, "-c", _CHILD, path, repr(batched), repr(jobs), out,
                        root or ROOT], check=True, env=env, stdout=subprocess.DEVNULL,
                       cwd=folder)
        with open(out, "rb") as f:
            return pickle.load(f)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child_env(root=None):
    """The environment of a child process that imports ``root``'s code (default: this
    checkout's): that checkout first on PYTHONPATH, this one not at all unless it is ``root``."""
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != ROOT]
    return dict(os.environ, PYTHONPATH=os.pathsep.join([root or ROOT] + rest))

# The check in a process of its own (``_check_once``).
_CHILD = """
import pickle, sys, time
import bpy
import convex_tools
assert convex_tools.__file__.startswith(sys.argv[5]), convex_tools.__file__
from convex_tools import level_check, objects
path, batched, jobs, out = sys.argv[1], eval(sys.argv[2]), eval(sys.argv[3]), sys.argv[4]
convex_tools.register()
try:                          # the process tuned as the command line tunes its own
    from convex_tools.cli import keep_freed_memory
except ImportError:           # (an older checkout: as its command line ran)
    pass
else:
    keep_freed_memory()
t0 = time.perf_counter()
bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
t1 = time.perf_counter()
if batched is None:           # another version's check, as it was
    level_run = level_check.LevelRun(None, %r)
    findings = level_run.run()
else:
    level_run = level_check.LevelRun(None, %r, batched=batched)
    findings = level_run.run(jobs=jobs)
t2 = time.perf_counter()
concave = sum(objects.is_concave(level_run.check.shapes[i]) for i in range(len(level_run.names)))
with open(out, "wb") as f:
    pickle.dump((t1 - t0, t2 - t1, level_run.stats, findings, concave), f)
""" % (CLEARANCE, CLEARANCE)


def run(args):
    blender_section(args, _run)


def baseline_checkout(args):
    """The --baseline checkout's absolute path (None without one); exits when it is not a
    checkout of this repository."""
    baseline = getattr(args, "baseline", None)
    if baseline is not None:
        baseline = os.path.abspath(baseline)
        if not os.path.isdir(os.path.join(baseline, "convex_tools")):
            raise SystemExit(f"--baseline {baseline}: not a checkout of this repository")
    return baseline


def blender_section(args, body):
    """Run ``body(args, demo_level)`` with the add-on registered (the levels' Shape settings
    and rules need it); skipped without the bpy module."""
    try:
        import bpy  # noqa: F401
    except ImportError:
        print("skipped: needs the bpy module (source scripts/env.sh)")
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if here not in sys.path:
        sys.path.insert(0, here)
    import demo_level

    import convex_tools

    convex_tools.register()
    try:
        body(args, demo_level)
    finally:
        convex_tools.unregister()


def _run(args, demo_level):
    import bpy

    from convex_tools.core.level import default_jobs

    baseline = baseline_checkout(args)

    sizes = QUICK_SIZES if args.quick else SIZES
    if getattr(args, "configs", None):
        sizes = tuple(s for s in sizes if s <= args.configs) or sizes[:1]
    print(f"clearance {CLEARANCE} m, one object per 9 m² of floor; wall times in seconds, "
          f"medians of {REPEATS} opens+checks ({REPEATS_LARGE} above {LARGE:,} objects); "
          f"batched+jobs uses {default_jobs()} processes")
    print(f"{'objects':>8} {'built':>6} {'cands':>7} {'pairs':>7} {'found':>6} {'open':>6} "
          + " ".join(f"{m + ' s':>15} {'µs/pair':>8} {'µs/obj':>7}" for m, _, _ in MODES)
          + "  findings")
    with tempfile.TemporaryDirectory(prefix="convex_level_bench_") as folder:
        for n in sizes:
            t = time.perf_counter()
            demo_level.build_scattered_level(n)
            built = time.perf_counter() - t
            repeats = REPEATS if n <= LARGE else REPEATS_LARGE
            rows = _measure_modes(folder, f"level_{n}", repeats, baseline)
            today = rows.pop(0) if baseline else None
            first = rows[0]
            stats = first["stats"]
            line = (f"{n:>8,} {stats.shapes_made:>6,} {stats.candidates:>7,} "
                    f"{stats.narrow:>7,} {len(first['findings']):>6} {first['open']:>6.2f}")
            for row in rows:
                candidates = max(1, row["stats"].candidates)
                line += (f" {row['check']:>15.2f} {1e6 * row['phases']['narrow_phase'] / candidates:>8.1f}"
                         f" {1e6 * row['check'] / n:>7.1f}")
            same = _same_findings(rows[0]["findings"], rows[1]["findings"])
            jobs_same = rows[1]["report"] == rows[2]["report"]
            if today is not None:
                best = min(r["check"] for r in rows)
                line += (f"  baseline {today['check']:.2f} s, {today['check'] / best:.1f}× "
                         f"the fastest mode (its findings against batched: "
                         f"{_same_findings(today['findings'], rows[1]['findings'])})")
            print(line + f"  {same}; jobs {'byte for byte' if jobs_same else 'DIFFER'}   "
                  f"(built in {built:.1f} s; phases of batched+jobs: "
                  + ", ".join(f"{p} {rows[-1]['phases'][p]:.2f}" for p in PHASES) + ")",
                  flush=True)
        print("built: shapes built by shape_from_object (the others are instances of one of "
              "them, moved by their matrix); cands: candidate pairs of the broad phase; pairs: "
              "after the box cull; µs/pair: narrow phase per candidate pair; µs/obj: the whole "
              "check per object; same: the batched findings against the single queries' (the "
              "same pairs and kinds; the largest difference in distance; how many witness "
              "points differ, as they may where the contact is a segment or a face), and "
              "whether the batched+jobs report equals the batched one byte for byte")

        n = QUICK_UNIQUE_SIZE if args.quick else UNIQUE_SIZE
        print("\nevery object with its own geometry (nothing shared; a first check builds one "
              "hull per object), batched+jobs:")
        print(f"{'objects':>8} {'built':>6} {'pairs':>7} {'found':>6} {'open':>6} {'check':>7} "
              + " ".join(f"{p:>12}" for p in PHASES) + f" {'µs/object':>10}")
        demo_level.build_scattered_level(n, unique=True)
        row = _measure(folder, f"level_{n}_unique", n, REPEATS, 0.0)
        print(_line(f"{n:>8,}", row, n), flush=True)

        n = QUICK_CONCAVE_SIZE if args.quick else CONCAVE_SIZE
        cells = QUICK_TERRAIN_CELLS if args.quick else TERRAIN_CELLS
        print(f"\nconcave levels, {n:,} objects each (same density, clearance, medians of "
              f"{REPEATS}, batched+jobs); × convex: µs per object relative to the convex-only "
              f"level")
        print(f"{'level':>14} {'built':>6} {'pairs':>7} {'found':>6} {'open':>6} {'check':>7} "
              + " ".join(f"{p:>12}" for p in PHASES) + f" {'µs/object':>10} {'× convex':>8}")
        builders = [("convex-only", lambda: demo_level.build_scattered_level(n)),
                    ("compound-heavy", lambda: demo_level.build_compound_level(n)),
                    (f"terrain {2 * cells * cells // 1000}k tri",
                     lambda: demo_level.build_terrain_level(n, cells=cells))]
        convex = None
        for label, build in builders:
            t = time.perf_counter()
            build()
            row = _measure(folder, label.split()[0], n, REPEATS, time.perf_counter() - t)
            per_object = row["check"] / n
            convex = convex or per_object
            print(_line(f"{label:>14}", row, n) + f" {per_object / convex:8.2f}   "
                  f"(built in {row['build']:.1f} s; {row['concave']} concave, "
                  f"{row['parts']} parts culled, {row['penetrations']} depths)", flush=True)
        bpy.ops.wm.read_factory_settings(use_empty=True)


def _same_findings(single, batched):
    """How the batched findings compare with the single queries'."""
    if [(f.object_a, f.object_b, f.kind) for f in single] != \
            [(f.object_a, f.object_b, f.kind) for f in batched]:
        return "DIFFERENT PAIRS"
    largest = max((abs(f.distance - g.distance) for f, g in zip(single, batched)),
                  default=0.0)
    moved = sum(not (np.allclose(f.point_a, g.point_a, rtol=0.0, atol=1e-9)
                     and np.allclose(f.point_b, g.point_b, rtol=0.0, atol=1e-9))
                for f, g in zip(single, batched))
    return f"same pairs, distances within {largest:.0e}, {moved} witness points moved"


def _measure_modes(folder, name, repeats, baseline=None):
    """Save the level built in the open scene; check it ``repeats`` times in each mode (and
    with the ``baseline`` checkout's code, first, if given)."""
    from convex_tools.core.level import report_json

    path = _saved(folder, name)
    rows = []
    modes = [(None, None, baseline)] if baseline else []
    modes += [(batched, jobs, None) for _, batched, jobs in MODES]
    for batched, jobs, root in modes:
        row = _row([_check_once(path, batched, jobs, root) for _ in range(repeats)])
        row["report"] = report_json(row["findings"])
        rows.append(row)
    os.remove(path)
    return rows


def _measure(folder, name, n, repeats, build_seconds):
    """Save the level built in the open scene, then open and check it ``repeats`` times
    (batched, one worker per core)."""
    path = _saved(folder, name)
    runs = [_check_once(path, True, None) for _ in range(repeats)]
    os.remove(path)
    row = _row(runs)
    row.update(build=build_seconds, concave=runs[0][4],
               parts=getattr(row["stats"], "part_culled", 0),
               penetrations=row["stats"].penetrations)
    return row


def _saved(folder, name):
    """The level in the open scene saved as ``name``.blend in ``folder``: its path."""
    import bpy

    path = os.path.join(folder, f"{name}.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    return path


def _row(runs):
    """Medians of the runs' open and check times and phases; the first run's stats and
    findings."""
    return {"open": statistics.median(r[0] for r in runs),
            "check": statistics.median(r[1] for r in runs),
            "phases": {p: statistics.median(r[2].times.get(p, 0.0) for r in runs)
                       for p in PHASES},
            "stats": runs[0][2], "findings": runs[0][3]}


def _line(label, row, n):
    stats = row["stats"]
    return (f"{label} {stats.shapes_made:>6,} {stats.narrow:>7,} {len(row['findings']):>6} "
            f"{row['open']:>6.2f} {row['check']:>7.2f} "
            + " ".join(f"{row['phases'][p]:>12.3f}" for p in PHASES)
            + f" {1e6 * row['check'] / n:>10.1f}")
