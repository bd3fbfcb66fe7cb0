"""Intrusion of a convex shape into a triangle mesh (issue 18, "depth against a triangle mesh").

A triangle's depth is the shortest translation v with v·n ≥ 0 (n its front normal) that
separates the shape from that triangle; the intrusion is the deepest touched triangle. The
brute force below measures exactly that with nothing but ``intersect``: for many front-side
directions d, the smallest t (by bisection) at which the shape moved by t·d stops meeting the
triangle, then a local random search around the best direction. Its minimum is an upper bound
of the true depth (every sample is a separating translation) and comes within its sampling
resolution of it, so the answer must lie in [brute − RESOLUTION, brute + tolerance].
"""

import math

import numpy as np
import pytest

from convex_tools.core import (Box, Capsule, Compound, Cylinder, Disc, Hull, Point, Rectangle,
                               Segment, Sphere, Triangle, TriangleMesh, distance, intersect,
                               posed, translated)
from convex_tools.core.intrusion import SIDED_TOLERANCE, Intrusion, mesh_intrusion

from geometry_helpers import quad_grid, random_rotation, rigid, rotation, welded

# How far the brute force's minimum may lie above the true depth: its directions are a
# 64-point spiral, a 16-point rim and the pushes across the edges, refined by 30 random steps,
# on shapes about 0.6 m across.
RESOLUTION = 2e-3

# How far the answer may lie above the brute force: the one-sided EPA's stopping gap on the
# scenes' sizes (10 m at most) and the bisection's 2^-26 of the search interval.
ABOVE = SIDED_TOLERANCE * 10.0 + 1e-6

TOUCH = 1e-4


# --- levels ----------------------------------------------------------------------------------------

def step_level(height=0.8, cells=3):
    """A floor z = 0 for x < 0, a riser x = 0 facing −x up to ``height``, a tread z = height
    for x > 0: a stair step, each face cut into triangles."""
    return welded(quad_grid((-3, -3, 0), (3, 0, 0), (0, 6, 0), cells, 2 * cells),
                  quad_grid((0, -3, 0), (0, 0, height), (0, 6, 0), 1, 2 * cells),
                  quad_grid((0, -3, height), (3, 0, 0), (0, 6, 0), cells, 2 * cells))


def box_grids(lower, upper, cells=2):
    """The six faces of an axis-aligned box as grids facing out."""
    (x0, y0, z0), (x1, y1, z1) = lower, upper
    dx, dy, dz = x1 - x0, y1 - y0, z1 - z0
    return [quad_grid((x0, y0, z0), (0, 0, dz), (0, dy, 0), cells, cells),     # −x
            quad_grid((x1, y0, z0), (0, dy, 0), (0, 0, dz), cells, cells),     # +x
            quad_grid((x0, y0, z0), (dx, 0, 0), (0, 0, dz), cells, cells),     # −y
            quad_grid((x0, y1, z0), (0, 0, dz), (dx, 0, 0), cells, cells),     # +y
            quad_grid((x0, y0, z0), (0, dy, 0), (dx, 0, 0), cells, cells),     # −z
            quad_grid((x0, y0, z1), (dx, 0, 0), (0, dy, 0), cells, cells)]     # +z


def floor_grid(cells=4, half=3.0):
    return quad_grid((-half, -half, 0), (2 * half, 0, 0), (0, 2 * half, 0), cells, cells)


def wall_level(thickness=0.15):
    """A floor z = 0 and a closed wall x ∈ [0, thickness], y ∈ [−2, 2], z ∈ [0, 2] on it."""
    return welded(floor_grid(), *box_grids((0, -2, 0), (thickness, 2, 2)))


def corner_level(thickness=0.15):
    """A floor and two walls meeting at a right angle: along y at x ∈ [0, t] and along x at
    y ∈ [0, t] (the free quadrant is x, y > t)."""
    return welded(floor_grid(), *box_grids((0, 0, 0), (thickness, 3, 2), cells=1),
                  *box_grids((0, 0, 0), (3, thickness, 2), cells=1))


def hills(x, y):
    return 0.25 * np.sin(1.3 * x) * np.cos(0.9 * y) + 0.1 * x


def terrain_level(cells=12, half=3.0):
    """A height field of 2 cells² triangles over [−half, half]², front faces up."""
    vertices, triangles = quad_grid((-half, -half, 0), (2 * half, 0, 0), (0, 2 * half, 0),
                                    cells, cells)
    vertices[:, 2] = hills(vertices[:, 0], vertices[:, 1])
    return TriangleMesh(vertices, triangles)


