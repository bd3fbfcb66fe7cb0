"""Quickhull (convex_tools.core.quickhull) and the Hull shape's hill-climbing support mapping."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from convex_tools.core import predicates, quickhull
from convex_tools.core.convex_mesh import MeshVerdict, convex_mesh_hull
from convex_tools.core.hull import Hull, _cell
from convex_tools.core.quickhull import QuickhullError, convex_hull
from scripts.benchmarks._counting import CountingHull

CUBE = np.array([(x, y, z) for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])


def sphere_points(rng, n, radius=1.0):
    p = rng.normal(size=(n, 3))
    return radius * p / np.linalg.norm(p, axis=1)[:, None]


def random_rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    return q * np.sign(np.diag(r))


def face_planes(vertices, faces):
    """Unit outward normals and offsets of the triangles, in extended precision (so the checks
    measure the hull, not the rounding of thin triangles' normals)."""
    v = vertices.astype(np.longdouble)
    a, b, c = v[faces[:, 0]], v[faces[:, 1]], v[faces[:, 2]]
    n = np.cross(b - a, c - a)
    length = np.sqrt(np.sum(n * n, axis=1))
    assert np.all(length > 0), "a face has zero area"
    n /= length[:, None]
    return n, np.sum(n * a, axis=1)


def exact_height(p, a, b, c):
    """((b - a) x (c - a)) . (p - a) in exact rational arithmetic, divided by |b - a||c - a|."""
    p, a, b, c = ([Fraction(float(x)) for x in t] for t in (p, a, b, c))
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    w = [p[i] - a[i] for i in range(3)]
    n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
    return float(sum(n[i] * w[i] for i in range(3))) / (
        math.dist(b, a) * math.dist(c, a) or 1.0)


def assert_convex(v, f, n, off):
    """No vertex above a face plane. Extended precision screens the pairs; those it cannot
    clear (thin triangles magnify its rounding) are decided in exact arithmetic."""
    height = v.astype(np.longdouble) @ n.T - off
    height[f, np.arange(len(f))[:, None]] = -1.0  # a face's own corners are on its plane
    for i, j in zip(*np.nonzero(height > 0)):
        assert exact_height(v[i], *v[f[j]]) <= 0, f"vertex {i} is above face {j}"


def assert_closed_convex_hull(points, h):
    """Everything a solid hull promises: closed oriented surface, convex, containing the input."""
    assert h.dim == 3
    v, f = h.vertices, h.faces
    assert np.all(np.isfinite(v))
    np.testing.assert_array_equal(v, points[h.indices])  # vertices are input points
    # every directed edge once, and its reverse too: a closed, consistently oriented surface
    directed = {(t[i], t[(i + 1) % 3]) for t in f.tolist() for i in range(3)}
    assert len(directed) == 3 * len(f)
    assert all((b, a) in directed for a, b in directed)
    edges = len(directed) // 2
    assert len(v) - edges + len(f) == 2  # Euler characteristic of a sphere
    assert np.array_equal(np.unique(f), np.arange(len(v)))  # every vertex is used
    n, off = face_planes(v, f)
    centroid = v.astype(np.longdouble).mean(axis=0)
    assert np.all(n @ centroid - off < 0), "a face normal points inward"
    tol = h.tolerance
    assert_convex(v, f, n, off)
    # The construction is exact; only cleanup removals (each within tol) can leave points out.
    assert np.max(points.astype(np.longdouble) @ n.T - off) <= tol
    # adjacency is exactly the edge graph
    graph = {}
    for a, b in directed:
        graph.setdefault(a, []).append(b)
    for i, nbrs in enumerate(h.adjacency):
        assert sorted(nbrs) == sorted(graph[i])


def assert_all_corners(h):
    """No vertex lies within tolerance of the hull of the other vertices (each is a corner)."""
    v = h.vertices
    for i in range(len(v)):
        others = np.delete(v, i, axis=0)
        rest = convex_hull(others)
        if rest.dim == 3:
            n, off = face_planes(rest.vertices, rest.faces)
            assert np.max(n @ v[i].astype(np.longdouble) - off) > h.tolerance, f"vertex {i}"


# --- Quickhull: ordinary inputs -----------------------------------------------------------------

def test_cube_corners_with_interior_points_give_the_cube():
    rng = np.random.default_rng(1)
    points = np.vstack([rng.uniform(-0.99, 0.99, (500, 3)), CUBE])
    h = convex_hull(points)
    assert len(h.vertices) == 8 and len(h.faces) == 12  # 6 squares, 2 triangles each
    assert {tuple(v) for v in h.vertices.tolist()} == {tuple(c) for c in CUBE.tolist()}
    assert_closed_convex_hull(points, h)
    assert all(len(nbrs) in (3, 4, 5, 6) for nbrs in h.adjacency)


def test_tetrahedron_faces_are_counter_clockwise_from_outside():
    points = np.array([(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)])
    h = convex_hull(points)
    assert len(h.faces) == 4
    v = h.vertices
    for a, b, c in h.faces:
        normal = np.cross(v[b] - v[a], v[c] - v[a])
        # outward: the centroid (0.25, 0.25, 0.25) is behind every face
        assert np.dot(normal, v.mean(axis=0) - v[a]) < 0


def test_random_sphere_points_are_all_on_the_hull():
    rng = np.random.default_rng(2)
    points = sphere_points(rng, 2000)
    h = convex_hull(points)
    assert len(h.vertices) == 2000
    assert len(h.faces) == 2 * 2000 - 4  # a triangulated sphere: F = 2V - 4
    assert_closed_convex_hull(points, h)


def test_random_cloud_hull_contains_every_point():
    rng = np.random.default_rng(3)
    points = rng.normal(size=(1000, 3))
    h = convex_hull(points)
    assert_closed_convex_hull(points, h)
    assert_all_corners(h)


def test_prefiltered_cloud_matches_unfiltered(monkeypatch):
    rng = np.random.default_rng(4)
    points = rng.uniform(-1, 1, (2000, 3))
    filtered = convex_hull(points)
    monkeypatch.setattr(quickhull, "PREFILTER_MIN_POINTS", 10 ** 9)
    plain = convex_hull(points)
    np.testing.assert_array_equal(filtered.indices, plain.indices)


# --- Quickhull: degenerate inputs ---------------------------------------------------------------

def test_duplicates_do_not_become_extra_vertices():
    rng = np.random.default_rng(5)
    points = np.vstack([CUBE] * 20 + [rng.uniform(-1, 1, (50, 3))])
    points = points[rng.permutation(len(points))]
    h = convex_hull(points)
    assert len(h.vertices) == 8
    assert_closed_convex_hull(points, h)


def test_points_on_faces_and_edges_of_a_box_are_not_vertices():
    rng = np.random.default_rng(6)
    n = 3000
    p = rng.uniform(-1, 1, (n, 3))
    axis = rng.integers(3, size=n)
    p[np.arange(n), axis] = np.sign(p[np.arange(n), axis])  # on a face
    p[:300, (axis[:300] + 1) % 3] = 1.0  # and some on an edge
    grid = np.mgrid[-1:1.01:0.5, -1:1.01:0.5, -1:1.01:0.5].reshape(3, -1).T
    points = np.vstack([p, grid])
    h = convex_hull(points)
    assert {tuple(v) for v in h.vertices.tolist()} == {tuple(c) for c in CUBE.tolist()}
    assert_closed_convex_hull(points, h)


def test_rotated_integer_lattice_has_only_corner_vertices():
    rng = np.random.default_rng(7)
    lattice = np.mgrid[-2:3, -2:3, -2:3].reshape(3, -1).T.astype(float)
    points = lattice @ random_rotation(rng).T  # rounding makes the faces only nearly flat
    h = convex_hull(points)
    assert len(h.vertices) == 8
    assert_closed_convex_hull(points, h)


def test_coplanar_points_give_a_flat_convex_polygon():
    rng = np.random.default_rng(8)
    square = np.array([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])
    inside = rng.uniform(-1, 1, (500, 2))  # enough to take the prefiltered path
    edge = np.stack((rng.uniform(-1, 1, 20), np.ones(20)), axis=1)  # collinear on one side
    flat = np.vstack([inside, edge, square])
    rotation = random_rotation(rng)
    points = np.column_stack([flat, np.zeros(len(flat))]) @ rotation.T + (3.0, -2.0, 1.0)
    h = convex_hull(points)
    assert h.dim == 2
    assert len(h.vertices) == 4
    # the polygon is counter-clockwise about ``normal``, which is the plane's normal
    np.testing.assert_allclose(abs(h.normal @ rotation[:, 2]), 1.0, atol=1e-12)
    v = h.vertices
    for i in range(4):
        turn = np.cross(v[(i + 1) % 4] - v[i], v[(i + 2) % 4] - v[(i + 1) % 4])
        assert turn @ h.normal > 0
    # one-sided fan triangulation, counter-clockwise about the normal
    assert h.faces.shape == (2, 3)
    for a, b, c in h.faces:
        assert np.cross(v[b] - v[a], v[c] - v[a]) @ h.normal > 0
    assert h.adjacency == ((3, 1), (0, 2), (1, 3), (2, 0))


def test_collinear_points_give_a_segment():
    rng = np.random.default_rng(9)
    t = np.concatenate([rng.uniform(-1, 2, 100), [-1.5, 2.5, 0.0, 0.0]])
    points = np.outer(t, (1.0, 2.0, -0.5)) + (10.0, 0.0, 5.0)
    h = convex_hull(points)
    assert h.dim == 1
    assert sorted(h.indices.tolist()) == [100, 101]
    assert h.faces.shape == (0, 3)
    assert h.adjacency == ((1,), (0,))


def test_equal_points_give_a_single_point():
    h = convex_hull(np.tile((1.5, -2.0, 3.0), (10, 1)))
    assert h.dim == 0
    np.testing.assert_array_equal(h.vertices, [(1.5, -2.0, 3.0)])
    assert h.faces.shape == (0, 3)
    assert h.adjacency == ((),)


def test_one_two_and_three_points():
    assert convex_hull([(1.0, 2.0, 3.0)]).dim == 0
    assert convex_hull([(0.0, 0.0, 0.0), (1.0, 0.0, 0.0)]).dim == 1
    tri = convex_hull([(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)])
    assert tri.dim == 2 and len(tri.vertices) == 3 and len(tri.faces) == 1


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
@pytest.mark.parametrize("offset", [0.0, 100.0])
def test_result_does_not_depend_on_scale(scale, offset):
    rng = np.random.default_rng(10)
    base = np.vstack([sphere_points(rng, 300), rng.uniform(-0.5, 0.5, (300, 3)), CUBE * 0.5])
    reference = convex_hull(base)
    points = (base + offset) * scale
    h = convex_hull(points)
    np.testing.assert_array_equal(h.indices, reference.indices)
    assert_closed_convex_hull(points, h)


@pytest.mark.parametrize("thickness", [1e-12, 1e-10, 3e-10, 1e-9, 1e-8, 1e-6])
def test_nearly_flat_slabs(thickness):
    """Points within tolerance (1e-10 of the extent) of a plane are flat; thicker slabs are solid
    and still exactly convex with every point inside."""
    rng = np.random.default_rng(11)
    slab = rng.uniform(-1, 1, (800, 3)) * (1.0, 1.0, thickness)
    points = slab @ random_rotation(rng).T
    h = convex_hull(points)
    if thickness < 0.1 * quickhull.DIST_TOL_REL:
        assert h.dim == 2
    if thickness > 10 * quickhull.DIST_TOL_REL:
        assert h.dim == 3
    if h.dim == 3:
        assert_closed_convex_hull(points, h)


def _on_box_surface(rng, n):
    """Points on the faces, edges and corners of the cube [-1, 1]^3 (some coordinates +-1)."""
    p = rng.uniform(-1, 1, (n, 3))
    pinned = rng.uniform(size=(n, 3)) < 0.5
    p[pinned] = np.sign(p[pinned])
    return p


GENERATORS = {
    "cloud": lambda rng: rng.normal(size=(int(rng.integers(4, 400)), 3)),
    "lattice": lambda rng: rng.integers(-2, 3, (int(rng.integers(4, 300)), 3)).astype(float),
    "cylinder": lambda rng: np.column_stack([
        np.cos(t := rng.uniform(0, 2 * np.pi, 300)), np.sin(t), rng.choice([-1.0, 1.0], 300)]),
    "box surface": lambda rng: _on_box_surface(rng, 300),
    "few distinct": lambda rng: rng.normal(size=(6, 3))[rng.integers(6, size=200)],
}


@pytest.mark.parametrize("kind", sorted(GENERATORS))
@pytest.mark.parametrize("seed", range(4))
def test_degenerate_families_give_valid_hulls(kind, seed):
    rng = np.random.default_rng(100 + seed)
    points = GENERATORS[kind](rng) @ random_rotation(rng).T
    h = convex_hull(points)
    if h.dim == 3:
        assert_closed_convex_hull(points, h)
        if len(h.vertices) <= 40:
            assert_all_corners(h)


def test_iteration_cap_raises_a_clear_error(monkeypatch):
    rng = np.random.default_rng(12)
    points = sphere_points(rng, 100)
    monkeypatch.setattr(quickhull, "ITERATION_SLACK", -95)  # allow 5 steps for 100 points
    with pytest.raises(QuickhullError, match="iteration cap"):
        convex_hull(points)


@pytest.mark.parametrize("bad", [
    [], np.zeros((0, 3)), np.zeros((4, 2)), np.zeros((2, 3, 1)), [(0.0, 0.0, np.nan)],
    [(0.0, np.inf, 0.0), (1.0, 1.0, 1.0)], "points", [("a", "b", "c")],
])
def test_bad_points_raise_value_error_naming_points(bad):
    with pytest.raises(ValueError, match="points"):
        convex_hull(bad)
    with pytest.raises(ValueError, match="points"):
        Hull(bad)


# --- Quickhull: the batched rounds (many eyes at once) -------------------------------------------

def uv_sphere(segments, rings):
    """A UV sphere's vertices, as Blender makes them: its quads are planar, so four points at a
    time are coplanar up to rounding (the exact predicates decide every such tie)."""
    theta = np.pi * np.arange(1, rings) / rings
    phi = 2 * np.pi * np.arange(segments) / segments
    ring = np.stack([np.outer(np.sin(theta), np.cos(phi)), np.outer(np.sin(theta), np.sin(phi)),
                     np.repeat(np.cos(theta), segments).reshape(rings - 1, segments)], axis=-1)
    return np.vstack([(0.0, 0.0, 1.0), (0.0, 0.0, -1.0), ring.reshape(-1, 3)])


def batched(monkeypatch):
    """Make the builder hand over to the batched rounds as soon as four faces have outside sets
    (by default only larger clouds get there)."""
    monkeypatch.setattr(quickhull, "BATCH_MIN_FACES", 4)


BATCH_CASES = {
    "sphere": lambda rng: sphere_points(rng, 1500),
    "cloud": lambda rng: rng.normal(size=(3000, 3)),
    "uv sphere": lambda rng: uv_sphere(32, 31) @ random_rotation(rng).T,
    "axis-aligned uv sphere": lambda rng: uv_sphere(24, 12),
    "lattice": lambda rng: rng.integers(-3, 4, (600, 3)).astype(float) @ random_rotation(rng).T,
    "box surface": lambda rng: _on_box_surface(rng, 1500),
    "cylinder": lambda rng: np.column_stack([
        np.cos(t := rng.uniform(0, 2 * np.pi, 800)), np.sin(t), rng.choice([-1.0, 1.0], 800)]),
    "few distinct": lambda rng: rng.normal(size=(40, 3))[rng.integers(40, size=2000)],
}


@pytest.mark.parametrize("kind", sorted(BATCH_CASES))
def test_batched_rounds_build_the_same_hull(kind, monkeypatch):
    rng = np.random.default_rng(40)
    points = BATCH_CASES[kind](rng)
    one_at_a_time = convex_hull(points)
    batched(monkeypatch)
    h = convex_hull(points)
    assert_closed_convex_hull(points, h)
    # the same corners (as points: of duplicates, either copy may be the vertex)
    assert {tuple(v) for v in h.vertices.tolist()} == \
        {tuple(v) for v in one_at_a_time.vertices.tolist()}


def test_every_uv_sphere_vertex_is_a_corner(monkeypatch):
    # Points on a sphere are all extreme, however many are coplanar in fours.
    points = uv_sphere(32, 31)
    for batch_from in (quickhull.BATCH_MIN_FACES, 4):
        monkeypatch.setattr(quickhull, "BATCH_MIN_FACES", batch_from)
        h = convex_hull(points)
        assert len(h.vertices) == len(points)
        assert_closed_convex_hull(points, h)


def test_batched_exact_rebuild_drops_no_point(monkeypatch):
    # The exact fallback (used once a dropped point proved to be outside) decides every point
    # near a plane exactly instead of dropping it: nothing is left out, not even by rounding.
    batched(monkeypatch)
    rng = np.random.default_rng(41)
    points = _on_box_surface(rng, 1500) @ random_rotation(rng).T
    lower, upper = points.min(axis=0), points.max(axis=0)
    extent = float(np.max(upper - lower))
    roundoff = quickhull.ROUNDOFF_REL * float(np.max(np.abs(points)))
    filt = quickhull.PREDICATE_FILTER_REL * extent + roundoff
    tol = quickhull.DIST_TOL_REL * extent + roundoff
    (dim, corners, faces, planes), near = quickhull._hull_of(
        points, np.arange(len(points)), tol, filt, True)
    assert dim == 3 and len(near) == 0
    assert len(corners) >= 8
    n, off = face_planes(points, faces)
    height = points.astype(np.longdouble) @ n.T - off
    for i, j in zip(*np.nonzero(height > 0)):
        assert exact_height(points[i], *points[faces[j]]) <= 0, f"point {i} is above face {j}"


@pytest.mark.parametrize("setting, value", [("ASSIGN_CHUNK", 97), ("GROUPED_MIN_POINTS", 0),
                                            ("GROUPED_MIN_POINTS", 10 ** 9),
                                            ("LONG_FILTER", False)])
def test_batch_tuning_does_not_change_the_hull(setting, value, monkeypatch):
    # Chunked whole-cloud assignment, both forms of the redistribution and the extended
    # precision filter are speed choices only.
    rng = np.random.default_rng(42)
    points = np.vstack([sphere_points(rng, 3000), uv_sphere(16, 9) * 1.01,
                        rng.uniform(-0.5, 0.5, (2000, 3))])
    batched(monkeypatch)
    reference = convex_hull(points)
    monkeypatch.setattr(quickhull, setting, value)
    if hasattr(predicates, setting):  # (the filter is read in both modules)
        monkeypatch.setattr(predicates, setting, value)
    h = convex_hull(points)
    np.testing.assert_array_equal(h.indices, reference.indices)
    assert_closed_convex_hull(points, h)


def test_batched_iteration_cap_raises_a_clear_error(monkeypatch):
    batched(monkeypatch)
    monkeypatch.setattr(quickhull, "ITERATION_SLACK", -1900)  # 100 steps for 2000 points
    with pytest.raises(QuickhullError, match="iteration cap"):
        convex_hull(sphere_points(np.random.default_rng(43), 2000))


def test_extreme_points_in_chunks_are_the_first_of_ties(monkeypatch):
    # A lattice ties along every direction; chunked, the first of the ties still wins, as in one
    # argmax over the whole cloud.
    rng = np.random.default_rng(47)
    pts = rng.integers(-3, 4, (1000, 3)).astype(float)
    dirs = np.vstack([quickhull._DIRS, np.eye(3), -np.eye(3)])
    expected = np.unique(np.argmax(pts @ dirs.T, axis=0))
    for chunk in (quickhull.ASSIGN_CHUNK, 97, 1):
        monkeypatch.setattr(quickhull, "ASSIGN_CHUNK", chunk)
        np.testing.assert_array_equal(quickhull._extreme_points(pts, dirs), expected)


@pytest.mark.parametrize("kind", ["cube", "ball", "box surface"])
def test_the_ball_inside_the_prefilter_drops_only_points_below_every_face(kind, monkeypatch):
    # Points the ball test drops are ones the plane distances would drop as inside (below every
    # face of the prefilter polytope by more than the filter): the same hull, and the same
    # points left near a plane, with it and without it.
    rng = np.random.default_rng(48)
    points = {"cube": lambda: rng.uniform(-1, 1, (20000, 3)),
              "ball": lambda: sphere_points(rng, 20000) * rng.uniform(0, 1, (20000, 1)) ** (1 / 3),
              "box surface": lambda: _on_box_surface(rng, 20000) @ random_rotation(rng).T}[kind]()
    extent = float(np.max(points.max(axis=0) - points.min(axis=0)))
    roundoff = quickhull.ROUNDOFF_REL * float(np.max(np.abs(points)))
    filt = quickhull.PREDICATE_FILTER_REL * extent + roundoff
    tol = quickhull.DIST_TOL_REL * extent + roundoff
    ids = np.arange(len(points))
    deep_inside = quickhull._Builder._deep_inside
    dropped = []

    def checked(builder, faces, pts):
        deep = deep_inside(builder, faces, pts)
        normals = np.array([builder.fn[f] for f in faces])
        offsets = np.array([builder.fo[f] for f in faces])
        assert np.all((points[pts[deep]] @ normals.T - offsets).max(axis=1) < -filt)
        dropped.append(int(deep.sum()))
        return deep

    monkeypatch.setattr(quickhull._Builder, "_deep_inside", checked)
    with_ball = quickhull._hull_of(points, ids, tol, filt, False)
    assert dropped[-1] > (0 if kind == "box surface" else len(points) // 4)
    monkeypatch.setattr(quickhull._Builder, "_deep_inside",
                        lambda self, faces, pts: np.zeros(len(pts), dtype=bool))
    without = quickhull._hull_of(points, ids, tol, filt, False)
    np.testing.assert_array_equal(with_ball[0][1], without[0][1])
    np.testing.assert_array_equal(with_ball[0][2], without[0][2])
    np.testing.assert_array_equal(with_ball[1], without[1])


def test_heights_above_the_hull_in_blocks_are_the_plain_maximum(monkeypatch):
    rng = np.random.default_rng(49)
    h = convex_hull(sphere_points(rng, 3000))
    n, off = face_planes(h.vertices, h.faces)
    planes = (n.astype(float), off.astype(float))
    q = rng.normal(size=(500, 3))
    pts = rng.permutation(500)[:300]
    expected = np.max(q[pts] @ planes[0].T - planes[1], axis=1)
    # Equal to the rounding of one dot product: BLAS picks its kernel (and the order of the
    # three products' sums) by the block's shape, so a block of one row may round differently
    # from the whole matrix by an ulp of the terms.
    ulps = 8 * np.finfo(float).eps * (np.abs(q[pts]).sum(axis=1) + np.abs(planes[1]).max())
    for block, rows in ((quickhull.HEIGHT_BLOCK, quickhull.HEIGHT_BLOCK_ROWS), (1000, 7), (64, 1)):
        monkeypatch.setattr(quickhull, "HEIGHT_BLOCK", block)
        monkeypatch.setattr(quickhull, "HEIGHT_BLOCK_ROWS", rows)
        got = quickhull._height_above(q, planes, pts)
        assert np.all(np.abs(got - expected) <= ulps)


def test_extended_precision_orientations_agree_with_exact_ones():
    # Near-coplanar quadruples (a point on a triangle's plane, moved by a few ulps): the
    # vectorised filter either gives the exact sign or declines, never a wrong sign.
    rng = np.random.default_rng(44)
    tri = rng.normal(size=(400, 3, 3))
    w = rng.uniform(0, 1, (400, 3))
    w /= w.sum(axis=1)[:, None]
    p = np.einsum("ij,ijk->ik", w * 3 - 1, tri)  # on the plane, in or out of the triangle
    p += rng.integers(-3, 4, p.shape) * np.spacing(np.abs(p))
    q = np.vstack([tri.reshape(-1, 3), p])
    a, b, c = (np.arange(400) * 3 + k for k in range(3))
    signs = predicates.orient_signs(q.T.copy(), a, b, c, 1200 + np.arange(400))
    exact = [predicates.orient(*map(tuple, (q[i], q[j], q[k], q[1200 + r])))
             for r, (i, j, k) in enumerate(zip(a, b, c))]
    decided = signs != predicates.UNDECIDED
    np.testing.assert_array_equal(signs[decided], np.array(exact)[decided])
    if predicates.LONG_FILTER:
        assert decided.mean() > 0.9  # (most: only determinants below ~2**-61 are left over)


def test_extended_precision_declines_exactly_coplanar_points_it_cannot_resolve():
    # Four points exactly on the plane x + y + z = 0 with coordinates near 2**40: the products
    # reach 2**120, far beyond extended precision, so its determinant is rounding noise; the
    # filter must decline rather than return that noise's sign.
    rng = np.random.default_rng(45)
    xy = rng.integers(-2 ** 40, 2 ** 40, (400, 2)).astype(float)
    q = np.column_stack([xy, -xy[:, 0] - xy[:, 1]])  # exact: integers below 2**53
    a, b, c, p = (np.arange(100) * 4 + k for k in range(4))
    assert all(predicates.orient(*map(tuple, q[list(r)])) == 0 for r in zip(a, b, c, p))
    np.testing.assert_array_equal(predicates.orient_signs(q.T.copy(), a, b, c, p),
                                  predicates.UNDECIDED)


def test_points_in_an_axis_aligned_plane_are_coplanar_without_integers(monkeypatch):
    # Cylinder caps and box faces: four points with one equal coordinate are exactly coplanar,
    # and the float filters say so (integers once took ~10 us for each such test, 27 s for the
    # hull of 50k points on two circles).
    def no_integers(*args):
        raise AssertionError("integers were used")
    monkeypatch.setattr(predicates, "orient_integers", no_integers)
    rng = np.random.default_rng(46)
    for axis in range(3):
        q = rng.normal(size=(40, 3)) * 1e3
        q[:, axis] = 0.3
        a, b, c, p = (np.arange(10) * 4 + k for k in range(4))
        for r in zip(a, b, c, p):
            assert predicates.orient(*map(tuple, q[list(r)])) == 0
        np.testing.assert_array_equal(predicates.orient_signs(q.T.copy(), a, b, c, p), 0)


# --- Quickhull: extreme magnitudes (issue 10 item 5) ----------------------------------------------

EXTREME_BASE = np.vstack([sphere_points(np.random.default_rng(30), 60),
                          np.random.default_rng(31).uniform(-0.5, 0.5, (60, 3)), CUBE * 0.5])


@pytest.mark.parametrize("scale", [2.0 ** -1000, 1e-300, 1e-200, 1e-150, 1e-100, 1e100, 1e200,
                                   1e300, 1e307, 2.0 ** 1000])
def test_hulls_at_extreme_scales_match_the_unit_hull(scale):
    # Hulls are scale-invariant: once these gave a single point (1e-200 and below, products of
    # coordinates underflowing) or raised ZeroDivisionError (1e-150, 1e200 and above).
    reference = convex_hull(EXTREME_BASE)
    points = EXTREME_BASE * scale
    h = convex_hull(points)
    np.testing.assert_array_equal(h.indices, reference.indices)
    np.testing.assert_array_equal(h.faces, reference.faces)
    np.testing.assert_array_equal(h.vertices, points[h.indices])
    assert h.tolerance == pytest.approx(reference.tolerance * scale, rel=1e-12)


# Clouds that reach the batched rounds and stress their exactness: all on the hull, many
# coplanar (box faces, a lattice), four-point coplanar quads up to rounding (a UV sphere).
BATCHED_EXTREME_BASE = {
    "sphere": lambda rng: sphere_points(rng, 1500),
    "box surface": lambda rng: _on_box_surface(rng, 1500),
    "lattice": lambda rng: rng.integers(-3, 4, (600, 3)).astype(float),
    "uv sphere": lambda rng: uv_sphere(32, 31) @ random_rotation(rng).T,
}


@pytest.mark.parametrize("scale", [2.0 ** -1000, 1e-300, 1e300, 2.0 ** 1000])
@pytest.mark.parametrize("kind", sorted(BATCHED_EXTREME_BASE))
def test_batched_rounds_at_extreme_scales_match_the_unit_hull(kind, scale, monkeypatch):
    # The rounds' plane distances, cone normals and extended-precision orientations on
    # coordinates brought into the safe range: the same corners as at unit scale. A power of two
    # scales exactly, so every decision is the same, down to the triangles of coplanar facets
    # (which other scales round differently).
    batched(monkeypatch)
    base = BATCHED_EXTREME_BASE[kind](np.random.default_rng(36))
    reference = convex_hull(base)
    points = base * scale
    h = convex_hull(points)
    np.testing.assert_array_equal(h.indices, reference.indices)
    if math.frexp(scale)[0] == 0.5:
        np.testing.assert_array_equal(h.faces, reference.faces)
    assert_closed_convex_hull(points, h)


def test_hull_of_points_near_the_float_limit():
    corners = CUBE * 1.7e308  # the sum of any two coordinates overflows
    points = np.vstack([corners, np.random.default_rng(32).uniform(-1, 1, (200, 3)) * 1.6e308])
    h = Hull(points)
    assert h.dim == 3 and len(h.vertices) == 8
    assert {tuple(v) for v in h.vertices.tolist()} == {tuple(c) for c in corners.tolist()}
    assert np.all(np.isfinite(h.center_xyz())) and np.all(np.abs(h.center_xyz()) < 1.7e308)
    assert h.support_xyz(1.0, 0.0, 0.0)[0] == 1.7e308


def test_duplicates_of_huge_points():
    rng = np.random.default_rng(33)
    unit = np.vstack([rng.normal(size=(6, 3))] * 4)
    reference = convex_hull(unit)
    h = convex_hull(unit * 1e307)
    np.testing.assert_array_equal(h.indices, reference.indices)
    assert len(h.vertices) == len(set(map(tuple, h.vertices.tolist())))  # no duplicate corners


def test_subnormal_points_give_a_hull_with_a_positive_tolerance():
    points = np.array([(0.0, 0.0, 0.0), (5e-324, 0.0, 0.0), (0.0, 5e-324, 0.0), (0.0, 0.0, 5e-324),
                       (5e-324, 5e-324, 5e-324)])
    h = convex_hull(points)
    assert h.dim == 3 and len(h.vertices) == 5
    assert h.tolerance > 0.0
    assert np.all(np.isfinite(Hull(points).center_xyz()))


@pytest.mark.parametrize("offset, extent", [(1e300, 1.0), (1e20, 1.0), (1.0, 1e-17)])
def test_tiny_extent_far_from_the_origin_is_a_point(offset, extent):
    # The coordinates cannot resolve the cloud (it spans a few ulps or less): one point, and the
    # tolerance says how far the others are.
    points = offset + extent * np.random.default_rng(34).normal(size=(50, 3))
    h = convex_hull(points)
    assert h.dim == 0
    assert np.max(np.linalg.norm(points - h.vertices[0], axis=1)) <= h.tolerance


@pytest.mark.parametrize("offset", [1e6, 1e9])
def test_small_extent_far_from_the_origin_is_still_resolved(offset):
    rng = np.random.default_rng(35)
    points = offset + np.vstack([sphere_points(rng, 200), CUBE * 0.1])
    h = convex_hull(points)
    assert h.dim == 3 and len(h.vertices) > 100
    assert_closed_convex_hull(points, h)


# --- a mesh given with its faces -----------------------------------------------------------------

def uv_sphere_quads(segments, rings):
    """The quads (a, b, c, d) of ``uv_sphere(segments, rings)``, counter-clockwise from outside."""
    def ring(r, s):
        return 2 + (r - 1) * segments + s % segments
    return np.array([(ring(r, s), ring(r + 1, s), ring(r + 1, s + 1), ring(r, s + 1))
                     for s in range(segments) for r in range(1, rings - 1)])


def uv_sphere_triangles(segments, rings):
    """The triangles of ``uv_sphere(segments, rings)``, outward: fans at the poles, each quad
    split along the diagonal from its first corner (as a triangulated Blender UV sphere)."""
    s = np.arange(segments)
    top = np.column_stack([np.zeros(segments, int), 2 + s, 2 + (s + 1) % segments])
    last = 2 + (rings - 2) * segments
    bottom = np.column_stack([np.ones(segments, int), last + (s + 1) % segments, last + s])
    q = uv_sphere_quads(segments, rings)
    return np.vstack([top, bottom, q[:, [0, 1, 2]], q[:, [0, 2, 3]]])


def twisted_uv_sphere(segments, rings, twist):
    """``uv_sphere`` with every other ring turned by ``twist`` of a segment: all its points are
    on the sphere, but its quads are not planar (half of them concave along the diagonal the
    triangles split them by, as on a subdivided or bevelled box)."""
    theta = np.pi * np.arange(1, rings) / rings
    turn = twist * (np.arange(rings - 1) % 2)
    phi = 2 * np.pi * (np.arange(segments)[None, :] + turn[:, None]) / segments
    s = np.sin(theta)[:, None]
    ring = np.stack([s * np.cos(phi), s * np.sin(phi),
                     np.repeat(np.cos(theta)[:, None], segments, axis=1)], axis=-1)
    return np.vstack([(0.0, 0.0, 1.0), (0.0, 0.0, -1.0), ring.reshape(-1, 3)])


def outward(points, tris):
    """``tris`` each turned to face away from the centroid (fine for star-shaped meshes)."""
    a, b, c = (points[tris[:, k]] for k in range(3))
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), a - points.mean(axis=0)) < 0
    tris = tris.copy()
    tris[inward] = tris[inward][:, ::-1]
    return tris


