"""What the level rules cost (issue 18): support classification, drops and mesh depth, on the
bench levels, against another checkout's check of the same files (``--baseline``).

Two levels of N objects (``level.py``'s scattered props at one per 9 m²):

- *scattered*: the bench level as it is (no floor; the props stand apart);
- *on a floor*: the same props on one static floor, the props must rest (a rules Text kept in
  the file): every prop is a resting pair, the designer's usual case.

Each is built and saved by a process of its own (``_build``: a process still holding the
3.6 GB scene it built slows every check beside it by 20-25 %, though idle — 2.6-2.8 s against
2.2 s at 100k here), then opened and checked in a process of its own (as the command line runs
it), ``REPEATS`` times, by this checkout and, with ``--baseline CHECKOUT``, by that one,
alternately.
Printed: the median check time of each, and this checkout's classification time (support,
sunk, floating, drops, fixes: ``Stats.times["classify"]``) with its share of the check.

    python scripts/bench.py rules                     # 100k objects
    python scripts/bench.py rules --quick             # 2k
    python scripts/bench.py rules --baseline ../old   # e.g. git worktree add ../old deb9161
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

REPEATS = 5
SIZE, QUICK_SIZE = 100_000, 2_000

# The floor level's rules: a static floor that keeps no clearance from what stands on it, props
# that must rest on something.
FLOOR_RULES = """
[defaults]
clearance = 0.05
[groups.ground]
names = ["Floor"]
static = true
[groups.props]
names = ["*"]
must_rest = true
[[pair]]
groups = ["ground", "*"]
clearance = 0.0
"""


def run(args):
    from benchmarks import level

    level.blender_section(args, _run)


def _run(args, demo_level):
    from benchmarks import level

    baseline = level.baseline_checkout(args)
    n = QUICK_SIZE if args.quick else SIZE
    repeats = 2 if args.quick else REPEATS
    print(f"{n:,} objects, clearance {level.CLEARANCE} m; wall seconds of the check after the "
          f"file is open, medians of {repeats} (batched, one worker per core)")
    print(f"{'level':>12} {'baseline':>9} {'this':>7} {'classify':>9} {'share':>6} "
          f"{'supports':>9} {'lifts':>6} {'drops':>6} {'found':>6}")
    with tempfile.TemporaryDirectory(prefix="convex_rules_bench_") as folder:
        for label, floor in (("scattered", False), ("on a floor", True)):
            path = _build(folder, label.replace(" ", "_"), n, floor)
            ours, theirs = [], []
            for _ in range(repeats):      # alternately, so that drift hits both alike
                if baseline:
                    theirs.append(level._check_once(path, None, None, baseline))
                ours.append(level._check_once(path, True, None))
            stats = ours[0][2]
            check = statistics.median(r[1] for r in ours)
            classify = statistics.median(r[2].times.get("classify", 0.0) for r in ours)
            before = f"{statistics.median(r[1] for r in theirs):9.2f}" if theirs else \
                f"{'-':>9}"
            print(f"{label:>12} {before} {check:7.2f} {classify:9.3f} "
                  f"{100 * classify / check:5.1f}% {stats.supports:>9,} "
                  f"{stats.lift_tests:>6,} {stats.drops:>6,} {len(ours[0][3]):>6,}",
                  flush=True)
            os.remove(path)
    print("classify: support, sunk, floating (with its drop sweeps) and the fixes, after the "
          "pairs are measured; share: of this checkout's check; supports: resting pairs; "
          "lifts: touching pairs whose push direction needed a lift test; drops: drop sweeps "
          "of must-rest objects without support")


# Builds and saves a level in a process of its own (``_build``).
_BUILD_CHILD = """
import sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import bpy
import convex_tools
import demo_level
from benchmarks import rules
n, floor, path = int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
convex_tools.register()
side = demo_level.build_scattered_level(n)
if floor:
    rules._floor_and_rules(side)
bpy.ops.wm.save_as_mainfile(filepath=path)
"""


def _build(folder, name, n, floor):
    """The bench level of ``n`` objects (``floor``: on a floor, with the rules), built and saved
    as ``name``.blend in ``folder`` by a fresh process: its path."""
    from benchmarks import level

    path = os.path.join(folder, f"{name}.blend")
    scripts = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = level.child_env()
    subprocess.run([sys.executable, "-c", _BUILD_CHILD, scripts, level.ROOT, str(n),
                    "1" if floor else "0", path], check=True, env=env, cwd=folder,
                   stdout=subprocess.DEVNULL)
    return path


def _floor_and_rules(side):
    """A static floor under the scattered props, and the rules in a Text the check reads."""
    import bpy

    mesh = bpy.data.meshes.new("floor")
    h = side / 2 + 2.0
    mesh.from_pydata([(-2 + x, -2 + y, z) for x in (0, 2 * h) for y in (0, 2 * h)
                      for z in (-0.2, 0.0)], [],
                     [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4),
                      (1, 5, 7, 3)])
    floor = bpy.data.objects.new("Floor", mesh)
    bpy.context.scene.collection.objects.link(floor)
    text = bpy.data.texts.new("rules.toml")
    text.write(FLOOR_RULES)
    bpy.context.scene.convex_level.rules_text = text
