"""Triangle meshes: terrain and room shells against convex shapes and compounds."""

import math

import numpy as np
import pytest

from convex_tools.core import (Box, Capsule, Compound, Sphere, Triangle, TriangleMesh,
                               Transformed, bvh, contact_manifold, distance, gjk, intersect,
                               penetration, posed, ray_cast, signed_distance, sweep, translated)
from convex_tools.core import Status, concave, trimesh
from convex_tools.core.level import OVERLAP, SUNK, TOO_CLOSE, Stats, check_shapes

from geometry_helpers import quad_grid, random_rotation, rigid, rotation, welded


# --- meshes --------------------------------------------------------------------------------------
def terrain(n=16, half=4.0, z=0.0):
    """A flat square of 2 n² triangles at height z, front faces up."""
    return TriangleMesh(*quad_grid((-half, -half, z), (2 * half, 0, 0), (0, 2 * half, 0), n, n))


def room(cells=8):
    """A closed room shell [-2, 2]² × [0, 2], every face looking into the room (a concave
    surface: floor, four walls, ceiling, with shared edges)."""
    return welded(quad_grid((-2, -2, 0), (4, 0, 0), (0, 4, 0), cells, cells),        # floor, +z
                  quad_grid((-2, -2, 2), (0, 4, 0), (4, 0, 0), cells, cells),        # ceiling
                  quad_grid((-2, -2, 0), (0, 4, 0), (0, 0, 2), cells, 4),            # x = -2
                  quad_grid((2, -2, 0), (0, 0, 2), (0, 4, 0), 4, cells),             # x = +2
                  quad_grid((-2, -2, 0), (0, 0, 2), (4, 0, 0), 4, cells),            # y = -2
                  quad_grid((-2, 2, 0), (4, 0, 0), (0, 0, 2), cells, 4))             # y = +2


def step():
    """A plateau z = 0 for x < 0, a wall x = 0 down to z = -1 facing +x, a floor z = -1 for
    x > 0: one convex edge (the cliff top) and one concave edge (the wall's foot)."""
    return welded(quad_grid((-3, -3, 0), (3, 0, 0), (0, 6, 0), 3, 6),
                  quad_grid((0, -3, 0), (0, 0, -1), (0, 6, 0), 1, 6),
                  quad_grid((0, -3, -1), (3, 0, 0), (0, 6, 0), 3, 6))


def on_surface(shape, point, tol=1e-7):
    return distance(shape, translated(Sphere(0.0), point)).distance <= tol


# --- the analytic scenes -------------------------------------------------------------------------
def test_a_box_resting_on_a_terrain_of_many_triangles_touches_without_overlapping():
    ground = terrain()
    crate = translated(Box((0.5, 0.4, 0.3)), (0.25, 0.1, 0.3))    # bottom face on z = 0
    assert intersect(crate, ground)
    assert distance(crate, ground).distance == 0.0
    assert signed_distance(crate, ground) == pytest.approx(0.0, abs=1e-12)
    contact = penetration(crate, ground)
    assert contact.depth == pytest.approx(0.0, abs=1e-12)
    assert check_shapes([ground, crate], ["Ground", "Crate"]) == []


@pytest.mark.parametrize("x,y,turn", [(0.0, 0.0, 0.0), (0.25, 0.1, 0.0), (0.3, -0.7, 0.5),
                                      (-1.5, 1.2, 0.0), (1.1, 1.3, 1.0), (0.5, 0.5, 0.785)])
def test_a_box_sunk_into_a_concave_room_floor_is_pushed_up_by_its_depth(x, y, turn):
    # The floor is 128 triangles; the box covers several of them and their inner edges, and
    # stands clear of the walls. Any push across an inner edge would be shorter than 0.1.
    shell = room()
    crate = posed(Box((0.3, 0.3, 0.3)), rotation((0, 0, 1), turn), (x, y, 0.2))   # sunk 0.1
    contact = penetration(crate, shell)
    assert contact.depth == pytest.approx(0.1, abs=1e-12)
    assert contact.normal == pytest.approx([0.0, 0.0, -1.0])        # from the box into the floor
    assert contact.point_a - contact.point_b == pytest.approx(0.1 * contact.normal)
    assert on_surface(crate, contact.point_a) and on_surface(shell, contact.point_b)
    assert contact.point_b[2] == pytest.approx(0.0)
    assert signed_distance(crate, shell) == pytest.approx(-0.1, abs=1e-12)
    # Lifting the box by the depth leaves it resting on the floor.
    lifted = translated(crate, -contact.depth * contact.normal)
    assert signed_distance(lifted, shell) == pytest.approx(0.0, abs=1e-12)


