"""Peer comparison with coal (issue 22): the same inputs through our code and through coal, the
C++ collision library (formerly hpp-fcl), in alternating runs; medians of ``ROUNDS``.

coal runs in an environment of its own (it needs numpy >= 2; the project's has bpy, which pins
numpy below 2), by ``_peer_coal.py``, which never imports convex_tools. Set one up with

    python3 -m venv /work/peers/venv && /work/peers/venv/bin/pip install "numpy>=2" coal

and name its Python with ``--peer-python PATH`` or ``CONVEX_PEER_PYTHON`` (default
/work/peers/venv/bin/python when it exists). Without one only our side is measured.

Measured, each on identical inputs (written once to an .npz both sides read):

(a) level narrow phase: the scattered level of ``LEVEL_SIZE`` objects
    (``demo_level.build_scattered_level``, built with the bpy module in a child process) is
    collected and converted by the level check, whose broad phase and box cull give the
    candidate pairs. The objects are exported (``_peer_shapes``); those coal has no exact shape
    for (a cylinder scaled unevenly across its axis, a sheared primitive, a concave shape) are
    left out, with their pairs, on both sides. Ours: the level check's narrow phase
    (``LevelCheck.step`` to the end, one process: batched screen + single queries) at clearance
    ``CLEARANCE``. coal: (i) ``DynamicAABBTreeCollisionManager.collide`` over all objects with
    contacts and a security margin of the clearance (its own broad phase included), (ii)
    ``coal.collide`` with contacts on each candidate pair, from a Python loop (about 1 µs of
    call overhead each). µs per candidate pair.
(b) single queries on ``PAIRS``: ``penetration`` (EPA) against ``coal.collide`` with a contact
    (GJK + EPA) on ``configs`` deep-overlap poses (fixed seed), and ``distance`` against
    ``coal.distance`` on as many poses apart; the median µs per query, and the largest
    disagreement in depth and distance relative to the pair's size.

``--baseline CHECKOUT`` runs our side from an older checkout too, in the same rounds: each
round runs today's code, the baseline's, then coal, each in a fresh process.

    python scripts/bench.py peers                       # 10k level, 1,000 poses per pair
    python scripts/bench.py peers --baseline /work/old  # with an older checkout beside it
    python scripts/bench.py peers --quick               # 1k level, 100 poses
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, HERE)

from _peer_shapes import KINDS, single_arrays  # noqa: E402

DEFAULT_PEER_PYTHON = "/work/peers/venv/bin/python"
ROUNDS = 5                       # alternating rounds per side (medians of these)
LEVEL_SIZE, QUICK_LEVEL_SIZE = 10_000, 1_000
CLEARANCE = 0.05                 # the level bench's clearance (m)
CONFIGS, QUICK_CONFIGS = 1_000, 100
SEED = 22
# Two shapes agree when their answers differ by less than this, relative to the pair's size
# (the bounding radius of the larger shape): both libraries stop EPA and GJK at about 1e-6.
AGREEMENT = 1e-6
PAIRS = ("cylinder-cone", "cylinder-box", "cone-hull", "sphere-sphere", "box-box")


def peer_python(args):
    """The peer environment's Python, or None."""
    chosen = getattr(args, "peer_python", None) or os.environ.get("CONVEX_PEER_PYTHON")
    if chosen:
        if not os.path.exists(chosen):
            raise SystemExit(f"--peer-python {chosen}: no such file")
        return chosen
    return DEFAULT_PEER_PYTHON if os.path.exists(DEFAULT_PEER_PYTHON) else None