def grid_cube(k):
    """The cube [-1, 1]^3 with each face divided into k x k squares of two triangles: corners,
    points in the middle of its edges and points inside its faces."""
    ids, points, tris = {}, [], []

    def vertex(p):
        if p not in ids:
            ids[p] = len(points)
            points.append(p)
        return ids[p]

    g = [-1.0 + 2.0 * i / k for i in range(k + 1)]
    for axis in range(3):
        u, v = (i for i in range(3) if i != axis)
        for side in (-1.0, 1.0):
            def at(i, j):
                p = [0.0] * 3
                p[axis], p[u], p[v] = side, g[i], g[j]
                return vertex(tuple(p))
            for i in range(k):
                for j in range(k):
                    a, b, c, d = at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)
                    tris += [(a, b, c), (a, c, d)]
    points = np.array(points)
    return points, outward(points, np.array(tris))


def cylinder(segments):
    """A cylinder whose two caps are polygons triangulated as fans from their first vertex."""
    t = 2.0 * np.pi * np.arange(segments) / segments
    rim = np.column_stack([np.cos(t), np.sin(t)])
    points = np.vstack([np.column_stack([rim, np.full(segments, z)]) for z in (-1.0, 1.0)])
    s = np.arange(segments)
    nxt = (s + 1) % segments
    sides = np.vstack([np.column_stack([s, nxt, nxt + segments]),
                       np.column_stack([s, nxt + segments, s + segments])])
    caps = np.vstack([np.column_stack([np.zeros(segments - 2, int), s[1:-1], s[2:]]),
                      np.column_stack([np.zeros(segments - 2, int), s[1:-1], s[2:]]) + segments])
    return points, outward(points, np.vstack([sides, caps]))


