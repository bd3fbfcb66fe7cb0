"""Continuous queries and scale: ray casts, linear sweeps, and the broad phase.

Rays: random shapes of each kind (random orientation, centre in a unit cube) and rays from a
sphere of radius 6 aimed within 1.5 of the centre, about half hitting. Primitives are cast by
their closed forms (no support calls); hulls, round boxes and the two curved composites (a
cylinder ⊕ box, the hull of two stacked cones) by the GJK ray cast, polished on curved parts.
Sweeps: the thesis pairs (seed 001 §4.1) plus capsule-box, sphere-sphere and the curved pairs
cylinder-box and cone-ellipsoid, A moving toward B by a random factor of their offset. Support
calls are CSO support evaluations (one per iteration), as in the thesis, polish included.

A failure is an exception, a non-finite result, a run that hit the iteration cap, a hit point
that is not on the shape's surface (its normal's support plane misses it), a reported miss whose
ray does come within 1e-6 of the shape (GJK distance to the ray segment), a sweep whose shapes
are not touching at the reported time, or one that missed while they touch at some sampled time.

Inexact counts answers off by more than EXACT (relative to the shape's size), the issue's bound
being 1e-9 on polytopes and 1e-7 on curved shapes. Rays: t or normal against a reference — the
GJK ray cast for primitives (``method="gjk"``), the first hit on the composites' exact pieces
(closed forms) for the composites; hulls and round boxes have none. Sweeps: exact evidence of
touching at the reported time — the plane through the contact point with the reported normal
separates the shapes (support functions, exact) and the point lies on both (GJK from the point).
GJK distance between the moved shapes cannot show this: between touching curved shapes it is
only good to ~1e-7.

Rotating sweeps: A turns between two random orientations while moving toward B; steps are
GJK distance queries (conservative advancement), calls their support calls in total.

Broad phase: n unit boxes scattered uniformly at constant density (about 1 overlap per object),
``candidate_pairs`` only (the narrow phase is measured above).

Reference (from the issue): C++ engines called from Python take 0.4-1.7 µs per ray and
1-2 µs per sweep; the aim here, in plain Python, is tens of µs.
"""

import math
import time

import numpy as np

from convex_tools.core import (Box, Capsule, Cone, ConvexHullOf, Cylinder, Hull, MinkowskiSum,
                               Point, SeparationCache, Status, Transformed, distance, translated)
from convex_tools.core.broadphase import candidate_pairs
from convex_tools.core.raycast import ray_cast
from convex_tools.core.sweep import _RigidMotion, sweep, sweep_rotating

from ._thesis import HEADER, THESIS_PAIRS, random_rotation, row, thesis_shapes

RAY_SHAPES = ["box", "sphere", "capsule", "cylinder", "cone", "ellipsoid", "roundbox", "hull",
              "cyl+box", "cone-hull"]
SWEEP_PAIRS = THESIS_PAIRS + [("capsule", "box"), ("sphere", "sphere"), ("cylinder", "box"),
                              ("cone", "ellipsoid")]
SURFACE_TOLERANCE = 1e-6  # a hit point farther than this (relative) from its support plane fails
EXACT = 1e-9  # an answer off by more than this (relative to the shape's size) is inexact


def _shapes():
    shapes = thesis_shapes()
    shapes["capsule"] = Capsule(0.5, 1.0)
    shapes["cylinder"] = Cylinder(1.0, 1.0)
    shapes["cyl+box"] = MinkowskiSum(Cylinder(0.4, 0.6), Box((0.5, 0.3, 0.2)))
    shapes["cone-hull"] = ConvexHullOf(Cone(0.7, 0.8), translated(Cone(0.7, 0.8), (0, 0, 0.9)))
    return shapes


# The curved composites as unions of closed-form pieces: a ray's first hit on one is its
# earliest hit on the pieces. Cylinder(r, h) ⊕ Box(a, b, c) is two boxes and four cylinders at
# the box's vertical edges; the hull of a cone and its copy raised by s is a cylinder s tall
# under the raised cone.
PIECES = {
    "cyl+box": [Box((0.9, 0.3, 0.8)), Box((0.5, 0.7, 0.8))] + [
        translated(Cylinder(0.4, 0.8), (sx * 0.5, sy * 0.3, 0.0)) for sx in (-1, 1)
        for sy in (-1, 1)],
    "cone-hull": [translated(Cylinder(0.7, 0.45), (0.0, 0.0, -0.35)),
                  translated(Cone(0.7, 0.8), (0.0, 0.0, 0.9))],
}


def _posed(shape, rng, spread=1.0):
    m = np.eye(4)
    m[:3, :3] = random_rotation(rng)
    m[:3, 3] = rng.uniform(-spread / 2, spread / 2, 3)
    return Transformed(shape, m)


