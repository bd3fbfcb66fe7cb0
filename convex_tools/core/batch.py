"""Batched narrow phase: GJK distance for many pairs at once, in numpy arrays.

A single query in CPython costs microseconds of interpreter work per support call; a level has
thousands of candidate pairs. Here every pair advances one GJK iteration per pass, each step an
array operation over all pairs still running, so the interpreter's cost is paid per iteration,
not per pair. The algorithm is ``gjk.run`` (seed 000 §3), with its tolerances (taken from
``gjk`` and ``simplex``, not copied; ``tests/test_parity.py`` holds the mirrored functions to
each other):

- the support point w of A − B along −v, from ``placement.PoseTable.support`` (each shape family
  vectorised; rounded shapes on their cores, the margins added at the end, seed 001 §2.3.4);
- the same stopping tests: the duality gap |v|² − v·w against ``REL_TOLERANCE`` · |v|² and
  against ``SIZE_TOLERANCE`` · |v| · (the CSO's size), a repeated support point, the origin
  inside the simplex (``CONTAINMENT_TOLERANCE``), and ``MAX_ITERATIONS``;
- the simplex's point nearest the origin by ``simplex``'s sub-algorithm on arrays (segment,
  triangle across its longest edge, tetrahedron, the same degeneracy thresholds).

Where it differs from ``gjk.run`` (each difference hands the pair back rather than answer
otherwise):

- the simplex is always solved from its point nearest the origin (``gjk.run`` does so only when
  cancellation threatens: ``simplex.from_nearest``), and the triangle and tetrahedron cases
  outside the simplex take the nearest of all their edges or faces instead of the regions the
  signs name (the same point, by convexity);
- no exact weights for a needle tetrahedron holding the origin (``simplex._exact_weights``):
  its float weights fail the residual check, and the pair ends as the faces give it, or stalls
  and falls back;
- no tolerance relative to the smaller shape (``gjk.run``'s ``size``): the absolute stopping
  rule is relative to the size of C, and a pair whose answer is within ``CLEAR_SLACK`` of a
  decision goes to the single query, which has it;
- a stall (no progress after ``STALL_RETRIES``), the iteration cap, or a repeated support point
  that never separated (``gjk.undecided``; touching or nearly) is FALLBACK, where ``gjk.run``
  ends on its best state, asks MPR (``mpr.holding_tetrahedron``) or calls it touching;
- a flat simplex holding the origin (a segment, a triangle, a flat tetrahedron: props standing
  on one ground plane, or resting on the floor, end so) is lifted into a tetrahedron by a few
  more support calls (``_widen_segments``, ``_lift_flat``), as ``epa`` grows GJK's simplex
  before its expansion, so that the batched EPA can measure the pair.

A pair the batch cannot decide — a stall of the descent, the iteration cap, a repeated support
point without a separating axis (touching), or a shape it has no family for (``placement``:
sums, hulls of two shapes, user shapes, concave shapes) — is marked ``FALLBACK``; callers answer
it with the single query (``distances`` does, and says so in the result's ``engine``).

``screen(table, pairs, need)`` is the level check's use: it runs only until each pair is
*certified* clear (GJK's lower bound v·w/|v| minus the margins reaches the pair's required
clearance, plus ``CLEAR_SLACK`` above rounding and above the single query's tolerance) or until
it has its distance, and says which pairs certainly overlap (the origin deep inside GJK's final
tetrahedron, or rounded cores apart by less than their margins). The overlaps and contacts of
polytope cores get their depth from the batched EPA (``batch_epa``), as do curved cores that
touch on a flat face of C (a drum on a floor), those of rounded shapes whose cores are apart
exactly from GJK; the level check takes the rest — curved overlaps and contacts, pairs touching
within rounding that no tetrahedron holds, distances within the slack of a clearance, what the
batch handed back, and (``hand_back``) each engine's last few running pairs, which would cost
many more passes of numpy's per-call overhead than their single queries — to the single queries.

Layering (docs/ARCHITECTURE.md): uses ``placement``, ``gjk``'s tolerances and ``simplex``'s
thresholds, ``results``; ``broadphase.query_all`` and ``level`` use it.
"""

from __future__ import annotations

import numpy as np

from . import batch_epa, gjk, simplex
from .placement import HULL, OTHER, POLY, PoseTable
from .results import STATUS_OF as RESULT_STATUS
from .results import Code, DistanceResult

MAX_ITERATIONS = gjk.MAX_ITERATIONS
REL_TOLERANCE = gjk.REL_TOLERANCE
SIZE_TOLERANCE = gjk.SIZE_TOLERANCE
CONTAINMENT_TOLERANCE = gjk.CONTAINMENT_TOLERANCE
STALL_GAP = gjk.STALL_GAP
STALL_RETRIES = gjk.STALL_RETRIES
FLAT_TRIANGLE_SIN2 = simplex.FLAT_TRIANGLE_SIN2
SLIVER_SIN2 = simplex.SLIVER_SIN2
FLAT_TETRAHEDRON_RATIO = simplex.FLAT_TETRAHEDRON_RATIO
INSIDE_RESIDUAL = simplex.INSIDE_RESIDUAL

# ``screen`` certifies a pair clear only when its lower bound exceeds the required clearance
# by this fraction of the size of A − B and of the coordinates: far above the rounding of v·w
# (~1e-16 of them) and above the single query's own tolerance (1e-10 of the size), so that a
# pair certified clear is one the single query would find clear too.
CLEAR_SLACK = 1e-8

# Pairs per pass: bounds the state arrays (about 400 bytes a pair) and keeps each array
# operation long enough that numpy's per-call overhead is small against it.
CHUNK_PAIRS = 16_384