def shuffled_mesh(rng, vertices, faces):
    """The same mesh with its vertices renumbered and each triangle starting at another corner."""
    perm = rng.permutation(len(vertices))
    faces = np.argsort(perm)[faces]
    for k in range(1, 3):
        turn = rng.uniform(size=len(faces)) < 0.5
        faces[turn] = np.roll(faces[turn], k, axis=1)
    return vertices[perm], faces


def hull_mesh(rng, points):
    h = convex_hull(points)
    return shuffled_mesh(rng, h.vertices, h.faces)


def corner_set(h):
    return set(h.indices.tolist())


ROTATION = random_rotation(np.random.default_rng(60))
NEEDLE = np.array([(-1.0, -1.0, 0.0), (1.0, -1.0, 0.0), (1.0, 1.0, 0.0), (-1.0, 1.0, 0.0),
                   (30.0, 5.0, 60.0)])
CONVEX_MESHES = {
    "uv sphere": lambda rng: (uv_sphere(32, 16), uv_sphere_triangles(32, 16)),
    # Blender keeps float32 coordinates: quads leave their planes by ~1e-8, not ~1e-16
    "uv sphere in float32": lambda rng: (uv_sphere(32, 16).astype(np.float32).astype(float),
                                         uv_sphere_triangles(32, 16)),
    "rotated uv sphere": lambda rng: (uv_sphere(24, 12) @ ROTATION.T, uv_sphere_triangles(24, 12)),
    "small uv sphere far away": lambda rng: (uv_sphere(24, 12) * 1e-3 + (1e2, -3e2, 5e1),
                                             uv_sphere_triangles(24, 12)),
    "uv sphere with quads that are not planar": lambda rng: (twisted_uv_sphere(24, 12, 0.4),
                                                             uv_sphere_triangles(24, 12)),
    # (the apex's triangles face such different ways that no average of their normals is
    # along all of them: the winding is seen from inside instead)
    "leaning needle": lambda rng: (NEEDLE, outward(NEEDLE, np.array([
        (0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4), (0, 2, 1), (0, 3, 2)]))),
    "cube": lambda rng: grid_cube(1),
    "subdivided cube": lambda rng: grid_cube(5),
    "cylinder": lambda rng: cylinder(32),
    "hull of a cloud": lambda rng: hull_mesh(rng, rng.normal(size=(400, 3))),
    "hull of a lattice": lambda rng: hull_mesh(rng, rng.integers(-3, 4, (300, 3)).astype(float)),
}