def _clock():
    return time.process_time_ns() / 1000.0  # µs of this process's CPU time


# --- rays ---------------------------------------------------------------------------------------

def _ray_failed(shape, origin, direction, hit):
    if isinstance(hit, Exception):
        return True
    if hit is None:
        # Really a miss: the ray segment (long enough to pass the shape) stays apart from it.
        segment = Hull(np.array([origin, origin + 3.0 * direction]))
        return distance(shape, segment).distance <= 1e-6
    if hit.status is Status.ITERATION_LIMIT or not np.all(np.isfinite(hit.point)):
        return True
    if hit.t == 0.0:
        return False
    n = hit.normal
    return abs(shape.support(n) @ n - hit.point @ n) > SURFACE_TOLERANCE * (1 + abs(hit.t))


def _ray_inexact(name, shape, origin, direction, hit):
    """Whether the answer is off its reference by more than EXACT (see the module docstring)."""
    if isinstance(hit, Exception) or name in ("hull", "roundbox"):
        return False
    if name in PIECES:
        hits = [h for h in (ray_cast(Transformed(p, shape.matrix), origin, direction)
                            for p in PIECES[name]) if h is not None]
        reference = min(hits, key=lambda h: h.t) if hits else None
    else:
        reference = ray_cast(shape, origin, direction, method="gjk")
    if (hit is None) != (reference is None):
        return True
    if hit is None:
        return False
    scale = np.linalg.norm(direction)
    return (abs(hit.t - reference.t) * scale > EXACT * 2.0
            or np.linalg.norm(hit.normal - reference.normal) > EXACT)


def _rays(shapes, n, rng):
    print(f"\nrays: {n} random rays per shape (origin at distance 6, aimed within 1.5)")
    print(f"{'shape':<22}" + HEADER[22:] + f" {'hits':>6} {'inexact':>7}")
    for name in RAY_SHAPES:
        stats = {True: ([], [], 0, 0), False: ([], [], 0, 0)}
        for _ in range(n):
            shape = _posed(shapes[name], rng)
            origin = rng.normal(size=3)
            origin *= 6.0 / np.linalg.norm(origin)
            direction = rng.normal(size=3) * 1.5 / math.sqrt(3) - origin
            cache = SeparationCache()  # fresh: no warm start, only to read the support calls
            t0 = _clock()
            try:
                hit = ray_cast(shape, origin, direction, cache=cache)
            except Exception as exc:  # a failure to count, not a crash of the benchmark
                hit = exc
            elapsed = _clock() - t0
            outcome = hit is not None and not isinstance(hit, Exception)
            calls, times, fails, inexact = stats[outcome]
            calls.append(cache.last_support_calls)
            times.append(elapsed)
            fails += _ray_failed(shape, origin, direction, hit)
            inexact += _ray_inexact(name, shape, origin, direction, hit)
            stats[outcome] = (calls, times, fails, inexact)
        for outcome, label in ((True, "hit"), (False, "miss")):
            calls, times, fails, inexact = stats[outcome]
            if calls:
                print(row(f"{name} {label}", calls, fails, times,
                          f" {len(calls):>6d} {inexact:>7d}"))


def _coherent_rays(shapes, n):
    """Rays sweeping slowly across a hull, with and without the cached axis."""
    hull = shapes["hull"]
    for label, use_cache in (("cold", False), ("warm", True)):
        cache = SeparationCache()
        calls = []
        for k in range(n):
            origin = (-6.0, -1.5 + 3.0 * k / n, 0.3)
            probe = cache if use_cache else SeparationCache()
            ray_cast(hull, origin, (1.0, 0.0, 0.0), cache=probe)
            calls.append(probe.last_support_calls)
        print(f"coherent rays across the hull ({label} start): {np.mean(calls):.2f} support "
              f"calls per ray")


# --- sweeps -------------------------------------------------------------------------------------

def _sweep_failed(a, b, motion, hit):
    if isinstance(hit, Exception):
        return True
    if hit is None:
        # Sampled check: apart at 11 times along the motion.
        return any(distance(translated(a, t * motion), b).intersecting
                   for t in np.linspace(0.0, 1.0, 11))
    if hit.status is Status.ITERATION_LIMIT or not math.isfinite(hit.t):
        return True
    return distance(translated(a, hit.t * motion), b).distance > 1e-6


def _sweep_inexact(a, b, motion, hit):
    """Whether a hit lacks exact evidence of touching at its time (see the module docstring)."""
    if hit is None or isinstance(hit, Exception) or hit.t == 0.0:
        return False
    moved = translated(a, hit.t * motion)
    n, point = hit.normal, hit.point
    size = np.linalg.norm(moved.support(n) - moved.support(-n)) \
        + np.linalg.norm(b.support(n) - b.support(-n))
    if abs(moved.support(n) @ n - point @ n) > EXACT * size \
            or abs(b.support(-n) @ n - point @ n) > EXACT * size:
        return True
    spot = translated(Point(), point)
    for shape, outward in ((moved, n), (b, -n)):
        cache = SeparationCache()
        cache.axis = tuple(outward)  # GJK from the point, started along the normal
        if distance(shape, spot, cache=cache).distance > EXACT * size:
            return True
    return False


