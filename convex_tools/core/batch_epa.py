"""Batched Expanding Polytope Algorithm: penetration depths of many overlapping polytope pairs
at once, in numpy arrays.

``epa`` step for step (seed 000 §4, seed 001 §2.5), for pairs whose cores are both polytopes
(``placement`` families POLY and HULL: points, segments, boxes, rectangles, hulls, and the cores
of spheres, capsules and round boxes), starting from the tetrahedron holding the origin that the
batched GJK (``batch``) ended with. Every pair's polytope lives in fixed-size arrays — vertices
(K, MAX_VERTICES, 3), faces (K, MAX_FACES, 3) with their unit normals, plane distances, whether
alive, and the face across each edge — and each iteration, for all pairs at once:

1. takes the alive face nearest the origin (the lower bound d);
2. asks C = A − B for its support point w along that face's normal (the upper bound n·w);
3. stops when n·w − d is within ``epa.ROUNDING_GAP`` of the size of C (on polytopes EPA always
   ends so): the depth is d, the normal n, the contact points the barycentric combination of
   the face's support points at the origin's projection, taken in the coplanar face that holds
   the projection (``epa._Faces.holding_projection``);
4. else removes the faces w sees, by a flood fill over the face adjacency from the nearest face
   (``epa.VISIBLE_TOLERANCE``), and fans new faces from the horizon edges to w.

The same guards as ``epa`` end a pair instead of trusting rounding: a horizon that is not one
simple loop, a degenerate new face (``epa.DEGENERATE_SIN2``), a new face nearer the origin than
the one it replaces (``epa.ORIGIN_TOLERANCE``), a projection outside every coplanar face, the
arrays full, or ``MAX_ITERATIONS``. Such a pair is marked FALLBACK, and the caller answers it
with the single query, which has the remedies (the ray finish, MPR) this one leaves out. Curved
shapes (ROUND, CONE) are given to it only where they touch (``batch.screen``), with a few
support calls: a cylinder standing on a floor meets it in a flat face of C, which the first
iteration finds exactly; a curved contact is handed back, its EPA needing the Newton polish of
``epa``.

Layering (docs/ARCHITECTURE.md): uses ``placement`` and ``epa``'s tolerances; ``batch`` calls
it.
"""

from __future__ import annotations

import numpy as np

from . import epa
from .results import Code

# Support calls per pair. Polytope pairs end in under 30 (``epa.MAX_ITERATIONS`` is 100 for
# curved ones); a pair still going here is left to the single query.
MAX_ITERATIONS = 40
# Array sizes per pair: four vertices to start, one per iteration; a closed triangulated polytope
# of V vertices has 2V − 4 faces (and a fan briefly needs two more slots).
MAX_VERTICES = 4 + MAX_ITERATIONS
MAX_FACES = 2 * MAX_VERTICES + 2
START_VERTICES = 8

# ``batch.screen`` hands the polytopes still growing back to the single EPA once no more than
# this many are left (as ``batch.HAND_BACK_PAIRS``): a pass costs ~0.4 ms whatever their
# number, a single EPA on a polytope pair ~150 µs.
HAND_BACK_PAIRS = 24

ROUNDING_GAP = epa.ROUNDING_GAP
VISIBLE_TOLERANCE = epa.VISIBLE_TOLERANCE
ORIGIN_TOLERANCE = epa.ORIGIN_TOLERANCE
DEGENERATE_SIN2 = epa.DEGENERATE_SIN2
SLIVER_SIN2 = epa.SLIVER_SIN2
COPLANAR_COSINE_GAP = epa.COPLANAR_COSINE_GAP

# The tetrahedron (0, 1, 2, 3) of positive volume, its faces counter-clockwise from outside
# (``epa._tetrahedron_faces``), and the face across each of their edges (edge e of face f runs
# from its vertex e to vertex e + 1).
_TET_FACES = np.array([(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)])


def _tet_adjacency():
    edge_face = {}
    for f, (a, b, c) in enumerate(_TET_FACES.tolist()):
        for p, q in ((a, b), (b, c), (c, a)):
            edge_face[(p, q)] = f
    return np.array([[edge_face[(q, p)] for p, q in ((a, b), (b, c), (c, a))]
                     for a, b, c in _TET_FACES.tolist()])


_TET_ADJ = _tet_adjacency()

