"""Our side of the peer benchmark (``peers``), in a process of its own so that the code measured
is whichever checkout ``PYTHONPATH`` names (this one, or ``--baseline``'s):

    python _peer_ours.py level INPUT.npz OUTPUT.json
    python _peer_ours.py single INPUT.npz OUTPUT.json

``level``: the level check's narrow phase (``LevelCheck.step`` to the end, one process: the
batched screen and the single queries it hands pairs to) on the exported objects at the
exported clearance; the time is the check's own ``narrow_phase`` figure (wall time), beside the
process's CPU time over the same steps (less sensitive to other processes on a busy machine).
``single``: per pair kind, ``penetration`` (EPA) on the deep poses and ``distance`` on the apart
ones, one timing per query. Only the public core API and ``core.level``/``core.placement`` are
used, so an older checkout runs it too.
"""

import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _peer_shapes import local_shape, posed_entries  # noqa: E402


def level(data):
    from convex_tools.core.level import LevelCheck

    names = [str(n) for n in data["names"]]
    shapes = posed_entries(data)
    clearance = float(data["clearance"])
    own = [None if np.isnan(c) else float(c) for c in data["own_clearance"].tolist()]
    check = LevelCheck(shapes, names, clearance=clearance, clearances=own)
    exported = {tuple(p) for p in data["pairs"].tolist()}
    mine = {tuple(sorted(p)) for p in check.pairs.tolist()}
    cpu = time.process_time()
    while not check.step():
        pass
    cpu = time.process_time() - cpu
    stats = check.stats
    return {"narrow_s": stats.times["narrow_phase"], "narrow_cpu_s": cpu,
            "pairs": len(check.pairs),
            "same_pairs": mine == {tuple(sorted(p)) for p in exported},
            "findings": len(check.findings), "single": stats.single,
            "penetrations": stats.penetrations, "objects": len(names),
            "measured": _measured(check, names)}


def _measured(check, names):
    """Signed distance per measured pair (i, j) as "i j" keys (for the agreement check)."""
    index = {n: k for k, n in enumerate(names)}
    out = {}
    for f in check.findings:
        if f.object_b is not None and f.distance is not None:
            i, j = sorted((index[f.object_a], index[f.object_b]))
            out[f"{i} {j}"] = float(f.distance)
    return out


def single(data):
    from convex_tools.core import Transformed, distance, penetration

    out = {}
    for name in [str(n) for n in data["pair_names"]]:
        a = local_shape(data, name + "_a_")
        b = local_shape(data, name + "_b_")
        times, depths = [], []
        for ma, mb in zip(data[name + "_deep_a"], data[name + "_deep_b"]):
            pa, pb = Transformed(a, ma), Transformed(b, mb)
            t0 = time.perf_counter()
            contact = penetration(pa, pb, method="epa")
            times.append(time.perf_counter() - t0)
            depths.append(None if contact is None else float(contact.depth))
        dtimes, distances = [], []
        for ma, mb in zip(data[name + "_apart_a"], data[name + "_apart_b"]):
            pa, pb = Transformed(a, ma), Transformed(b, mb)
            t0 = time.perf_counter()
            result = distance(pa, pb)
            dtimes.append(time.perf_counter() - t0)
            distances.append(float(result.distance))
        out[name] = {"penetration_us": 1e6 * statistics.median(times),
                     "distance_us": 1e6 * statistics.median(dtimes),
                     "depths": depths, "distances": distances}
    return out


def main(argv):
    mode, source, target = argv
    data = np.load(source)
    result = {"level": level, "single": single}[mode](data)
    import convex_tools
    result["code"] = os.path.dirname(os.path.dirname(os.path.abspath(convex_tools.__file__)))
    with open(target, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1:])