def run(args):
    from benchmarks.level import baseline_checkout

    baseline = baseline_checkout(args)
    peer = peer_python(args)
    if peer is None:
        print("no peer Python: our side only. Set coal up outside the repository with\n"
              "    python3 -m venv /work/peers/venv\n"
              "    /work/peers/venv/bin/pip install \"numpy>=2\" coal\n"
              "then rerun (or pass --peer-python PATH / set CONVEX_PEER_PYTHON).")
    n = QUICK_LEVEL_SIZE if args.quick else LEVEL_SIZE
    configs = getattr(args, "configs", None) or (QUICK_CONFIGS if args.quick else CONFIGS)
    sides = [("today", [sys.executable, os.path.join(HERE, "_peer_ours.py")], ROOT)]
    if baseline:
        sides.append(("baseline", [sys.executable, os.path.join(HERE, "_peer_ours.py")],
                      baseline))
    if peer:
        sides.append(("coal", [peer, os.path.join(HERE, "_peer_coal.py")], None))
    print(f"{ROUNDS} alternating rounds ({', '.join(s[0] for s in sides)}), each side a fresh "
          f"process per round; medians of the rounds. A shared 2-core machine: noisy.")
    with tempfile.TemporaryDirectory(prefix="convex_peers_") as folder:
        level_npz = os.path.join(folder, "level.npz")
        info = export_level(n, level_npz)
        single_npz = os.path.join(folder, "single.npz")
        write_single_inputs(single_npz, configs, SEED)
        inputs = {"level": level_npz, "single": single_npz}
        # The answers compared (untimed, before any timing): today's and coal's at tight
        # tolerances; a disagreement in distance stops the run (coal read a shape otherwise).
        first = {mode: {name: _side(command, code, mode, npz, folder,
                                    ["tight"] if name == "coal" and mode == "level" else [])
                        for name, command, code in sides if name != "baseline"}
                 for mode, npz in inputs.items()}
        if peer:
            _check_agreement(first, np.load(level_npz), np.load(single_npz))
        results = {"level": {s[0]: [] for s in sides}, "single": {s[0]: [] for s in sides}}
        for r in range(ROUNDS):
            for mode, npz in inputs.items():
                for name, command, code in sides:
                    results[mode][name].append(_side(command, code, mode, npz, folder))
            print(f"  round {r + 1}/{ROUNDS} done", flush=True)
        _print_level(info, results["level"], first["level"], np.load(level_npz))
        _print_single(results["single"], first["single"], np.load(single_npz))


def _side(command, code, mode, npz, folder, extra=()):
    """One side's run of ``mode`` on ``npz`` in a fresh process: its JSON answer. ``code``: the
    checkout on PYTHONPATH (ours), None for coal (an environment with nothing of ours);
    ``extra``: further arguments."""
    out = os.path.join(folder, "answer.json")
    env = dict(os.environ)
    if code is None:
        env.pop("PYTHONPATH", None)
    else:
        env["PYTHONPATH"] = code
    # (run from the temporary folder: a script's own folder and the working folder come first
    # on the path, never another checkout's code)
    subprocess.run(command + [mode, npz, out, *extra], check=True, env=env, cwd=folder)
    with open(out) as f:
        answer = json.load(f)
    if code is not None and os.path.realpath(answer["code"]) != os.path.realpath(code):
        raise SystemExit(f"measured {answer['code']}, not {code}")
    return answer


# --- inputs ------------------------------------------------------------------------------------

_EXPORT_CHILD = """
import sys
sys.path[:0] = [sys.argv[3], sys.argv[4]]
import numpy as np
import bpy
import convex_tools
import demo_level
from convex_tools import level_check
from _peer_shapes import describe
n, out, clearance = int(sys.argv[1]), sys.argv[2], float(sys.argv[5])
convex_tools.register()
demo_level.build_scattered_level(n)
run = level_check.LevelRun(None, clearance)
while run.check is None:
    run.step(1.0, shapes_only=True)
check = run.check
entries = [check.shapes.raw(i) for i in range(len(check.shapes))]
arrays, kept, skipped = describe(entries, check.names)
new = np.full(len(entries), -1)
new[kept] = np.arange(len(kept))
pairs = new[check.pairs] if len(check.pairs) else np.zeros((0, 2), dtype=np.int64)
both = (pairs >= 0).all(axis=1)
# Objects' own clearances (the convex_clearance property; NaN: none), as LevelRun passes them.
own = []
for name in np.asarray(check.names)[kept]:
    value = bpy.data.objects[str(name)].get("convex_clearance") if str(name) in bpy.data.objects \
        else None
    own.append(np.nan if value is None else float(value))
np.savez(out, pairs=np.sort(pairs[both], axis=1), clearance=np.array(clearance),
         own_clearance=np.array(own, dtype=float), pair_need=check.pair_need[both],
         level_objects=np.array(len(entries)), level_candidates=np.array(len(check.pairs)),
         skipped_pairs=np.array(int((~both).sum())),
         skipped=np.array([f"{name}: {why}" for name, why in skipped] or [""]), **arrays)
"""