def _sweeps(shapes, n, rng):
    print(f"\nsweeps: {n} random configurations per pair (A moves toward B)")
    print(f"{'pair':<22}" + HEADER[22:] + f" {'hits':>6} {'inexact':>7}")
    for na, nb in SWEEP_PAIRS:
        calls, times, fails, hits, inexact = [], [], 0, 0, 0
        for _ in range(n):
            a, b = _posed(shapes[na], rng, 6.0), _posed(shapes[nb], rng, 6.0)
            offset = np.array(b.matrix[:3, 3]) - np.array(a.matrix[:3, 3])
            motion = offset * rng.uniform(0.3, 1.5) + rng.normal(size=3)
            cache = SeparationCache()
            t0 = _clock()
            try:
                hit = sweep(a, b, motion, cache=cache)
            except Exception as exc:
                hit = exc
            times.append(_clock() - t0)
            calls.append(cache.last_support_calls)
            hits += hit is not None and not isinstance(hit, Exception)
            fails += _sweep_failed(a, b, motion, hit)
            inexact += _sweep_inexact(a, b, motion, hit)
        print(row(f"{na}-{nb}", calls, fails, times, f" {hits:>6d} {inexact:>7d}"))


def _rotating_sweeps(shapes, n, rng):
    print(f"\nrotating sweeps (conservative advancement): {n} per pair, A turning up to 180°")
    print(f"{'pair':<22} {'steps':>7} {'max':>6} {'failures':>8} {'median µs':>10} "
          f"{'calls':>7} {'hits':>6}")
    for na, nb in [("box", "box"), ("hull", "hull"), ("capsule", "box"), ("cone", "ellipsoid")]:
        steps, calls, times, fails, hits = [], [], [], 0, 0
        for _ in range(n):
            start, end = np.eye(4), np.eye(4)
            start[:3, :3], end[:3, :3] = random_rotation(rng), random_rotation(rng)
            start[:3, 3] = rng.uniform(-3.0, 3.0, 3)
            b = _posed(shapes[nb], rng, 6.0)
            end[:3, 3] = (np.array(b.matrix[:3, 3]) - start[:3, 3]) * rng.uniform(0.3, 1.5) \
                + start[:3, 3]
            t0 = _clock()
            try:
                hit = sweep_rotating(shapes[na], start, end, b)
            except Exception as exc:
                hit = exc
            times.append(_clock() - t0)
            if isinstance(hit, Exception) or (hit is not None
                                              and hit.status is Status.ITERATION_LIMIT):
                fails += 1
                continue
            if hit is not None:
                hits += 1
                steps.append(hit.iterations)
                calls.append(hit.support_calls)
                pose = _RigidMotion("a", start, end, shapes[na]).at(hit.t)
                fails += distance(pose, b).distance > 1e-6
        print(f"{na + '-' + nb:<22} {np.mean(steps):>7.2f} {max(steps):>6d} {fails:>8d} "
              f"{np.median(times):>10.1f} {np.mean(calls):>7.1f} {hits:>6d}")


# --- broad phase --------------------------------------------------------------------------------

def _broad_phase(sizes, rng):
    print("\nbroad phase: candidate_pairs on n unit boxes scattered at constant density")
    print(f"{'n':>8} {'median s':>10} {'pairs':>10} {'time x per 10x n':>18}")
    previous = None
    for n in sizes:
        centres = rng.uniform(0.0, (8.0 * n) ** (1.0 / 3.0), (n, 3))
        lower, upper = centres - 0.5, centres + 0.5
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            pairs = candidate_pairs(lower, upper)
            times.append(time.perf_counter() - t0)
        median = float(np.median(times))
        growth = "" if previous is None else f"{median / previous[1] * 10 / (n / previous[0]):.1f}"
        print(f"{n:>8d} {median:>10.4f} {len(pairs):>10d} {growth:>18}")
        previous = (n, median)


def run(args):
    rng = np.random.default_rng(4004)
    shapes = _shapes()
    n = args.configs or (100 if args.quick else 1000)
    _rays(shapes, n, rng)
    _coherent_rays(shapes, 50 if args.quick else 500)
    _sweeps(shapes, n, rng)
    _rotating_sweeps(shapes, max(10, n // 5), rng)
    _broad_phase([1000, 10000] if args.quick else [1000, 10000, 100000], rng)
