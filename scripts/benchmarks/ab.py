"""Single queries of this checkout against an earlier one, in one process, interleaved.

Separate processes per side (``peers --baseline``) put each side's median at the mercy of what
else the machine did during its run: on this 2-core machine two runs of the same code differ by
3-5%, about the size of the changes to judge. Here both versions are loaded into one process
(the baseline's ``convex_tools`` copied to a temporary folder as ``convex_tools_baseline``:
its modules import each other relatively), each given the same shapes and poses (``peers``'
pairs and poses, fixed seed), and timed in alternating rounds, so that a disturbance hits both
alike. Per pair and query: the median over the rounds of the mean µs per query, and the ratio
this ÷ baseline.

    python scripts/bench.py ab --baseline ../old          # 1,000 poses per pair, 11 rounds
    python scripts/bench.py ab --baseline ../old --quick  # 100 poses, 3 rounds
"""

from __future__ import annotations

import importlib
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

ROUNDS, QUICK_ROUNDS = 11, 3
CONFIGS, QUICK_CONFIGS = 1_000, 100
BASELINE_PACKAGE = "convex_tools_baseline"


def run(args):
    from benchmarks import peers
    from benchmarks.level import baseline_checkout

    baseline = baseline_checkout(args)
    if baseline is None:
        print("needs --baseline CHECKOUT (an earlier checkout of this repository)")
        return
    configs = getattr(args, "configs", None) or (QUICK_CONFIGS if args.quick else CONFIGS)
    rounds = QUICK_ROUNDS if args.quick else ROUNDS
    with tempfile.TemporaryDirectory(prefix="convex_ab_") as folder:
        shutil.copytree(os.path.join(baseline, "convex_tools"),
                        os.path.join(folder, BASELINE_PACKAGE))
        sys.path.insert(0, folder)
        try:
            old = importlib.import_module(BASELINE_PACKAGE + ".core")
            new = importlib.import_module("convex_tools.core")
            rng = np.random.default_rng(peers.SEED)
            print(f"{baseline} against this checkout, {configs} poses per pair, {rounds} "
                  f"alternating rounds in one process; mean µs per query, medians of the rounds")
            print(f"    {'query':12s} {'pair':15s} {'baseline':>9s} {'this':>9s} {'ratio':>7s}")
            for name, (a, b) in peers.pair_shapes().items():
                poses = {deep: peers._poses(rng, a, b, configs, deep) for deep in (True, False)}
                for query, deep in (("penetration", True), ("distance", False)):
                    times = _interleaved(old, new, a, b, poses[deep], query, rounds)
                    t_old, t_new = (statistics.median(times[s]) for s in ("old", "new"))
                    print(f"    {query:12s} {name:15s} {t_old:9.2f} {t_new:9.2f} "
                          f"{t_new / t_old:7.3f}", flush=True)
        finally:
            sys.path.remove(folder)
            for module in [m for m in sys.modules if m.split(".")[0] == BASELINE_PACKAGE]:
                del sys.modules[module]


def _same_shape(package, shape):
    """``shape`` (this checkout's) rebuilt with ``package``'s classes."""
    from _peer_shapes import _make, _params

    kind, p = _params(shape)
    return _make(kind, p, getattr(shape, "vertices", None), package)


def _interleaved(old, new, a, b, poses, query, rounds):
    """Mean µs per query for each side in each round, the sides' order alternating."""
    sides = {}
    for side, package in (("old", old), ("new", new)):
        sa, sb = _same_shape(package, a), _same_shape(package, b)
        posed = [(package.Transformed(sa, ma), package.Transformed(sb, mb))
                 for ma, mb in zip(*poses)]
        fn = getattr(package, query)
        for x, y in posed:              # warm: hull tables, first-call caches
            fn(x, y)
        sides[side] = (fn, posed)
    times = {"old": [], "new": []}
    for r in range(rounds):
        for side in (("old", "new") if r % 2 else ("new", "old")):
            fn, posed = sides[side]
            start = time.perf_counter()
            for x, y in posed:
                fn(x, y)
            times[side].append((time.perf_counter() - start) / len(posed) * 1e6)
    return times