@pytest.mark.parametrize("kind", sorted(CONVEX_MESHES))
def test_a_convex_mesh_is_its_own_hull(kind):
    rng = np.random.default_rng(61)
    points, tris = CONVEX_MESHES[kind](rng)
    assert convex_mesh_hull(points, tris)[1] is MeshVerdict.CONVEX
    h = convex_hull(points, tris)
    assert_closed_convex_hull(points, h)
    assert corner_set(h) == corner_set(convex_hull(points))


@pytest.mark.parametrize("scale", [1e-300, 1e-20, 1e20, 1e300])
def test_a_convex_mesh_at_extreme_scales_is_its_own_hull(scale):
    # (certified on the power-of-two scaled copy Quickhull works on: no overflow, no underflow)
    for points, tris in ((uv_sphere(24, 12) * scale, uv_sphere_triangles(24, 12)),
                         (grid_cube(3)[0] * scale, grid_cube(3)[1])):
        scaled = quickhull._in_safe_range(points)[0]
        assert convex_mesh_hull(scaled, tris)[1] is MeshVerdict.CONVEX
        h = convex_hull(points, tris)
        assert corner_set(h) == corner_set(convex_hull(points))


def test_hull_shape_takes_the_faces():
    points, tris = twisted_uv_sphere(24, 12, 0.4), uv_sphere_triangles(24, 12)
    shape = Hull(points, faces=tris)
    np.testing.assert_array_equal(shape.vertices, Hull(points).vertices)
    d = np.array([0.3, -0.2, 0.9])
    assert np.dot(shape.support(d), d) == pytest.approx(brute_force_max(points, d), abs=1e-15)