def export_level(n, path):
    """Build the scattered level of ``n`` objects (bpy, in a child process) and write its
    exportable objects and candidate pairs to ``path``; a summary dict."""
    from benchmarks.level import child_env

    env = child_env()
    with tempfile.TemporaryDirectory(prefix="convex_peers_export_") as folder:
        subprocess.run([sys.executable, "-c", _EXPORT_CHILD, str(n), path, SCRIPTS, HERE,
                        repr(CLEARANCE)], check=True, env=env, cwd=folder,
                       stdout=subprocess.DEVNULL)
    data = np.load(path)
    skipped = [s for s in data["skipped"].tolist() if s]
    reasons = {}
    for s in skipped:
        why = s.split(": ", 1)[1]
        reasons[why] = reasons.get(why, 0) + 1
    return {"objects": int(data["level_objects"]), "kept": len(data["names"]),
            "candidates": int(data["level_candidates"]), "pairs": len(data["pairs"]),
            "skipped_pairs": int(data["skipped_pairs"]), "reasons": reasons}


def pair_shapes():
    """The shapes of ``PAIRS`` (a cylinder, a cone, a box, a hull of 50 points, two spheres),
    about a metre across."""
    from convex_tools.core import Box, Cone, Cylinder, Hull, Sphere

    rng = np.random.default_rng(SEED)
    points = rng.normal(size=(50, 3))
    points = 0.6 * points / np.linalg.norm(points, axis=1)[:, None] * (1.0, 0.9, 0.8)
    cylinder, cone = Cylinder(0.5, 0.75), Cone(0.6, 0.7)
    box = Box((0.6, 0.4, 0.5))
    return {"cylinder-cone": (cylinder, cone), "cylinder-box": (cylinder, box),
            "cone-hull": (cone, Hull(points)), "sphere-sphere": (Sphere(0.6), Sphere(0.5)),
            "box-box": (box, Box((0.5, 0.5, 0.3)))}


def bounding_radius(shape):
    """Radius of the ball about the origin holding ``shape`` (from its box)."""
    lower, upper = shape.aabb()
    return float(np.linalg.norm(np.maximum(np.abs(lower), np.abs(upper))))


def _poses(rng, a, b, count, deep):
    """``count`` (matrix_a, matrix_b) pairs of rigid poses: deep overlaps (B's centre within a
    quarter of the smaller bounding radius of A's; kept only when they intersect) or apart
    (B's centre at 0.5–1.3 × the sum of the radii; kept only when they do not)."""
    from benchmarks.penetration import random_rotation
    from convex_tools.core import Transformed, distance

    ra, rb = bounding_radius(a), bounding_radius(b)
    out_a, out_b = [], []
    while len(out_a) < count:
        ma, mb = np.eye(4), np.eye(4)
        ma[:3, :3], mb[:3, :3] = random_rotation(rng), random_rotation(rng)
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        if deep:
            mb[:3, 3] = u * rng.uniform(0.0, 0.25 * min(ra, rb))
        else:
            mb[:3, 3] = u * rng.uniform(0.5, 1.3) * (ra + rb)
        if distance(Transformed(a, ma), Transformed(b, mb)).intersecting == deep:
            out_a.append(ma)
            out_b.append(mb)
    return np.array(out_a), np.array(out_b)


