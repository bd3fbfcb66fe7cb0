"""The batched narrow phase (core.batch) against the single query, pair for pair.

Shapes are posed uniformly at random in a cube of edge 6 with random orientations (the thesis'
configurations, seed 001 §4.1), each pair two independent shapes. Two sets:

- *issue mix*: box 2×2×2, sphere r 1, capsule r 0.5 half height 1, hull of 50 random points on
  the unit sphere (what issue 12's target names);
- *every kind*: all fourteen shape kinds the table batches (flat hulls and segments included),
  a third of them under a non-uniform scale.

For N pairs: the single query's median CPU µs per pair (``distance``, on a sample of up to
``SINGLE_SAMPLE`` pairs), the batch's CPU µs per pair (its whole run over the N pairs divided
by N, best of ``REPEATS``, posing included), support calls per pair (mean and max), the pairs
handed back to the single query (fallbacks), and failures: a pair whose batched distance
differs from the single query's by more than 1e-9 of the larger shape's size (or of the
distance), whose intersecting flag differs, or whose closest points lie off their shapes by
more than 1e-9 of that size (a certified GJK lower bound), or a NaN.

    python scripts/bench.py batch                  # 1k, 10k, 100k pairs; failures over 100k
    python scripts/bench.py batch --configs 20000  # failures over 20k pairs
    python scripts/bench.py batch --quick          # 1k, 10k pairs; failures over 2k
"""

from __future__ import annotations

import math
import time

import numpy as np

from convex_tools.core import (Box, Capsule, Cone, Cylinder, Disc, Ellipsoid, Hull, Point,
                               Rectangle, RoundBox, Segment, Sphere, Transformed, distance,
                               translated)
from convex_tools.core import batch, gjk, validation
from convex_tools.core.placement import PoseTable

from ._thesis import random_rotation

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)
FAILURE_PAIRS, QUICK_FAILURE_PAIRS = 100_000, 2_000
SINGLE_SAMPLE = 2_000
REPEATS = 3
CUBE = 6.0
AGREEMENT = 1e-9


def issue_mix(rng):
    points = rng.normal(size=(50, 3))
    points /= np.linalg.norm(points, axis=1)[:, None]
    return [Box((1.0, 1.0, 1.0)), Sphere(1.0), Capsule(0.5, 1.0), Hull(points)]


def every_kind(rng):
    return [Point(), Segment(0.7), Box((0.3, 0.5, 0.9)), Rectangle((0.4, 0.2)), Disc(0.6),
            Cylinder(0.5, 0.8), Ellipsoid((0.3, 0.6, 0.9)), Cone(0.5, 0.7), Sphere(0.4),
            Capsule(0.3, 0.6), RoundBox((0.2, 0.3, 0.4), 0.1), Hull(rng.normal(size=(50, 3))),
            Hull(rng.normal(size=(12, 3)) * (1.0, 1.0, 0.0)),
            Hull(np.outer(rng.normal(size=6), (0.3, -0.2, 0.9)))]


def posed_pairs(kinds, n, rng, stretch=False):
    """2n shapes and the pairs (2k, 2k + 1)."""
    shapes = []
    for _ in range(2 * n):
        m = np.eye(4)
        m[:3, :3] = random_rotation(rng)
        if stretch and rng.random() < 1 / 3:
            m[:3, :3] = m[:3, :3] @ np.diag(rng.uniform(0.5, 2.0, 3))
        m[:3, 3] = rng.uniform(-CUBE / 2, CUBE / 2, 3)
        shapes.append(Transformed(kinds[rng.integers(len(kinds))], m))
    return shapes, np.arange(2 * n).reshape(n, 2)


def batched(shapes, pairs):
    """(result, CPU seconds to pose, CPU seconds to measure): the table made of the shapes,
    then every pair measured (each the best of ``REPEATS``)."""
    pose = measure = math.inf
    result = None
    for _ in range(REPEATS):
        t0 = time.process_time()
        table = PoseTable.from_shapes(shapes)
        t1 = time.process_time()
        result = batch.run(table, pairs[:, 0], pairs[:, 1])
        t2 = time.process_time()
        pose, measure = min(pose, t1 - t0), min(measure, t2 - t1)
    return result, pose, measure


def single_median(shapes, pairs):
    clock = time.process_time_ns
    times = []
    for i, j in pairs[:SINGLE_SAMPLE].tolist():
        t0 = clock()
        distance(shapes[i], shapes[j])
        times.append((clock() - t0) / 1000.0)
    return float(np.median(times))


def off_shape(shape, point):
    """A certified lower bound on how far ``point`` lies outside ``shape`` (0 inside)."""
    run = gjk.run(validation.shape("s", shape).support_xyz,
                  translated(Point(), point).support_xyz, None, gjk.DISTANCE)
    return 0.0 if run.intersecting else max(run.lower_bound, 0.0)