def test_a_subdivided_cube_keeps_its_eight_corners_and_twelve_triangles():
    # Points inside the faces (no crease around them) and in the middle of the edges (two
    # creases, continuing each other) are not corners; the faces are re-triangulated.
    points, tris = grid_cube(4)
    h = convex_hull(points, tris)
    np.testing.assert_array_equal(np.abs(h.vertices), 1.0)
    assert len(h.vertices) == 8 and len(h.faces) == 12
    assert_closed_convex_hull(points, h)


def test_rounding_concave_quads_of_a_uv_sphere_are_flipped():
    # Half of the quads are concave along the diagonal a-c in exact arithmetic (their corners
    # are rounded sines and cosines): the mesh is convex once those are flipped, not dented.
    points, tris = uv_sphere(32, 16), uv_sphere_triangles(32, 16)
    concave = [exact_height(points[d], points[a], points[b], points[c]) > 0
               for a, b, c, d in uv_sphere_quads(32, 16).tolist()]
    assert 0.25 < np.mean(concave) < 0.75
    assert convex_mesh_hull(points, tris)[1] is MeshVerdict.CONVEX
    h = convex_hull(points, tris)
    assert len(h.vertices) == len(points)
    assert_closed_convex_hull(points, h)


def test_flips_keep_the_half_edges_paired():
    # The pairing after a pass of flips is updated in place (not sorted again): it must be the
    # pairing of the flipped mesh, also where two flipped quads share an edge.
    from convex_tools.core import convex_mesh
    points, tris = uv_sphere(32, 16), uv_sphere_triangles(32, 16)
    twin, keys = convex_mesh._twins(tris, len(points))
    src, dst, apex = convex_mesh._ends(tris)
    once = np.arange(len(twin)) < twin
    sign, _ = convex_mesh._edge_signs(np.ascontiguousarray(points.T), src[once], dst[once],
                                      apex[once], apex[twin[once]])
    concave = once.nonzero()[0][sign > 0]
    flipped, paired, f, g = convex_mesh._flipped(tris, len(points), concave, src, dst, apex,
                                                 twin, keys)
    assert len(f) > len(concave) // 2  # (most flips go in the first pass)
    np.testing.assert_array_equal(paired, convex_mesh._twins(flipped, len(points))[0])