def crate(lower, upper):
    """An axis-aligned box from ``lower`` to ``upper``."""
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    return translated(Box(0.5 * (upper - lower)), 0.5 * (upper + lower))


HULL_POINTS = np.random.default_rng(7).normal(size=(14, 3)) * 0.3


def rock_points():
    """60 points on an ellipsoid: a hull with too many edge directions for the numpy path
    (a scanned rock), measured by the one-sided EPA instead."""
    p = np.random.default_rng(9).normal(size=(60, 3))
    return p / np.linalg.norm(p, axis=1)[:, None] * (0.35, 0.3, 0.25)

SHAPES = {
    "box": Box((0.4, 0.3, 0.25)),
    "sphere": Sphere(0.3),
    "capsule": Capsule(0.2, 0.25),
    "cylinder": Cylinder(0.25, 0.3),
    "hull": Hull(HULL_POINTS),
    "rock": Hull(rock_points()),
}


# --- brute force ---------------------------------------------------------------------------------

def front_directions(n, count=64):
    """Unit directions d·n ≥ 0: a Fibonacci spiral over the front half-sphere and a ring on
    its rim (d·n = 0, the pushes along the triangle's plane; ``brute_depth`` adds the pushes
    straight across each edge)."""
    n = np.asarray(n, float)
    u = np.cross(n, (1, 0, 0) if abs(n[0]) < 0.9 else (0, 1, 0))
    u /= np.linalg.norm(u)
    v = np.cross(n, u)
    golden = math.pi * (3 - math.sqrt(5))
    out = []
    for k in range(count):
        z = (k + 0.5) / count
        r = math.sqrt(1 - z * z)
        out.append(r * math.cos(golden * k) * u + r * math.sin(golden * k) * v + z * n)
    for k in range(16):
        a = 2 * math.pi * k / 16
        out.append(math.cos(a) * u + math.sin(a) * v)
    return out


def exit_distance(shape, triangle, d, upper, steps=26):
    """The smallest t (to 2^-steps of ``upper``) with ``shape`` + t d apart from
    ``triangle``."""
    lo, hi = 0.0, upper
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if intersect(translated(shape, mid * d), triangle):
            lo = mid
        else:
            hi = mid
    return hi


def brute_depth(shape, corners, n, refine=30, seed=0):
    """The shortest front-side separating translation of ``shape`` from one triangle, by
    sampling (see the module)."""
    triangle = Triangle(*corners)
    if not intersect(shape, triangle):
        return 0.0
    lower, upper = shape.aabb()
    reach = float(np.max(upper - lower)) + float(np.ptp(corners, axis=0).max()) + 1.0
    edges = np.roll(corners, -1, axis=0) - corners
    across = np.cross(edges, n)
    across /= np.linalg.norm(across, axis=1)[:, None]
    best, best_d = math.inf, None
    for d in front_directions(n) + list(across):
        t = exit_distance(shape, triangle, d, reach)
        if t < best:
            best, best_d = t, d
    rng = np.random.default_rng(seed)
    step = 0.2
    for _ in range(refine):
        d = best_d + step * rng.normal(size=3)
        d = d - min(0.0, float(d @ n)) * n
        d /= np.linalg.norm(d)
        t = exit_distance(shape, triangle, d, min(1.5 * best + 1e-3, reach))
        if t < best:
            best, best_d = t, d
        else:
            step *= 0.85
    return best


def candidate_triangles(shape, mesh):
    """Rows (internal numbering) of the triangles whose boxes meet the shape's box."""
    lower, upper = shape.aabb()
    corners = mesh.vertices[mesh.triangles]
    meets = np.all((corners.min(axis=1) <= upper) & (corners.max(axis=1) >= lower), axis=1)
    return np.flatnonzero(meets).tolist()


def assert_agrees_with_brute_force(shape, mesh, tolerance=TOUCH):
    result = mesh_intrusion(shape, mesh, tolerance)
    listed = {} if result is None else {part: depth for part, depth, _ in result.contacts}
    checked = 0
    for i in candidate_triangles(shape, mesh):
        corners = mesh.vertices[mesh.triangles[i]]
        brute = brute_depth(shape, corners, mesh.normals[i])
        got = listed.get(mesh.part_id(i), 0.0)
        if brute > tolerance + RESOLUTION:
            assert mesh.part_id(i) in listed, f"triangle {i} touched {brute} deep, not listed"
        if mesh.part_id(i) in listed:
            assert got <= brute + ABOVE, f"triangle {i}: {got} deeper than brute force {brute}"
            assert got >= brute - RESOLUTION, f"triangle {i}: {got} below brute force {brute}"
            checked += 1
    return result, checked


