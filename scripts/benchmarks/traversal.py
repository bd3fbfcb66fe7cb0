"""Traversal check at scale: 10k / 100k / 1M cells of a generated level, time and memory per cell.

The level (pure core shapes, no Blender): a square of floor slabs (10 m tiles), walls on a 10 m
grid (0.2 m thick, 3 m high) each with a 1.2 m doorway, every fifth doorway 0.5 m (too
narrow), a raised platform with a too-high step and a beam too low over one corridor per 20 m,
and one prop per m² of floor — boxes (crates, some rotated), hulls (rocks, 8–12 points),
cylinders (barrels) and spheres — standing on the floor. The 1M-cell level is 100 m × 100 m with
10k props at 0.1 m cells, the issue's target (≤ 60 s, ≤ 2 GB on two cores); the smaller ones keep
the density and cell and shrink the side.

Each size runs in a fresh process (so that its peak memory is its own): the columns are the
check's wall time (``check_traversal``, level built beforehand), µs per cell, the time of the
tiles (surfaces, capsules, links) and of the graph (components, findings), the peak resident
memory (of the process or a worker, Python and numpy included) and what the check added to the
process per cell, the surfaces, links, GJK pairs (capsules and link hulls against pieces) and
findings. ``jobs`` is one process per core. Numbers on a shared machine are noisy (±20 %, more
when other work shares the cores).

    python scripts/bench.py traversal            # 10k, 100k, 1M cells
    python scripts/bench.py traversal --quick    # 10k, 100k cells
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CELL = 0.1
SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (10_000, 100_000)
PROPS_PER_M2 = 1.0
ROOM = 10.0            # wall grid spacing (m)
WALL_THICKNESS = 0.2
WALL_HEIGHT = 3.0
DOOR = 1.2
NARROW_DOOR = 0.5


def build_level(side, seed=5):
    """(shapes, names, walkable, blocks_agent, start) of a ``side`` × ``side`` m level."""
    from convex_tools.core.hull import Hull
    from convex_tools.core.shapes import Box, Cylinder, Sphere, Transformed, translated
    rng = np.random.default_rng(seed)
    shapes, names, walkable = [], [], []

    def add(shape, name, walk=False):
        shapes.append(shape)
        names.append(name)
        walkable.append(walk)

    def box(lo, hi, name, walk=False):
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        add(translated(Box((hi - lo) / 2), (hi + lo) / 2), name, walk)

    tiles = max(1, math.ceil(side / ROOM))
    for i in range(tiles):
        for j in range(tiles):
            x1, y1 = min((i + 1) * ROOM, side), min((j + 1) * ROOM, side)
            box((i * ROOM, j * ROOM, -0.3), (x1, y1, 0.0), f"Floor.{i:02d}.{j:02d}", True)
    # Walls along x = k·ROOM and y = k·ROOM (inner lines only), a doorway in each room's span.
    door_index = 0
    for k in range(1, tiles):
        for axis in (0, 1):
            for m in range(tiles):
                a, b = m * ROOM, min((m + 1) * ROOM, side)
                width = NARROW_DOOR if door_index % 5 == 4 else DOOR
                door_index += 1
                mid = 0.5 * (a + b)
                for lo, hi, tag in ((a, mid - width / 2, "L"), (mid + width / 2, b, "R")):
                    if hi - lo <= 0.0:
                        continue
                    c = k * ROOM
                    if axis == 0:
                        box((c - WALL_THICKNESS / 2, lo, 0.0), (c + WALL_THICKNESS / 2, hi,
                                                                  WALL_HEIGHT),
                            f"Wall.x{k}.{m}.{tag}")
                    else:
                        box((lo, c - WALL_THICKNESS / 2, 0.0), (hi, c + WALL_THICKNESS / 2,
                                                                  WALL_HEIGHT),
                            f"Wall.y{k}.{m}.{tag}")
    # A platform 0.6 m up (a step too high) and a low beam, per 20 m block.
    for i in range(0, tiles, 2):
        for j in range(0, tiles, 2):
            x, y = i * ROOM + 2.0, j * ROOM + 2.0
            box((x, y, 0.0), (x + 3.0, y + 3.0, 0.6), f"Platform.{i}.{j}", True)
            box((x + 5.0, y - 1.0, 1.6), (x + 5.3, y + 6.0, 1.9), f"Beam.{i}.{j}")
    # Props, one per m², off the walls' lines.
    crate = Box((0.4, 0.4, 0.4))
    barrel = Cylinder(0.3, 0.45)
    ball = Sphere(0.35)
    rocks = [Hull(rng.normal(size=(int(rng.integers(8, 13)), 3)) * (0.5, 0.4, 0.3))
             for _ in range(8)]
    count = int(PROPS_PER_M2 * side * side)
    xy = rng.uniform(0.0, side, size=(count, 2))
    on_wall = (np.abs(xy / ROOM - np.round(xy / ROOM)) * ROOM < 0.9).any(axis=1)
    xy[on_wall] += 1.0
    xy = np.clip(xy, 0.5, side - 0.5)
    kinds = rng.integers(0, 4, size=count)
    angles = rng.uniform(0.0, 2.0 * math.pi, size=count)
    for k in range(count):
        x, y = xy[k]
        m = np.eye(4)
        ca, sa = math.cos(angles[k]), math.sin(angles[k])
        m[:2, :2] = [[ca, -sa], [sa, ca]]
        kind = int(kinds[k])
        if kind == 0:
            m[:3, 3] = (x, y, 0.4)
            add(Transformed(crate, m), f"Crate.{k:05d}")
        elif kind == 1:
            m[:3, 3] = (x, y, 0.45)
            add(Transformed(barrel, m), f"Barrel.{k:05d}")
        elif kind == 2:
            rock = rocks[k % len(rocks)]
            m[:3, 3] = (x, y, -rock.aabb()[0][2])
            add(Transformed(rock, m), f"Rock.{k:05d}")
        else:
            m[:3, 3] = (x, y, 0.35)
            add(Transformed(ball, m), f"Ball.{k:05d}")
    blocks = [True] * len(shapes)
    return shapes, names, walkable, blocks, (ROOM / 2 + 0.3, ROOM / 2 + 0.3, 0.0)


_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from benchmarks.traversal import build_level, CELL
from convex_tools.core.traversal import Agent, check_traversal
side = float(sys.argv[2])
shapes, names, walk, blocks, start = build_level(side)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
r = check_traversal(shapes, names, walk, blocks, Agent(cell=CELL), starts=[start],
                    bounds=((0, 0), (side, side)), jobs=None)
elapsed = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"time": elapsed, "cells": r.stats["cells"], "samples": r.stats["samples"],
                  "links": r.stats["links"], "findings": len(r.findings),
                  "pairs": r.stats["capsule_pairs"] + r.stats["link_pairs"],
                  "props": len(shapes), "tiles": r.stats["times"]["tiles"],
                  "graph": r.stats["times"]["graph"], "rss_kb": peak, "before_kb": before,
                  "child_kb": children, "reachable": r.reachable_area}))
"""


