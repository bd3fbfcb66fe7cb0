"""Concave shapes: queries against a 100k-triangle terrain; levels of props on it and of compounds.

1. **Terrain queries.** A 320 m × 320 m terrain of 100 352 triangles (a 224 × 224 grid of gentle
   hills, ±1.8 m) and 1000 props (boxes, spheres, capsules, cylinders, randomly turned) above it:
   ``distance`` from props hovering 0–1 m above the ground, ``penetration`` of props sunk up to
   0.1 m, a ``sweep`` dropping each prop by 3 m, and a ``ray_cast`` straight down onto the
   terrain. Per query: the median CPU time, the BVH nodes the walk visited, the triangles the
   narrow phase tested (means), and *walk µs*, the median time of the BVH walk alone (the same
   walk replayed up to the same number of triangle pairs, without the narrow phase).
2. **Convex pairs through the public queries.** ``queries.distance``/``penetration`` against the
   algorithm modules' own functions on the same convex pairs, interleaved: the dispatch cost
   that compounds and meshes added to the convex path (one ``isinstance`` per shape).
3. **Levels** through ``core.level.check_shapes`` (clearance 0.05 m), per-object cost beside a
   convex-only level of the same size, all at one object per 9 m² (the density of ``bench.py
   level``): 10 000 props on the terrain; a compound-heavy level of
   10 000 objects (one in five a compound: arches of 3 parts, tables of 5, L-walls of 2) on a flat
   box floor; and 10 000 convex props scattered at the same density on the same floor. Objects
   stand as the props on the terrain do: most 6–30 cm clear of the ground, a tenth within the
   clearance, a twentieth sunk up to 5 cm.

    python scripts/bench.py concave            # the sizes above (about a minute)
    python scripts/bench.py concave --quick    # 20k triangles, 200 queries, 1000-object levels
"""

from __future__ import annotations

import importlib
import itertools
import math
import statistics
import time

import numpy as np

from convex_tools.core import (Box, Capsule, Compound, Cylinder, Sphere, TriangleMesh, bvh,
                               concave, gjk, posed, queries)
from convex_tools.core.level import Stats, check_shapes

from ._thesis import random_rotation

# The module, not the function of the same name that convex_tools.core exports.
penetration_module = importlib.import_module("convex_tools.core.penetration")

TERRAIN_CELLS, QUICK_TERRAIN_CELLS = 224, 100       # 2 × cells² triangles
TERRAIN_HALF = 160.0                                # metres
QUERIES, QUICK_QUERIES = 1000, 200
LEVEL_SIZE, QUICK_LEVEL_SIZE = 10_000, 1_000
CLEARANCE = 0.05
CONVEX_PAIRS = 2000


def height(x, y):
    return 1.5 * np.sin(0.07 * x) * np.cos(0.05 * y) + 0.3 * np.sin(0.31 * x + 0.2 * y)


def terrain(cells):
    s = np.linspace(-TERRAIN_HALF, TERRAIN_HALF, cells + 1)
    x, y = np.meshgrid(s, s, indexing="ij")
    vertices = np.stack((x.ravel(), y.ravel(), height(x, y).ravel()), axis=1)
    k = np.arange((cells + 1) ** 2).reshape(cells + 1, cells + 1)
    a, b, c, d = k[:-1, :-1], k[1:, :-1], k[1:, 1:], k[:-1, 1:]
    triangles = np.concatenate((np.stack((a, b, c), -1).reshape(-1, 3),
                                np.stack((a, c, d), -1).reshape(-1, 3)))
    return TriangleMesh(vertices, triangles)


def random_prop(rng, x, y, ground_z, lift):
    """A prop of one of four kinds, randomly turned, its lowest point ``lift`` above ground_z."""
    kind = rng.integers(4)
    if kind == 0:
        shape = Box(rng.uniform(0.15, 0.5, 3))
    elif kind == 1:
        shape = Sphere(rng.uniform(0.15, 0.5))
    elif kind == 2:
        shape = Capsule(rng.uniform(0.1, 0.3), rng.uniform(0.1, 0.4))
    else:
        shape = Cylinder(rng.uniform(0.15, 0.4), rng.uniform(0.1, 0.4))
    turn = random_rotation(rng)
    bottom = float(posed(shape, turn).aabb()[0][2])
    return posed(shape, turn, (x, y, ground_z - bottom + lift))


def _clock():
    return time.process_time_ns() / 1000.0


def _median(values):
    return statistics.median(values) if values else math.nan


# --- 1. terrain queries --------------------------------------------------------------------------