def write_single_inputs(path, configs, seed):
    rng = np.random.default_rng(seed)
    arrays = {"pair_names": np.array(PAIRS)}
    for name, (a, b) in pair_shapes().items():
        arrays.update(single_arrays(name + "_a_", a))
        arrays.update(single_arrays(name + "_b_", b))
        arrays[name + "_deep_a"], arrays[name + "_deep_b"] = _poses(rng, a, b, configs, True)
        arrays[name + "_apart_a"], arrays[name + "_apart_b"] = _poses(rng, a, b, configs, False)
        arrays[name + "_size"] = np.array(max(bounding_radius(a), bounding_radius(b)))
    np.savez(path, **arrays)


# --- tables ------------------------------------------------------------------------------------

def _median(rows, key):
    return statistics.median(r[key] for r in rows)


def _ratio(a, b):
    return f"{a / b:.1f}×" if b else "-"


def _level_agreement(first, data):
    """(pairs both report within their clearance, largest |Δ signed distance| over those
    apart, over those overlapping, pairs only one side reports, pairs coal's EPA failed on,
    the overlapping pair of the largest Δ as (i, j, ours, coal's))."""
    mine, theirs = first["today"]["measured"], first["coal"]["signed"]
    apart, deep, both, alone, failed, worst = 0.0, 0.0, 0, 0, 0, None
    for (i, j), signed in zip(data["pairs"].tolist(), theirs):
        ours = mine.get(f"{i} {j}")
        if signed is not None and math.isnan(signed):
            failed += 1
        elif (ours is None) != (signed is None):
            alone += 1
        elif ours is not None:
            both += 1
            if min(ours, signed) >= 0.0:
                apart = max(apart, abs(ours - signed))
            elif abs(ours - signed) > deep:
                deep, worst = abs(ours - signed), (i, j, ours, signed)
    return both, apart, deep, alone, failed, worst


def _single_agreement(first, data, name, answers):
    """(largest |Δ| relative to the pair's size, poses one side gives no answer for)."""
    size = float(data[name + "_size"])
    mine = first["today"][name][answers]
    theirs = first["coal"][name]["tight_" + answers]
    answered = [m is not None and t is not None and not math.isnan(t)
                for m, t in zip(mine, theirs)]
    deltas = [abs(m - t) for m, t, ok in zip(mine, theirs, answered) if ok]
    missing = len(answered) - sum(answered)
    return max(deltas, default=0.0) / size, missing


def _check_agreement(first, level_data, single_data):
    """Print how far our answers and coal's (GJK at 1e-10, EPA at 1e-9) agree before anything
    is timed; stop when distances of shapes apart differ (a convention read differently)."""
    both, apart, deep, alone, failed, _ = _level_agreement(first["level"], level_data)
    worst = max(_single_agreement(first["single"], single_data, name, "distances")[0]
                for name in PAIRS)
    print(f"agreement before timing (coal: GJK at 1e-10, EPA at 1e-9): level, {both} pairs "
          f"within their clearance, signed distances within {apart:.1e} m apart and {deep:.1e} m "
          f"overlapping, {alone} pairs reported by one side only, {failed} coal's EPA failed on; "
          f"single pairs, distances "
          f"within {worst:.1e} of the pair's size", flush=True)
    if worst > AGREEMENT or apart > AGREEMENT:
        raise SystemExit("our distances and coal's disagree beyond "
                         f"{AGREEMENT:.0e}: the export or _peer_coal.py reads a shape otherwise")