def test_the_same_box_seen_from_the_mesh_side_has_the_normal_out_of_the_floor():
    contact = penetration(room(), translated(Box((0.3, 0.3, 0.3)), (0.25, 0.1, 0.2)))
    assert contact.depth == pytest.approx(0.1, abs=1e-12)
    assert contact.normal == pytest.approx([0.0, 0.0, 1.0])
    assert contact.part_b is None and 0 <= contact.part_a < len(room())


def test_a_sphere_sunk_into_the_floor_has_the_depth_of_its_reach_below_it():
    contact = penetration(room(), translated(Sphere(0.5), (0.3, -0.2, 0.35)))
    assert contact.depth == pytest.approx(0.15, abs=1e-12)
    assert contact.normal == pytest.approx([0.0, 0.0, 1.0])
    assert contact.point_b == pytest.approx([0.3, -0.2, -0.15])


def test_the_floor_is_one_sided_a_box_coming_from_below_is_pushed_out_of_the_front():
    # Centre 0.3 below the terrain: all of its 0.8 reach below the plane must go.
    contact = penetration(terrain(), translated(Box((0.5, 0.5, 0.5)), (0.1, 0.2, -0.3)))
    assert contact.depth == pytest.approx(0.8, abs=1e-12)
    assert contact.normal == pytest.approx([0.0, 0.0, 1.0])


def test_a_box_sunk_into_a_cliff_top_is_pushed_up_not_out_through_the_cliff_face():
    # It overhangs the cliff edge (x = 0) by 0.3; the wall's triangles reach it under the edge,
    # but their convex top edge is active: the push over it is the same 0.1 up.
    contact = penetration(step(), translated(Box((0.5, 0.5, 0.5)), (-0.2, 0.0, 0.4)))
    assert contact.depth == pytest.approx(0.1, abs=1e-9)
    assert contact.normal == pytest.approx([0.0, 0.0, 1.0], abs=1e-9)


def dome(cells=16):
    """z = -0.02 (x² + y²) on [-2, 2]²: a smooth hilltop, its peak the vertex at the origin; the
    faces turn by well under a degree at each edge, so no edge is active."""
    vertices, triangles = quad_grid((-2, -2, 0), (4, 0, 0), (0, 4, 0), cells, cells)
    vertices[:, 2] = -0.02 * (vertices[:, 0] ** 2 + vertices[:, 1] ** 2)
    return TriangleMesh(vertices, triangles)


def test_a_box_resting_on_a_smooth_hilltop_touches_it_and_is_not_sunk_by_its_overhang():
    # The box touches the peak only; its corners hang over faces that fall away. Measured
    # against those faces' planes it would be ~0.01 deep (half-width times slope).
    hill = dome()
    assert hill.active_edges.sum() == 4 * 16                # the border only
    crate = translated(Box((0.5, 0.5, 0.3)), (0.1, 0.05, 0.3))
    assert signed_distance(crate, hill) == pytest.approx(0.0, abs=1e-9)
    assert check_shapes([hill, crate], ["Hill", "Crate"]) == []


def test_a_box_sunk_into_a_smooth_hilltop_is_pushed_up_by_about_its_depth():
    crate = translated(Box((0.5, 0.5, 0.3)), (0.0, 0.0, 0.25))     # 0.05 below the peak
    contact = penetration(dome(), crate)
    # Out of one of the faces at the peak, tilted by at most ~0.3°: 0.05 to within 0.1%.
    assert contact.depth == pytest.approx(0.05, rel=1e-3)
    assert contact.normal[2] > 0.9999