# ``screen`` hands the pairs still running back to the single queries once no more than this
# many are left: every pass costs numpy's per-call overhead (~0.5 ms) whatever the number of
# pairs, and the last few (curved pairs creeping up on their distance) would take ten or twenty
# more passes where a single query takes ~50 µs each (in the level check's worker processes,
# in parallel). A fixed count, so that the same level is always split the same way.
HAND_BACK_PAIRS = 64

# Families whose cores are polytopes: their overlaps get their depth from ``batch_epa``.
POLYTOPE_FAMILIES = (POLY, HULL)

# Support calls the batched EPA may spend on curved cores that touch: a flat face of C at the
# contact (a cap on a floor) ends in one or two; a curved contact never ends exactly, and goes
# to the single query (which polishes it) after this many.
TOUCHING_CALLS = 4

# Stop codes of the state arrays: ``results.Code`` (``STATUS_OF`` gives the ``Status``), the
# one vocabulary of both batched engines; plain ints here for the array comparisons.
RUNNING, CONVERGED, REPEATED, INTERSECTING, TOUCHING, CLEAR, FALLBACK = map(int, Code)
STATUS_OF = {int(code): status for code, status in RESULT_STATUS.items()}


class BatchDistances:
    """Distances of pairs (arrays, one row per pair): ``distance``, ``point_a`` (K, 3),
    ``point_b`` (K, 3), ``intersecting``, ``code`` (the state code: CONVERGED, REPEATED,
    INTERSECTING, TOUCHING, CLEAR or FALLBACK), ``support_calls`` and ``deep`` (the shapes are
    certified to overlap by more than ``CLEAR_SLACK`` of their size: an overlap no single query
    could call apart). Rows with code FALLBACK hold no answer; rows with code CLEAR (only with
    ``need``) hold an upper bound on the distance, not the distance."""

    def __init__(self, k):
        self.distance = np.full(k, np.nan)
        self.point_a = np.full((k, 3), np.nan)
        self.point_b = np.full((k, 3), np.nan)
        self.intersecting = np.zeros(k, dtype=bool)
        self.code = np.full(k, FALLBACK, dtype=np.int8)
        self.support_calls = np.zeros(k, dtype=np.int64)
        self.deep = np.zeros(k, dtype=bool)
        self.tet_a = np.full((k, 4, 3), np.nan)    # deep pairs: GJK's last tetrahedron
        self.tet_b = np.full((k, 4, 3), np.nan)
        self.slack = np.zeros(k)                   # CLEAR_SLACK of the size and coordinates
        self.core_a = np.full((k, 3), np.nan)      # the closest points of the cores
        self.core_b = np.full((k, 3), np.nan)

    @property
    def fallback(self) -> np.ndarray:
        return self.code == FALLBACK


def run(table: PoseTable, ia, ib, need=None, hand_back: int = 0) -> BatchDistances:
    """GJK on every pair (``ia[k]``, ``ib[k]``) of ``table``'s objects.

    ``need`` (K,), optional: stop a pair as CLEAR once its distance is certified to be at least
    ``need`` (see ``CLEAR_SLACK``); without it every pair runs to its distance. ``hand_back``:
    once no more than this many pairs of a chunk are still running, they end as FALLBACK (the
    caller's single queries finish them: ``HAND_BACK_PAIRS``); 0, the default, runs all.
    """
    ia = np.asarray(ia, dtype=np.int64)
    ib = np.asarray(ib, dtype=np.int64)
    out = BatchDistances(len(ia))
    for start in range(0, len(ia), CHUNK_PAIRS):
        stop = min(start + CHUNK_PAIRS, len(ia))
        chunk_need = None if need is None else np.asarray(need, dtype=float)[start:stop]
        _run_chunk(table, ia[start:stop], ib[start:stop], chunk_need, out, start, hand_back)
    return out


class Screened:
    """What ``screen`` found for each pair: ``clear`` (certified at least its ``need`` apart),
    ``apart`` (not clear, but its distance measured: ``distance``, the closest points
    ``closest_a``, ``closest_b`` (K, 3), exact to ``slack``), ``deep`` (certified to overlap)
    and, for the deep pairs it measured (``measured``), the penetration: ``depth``, ``normal``
    (K, 3) from A toward B, ``point_a``, ``point_b`` (K, 3), as ``penetration(a, b)`` gives
    them."""

    def __init__(self, res: BatchDistances):
        k = len(res.code)
        self.clear = res.code == CLEAR
        self.apart = np.isin(res.code, (CONVERGED, REPEATED)) & ~res.intersecting
        self.distance = res.distance
        self.closest_a, self.closest_b = res.point_a, res.point_b
        self.slack = res.slack
        self.deep = res.deep
        self.measured = np.zeros(k, dtype=bool)
        self.depth = np.full(k, np.nan)
        self.normal = np.full((k, 3), np.nan)
        self.point_a = np.full((k, 3), np.nan)
        self.point_b = np.full((k, 3), np.nan)


