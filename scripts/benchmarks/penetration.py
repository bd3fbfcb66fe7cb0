"""Penetration depth and contact manifolds on the randomized benchmark of seed 001 §4.1.

Shapes (seed 001 §4.1): box 2×2×2, ellipsoid 1×2×1.5, round box (2×2×2 box ⊕ sphere 0.5), hull of
50 random points on the unit sphere, cone of radius 1 and height 2. Pairs: box–box,
ellipsoid–ellipsoid, box–ellipsoid, roundbox–roundbox, hull–hull, cone–cone; both shapes at a
uniformly random orientation and a uniformly random position in a cube whose side is chosen per
pair so that most configurations intersect (seed 001 varies it; the deep end is the hard one).

Per method (``penetration`` with "epa", "mpr", "hybrid", and ``contact_manifold``), over the
configurations that overlap: support calls (GJK + the depth method, as in seed 001 §4.1.3: the
mean, the mean of the highest 0.1% — the thesis's "maximum" is the mean of the top 1000 of a
million — and the maximum), median and mean time per query, and failures, each a distinct check:

- ``exception`` / ``nan``: no usable answer.
- ``separated``: the answer leaves the shapes apart. Translating A by −depth·n takes point_a onto
  point_b, so this is point_a ∉ A or point_b ∉ B (by more than TOL of the shapes' size).
- ``overlapping``: they still overlap after it by more than TOL (the support of A − B along n
  minus the depth bounds that; when it does not settle it, EPA on the moved shapes does).
- ``wrong_way``: pushing A the other way (along +n) would be shorter, h(−n) < depth − TOL:
  the normal points from B toward A. (Seed 001's test (a − b)·x < 0 on centres only holds for
  centrally symmetric pairs; this one holds for all.)
- ``not_minimal`` (exact methods only): some tested direction — the other methods' normals,
  the boxes' face normals, random directions — separates the shapes with a shorter translation
  (beyond EPA's certified tolerance on curved pairs, 1e-9 on polytopes).

``--quick`` is a smoke run; ``--configs N`` sets the configurations per pair (100 000 for the
zero-failure claim).
"""

from __future__ import annotations

import math
import time
from collections import Counter

import numpy as np

from convex_tools.core import epa
from convex_tools.core.hull import Hull
from convex_tools.core.manifold import contact_manifold
from convex_tools.core.penetration import penetration
from convex_tools.core.shapes import Box, Cone, Ellipsoid, RoundBox, Transformed

TOL = 1e-7                 # touching / membership tolerance, relative to the shapes' size
DEFAULT_CONFIGS = 4000     # per pair: the default run stays within about two minutes
QUICK_CONFIGS = 40
METHODS = ("epa", "mpr", "hybrid", "manifold")

# Side of the cube the positions are drawn from, per pair: most configurations intersect.
CUBE = {"box-box": 3.0, "ellipsoid-ellipsoid": 2.0, "box-ellipsoid": 2.5,
        "roundbox-roundbox": 4.0, "hull-hull": 2.0, "cone-cone": 2.0}
PAIRS = (("box", "box"), ("ellipsoid", "ellipsoid"), ("box", "ellipsoid"),
         ("roundbox", "roundbox"), ("hull", "hull"), ("cone", "cone"))


def thesis_shapes():
    rng = np.random.default_rng(2024)
    points = rng.normal(size=(50, 3))
    points /= np.linalg.norm(points, axis=1)[:, None]
    return {"box": Box((1.0, 1.0, 1.0)), "ellipsoid": Ellipsoid((0.5, 1.0, 0.75)),
            "roundbox": RoundBox((1.0, 1.0, 1.0), 0.5), "hull": Hull(points),
            "cone": Cone(1.0, 1.0)}


def random_rotation(rng):
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def pose(shape, rotation, position):
    m = np.eye(4)
    m[:3, :3] = rotation
    m[:3, 3] = position
    return Transformed(shape, m)