def test_a_box_pushed_into_the_foot_of_a_wall_comes_out_of_the_wall():
    crate = translated(Box((0.4, 0.4, 0.4)), (0.3, 0.0, -0.5))     # 0.1 into the wall x = 0
    contact = penetration(step(), crate)
    assert contact.depth == pytest.approx(0.1, abs=1e-12)
    assert contact.normal == pytest.approx([1.0, 0.0, 0.0])


def test_a_manifold_on_a_floor_of_triangles_is_the_footprint_of_the_box():
    crate = translated(Box((0.3, 0.4, 0.3)), (0.2, 0.1, 0.25))     # sunk 0.05
    m = contact_manifold(room(), crate)
    assert m.normal == pytest.approx([0.0, 0.0, 1.0])
    corners = sorted(map(tuple, np.round(m.points, 9)))
    assert corners == [(-0.1, -0.3, -0.025), (-0.1, 0.5, -0.025), (0.5, -0.3, -0.025),
                       (0.5, 0.5, -0.025)]
    assert m.depths == pytest.approx([0.05] * 4)
    flipped = contact_manifold(crate, room())
    assert flipped.normal == pytest.approx([0.0, 0.0, -1.0])
    assert sorted(map(tuple, np.round(flipped.points, 9))) == corners


def test_a_manifold_over_triangles_says_how_its_deepest_contact_ended():
    crate = translated(Box((0.3, 0.4, 0.3)), (0.2, 0.1, 0.25))     # sunk 0.05
    for m in (contact_manifold(room(), crate), contact_manifold(crate, room())):
        assert m.status is Status.CONVERGED


def test_rays_hit_the_walls_of_a_room_from_either_side_facing_the_ray():
    inside = ray_cast(room(), (0.1, 0.2, 1.0), (2.0, 0.0, 0.0))
    assert inside.t == pytest.approx(0.95)       # to x = 2 at speed 2
    assert inside.normal == pytest.approx([-1.0, 0.0, 0.0])
    outside = ray_cast(room(), (5.0, 0.2, 1.0), (-1.0, 0.0, 0.0))
    assert outside.t == pytest.approx(3.0)
    assert outside.normal == pytest.approx([1.0, 0.0, 0.0])
    assert ray_cast(room(), (5.0, 0.2, 1.0), (-1.0, 0.0, 0.0), max_t=2.9) is None
    assert ray_cast(room(), (5.0, 0.2, 1.0), (1.0, 0.0, 0.0)) is None


def test_a_ray_into_a_u_shaped_channel_hits_the_inner_wall():
    channel = welded(quad_grid((-1, -3, 0), (2, 0, 0), (0, 6, 0), 4, 6),            # floor, +z
                     quad_grid((-1, -3, 0), (0, 6, 0), (0, 0, 2), 6, 4),            # x = -1, +x
                     quad_grid((1, -3, 0), (0, 0, 2), (0, 6, 0), 4, 6))             # x = +1, -x
    # From above the opening, slanting down toward +x: it enters the channel between the wall
    # tops and reaches the wall x = 1 after 1.5 in x, 0.75 in z (z = 1.25 there).
    hit = ray_cast(channel, (-0.5, 0.2, 2.0), (1.0, 0.0, -0.5))
    assert hit.t == pytest.approx(1.5)
    assert hit.point == pytest.approx([1.0, 0.2, 1.25])
    assert hit.normal == pytest.approx([-1.0, 0.0, 0.0])


def test_a_capsule_lying_sunk_in_the_floor_touches_along_its_length():
    lying = posed(Capsule(0.2, 0.5), rotation((0, 1, 0), math.pi / 2), (0.1, 0.3, 0.15))
    # Its axis along x from -0.4 to 0.6 at z = 0.15, radius 0.2: sunk 0.05 all along.
    m = contact_manifold(room(), lying)
    assert m.normal == pytest.approx([0.0, 0.0, 1.0])
    assert len(m) == 2
    assert sorted(np.round(m.points[:, 0], 9)) == [-0.4, 0.6]     # the segment's ends
    assert m.depths == pytest.approx([0.05, 0.05])


