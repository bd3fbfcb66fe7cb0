"""The randomized benchmark of seed 001 §4.1: its five shapes, six pairs and random poses.

Shared by the benchmark sections so that every query is measured on the same configurations.
"""

import math
import time

import numpy as np

from convex_tools.core import Box, Cone, Ellipsoid, Hull, RoundBox, Sphere, Transformed


def thesis_shapes(seed=2024):
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(50, 3))
    points /= np.linalg.norm(points, axis=1)[:, None]
    return {
        "box": Box((1.0, 1.0, 1.0)),                        # 2 x 2 x 2
        "ellipsoid": Ellipsoid((0.5, 1.0, 0.75)),           # 1 x 2 x 1.5
        "roundbox": RoundBox((1.0, 1.0, 1.0), 0.5),         # 2 x 2 x 2 box ⊕ sphere 0.5
        "hull": Hull(points),                               # 50 random points on the unit sphere
        "cone": Cone(1.0, 1.0),                             # base radius 1, height 2
        "sphere": Sphere(1.0),                              # for comparison with other engines
    }


THESIS_PAIRS = [("box", "box"), ("ellipsoid", "ellipsoid"), ("box", "ellipsoid"),
                ("roundbox", "roundbox"), ("hull", "hull"), ("cone", "cone")]


def random_rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q @ np.diag(np.sign(np.diag(r)))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def random_poses(shape_a, shape_b, n, cube, seed):
    """n pairs of (A, B) posed uniformly in a cube of edge ``cube`` with random orientations."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n):
        ma, mb = np.eye(4), np.eye(4)
        ma[:3, :3], mb[:3, :3] = random_rotation(rng), random_rotation(rng)
        ma[:3, 3] = rng.uniform(-cube / 2, cube / 2, 3)
        mb[:3, 3] = rng.uniform(-cube / 2, cube / 2, 3)
        pairs.append((Transformed(shape_a, ma), Transformed(shape_b, mb)))
    return pairs


def timed(query, pairs):
    """Run ``query(a, b)`` on every pair; return results and per-query times in µs.

    Times are CPU time of this process (``process_time_ns``), so that other work on a shared
    machine does not inflate them; on an idle machine they equal wall time within noise.
    """
    results, times = [], []
    clock = time.process_time_ns
    for a, b in pairs:
        t0 = clock()
        try:
            res = query(a, b)
        except Exception as exc:  # a failure to count, not a crash of the benchmark
            res = exc
        times.append((clock() - t0) / 1000.0)
        results.append(res)
    return results, times


def row(name, calls, failures, times, extra=""):
    calls = np.sort(np.asarray(calls, dtype=float))
    mean = calls.mean() if len(calls) else math.nan
    top = calls[-1] if len(calls) else math.nan
    # The thesis' "maximum" is the mean of the 1000 highest counts of a million runs: the top 0.1%.
    tail = calls[-max(1, len(calls) // 1000):].mean() if len(calls) else math.nan
    return (f"{name:<22} {mean:>7.2f} {tail:>7.1f} {top:>5.0f} {failures:>8d} "
            f"{np.median(times):>10.1f}{extra}")


HEADER = (f"{'pair':<22} {'calls':>7} {'top.1%':>7} {'max':>5} {'failures':>8} "
          f"{'median µs':>10}")
# calls: support calls per query (mean); top.1%: mean of the highest 0.1% of counts (the
# thesis' "maximum"); max: the largest; median µs: CPU time per query.