def terrain_queries(ground, n, rng):
    span = 0.95 * TERRAIN_HALF
    rows = []
    for query in ("distance", "penetration", "sweep", "ray_cast"):
        times, walks, nodes, tests = [], [], [], []
        for _ in range(n):
            x, y = rng.uniform(-span, span, 2)
            ground_z = float(height(x, y))
            lift = {"distance": rng.uniform(0.0, 1.0), "penetration": rng.uniform(-0.1, 0.0),
                    "sweep": 3.0, "ray_cast": 0.0}[query]
            prop = random_prop(rng, x, y, ground_z, lift)
            stats = bvh.TraversalStats()
            t0 = _clock()
            if query == "distance":
                concave.distance(prop, ground, stats=stats)
            elif query == "penetration":
                concave.penetration(prop, ground, stats=stats)
            elif query == "sweep":
                concave.sweep(prop, ground, (0.0, 0.0, -4.0), stats=stats)
            else:
                concave.ray_cast(ground, (x, y, 10.0), (0.0, 0.0, -1.0), stats=stats)
            times.append(_clock() - t0)
            walks.append(_walk_time(query, prop, ground, stats.pairs, x, y))
            nodes.append(stats.nodes)
            tests.append(stats.tests)
        rows.append((query, _median(times), _median(walks), float(np.mean(nodes)),
                     float(np.mean(tests))))
    return rows


def _walk_time(query, prop, ground, pairs, x, y):
    """The BVH walk of ``query`` alone: replayed up to the same number of item pairs."""
    single = concave._Single(prop)
    t0 = _clock()
    if query == "distance":
        walk = bvh.nearest_pairs(single.tree, ground.tree)
    elif query == "penetration":
        walk = iter(bvh.overlapping_pairs(single.tree, ground.tree))
    elif query == "sweep":
        walk = bvh.swept_pairs(single.tree, ground.tree, (0.0, 0.0, -4.0))
    else:
        walk = bvh.ray(ground.tree, (x, y, 10.0), (0.0, 0.0, -1.0))
    for _ in itertools.islice(walk, max(pairs, 1)):
        pass
    return _clock() - t0


# --- 2. the convex path --------------------------------------------------------------------------

def convex_dispatch(rng, n):
    pairs = []
    for _ in range(n):
        a = posed(Box((1.0, 1.0, 1.0)), random_rotation(rng), rng.uniform(-1.5, 1.5, 3))
        b = posed(Box((1.0, 1.0, 1.0)), random_rotation(rng), rng.uniform(-1.5, 1.5, 3))
        pairs.append((a, b))
    rows = []
    for name, direct, public in (("distance", gjk.distance, queries.distance),
                                 ("penetration", penetration_module.penetration,
                                  queries.penetration)):
        t_direct, t_public = [], []
        for k, (a, b) in enumerate(pairs):
            # Interleaved, taking turns at going first, so that machine load and the warm
            # caches of a second run on the same pair favour neither.
            first, second = (direct, public) if k % 2 else (public, direct)
            t0 = time.perf_counter_ns()
            first(a, b)
            t1 = time.perf_counter_ns()
            second(a, b)
            t2 = time.perf_counter_ns()
            d, p = (t1 - t0, t2 - t1) if k % 2 else (t2 - t1, t1 - t0)
            t_direct.append(d / 1000.0)
            t_public.append(p / 1000.0)
        rows.append((name, _median(t_direct), _median(t_public)))
    return rows


# --- 3. levels -----------------------------------------------------------------------------------

def terrain_level(ground, n, rng):
    """``n`` props scattered over the terrain: most 6–30 cm clear of it (measured under their
    centre, so some on slopes come closer), a tenth within the clearance, a twentieth sunk up
    to 5 cm."""
    span = min(0.95 * TERRAIN_HALF, 1.5 * math.sqrt(n))     # one prop per 9 m²
    shapes, names = [ground], ["Terrain"]
    for k in range(n):
        x, y = rng.uniform(-span, span, 2)
        r = rng.uniform()
        lift = rng.uniform(-0.05, 0.0) if r < 0.05 else (
            rng.uniform(0.0, CLEARANCE) if r < 0.15 else rng.uniform(0.06, 0.3))
        shapes.append(random_prop(rng, x, y, float(height(x, y)), lift))
        names.append(f"Prop{k:05d}")
    return shapes, names


def _arch(x, y, turn):
    pillar = Box((0.3, 0.3, 1.2))
    parts = [posed(pillar, turn, turn @ np.array((-1.0, 0, 1.2)) + (x, y, 0)),
             posed(pillar, turn, turn @ np.array((1.0, 0, 1.2)) + (x, y, 0)),
             posed(Box((1.3, 0.3, 0.2)), turn, turn @ np.array((0, 0, 2.6)) + (x, y, 0))]
    return Compound(parts, ["PillarL", "PillarR", "Lintel"])


def _table(x, y, turn):
    legs = [posed(Box((0.04, 0.04, 0.35)), turn, turn @ np.array((sx * 0.5, sy * 0.3, 0.35))
                  + (x, y, 0)) for sx in (-1, 1) for sy in (-1, 1)]
    top = posed(Box((0.6, 0.4, 0.03)), turn, turn @ np.array((0, 0, 0.73)) + (x, y, 0))
    return Compound(legs + [top])