def assert_well_formed(result):
    depths = [depth for _, depth, _ in result.contacts]
    assert depths == sorted(depths, reverse=True)
    assert result.depth == depths[0] == max(depths)
    assert result.part == result.contacts[0][0]
    assert np.linalg.norm(result.normal) == pytest.approx(1.0)
    for _, _, normal in result.contacts:
        assert np.linalg.norm(normal) == pytest.approx(1.0)


def posed_at(name, seed, position):
    return posed(SHAPES[name], random_rotation(np.random.default_rng(seed)), position)


# --- against brute force: stairs, walls, corners, terrain -----------------------------------------

@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("seed, position", [
    (1, (-0.15, 0.2, 0.1)),      # in the step's foot: riser and floor
    (2, (0.05, -0.4, 0.7)),      # at the step's top edge: tread and riser
])
def test_depth_at_a_stair_step_matches_brute_force(name, seed, position):
    shape = posed_at(name, seed, position)
    result, checked = assert_agrees_with_brute_force(shape, step_level())
    assert result is not None and checked >= 2
    assert_well_formed(result)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_depth_against_a_thin_wall_matches_brute_force(name):
    shape = posed_at(name, 3, (-0.12, 0.3, 0.35))
    result, checked = assert_agrees_with_brute_force(shape, wall_level())
    assert result is not None and checked >= 1
    assert_well_formed(result)


@pytest.mark.parametrize("name", ["box", "sphere", "cylinder"])
def test_depth_in_a_corner_of_two_walls_matches_brute_force(name):
    shape = posed_at(name, 4, (0.33, 0.36, 0.3))
    result, checked = assert_agrees_with_brute_force(shape, corner_level())
    assert result is not None and checked >= 2
    assert_well_formed(result)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_depth_into_terrain_matches_brute_force(name):
    x, y = 0.7, -0.4
    shape = posed_at(name, 5, (x, y, float(hills(x, y)) + 0.05))
    result, checked = assert_agrees_with_brute_force(shape, terrain_level())
    assert result is not None and checked >= 1
    assert_well_formed(result)


def test_a_shape_reaching_under_a_steps_edge_is_pushed_sideways_by_its_cross_section():
    # A tilted box under the tread's edge, its top just through the tread: moving it along the
    # tread's plane has to clear only its cut with that plane, not its whole shadow.
    shape = posed(Box((0.3, 0.3, 0.3)), rotation((0, 1, 0), 0.5), (-0.3, 0.0, 0.5))
    result, checked = assert_agrees_with_brute_force(shape, step_level())
    assert checked >= 2


# --- the examples ---------------------------------------------------------------------------

def test_a_crate_sunk_into_a_floor_beside_a_step_is_as_deep_as_it_sank():
    sunk = 0.05
    result = mesh_intrusion(crate((-1.4, -0.5, -sunk), (-0.4, 0.5, 1 - sunk)), step_level())
    assert result.depth == pytest.approx(sunk)
    np.testing.assert_allclose(result.normal, (0, 0, -1), atol=1e-12)


def test_a_crate_pushed_into_a_thin_wall_is_as_deep_as_it_went_not_the_walls_thickness():
    pushed = 0.1
    result = mesh_intrusion(crate((-1 + pushed, -0.5, 0), (pushed, 0.5, 1)), wall_level())
    assert result.depth == pytest.approx(pushed)
    np.testing.assert_allclose(result.normal, (1, 0, 0), atol=1e-12)


@pytest.mark.parametrize("sunk, pushed", [(0.05, 0.1), (0.12, 0.1)])
def test_a_crate_sunk_and_pushed_into_a_wall_is_the_larger_with_each_contact_listed(sunk,
                                                                                    pushed):
    mesh = wall_level()
    result = mesh_intrusion(crate((-1 + pushed, -0.5, -sunk), (pushed, 0.5, 1 - sunk)), mesh)
    assert result.depth == pytest.approx(max(sunk, pushed))
    floor = [depth for part, depth, normal in result.contacts if normal[2] < -0.99]
    wall = [depth for part, depth, normal in result.contacts if normal[0] > 0.99]
    assert max(floor) == pytest.approx(sunk)
    assert max(wall) == pytest.approx(pushed)