def _two_cubes():
    points, tris = grid_cube(1)
    return np.vstack([points, points + 3.0]), np.vstack([tris, tris + len(points)])


def _double_cover():
    """A double cone over a pentagram: closed, oriented, every edge convex, yet it wraps twice
    around its axis (each apex is covered twice)."""
    angle = 4.0 * np.pi * np.arange(5) / 5
    rim = np.column_stack([np.cos(angle), np.sin(angle), np.zeros(5)])
    points = np.vstack([(0.0, 0.0, 1.0), (0.0, 0.0, -1.0), rim])
    tris = [t for i in range(5) for t in ((0, 2 + i, 2 + (i + 1) % 5), (1, 2 + (i + 1) % 5, 2 + i))]
    return points, np.array(tris)


def _with(points, tris, point=None, at=None, drop=None, reverse=None, extra=None):
    points = points.copy()
    tris = tris.copy()
    if at is not None:
        points[at] = point
    if reverse is not None:
        tris[reverse] = tris[reverse][::-1]
    if drop is not None:
        tris = np.delete(tris, drop, axis=0)
    if extra is not None:
        points = np.vstack([points, extra])
    return points, tris


SPHERE = uv_sphere(24, 12), uv_sphere_triangles(24, 12)
CUBE4 = grid_cube(4)
CENTRE = int(np.flatnonzero((CUBE4[0] == (0.0, 0.0, 1.0)).all(axis=1))[0])  # of the top face
NOT_CONVEX = {
    "dent": (lambda: _with(*SPHERE, at=100, point=0.9 * SPHERE[0][100]), MeshVerdict.CONCAVE_EDGE),
    "bump on a flat face": (lambda: _with(*CUBE4, at=CENTRE, point=(0.0, 0.0, 1.2)),
                            MeshVerdict.CONCAVE_EDGE),
    "low bump on a flat face": (lambda: _with(*CUBE4, at=CENTRE, point=(0.0, 0.0, 1.01)),
                                MeshVerdict.UNFLIPPABLE),
    "hole": (lambda: _with(*SPHERE, drop=5), MeshVerdict.OPEN),
    "flipped triangle": (lambda: _with(*SPHERE, reverse=5), MeshVerdict.OPEN),
    "inside out": (lambda: (SPHERE[0], SPHERE[1][:, ::-1]), MeshVerdict.CONCAVE_EDGE),
    "two shells": (_two_cubes, MeshVerdict.NOT_ONE_SHELL),
    "loose vertex": (lambda: _with(*SPHERE, extra=(0.0, 0.1, 0.0)), MeshVerdict.LOOSE_VERTICES),
    "repeated index": (lambda: (SPHERE[0], np.vstack([SPHERE[1][:-1], (3, 3, 4)])),
                       MeshVerdict.DEGENERATE),
    "double cover": (_double_cover, MeshVerdict.VERTEX_NOT_CONVEX),
}


