"""Traversal check (core.traversal): where the agent stands and goes, on levels a designer builds.

Default agent: r = 0.35, h = 1.8, s = 0.45, max slope 45°, cell c = r / 3.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convex_tools.core import Box, Cylinder, Sphere, translated
from convex_tools.core.compound import Compound
from convex_tools.core.hull import Hull
from convex_tools.core.level import LOW_HEADROOM, NARROW, STEP, UNREACHABLE
from convex_tools.core.traversal import (COLOURS, Agent, check_traversal, image_pixel,
                                         map_image)
from convex_tools.core.trimesh import TriangleMesh

AGENT = Agent()
R, H, S, C = AGENT.radius, AGENT.height, AGENT.max_step, AGENT.cell


def box(lo, hi):
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return translated(Box((hi - lo) / 2), (hi + lo) / 2)


class Level:
    """A list of named shapes with walkable / blocking flags."""

    def __init__(self):
        self.shapes, self.names, self.walk, self.block = [], [], [], []

    def add(self, shape, name, walk=False, block=True):
        self.shapes.append(shape)
        self.names.append(name)
        self.walk.append(walk)
        self.block.append(block)
        return self

    def check(self, starts, **kw):
        return check_traversal(self.shapes, self.names, self.walk, self.block, starts=starts,
                               **kw)


def walled_floor(x1, y1, thickness=0.2, height=3.0):
    """A floor [0, x1] × [0, y1] at z = 0 with walls all round (outside it)."""
    t = thickness
    return (Level().add(box((0, 0, -0.3), (x1, y1, 0)), "Floor", walk=True)
            .add(box((-t, -t, 0), (0, y1 + t, height)), "WallW")
            .add(box((x1, -t, 0), (x1 + t, y1 + t, height)), "WallE")
            .add(box((0, -t, 0), (x1, 0, height)), "WallS")
            .add(box((0, y1, 0), (x1, y1 + t, height)), "WallN"))


def two_rooms(door, along_y=False):
    """Two 4 m rooms side by side (x < 4 and x > 4.2) joined by a doorway ``door`` wide centred
    at y = 2.1 in the 0.2 m wall between them (or the same turned by 90°)."""
    lvl = walled_floor(8.2, 4.2)
    mid = 2.1
    lvl.add(box((4.0, 0, 0), (4.2, mid - door / 2, 3)), "JambA")
    lvl.add(box((4.0, mid + door / 2, 0), (4.2, 4.2, 3)), "JambB")
    if along_y:
        turn = np.array([[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])
        lvl.shapes = [_turned(s, turn) for s in lvl.shapes]
    return lvl


def _turned(shape, m):
    from convex_tools.core.shapes import Transformed
    return Transformed(shape, m)


def reaches(result, x, y, z=0.0, tol=None):
    """Whether a reachable surface lies at (x, y) near height z."""
    tol = C if tol is None else tol
    near = ((np.abs(result.sample_x - x) <= C / 2 + 1e-9)
            & (np.abs(result.sample_y - y) <= C / 2 + 1e-9)
            & (np.abs(result.sample_z - z) <= 0.05))
    return bool(result.reachable[near].any())


def kinds(result):
    return sorted(f.kind for f in result.findings)


OFFSETS = (0.0, 0.29, 0.5, 0.77)


# --- doorways ----------------------------------------------------------------------------------
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("along_y", (False, True))
def test_doorway_of_2r_plus_a_cell_is_passable_on_every_grid_placement(offset, along_y):
    lvl = two_rooms(2 * R + C, along_y)
    start = (1.0, 2.0, 0.0) if not along_y else (-2.0, 1.0, 0.0)
    far = (7.0, 2.0) if not along_y else (-2.0, 7.0)
    res = lvl.check([start], origin=(offset * C, offset * C * 0.61))
    assert reaches(res, *far)
    assert res.findings == []


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("along_y", (False, True))
def test_doorway_narrower_than_2r_is_never_passable_and_says_how_narrow(offset, along_y):
    eps = 1e-3
    lvl = two_rooms(2 * R - eps, along_y)
    start = (1.0, 2.0, 0.0) if not along_y else (-2.0, 1.0, 0.0)
    far = (7.0, 2.0) if not along_y else (-2.0, 7.0)
    res = lvl.check([start], origin=(offset * C, offset * C * 0.61))
    assert not reaches(res, *far)
    (unreachable,) = [f for f in res.findings if f.kind == UNREACHABLE]
    # The far room eroded by r: (4 - 2r) × (4.2 - 2r), within a cell along its boundary.
    area = (4.0 - 2 * R) * (4.2 - 2 * R)
    assert abs(unreachable.area - area) <= 2 * (4.0 + 4.2) * C
    (narrow,) = [f for f in res.findings if f.kind == NARROW]
    assert (narrow.object_a, narrow.object_b) == ("JambA", "JambB")
    assert narrow.extra["width"] == pytest.approx(2 * R - eps, abs=1e-9)
    # Its point lies at the doorway.
    p = narrow.point if not along_y else np.array([narrow.point[1], -narrow.point[0], 0])
    assert abs(p[0] - 4.1) <= R + C and abs(p[1] - 2.1) <= R


def test_doorway_exactly_2r_is_passable_where_a_cell_centre_is_on_its_middle():
    # The capsule touches both jambs: touching is not blocking. The grid is placed so that a
    # column of centres runs through the doorway's middle (y = 2.1).
    lvl = two_rooms(2 * R)
    res = lvl.check([(1.0, 2.0, 0.0)], origin=(0.0, 2.1 - C / 2))
    assert reaches(res, 7.0, 2.1)


# --- steps, slopes, stairs ---------------------------------------------------------------------
@pytest.mark.parametrize("rise, passable", ((S - 0.01, True), (S + 0.01, False)))
def test_step_up_to_a_platform(rise, passable):
    lvl = walled_floor(8.0, 4.0)
    lvl.add(box((4.0, 0, 0), (8.0, 4.0, rise)), "Platform", walk=True)
    res = lvl.check([(1.0, 2.0, 0.0)])
    assert reaches(res, 6.0, 2.0, rise) == passable
    if passable:
        assert res.findings == []
    else:
        assert kinds(res) == [STEP, UNREACHABLE]
        (step,) = [f for f in res.findings if f.kind == STEP]
        assert step.extra["height"] == pytest.approx(rise, abs=1e-9)
        assert (step.object_a, step.object_b) == ("Platform", "Floor")
        assert abs(step.point[0] - 4.0) <= C


def wedge(x0, length, height, y0, y1):
    """A ramp rising from (x0, ·, 0) to (x0 + length, ·, height)."""
    pts = [(x0, y, 0.0) for y in (y0, y1)] + [(x0 + length, y, z) for y in (y0, y1)
                                               for z in (0.0, height)]
    return Hull(np.array(pts))


@pytest.mark.parametrize("degrees, passable", ((44.0, True), (46.0, False)))
def test_slope_at_the_max_slope_plus_or_minus_a_degree(degrees, passable):
    rise = 1.5
    run = rise / math.tan(math.radians(degrees))
    lvl = walled_floor(4.0 + run + 3.0, 3.0)
    lvl.add(wedge(4.0, run, rise, 0.0, 3.0), "Ramp", walk=True)
    lvl.add(box((4.0 + run, 0, 0), (7.0 + run, 3.0, rise)), "Landing", walk=True)
    res = lvl.check([(1.0, 1.5, 0.0)])
    assert reaches(res, 5.5 + run, 1.5, rise) == passable
    # The ramp itself: walkable (a surface) only below the max slope.
    on_ramp = (np.abs(res.sample_x - (4.0 + run / 2)) < C) & (np.abs(res.sample_y - 1.5) < C)
    assert bool(on_ramp.any()) == passable


def test_stairs_with_treads_shorter_than_r_are_climbed():
    rise, tread, steps = 0.2, 0.25, 6
    lvl = walled_floor(4.0 + steps * tread + 3.0, 2.0)
    for i in range(steps):
        lvl.add(box((4.0 + i * tread, 0, 0), (4.0 + steps * tread + 3.0, 2.0, (i + 1) * rise)),
                f"Step{i}", walk=True)
    res = lvl.check([(1.0, 1.0, 0.0)])
    top = steps * rise
    assert reaches(res, 4.0 + steps * tread + 1.5, 1.0, top)
    # Each tread is a surface at its height (treads are narrower than the capsule).
    for i in range(steps):
        assert reaches(res, 4.0 + (i + 0.5) * tread, 1.0, (i + 1) * rise)
    assert res.findings == []


# --- headroom, floors --------------------------------------------------------------------------
@pytest.mark.parametrize("gap, passable", ((0.01, True), (-0.01, False)))
def test_beam_at_h_plus_or_minus_eps_over_a_corridor(gap, passable):
    lvl = walled_floor(10.0, 1.5)
    lvl.add(box((5.0, 0, H + gap), (5.3, 1.5, 3.0)), "Beam")
    res = lvl.check([(1.0, 0.75, 0.0)])
    assert reaches(res, 8.0, 0.75) == passable
    if passable:
        assert res.findings == []
    else:
        assert kinds(res) == [LOW_HEADROOM, UNREACHABLE]
        (low,) = [f for f in res.findings if f.kind == LOW_HEADROOM]
        assert low.object_a == "Beam"
        assert low.extra["clearance"] == pytest.approx(H + gap, abs=1e-9)


def bridge_level():
    """A corridor along x at z = 0; a bridge deck along y at z = 3 over it, on its own."""
    lvl = walled_floor(10.0, 2.0)
    lvl.add(box((4.0, -3.0, 2.8), (6.0, 5.0, 3.0)), "Bridge", walk=True)
    return lvl


def test_bridge_over_a_corridor_gives_two_floors_per_cell():
    res = bridge_level().check([(1.0, 1.0, 0.0)])
    ix = int(np.searchsorted(res.cell_x, 5.0))
    iy = int(np.searchsorted(res.cell_y, 1.0))
    assert res.heights(ix, iy) == pytest.approx([0.0, 3.0])
    # Under the bridge there is 2.8 of headroom: the corridor goes on.
    assert reaches(res, 5.0, 1.0, 0.0) and reaches(res, 9.0, 1.0, 0.0)
    # The deck is not reached from the corridor (no stairs): one unreachable region, the
    # whole 2 × 8 deck (no railing: the agent stands out to its edges).
    (f,) = res.findings
    assert f.kind == UNREACHABLE and f.object_a == "Bridge"
    assert abs(f.area - 2 * 8) <= 2 * (2 + 8) * C
    assert f.bbox[0][2] == pytest.approx(3.0) and f.bbox[1][2] == pytest.approx(3.0)


def test_a_start_on_the_bridge_reaches_the_deck_not_the_corridor():
    res = bridge_level().check([(5.0, 4.0, 3.0)])
    assert reaches(res, 5.0, -2.0, 3.0) and not reaches(res, 1.0, 1.0, 0.0)


# --- props -------------------------------------------------------------------------------------
def test_a_prop_blocking_a_corridor_cuts_it_and_the_gaps_are_reported_narrow():
    lvl = walled_floor(10.0, 1.5)
    open_res = lvl.check([(1.0, 0.75, 0.0)])
    assert reaches(open_res, 9.0, 0.75)
    lvl.add(box((5.0, 0.25, 0), (6.0, 1.25, 1.0)), "Crate")
    res = lvl.check([(1.0, 0.75, 0.0)])
    assert not reaches(res, 9.0, 0.75)
    (narrow,) = [f for f in res.findings if f.kind == NARROW]
    assert "Crate" in (narrow.object_a, narrow.object_b)
    assert narrow.extra["width"] == pytest.approx(0.25, abs=1e-9)


def test_non_blocking_objects_do_not_block():
    lvl = walled_floor(10.0, 1.5)
    lvl.add(box((5.0, 0.0, 0), (6.0, 1.5, 1.0)), "Foliage", block=False)
    res = lvl.check([(1.0, 0.75, 0.0)])
    assert reaches(res, 9.0, 0.75) and reaches(res, 5.5, 0.75)


def test_prop_tops_are_walkable_only_when_walkable():
    lvl = walled_floor(6.0, 6.0)
    lvl.add(box((2.0, 2.0, 0), (4.0, 4.0, 0.3)), "Crate")
    res = lvl.check([(1.0, 1.0, 0.0)])
    assert not np.any(np.isclose(res.sample_z, 0.3))
    # Under the crate the floor is covered.
    inside = (np.abs(res.sample_x - 3.0) < 0.5) & (np.abs(res.sample_y - 3.0) < 0.5)
    assert not inside.any()
    lvl.walk[-1] = True
    res = lvl.check([(1.0, 1.0, 0.0)])
    assert reaches(res, 3.0, 3.0, 0.3)


# --- concave shapes ----------------------------------------------------------------------------
def mesh_floor(x1, y1, flip=False):
    v = np.array([[0, 0, 0], [x1, 0, 0], [x1, y1, 0], [0, y1, 0]], float)
    t = np.array([[0, 1, 2], [0, 2, 3]])
    return TriangleMesh(v, t[:, ::-1] if flip else t)


@pytest.mark.parametrize("door, passable", ((2 * R + C, True), (2 * R - 1e-3, False)))
def test_mesh_floor_and_compound_wall_with_a_doorway(door, passable):
    lvl = walled_floor(8.2, 4.2)
    lvl.shapes[0] = mesh_floor(8.2, 4.2)
    mid = 2.1
    wall = Compound([box((4.0, 0, 0), (4.2, mid - door / 2, 3)),
                     box((4.0, mid + door / 2, 0), (4.2, 4.2, 3))], names=["A", "B"])
    lvl.add(wall, "KitWall")
    res = lvl.check([(1.0, 2.0, 0.0)], origin=(0.013, 0.041))
    assert reaches(res, 7.0, 2.0) == passable
    if not passable:
        (narrow,) = [f for f in res.findings if f.kind == NARROW]
        assert narrow.object_a == narrow.object_b == "KitWall"
        assert narrow.extra["width"] == pytest.approx(door, abs=1e-9)


def test_back_faces_of_a_mesh_are_not_walkable_and_a_start_over_nothing_is_unplaced():
    lvl = Level().add(mesh_floor(4.0, 4.0, flip=True), "Ceiling", walk=True)
    res = lvl.check([(2.0, 2.0, 0.0)])
    assert len(res.sample_z) == 0 and res.unplaced_starts == [(2.0, 2.0, 0.0)]


def test_mesh_walls_block_like_solid_ones():
    # A wall as two vertical triangles across the floor, with no gap: the far side unreachable.
    v = np.array([[4, 0, 0], [4, 4, 0], [4, 4, 3], [4, 0, 3]], float)
    lvl = walled_floor(8.0, 4.0).add(TriangleMesh(v, [[0, 1, 2], [0, 2, 3]]), "MeshWall")
    res = lvl.check([(1.0, 2.0, 0.0)])
    assert reaches(res, 3.0, 2.0) and not reaches(res, 6.0, 2.0)


# --- areas -------------------------------------------------------------------------------------
@pytest.mark.parametrize("w, d", ((4.0, 3.0), (6.5, 2.2)))
def test_reachable_area_of_a_room_is_the_room_eroded_by_r(w, d):
    res = walled_floor(w, d).check([(w / 2, d / 2, 0.0)], origin=(0.021, 0.037))
    analytic = (w - 2 * R) * (d - 2 * R)
    perimeter = 2 * (w - 2 * R + d - 2 * R)
    assert abs(res.reachable_area - analytic) <= perimeter * C
    assert res.reachable_area == pytest.approx(res.standable_area)


def test_reachable_area_around_a_pillar_excludes_the_pillar_grown_by_r():
    w = d = 6.0
    pillar = 0.4
    lvl = walled_floor(w, d).add(translated(Cylinder(pillar, 1.5), (3.0, 3.0, 1.5)), "Pillar")
    res = lvl.check([(1.0, 1.0, 0.0)])
    analytic = (w - 2 * R) ** 2 - math.pi * (pillar + R) ** 2
    perimeter = 4 * (w - 2 * R) + 2 * math.pi * (pillar + R)
    assert abs(res.reachable_area - analytic) <= perimeter * C


def test_unreachable_regions_below_min_area_are_not_reported():
    # A closet 2 m deep behind a wall without a door: standable (2 - 2r) × (4 - 2r) = 4.29 m².
    lvl = walled_floor(7.0, 4.0)
    lvl.add(box((4.8, 0, 0), (5.0, 4.0, 3)), "Closet")
    res = lvl.check([(1.0, 1.0, 0.0)])
    (f,) = res.findings
    assert f.kind == UNREACHABLE and f.area == pytest.approx(4.29, abs=(2 + 4) * 2 * C)
    assert lvl.check([(1.0, 1.0, 0.0)], min_area=5.0).findings == []


# --- jobs, progress, the map -------------------------------------------------------------------
def test_jobs_give_the_same_result_and_progress_reaches_the_total():
    lvl = two_rooms(2 * R - 0.01)
    lvl.shapes[0] = box((0, 0, -0.3), (20.0, 20.0, 0))     # more than one tile of cells
    calls = []
    one = lvl.check([(1.0, 2.0, 0.0)], jobs=1, progress=lambda d, t: calls.append((d, t)))
    two = lvl.check([(1.0, 2.0, 0.0)], jobs=2)
    assert calls[-1][0] == calls[-1][1] > 1
    assert np.array_equal(one.sample_z, two.sample_z)
    assert np.array_equal(one.reachable, two.reachable)
    assert [f.to_dict() for f in one.findings] == [f.to_dict() for f in two.findings]


def test_an_interrupt_while_workers_measure_tiles_ends_the_check():
    # Ctrl-C (here: raised by the progress callback after the first tile) stops the workers
    # after the tiles in hand and reaches the caller, rather than leaving the pool hanging.
    lvl = two_rooms(2 * R - 0.01)
    lvl.shapes[0] = box((0, 0, -0.3), (40.0, 40.0, 0))     # several tiles of cells

    def interrupt(done, total):
        if done >= 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        lvl.check([(1.0, 2.0, 0.0)], jobs=2, progress=interrupt)
    # The module is ready for the next check (its workers' state cleared).
    again = lvl.check([(1.0, 2.0, 0.0)], jobs=2)
    assert np.array_equal(again.reachable, lvl.check([(1.0, 2.0, 0.0)], jobs=1).reachable)


def test_map_image_colours_and_start():
    lvl = two_rooms(2 * R - 0.01)
    res = lvl.check([(1.0, 2.0, 0.0)])
    image = map_image(res)
    nx, ny = res.shape
    assert image.shape == (ny, nx, 3) and image.dtype == np.uint8
    r, c = image_pixel(res, 2.0, 1.0)
    assert tuple(image[r, c]) == COLOURS["reachable"]
    r, c = image_pixel(res, 6.0, 1.0)
    assert tuple(image[r, c]) == COLOURS["unreachable"]
    r, c = image_pixel(res, 4.1, 0.5)           # under the wall: covered floor
    assert tuple(image[r, c]) == COLOURS["blocked"]
    r, c = image_pixel(res, 1.0, 2.0)
    assert tuple(image[r, c]) == COLOURS["start"]
    big = map_image(res, cell_pixels=3)
    assert big.shape == (3 * ny, 3 * nx, 3)
    small = map_image(res, max_size=20)
    assert max(small.shape[:2]) <= 20


# --- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kw, message", (
    ({"radius": -0.35}, "radius"), ({"radius": 0.0}, "radius"), ({"height": 0.0}, "height"),
    ({"max_step": -0.1}, "max_step"), ({"max_slope": 90.0}, "max_slope"),
    ({"max_slope": float("nan")}, "max_slope"), ({"cell": 0.0}, "cell"),
    ({"height": 1.0}, "height"),
))
def test_bad_agent_is_a_value_error(kw, message):
    with pytest.raises(ValueError, match=message):
        Agent(**kw)


def test_bad_arguments_are_value_errors():
    lvl = walled_floor(4.0, 4.0)
    args = (lvl.shapes, lvl.names, lvl.walk, lvl.block)
    with pytest.raises(ValueError, match="names"):
        check_traversal(lvl.shapes, lvl.names[:-1], lvl.walk, lvl.block)
    with pytest.raises(ValueError, match="walkable"):
        check_traversal(lvl.shapes, lvl.names, lvl.walk[:-1], lvl.block)
    with pytest.raises(ValueError, match="min_area"):
        check_traversal(*args, min_area=-1.0)
    with pytest.raises(ValueError, match="jobs"):
        check_traversal(*args, jobs=0)
    with pytest.raises(ValueError, match="starts"):
        check_traversal(*args, starts=[(0.0, float("nan"), 0.0)])
    with pytest.raises(ValueError, match="agent"):
        check_traversal(*args, agent=0.35)
    with pytest.raises(ValueError, match="walkable"):
        check_traversal(lvl.shapes, lvl.names, False, True)
    with pytest.raises(ValueError, match="bounds"):
        check_traversal(*args, bounds=((1, 1), (0, 0)))
    with pytest.raises(ValueError, match="cells"):
        check_traversal(*args, agent=Agent(cell=1e-4))
    with pytest.raises(ValueError):
        check_traversal([object()], ["x"], True, True)


def test_curved_walkable_tops_and_spheres():
    # A walkable sphere's top is a surface within the max slope only near its top.
    lvl = Level().add(box((0, 0, -0.3), (4, 4, 0)), "Floor", walk=True)
    lvl.add(translated(Sphere(1.0), (2.0, 2.0, 0.5)), "Dome", walk=True)
    res = lvl.check([(0.5, 0.5, 0.0)])
    on_top = (np.abs(res.sample_x - 2.0) < C) & (np.abs(res.sample_y - 2.0) < C)
    assert res.sample_z[on_top].max() == pytest.approx(1.5, abs=0.01)
    # The dome is a surface where it is gentle (30° at 0.5 from its axis) and none where it is
    # steep (64° at 0.9); its facets (FACET_DIRECTIONS) blur the 45° line by a few degrees.
    ring = np.hypot(res.sample_x - 2.0, res.sample_y - 2.0)
    dome = res.sample_z > 0.1
    assert np.any((np.abs(ring - 0.5) < 0.05) & dome)
    assert not np.any((ring > 0.9) & dome)


def test_placed_shapes_as_the_blender_layer_passes_them():
    from convex_tools.core.placement import Placed
    lvl = walled_floor(4.0, 4.0)
    m = np.eye(4)
    m[:3, 3] = (2.0, 2.0, 0.5)
    lvl.add(Placed(Box((0.5, 0.5, 0.5)), m), "Crate")
    res = lvl.check([(0.5, 0.5, 0.0)])
    # The crate covers the floor under it, and the capsule keeps r from it.
    near = (np.abs(res.sample_x - 2.0) < 0.5 + R - C) & (np.abs(res.sample_y - 2.0) < 0.5 + R - C)
    assert not res.standable[near].any() and res.reachable.any()


def test_surface_heights_on_a_rotated_box_are_its_top_plane():
    from convex_tools.core import posed
    angle = math.radians(20.0)
    rot = np.array([[math.cos(angle), 0, -math.sin(angle)], [0, 1, 0],
                    [math.sin(angle), 0, math.cos(angle)]])
    ramp = posed(Box((2.0, 1.0, 0.1)), rotation=rot, translation=(3.0, 1.5, 0.5))
    lvl = Level().add(ramp, "Ramp", walk=True)
    res = lvl.check([])
    # The top face: normal R·(0, 0, 1), through the centre + 0.1 along it.
    n = rot @ np.array([0.0, 0.0, 1.0])
    p0 = np.array([3.0, 1.5, 0.5]) + 0.1 * n
    expected = p0[2] - (n[0] * (res.sample_x - p0[0]) + n[1] * (res.sample_y - p0[1])) / n[2]
    assert len(res.sample_z) > 100
    # (Away from the top's edges, where the line meets the end faces instead.)
    inner = np.abs(res.sample_x - 3.0) < 1.5
    assert np.allclose(res.sample_z[inner], expected[inner], atol=1e-12)


def test_a_step_well_above_max_step_is_the_reason_though_the_capsule_keeps_off_its_edge():
    # A 0.6 m platform: the capsule's bottom meets its edge 0.29 m away (√(r² − (r + s −
    # 0.6)²)), so no standable floor cell neighbours a platform cell; the reason is still the
    # step, 0.6 high.
    lvl = walled_floor(8.0, 4.0)
    lvl.add(box((4.0, 0, 0), (8.0, 4.0, 0.6)), "Platform", walk=True)
    res = lvl.check([(1.0, 2.0, 0.0)])
    assert kinds(res) == [STEP, UNREACHABLE]
    (step,) = [f for f in res.findings if f.kind == STEP]
    assert step.extra["height"] == pytest.approx(0.6, abs=1e-9)
    assert step.object_a == "Platform"


def test_a_wall_taller_than_the_agent_is_no_step():
    lvl = walled_floor(8.0, 4.0)
    lvl.add(box((4.0, 0, 0), (8.0, 4.0, H + 0.2)), "Roof", walk=True)
    res = lvl.check([(1.0, 2.0, 0.0)])
    assert kinds(res) == [UNREACHABLE]


def test_shapes_the_batch_has_no_family_for_are_measured_by_the_single_query():
    # A rounded crate as a Minkowski sum (box ⊕ sphere, 1.3 across) fills a 1.5 m corridor up
    # to 0.1 from each wall: blocked; its surface heights come from its support points.
    from convex_tools.core.shapes import MinkowskiSum
    lvl = walled_floor(10.0, 1.5)
    crate = translated(MinkowskiSum(Box((0.5, 0.5, 0.4)), Sphere(0.15)), (5.0, 0.75, 0.55))
    lvl.add(crate, "RoundCrate", walk=True)
    res = lvl.check([(1.0, 0.75, 0.0)])
    assert not reaches(res, 9.0, 0.75)
    top = (np.abs(res.sample_x - 5.0) < 0.3) & (np.abs(res.sample_y - 0.75) < 0.3)
    # (Within the facets' sagitta: 0.5 % of its size, FACET_DIRECTIONS.)
    assert res.sample_z[top] == pytest.approx(1.1, abs=0.005 * 1.3)


@pytest.mark.parametrize("flat", ("rectangle", "plane hull"))
def test_flat_floors_are_walkable_from_either_side(flat):
    from convex_tools.core.shapes import Rectangle
    if flat == "rectangle":
        floor = translated(Rectangle((2.0, 1.5)), (2.0, 1.5, 0.0))
    else:   # a Blender plane as a hull: four coplanar points, wound clockwise seen from above
        floor = Hull(np.array([[0, 0, 0], [0, 3, 0], [4, 3, 0], [4, 0, 0]], float))
    res = Level().add(floor, "Plane", walk=True).check([(2.0, 1.5, 0.0)])
    # No walls: the agent stands out to the edges, 4 × 3 within a cell along them.
    assert abs(res.reachable_area - 12.0) <= 2 * (4 + 3) * C
    assert np.all(res.sample_z == 0.0)


def test_capsule_and_link_hull_entries_measure_as_the_single_query_does(rng):
    # The batched entries (a raised capsule: a segment with margin r; the hull of two: a
    # parallelogram with margin r) against pieces give the distances the single query gives
    # for the same shapes (Capsule, ConvexHullOf of two capsules).
    from convex_tools.core import queries
    from convex_tools.core.traversal import _against_pieces, _Context, _entry_shape, _Pieces
    pieces = [translated(Box((0.3, 0.2, 0.5)), (0.4, 0.1, 1.0)),
              translated(Sphere(0.25), (-0.3, 0.2, 1.2)),
              translated(Cylinder(0.05, 1.0), (0.05, -0.4, 1.0))]
    p = _Pieces(pieces)
    ctx = _Context(p, np.ones(3, bool), np.ones(3, bool), AGENT, None)
    k = 60
    centres = np.column_stack((rng.uniform(-0.6, 0.6, k), rng.uniform(-0.6, 0.6, k),
                               rng.uniform(0.6, 1.6, k)))
    half = np.column_stack((rng.uniform(-C, C, k), rng.uniform(-C, C, k),
                            rng.uniform(-S, S, k))) / 2
    half[:20] = 0.0                                       # capsules
    which = rng.integers(0, 3, k)
    blocked, distance, _, _ = _against_pieces(ctx, centres, half, which, 10.0)
    assert 10 < blocked.sum() < k - 10                     # both verdicts are tested
    for row in range(k):
        exact = queries.signed_distance(_entry_shape(ctx, centres[row], half[row]),
                                        pieces[which[row]])
        assert blocked[row] == (exact < -1e-6)
        if not blocked[row]:
            assert distance[row] == pytest.approx(exact, abs=1e-7)


def test_summary_is_plain_json():
    import json
    res = walled_floor(4.0, 3.0).check([(2.0, 1.5, 0.0), (50.0, 50.0, 0.0)])
    summary = json.loads(json.dumps(res.summary()))
    assert summary["agent"]["radius"] == R and summary["cells"] == list(res.shape)
    assert summary["reachable_area"] == pytest.approx(res.reachable_area)
    assert len(summary["starts"]) == 1 and summary["unplaced_starts"] == [[50.0, 50.0, 0.0]]


@settings(max_examples=12, deadline=None)
@given(ox=st.floats(0.0, 1.0), oy=st.floats(0.0, 1.0), extra=st.floats(0.0, 1.0),
       along_y=st.booleans())
def test_any_doorway_at_least_2r_plus_c_passes_and_any_under_2r_does_not(ox, oy, extra,
                                                                         along_y):
    start = (1.0, 2.0, 0.0) if not along_y else (-2.0, 1.0, 0.0)
    far = (7.0, 2.0) if not along_y else (-2.0, 7.0)
    origin = (ox * C, oy * C)
    wide = two_rooms(2 * R + C * (1.0 + extra), along_y).check([start], origin=origin)
    assert reaches(wide, *far)
    narrow = two_rooms(2 * R - 1e-4 - 0.3 * extra, along_y).check([start], origin=origin)
    assert not reaches(narrow, *far)