def test_a_ray_through_a_shared_edge_or_vertex_does_not_slip_between_triangles():
    ground = terrain(n=4, half=2.0)            # vertices on the half-unit grid
    for x, y in [(0.0, 0.0), (0.5, 0.25), (0.5, 0.5), (1.0, -1.0)]:
        hit = ray_cast(ground, (x, y, 3.0), (0.0, 0.0, -1.0))
        assert hit is not None and hit.t == pytest.approx(3.0)


@pytest.mark.parametrize("x", [0.0, 0.3])
def test_a_ray_running_in_the_surface_meets_its_border(x):
    # In the terrain's plane toward +y, along the shared edges x = 0 or across the cells at
    # x = 0.3: it grazes the surface from its border y = -2 on, as it grazes a box's face.
    ground = terrain(n=4, half=2.0)
    hit = ray_cast(ground, (x, -5.0, 0.0), (0.0, 1.0, 0.0))
    assert hit.t == pytest.approx(3.0)
    assert hit.point == pytest.approx([x, -2.0, 0.0])
    assert np.linalg.norm(hit.normal) == pytest.approx(1.0) and hit.normal[1] < 0.0
    assert on_surface(ground.part(hit.part), hit.point)
    assert ray_cast(translated(Box((2, 2, 1)), (0, 0, -1)), (x, -5.0, 0.0), (0, 1, 0)).t == 3.0
    # Lifted off the plane by a hair, it runs above the surface and misses.
    assert ray_cast(ground, (x, -5.0, 1e-6), (0.0, 1.0, 0.0)) is None


def test_a_ray_starting_on_the_surface_hits_at_zero_with_no_normal():
    hit = ray_cast(terrain(), (0.3, 0.3, 0.0), (0.0, 0.0, 1.0))
    assert hit.t == 0.0 and not hit.normal.any()


def test_a_crate_dropped_onto_terrain_lands_when_its_bottom_reaches_the_ground():
    crate = translated(Box((0.3, 0.3, 0.3)), (0.7, -0.4, 2.3))     # bottom at z = 2
    hit = sweep(crate, terrain(), translation_a=(0.0, 0.0, -4.0))
    assert hit.t == pytest.approx(0.5)
    assert hit.normal == pytest.approx([0.0, 0.0, -1.0])
    assert hit.point[2] == pytest.approx(0.0)
    assert sweep(crate, terrain(), translation_a=(0.0, 0.0, -1.9)) is None


def test_distance_to_a_sloped_terrain_is_the_distance_to_its_plane():
    vertices, triangles = quad_grid((-4, -4, 0), (8, 0, 0), (0, 8, 0), 10, 10)
    vertices[:, 2] = 0.5 * vertices[:, 0]          # the plane z = x / 2
    slope = TriangleMesh(vertices, triangles)
    ball = translated(Sphere(0.25), (0.3, 0.6, 2.0))
    expected = (2.0 - 0.5 * 0.3) / math.sqrt(1.25) - 0.25
    result = distance(ball, slope)
    assert result.distance == pytest.approx(expected, abs=1e-9)
    assert on_surface(slope, result.point_b)


def test_a_compound_on_a_mesh_gets_the_deepest_of_its_parts():
    table = Compound([translated(Box((0.05, 0.05, 0.4)), (x, y, 0.35))
                      for x in (-0.5, 0.5) for y in (-0.3, 0.3)]
                     + [translated(Box((0.6, 0.4, 0.05)), (0, 0, 0.8))])
    # Legs from z = -0.05 to 0.75: each sunk 0.05 into the floor; the top is clear of it.
    contact = penetration(table, room())
    assert contact.depth == pytest.approx(0.05, abs=1e-12)
    assert contact.normal == pytest.approx([0.0, 0.0, -1.0])
    assert contact.part_a in range(4)
    lifted = table.transformed(rigid(translation=(0, 0, 0.3)))
    assert distance(lifted, room()).distance == pytest.approx(0.25)
    m = contact_manifold(table, room())
    assert len(m) == 4 and m.depths == pytest.approx([0.05] * 4)


def test_two_meshes_have_a_distance_but_no_penetration():
    low, high = terrain(n=4), terrain(n=5, z=0.7)
    assert distance(low, high).distance == pytest.approx(0.7)
    assert not intersect(low, high)
    with pytest.raises(ValueError, match="two TriangleMesh"):
        penetration(low, high)
    with pytest.raises(ValueError, match="two TriangleMesh"):
        contact_manifold(low, high)