def screen(table: PoseTable, pairs, need, depths=True, hand_back=False) -> Screened:
    """Screen the rows of ``pairs`` (P, 2) for the level check: which are certified at least
    ``need`` (P,) apart, which certainly overlap, and (``depths``) the penetration of the
    overlapping or touching pairs whose cores are polytopes (``batch_epa``; rounded shapes get
    their margins added along the normal, as ``penetration`` adds them), or of rounded shapes
    whose cores are apart (then exact from GJK on the cores: margins − core distance).
    ``hand_back`` (the level check's choice): leave the last few pairs of each engine's run to
    the single queries (``HAND_BACK_PAIRS``, ``batch_epa.HAND_BACK_PAIRS``) rather than pay many
    more passes for them; they come back as neither clear, apart nor measured."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    ia, ib = pairs[:, 0], pairs[:, 1]
    res = run(table, ia, ib, need=need, hand_back=HAND_BACK_PAIRS if hand_back else 0)
    out = Screened(res)
    if not depths:
        return out
    ma, mb = table.margin[ia], table.margin[ib]
    # Rounded shapes whose cores are apart by less than their margins (no tetrahedron): depth
    # margins − d along the separation of the cores' closest points.
    has_tet = np.isfinite(res.tet_a[:, 3, 0])
    within = res.deep & ~has_tet & ((ma > 0.0) | (mb > 0.0))
    if within.any():
        rows = np.flatnonzero(within)
        _core_contacts(res, rows, ma, mb, out)
    # Polytope cores overlapping — or touching: GJK's tetrahedron holds the origin on its
    # boundary (props resting on a floor) — get their depth and normal from the batched EPA.
    tet = (res.code == INTERSECTING) & has_tet \
        & np.isin(table.family[ia], POLYTOPE_FAMILIES) \
        & np.isin(table.family[ib], POLYTOPE_FAMILIES)
    # Curved cores that touch (a drum standing on a floor: C's face there is flat, the cap's
    # disc swept over the floor) end exactly in EPA's first steps; the others (a ball on the
    # floor) are handed back after TOUCHING_CALLS.
    touching = (res.code == INTERSECTING) & ~res.deep & has_tet & ~tet \
        & (table.family[ia] != OTHER) & (table.family[ib] != OTHER)
    for chosen, calls in ((tet, batch_epa.MAX_ITERATIONS), (touching, TOUCHING_CALLS)):
        rows = np.flatnonzero(chosen)
        if not len(rows):
            continue
        contacts = batch_epa.run(table, ia[rows], ib[rows], res.tet_a[rows], res.tet_b[rows],
                                 max_calls=calls,
                                 hand_back=batch_epa.HAND_BACK_PAIRS if hand_back else 0)
        ok = contacts.code == batch_epa.CONVERGED
        rows, n = rows[ok], contacts.normal[ok]
        margins = (ma + mb)[rows]
        out.measured[rows] = True
        out.depth[rows] = contacts.depth[ok] + margins
        out.normal[rows] = n
        out.point_a[rows] = contacts.point_a[ok] + ma[rows, None] * n
        out.point_b[rows] = contacts.point_b[ok] - mb[rows, None] * n
    return out


def _core_contacts(res, rows, ma, mb, out):
    """Penetrations of rounded pairs whose cores are apart by d < margins (seed 001 §2.3.4):
    depth margins − d along the cores' separation (``penetration._from_gjk``)."""
    ca, cb = res.core_a[rows], res.core_b[rows]
    sep = cb - ca
    d = np.sqrt((sep * sep).sum(axis=1))
    good = d > 0.0
    rows, ca, cb, sep, d = rows[good], ca[good], cb[good], sep[good], d[good]
    n = sep / d[:, None]
    out.measured[rows] = True
    out.depth[rows] = ma[rows] + mb[rows] - d
    out.normal[rows] = n
    out.point_a[rows] = ca + ma[rows, None] * n
    out.point_b[rows] = cb - mb[rows, None] * n


def distances(shapes, pairs, single, table: PoseTable | None = None) -> list:
    """``DistanceResult`` of each pair (i, j) of ``pairs`` (the shapes in that order), batched;
    the pairs the batch cannot decide are answered by ``single(a, b)``, the single query
    (``queries.distance``, which sits above this module): their ``engine`` says "single", the
    others' "batch"."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    table = PoseTable.from_shapes(shapes) if table is None else table
    res = run(table, pairs[:, 0], pairs[:, 1])
    out = []
    status_of = STATUS_OF
    for k, (i, j) in enumerate(pairs.tolist()):
        code = int(res.code[k])
        if code == FALLBACK:
            r = single(shapes[i], shapes[j])
            r.engine = "single"
        else:
            r = DistanceResult(float(res.distance[k]), res.point_a[k].copy(),
                               res.point_b[k].copy(), bool(res.intersecting[k]),
                               int(res.support_calls[k]), int(res.support_calls[k]),
                               status_of[code], engine="batch")
        out.append(r)
    return out


# --- the GJK loop ----------------------------------------------------------------------------
def _run_chunk(table, ia, ib, need, out, offset, hand_back=0):
    k = len(ia)
    if k == 0:
        return
    row = np.arange(k)
    batchable = (table.family[ia] != OTHER) & (table.family[ib] != OTHER)
    pa_all, pb_all = table.params[:, ia], table.params[:, ib]
    ma_all, mb_all = table.margin[ia], table.margin[ib]
    # First direction: centre(A) − centre(B) of the cores (``gjk._initial_axis``), scaled to a
    # largest component of 1; (1, 0, 0) if zero.
    axis = table.centre[:, ia] - table.centre[:, ib]
    big = np.abs(axis).max(axis=0)
    good = (big > 0.0) & np.isfinite(big)
    axis = np.where(good, axis / np.where(good, big, 1.0), np.array([[1.0], [0.0], [0.0]]))

    # The state of the pairs still running, compacted as pairs finish. ``idx`` maps a state
    # row to its row of this chunk.
    idx = row[batchable]
    st = _State(len(idx))
    st.v = axis[:, idx]
    st.ia, st.ib = ia[idx], ib[idx]
    st.pa, st.pb = pa_all[:, idx], pb_all[:, idx]
    st.margins = ma_all[idx] + mb_all[idx]
    st.need = None if need is None else need[idx]
    results = _Results(k)

    while len(idx) > hand_back:
        done = _iterate(table, st)
        finished = done != RUNNING
        if finished.any():
            rows = np.flatnonzero(finished)
            results.store(idx[rows], st, rows, done[rows])
            keep = ~finished
            idx = idx[keep]
            st.compact(keep)

    _lift_flat(table, ia, ib, results)
    _finish(results, ma_all, mb_all, table.extent[ia], table.extent[ib], out, offset)


class _State:
    """GJK's state for the pairs still running, struct-of-arrays (the last axis is the pair)."""

    def __init__(self, k):
        self.W = np.zeros((4, 3, k))       # simplex points of A − B
        self.A = np.zeros((4, 3, k))       # ... and the support points of A and B behind them
        self.B = np.zeros((4, 3, k))
        self.lam = np.zeros((4, k))        # barycentric weights of v
        self.n = np.zeros(k, dtype=np.int64)
        self.v = np.zeros((3, k))
        self.vv = np.full(k, np.inf)
        self.lower = np.zeros(k)
        self.max_w2 = np.zeros(k)
        self.reach = np.zeros(k)           # largest |coordinate| of a support point seen
        self.calls = np.zeros(k, dtype=np.int64)
        self.stalls = np.zeros(k, dtype=np.int64)
        self.ia = self.ib = self.pa = self.pb = self.margins = self.need = None

    def compact(self, keep):
        for name in ("W", "A", "B", "lam", "v", "pa", "pb"):
            setattr(self, name, getattr(self, name)[..., keep])
        for name in ("n", "vv", "lower", "max_w2", "reach", "calls", "stalls", "ia", "ib",
                     "margins"):
            setattr(self, name, getattr(self, name)[keep])
        if self.need is not None:
            self.need = self.need[keep]


