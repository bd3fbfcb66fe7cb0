"""Bounding-volume hierarchy: an axis-aligned box tree over items, built in numpy, walked in floats.

A ``Compound`` (its parts) and a ``TriangleMesh`` (its triangles) answer queries by testing only
the items whose boxes can matter. This module knows nothing of shapes: it holds one box per item
and answers four kinds of question about them, always for a *pair* of trees (a single convex
shape is a tree of one box, ``AABBTree.single``), so that convex–compound, compound–compound and
mesh–compound queries share one walk:

- ``overlapping_pairs``: item pairs whose boxes overlap (closed boxes: touching counts);
- ``nearest_pairs``: item pairs in order of their box gap, a lower bound on the distance of the
  items (best first; the caller stops once the bound reaches the best distance found);
- ``swept_pairs``: item pairs in order of the time A's box, moving by a translation, first meets
  B's (best first, for sweeps; a ray is the sweep of a point box, ``ray``);
- ``min_gap``: the smallest box gap between two trees (a cheap lower bound on their distance).

**Build** (top-down, all nodes of one depth at once): a node's items are split at the median of
their box centres along the axis where those centres spread most, until at most ``LEAF_SIZE``
items remain. Median splits keep the tree balanced (depth ⌈log2(n / LEAF_SIZE)⌉ whatever the
input), and doing a whole depth with one ``lexsort`` keeps a 100k-item build well under a second
in numpy. The tree is stored flat: the items in leaf order, and per node its box and either its
first child (the second follows it) or its range of items.

**Walks** run in plain Python floats on tuples: a query touches a few dozen nodes, where per-call
numpy overhead (~1 µs per small array operation) would cost more than the arithmetic.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from . import validation

# Items per leaf at most. A leaf's items are tested box by box, so small leaves cost a few more
# nodes per walk and save whole narrow-phase tests; 4 suits triangles and convex parts alike.
LEAF_SIZE = 4

# Tuple layout of a node: its box, then its first child (-1 for a leaf), then its item range.
_X0, _Y0, _Z0, _X1, _Y1, _Z1, _CHILD, _START, _END = range(9)

_INF = math.inf


class TraversalStats:
    """Counts for benchmarks: ``nodes`` node pairs the walks visited, ``pairs`` item pairs they
    handed out, ``tests`` narrow-phase tests the caller ran on them (``concave`` counts those)."""

    __slots__ = ("nodes", "pairs", "tests")

    def __init__(self) -> None:
        self.nodes = 0
        self.pairs = 0
        self.tests = 0

    def __repr__(self) -> str:
        return f"TraversalStats(nodes={self.nodes}, pairs={self.pairs}, tests={self.tests})"


class AABBTree:
    """Box tree over ``lower``/``upper`` (N, 3) item boxes; item ``i`` is row ``i``.

    ``node_count`` and ``depth`` describe the tree; ``lower``/``upper`` are the items' boxes
    (read-only) and ``bounds()`` the root box.
    """

    __slots__ = ("lower", "upper", "depth", "_nodes", "_items", "_order", "__weakref__")

    def __init__(self, lower, upper, leaf_size: int = LEAF_SIZE) -> None:
        lower, upper = _boxes(lower, upper)
        if not isinstance(leaf_size, (int, np.integer)) or leaf_size < 1:
            raise ValueError(f"leaf_size must be a positive integer, got {leaf_size!r}")
        self.lower, self.upper = lower, upper
        self.lower.setflags(write=False)
        self.upper.setflags(write=False)
        order, start, end, child, levels = _build(lower, upper, int(leaf_size))
        node_lower, node_upper = _node_bounds(lower, upper, order, start, end, child, levels)
        self.depth = len(levels) - 1
        self._order = order.tolist()
        self._items = np.hstack((lower, upper)).tolist()
        self._nodes = list(zip(*np.hstack((node_lower, node_upper)).T.tolist(),
                               child.tolist(), start.tolist(), end.tolist()))

    @classmethod
    def single(cls, lower, upper) -> "AABBTree":
        """A tree of one item (a convex shape's box), made without numpy's per-call costs."""
        tree = cls.__new__(cls)
        box = [float(lower[0]), float(lower[1]), float(lower[2]),
               float(upper[0]), float(upper[1]), float(upper[2])]
        tree.lower = tree.upper = None
        tree.depth = 0
        tree._order = [0]
        tree._items = [box]
        tree._nodes = [tuple(box) + (-1, 0, 1)]
        return tree

    def __len__(self) -> int:
        return len(self._order)

    @property
    def node_count(self) -> int:
        return len(self._nodes)

    def bounds(self) -> tuple:
        """The root box ``(lower, upper)`` as two ndarrays (3,)."""
        root = self._nodes[0]
        return np.array(root[:3]), np.array(root[3:6])

    def leaf_items(self, node: int) -> list:
        n = self._nodes[node]
        return self._order[n[_START]:n[_END]]


# --- build -------------------------------------------------------------------------------------

def _boxes(lower, upper):
    try:
        lo = np.array(lower, dtype=float)
        hi = np.array(upper, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("lower and upper must be (N, 3) arrays of numbers") from None
    for name, a in (("lower", lo), ("upper", hi)):
        if a.ndim != 2 or a.shape[1] != 3:
            raise ValueError(f"{name} must be an (N, 3) array, got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite (found NaN or inf)")
    if lo.shape != hi.shape:
        raise ValueError(f"lower and upper must have the same shape, got {lo.shape} and "
                         f"{hi.shape}")
    if len(lo) == 0:
        raise ValueError("a box tree needs at least one box")
    bad = np.flatnonzero(np.any(lo > hi, axis=1))
    if len(bad):
        raise ValueError(f"lower must not exceed upper (box {int(bad[0])} is inverted)")
    return lo, hi


def _build(lower, upper, leaf_size):
    """Median splits, one depth at a time. Returns the item order, per node (start, end,
    first child or -1) as arrays with nodes numbered depth by depth, and the index of the first
    node of each depth."""
    n = len(lower)
    centre = 0.5 * (lower + upper)
    order = np.arange(n)
    starts, ends = np.array([0]), np.array([n])
    all_start, all_end, all_child = [], [], []
    offset = 0                       # index of the first node of the current depth
    levels = []
    while True:
        levels.append(offset)
        count = len(starts)
        child = np.full(count, -1, dtype=np.int64)
        split = (ends - starts) > leaf_size
        all_start.append(starts)
        all_end.append(ends)
        all_child.append(child)
        if not split.any():
            break
        s0, s1 = starts[split], ends[split]
        lengths = s1 - s0
        first = np.cumsum(lengths) - lengths
        segment = np.repeat(np.arange(len(s0)), lengths)
        position = np.arange(int(lengths.sum())) - np.repeat(first, lengths) \
            + np.repeat(s0, lengths)
        items = order[position]
        c = centre[items]
        spread = np.maximum.reduceat(c, first) - np.minimum.reduceat(c, first)
        axis = np.argmax(spread, axis=1)
        key = c[np.arange(len(items)), axis[segment]]
        # Positions run in increasing order segment by segment, so sorting by (segment, key)
        # and writing back in place sorts each segment along its own axis.
        order[position] = items[np.lexsort((key, segment))]
        mid = s0 + lengths // 2
        child[split] = offset + count + 2 * np.arange(len(s0))
        starts = np.stack((s0, mid), axis=1).ravel()
        ends = np.stack((mid, s1), axis=1).ravel()
        offset += count
    return (order, np.concatenate(all_start), np.concatenate(all_end),
            np.concatenate(all_child), levels)


def _node_bounds(lower, upper, order, start, end, child, levels):
    """Leaf boxes by ``reduceat`` over their item ranges, then parents a depth at a time from
    the deepest up (a parent's children are always one depth below it)."""
    m = len(start)
    node_lower, node_upper = np.empty((m, 3)), np.empty((m, 3))
    leaves = np.flatnonzero(child < 0)
    by_start = leaves[np.argsort(start[leaves])]     # leaf ranges partition [0, n)
    node_lower[by_start] = np.minimum.reduceat(lower[order], start[by_start])
    node_upper[by_start] = np.maximum.reduceat(upper[order], start[by_start])
    bounds = levels + [m]
    for d in range(len(levels) - 1, -1, -1):
        k = np.arange(bounds[d], bounds[d + 1])
        k = k[child[k] >= 0]
        c = child[k]
        node_lower[k] = np.minimum(node_lower[c], node_lower[c + 1])
        node_upper[k] = np.maximum(node_upper[c], node_upper[c + 1])
    return node_lower, node_upper


# --- walks -------------------------------------------------------------------------------------

def _split_a(a, b) -> bool:
    """Descend into A (else B): the one that is not a leaf, or the larger of two inner nodes."""
    if b[_CHILD] < 0:
        return True
    if a[_CHILD] < 0:
        return False
    return (a[3] - a[0]) + (a[4] - a[1]) + (a[5] - a[2]) >= \
        (b[3] - b[0]) + (b[4] - b[1]) + (b[5] - b[2])


def overlapping_pairs(ta: AABBTree, tb: AABBTree, grow: float = 0.0,
                      stats: TraversalStats | None = None) -> list:
    """Item pairs ``(i, j)`` whose boxes overlap once A's boxes grow by ``grow`` on every side
    (boxes are closed: touching boxes overlap)."""
    na, nb = ta._nodes, tb._nodes
    ia, ib, oa, ob = ta._items, tb._items, ta._order, tb._order
    g = float(grow)
    out = []
    stack = [(0, 0)]
    visited = 0
    while stack:
        ka, kb = stack.pop()
        a, b = na[ka], nb[kb]
        visited += 1
        if a[0] - g > b[3] or b[0] > a[3] + g or a[1] - g > b[4] or b[1] > a[4] + g \
                or a[2] - g > b[5] or b[2] > a[5] + g:
            continue
        if a[_CHILD] < 0 and b[_CHILD] < 0:
            for i in oa[a[_START]:a[_END]]:
                p = ia[i]
                for j in ob[b[_START]:b[_END]]:
                    q = ib[j]
                    if p[0] - g <= q[3] and q[0] <= p[3] + g and p[1] - g <= q[4] \
                            and q[1] <= p[4] + g and p[2] - g <= q[5] and q[2] <= p[5] + g:
                        out.append((i, j))
        elif _split_a(a, b):
            c = a[_CHILD]
            stack.append((c + 1, kb))
            stack.append((c, kb))
        else:
            c = b[_CHILD]
            stack.append((ka, c + 1))
            stack.append((ka, c))
    if stats is not None:
        stats.nodes += visited
        stats.pairs += len(out)
    return out


def _gap2(a, b) -> float:
    """Squared distance between boxes a and b (6-sequences): 0 when they overlap."""
    dx = a[0] - b[3] if a[0] > b[3] else (b[0] - a[3] if b[0] > a[3] else 0.0)
    dy = a[1] - b[4] if a[1] > b[4] else (b[1] - a[4] if b[1] > a[4] else 0.0)
    dz = a[2] - b[5] if a[2] > b[5] else (b[2] - a[5] if b[2] > a[5] else 0.0)
    return dx * dx + dy * dy + dz * dz


def nearest_pairs(ta: AABBTree, tb: AABBTree, stats: TraversalStats | None = None):
    """Item pairs ``(gap, i, j)`` in nondecreasing order of the gap between their boxes.

    The gap is a lower bound on the distance of any two shapes inside the boxes, so a caller
    looking for the closest pair stops as soon as it reaches the best distance found so far
    (branch and bound, best first): only pairs that could still beat it are ever produced.
    """
    na, nb = ta._nodes, tb._nodes
    ia, ib, oa, ob = ta._items, tb._items, ta._order, tb._order
    push, pop = heapq.heappush, heapq.heappop
    # Entries (squared gap, kind, a, b): kind 0 is an item pair, 1 a node pair, so that at equal
    # bounds items come out first and a caller with a touching pair can stop at once.
    heap = [(_gap2(na[0], nb[0]), 1, 0, 0)]
    visited = 0
    while heap:
        g2, kind, ka, kb = pop(heap)
        if kind == 0:
            if stats is not None:
                stats.nodes += visited
                stats.pairs += 1
                visited = 0
            yield math.sqrt(g2), ka, kb
            continue
        a, b = na[ka], nb[kb]
        visited += 1
        if a[_CHILD] < 0 and b[_CHILD] < 0:
            for i in oa[a[_START]:a[_END]]:
                p = ia[i]
                for j in ob[b[_START]:b[_END]]:
                    push(heap, (_gap2(p, ib[j]), 0, i, j))
        elif _split_a(a, b):
            c = a[_CHILD]
            push(heap, (_gap2(na[c], b), 1, c, kb))
            push(heap, (_gap2(na[c + 1], b), 1, c + 1, kb))
        else:
            c = b[_CHILD]
            push(heap, (_gap2(a, nb[c]), 1, ka, c))
            push(heap, (_gap2(a, nb[c + 1]), 1, ka, c + 1))
    if stats is not None:
        stats.nodes += visited


def min_gap(ta: AABBTree, tb: AABBTree, stats: TraversalStats | None = None) -> float:
    """The smallest gap between an item box of A and one of B (a lower bound on the distance
    of the two sets of items)."""
    for gap, _, _ in nearest_pairs(ta, tb, stats):
        return gap
    return _INF


def _entry_time(a, b, mx, my, mz, t_max):
    """First time t in [0, t_max] at which box a moved by t·m meets box b, or None.

    On each axis the boxes overlap while lo <= t·m <= hi (lo = b's low end − a's high end,
    hi = b's high end − a's low end); the answer is the latest entry over the three axes, if it
    comes before the earliest exit. Unrolled: this runs for every node a walk visits.
    """
    t0, t1 = 0.0, t_max
    lo, hi = b[0] - a[3], b[3] - a[0]
    if mx > 0.0:
        s0, s1 = lo / mx, hi / mx
    elif mx < 0.0:
        s0, s1 = hi / mx, lo / mx
    elif lo <= 0.0 <= hi:
        s0, s1 = 0.0, t_max
    else:
        return None
    if s0 > t0:
        t0 = s0
    if s1 < t1:
        t1 = s1
    lo, hi = b[1] - a[4], b[4] - a[1]
    if my > 0.0:
        s0, s1 = lo / my, hi / my
    elif my < 0.0:
        s0, s1 = hi / my, lo / my
    elif lo <= 0.0 <= hi:
        s0, s1 = 0.0, t_max
    else:
        return None
    if s0 > t0:
        t0 = s0
    if s1 < t1:
        t1 = s1
    lo, hi = b[2] - a[5], b[5] - a[2]
    if mz > 0.0:
        s0, s1 = lo / mz, hi / mz
    elif mz < 0.0:
        s0, s1 = hi / mz, lo / mz
    elif lo <= 0.0 <= hi:
        s0, s1 = 0.0, t_max
    else:
        return None
    if s0 > t0:
        t0 = s0
    if s1 < t1:
        t1 = s1
    return t0 if t0 <= t1 else None


def swept_pairs(ta: AABBTree, tb: AABBTree, motion, t_max: float = 1.0,
                stats: TraversalStats | None = None):
    """Item pairs ``(t, i, j)`` in nondecreasing order of the first time t in [0, t_max] at
    which A's item box, moved by ``t * motion``, meets B's (B stays put).

    t is a lower bound on the time of contact of any two shapes inside the boxes: a caller
    looking for the earliest contact stops once it reaches the earliest contact found so far.
    """
    mx, my, mz = (float(c) for c in motion)
    na, nb = ta._nodes, tb._nodes
    ia, ib, oa, ob = ta._items, tb._items, ta._order, tb._order
    push, pop = heapq.heappush, heapq.heappop
    t_max = float(t_max)
    heap = []
    t = _entry_time(na[0], nb[0], mx, my, mz, t_max)
    if t is not None:
        heap.append((t, 1, 0, 0))
    visited = 0
    while heap:
        t, kind, ka, kb = pop(heap)
        if kind == 0:
            if stats is not None:
                stats.nodes += visited
                stats.pairs += 1
                visited = 0
            yield t, ka, kb
            continue
        a, b = na[ka], nb[kb]
        visited += 1
        if a[_CHILD] < 0 and b[_CHILD] < 0:
            for i in oa[a[_START]:a[_END]]:
                p = ia[i]
                for j in ob[b[_START]:b[_END]]:
                    t = _entry_time(p, ib[j], mx, my, mz, t_max)
                    if t is not None:
                        push(heap, (t, 0, i, j))
        elif _split_a(a, b):
            c = a[_CHILD]
            for k in (c, c + 1):
                t = _entry_time(na[k], b, mx, my, mz, t_max)
                if t is not None:
                    push(heap, (t, 1, k, kb))
        else:
            c = b[_CHILD]
            for k in (c, c + 1):
                t = _entry_time(a, nb[k], mx, my, mz, t_max)
                if t is not None:
                    push(heap, (t, 1, ka, k))
    if stats is not None:
        stats.nodes += visited


def ray(tree: AABBTree, origin, direction, max_t: float = _INF,
        stats: TraversalStats | None = None):
    """Items ``(t, j)`` whose boxes the ray ``origin + t * direction`` enters at t in
    [0, max_t], in nondecreasing order of that entry t (a lower bound on the item's hit)."""
    o = validation.vector("origin", origin)
    point = AABBTree.single(o, o)
    for t, _, j in swept_pairs(point, tree, direction, max_t, stats):
        yield t, j
