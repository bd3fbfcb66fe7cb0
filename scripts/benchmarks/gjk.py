"""GJK distance and separating-axis intersection on the thesis benchmark (seed 001 §4.1).

Support calls count evaluations of the Minkowski difference's support (one per iteration), as
in the thesis. A failure is an exception, a non-finite result, a run that hit the iteration cap,
closest points that are not on their shapes (support(n)·n != p·n for the separating normal), or
``intersect`` disagreeing with ``distance``.
"""

import math
import zlib

import numpy as np

from convex_tools.core import SeparationCache, Status, Transformed, distance, intersect

from ._thesis import HEADER, THESIS_PAIRS, random_poses, row, thesis_shapes, timed

# Cube edges: 6 leaves most pairs apart (distance's work), 3 makes about half of them overlap.
CUBES = {"apart": 6.0, "mixed": 3.0}


def _distance_failed(a, b, res):
    if isinstance(res, Exception) or res.status is Status.ITERATION_LIMIT:
        return True
    if not all(math.isfinite(x) for x in (*res.point_a, *res.point_b, res.distance)):
        return True
    if res.intersecting:
        return False
    n = (res.point_b - res.point_a) / res.distance
    scale = 1.0 + float(np.abs(res.point_a).max())
    return (abs(a.support(n) @ n - res.point_a @ n) > 1e-6 * scale
            or abs(b.support(-n) @ n - res.point_b @ n) > 1e-6 * scale)


def run(args):
    n = args.configs or (300 if args.quick else 5000)
    shapes = thesis_shapes()
    pairs = THESIS_PAIRS + [("sphere", "sphere")]
    for label, cube in CUBES.items():
        print(f"\n{n} random configurations per pair, cube edge {cube} ({label})")
        print(f"{'distance':<22}" + HEADER[22:] + f" {'overlap':>8}")
        stats = {}
        for na, nb in pairs:
            configs = random_poses(shapes[na], shapes[nb], n, cube, seed=zlib.crc32(f"{na}{nb}".encode()))
            results, times = timed(distance, configs)
            fails = sum(_distance_failed(a, b, r) for (a, b), r in zip(configs, results))
            ok = [r for r in results if not isinstance(r, Exception)]
            overlap = np.mean([r.intersecting for r in ok])
            print(row(f"{na}-{nb}", [r.support_calls for r in ok], fails, times,
                      f" {overlap:>8.0%}"))
            stats[(na, nb)] = (configs, ok)
        print(f"{'intersect (SA-GJK)':<22}" + HEADER[22:])
        for na, nb in pairs:
            configs, dist = stats[(na, nb)]
            calls = []

            def counted(a, b):
                cache = SeparationCache()
                hit = intersect(a, b, cache=cache)
                calls.append(cache.last_support_calls)
                return hit

            results, times = timed(counted, configs)
            fails = sum(isinstance(r, Exception) or r != d.intersecting
                        for r, d in zip(results, dist) if d.distance > 1e-9 or d.intersecting)
            print(row(f"{na}-{nb}", calls, fails, times))
    _coherence(shapes, 300 if args.quick else 2000)


def _coherence(shapes, steps):
    """ISA-GJK: a pair drifting slowly, queried every frame with the cached separating axis."""
    a = Transformed(shapes["hull"], np.eye(4))
    cache = SeparationCache()
    calls = []
    for step in range(steps):
        angle = 0.002 * step
        m = np.eye(4)
        m[:3, :3] = [[math.cos(angle), -math.sin(angle), 0], [math.sin(angle), math.cos(angle), 0],
                     [0, 0, 1]]
        m[:3, 3] = (2.5 + 0.3 * math.sin(0.01 * step), 0.2, 0.0)
        intersect(a, Transformed(shapes["hull"], m), cache=cache)
        calls.append(cache.last_support_calls)
    print(f"\nframe coherence (hull-hull drifting, {steps} frames): "
          f"{np.mean(calls):.2f} support calls per intersect on average, "
          f"{cache.hits / cache.calls:.0%} ended on the first call")