def test_a_crate_in_a_stairs_foot_is_as_deep_as_into_the_riser_not_the_step_above_it():
    # Today's penetration against the mesh says 0.88 here: the push up over the step.
    result = mesh_intrusion(crate((-0.9, -0.5, -0.08), (0.1, 0.5, 0.92)), step_level())
    assert result.depth == pytest.approx(0.1)
    np.testing.assert_allclose(result.normal, (1, 0, 0), atol=1e-12)
    assert max(d for _, d, n in result.contacts if n[2] < -0.99) == pytest.approx(0.08)


def test_a_crate_in_a_corner_is_never_deeper_than_its_deepest_wall():
    t = 0.15
    result = mesh_intrusion(crate((t - 0.07, t - 0.04, 0.001), (t + 0.93, t + 0.96, 1)),
                            corner_level(t))
    assert result.depth == pytest.approx(0.07)
    assert [round(d, 9) for _, d, _ in result.contacts].count(0.04) >= 1


def test_the_witness_points_lie_on_the_crate_and_the_wall_one_depth_apart():
    pushed = 0.1
    shape = crate((-1 + pushed, -0.5, 0.2), (pushed, 0.5, 1))
    mesh = wall_level()
    result = mesh_intrusion(shape, mesh)
    np.testing.assert_allclose(result.point_a - result.point_b, result.depth * result.normal,
                               atol=1e-12)
    assert distance(shape, translated(Point(), result.point_a)).distance == 0.0
    row = list(mesh.part_id(i) for i in range(len(mesh))).index(result.part)
    deepest = Triangle(*mesh.vertices[mesh.triangles[row]])
    assert distance(deepest, translated(Point(), result.point_b)).distance < 1e-12


# --- thresholds and special cases ------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_shape_resting_on_the_floor_touches_without_intruding(name):
    shape = posed_at(name, 6, (0.3, 0.2, 0.0))
    bottom = float(shape.aabb()[0][2])
    resting = translated(shape, (0, 0, -bottom))
    assert mesh_intrusion(resting, welded(floor_grid())) is None


@pytest.mark.parametrize("sunk, expected", [(0.5 * TOUCH, None), (3 * TOUCH, 3 * TOUCH)])
def test_only_intrusions_beyond_the_touch_tolerance_count(sunk, expected):
    result = mesh_intrusion(crate((-0.5, -0.5, -sunk), (0.5, 0.5, 1)), welded(floor_grid()),
                            TOUCH)
    if expected is None:
        assert result is None
    else:
        assert result.depth == pytest.approx(expected)


def test_a_shape_apart_from_the_mesh_does_not_intrude():
    assert mesh_intrusion(crate((-1.5, -0.5, 0.01), (-0.5, 0.5, 1)), step_level()) is None
    assert mesh_intrusion(translated(Sphere(0.3), (50, 0, 0)), step_level()) is None


def test_a_shape_wholly_under_a_floor_does_not_touch_the_surface():
    assert mesh_intrusion(crate((-0.5, -0.5, -1.5), (0.5, 0.5, -0.5)),
                          welded(floor_grid())) is None


def test_a_shape_poking_up_through_a_floor_must_climb_out_of_its_front():
    # The floor's back is solid: out of the front means up by the whole height below it (the
    # crate lies inside one of the floor's two triangles, 6 m across: sideways is farther).
    result = mesh_intrusion(crate((-1.2, 0.8, -0.48), (-0.8, 1.2, 0.02)),
                            welded(floor_grid(cells=1)))
    assert result.depth == pytest.approx(0.48)
    np.testing.assert_allclose(result.normal, (0, 0, -1), atol=1e-12)