def _iterate(table, st):
    """One GJK iteration on every running pair; the state code of each afterwards."""
    k = len(st.n)
    code = np.full(k, RUNNING, dtype=np.int8)
    v = st.v
    a = table.support(st.ia, -v, params=st.pa)
    b = table.support(st.ib, v, params=st.pb)
    w = a - b
    vw = v[0] * w[0] + v[1] * w[1] + v[2] * w[2]
    w2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    np.maximum(st.max_w2, w2, out=st.max_w2)
    np.maximum(st.reach, np.maximum(np.abs(a).max(axis=0), np.abs(b).max(axis=0)),
               out=st.reach)
    later = st.calls > 0
    st.calls += 1
    if not np.isfinite(w2).all():
        code[~np.isfinite(w2)] = FALLBACK

    vv = st.vv
    with np.errstate(invalid="ignore", divide="ignore"):
        norm_v = np.sqrt(vv)
        better = later & (vw > st.lower * norm_v)
        st.lower = np.where(better, vw / np.where(better, norm_v, 1.0), st.lower)
        gap = vv - vw
        # (relative to the shapes' own distance, |v| less the margins: ``gjk.REL_TOLERANCE``)
        rel = np.where(st.margins == 0.0, vv, norm_v * np.abs(norm_v - st.margins))
        converged = later & ((gap <= REL_TOLERANCE * rel)
                             | (gap <= SIZE_TOLERANCE * np.sqrt(st.max_w2) * norm_v))
    if st.need is not None:
        slack = CLEAR_SLACK * (np.sqrt(st.max_w2) + st.reach)
        clear = later & (st.lower - st.margins >= st.need + slack)
        code[(code == RUNNING) & clear] = CLEAR
    code[(code == RUNNING) & converged] = CONVERGED
    # A repeated support point: no progress possible. Apart if v separates (v·w > 0);
    # otherwise the pair touches or nearly so, which the single query decides.
    slots = np.arange(4)[:, None] < st.n[None, :]
    repeated = (code == RUNNING) & later & ((st.W == w[None]).all(axis=1) & slots).any(axis=0)
    code[repeated] = np.where(st.lower[repeated] > 0.0, REPEATED, FALLBACK)

    running = np.flatnonzero(code == RUNNING)
    if not len(running):
        return code
    # Add w to the simplex of the running pairs, then solve it by its size.
    n = st.n[running]
    st.W[n, :, running] = w[:, running].T
    st.A[n, :, running] = a[:, running].T
    st.B[n, :, running] = b[:, running].T
    st.n[running] = n + 1
    new_v = np.empty((3, len(running)))
    for size in (1, 2, 3, 4):
        sel = np.flatnonzero(st.n[running] == size)
        if len(sel):
            rows = running[sel]
            new_v[:, sel] = _solve(st, rows, size)
    new_vv = new_v[0] * new_v[0] + new_v[1] * new_v[1] + new_v[2] * new_v[2]
    _keep_support_set(st, running)

    size = st.n[running]
    inside = (size == 4) | (new_vv <= CONTAINMENT_TOLERANCE * st.max_w2[running])
    code[running[inside]] = np.where((size[inside] == 4) | (new_vv[inside] == 0.0),
                                     INTERSECTING, TOUCHING)
    old_vv = vv[running]
    stalled = ~inside & (new_vv >= old_vv)
    if stalled.any():
        # As ``gjk.run``: with a large duality gap go on a few times; otherwise the descent has
        # reached its rounding floor, and the single query ends it on its best state.
        retry = stalled & (old_vv - vw[running] > STALL_GAP * old_vv) \
            & (st.stalls[running] < STALL_RETRIES)
        st.stalls[running[retry]] += 1
        code[running[stalled & ~retry]] = FALLBACK
    st.v[:, running] = new_v
    st.vv[running] = new_vv
    cap = (code == RUNNING) & (st.calls >= MAX_ITERATIONS)
    code[cap] = FALLBACK
    return code


