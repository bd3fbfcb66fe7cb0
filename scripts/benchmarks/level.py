"""Level check at scale: 1k / 10k / 50k scattered objects at a fixed density, end to end; and
levels with concave objects beside a convex-only level of the same size.

Each level is built by ``demo_level.build_scattered_level`` (one prop per 9 m² of floor: shared
primitive meshes, non-uniform scales, rigid-body primitives, a few meshes with modifiers), saved,
and opened again; the time is then ``check_scene`` on the open file, the way a user runs it
(object -> shape conversion included), split by phase. Each size is opened and checked
``REPEATS`` times from scratch (hull cache emptied); the medians are printed, and the growth
factor says how the time per object changes from one size to the next (1.0 = linear). A last
row checks a level where no two objects share geometry: the cost of one hull per object.

Concave levels (issue 11), at ``CONCAVE_SIZE`` objects and the same density, each beside the
convex-only level of that size (its "× convex" column is the ratio of µs per object):
- *compound-heavy*: one object in five a kit piece whose Shape is Convex Parts (arches of 3
  loose boxes, tables of 5, L-walls of 2; one shared mesh per kind), the rest convex props
  (``demo_level.build_compound_level``);
- *terrain*: the props standing on one terrain object of 100,352 triangles (a 224 × 224 grid of
  hills) whose Shape is Triangle Mesh, most 6–30 cm clear of the ground, a tenth within the
  clearance, a twentieth sunk up to 5 cm (``demo_level.build_terrain_level``).

    python scripts/bench.py level                  # 1k, 10k, 50k, 1k unique; 10k concave levels
    python scripts/bench.py level --configs 1000   # only the scattered sizes up to 1k, then the same
    python scripts/bench.py level --quick          # 300, 1k, 200 unique; 1k concave (20k triangles)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

SIZES = (1_000, 10_000, 50_000)
QUICK_SIZES = (300, 1_000)
# The worst case besides: every object its own geometry (no instancing, no shared hulls).
UNIQUE_SIZE = 1_000
QUICK_UNIQUE_SIZE = 200
REPEATS = 3            # opens + checks per size (median reported)
REPEATS_LARGE = 1      # for sizes above LARGE (each run is long and barely noisy)
LARGE = 20_000
CLEARANCE = 0.05

PHASES = ("collect", "shapes", "aabbs", "broad_phase", "cull", "narrow_phase")

# Concave levels: objects, and terrain cells (2 × cells² triangles).
CONCAVE_SIZE, QUICK_CONCAVE_SIZE = 10_000, 1_000
TERRAIN_CELLS, QUICK_TERRAIN_CELLS = 224, 100


def _check_once(path):
    """Open ``path`` and check it as a fresh Blender session would: the hull cache (which a
    session keeps across files) is emptied first."""
    import bpy

    from convex_tools import level_check, objects
    from convex_tools.core.level import Stats

    objects.clear_cache()
    t0 = time.perf_counter()
    bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
    t1 = time.perf_counter()
    stats = Stats()
    level_run = level_check.LevelRun(None, CLEARANCE)
    findings = level_run.run()
    t2 = time.perf_counter()
    stats.__dict__.update(level_run.stats.__dict__)
    concave = sum(objects.is_concave(level_run.check.shapes[i])
                  for i in range(len(level_run.names)))
    return t1 - t0, t2 - t1, stats, findings, concave


def run(args):
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

    # Registered for every row alike: the concave levels' Shape settings need it.
    convex_tools.register()
    try:
        _run(args, demo_level)
    finally:
        convex_tools.unregister()


def _run(args, demo_level):
    import bpy

    sizes = QUICK_SIZES if args.quick else SIZES
    if getattr(args, "configs", None):
        sizes = tuple(s for s in sizes if s <= args.configs) or sizes[:1]
    print(f"clearance {CLEARANCE} m, one object per 9 m² of floor; times in seconds, medians of "
          f"{REPEATS} opens+checks ({REPEATS_LARGE} above {LARGE:,} objects)")
    header = (f"{'objects':>8} {'built':>6} {'pairs':>7} {'found':>6} {'open':>6} {'check':>7} "
              + " ".join(f"{p:>12}" for p in PHASES) + f" {'µs/object':>10} {'growth':>7}")
    print(header)
    previous = None
    runs_to_do = [(n, False) for n in sizes]
    runs_to_do.append((QUICK_UNIQUE_SIZE if args.quick else UNIQUE_SIZE, True))
    with tempfile.TemporaryDirectory(prefix="convex_level_bench_") as folder:
        for n, unique in runs_to_do:
            if unique:
                print("every object with its own geometry (nothing shared; a first check builds "
                      "one hull per object):")
                previous = None
            t = time.perf_counter()
            demo_level.build_scattered_level(n, unique=unique)
            row = _measure(folder, f"level_{n}{'_unique' if unique else ''}", n,
                           1 if unique else (REPEATS if n <= LARGE else REPEATS_LARGE),
                           time.perf_counter() - t)
            per_object = row["check"] / n
            growth = "" if previous is None else f"{per_object / previous:7.2f}"
            previous = per_object
            print(_line(f"{n:>8,}", row, n) + f" {growth:>7}   (built in {row['build']:.1f} s)",
                  flush=True)
        print("built: shapes built by shape_from_object (the others are instances of one of "
              "them, moved by their matrix); pairs: pairs measured by GJK after the broad "
              "phase; growth: µs/object relative to the previous size (1.00 = linear)")

        n = QUICK_CONCAVE_SIZE if args.quick else CONCAVE_SIZE
        cells = QUICK_TERRAIN_CELLS if args.quick else TERRAIN_CELLS
        print(f"\nconcave levels, {n:,} objects each (same density, clearance, medians of "
              f"{REPEATS}); × convex: µs per object relative to the convex-only level")
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


def _measure(folder, name, n, repeats, build_seconds):
    """Save the level built in the open scene, then open and check it ``repeats`` times."""
    import bpy

    path = os.path.join(folder, f"{name}.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    runs = [_check_once(path) for _ in range(repeats)]
    stats, findings = runs[0][2], runs[0][3]
    row = {"build": build_seconds, "stats": stats, "findings": findings,
           "open": statistics.median(r[0] for r in runs),
           "check": statistics.median(r[1] for r in runs),
           "phases": {p: statistics.median(r[2].times.get(p, 0.0) for r in runs)
                      for p in PHASES},
           "concave": runs[0][4], "parts": getattr(stats, "part_culled", 0),
           "penetrations": stats.penetrations}
    os.remove(path)
    return row


def _line(label, row, n):
    stats = row["stats"]
    return (f"{label} {stats.shapes_made:>6,} {stats.narrow:>7,} {len(row['findings']):>6} "
            f"{row['open']:>6.2f} {row['check']:>7.2f} "
            + " ".join(f"{row['phases'][p]:>12.3f}" for p in PHASES)
            + f" {1e6 * row['check'] / n:>10.1f}")
