"""Live check (issue 23): how long the findings take to follow a move in a large level.

The level is ``demo_level.build_scattered_level`` (the ``level`` section's: one prop per 9 m² of
floor, shared primitive meshes, non-uniform scales, rigid bodies, a few meshes with modifiers),
checked with the clearance of the ``level`` section. The live check is turned on (one full
check, timed) and then, as a level designer works:

- *one move*: a random prop moves by up to its own size (each axis uniform in ±0.5 of its
  largest dimension, z kept above the floor) and the depsgraph is updated
  (``view_layer.update``: Blender's evaluation, then the live check's handler, which measures
  the prop again within its 50 ms budget and updates the Sidebar's list and the drawing), then
  ``api.live_findings()`` finishes anything left. *live* is the live check's own time (its
  handler and what ``live_findings`` had left); *whole* is from the update to current findings,
  Blender's own evaluation of the depsgraph included (*blender* is that evaluation alone, the
  same moves with the live check off);
- *a grab of 50*: 50 random props moved together by one offset, timed the same way.

After the moves the live findings are compared with a full check of the level as it now is:
*differ* counts findings whose pair, kind, rule or fix differ (must be 0), *witness* those whose
numbers differ beyond 1e-9 (the full check's batched engine and the single queries the live
check uses can pick different witness points of a sideways contact, see the level section).

    python scripts/bench.py live            # 10k and 100k props
    python scripts/bench.py live --quick    # 1k props, fewer moves
"""

from __future__ import annotations

import statistics
import time

import numpy as np

SIZES = (10_000, 100_000)
QUICK_SIZES = (1_000,)
MOVES, QUICK_MOVES = 100, 20
GRABS, QUICK_GRABS = 10, 3
GRAB_SIZE = 50
CLEARANCE = 0.05        # as the level section
# Two findings are the same when their numbers agree to this (rounding of shared shapes).
ROUNDING = 1e-9


def run(args):
    try:
        import bpy  # noqa: F401
    except ImportError:
        print("skipped: needs the bpy module (source scripts/env.sh)")
        return
    import demo_level      # beside bench.py, which puts its folder on the path

    sizes = QUICK_SIZES if args.quick else SIZES
    if args.configs:
        sizes = tuple(s for s in sizes if s <= args.configs) or (args.configs,)
    print(f"{'props':>8} {'turn on':>9} {'live move':>10} {'p90':>8} {'whole':>8} "
          f"{'blender':>8} {'live grab 50':>13} {'whole':>8} {'differ':>7} {'witness':>8}")
    for n in sizes:
        _one_size(n, args, demo_level)


def _one_size(n, args, demo_level):
    import bpy

    import convex_tools
    from convex_tools import api, live, operators

    demo_level.build_scattered_level(n)
    convex_tools.register()
    try:
        scene = bpy.context.scene
        scene.convex_level.clearance = CLEARANCE
        t0 = time.perf_counter()
        scene.convex_tools.live_check = True
        api.live_findings()
        full = time.perf_counter() - t0
        props = [o for o in scene.objects if o.type == 'MESH' and o.name != "Floor"]
        rng = np.random.default_rng(11)
        moves = QUICK_MOVES if args.quick else MOVES
        own, whole = [], []
        for _ in range(moves):
            obj = props[int(rng.integers(len(props)))]
            t = _timed_move([obj], rng.uniform(-0.5, 0.5, 3) * max(obj.dimensions), bpy, api,
                            live)
            own.append(t[0])
            whole.append(t[1])
        grabs = [_timed_move([props[int(k)] for k in rng.choice(len(props), GRAB_SIZE,
                                                                 replace=False)],
                             rng.uniform(-0.5, 0.5, 3), bpy, api, live)
                 for _ in range(QUICK_GRABS if args.quick else GRABS)]
        state = live.current()
        differ, witness = _differences(api.live_findings(),
                                       operators.level_run(bpy.context).run())
        assert state.full_checks == 1, "a move started a full check"
        scene.convex_tools.live_check = False
        blender = []
        for _ in range(moves):
            obj = props[int(rng.integers(len(props)))]
            obj.location = np.array(obj.location) + rng.uniform(-0.5, 0.5, 3) * 0.1
            t0 = time.perf_counter()
            bpy.context.view_layer.update()
            blender.append(time.perf_counter() - t0)

        def ms(values):
            return f"{statistics.median(values) * 1e3:.1f}ms"

        print(f"{n:>8} {full:>8.1f}s {ms(own):>10} {np.percentile(own, 90) * 1e3:>6.1f}ms "
              f"{ms(whole):>8} {ms(blender):>8} {ms([g[0] for g in grabs]):>13} "
              f"{ms([g[1] for g in grabs]):>8} {differ:>7} {witness:>8}", flush=True)
    finally:
        scene.convex_tools.live_check = False
        convex_tools.unregister()


def _timed_move(objs, offset, bpy, api, live):
    """(the live check's own seconds, seconds from the depsgraph update to current findings)
    after moving ``objs`` by ``offset``."""
    for obj in objs:
        location = np.array(obj.location) + offset
        location[2] = max(location[2], obj.location.z)      # not into the floor
        obj.location = location
    live.last_handler_seconds = float("nan")
    t0 = time.perf_counter()
    bpy.context.view_layer.update()
    t1 = time.perf_counter()
    api.live_findings()
    t2 = time.perf_counter()
    if np.isnan(live.last_handler_seconds):
        raise RuntimeError("the live check's handler did not run on the depsgraph update")
    return live.last_handler_seconds + (t2 - t1), t2 - t0


def _differences(got, expected):
    """(findings that differ in pair, kind, rule or fix, or are missing or extra; findings
    whose numbers differ beyond rounding)."""
    def key(f):
        return (f.kind, f.object_a, f.object_b or "")

    by_key = {key(f): f.to_dict() for f in expected}
    differ = abs(len(got) - len(expected))
    witness = 0
    for f in got:
        other, mine = by_key.get(key(f)), f.to_dict()
        if other is None or any(mine[k] != other[k] for k in ("rule", "severity", "move",
                                                               "part_a", "part_b")):
            differ += 1
        elif not _close(mine, other):
            witness += 1
    return differ, witness


def _close(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= ROUNDING
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return a == b