def _print_level(info, runs, first, data):
    pairs = max(1, info["pairs"])
    print(f"\n(a) level narrow phase: scattered level of {info['objects']:,} objects, clearance "
          f"{CLEARANCE} m; {info['candidates']:,} candidate pairs after the box cull")
    skipped = info["objects"] - info["kept"]
    if skipped:
        print(f"    left out on both sides: {skipped} objects coal has no exact shape for ("
              + ", ".join(f"{c} {why}" for why, c in sorted(info["reasons"].items()))
              + f") and their {info['skipped_pairs']} candidate pairs")
    today = runs["today"]
    print(f"    {info['kept']:,} objects, {info['pairs']:,} pairs measured; our check on the "
          f"exported objects found the same pairs: {today[0]['same_pairs']}; "
          f"{today[0]['single']} pairs went to single queries, {today[0]['findings']} findings")
    print(f"    {'side':<34} {'wall s':>7} {'(min–max)':>13} {'µs/pair':>8} {'ours ×':>7}"
          f" {'best ×':>7}   {'CPU s':>7} {'µs/pair':>8} {'ours ×':>7}")
    rows = [("ours (today) narrow phase", today, "narrow")]
    if "baseline" in runs:
        rows.append(("ours (baseline) narrow phase", runs["baseline"], "narrow"))
    if "coal" in runs:
        rows.append(("coal manager collide (+contacts)", runs["coal"], "manager"))
        rows.append(("coal collide per pair (+contacts)", runs["coal"], "pairs"))
    ours, ours_cpu = _median(today, "narrow_s"), _median(today, "narrow_cpu_s")
    ours_best = min(r["narrow_s"] for r in today)
    for label, side, key in rows:
        wall, cpu = _median(side, key + "_s"), _median(side, key + "_cpu_s")
        low, high = min(r[key + "_s"] for r in side), max(r[key + "_s"] for r in side)
        print(f"    {label:<34} {wall:>7.3f} {f'({low:.3f}–{high:.3f})':>13} "
              f"{1e6 * wall / pairs:>8.1f} {_ratio(ours, wall):>7} {_ratio(ours_best, low):>7}"
              f"   {cpu:>7.3f} {1e6 * cpu / pairs:>8.1f} {_ratio(ours_cpu, cpu):>7}")
    print("    wall: median of the rounds (their range in brackets); best ×: the ratio of the "
          "fastest rounds (the least disturbed by other processes); CPU: the process's CPU "
          "time over the same work, medians (numpy's BLAS threads count in ours)")
    if "coal" in runs:
        coal = runs["coal"][0]
        print(f"    coal counts {coal['pair_hits']} of the pairs within the margin per pair, its "
              f"manager {coal['manager_contacts']} contacts (over all {coal['objects']:,} "
              f"objects, its own broad phase, whose boxes are not grown by the margin: "
              f"{_boxes_apart(data, coal['signed'])} of the pairs within it have boxes apart); "
              f"our check {today[0]['findings']} findings")
        both, apart, deep, alone, failed, worst = _level_agreement(first, data)
        timed = _level_agreement({"today": first["today"], "coal": coal}, data)
        print(f"    agreement on the {both} pairs both report within their clearance, signed "
              f"distances: against coal at GJK 1e-10, EPA 1e-9 (untimed) within {apart:.1e} m "
              f"apart, {deep:.1e} m overlapping; against coal at its defaults (timed) within "
              f"{timed[1]:.1e} m apart, {timed[2]:.1e} m overlapping; {alone} pairs reported by "
              f"one side only; {failed} where coal's tight EPA failed")
        if worst is not None and deep > AGREEMENT:
            i, j, ours, theirs = worst
            kinds = data["kind"].tolist()
            default = coal["signed"][data["pairs"].tolist().index([i, j])]
            print(f"    worst overlap: {data['names'][i]} ({KINDS[kinds[i]]}) – "
                  f"{data['names'][j]} ({KINDS[kinds[j]]}): ours {ours:.7f}, coal tight "
                  f"{theirs:.7f}, coal at its defaults {default:.7f}")


def _boxes_apart(data, signed):
    """How many of the pairs coal finds within their margin have apart boxes (ours)."""
    from convex_tools.core.placement import world_aabbs

    from _peer_shapes import posed_entries

    shapes = posed_entries(data)
    lower, upper = world_aabbs([shapes.raw(k) for k in range(len(shapes))])
    pairs = data["pairs"].reshape(-1, 2)
    i, j = pairs[:, 0], pairs[:, 1]
    gap = np.maximum(np.maximum(lower[j] - upper[i], lower[i] - upper[j]), 0.0).max(axis=1)
    within = np.array([s is not None for s in signed], dtype=bool)
    return int((within & (gap > 0.0)).sum())