# Stop codes (``results.Code``, shared with ``batch``): a pair RUNNING ends CONVERGED or
# FALLBACK.
RUNNING, CONVERGED, FALLBACK = int(Code.RUNNING), int(Code.CONVERGED), int(Code.FALLBACK)


class BatchContacts:
    """Penetrations of the cores (arrays, one row per pair): ``depth``, ``normal`` (K, 3) from
    A toward B, ``point_a``, ``point_b`` (K, 3) with point_a − point_b == depth · normal,
    ``code`` (CONVERGED or FALLBACK: no answer) and ``support_calls``."""

    def __init__(self, k):
        self.depth = np.full(k, np.nan)
        self.normal = np.full((k, 3), np.nan)
        self.point_a = np.full((k, 3), np.nan)
        self.point_b = np.full((k, 3), np.nan)
        self.code = np.full(k, FALLBACK, dtype=np.int8)
        self.support_calls = np.zeros(k, dtype=np.int64)


def run(table, ia, ib, tet_a, tet_b, max_calls=MAX_ITERATIONS, hand_back=0) -> BatchContacts:
    """EPA on the cores of pairs (``ia[k]``, ``ib[k]``) of ``table``, each from the support
    points ``tet_a[k]``, ``tet_b[k]`` (4, 3) of A and B of a tetrahedron of C holding the
    origin (GJK's last simplex). ``max_calls``: support calls per pair before it is handed
    back (at most MAX_ITERATIONS); ``hand_back``: once no more than this many pairs are still
    running, they are handed back too (``HAND_BACK_PAIRS``; 0, the default, runs all)."""
    ia = np.asarray(ia, dtype=np.int64)
    ib = np.asarray(ib, dtype=np.int64)
    k = len(ia)
    out = BatchContacts(k)
    if k == 0:
        return out
    st = _State(table, ia, ib, np.asarray(tet_a, dtype=float), np.asarray(tet_b, dtype=float))
    idx = np.arange(k)
    good = st.start()
    idx = idx[good]
    st.compact(good)
    while len(idx) > hand_back:
        # Every pair still running has the same number of vertices (four, plus one per
        # iteration), so the live part of the arrays is the same for all of them.
        code = st.iterate(table, min(max_calls, MAX_ITERATIONS))
        done = code != RUNNING
        if done.any():
            st.finish(np.flatnonzero(done), code[done], idx[done], out)
            keep = ~done
            idx = idx[keep]
            st.compact(keep)
        if len(idx) > hand_back:
            ok = st.expand()
            if not ok.all():
                out.support_calls[idx[~ok]] = st.calls[~ok]     # (handed back, no answer)
                idx = idx[ok]
                st.compact(ok)
    out.support_calls[idx] = st.calls                   # (the last few, handed back)
    return out