@pytest.mark.parametrize("seed", range(3))
def test_penetration_contract_on_curved_terrain_for_random_shapes(seed):
    from test_compound import random_part
    rng = np.random.default_rng(seed)
    vertices, triangles = quad_grid((-4, -4, 0), (8, 0, 0), (0, 8, 0), 12, 12)
    vertices[:, 2] = 0.4 * np.sin(1.1 * vertices[:, 0]) * np.cos(0.9 * vertices[:, 1])
    ground = TriangleMesh(vertices, triangles)
    checked = 0
    for _ in range(15):
        shape = translated(random_part(rng, 0.0), (*rng.uniform(-3, 3, 2), rng.uniform(-.4, .6)))
        contact = penetration(ground, shape)
        if contact is None:
            assert not intersect(ground, shape)
            continue
        checked += 1
        assert contact.depth >= 0.0
        assert np.linalg.norm(contact.normal) == pytest.approx(1.0)
        assert contact.point_a - contact.point_b == pytest.approx(contact.depth * contact.normal)
        assert on_surface(ground, contact.point_a, 1e-9)
        assert on_surface(shape, contact.point_b, 1e-6)
        assert signed_distance(ground, shape) == pytest.approx(-contact.depth, abs=1e-12)
    assert checked >= 5


@pytest.mark.parametrize("seed", range(3))
def test_mesh_distance_is_the_minimum_over_all_triangles(seed):
    from test_compound import random_part
    rng = np.random.default_rng(10 + seed)
    vertices, triangles = quad_grid((-4, -4, 0), (8, 0, 0), (0, 8, 0), 10, 10)
    vertices[:, 2] = 0.4 * np.sin(1.1 * vertices[:, 0]) * np.cos(0.9 * vertices[:, 1])
    ground = TriangleMesh(vertices, triangles)
    for _ in range(12):
        shape = translated(random_part(rng, 0.0), (*rng.uniform(-3, 3, 2), rng.uniform(0, 1.5)))
        brute = min(gjk.distance(ground.part(i), shape).distance for i in range(len(ground)))
        result = distance(shape, ground)
        assert result.distance == pytest.approx(brute, abs=1e-9)
        assert on_surface(ground, result.point_b, 1e-9) and on_surface(shape, result.point_a)
        assert np.linalg.norm(result.point_a - result.point_b) == \
            pytest.approx(result.distance, abs=1e-9)


# --- the surface's structure ---------------------------------------------------------------------
def test_a_flat_grid_has_active_edges_only_on_its_border():
    ground = terrain(n=4)
    # 4 × 4 cells: 16 border edges, each in one triangle.
    assert ground.active_edges.sum() == 16


def test_a_ridge_edge_is_active_a_valley_or_a_gentle_bend_is_not():
    def two_faces(apex_height):
        v = np.array([[0, -1, 0], [0, 1, 0], [-1, 0, apex_height], [1, 0, apex_height]], float)
        v[2:, 2] = -apex_height                    # > 0: a ridge along y; < 0: a valley
        return TriangleMesh(v, [[0, 1, 2], [1, 0, 3]])

    def shared_edge_active(mesh):
        return bool(mesh.active_edges[0, 0] or mesh.active_edges[1, 0])

    assert shared_edge_active(two_faces(0.5))                  # ridge: ~53° bend
    assert not shared_edge_active(two_faces(-0.5))             # valley
    assert not shared_edge_active(two_faces(math.tan(math.radians(2.0))))   # a 4° ridge


def test_edges_between_inconsistently_wound_triangles_are_active():
    v = np.array([[0, -1, 0], [0, 1, 0], [-1, 0, 0], [1, 0, 0]], float)
    mesh = TriangleMesh(v, [[0, 1, 2], [0, 1, 3]])             # the second one faces down
    assert mesh.active_edges[0, 0] and mesh.active_edges[1, 0]