@pytest.mark.parametrize("kind", sorted(NOT_CONVEX))
def test_a_mesh_that_is_not_convex_gives_the_hull_of_its_points(kind):
    make, verdict = NOT_CONVEX[kind]
    points, tris = make()
    assert convex_mesh_hull(points, tris)[1] is verdict
    h = convex_hull(points, tris)
    assert corner_set(h) == corner_set(convex_hull(points))
    if h.dim == 3:
        assert_closed_convex_hull(points, h)


def test_the_double_cover_has_only_convex_edges():
    # (so that only the vertex test can reject it)
    points, tris = _double_cover()
    for i, j in [(i, j) for i in range(len(tris)) for j in range(len(tris)) if i != j]:
        shared = set(tris[i].tolist()) & set(tris[j].tolist())
        if len(shared) == 2:
            far = (set(tris[j].tolist()) - shared).pop()
            assert exact_height(points[far], *points[tris[i]]) < 0


def test_a_barely_raised_face_point_is_kept_when_it_is_a_corner():
    # Raised by 1e-6 (far above tolerance, within the flips' reach): flips cannot make the mesh
    # convex -- the other points of the face are now below the hull -- and Quickhull decides.
    points, tris = _with(*CUBE4, at=CENTRE, point=(0.0, 0.0, 1.0 + 1e-6))
    assert convex_mesh_hull(points, tris)[1] is not MeshVerdict.CONVEX
    h = convex_hull(points, tris)
    assert len(h.vertices) == 9
    assert_closed_convex_hull(points, h)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(5, 150),
       kind=st.sampled_from(["cloud", "sphere", "lattice", "box surface"]),
       change=st.sampled_from(["none", "dent", "bump", "flip", "hole", "split edge",
                               "split face"]))
def test_hull_of_a_mesh_matches_quickhull(seed, n, kind, change):
    """Convex meshes (hulls of random clouds), the same with a change that breaks convexity or
    closedness, or with points added on an edge or a face: the same corners as Quickhull."""
    rng = np.random.default_rng(seed)
    points = {
        "cloud": lambda: rng.normal(size=(n, 3)),
        "sphere": lambda: sphere_points(rng, n),
        "lattice": lambda: rng.integers(-2, 3, (n, 3)).astype(float),
        "box surface": lambda: _on_box_surface(rng, n),
    }[kind]() @ random_rotation(rng).T
    base = convex_hull(points)
    assume(base.dim == 3)
    points, tris = shuffled_mesh(rng, base.vertices, base.faces)
    f = int(rng.integers(len(tris)))
    a, b, c = tris[f].tolist()
    if change == "dent":
        points[a] = 0.7 * points[a] + 0.3 * points.mean(axis=0)
    elif change == "bump":
        points[a] = 1.3 * points[a] - 0.3 * points.mean(axis=0)
    elif change == "flip":
        tris[f] = tris[f][::-1]
    elif change == "hole":
        tris = np.delete(tris, f, axis=0)
    elif change == "split face":
        m = len(points)
        points = np.vstack([points, points[[a, b, c]].mean(axis=0)])
        tris = np.vstack([np.delete(tris, f, axis=0), [(a, b, m), (b, c, m), (c, a, m)]])
    elif change == "split edge":
        g = next(i for i, t in enumerate(tris.tolist()) if i != f and a in t and b in t)
        d = next(v for v in tris[g].tolist() if v not in (a, b))
        m = len(points)
        points = np.vstack([points, 0.5 * (points[a] + points[b])])
        tris = np.vstack([np.delete(tris, [f, g], axis=0),
                          [(a, m, c), (m, b, c), (b, m, d), (m, a, d)]])
    if change == "none":
        assert convex_mesh_hull(points, tris)[1] is MeshVerdict.CONVEX
    h = convex_hull(points, tris)
    assert corner_set(h) == corner_set(convex_hull(points))
    if h.dim == 3:
        assert_closed_convex_hull(points, h)


@pytest.mark.parametrize("bad", [np.zeros((4, 2), int), [(0, 1, 2.5)], [(0, 1, 8)], [(0, -1, 2)],
                                 [(0, 1, np.nan)], [(0, 1, np.inf)], "faces", [("a", "b", "c")]])
def test_bad_faces_raise_value_error_naming_faces(bad):
    with pytest.raises(ValueError, match="faces"):
        convex_hull(CUBE, bad)
    with pytest.raises(ValueError, match="faces"):
        Hull(CUBE, faces=bad)


# --- the Hull shape -------------------------------------------------------------------------------

def brute_force_max(vertices, d):
    return float(np.max(vertices @ d))


def test_hull_exposes_vertices_faces_and_adjacency():
    rng = np.random.default_rng(13)
    h = Hull(np.vstack([CUBE, rng.uniform(-0.5, 0.5, (30, 3))]))
    assert h.vertices.shape == (8, 3) and h.faces.shape == (12, 3)
    assert len(h.adjacency) == 8 and h.dim == 3
    with pytest.raises(ValueError):
        h.vertices[0, 0] = 5.0  # read-only view of an immutable shape
    with pytest.raises(AttributeError):
        h.foo = 1


def test_aabb_is_exact_and_center_is_inside():
    rng = np.random.default_rng(14)
    points = rng.normal(size=(500, 3)) * (1.0, 2.0, 0.5) + (5.0, -1.0, 2.0)
    h = Hull(points)
    lower, upper = h.aabb()
    np.testing.assert_array_equal(lower, points.min(axis=0))
    np.testing.assert_array_equal(upper, points.max(axis=0))
    n, off = face_planes(h.vertices, h.faces)
    assert np.all(n @ np.array(h.center_xyz(), dtype=np.longdouble) - off < 0)