def run(args):
    sizes = QUICK_SIZES if args.quick else SIZES
    print(f"generated level: 10 m rooms with doorways, a platform and a beam per 20 m, "
          f"{PROPS_PER_M2:g} prop per m²; cell {CELL} m; jobs: one per core")
    print(f"{'cells':>10} {'objects':>7} {'time s':>7} {'µs/cell':>8} {'tiles s':>8} "
          f"{'graph s':>8} {'peak MB':>8} {'B/cell':>7} {'surfaces':>9} {'links':>9} "
          f"{'GJK pairs':>10} {'findings':>8}")
    scripts = os.path.dirname(HERE)
    for cells in sizes:
        side = math.sqrt(cells) * CELL
        out = subprocess.run([sys.executable, "-c", _CHILD, scripts, repr(side)],
                             capture_output=True, text=True, check=True,
                             env=dict(os.environ, PYTHONPATH=ROOT))
        m = json.loads(out.stdout.strip().splitlines()[-1])
        # Peak of this process or of a worker (each holds the level and its own tiles); per
        # cell, what the check added to the process holding the level.
        peak_mb = max(m["rss_kb"], m["child_kb"]) / 1024.0
        added = max(m["rss_kb"] - m["before_kb"], 0) * 1024.0
        print(f"{m['cells']:>10,} {m['props']:>7,} {m['time']:>7.1f} "
              f"{1e6 * m['time'] / m['cells']:>8.1f} {m['tiles']:>8.1f} {m['graph']:>8.1f} "
              f"{peak_mb:>8.0f} {added / m['cells']:>7.0f} {m['samples']:>9,} "
              f"{m['links']:>9,} {m['pairs']:>10,} {m['findings']:>8,}", flush=True)
