"""Box tree (core.bvh): every walk gives exactly what brute force over all boxes gives."""

import math

import numpy as np
import pytest

from convex_tools.core import bvh
from convex_tools.core.bvh import AABBTree, TraversalStats


def random_boxes(rng, n, extent=20.0, size=1.0):
    centre = rng.uniform(0.0, extent, (n, 3))
    half = rng.uniform(0.0, size, (n, 3))
    return centre - half, centre + half


def overlap_matrix(lo_a, hi_a, lo_b, hi_b, grow=0.0):
    return np.all((lo_a[:, None] - grow <= hi_b[None]) & (lo_b[None] <= hi_a[:, None] + grow),
                  axis=2)


def gap_matrix(lo_a, hi_a, lo_b, hi_b):
    d = np.maximum(np.maximum(lo_a[:, None] - hi_b[None], lo_b[None] - hi_a[:, None]), 0.0)
    return np.sqrt((d * d).sum(axis=2))


def entry_times(lo_a, hi_a, lo_b, hi_b, m, t_max):
    """Brute-force slab test: first t in [0, t_max] with box a + t m meeting box b (nan: never)."""
    lo = lo_b[None] - hi_a[:, None]
    hi = hi_b[None] - lo_a[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        s0 = np.where(m > 0, lo / m, np.where(m < 0, hi / m, np.where((lo <= 0) & (hi >= 0),
                                                                       -np.inf, np.inf)))
        s1 = np.where(m > 0, hi / m, np.where(m < 0, lo / m, np.where((lo <= 0) & (hi >= 0),
                                                                       np.inf, -np.inf)))
    t0 = np.maximum(s0.max(axis=2), 0.0)
    t1 = np.minimum(s1.min(axis=2), t_max)
    return np.where(t0 <= t1, t0, np.nan)


# --- build ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 4, 5, 17, 1000])
def test_every_item_sits_in_exactly_one_leaf_inside_every_box_above_it(rng, n):
    lower, upper = random_boxes(rng, n)
    tree = AABBTree(lower, upper)
    seen = []
    stack = [(0, [])]
    while stack:
        k, ancestors = stack.pop()
        node = tree._nodes[k]
        if node[6] < 0:
            items = tree.leaf_items(k)
            assert 1 <= len(items) <= bvh.LEAF_SIZE
            for i in items:
                for a in ancestors + [k]:
                    box = tree._nodes[a]
                    assert np.all(np.array(box[:3]) <= lower[i])
                    assert np.all(np.array(box[3:6]) >= upper[i])
            seen += items
        else:
            stack += [(node[6], ancestors + [k]), (node[6] + 1, ancestors + [k])]
    assert sorted(seen) == list(range(n))


def test_median_splits_keep_the_tree_balanced_even_for_clustered_input(rng):
    # Half the boxes in one tight cluster, half spread out: a median split still halves counts.
    n = 4096
    lower, upper = random_boxes(rng, n)
    lower[: n // 2] = lower[: n // 2] * 1e-6
    upper[: n // 2] = lower[: n // 2] + 1e-7
    tree = AABBTree(lower, upper)
    assert tree.depth == math.ceil(math.log2(n / bvh.LEAF_SIZE))


def test_identical_boxes_build_and_are_all_found():
    lower = np.zeros((50, 3))
    upper = np.ones((50, 3))
    tree = AABBTree(lower, upper)
    probe = AABBTree.single((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
    assert sorted(j for _, j in bvh.overlapping_pairs(probe, tree)) == list(range(50))


def test_bounds_are_the_box_around_all_items(rng):
    lower, upper = random_boxes(rng, 300)
    lo, hi = AABBTree(lower, upper).bounds()
    assert np.array_equal(lo, lower.min(axis=0)) and np.array_equal(hi, upper.max(axis=0))


@pytest.mark.parametrize("lower,upper,message", [
    (np.zeros((0, 3)), np.zeros((0, 3)), "at least one box"),
    (np.zeros((2, 2)), np.zeros((2, 2)), "lower must be an"),
    ([[0, 0, 0]], [[1, 1, np.nan]], "upper must be finite"),
    ([[0, 0, 2]], [[1, 1, 1]], "box 0 is inverted"),
    (np.zeros((2, 3)), np.ones((3, 3)), "same shape"),
])
def test_bad_boxes_are_refused_by_name(lower, upper, message):
    with pytest.raises(ValueError, match=message):
        AABBTree(lower, upper)


def test_leaf_size_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="leaf_size"):
        AABBTree(np.zeros((3, 3)), np.ones((3, 3)), leaf_size=0)


# --- walks ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("grow", [0.0, 0.7])
def test_overlapping_pairs_are_the_brute_force_pairs(rng, grow):
    la, ua = random_boxes(rng, 120)
    lb, ub = random_boxes(rng, 300)
    found = bvh.overlapping_pairs(AABBTree(la, ua), AABBTree(lb, ub), grow)
    expected = {tuple(p) for p in np.argwhere(overlap_matrix(la, ua, lb, ub, grow)).tolist()}
    assert len(found) == len(set(found)) and set(found) == expected


def test_touching_boxes_overlap():
    a = AABBTree.single((0, 0, 0), (1, 1, 1))
    b = AABBTree(np.array([[1.0, 0, 0], [1.0 + 1e-12, 0, 0]]), np.array([[2.0, 1, 1]] * 2))
    assert bvh.overlapping_pairs(a, b) == [(0, 0)]


def test_nearest_pairs_come_in_order_of_box_gap_and_all_of_them_come(rng):
    la, ua = random_boxes(rng, 30)
    lb, ub = random_boxes(rng, 200)
    gaps = gap_matrix(la, ua, lb, ub)
    out = list(bvh.nearest_pairs(AABBTree(la, ua), AABBTree(lb, ub)))
    assert len(out) == gaps.size
    assert all(p[0] <= q[0] for p, q in zip(out, out[1:]))
    for gap, i, j in out:
        assert gap == pytest.approx(gaps[i, j], abs=1e-12)


def test_min_gap_is_the_smallest_box_gap(rng):
    la, ua = random_boxes(rng, 40, extent=50.0)
    lb, ub = random_boxes(rng, 40, extent=50.0)
    lb += 60.0
    ub += 60.0
    expected = gap_matrix(la, ua, lb, ub).min()
    assert bvh.min_gap(AABBTree(la, ua), AABBTree(lb, ub)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("motion", [(30.0, 5.0, -2.0), (0.0, 0.0, 25.0), (-12.0, 0.0, 0.0)])
def test_swept_pairs_are_the_brute_force_pairs_in_order_of_entry_time(rng, motion):
    la, ua = random_boxes(rng, 20)
    lb, ub = random_boxes(rng, 150)
    m = np.array(motion)
    times = entry_times(la, ua, lb, ub, m, 1.0)
    out = list(bvh.swept_pairs(AABBTree(la, ua), AABBTree(lb, ub), m))
    assert {(i, j) for _, i, j in out} == {tuple(p) for p in np.argwhere(~np.isnan(times))}
    assert all(p[0] <= q[0] for p, q in zip(out, out[1:]))
    for t, i, j in out:
        assert t == pytest.approx(times[i, j], abs=1e-12)


def test_ray_enters_the_boxes_it_crosses_in_order():
    # A row of unit boxes along x, every other one lifted out of the ray's way.
    lower = np.array([[2.0 * k, 0.0, 3.0 * (k % 2)] for k in range(10)])
    tree = AABBTree(lower, lower + 1.0)
    out = list(bvh.ray(tree, (-1.0, 0.5, 0.5), (1.0, 0.0, 0.0), max_t=12.5))
    # Box k (even) spans x in [2k, 2k + 1]: the ray from x = -1 enters it at t = 2k + 1.
    assert out == [(1.0, 0), (5.0, 2), (9.0, 4)]


def test_stats_count_nodes_and_pairs(rng):
    lower, upper = random_boxes(rng, 2000, extent=100.0)
    tree = AABBTree(lower, upper)
    stats = TraversalStats()
    probe = AABBTree.single((50, 50, 50), (51, 51, 51))
    pairs = bvh.overlapping_pairs(probe, tree, stats=stats)
    assert stats.pairs == len(pairs)
    # A small probe visits a path down the tree and its neighbours, not the whole tree.
    assert 0 < stats.nodes < tree.node_count // 4