def test_support_of_the_cube_hull():
    h = Hull(CUBE)
    assert h.support_xyz(1.0, 2.0, 3.0) == (1.0, 1.0, 1.0)
    np.testing.assert_array_equal(h.support((-1.0, 0.5, -0.1)), (-1.0, 1.0, -1.0))


def _hull_cases():
    rng = np.random.default_rng(15)
    flat = np.column_stack([rng.normal(size=(60, 2)), np.zeros(60)]) @ random_rotation(rng).T
    return {
        "sphere 300": sphere_points(rng, 300),
        "cloud 2000": rng.normal(size=(2000, 3)) * (3.0, 1.0, 0.2),
        "small 12": rng.normal(size=(12, 3)),
        "lattice": np.mgrid[-2:3, -2:3, -2:3].reshape(3, -1).T.astype(float),
        "flat": flat,
        "collinear": np.outer(rng.normal(size=20), (1.0, -2.0, 0.5)),
        "point": np.tile((1.0, 2.0, 3.0), (5, 1)),
        "tiny": sphere_points(rng, 100, 1e-6) + 1e-6,
        "huge": sphere_points(rng, 100, 1e6),
    }


HULL_CASES = _hull_cases()


@pytest.mark.parametrize("name", sorted(HULL_CASES))
@pytest.mark.parametrize("search", ["climb", "scan", "auto"])
def test_support_is_the_true_maximum_from_any_warm_start(name, search):
    rng = np.random.default_rng(16)
    h = Hull(HULL_CASES[name], search=search)
    v = h.vertices
    scale = float(np.max(np.abs(v)))
    for _ in range(300):
        d = rng.normal(size=3)
        if search != "scan":
            h.set_warm_start(int(rng.integers(len(v))))
        s = h.support_xyz(*d.tolist())
        assert s in {tuple(p) for p in v.tolist()}  # a vertex, as floats
        assert np.dot(s, d) >= brute_force_max(v, d) - 1e-12 * scale * np.linalg.norm(d)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(1, 120),
       kind=st.sampled_from(["cloud", "sphere", "flat", "line", "point", "lattice"]),
       steps=st.integers(1, 30))
def test_support_property_against_brute_force(seed, n, kind, steps):
    """Hill-climbing from whatever state earlier queries left behind returns a maximiser."""
    rng = np.random.default_rng(seed)
    points = {
        "cloud": lambda: rng.normal(size=(n, 3)),
        "sphere": lambda: sphere_points(rng, n),
        "flat": lambda: np.column_stack([rng.normal(size=(n, 2)), np.zeros(n)]),
        "line": lambda: np.outer(rng.normal(size=n), rng.normal(size=3)),
        "point": lambda: np.tile(rng.normal(size=3), (n, 1)),
        "lattice": lambda: rng.integers(-2, 3, (n, 3)).astype(float),
    }[kind]() @ random_rotation(rng).T
    h = Hull(points, search="climb")
    v = h.vertices
    scale = max(float(np.max(np.abs(v))), 1e-300)
    d = rng.normal(size=3)
    for _ in range(steps):
        # a mix of small turns (coherent) and jumps (arbitrary warm state)
        d = d + rng.normal(size=3) * (0.05 if rng.uniform() < 0.7 else 3.0)
        s = h.support_xyz(*d.tolist())
        assert np.dot(s, d) >= brute_force_max(v, d) - 1e-12 * scale * np.linalg.norm(d)


def test_cube_map_cells_hold_their_centre_support_and_directions_find_their_cell():
    rng = np.random.default_rng(21)
    h = Hull(sphere_points(rng, 600))
    k, table = h._cells, h._map
    assert len(table) == 6 * k * k and k > 1
    v = h.vertices
    for _ in range(500):
        d = rng.normal(size=3)
        cell = _cell(*d.tolist(), k)
        face, i, j = cell // (k * k), cell // k % k, cell % k
        axis = int(np.argmax(np.abs(d)))
        assert face == 2 * axis + (d[axis] < 0)
        u, w = (d[a] / abs(d[axis]) for a in range(3) if a != axis)
        assert -1 + 2 * i / k <= u <= -1 + 2 * (i + 1) / k
        assert -1 + 2 * j / k <= w <= -1 + 2 * (j + 1) / k
        # The cell's vertex is the support along the cell's centre direction (up to the single
        # precision the map is computed in: it is only where a climb resumes).
        centre = np.empty(3)
        centre[axis] = 1.0 if d[axis] > 0 else -1.0
        others = [a for a in range(3) if a != axis]
        centre[others[0]], centre[others[1]] = -1 + (2 * i + 1) / k, -1 + (2 * j + 1) / k
        assert v[table[cell]] @ centre == pytest.approx(brute_force_max(v, centre), abs=1e-6)


def test_a_far_jump_takes_few_vertex_reads_on_a_large_hull():
    # From the opposite side of a 4000-vertex sphere hull a plain climb crosses the hull edge
    # by edge (tens of moves); the cube-map jump lands next to the answer.
    rng = np.random.default_rng(22)
    h = CountingHull(sphere_points(rng, 4000))
    reads = []
    for d in rng.normal(size=(200, 3)):
        h.support_xyz(*(-d).tolist())
        h.reset_visits()
        h.support_xyz(*d.tolist())
        reads.append(h.visits[0])
    assert np.mean(reads) < 60


def test_zero_direction_returns_a_vertex():
    h = Hull(sphere_points(np.random.default_rng(17), 50))
    assert h.support_xyz(0.0, 0.0, 0.0) in {tuple(p) for p in h.vertices.tolist()}


def test_warm_start_follows_the_last_answer():
    h = Hull(sphere_points(np.random.default_rng(18), 200))
    i = h.support_index((0.3, -0.2, 0.9))
    assert h.warm_start == i
    np.testing.assert_array_equal(h.vertices[i], h.support((0.3, -0.2, 0.9)))
    with pytest.raises(ValueError):
        h.set_warm_start(len(h.vertices))


def test_counting_hull_answers_like_hull():
    rng = np.random.default_rng(19)
    points = sphere_points(rng, 500)
    plain, counted = Hull(points), CountingHull(points)
    for d in rng.normal(size=(200, 3)).tolist():
        assert plain.support_xyz(*d) == counted.support_xyz(*d)
    total, calls, most = counted.visits
    assert calls == 200 and 0 < most <= total


def test_coherent_queries_visit_a_constant_number_of_vertices():
    """Seed 000 §2: with frame coherence, hill-climbing is almost constant time."""
    rng = np.random.default_rng(20)
    means = []
    for m in (500, 4000):
        h = CountingHull(sphere_points(rng, m))
        d = np.array([1.0, 0.0, 0.0])
        turn = math.radians(0.5)
        about_z = np.array([[math.cos(turn), -math.sin(turn), 0],
                            [math.sin(turn), math.cos(turn), 0], [0, 0, 1]])
        frame = random_rotation(np.random.default_rng(0))
        rot = frame @ about_z @ frame.T  # 0.5° about an oblique axis
        h.support_xyz(*d)
        h.reset_visits()
        for _ in range(300):
            d = rot @ d
            h.support_xyz(*d.tolist())
        total, calls, most = h.visits
        means.append(total / calls)
        assert most <= 40
    # ~one vertex and its ring of ~6 neighbours per call, whatever the hull size
    assert max(means) < 15
    assert means[1] < 1.5 * means[0]