def _l_wall(x, y, turn):
    return Compound([posed(Box((1.0, 0.1, 0.8)), turn, turn @ np.array((0, 0, 0.8)) + (x, y, 0)),
                     posed(Box((0.1, 0.6, 0.8)), turn, turn @ np.array((0.9, 0.7, 0.8))
                           + (x, y, 0))])


def scattered_level(n, rng, compound_share):
    """``n`` objects on a flat floor box at one object per 9 m² (the density of ``bench.py
    level``); ``compound_share`` of them compounds, the rest convex props as on the terrain."""
    half = 1.5 * math.sqrt(n)
    floor = posed(Box((half, half, 0.5)), None, (0.0, 0.0, -0.5))
    shapes, names = [floor], ["Floor"]
    makers = (_arch, _table, _l_wall)
    for k in range(n):
        x, y = rng.uniform(-0.97 * half, 0.97 * half, 2)
        r = rng.uniform()
        lift = rng.uniform(-0.05, 0.0) if r < 0.05 else (
            rng.uniform(0.0, CLEARANCE) if r < 0.15 else rng.uniform(0.06, 0.3))
        if rng.uniform() < compound_share:
            angle = rng.uniform(0, 2 * math.pi)
            c, s = math.cos(angle), math.sin(angle)
            turn = np.array(((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0)))
            shapes.append(makers[k % 3](x, y, turn).transformed(
                np.array(((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, lift), (0, 0, 0, 1.0)))))
        else:
            shapes.append(random_prop(rng, x, y, 0.0, lift))
        names.append(f"Obj{k:05d}")
    return shapes, names


def run_level(label, shapes, names, objects):
    stats = Stats()
    t0 = time.perf_counter()
    findings = check_shapes(shapes, names, clearance=CLEARANCE, stats=stats)
    total = time.perf_counter() - t0
    parts = sum(f.part_a is not None or f.part_b is not None for f in findings)
    print(f"{label:<34} {objects:>7,} {stats.narrow:>7,} {stats.part_culled:>7,} "
          f"{stats.penetrations:>7,} {len(findings):>6,} {parts:>6,} {total:>7.2f} "
          f"{stats.times.get('narrow_phase', 0.0):>7.2f} {1e6 * total / objects:>9.1f}", flush=True)


def run(args):
    rng = np.random.default_rng(11)
    cells = QUICK_TERRAIN_CELLS if args.quick else TERRAIN_CELLS
    n_queries = QUICK_QUERIES if args.quick else (args.configs or QUERIES)
    t0 = time.perf_counter()
    ground = terrain(cells)
    built = time.perf_counter() - t0
    print(f"terrain: {len(ground):,} triangles, {ground.tree.node_count:,} BVH nodes, depth "
          f"{ground.tree.depth}, built in {built:.2f} s (TriangleMesh: checks, active edges, "
          f"tree)")
    print(f"\n{n_queries} queries per row against the terrain; CPU µs, medians; nodes and "
          f"triangles tested are means")
    print(f"{'query':<12} {'µs':>8} {'walk µs':>8} {'nodes':>7} {'triangles':>10}")
    for query, total, walk, nodes, tests in terrain_queries(ground, n_queries, rng):
        print(f"{query:<12} {total:>8.1f} {walk:>8.1f} {nodes:>7.1f} {tests:>10.2f}", flush=True)

    print(f"\nconvex pairs (box-box, {CONVEX_PAIRS} poses) through the public queries vs the "
          f"algorithm's own function, interleaved; wall µs, medians")
    print(f"{'query':<12} {'direct':>8} {'public':>8} {'extra':>8}")
    for name, direct, public in convex_dispatch(rng, CONVEX_PAIRS):
        print(f"{name:<12} {direct:>8.2f} {public:>8.2f} {public - direct:>8.2f}", flush=True)

    size = QUICK_LEVEL_SIZE if args.quick else LEVEL_SIZE
    print(f"\nlevels through core.level.check_shapes, clearance {CLEARANCE} m; seconds, wall")
    print(f"{'level':<34} {'objects':>7} {'pairs':>7} {'culled':>7} {'depths':>7} "
          f"{'found':>6} {'parts':>6} {'check':>7} {'narrow':>7} {'µs/object':>9}")
    shapes, names = terrain_level(ground, size, rng)
    run_level(f"props on the {len(ground) // 1000}k-triangle terrain", shapes, names, size)
    shapes, names = scattered_level(size, rng, 0.2)
    run_level("compound-heavy (1 in 5 compounds)", shapes, names, size)
    shapes, names = scattered_level(size, rng, 0.0)
    run_level("convex only, same density", shapes, names, size)
    print("pairs: pairs past the broad phase and the AABB cull; culled: of those, concave pairs "
          "with no part pair within the clearance; depths: pairs that needed a penetration "
          "depth; parts: findings naming a part")