def _solve(st, rows, size):
    """Nearest point to the origin of the ``size``-point simplices of state ``rows``: sets
    their weights (in slot order, after putting the point nearest the origin first) and
    returns v (3, m)."""
    if size == 1:
        st.lam[:, rows] = 0.0
        st.lam[0, rows] = 1.0
        return st.W[0, :, rows].T
    W = st.W[:size, :, rows]                                  # (size, 3, m)
    d2 = (W * W).sum(axis=1)
    first = d2.argmin(axis=0)
    swap = np.flatnonzero(first != 0)
    if len(swap):
        # Solve from the point nearest the origin (``simplex.from_nearest``): the answer is that
        # point plus weighted edges, so it does not cancel against a farther point.
        r = rows[swap]
        f = first[swap]
        for arr in (st.W, st.A, st.B):
            p0 = arr[0, :, r].copy()
            arr[0, :, r] = arr[f, :, r]
            arr[f, :, r] = p0
        W = st.W[:size, :, rows]
    p = [W[i] for i in range(size)]
    if size == 2:
        v, lam = _segment(p[0], p[1])
    elif size == 3:
        v, lam = _triangle(p[0], p[1], p[2])
    else:
        v, lam = _tetrahedron(p[0], p[1], p[2], p[3])
    st.lam[:, rows] = 0.0
    st.lam[:size, rows] = lam
    return v


def _keep_support_set(st, rows):
    """Drop the simplex points of ``rows`` whose weight is zero, keeping the others' order."""
    used = (st.lam[:, rows] > 0.0) & (np.arange(4)[:, None] < st.n[rows][None, :])
    count = used.sum(axis=0)
    changed = np.flatnonzero(count != st.n[rows])
    if not len(changed):
        return
    r = rows[changed]
    used = used[:, changed]
    target = np.cumsum(used, axis=0) - 1          # where each kept slot goes
    old = [arr[:, :, r] for arr in (st.W, st.A, st.B)]
    old_lam = st.lam[:, r]
    st.lam[:, r] = 0.0
    for j in range(1, 4):                          # slot 0 kept stays in place
        move = used[j] & (target[j] != j)
        if not move.any():
            continue
        rr, dest = r[move], target[j][move]
        for arr, before in zip((st.W, st.A, st.B), old):
            arr[dest, :, rr] = before[j][:, move].T
    for j in range(4):
        keep = used[j]
        st.lam[target[j][keep], r[keep]] = old_lam[j, keep]
    st.n[r] = count[changed]


# --- the sub-algorithm, vectorised (``simplex``'s cases on arrays (3, m)) --------------------
def _dot(p, q):
    return p[0] * q[0] + p[1] * q[1] + p[2] * q[2]


def _cross(p, q):
    return np.stack((p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2],
                     p[0] * q[1] - p[1] * q[0]))


def _segment(p, q):
    """Nearest point of segments pq to the origin: v (3, m), weights (2, m)."""
    t = q - p
    tt = _dot(t, t)
    pt = _dot(p, t)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.where((pt >= 0.0) | (tt == 0.0), 0.0,
                     np.where(-pt >= tt, 1.0, -pt / np.where(tt == 0.0, 1.0, tt)))
    v = np.where(u == 1.0, q, p + u * t)
    return v, np.stack((1.0 - u, u))


