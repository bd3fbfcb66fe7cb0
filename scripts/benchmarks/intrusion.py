"""Mesh intrusion: the cost of ``core.intrusion.mesh_intrusion`` per call, beside today's
``concave.penetration`` on the same pairs.

Two meshes: the 100 352-triangle terrain of the ``concave`` section (320 m × 320 m of gentle
hills), and a 12-triangle box mesh (a wall 4 m × 0.15 m × 2 m, the shape of a room's proxy).
Props on the terrain, randomly placed and turned about the vertical, either resting (their
lowest point on the ground: what the level check meets most, every object standing on the
floor) or sunk up to 0.1 m; against the wall, a crate pushed up to 0.1 m into it. Boxes and
20-point hulls take the polytope path (numpy over the candidate triangles), spheres and
capsules mostly one GJK distance per triangle (their core stays in front of it), 60-point
"rocks" the one-sided EPA. Per case: the median CPU time of a call (µs), and the mean number of triangles whose
boxes meet the prop's (the candidates).

    python scripts/bench.py intrusion            # 400 calls per case
    python scripts/bench.py intrusion --quick    # the 20k-triangle terrain, 50 calls per case
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np

from convex_tools.core import Box, Capsule, Hull, Sphere, TriangleMesh, bvh, concave, posed
from convex_tools.core.intrusion import mesh_intrusion

from .concave import (QUICK_TERRAIN_CELLS, TERRAIN_CELLS, TERRAIN_HALF, height, terrain)

CALLS, QUICK_CALLS = 400, 50


def _clock():
    return time.process_time_ns() / 1000.0


def _yaw(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array(((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0)))


def _prop(kind, rng):
    if kind == "box":
        return Box(rng.uniform(0.2, 0.5, 3))
    if kind == "sphere":
        return Sphere(rng.uniform(0.2, 0.5))
    if kind in ("hull", "rock"):
        # 20 points: a hull of ~50 edge directions (the numpy path); 60: a rock (the EPA).
        points = rng.normal(size=(20 if kind == "hull" else 60, 3))
        return Hull(points / np.linalg.norm(points, axis=1)[:, None] * rng.uniform(0.2, 0.5, 3))
    return Capsule(rng.uniform(0.1, 0.3), rng.uniform(0.1, 0.4))


def _on_terrain(kind, sink, rng):
    """A prop of ``kind`` at a random place on the terrain, its lowest point ``sink`` below
    the ground under its centre (0: resting)."""
    span = 0.95 * TERRAIN_HALF
    x, y = rng.uniform(-span, span, 2)
    shape = _prop(kind, rng)
    turn = _yaw(rng.uniform(0.0, 2.0 * math.pi))
    bottom = float(posed(shape, turn).aabb()[0][2])
    return posed(shape, turn, (x, y, float(height(x, y)) - bottom - sink))


def wall_mesh(lower=(0.0, -2.0, 0.0), upper=(0.15, 2.0, 2.0)):
    """A closed axis-aligned box as 12 outward triangles."""
    (x0, y0, z0), (x1, y1, z1) = lower, upper
    v = np.array([(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)])
    quads = ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4),
             (1, 5, 7, 3))                       # −x, +x, −y, +y, −z, +z, counter-clockwise
    t = [(a, b, c) for a, b, c, d in quads] + [(a, c, d) for a, b, c, d in quads]
    return TriangleMesh(v, np.array(t))


def _against_wall(rng):
    pushed = rng.uniform(0.0, 0.1)
    half = rng.uniform(0.2, 0.5, 3)
    centre = (-half[0] + pushed, rng.uniform(-1.0, 1.0), half[2] + rng.uniform(0.0, 0.5))
    return posed(Box(half), _yaw(rng.uniform(-0.2, 0.2)), centre)


def _measure(mesh, make, calls, rng):
    new, old, candidates = [], [], []
    for _ in range(calls):
        shape = make(rng)
        lower, upper = shape.aabb()
        candidates.append(len(bvh.overlapping_pairs(bvh.AABBTree.single(lower, upper),
                                                    mesh.tree)))
        t0 = _clock()
        mesh_intrusion(shape, mesh)
        new.append(_clock() - t0)
        t0 = _clock()
        concave.penetration(shape, mesh)
        old.append(_clock() - t0)
    return statistics.median(new), statistics.median(old), float(np.mean(candidates))


def run(args):
    cells = QUICK_TERRAIN_CELLS if args.quick else TERRAIN_CELLS
    calls = QUICK_CALLS if args.quick else CALLS
    rng = np.random.default_rng(18)
    ground = terrain(cells)
    wall = wall_mesh()
    cases = []
    for kind in ("box", "sphere", "capsule", "hull", "rock"):
        cases.append((f"{kind} resting on terrain", ground,
                      lambda r, k=kind: _on_terrain(k, 0.0, r)))
        cases.append((f"{kind} sunk ≤ 0.1 into terrain", ground,
                      lambda r, k=kind: _on_terrain(k, r.uniform(0.0, 0.1), r)))
    cases.append(("box pushed ≤ 0.1 into a wall", wall, _against_wall))
    print(f"terrain: {len(ground)} triangles; wall: {len(wall)} triangles; {calls} calls per "
          f"case; CPU µs, medians")
    print(f"{'case':34} {'intrusion':>10} {'penetration':>12} {'candidates':>11}")
    for label, mesh, make in cases:
        new, old, candidates = _measure(mesh, make, calls, rng)
        print(f"{label:34} {new:10.0f} {old:12.0f} {candidates:11.1f}", flush=True)