def test_degenerate_triangles_are_ignored_and_parts_keep_the_input_rows():
    vertices, triangles = floor_grid(cells=2)
    extra = len(vertices)
    vertices = np.vstack((vertices, [(0, 0, 0.2), (0.1, 0.1, 0.2)]))
    # A triangle with a repeated corner, inside the crate, first in the list.
    triangles = np.vstack(([extra, extra, extra + 1], triangles))
    mesh = TriangleMesh(vertices, triangles, drop_degenerate=True)
    shape = crate((-0.5, -0.5, -0.1), (0.5, 0.5, 1))
    result = mesh_intrusion(shape, mesh)
    plain = mesh_intrusion(shape, TriangleMesh(*floor_grid(cells=2)))
    assert result.depth == pytest.approx(plain.depth)
    assert sorted(p for p, _, _ in result.contacts) == \
        sorted(p + 1 for p, _, _ in plain.contacts)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_moving_or_turning_the_whole_scene_keeps_the_depth(name):
    mesh = step_level()
    shape = posed_at(name, 8, (-0.1, 0.3, 0.15))
    base = mesh_intrusion(shape, mesh)
    turn = rotation((1, 2, 3), 0.7)
    m = rigid(turn, (40.0, -25.0, 7.5))
    moved = mesh_intrusion(posed(SHAPES[name], turn @ shape.matrix[:3, :3],
                                 m[:3, :3] @ shape.matrix[:3, 3] + m[:3, 3]), mesh.transformed(m))
    assert moved.depth == pytest.approx(base.depth, abs=ABOVE)
    np.testing.assert_allclose(moved.normal, turn @ base.normal, atol=1e-5)
    assert moved.part == base.part or moved.depth == pytest.approx(
        dict((p, d) for p, d, _ in base.contacts)[moved.part], abs=ABOVE)


def test_a_user_shape_with_only_a_support_mapping_gets_the_boxs_depth():
    box = crate((-0.9, -0.5, -0.08), (0.1, 0.5, 0.92))

    class Mine:
        def support_xyz(self, x, y, z):
            return box.support_xyz(x, y, z)

    mesh = step_level()
    assert mesh_intrusion(Mine(), mesh).depth == pytest.approx(mesh_intrusion(box, mesh).depth,
                                                               abs=1e-6)


def test_the_result_is_an_intrusion_with_every_touched_triangle():
    result = mesh_intrusion(crate((-0.9, -0.5, -0.08), (0.1, 0.5, 0.92)), step_level())
    assert isinstance(result, Intrusion)
    assert all(depth > TOUCH for _, depth, _ in result.contacts)
    assert len({part for part, _, _ in result.contacts}) == len(result.contacts)


@pytest.mark.parametrize("mesh, tolerance, message", [
    ("not a mesh", TOUCH, "mesh must be a TriangleMesh"),
    (None, -1.0, "touch_tolerance must not be negative"),
    (None, math.nan, "touch_tolerance must be finite"),
])
def test_bad_arguments_are_refused_by_name(mesh, tolerance, message):
    with pytest.raises(ValueError, match=message):
        mesh_intrusion(Sphere(1.0), step_level() if mesh is None else mesh, tolerance)


def test_a_concave_shape_is_refused():
    with pytest.raises(ValueError, match="shape must be a convex_tools shape"):
        mesh_intrusion(Compound([Sphere(1.0)]), step_level())


def test_a_sunk_ball_is_as_deep_as_its_lowest_point_with_the_witnesses_on_it_and_the_floor():
    mesh = welded(floor_grid(cells=1))
    result = mesh_intrusion(translated(Sphere(0.3), (0.7, -0.4, 0.22)), mesh)
    assert result.depth == pytest.approx(0.08, abs=ABOVE)
    np.testing.assert_allclose(result.normal, (0, 0, -1), atol=1e-6)
    np.testing.assert_allclose(result.point_a, (0.7, -0.4, -0.08), atol=1e-6)
    np.testing.assert_allclose(result.point_b, (0.7, -0.4, 0.0), atol=1e-6)


@pytest.mark.parametrize("flat", [
    Point(), Segment(0.4), Rectangle((0.3, 0.2)), Disc(0.3),
    Hull([(0, 0, 0), (0.5, 0, 0), (0, 0.4, 0), (0.3, 0.3, 0)]),      # a flat hull
])
@pytest.mark.parametrize("seed", [1, 2])
def test_points_segments_and_flat_shapes_give_a_finite_depth_or_none(flat, seed):
    mesh = step_level()
    for position in [(-0.2, 0.0, 0.0), (0.05, 0.1, 0.8), (-1.0, 0.5, 0.1)]:
        shape = posed(flat, random_rotation(np.random.default_rng(seed)), position)
        result = mesh_intrusion(shape, mesh)
        if result is not None:
            assert 0.0 < result.depth < 2.0
            assert np.linalg.norm(result.normal) == pytest.approx(1.0)
            assert np.all(np.isfinite(result.point_a)) and np.all(np.isfinite(result.point_b))


def test_a_plank_standing_through_the_floor_matches_brute_force():
    plank = posed(Rectangle((0.3, 0.4)), rotation((1, 0, 0), 1.3), (-1.0, 0.3, 0.15))
    result, checked = assert_agrees_with_brute_force(plank, step_level())
    assert result is not None and checked >= 1