class _State:
    """The polytopes of the pairs still running (the first axis is the pair). Faces live in
    the first ``2 · nv`` slots (a closed polytope of nv vertices has 2 nv − 4 faces)."""

    def __init__(self, table, ia, ib, tet_a, tet_b):
        k = len(ia)
        self.ia, self.ib = ia, ib
        self.pa, self.pb = table.params[:, ia], table.params[:, ib]
        # The arrays start small and double as the polytopes grow (compacting them as pairs
        # finish copies only what is in use): most pairs end within 8 vertices.
        v, f = START_VERTICES, 2 * START_VERTICES + 2
        self.W = np.zeros((k, v, 3))
        self.A = np.zeros((k, v, 3))
        self.B = np.zeros((k, v, 3))
        self.A[:, :4], self.B[:, :4] = tet_a, tet_b
        self.W[:, :4] = tet_a - tet_b
        self.nv = 4
        self.fv = np.zeros((k, f, 3), dtype=np.int64)
        self.fn = np.zeros((k, f, 3))
        self.fd = np.zeros((k, f))
        self.alive = np.zeros((k, f), dtype=bool)
        self.adj = np.zeros((k, f, 3), dtype=np.int64)
        self.scale = np.sqrt((self.W[:, :4] ** 2).sum(axis=2)).max(axis=1)
        self.calls = np.zeros(k, dtype=np.int64)
        self.best = np.zeros(k, dtype=np.int64)
        self.w = self.a = self.b = self.d = None

    _ARRAYS = ("ia", "ib", "W", "A", "B", "fv", "fn", "fd", "alive", "adj", "scale", "calls",
               "best", "w", "a", "b", "d")

    def compact(self, keep):
        for name in self._ARRAYS:
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, value[keep])
        self.pa, self.pb = self.pa[:, keep], self.pb[:, keep]

    def start(self):
        """The tetrahedron's four faces; False for a pair whose faces fail the guards."""
        W = self.W
        vol = _dot(W[:, 1] - W[:, 0], _cross(W[:, 2] - W[:, 0], W[:, 3] - W[:, 0]))
        flip = vol < 0.0
        for arr in (self.W, self.A, self.B):       # vertices 1 and 2 swapped: positive volume
            arr[flip, 1], arr[flip, 2] = arr[flip, 2].copy(), arr[flip, 1].copy()
        self.fv[:, :4] = _TET_FACES
        self.adj[:, :4] = _TET_ADJ
        self.alive[:, :4] = True
        p, q, w = (W[:, _TET_FACES[:, c]] for c in range(3))     # (k, 4, 3) each
        n, d, ok = _face_planes(p, q, w, (-ORIGIN_TOLERANCE * self.scale)[:, None])
        self.fn[:, :4], self.fd[:, :4] = n, d
        return ok.all(axis=1)

    def iterate(self, table, max_calls=MAX_ITERATIONS):
        """Steps 1-3 for every pair: per pair RUNNING, CONVERGED or FALLBACK."""
        k = len(self.ia)
        r = np.arange(k)
        fc = 2 * self.nv
        code = np.full(k, RUNNING, dtype=np.int8)
        best = np.where(self.alive[:, :fc], self.fd[:, :fc], np.inf).argmin(axis=1)
        d = self.fd[r, best]
        n = self.fn[r, best]                                     # (k, 3)
        a = table.support(self.ia, n.T, params=self.pa).T
        b = table.support(self.ib, -n.T, params=self.pb).T
        w = a - b
        self.calls += 1
        np.maximum(self.scale, np.sqrt(_dot(w, w)), out=self.scale)
        gap = _dot(n, w) - d
        code[~np.isfinite(gap)] = FALLBACK
        code[(code == RUNNING) & (gap <= ROUNDING_GAP * self.scale)] = CONVERGED
        code[(code == RUNNING) & (self.calls >= max_calls)] = FALLBACK
        if self.nv >= MAX_VERTICES:
            code[code == RUNNING] = FALLBACK
        self.best, self.d, self.w, self.a, self.b = best, d, w, a, b
        return code

    def _grow(self):
        """Room for one more vertex and the faces it brings (2 (nv + 1) slots)."""
        if self.W.shape[1] <= self.nv:
            v = min(2 * self.W.shape[1], MAX_VERTICES)
            for name in ("W", "A", "B"):
                old = getattr(self, name)
                new = np.zeros((old.shape[0], v, 3))
                new[:, :old.shape[1]] = old
                setattr(self, name, new)
        if self.fd.shape[1] < 2 * self.nv + 2:
            f = min(2 * self.fd.shape[1], MAX_FACES)
            for name in ("fv", "fn", "fd", "alive", "adj"):
                old = getattr(self, name)
                new = np.zeros((old.shape[0], f) + old.shape[2:], dtype=old.dtype)
                new[:, :old.shape[1]] = old
                setattr(self, name, new)

    def expand(self):
        """Step 4 for every pair: add w, remove the faces it sees, fan the horizon to it.
        Returns which pairs succeeded (the others fall back)."""
        self._grow()
        m = len(self.ia)
        mr = np.arange(m)
        nv, fc = self.nv, 2 * self.nv
        fn, fd, alive, adj, fv = (self.fn[:, :fc], self.fd[:, :fc], self.alive[:, :fc],
                                  self.adj[:, :fc], self.fv[:, :fc])
        best, d, w, scale = self.best, self.d, self.w, self.scale
        # Faces w lies beyond, and of them those reachable from the nearest one across edges.
        above = alive & (_dot(fn, w[:, None, :]) - fd > VISIBLE_TOLERANCE * scale[:, None])
        vis = np.zeros_like(alive)
        vis[mr, best] = True
        # The face across each edge, as an index into the flattened (m, fc) arrays.
        across = adj + (mr * fc)[:, None, None]
        while True:
            new = above & np.take(vis, across).any(axis=2) & ~vis
            if not new.any():
                break
            vis |= new
        # Horizon edges: edges of removed faces whose neighbour stays.
        hk, hf, he = np.nonzero(vis[:, :, None] & ~np.take(vis, across))
        p = fv[hk, hf, he]
        q = fv[hk, hf, (he + 1) % 3]
        outer = adj[hk, hf, he]
        count = np.bincount(hk, minlength=m)
        ok = count >= 3
        # The horizon must be one simple loop: each vertex starts and ends at most one edge,
        # and following the edges from the first returns to it after exactly ``count`` steps.
        starts = np.bincount(hk * nv + p, minlength=m * nv).reshape(m, nv)
        ends = np.bincount(hk * nv + q, minlength=m * nv).reshape(m, nv)
        ok &= (starts <= 1).all(axis=1) & (starts == ends).all(axis=1)
        nxt = np.zeros((m, nv), dtype=np.int64)
        nxt[hk, p] = q
        offsets = np.concatenate(([0], np.cumsum(count)[:-1]))
        first = p[np.minimum(offsets, len(p) - 1)] if len(p) else np.zeros(m, dtype=np.int64)
        cur = first.copy()
        loop_len = np.zeros(m, dtype=np.int64)
        for step in range(1, int(count.max(initial=0)) + 1):
            cur = nxt[mr, cur]
            loop_len = np.where((loop_len == 0) & (cur == first), step, loop_len)
        ok &= loop_len == count
        # New faces (p, q, w): unit normals, planes, guards.
        W = self.W
        n_new, d_new, fine = _face_planes(W[hk, p], W[hk, q], w[hk],
                                          (d - ORIGIN_TOLERANCE * scale)[hk])
        ok &= np.bincount(hk, weights=~fine, minlength=m) == 0
        # Slots: the removed faces' and the dead ones, in order (room for 2 (nv + 1) faces).
        free = np.ones((m, fc + 2), dtype=bool)
        free[:, :fc] = ~alive | vis
        order = np.argsort(~free, axis=1, kind="stable")
        slot = order[hk, np.arange(len(hk)) - offsets[hk]]
        # Write the pairs that succeeded.
        e = ok[hk]
        hk, p, q, outer, slot, n_new, d_new = (x[e] for x in (hk, p, q, outer, slot, n_new,
                                                                 d_new))
        fc2 = fc + 2
        fn, fd, alive, adj, fv = (self.fn[:, :fc2], self.fd[:, :fc2], self.alive[:, :fc2],
                                  self.adj[:, :fc2], self.fv[:, :fc2])
        alive[:, :fc] &= ~(vis & ok[:, None])
        alive[hk, slot] = True
        fv[hk, slot] = np.stack((p, q, np.full(len(hk), nv)), axis=1)
        fn[hk, slot] = n_new
        fd[hk, slot] = d_new
        # Across edge (p, q): the face kept outside, whose edge (q, p) now faces the new one.
        edge_in_outer = (fv[hk, outer] == q[:, None]).argmax(axis=1)
        adj[hk, outer, edge_in_outer] = slot
        start_of = np.zeros((m, nv), dtype=np.int64)
        end_of = np.zeros((m, nv), dtype=np.int64)
        start_of[hk, p] = slot
        end_of[hk, q] = slot
        adj[hk, slot, 0] = outer
        adj[hk, slot, 1] = start_of[hk, q]         # edge (q, w): the new face starting at q
        adj[hk, slot, 2] = end_of[hk, p]           # edge (w, p): the new face ending at p
        self.W[:, nv], self.A[:, nv], self.B[:, nv] = w, self.a, self.b
        self.nv = nv + 1
        return ok

    def finish(self, rows, codes, out_rows, out):
        """Contacts of the converged ``rows``: the origin's projection on their nearest face,
        in the coplanar face that holds it."""
        out.support_calls[out_rows] = self.calls[rows]
        conv = codes == CONVERGED
        rows, out_rows = rows[conv], out_rows[conv]
        if not len(rows):
            return
        m = len(rows)
        mr = np.arange(m)
        fc = 2 * self.nv
        best = self.best[rows]
        d = self.d[rows]
        n = self.fn[rows, best]
        W = self.W[rows, :self.nv]
        fv = self.fv[rows, :fc]
        fd, fn, alive = self.fd[rows, :fc], self.fn[rows, :fc], self.alive[rows, :fc]
        q = d[:, None] * n
        # Coordinates of the projection in every alive face of the same plane (the nearest
        # face first), unnormalised; the face whose smallest one is largest holds it.
        coplanar = alive & (np.abs(fd - d[:, None]) <= ROUNDING_GAP * self.scale[rows][:, None]) \
            & (_dot(fn, n[:, None, :]) >= 1.0 - COPLANAR_COSINE_GAP)
        coplanar[mr, best] = True
        corners = [W[mr[:, None], fv[:, :, c]] for c in range(3)]         # (m, F, 3) each
        lam = _triangle_coordinates(*corners, q[:, None, :], n[:, None, :])   # (m, F, 3)
        least = np.where(coplanar, lam.min(axis=2), -np.inf)
        least[mr, best] += np.where(least[mr, best] >= 0.0, np.inf, 0.0)   # keep best if in
        face = least.argmax(axis=1)
        held = least[mr, face] >= 0.0
        lam = np.maximum(lam[mr, face], 0.0)
        total = lam.sum(axis=1)
        held &= total > 0.0
        lam = lam / np.where(total > 0.0, total, 1.0)[:, None]
        ids = fv[mr, face]                                              # (m, 3)
        pa = (self.A[rows[:, None], ids] * lam[:, :, None]).sum(axis=1)
        pb = (self.B[rows[:, None], ids] * lam[:, :, None]).sum(axis=1)
        # pa − pb == depth · n exactly: half the residual to each (``split_residual``).
        res = 0.5 * (pa - pb - d[:, None] * n)
        pa, pb = pa - res, pb + res
        keep = held & np.isfinite(pa).all(axis=1) & np.isfinite(pb).all(axis=1)
        o = out_rows[keep]
        out.depth[o] = np.maximum(d[keep], 0.0)
        out.normal[o] = n[keep]
        out.point_a[o] = pa[keep]
        out.point_b[o] = pb[keep]
        out.code[o] = CONVERGED


