"""Our Quickhull against Blender's own ``bmesh.ops.convex_hull`` on the same points.

BMesh stores coordinates in single precision, so the inputs here are float32 values (both hulls
then see the very same points). Blender's hull also works within its own, much larger, epsilon:
on dense clouds it drops points up to ~1e-4 of the extent outside its hull and keeps some that
far inside ours. So vertex sets are compared exactly only where every corner stands out well
beyond that (inputs in general position), and elsewhere only up to that epsilon.
"""

import numpy as np
import pytest

pytest.importorskip("bpy")
import bmesh  # noqa: E402  (importable only once bpy is)

from convex_tools.core.quickhull import convex_hull  # noqa: E402

# Blender's hull may keep or drop points this close to the hull (relative to the extent).
BLENDER_EPSILON_REL = 1e-3


def blender_hull_indices(points):
    bm = bmesh.new()
    try:
        for p in points.tolist():
            bm.verts.new(p)
        bm.verts.index_update()
        result = bmesh.ops.convex_hull(bm, input=list(bm.verts))
        verts = [g for g in result["geom"] if isinstance(g, bmesh.types.BMVert)]
        return np.array(sorted(v.index for v in verts))
    finally:
        bm.free()


def single(points):
    return np.asarray(points, dtype=np.float32).astype(float)


def height_above_hull(points, vertex_indices, queries):
    """Signed distance of ``queries`` outside the hull of ``points[vertex_indices]``."""
    h = convex_hull(points[vertex_indices])
    v, f = h.vertices, h.faces
    n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    n /= np.linalg.norm(n, axis=1)[:, None]
    return np.max(queries @ n.T - np.einsum("ij,ij->i", n, v[f[:, 0]]), axis=1)


def sphere(rng, n):
    p = rng.normal(size=(n, 3))
    return p / np.linalg.norm(p, axis=1)[:, None]


@pytest.mark.parametrize("seed", range(3))
def test_sparse_sphere_points_same_vertices(seed):
    # 300 points on a unit sphere: every point is a corner by ~1e-2, far beyond either epsilon
    points = single(sphere(np.random.default_rng(seed), 300))
    ours = convex_hull(points).indices
    np.testing.assert_array_equal(np.sort(ours), blender_hull_indices(points))
    assert len(ours) == 300


@pytest.mark.parametrize("seed", range(3))
def test_box_with_interior_points_same_vertices(seed):
    rng = np.random.default_rng(seed)
    corners = np.array([(x, y, z) for x in (-1, 1) for y in (-2, 2) for z in (-0.5, 0.5)])
    points = single(np.vstack([rng.uniform(-0.95, 0.95, (1000, 3)) * (1, 2, 0.5), corners]))
    ours = np.sort(convex_hull(points).indices)
    np.testing.assert_array_equal(ours, np.arange(1000, 1008))
    np.testing.assert_array_equal(blender_hull_indices(points), ours)


def test_small_random_cloud_same_vertices():
    # 40 random points: hull corners stand out by far more than Blender's epsilon
    points = single(np.random.default_rng(7).normal(size=(40, 3)))
    np.testing.assert_array_equal(np.sort(convex_hull(points).indices),
                                  blender_hull_indices(points))


@pytest.mark.parametrize("kind", ["cube cloud", "dense sphere"])
def test_dense_inputs_agree_within_blender_epsilon(kind):
    rng = np.random.default_rng(11)
    points = single(rng.uniform(-1, 1, (5000, 3)) if kind == "cube cloud" else sphere(rng, 2000))
    hull = convex_hull(points)
    ours = np.sort(hull.indices)
    theirs = blender_hull_indices(points)
    eps = BLENDER_EPSILON_REL * float(np.ptp(points, axis=0).max())
    only_ours, only_theirs = np.setdiff1d(ours, theirs), np.setdiff1d(theirs, ours)
    # nearly all corners are shared ...
    assert len(only_ours) + len(only_theirs) <= 0.05 * len(ours)
    # ... and the rest are within Blender's epsilon of the other hull: points we keep and it
    # drops lie just outside its hull; points it keeps and we do not lie inside ours.
    if len(only_ours):
        assert np.all(height_above_hull(points, theirs, points[only_ours]) <= eps)
    if len(only_theirs):
        assert np.all(height_above_hull(points, ours, points[only_theirs]) <= hull.tolerance)