# --- membership of a world point in a posed thesis shape ----------------------------------------

def inside(kind, shape, rotation, position, p, tol):
    """p lies in the posed shape (within tol), by the shape's own implicit description."""
    q = rotation.T @ (np.asarray(p) - position)
    if kind == "box":
        return bool(np.all(np.abs(q) <= shape.half_extents + tol))
    if kind == "roundbox":
        outside = np.maximum(np.abs(q) - shape.half_extents, 0.0)
        return bool(np.linalg.norm(outside) <= shape.radius + tol)
    if kind == "ellipsoid":
        r = shape.radii
        # Distance-like measure: |q/r| − 1 scaled by the smallest radius.
        return bool((np.linalg.norm(q / r) - 1.0) * r.min() <= tol)
    if kind == "cone":
        r, h = shape.radius, shape.half_height
        if q[2] < -h - tol or q[2] > h + tol:
            return False
        allowed = r * (h - q[2]) / (2.0 * h)
        # Distance to the side measured across it: (radial excess)·cos(half angle).
        cos_half = 2.0 * h / math.hypot(r, 2.0 * h)
        return bool((math.hypot(q[0], q[1]) - allowed) * cos_half <= tol)
    if kind == "hull":
        # A point in the hull of the vertices: no separating direction, by GJK.
        from convex_tools.core.gjk import distance
        from convex_tools.core.shapes import translated, Point
        return distance(translated(Point(), q), shape).distance <= tol
    raise ValueError(kind)


def support_gap(a, b, n):
    """h_{A−B}(n): how far A − B reaches along n."""
    return float(np.dot(a.support(n) - b.support(-np.asarray(n)), n))


# --- one configuration ------------------------------------------------------------------------

def check(kind_a, kind_b, shapes, ra, pa, rb, pb, a, b, result, depth_floor, size, others,
          exact):
    """Failure names for one answer (empty when all checks pass)."""
    fails = []
    n = np.asarray(result.normal, float)
    d = float(result.depth)
    if not (np.all(np.isfinite(n)) and math.isfinite(d)) or abs(np.linalg.norm(n) - 1) > 1e-9:
        return ["nan"]
    tol = TOL * size
    if not (inside(kind_a, shapes[kind_a], ra, pa, result.point_a, tol)
            and inside(kind_b, shapes[kind_b], rb, pb, result.point_b, tol)
            and np.linalg.norm(result.point_a - result.point_b - d * n) <= tol):
        fails.append("separated")
    if support_gap(a, b, n) - d > tol:
        moved = pose(a.shape, ra, pa - d * n)
        rest = penetration(moved, b)
        if rest is not None and rest.depth > tol:
            fails.append("overlapping")
    if support_gap(a, b, -n) < d - tol:
        fails.append("wrong_way")
    if exact:
        slack = (1e-9 if depth_floor == 0.0 else epa.CERTIFY_TOLERANCE * max(d, 1e-3)) * size
        for m in others:
            if support_gap(a, b, m) < d - slack:
                fails.append("not_minimal")
                break
    return fails