def test_front_normals_follow_the_right_hand_rule():
    mesh = TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    assert mesh.normals[0] == pytest.approx([0, 0, 1])
    assert Triangle((0, 0, 0), (1, 0, 0), (0, 1, 0)).normal == pytest.approx([0, 0, 1])


def test_a_triangle_is_a_convex_shape_with_a_three_point_support():
    tri = Triangle((0, 0, 0), (2, 0, 0), (0, 1, 1))
    assert tri.support((1, 0, 0)) == pytest.approx([2, 0, 0])
    assert tri.support((0, 1, 0.1)) == pytest.approx([0, 1, 1])
    lower, upper = tri.aabb()
    assert lower == pytest.approx([0, 0, 0]) and upper == pytest.approx([2, 1, 1])
    assert gjk.distance(tri, translated(Sphere(0.5), (0.5, 0.25, 3))).distance > 0.0


def test_a_transformed_mesh_is_the_mesh_of_the_moved_vertices(rng):
    m = rigid(random_rotation(rng), rng.uniform(-3, 3, 3))
    moved = room().transformed(m)
    ball = translated(Sphere(0.5), (0.3, -0.2, 0.35))
    before = penetration(room(), ball)
    after = penetration(moved, Transformed(ball, m))
    assert after.depth == pytest.approx(before.depth, abs=1e-9)
    assert after.normal == pytest.approx(m[:3, :3] @ before.normal, abs=1e-9)


def test_a_mirrored_mesh_keeps_its_front_on_the_mirrored_side():
    mirrored = terrain().transformed(np.diag([1.0, 1.0, -1.0, 1.0]))
    # The free space above the terrain is now below it.
    assert mirrored.normals[:, 2] == pytest.approx(-1.0)
    contact = penetration(mirrored, translated(Box((0.3, 0.3, 0.3)), (0.1, 0.1, -0.2)))
    assert contact.depth == pytest.approx(0.1) and contact.normal == pytest.approx([0, 0, -1])


# --- small, repeated and one-sided ---------------------------------------------------------------
ONE = [[0, 0, 0], [2, 0, 0], [0, 2, 0]]


def test_a_mesh_of_one_triangle_answers_as_the_triangle():
    mesh, tri = TriangleMesh(ONE, [[0, 1, 2]]), Triangle(*ONE)
    ball = translated(Sphere(0.2), (0.5, 0.5, 0.6))
    assert distance(ball, mesh).distance == pytest.approx(0.4)
    assert distance(ball, mesh).distance == pytest.approx(gjk.distance(ball, tri).distance)
    hit = ray_cast(mesh, (0.5, 0.5, 2.0), (0.0, 0.0, -1.0))
    assert (hit.t, hit.part) == (pytest.approx(2.0), 0)
    drop = sweep(ball, mesh, (0.0, 0.0, -1.0))
    assert drop.t == pytest.approx(0.4) and drop.part_b == 0
    sunk = penetration(mesh, translated(Sphere(0.2), (0.5, 0.5, 0.15)))
    assert sunk.depth == pytest.approx(0.05) and sunk.normal == pytest.approx([0, 0, 1])


def test_duplicate_triangles_answer_as_one():
    single, double = TriangleMesh(ONE, [[0, 1, 2]]), TriangleMesh(ONE, [[0, 1, 2], [0, 1, 2]])
    ball = translated(Sphere(0.2), (0.5, 0.5, 0.15))        # sunk 0.05 into the face
    assert distance(ball, double).intersecting and distance(ball, single).intersecting
    assert signed_distance(ball, double) == signed_distance(ball, single) == pytest.approx(-0.05)
    c = penetration(double, ball)
    assert c.depth == pytest.approx(0.05) and c.normal == pytest.approx([0, 0, 1])
    assert c.part_a in (0, 1)
    assert ray_cast(double, (0.5, 0.5, 2.0), (0, 0, -1)).t == pytest.approx(2.0)