def _triangle(p0, p1, p2):
    """Nearest point of triangles p0 p1 p2 to the origin: v (3, m), weights (3, m), by
    Cramer's rule from p0, or across the longest edge for slivers (``simplex._triangle``, which
    skips that solve where Cramer's signs show the origin clearly outside: the same answer)."""
    e1, e2 = p1 - p0, p2 - p0
    n = _cross(e1, e2)
    nn = _dot(n, n)
    sliver = (nn < SLIVER_SIN2 * _dot(e1, e1) * _dot(e2, e2)) | (nn == 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(sliver, 1.0, nn)
        l1 = -_dot(n, _cross(p0, e2)) / safe
        l2 = -_dot(n, _cross(e1, p0)) / safe
    v = p0 + l1 * e1 + l2 * e2
    lam = np.stack((1.0 - l1 - l2, l1, l2))
    if sliver.any():
        rows = np.flatnonzero(sliver)
        v_s, lam_s, flat_s = _across_long_edge(p0[:, rows], p1[:, rows], p2[:, rows])
        v[:, rows], lam[:, rows] = v_s, lam_s
        flat = np.zeros(len(nn), dtype=bool)
        flat[rows] = flat_s
    else:
        flat = np.zeros(len(nn), dtype=bool)
    inside = ~flat & (lam >= 0.0).all(axis=0)
    return _outside(p0, p1, p2, v, lam, inside)


def _across_long_edge(p0, p1, p2):
    """``simplex._across_long_edge`` on arrays: v, weights (unchecked) and which are flat."""
    d12, d02, d01 = _dot(p2 - p1, p2 - p1), _dot(p2 - p0, p2 - p0), _dot(p1 - p0, p1 - p0)
    # Rotate each triangle (c, a, b) so that ab is its longest edge: 0 keeps p0 p1 p2, 1 takes
    # p1 p2 p0, 2 takes p2 p0 p1 (``simplex._across_long_edge``'s choice, ties included).
    turn = np.where((d12 >= d02) & (d12 >= d01), 0, np.where(d02 >= d01, 1, 2))
    pts = (p0, p1, p2)
    c, a, b = (np.where(turn == 0, pts[k], np.where(turn == 1, pts[(k + 1) % 3],
                                                    pts[(k + 2) % 3])) for k in range(3))
    u = b - a
    uu = _dot(u, u)
    e = c - a
    with np.errstate(invalid="ignore", divide="ignore"):
        s = -_dot(a, u) / uu
        q = a + s * u
        g = _dot(e, u) / uu
        h = e - g * u
        hh = _dot(h, h)
        flat = (uu == 0.0) | (hh <= FLAT_TRIANGLE_SIN2 * _dot(e, e))
        lc = -_dot(q, h) / np.where(flat, 1.0, hh)
    lb = s - lc * g
    la = 1.0 - lc - lb
    v = q + lc * h
    # Back to p0 p1 p2's order: turn 0 has (c, a, b) = (p0, p1, p2), turn 1 (p1, p2, p0),
    # turn 2 (p2, p0, p1).
    l0 = np.where(turn == 0, lc, np.where(turn == 1, lb, la))
    l1 = np.where(turn == 0, la, np.where(turn == 1, lc, lb))
    l2 = np.where(turn == 0, lb, np.where(turn == 1, la, lc))
    return v, np.stack((l0, l1, l2)), flat


def _outside(p0, p1, p2, v, lam, inside):
    """Triangles whose origin projects outside (not ``inside``) take the nearest of their three
    edges; v and weights updated in place and returned."""
    out = np.flatnonzero(~inside)
    if len(out):
        # The origin projects outside (or the triangle is flat): the nearest of its three
        # edges, all solved in one call on the edges stacked side by side.
        m = len(out)
        a, b, c = p0[:, out], p1[:, out], p2[:, out]
        ev, (wi, wj) = _segment(np.concatenate((a, b, a), axis=1),
                                np.concatenate((b, c, c), axis=1))
        d = _dot(ev, ev).reshape(3, m)
        best = d.argmin(axis=0)                  # 0: edge p0 p1, 1: p1 p2, 2: p0 p2
        pick = best * m + np.arange(m)
        v[:, out] = ev[:, pick]
        wi, wj = wi[pick], wj[pick]
        zero = np.zeros(m)
        lam[:, out] = np.stack((np.where(best == 0, wi, np.where(best == 2, wi, zero)),
                                np.where(best == 0, wj, np.where(best == 1, wi, zero)),
                                np.where(best == 1, wj, np.where(best == 2, wj, zero))))
    return v, lam


_FACES = ((1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2))   # face i is opposite vertex i


def _tetrahedron(p0, p1, p2, p3):
    """Nearest point of tetrahedra to the origin: v (3, m), weights (4, m); v = 0 and all
    weights positive when the origin is inside."""
    e1, e2, e3 = p1 - p0, p2 - p0, p3 - p0
    c1 = _cross(e2, e3)
    vol = _dot(e1, c1)
    scale2 = _dot(e1, e1) * _dot(e2, e2) * _dot(e3, e3)
    flat = vol * vol <= FLAT_TETRAHEDRON_RATIO * FLAT_TETRAHEDRON_RATIO * scale2
    safe = np.where(flat, 1.0, vol)
    l1 = -_dot(p0, c1) / safe
    l2 = -_dot(p0, _cross(e3, e1)) / safe
    l3 = -_dot(p0, _cross(e1, e2)) / safe
    l0 = 1.0 - l1 - l2 - l3
    inside = ~flat & (l0 >= 0.0) & (l1 >= 0.0) & (l2 >= 0.0) & (l3 >= 0.0)
    # The weights must put the origin where they say (``simplex._tetrahedron``).
    r = l1 * e1 + l2 * e2 + l3 * e3 + p0
    longest = np.maximum(np.maximum(_dot(e1, e1), _dot(e2, e2)), _dot(e3, e3))
    inside &= _dot(r, r) <= INSIDE_RESIDUAL * INSIDE_RESIDUAL * longest
    v = np.zeros((3, len(l0)))
    lam = np.stack((l0, l1, l2, l3))
    out = np.flatnonzero(~inside)
    if len(out):
        # The nearest point of the four faces (stacked side by side, one call): the boundary
        # point nearest the origin, which is the answer when the origin is outside.
        m = len(out)
        pts = (p0[:, out], p1[:, out], p2[:, out], p3[:, out])
        fv, flam = _triangle(*(np.concatenate([pts[f[c]] for f in _FACES], axis=1)
                               for c in range(3)))
        best = _dot(fv, fv).reshape(4, m).argmin(axis=0)
        pick = best * m + np.arange(m)
        v[:, out] = fv[:, pick]
        flam = flam[:, pick]
        # Face i leaves out vertex i: its weights go to the other three in order.
        full = np.zeros((4, m))
        for i, face in enumerate(_FACES):
            sel = best == i
            for c, vertex in enumerate(face):
                full[vertex, sel] = flam[c, sel]
        lam[:, out] = full
    return v, lam


def _inradius_bound(W):
    """For tetrahedra W (4, 3, m) holding the origin: its least distance to their face planes
    (0 for a flat one). A − B contains the tetrahedron, so the shapes overlap at least this
    deep."""
    m = W.shape[2]
    best = np.full(m, np.inf)
    for i, (a, b, c) in enumerate(_FACES):
        n = _cross(W[b] - W[a], W[c] - W[a])
        nn = np.sqrt(_dot(n, n))
        # |n · p_a| / |n|: the origin's distance to the face's plane.
        with np.errstate(invalid="ignore", divide="ignore"):
            h = np.where(nn > 0.0, np.abs(_dot(n, W[a])) / np.where(nn > 0.0, nn, 1.0), 0.0)
        best = np.minimum(best, h)
    return best


def _lift_flat(table, ia, ib, res):
    """Pairs whose GJK ended on a flat simplex holding the origin — a triangle (TOUCHING, or
    INTERSECTING where v came out exactly zero) or a flat tetrahedron (INTERSECTING, no depth
    certified) — lifted into a tetrahedron holding it when C reaches past the simplex's plane.

    This is the usual end on a level: props standing on one ground plane with upright sides
    give support points at the same height along every level direction, so GJK's simplex lies
    in that plane through the origin, although the shapes overlap deeply (``epa``'s
    ``_from_triangle`` grows the simplex the same way). Of the (up to four) triangles of the
    simplex the one holding the origin most squarely is kept (one holds it: Carathéodory in the
    plane), with C's support points u along its normal m and l along −m. When both lie beyond
    the plane by more than the slack, the origin is inside the double pyramid of the triangle
    and u, l; the pair then ends INTERSECTING with the tetrahedron (triangle, u) for EPA — the
    origin on its base face — and ``inside``, the origin's least distance to the pyramid's
    six faces, certifies the overlap as GJK's own tetrahedra do. When only one of them does,
    the origin is on C's boundary (a prop resting on the floor: they touch, or overlap by a
    rounding): the pair ends INTERSECTING with the tetrahedron (triangle, that point) and no
    depth certified, and the batched EPA gives its depth (zero or a rounding) and normal as
    the single EPA does. Other pairs stay as they were (the single query decides them)."""
    _widen_segments(table, ia, ib, res)
    size = res.size
    flat = (np.isin(res.code, (TOUCHING, INTERSECTING)) & (size == 3)) | \
        ((res.code == INTERSECTING) & (size == 4) & (res.inside <= res.slack))
    rows = np.flatnonzero(flat)
    if not len(rows):
        return
    A, B = res.tet_a[rows], res.tet_b[rows]                    # (m, 4, 3)
    W = A - B
    m = len(rows)
    mr = np.arange(m)
    # The triangle holding the origin most squarely (a lone triangle's slot 3 is NaN: the
    # faces through it give no coordinates).
    best_tri = np.zeros((m, 3), dtype=np.int64)
    best_min = np.full(m, -np.inf)
    for f in _FACES:
        p, q, r = W[:, f[0]], W[:, f[1]], W[:, f[2]]
        n = _cross(q.T - p.T, r.T - p.T)                       # (3, m)
        lam = np.stack([_dot(n, _cross(b.T, c.T)) for b, c in ((q, r), (r, p), (p, q))])
        total = lam.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            least = np.where(total > 0.0, lam.min(axis=0) / np.where(total > 0.0, total, 1.0),
                             -np.inf)
        least = np.where(np.isfinite(least), least, -np.inf)
        better = least > best_min
        best_min = np.where(better, least, best_min)
        best_tri[better] = f
    ok = best_min >= 0.0
    tri = [W[mr, best_tri[:, c]] for c in range(3)]             # (m, 3) each
    n = _cross((tri[1] - tri[0]).T, (tri[2] - tri[0]).T)
    nn = np.sqrt(_dot(n, n))
    ok &= nn > 0.0
    n = n / np.where(nn > 0.0, nn, 1.0)
    ia_r, ib_r = ia[rows], ib[rows]
    ua = table.support(ia_r, n)
    ub = table.support(ib_r, -n)
    la = table.support(ia_r, -n)
    lb = table.support(ib_r, n)
    u, low = ua - ub, la - lb
    res.calls[rows] += 2
    # The pyramid's side faces (p, q, x) for x in (u, l): the origin's distance to each plane.
    inside = np.full(m, np.inf)
    for x in (u, low):
        for c in range(3):
            p, q = tri[c].T, tri[(c + 1) % 3].T
            fn = _cross(p - x, q - x)
            fl = np.sqrt(_dot(fn, fn))
            with np.errstate(invalid="ignore", divide="ignore"):
                h = np.where(fl > 0.0, np.abs(_dot(fn, x)) / np.where(fl > 0.0, fl, 1.0), 0.0)
            inside = np.minimum(inside, h)
    slack = res.slack[rows]
    above, below = _dot(n, u) > slack, -_dot(n, low) > slack
    deep = ok & above & below & (inside > slack) & np.isfinite(inside)
    # C beyond the plane on one side only — the origin is on C's boundary (the shapes touch,
    # or overlap by a rounding) — or on both with the origin on the triangle's edge (the
    # overlap not certified): the triangle with a point beyond is a tetrahedron holding the
    # origin on its boundary, and EPA finds the depth (zero where they touch) and the normal.
    touching = ok & ~deep & (above | below)
    for chosen, top_a, top_b, certified in (
            (deep, ua, ub, inside),
            (touching & above, ua, ub, np.zeros(m)),
            (touching & below & ~above, la, lb, np.zeros(m))):
        r, k = rows[chosen], mr[chosen]
        if not len(r):
            continue
        res.code[r] = INTERSECTING
        res.inside[r] = certified[chosen]
        res.tet_a[r, :3] = A[k[:, None], best_tri[k]]
        res.tet_b[r, :3] = B[k[:, None], best_tri[k]]
        res.tet_a[r, 3] = top_a[:, chosen].T
        res.tet_b[r, 3] = top_b[:, chosen].T


def _widen_segments(table, ia, ib, res):
    """GJK's segments holding the origin (two crates stacked turned on each other end so)
    widened into triangles for ``_lift_flat``: the third point C's support point across the
    segment, along the axis least aligned with it (or against it, where C does not reach
    that way), so that the triangle holds the origin on its edge."""
    rows = np.flatnonzero(np.isin(res.code, (TOUCHING, INTERSECTING)) & (res.size == 2))
    if not len(rows):
        return
    A, B = res.tet_a[rows], res.tet_b[rows]
    e = ((A[:, 1] - B[:, 1]) - (A[:, 0] - B[:, 0])).T              # (3, m)
    axis = np.zeros_like(e)
    axis[np.abs(e).argmin(axis=0), np.arange(len(rows))] = 1.0
    t = _cross(e, axis)
    tt = np.sqrt(_dot(t, t))
    good = tt > 0.0
    t = t / np.where(good, tt, 1.0)
    pa, pb = table.support(ia[rows], t), table.support(ib[rows], -t)
    qa, qb = table.support(ia[rows], -t), table.support(ib[rows], t)
    res.calls[rows] += 2
    use_p = _dot(t, pa - pb) > res.slack[rows]
    good &= use_p | (-_dot(t, qa - qb) > res.slack[rows])
    rows = rows[good]
    res.tet_a[rows, 2] = np.where(use_p[good], pa[:, good], qa[:, good]).T
    res.tet_b[rows, 2] = np.where(use_p[good], pb[:, good], qb[:, good]).T
    res.size[rows] = 3


# --- answers ---------------------------------------------------------------------------------
class _Results:
    """What each finished pair ended with, gathered in chunk rows until ``_finish``."""

    def __init__(self, k):
        self.code = np.full(k, FALLBACK, dtype=np.int8)
        self.pa = np.full((3, k), np.nan)
        self.pb = np.full((3, k), np.nan)
        self.calls = np.zeros(k, dtype=np.int64)
        self.inside = np.zeros(k)          # how deep the origin is in the final tetrahedron
        self.slack = np.zeros(k)           # CLEAR_SLACK of the pair's size and coordinates
        self.tet_a = np.full((k, 4, 3), np.nan)    # that tetrahedron's support points on A
        self.tet_b = np.full((k, 4, 3), np.nan)    # ... and on B (where EPA starts)
        self.size = np.zeros(k, dtype=np.int64)    # points in the final simplex

    def store(self, rows, st, srows, codes):
        self.code[rows] = codes
        lam = st.lam[:, srows]
        self.pa[:, rows] = (st.A[:, :, srows] * lam[:, None, :]).sum(axis=0)
        self.pb[:, rows] = (st.B[:, :, srows] * lam[:, None, :]).sum(axis=0)
        self.calls[rows] = st.calls[srows]
        self.slack[rows] = CLEAR_SLACK * (np.sqrt(st.max_w2[srows]) + st.reach[srows])
        self.size[rows] = st.n[srows]
        tet = np.flatnonzero((codes == INTERSECTING) & (st.n[srows] == 4))
        if len(tet):
            self.inside[rows[tet]] = _inradius_bound(st.W[:, :, srows[tet]])
        # (A segment or triangle holding the origin keeps its points too: ``_lift_flat``.)
        held = np.flatnonzero(np.isin(codes, (INTERSECTING, TOUCHING)) & (st.n[srows] >= 2))
        if len(held):
            self.tet_a[rows[held]] = st.A[:, :, srows[held]].transpose(2, 0, 1)
            self.tet_b[rows[held]] = st.B[:, :, srows[held]].transpose(2, 0, 1)
            # (The slots past a segment's or triangle's points hold points it dropped.)
            for size in (2, 3):
                short = rows[held][st.n[srows[held]] == size]
                self.tet_a[short, size:] = self.tet_b[short, size:] = np.nan


def _finish(res, ma, mb, size_a, size_b, out, offset):
    """Distances and closest points from the cores' (``gjk.distance``'s last steps)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        _write(res, ma, mb, size_a, size_b, out, slice(offset, offset + len(res.code)))


def _write(res, ma, mb, size_a, size_b, out, sl):
    """``_finish`` for the rows ``sl`` of ``out`` (NaN rows of fallbacks pass through)."""
    code = res.code.copy()
    pa, pb = res.pa, res.pb
    margins = ma + mb
    d_vec = pb - pa
    d = np.sqrt(_dot(d_vec, d_vec))
    apart = np.isin(code, (CONVERGED, REPEATED, CLEAR))
    cores_meet = np.isin(code, (INTERSECTING, TOUCHING))
    within = apart & (d <= margins)
    overlap = cores_meet | within
    # Cores apart but within the margins: the point at ma/(ma+mb) along the core segment is in
    # both shapes. Cores meeting: the common point is taken on the smaller shape.
    t = np.where(margins > 0.0, ma / np.where(margins > 0.0, margins, 1.0), 0.0)
    common = np.where(within, pa + t * d_vec, np.where(size_a <= size_b, pa, pb))
    unit = d_vec / np.where(d > 0.0, d, 1.0)
    point_a = np.where(overlap, common, pa + ma * unit)
    point_b = np.where(overlap, common, pb - mb * unit)
    # |point_a − point_b| is the distance returned (as the single query makes it).
    sep = point_b - point_a
    dist = np.where(overlap, 0.0, np.sqrt(_dot(sep, sep)))
    code[within & (code != CLEAR)] = INTERSECTING
    out.code[sl] = code
    keep = code != FALLBACK
    out.distance[sl] = np.where(keep, dist, np.nan)
    out.point_a[sl] = np.where(keep, point_a, np.nan).T
    out.point_b[sl] = np.where(keep, point_b, np.nan).T
    out.intersecting[sl] = keep & overlap
    out.support_calls[sl] = res.calls
    # Certainly overlapping: the origin deeper than the slack inside a tetrahedron of the
    # cores' difference (A − B then holds a ball of that radius), or cores apart by less than
    # their margins minus the slack.
    out.deep[sl] = ((code == INTERSECTING) & (res.inside + margins > res.slack)
                    & (res.inside > 0.0)) | (within & (margins - d > res.slack))
    out.tet_a[sl], out.tet_b[sl] = res.tet_a, res.tet_b
    out.core_a[sl], out.core_b[sl] = pa.T, pb.T
    out.slack[sl] = res.slack
