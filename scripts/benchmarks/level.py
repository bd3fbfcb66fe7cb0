"""Level check at scale: 1k / 10k / 50k scattered objects at a fixed density, end to end.

Each level is built by ``demo_level.build_scattered_level`` (one prop per 9 m² of floor: shared
primitive meshes, non-uniform scales, rigid-body primitives, a few meshes with modifiers), saved,
and opened again; the time is then ``check_scene`` on the open file, the way a user runs it
(object -> shape conversion included), split by phase. Each size is opened and checked
``REPEATS`` times from scratch (hull cache emptied); the medians are printed, and the growth
factor says how the time per object changes from one size to the next (1.0 = linear). A last
row checks a level where no two objects share geometry: the cost of one hull per object.

    python scripts/bench.py level            # 1k, 10k, 50k, and 1k unique
    python scripts/bench.py level --quick    # 300, 1k, and 200 unique (seconds)
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
    findings = level_check.check_scene(clearance=CLEARANCE, stats=stats)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, stats, findings


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
            path = os.path.join(folder, f"level_{n}{'_unique' if unique else ''}.blend")
            t = time.perf_counter()
            demo_level.build_scattered_level(n, unique=unique)
            import bpy
            bpy.ops.wm.save_as_mainfile(filepath=path)
            build = time.perf_counter() - t
            repeats = 1 if unique else (REPEATS if n <= LARGE else REPEATS_LARGE)
            runs = [_check_once(path) for _ in range(repeats)]
            open_s = statistics.median(r[0] for r in runs)
            check_s = statistics.median(r[1] for r in runs)
            stats, findings = runs[0][2], runs[0][3]
            phases = {p: statistics.median(r[2].times.get(p, 0.0) for r in runs) for p in PHASES}
            per_object = check_s / n
            growth = "" if previous is None else f"{per_object / previous:7.2f}"
            previous = per_object
            print(f"{n:>8,} {stats.shapes_made:>6,} {stats.narrow:>7,} {len(findings):>6} "
                  f"{open_s:>6.2f} {check_s:>7.2f} "
                  + " ".join(f"{phases[p]:>12.3f}" for p in PHASES)
                  + f" {1e6 * per_object:>10.1f} {growth:>7}   (built in {build:.1f} s)",
                  flush=True)
            os.remove(path)
    print("built: shapes built by shape_from_object (the others are instances of one of them, "
          "moved by their matrix); pairs: pairs measured by GJK after the broad phase; "
          "growth: µs/object relative to the previous size (1.00 = linear)")