def run_pair(kind_a, kind_b, shapes, configs, seed):
    rng = np.random.default_rng(seed)
    side = CUBE[f"{kind_a}-{kind_b}"]
    curved = not (kind_a in ("box", "hull") and kind_b in ("box", "hull"))
    stats = {m: {"calls": [], "times": [], "fails": Counter()} for m in METHODS}
    overlapping = 0
    all_times = {m: [] for m in METHODS}
    size = 3.0
    for _ in range(configs):
        ra, rb = random_rotation(rng), random_rotation(rng)
        pa, pb = rng.uniform(-side / 2, side / 2, 3), rng.uniform(-side / 2, side / 2, 3)
        a, b = pose(shapes[kind_a], ra, pa), pose(shapes[kind_b], rb, pb)
        answers = {}
        for method in METHODS:
            start = time.perf_counter()
            try:
                if method == "manifold":
                    res = contact_manifold(a, b)
                else:
                    res = penetration(a, b, method)
            except Exception as exc:                    # noqa: BLE001 - counted as a failure
                stats[method]["fails"][f"exception:{type(exc).__name__}"] += 1
                continue
            elapsed = time.perf_counter() - start
            all_times[method].append(elapsed)
            answers[method] = res
            if res is not None:
                stats[method]["times"].append(elapsed)
                stats[method]["calls"].append(res.support_calls)
        exact_answer = answers.get("epa")
        if exact_answer is None:
            for method in METHODS:
                if answers.get(method) is not None and method != "manifold" and \
                        answers[method].depth > TOL * size:
                    stats[method]["fails"]["apart_for_epa"] += 1
            continue
        overlapping += 1
        directions = [np.asarray(r.normal) for m, r in answers.items()
                      if r is not None and m != "manifold"]
        for r in (ra, rb):
            directions += [s * r[:, i] for i in range(3) for s in (1.0, -1.0)]
        directions += list(rng.normal(size=(6, 3)))
        directions = [m / np.linalg.norm(m) for m in directions]
        for method in ("epa", "mpr", "hybrid"):
            res = answers.get(method)
            if res is None:
                if method in answers:
                    stats[method]["fails"]["missed_overlap"] += exact_answer.depth > TOL * size
                continue
            for f in check(kind_a, kind_b, shapes, ra, pa, rb, pb, a, b, res,
                           1.0 if curved else 0.0, size, directions, method != "mpr"):
                stats[method]["fails"][f] += 1
        m = answers.get("manifold")
        if m is not None:
            if not (np.all(np.isfinite(m.points)) and np.all(m.depths >= 0.0)):
                stats["manifold"]["fails"]["nan"] += 1
            elif m.depths.max() > exact_answer.depth + TOL * size:
                stats["manifold"]["fails"]["deeper_than_epa"] += 1
    return overlapping, stats, all_times


def run(args):
    configs = args.configs or (QUICK_CONFIGS if args.quick else DEFAULT_CONFIGS)
    shapes = thesis_shapes()
    print(f"{configs} random configurations per pair (positions in a cube of the side given, "
          f"uniform random orientations); figures over the overlapping ones.")
    print("support calls: GJK + depth method (seed 001 §4.1.3: GJK+EPA mean 2–32, max 15–98)")
    print("calls top: mean of the highest 0.1% (seed 001's \"maximum\": the top 1000 of 10^6)")
    header = f"{'pair':22s}{'cube':>5s}{'overl.':>7s}  {'method':9s}{'calls mean':>11s}" \
             f"{'top':>6s}{'max':>5s}{'median µs':>11s}{'mean µs':>9s}  failures"
    print(header)
    print("-" * len(header))
    total_fails = Counter()
    for i, (ka, kb) in enumerate(PAIRS):
        overlapping, stats, _ = run_pair(ka, kb, shapes, configs, seed=1000 + i)
        name = f"{ka}-{kb}"
        for method in METHODS:
            s = stats[method]
            calls = s["calls"] or [0]
            times = s["times"] or [0.0]
            fails = dict(s["fails"])
            total_fails.update({f"{method}:{k}": v for k, v in fails.items()})
            label = f"{name:22s}{CUBE[name]:5.1f}{overlapping:7d}" if method == "epa" \
                else " " * 34
            top = np.sort(calls)[-max(1, len(calls) // 1000):]
            print(f"{label}  {method:9s}{np.mean(calls):11.1f}{np.mean(top):6.1f}{max(calls):5d}"
                  f"{np.median(times) * 1e6:11.0f}{np.mean(times) * 1e6:9.0f}  "
                  f"{fails if fails else 0}", flush=True)
    print(f"total failures: {sum(total_fails.values())}"
          + (f" {dict(total_fails)}" if total_fails else ""))