def test_a_shape_touching_the_back_of_the_surface_is_inside_it():
    # Behind the front face is solid: a crate touching the terrain from below is buried by its
    # whole height; touching it from above it rests, at depth 0.
    below = translated(Box((0.3, 0.3, 0.3)), (0.1, 0.1, -0.3))
    above = translated(Box((0.3, 0.3, 0.3)), (0.1, 0.1, 0.3))
    assert distance(below, terrain()).distance == 0.0 == distance(above, terrain()).distance
    contact = penetration(terrain(), below)
    assert contact.depth == pytest.approx(0.6) and contact.normal == pytest.approx([0, 0, 1])
    assert signed_distance(below, terrain()) == pytest.approx(-0.6)
    assert signed_distance(above, terrain()) == pytest.approx(0.0, abs=1e-12)


def test_a_crate_sliding_on_the_terrain_touches_it_from_the_start():
    crate = translated(Box((0.3, 0.3, 0.3)), (-1.0, 0.2, 0.3))     # resting on it
    hit = sweep(crate, terrain(), (2.0, 0.0, 0.0))
    assert hit.t == 0.0
    lifted = translated(Box((0.3, 0.3, 0.3)), (-1.0, 0.2, 0.3 + 1e-9))
    assert sweep(lifted, terrain(), (2.0, 0.0, 0.0)) is None


# --- bad input -----------------------------------------------------------------------------------
GOOD_V = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]


@pytest.mark.parametrize("vertices,triangles,message", [
    ([[0, 0, 0], [1, 0, 0], [0, np.nan, 0]], [[0, 1, 2]], r"vertices\[2\] is not finite"),
    ([[0, 0, 0], [1, 0, 0], [0, np.inf, 0]], [[0, 1, 2]], r"vertices\[2\] is not finite"),
    (GOOD_V, [[0, 1, 2], [1, 3, 4]], r"triangles\[1\] refers to a vertex out of range"),
    (GOOD_V, [[0, 1, 2], [-1, 1, 2]], r"triangles\[1\] refers to a vertex out of range"),
    (GOOD_V, [[0, 1, 2], [1, 3, 3]], r"triangles\[1\] repeats a vertex"),
    ([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0]], [[0, 1, 3], [0, 1, 2]],
     r"triangles\[1\] has zero area"),
    (GOOD_V, np.zeros((0, 3), int), "triangles must not be empty"),
    (np.zeros((0, 3)), [[0, 1, 2]], "vertices must not be empty"),
    (GOOD_V, [[0, 1]], r"triangles must be a \(T, 3\) array"),
    (GOOD_V, [[0, 1, 2.5]], "integer vertex indices"),
    (GOOD_V, [[0, 1, np.nan]], "integer vertex indices"),
    (GOOD_V, [[True, False, True]], "integer vertex indices"),
    (GOOD_V, [["0", "1", "2"]], "integer vertex indices"),
    ([[0, 0, 0], [1, 0, 0], [0, 1e41, 0]], [[0, 1, 2]], r"vertices\[2\] lies beyond"),
    ([[0, 0, 0], [1e-41, 0, 0], [0, 1e-41, 0]], [[0, 1, 2]],
     r"triangles\[0\] is only 1e-41 across, below the supported range"),
    ([[0, 0], [1, 0], [0, 1]], [[0, 1, 2]], r"vertices must be an \(N, 3\) array"),
])
def test_bad_meshes_are_refused_by_name(vertices, triangles, message):
    with pytest.raises(ValueError, match=message):
        TriangleMesh(vertices, triangles)