def failures(shapes, pairs, result):
    """Pairs the batch answered wrongly (see the module doc), and the largest relative error."""
    bad, worst = 0, 0.0
    for k, (i, j) in enumerate(pairs.tolist()):
        if result.code[k] == batch.FALLBACK:
            continue
        a, b = shapes[i], shapes[j]
        single = distance(a, b)
        size = max(a.extent()[0], b.extent()[0])
        scale = max(size, single.distance)
        error = abs(float(result.distance[k]) - single.distance) / scale
        worst = max(worst, error)
        wrong = (not math.isfinite(result.distance[k]) or error > AGREEMENT
                 or bool(result.intersecting[k]) != single.intersecting
                 or off_shape(a, result.point_a[k]) > AGREEMENT * size
                 or off_shape(b, result.point_b[k]) > AGREEMENT * size)
        bad += wrong
    return bad, worst


def posing(rng, n):
    """CPU µs per object to pose n objects three ways and take their world boxes: a
    ``Transformed`` each (and its ``aabb``), a ``PoseTable`` of those shapes, and a
    ``PoseTable`` straight from the shared local shapes and an (n, 4, 4) matrix stack."""
    kinds = issue_mix(rng)
    index = rng.integers(len(kinds), size=n)
    matrices = np.tile(np.eye(4), (n, 1, 1))
    for k in range(n):
        matrices[k, :3, :3] = random_rotation(rng)
    matrices[:, :3, 3] = rng.uniform(-50, 50, (n, 3))
    t0 = time.process_time()
    shapes = [Transformed(kinds[i], m) for i, m in zip(index.tolist(), matrices)]
    boxes = [s.aabb() for s in shapes]
    t1 = time.process_time()
    PoseTable.from_shapes(shapes).aabbs()
    t2 = time.process_time()
    PoseTable.from_poses(kinds, index, matrices).aabbs()
    t3 = time.process_time()
    del boxes
    return [1e6 * t / n for t in (t1 - t0, t2 - t1, t3 - t2)]


def run(args):
    rng = np.random.default_rng(12)
    n = 10_000 if args.quick else 100_000
    single, table, poses = posing(rng, n)
    print(f"posing {n:,} objects of the issue mix with their world boxes, CPU µs per object: "
          f"a Transformed each {single:.1f}; a PoseTable of those {table:.2f}; a PoseTable "
          f"from the local shapes and a matrix stack {poses:.2f}\n")
    sizes = QUICK_SIZES if args.quick else SIZES
    print(f"pairs posed in a cube of edge {CUBE:g}; single: median CPU µs per distance query "
          f"(up to {SINGLE_SAMPLE:,} pairs); batch: CPU µs per pair of the whole batch (best of "
          f"{REPEATS}); posing: CPU µs per pair to make the PoseTable of the pairs' "
          f"Transformed shapes")
    print(f"{'set':<11} {'pairs':>8} {'single µs':>10} {'batch µs':>9} {'speedup':>8} "
          f"{'posing µs':>10} {'calls':>6} {'max':>4} {'fallbacks':>10}")
    for label, kinds, stretch in (("issue mix", issue_mix(rng), False),
                                  ("every kind", every_kind(rng), True)):
        for n in sizes:
            shapes, pairs = posed_pairs(kinds, n, rng, stretch)
            result, pose, measure = batched(shapes, pairs)
            single = single_median(shapes, pairs)
            per_pair = 1e6 * measure / n
            print(f"{label:<11} {n:>8,} {single:>10.1f} {per_pair:>9.2f} "
                  f"{single / per_pair:>7.1f}× {1e6 * pose / n:>10.2f} "
                  f"{result.support_calls.mean():>6.2f} {result.support_calls.max():>4d} "
                  f"{int(result.fallback.sum()):>10,}", flush=True)

    count = args.configs or (QUICK_FAILURE_PAIRS if args.quick else FAILURE_PAIRS)
    print(f"\nagainst the single query, {count:,} random pairs per set (a failure: distance "
          f"off by > {AGREEMENT:g} of the size, another intersecting verdict, a point off its "
          f"shape, a NaN)")
    for label, kinds, stretch in (("issue mix", issue_mix(rng), False),
                                  ("every kind", every_kind(rng), True)):
        shapes, pairs = posed_pairs(kinds, count, rng, stretch)
        result = batch.run(PoseTable.from_shapes(shapes), pairs[:, 0], pairs[:, 1])
        bad, worst = failures(shapes, pairs, result)
        print(f"{label:<11} failures {bad}, largest relative error {worst:.2g}, fallbacks "
              f"{int(result.fallback.sum()):,} (answered by the single query)", flush=True)