def _print_single(runs, first, data):
    has_base, has_coal = "baseline" in runs, "coal" in runs
    print(f"\n(b) single queries, {len(data[PAIRS[0] + '_deep_a'])} poses per pair (seed {SEED});"
          " median µs per query" + ("; Δ: largest |difference| from coal relative to the "
                                    "pair's size" if has_coal else ""))
    head = f"    {'pair':<14} {'pen ours':>9}"
    head += f" {'baseline':>9}" if has_base else ""
    head += f" {'coal':>7} {'ours ×':>7} {'depth Δ':>8}" if has_coal else ""
    head += f" {'dist ours':>9}"
    head += f" {'baseline':>9}" if has_base else ""
    head += f" {'coal':>7} {'ours ×':>7} {'dist Δ':>8}" if has_coal else ""
    print(head)
    notes = []
    for name in PAIRS:
        size = float(data[name + "_size"])
        line = f"    {name:<14}"
        for query, answers in (("penetration_us", "depths"), ("distance_us", "distances")):
            ours = statistics.median(r[name][query] for r in runs["today"])
            line += f" {ours:>9.1f}"
            if has_base:
                line += f" {statistics.median(r[name][query] for r in runs['baseline']):>9.1f}"
            if has_coal:
                coal = statistics.median(r[name][query] for r in runs["coal"])
                worst, missing = _single_agreement(first, data, name, answers)
                line += f" {coal:>7.1f} {_ratio(ours, coal):>7} {worst:>8.1e}"
                if missing:
                    line += f" ({missing} without a depth on one side)"
        print(line)
        if has_coal:
            notes.extend(_depth_disagreements(name, data, first["today"][name]["depths"],
                                              first["coal"][name]))
    for note in notes:
        print(note)
    if has_coal:
        print(f"    (Δ against coal's answers at GJK 1e-10, EPA 1e-9, untimed; they agree "
              f"when Δ < {AGREEMENT:.0e}. coal's times are at its default tolerances and include "
              "about 1 µs of Python call overhead)")


def _depth_disagreements(name, data, ours, coal):
    """Notes on the poses where our depth and coal's differ by more than ``AGREEMENT`` of the
    pair's size: which answer holds. A depth d along a unit normal n is achievable only if
    h(n) = max over A − B of x · n, the translation that n needs, is at most d; the true depth
    is the least h over all n, so when coal's depth is below h(coal's normal) its normal does
    not achieve it, and when ours exceeds that h ours is not the least."""
    from convex_tools.core import Transformed

    from _peer_shapes import local_shape

    size = float(data[name + "_size"])
    a, b = local_shape(data, name + "_a_"), local_shape(data, name + "_b_")
    short, longer, worst = 0, 0, None
    for k, (mine, theirs, normal) in enumerate(zip(ours, coal["tight_depths"],
                                                  coal["tight_normals"])):
        if mine is None or theirs is None or math.isnan(theirs) or \
                abs(mine - theirs) <= AGREEMENT * size:
            continue
        pa = Transformed(a, data[name + "_deep_a"][k])
        pb = Transformed(b, data[name + "_deep_b"][k])
        n = np.asarray(normal)
        need = float(np.dot(pa.support(n) - pb.support(-n), n))
        short += theirs < need - AGREEMENT * size
        longer += mine > need + AGREEMENT * size
        if worst is None or abs(mine - theirs) > worst[0]:
            worst = (abs(mine - theirs), k, mine, theirs, need)
    if worst is None:
        return []
    _, k, mine, theirs, need = worst
    count = short + longer
    return [f"    {name}: {count} poses disagree; coal's depth below what its own normal needs "
            f"in {short}, ours above it in {longer}. Worst, pose {k}: ours {mine:.7f}, coal "
            f"{theirs:.7f}, coal's normal needs {need:.7f}"]