def _dot(p, q):
    return p[..., 0] * q[..., 0] + p[..., 1] * q[..., 1] + p[..., 2] * q[..., 2]


def _face_planes(p, q, w, floor):
    """Unit normals and plane distances of faces (p, q, w), counter-clockwise from outside:
    n = (p − w) × (q − w), from the two shorter edges on a sliver (``epa._Faces.fan``); and
    which pass the guards (not degenerate, plane no nearer the origin than ``floor``)."""
    a, b = p - w, q - w
    n = _cross(a, b)
    nn = _dot(n, n)
    aa, bb = _dot(a, a), _dot(b, b)
    sliver = nn < SLIVER_SIN2 * aa * bb
    if sliver.any():
        # From the two shorter edges (``geometry.sliver_cross``): a × b = a × c = b × c.
        c = q - p                 # (from the points: b − a of two long edges is not exact)
        cc = _dot(c, c)
        longest_c = (cc >= aa) & (cc >= bb)
        alt = np.where((aa <= bb)[..., None], _cross(a, c), _cross(b, c))
        n = np.where((sliver & ~longest_c)[..., None], alt, n)
        nn = _dot(n, n)
    fine = (nn > DEGENERATE_SIN2 * aa * bb) & (nn > 0.0)
    n = n / np.sqrt(np.where(fine, nn, 1.0))[..., None]
    d = _dot(n, w)
    fine &= (d >= floor) & np.isfinite(d)
    return n, d, fine


def _triangle_coordinates(p1, p2, p3, q, n):
    """``geometry.triangle_coordinates`` on arrays: n·((p2 − q) × (p3 − q)) and its cyclic
    shifts, stacked on the last axis."""
    out = []
    for a, b in ((p2, p3), (p3, p1), (p1, p2)):
        out.append(_dot(n, _cross(a - q, b - q)))
    return np.stack(out, axis=-1)


def _cross(p, q):
    """p × q on the last axis (``np.cross`` costs several times more on small arrays)."""
    px, py, pz = p[..., 0], p[..., 1], p[..., 2]
    qx, qy, qz = q[..., 0], q[..., 1], q[..., 2]
    return np.stack((py * qz - pz * qy, pz * qx - px * qz, px * qy - py * qx), axis=-1)