def test_degenerate_triangles_can_be_dropped_and_results_keep_the_input_rows():
    vertices = [[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [1, 1, 0]]
    triangles = [[0, 1, 2], [0, 0, 3], [1, 4, 3], [0, 1, 3]]      # rows 0 and 1 are degenerate
    with pytest.raises(ValueError, match="2 degenerate triangles in all"):
        TriangleMesh(vertices, triangles)
    mesh = TriangleMesh(vertices, triangles, drop_degenerate=True)
    assert mesh.dropped == 2 and len(mesh) == 2
    assert ray_cast(mesh, (0.8, 0.8, 1.0), (0, 0, -1)).part == 2
    assert ray_cast(mesh, (0.1, 0.1, 1.0), (0, 0, -1)).part == 3
    with pytest.raises(ValueError, match="all degenerate"):
        TriangleMesh(vertices, [[0, 1, 2]], drop_degenerate=True)


def test_a_mesh_is_not_a_convex_part_or_shape():
    with pytest.raises(ValueError, match=r"parts\[0\] is a TriangleMesh"):
        Compound([terrain()])
    with pytest.raises(ValueError, match="convex_tools shape"):
        gjk.distance(terrain(), Sphere(1))


# --- the level check, and what a query costs -----------------------------------------------------
def test_level_check_on_terrain_reports_sunk_and_close_props_by_triangle():
    vertices, triangles = quad_grid((-4, -4, 0), (8, 0, 0), (0, 8, 0), 16, 16)
    vertices[-1, 2] = 1.5                   # a peak at the corner (4, 4): the box holds z <= 1.5
    ground = TriangleMesh(vertices, triangles)
    props = [translated(Box((0.3, 0.3, 0.3)), (0.1, 0.2, 0.2)),        # sunk 0.1
             translated(Sphere(0.3), (2.0, 1.0, 0.32)),                # 0.02 above it
             translated(Sphere(0.3), (-2.0, -2.0, 0.9))]               # well clear
    stats = Stats()
    found = check_shapes([ground] + props, ["Ground", "Sunk", "Hovering", "Clear"],
                         clearance=0.05, stats=stats)
    # The terrain (a triangle mesh: static) supports the sunk box: "sunk", the box named first.
    assert [(f.object_a, f.object_b, f.kind) for f in found] == [
        ("Sunk", "Ground", SUNK), ("Ground", "Hovering", TOO_CLOSE)]
    sunk, hovering = found
    assert sunk.distance == pytest.approx(-0.1) and hovering.distance == pytest.approx(0.02)
    assert sunk.part_b.startswith("triangle ") and sunk.part_a is None
    assert stats.part_culled == 1          # "Clear": its box overlaps the terrain's, no triangle's


def test_level_check_without_clearance_still_finds_a_sunk_prop():
    found = check_shapes([terrain(), translated(Sphere(0.3), (0.5, 0.5, 0.25))], ["G", "Ball"])
    assert [(f.object_a, f.kind, f.part_a) for f in found] == [("Ball", SUNK, None)]
    assert found[0].part_b.startswith("triangle ")
    assert found[0].distance == pytest.approx(-0.05)


def test_a_bounded_distance_is_none_beyond_its_bound_and_exact_within_it():
    ball = translated(Sphere(0.3), (0.5, 0.5, 0.5))            # 0.2 above the terrain
    assert concave.distance(ball, terrain(), max_distance=0.19) is None
    assert concave.distance(ball, terrain(), max_distance=0.2).distance == pytest.approx(0.2)
    resting = translated(Sphere(0.3), (0.5, 0.5, 0.3))
    assert concave.distance(resting, terrain(), max_distance=0.0).intersecting


def test_level_check_does_not_check_two_meshes_against_each_other():
    stats = Stats()
    found = check_shapes([terrain(), room()], ["Ground", "Room"], stats=stats)
    assert found == [] and stats.static_pairs == 1


def test_a_prop_query_on_a_large_terrain_visits_a_path_not_the_terrain():
    vertices, triangles = quad_grid((-80, -80, 0), (160, 0, 0), (0, 160, 0), 150, 150)
    vertices[:, 2] = 0.3 * np.sin(0.2 * vertices[:, 0]) * np.cos(0.15 * vertices[:, 1])
    ground = TriangleMesh(vertices, triangles)           # 45 000 triangles
    stats = bvh.TraversalStats()
    prop = translated(Box((0.3, 0.3, 0.3)), (12.3, -40.1, 1.2))
    concave.distance(prop, ground, stats=stats)
    # About two node pairs per level of a 14-deep tree, and a handful of triangles.
    assert ground.tree.depth == 14
    assert stats.nodes <= 80 and stats.tests <= 12
    assert stats.tests == stats.pairs or stats.tests == stats.pairs - 1


def test_degenerate_area_threshold_is_relative_to_the_triangle_size():
    # A sliver thin relative to its length, but with a real area at its scale, is kept.
    TriangleMesh([[0, 0, 0], [1e6, 0, 0], [0, 1e-3, 0]], [[0, 1, 2]])
    assert trimesh.DEGENERATE_AREA < 1e-9
