"""Broad phase: candidate_pairs finds every overlapping box pair exactly once, in sorted order."""

import numpy as np
import pytest

from convex_tools.core import Box, Sphere, distance, penetration, translated
from convex_tools.core.broadphase import (candidate_pairs, check_pairs, query_all,
                                          shape_aabbs)


def brute_force(lower, upper):
    """Every pair i < j whose closed boxes overlap, by testing all n² pairs."""
    overlap = np.all((lower[:, None, :] <= upper[None, :, :])
                     & (lower[None, :, :] <= upper[:, None, :]), axis=2)
    i, j = np.nonzero(np.triu(overlap, 1))
    return np.stack((i, j), axis=1)


def random_scene(rng, n, large_fraction=0.0, integer=False):
    centres = rng.uniform(0.0, rng.uniform(1.0, 30.0), (n, 3))
    halves = rng.exponential(rng.uniform(0.1, 3.0), (n, 3))
    halves[rng.random(n) < large_fraction] *= 50.0  # floors and walls among small objects
    if integer:  # many exactly touching faces, edges and corners
        centres, halves = np.round(centres), np.round(halves)
    return centres - halves, centres + halves


@pytest.mark.parametrize("seed", range(40))
def test_matches_brute_force_on_random_scenes(seed):
    rng = np.random.default_rng(seed)
    lower, upper = random_scene(rng, int(rng.integers(2, 400)),
                                large_fraction=0.1 if seed % 3 == 0 else 0.0,
                                integer=seed % 4 == 1)
    pairs = candidate_pairs(lower, upper)
    assert pairs.dtype == np.int64
    np.testing.assert_array_equal(pairs, brute_force(lower, upper))


def test_touching_faces_edges_and_corners_count():
    # Unit cubes on a grid with spacing 1: every neighbour (26-neighbourhood) touches.
    grid = np.array([(x, y, z) for x in range(3) for y in range(3) for z in range(3)], float)
    pairs = candidate_pairs(grid, grid + 1.0)
    np.testing.assert_array_equal(pairs, brute_force(grid, grid + 1.0))
    # 27 cubes: pairs of cells differing by at most 1 on every axis.
    assert len(pairs) == sum(1 for i in range(27) for j in range(i + 1, 27)
                             if np.all(np.abs(grid[i] - grid[j]) <= 1))


def test_boxes_apart_by_a_hair_are_not_pairs():
    lower = np.array([[0.0, 0.0, 0.0], [1.0 + 1e-12, 0.0, 0.0]])
    assert candidate_pairs(lower, lower + 1.0).shape == (0, 2)


def test_identical_and_flat_boxes():
    # Degenerate boxes (points, squares) at one spot all overlap each other.
    lower = np.zeros((4, 3))
    upper = np.array([[0, 0, 0], [1, 1, 0], [1, 1, 1], [0, 0, 0]], float)
    np.testing.assert_array_equal(candidate_pairs(lower, upper),
                                  [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])


def test_one_large_box_overlapping_everything():
    rng = np.random.default_rng(7)
    lower, upper = random_scene(rng, 300)
    lower = np.vstack((lower, [-100.0, -100.0, -1.0]))  # a floor through the scene
    upper = np.vstack((upper, [100.0, 100.0, 1.0]))
    np.testing.assert_array_equal(candidate_pairs(lower, upper), brute_force(lower, upper))


@pytest.mark.parametrize("n", [0, 1])
def test_empty_and_single_box(n):
    boxes = np.zeros((n, 3))
    assert candidate_pairs(boxes, boxes + 1.0).shape == (0, 2)


def test_scattered_objects_scale_nearly_linearly():
    # 20k unit boxes at constant density: the candidates grow with n, not n^(5/3).
    rng = np.random.default_rng(3)
    n = 20000
    centres = rng.uniform(0.0, (8.0 * n) ** (1 / 3), (n, 3))
    pairs = candidate_pairs(centres - 0.5, centres + 0.5)
    assert len(pairs) < 2 * n


@pytest.mark.parametrize("lower, upper, message", [
    (np.zeros((2, 2)), np.ones((2, 2)), "shape"),
    (np.zeros((2, 3)), np.ones((3, 3)), "same shape"),
    ([[0.0, np.nan, 0.0]], [[1.0, 1.0, 1.0]], "finite"),
    ([[0.0, 2.0, 0.0]], [[1.0, 1.0, 1.0]], "inverted"),
    ([["a", 0, 0]], [[1, 1, 1]], "numbers"),
])
def test_bad_boxes_raise(lower, upper, message):
    with pytest.raises(ValueError, match=message):
        candidate_pairs(lower, upper)


def test_shape_aabbs_margin_and_sweeps():
    shapes = [translated(Box((1.0, 2.0, 3.0)), (10.0, 0.0, 0.0)), Sphere(0.5)]
    lower, upper = shape_aabbs(shapes, margin=0.25, sweeps=[(0.0, -4.0, 0.0), (1.0, 1.0, 1.0)])
    np.testing.assert_allclose(lower, [[8.75, -6.25, -3.25], [-0.75, -0.75, -0.75]])
    np.testing.assert_allclose(upper, [[11.25, 2.25, 3.25], [1.75, 1.75, 1.75]])


@pytest.mark.parametrize("kwargs, message", [
    ({"margin": -1.0}, "margin"),
    ({"sweeps": [(0.0, 0.0, 0.0)]}, "sweeps"),
    ({"sweeps": [(0.0, 0.0, np.inf)] * 2}, "sweeps"),
])
def test_shape_aabbs_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        shape_aabbs([Sphere(1.0), Sphere(1.0)], **kwargs)


def test_shape_aabbs_rejects_non_shapes():
    with pytest.raises(ValueError, match=r"shapes\[1\]"):
        shape_aabbs([Sphere(1.0), "box"])


@pytest.mark.parametrize("shapes", [None, 5, "box"])
def test_query_all_rejects_what_is_not_a_sequence_of_shapes(shapes):
    with pytest.raises(ValueError, match="shapes must be a sequence"):
        query_all(shapes, distance)


def test_a_users_plain_shape_goes_through_the_broad_phase():
    class Ball:                                # only a support mapping, no base class
        def __init__(self, x):
            self.x = x

        def support_xyz(self, dx, dy, dz):
            n = (dx * dx + dy * dy + dz * dz) ** 0.5 or 1.0
            return (self.x + dx / n, dy / n, dz / n)

    balls = [Ball(0.0), Ball(2.5), Ball(10.0)]
    lower, upper = shape_aabbs(balls)
    np.testing.assert_allclose(lower[1], (1.5, -1.0, -1.0))
    found = list(query_all(balls, distance, margin=0.5))
    assert [(i, j) for i, j, _ in found] == [(0, 1)]
    assert found[0][2].distance == pytest.approx(0.5) and found[0][2].engine == "single"
    assert check_pairs(balls, penetration) == []


def test_query_all_runs_query_on_candidates_and_skips_none():
    spheres = [translated(Sphere(1.0), (3.0 * i, 0.0, 0.0)) for i in range(5)]
    spheres.append(translated(Sphere(1.0), (1.5, 0.0, 0.0)))  # overlaps spheres 0 and 1
    calls = []

    def centres_close(a, b):
        calls.append((a, b))
        d = np.linalg.norm(a.support((1, 0, 0)) - b.support((1, 0, 0)))
        return d if d < 2.0 else None

    found = check_pairs(spheres, centres_close)
    assert [(i, j) for i, j, _ in found] == [(0, 5), (1, 5)]
    assert found[0][2] == pytest.approx(1.5)
    assert len(calls) == 2  # only the candidate pairs were queried


def test_query_all_margin_finds_pairs_within_clearance():
    boxes = [Box((1.0, 1.0, 1.0)), translated(Box((1.0, 1.0, 1.0)), (2.5, 0.0, 0.0))]
    assert check_pairs(boxes, lambda a, b: True) == []
    assert check_pairs(boxes, lambda a, b: True, margin=0.25) == [(0, 1, True)]


def test_query_all_progress_and_cancel():
    spheres = [Sphere(1.0) for _ in range(30)]  # 435 overlapping pairs
    seen = []
    found = check_pairs(spheres, lambda a, b: 1, progress=lambda d, t: seen.append((d, t)))
    assert len(found) == 435
    assert seen == [(256, 435), (435, 435)]
    stopped = list(query_all(spheres, lambda a, b: 1, progress=lambda d, t: False))
    assert len(stopped) == 256


def test_query_all_bad_callables():
    with pytest.raises(ValueError, match="query"):
        query_all([Sphere(1.0)], None)
    with pytest.raises(ValueError, match="progress"):
        query_all([Sphere(1.0)], lambda a, b: 1, progress=3)
