"""Every query on every pairing of concave and convex shapes (compound–convex, convex–compound,
compound–compound, mesh–convex, convex–mesh, mesh–compound, compound–mesh): the answer is the
convex query's over the part pairs, swapping the arguments swaps the parts and the points and
flips the normals, and each result keeps the contract of API.md on the parts it names."""

import importlib

import numpy as np
import pytest

from convex_tools.core import (Compound, Point, TriangleMesh, Transformed, contact_manifold,
                               distance, gjk, intersect, penetration, ray_cast, sweep, translated)
from convex_tools.core.penetration import penetration as convex_penetration
from convex_tools.core.penetration import signed_distance as convex_signed_distance

from geometry_helpers import random_rotation
from test_compound import random_part
from test_trimesh import quad_grid

# The modules, not the public functions of the same names that convex_tools.core exports.
convex_rays = importlib.import_module("convex_tools.core.raycast")
convex_sweeps = importlib.import_module("convex_tools.core.sweep")

PAIRINGS = [("compound", "convex"), ("convex", "compound"), ("compound", "compound"),
            ("mesh", "convex"), ("convex", "mesh"), ("mesh", "compound"), ("compound", "mesh")]
SEEDS = range(4)
# Witness points lie on their parts to this (GJK's tolerance on curved parts, rounding on flat).
ON_PART = 1e-7


def hills(rng):
    """Gentle hills of 200 triangles, ±0.4 high over [-4, 4]²."""
    vertices, triangles = quad_grid((-4, -4, 0), (8, 0, 0), (0, 8, 0), 10, 10)
    phase = rng.uniform(0.0, 3.0)
    vertices[:, 2] = 0.4 * np.sin(1.1 * vertices[:, 0] + phase) * np.cos(0.9 * vertices[:, 1])
    return TriangleMesh(vertices, triangles)


def make(kind, rng, centre):
    if kind == "convex":
        return translated(random_part(rng, 0.0), centre)
    if kind == "compound":
        return Compound([translated(random_part(rng, 0.8), centre)
                         for _ in range(int(rng.integers(1, 5)))])
    return hills(rng)


def scene(pairing, seed, apart):
    """The two shapes of ``pairing``: overlapping most of the time, or ``apart`` (3 above the
    hills, or 6 along x beside each other; a compound reaches at most 2.2 from its centre)."""
    rng = np.random.default_rng(1000 * PAIRINGS.index(pairing) + seed)
    centre = np.array([*rng.uniform(-2.0, 2.0, 2), 0.1])
    kind_a, kind_b = pairing
    if "mesh" in pairing:
        shift = np.array((0.0, 0.0, 3.0 if apart else 0.0))
    else:
        shift = np.array((6.0, 0.0, 0.0)) if apart else rng.uniform(-0.3, 0.3, 3)
    # The shift moves B, or the shape that is not the mesh.
    a = make(kind_a, rng, centre + (shift if kind_b == "mesh" else 0.0))
    b = make(kind_b, rng, centre + (0.0 if kind_b == "mesh" else shift))
    return a, b


def parts(shape):
    """(part id as results give it, the part as a convex shape) of any shape."""
    if isinstance(shape, TriangleMesh):
        return [(shape.part_id(i), shape.part(i)) for i in range(len(shape))]
    if isinstance(shape, Compound):
        return list(enumerate(shape.parts))
    return [(None, shape)]


def part(shape, part_id):
    return dict(parts(shape))[part_id]


def off(shape, point):
    return gjk.distance(shape, translated(Point(), point)).distance


def moved(shape, offset):
    m = np.eye(4)
    m[:3, 3] = offset
    return Transformed(shape, m)


CASES = [(p, s) for p in PAIRINGS for s in SEEDS]
IDS = [f"{a}-{b}-{s}" for (a, b), s in CASES]


@pytest.mark.parametrize("pairing,seed", CASES, ids=IDS)
@pytest.mark.parametrize("apart", [False, True], ids=["overlapping", "apart"])
def test_distance_is_the_closest_part_pair_and_symmetric(pairing, seed, apart):
    a, b = scene(pairing, seed, apart)
    gaps = {(i, j): gjk.distance(p, q).distance for i, p in parts(a) for j, q in parts(b)}
    brute = min(gaps.values())
    ab, ba = distance(a, b), distance(b, a)
    assert ab.distance == pytest.approx(brute, abs=1e-9)
    assert ba.distance == pytest.approx(ab.distance, abs=1e-12)
    assert ab.intersecting == ba.intersecting == (brute == 0.0)
    assert off(part(a, ab.part_a), ab.point_a) <= ON_PART
    assert off(part(b, ab.part_b), ab.point_b) <= ON_PART
    if not ab.intersecting:
        # Apart, each order names a closest pair (ties only on a mesh's shared edges) and the
        # same points, swapped.
        assert gaps[ab.part_a, ab.part_b] == pytest.approx(brute, abs=1e-9)
        assert gaps[ba.part_b, ba.part_a] == pytest.approx(brute, abs=1e-9)
        assert ba.point_a == pytest.approx(ab.point_b, abs=1e-9)
        assert ba.point_b == pytest.approx(ab.point_a, abs=1e-9)
        assert np.linalg.norm(ab.point_a - ab.point_b) == pytest.approx(ab.distance, abs=1e-9)
    for method in ("gjk", "mpr"):
        assert intersect(a, b, method) == intersect(b, a, method) == ab.intersecting


@pytest.mark.parametrize("pairing,seed", CASES, ids=IDS)
@pytest.mark.parametrize("method", ["epa", "mpr", "hybrid"])
def test_penetration_keeps_the_contract_on_the_parts_it_names(pairing, seed, method):
    a, b = scene(pairing, seed, apart=False)
    for first, second in ((a, b), (b, a)):
        c = penetration(first, second, method)
        assert (c is None) == (not intersect(first, second))
        if c is None:
            continue
        p, q = part(first, c.part_a), part(second, c.part_b)
        assert c.depth >= 0.0
        assert np.linalg.norm(c.normal) == pytest.approx(1.0, abs=1e-12)
        assert c.point_a - c.point_b == pytest.approx(c.depth * c.normal, abs=1e-9)
        assert off(p, c.point_a) <= 1e-6 and off(q, c.point_b) <= 1e-6
        # Moving the named part of A back by the depth vector leaves it touching B's part.
        assert gjk.distance(moved(p, -c.depth * c.normal), q).distance <= 1e-6
    if method == "mpr":
        return      # MPR's estimate follows the centres' ray, which depends on the order
    ab, ba = penetration(a, b, method), penetration(b, a, method)
    if ab is None:
        assert ba is None
        return
    # Depths agree to EPA's 1e-9; on curved parts its normal and witnesses to ~1e-7.
    assert ba.depth == pytest.approx(ab.depth, abs=1e-9)
    assert ba.normal == pytest.approx(-ab.normal, abs=1e-6)
    assert (ba.part_a, ba.part_b) == (ab.part_b, ab.part_a)
    assert ba.point_a == pytest.approx(ab.point_b, abs=1e-6)
    assert ba.point_b == pytest.approx(ab.point_a, abs=1e-6)


@pytest.mark.parametrize("pairing,seed", [c for c in CASES if "mesh" not in c[0]])
def test_without_a_mesh_penetration_is_the_deepest_over_the_part_pairs(pairing, seed):
    # (A mesh's contacts are one-sided, out of its front faces: test_trimesh.)

    a, b = scene(pairing, seed, apart=False)
    depths = [c.depth for _, p in parts(a) for _, q in parts(b)
              for c in [convex_penetration(p, q)] if c is not None]
    c = penetration(a, b)
    assert (c is None) == (not depths)
    if c is not None:
        assert c.depth == pytest.approx(max(depths), abs=1e-9)
        moved_a = moved(part(a, c.part_a), -c.depth * c.normal)
        assert convex_signed_distance(moved_a, part(b, c.part_b)) == pytest.approx(0.0,
                                                                                   abs=1e-9)


@pytest.mark.parametrize("pairing,seed", CASES, ids=IDS)
def test_manifold_seen_from_either_side_flips_its_normal_and_swaps_its_parts(pairing, seed):
    a, b = scene(pairing, seed, apart=False)
    ab, ba = contact_manifold(a, b), contact_manifold(b, a)
    assert (ab is None) == (ba is None) == (not intersect(a, b))
    if ab is None:
        return
    for m in (ab, ba):
        assert np.linalg.norm(m.normal) == pytest.approx(1.0, abs=1e-12)
        assert 1 <= len(m) <= 4 and np.all(m.depths >= 0.0)
        assert len(m.parts) == len(m)
    assert ba.normal == pytest.approx(-ab.normal, abs=1e-6)
    assert (ba.part_a, ba.part_b) == (ab.part_b, ab.part_a)
    assert sorted(ba.parts, key=repr) == sorted(((q, p) for p, q in ab.parts), key=repr)
    assert penetration(a, b).normal == pytest.approx(ab.normal, abs=1e-6)


def motions(pairing, seed):
    """Translations of A and B that bring the "apart" scene together: the shape above the
    hills moves down, a shape beside the other moves along x toward it; plus some drift."""
    rng = np.random.default_rng(seed)
    move_a, move_b = rng.uniform(-0.3, 0.3, 3), rng.uniform(-0.3, 0.3, 3)
    if pairing[0] == "mesh":
        move_b = move_b + (0.0, 0.0, -4.0)
    elif pairing[1] == "mesh":
        move_a = move_a + (0.0, 0.0, -4.0)
    else:
        move_a = move_a + (6.0, 0.0, 0.0)
    return move_a, move_b


@pytest.mark.parametrize("pairing,seed", CASES, ids=IDS)
def test_sweep_is_the_earliest_part_pair_and_symmetric(pairing, seed):
    a, b = scene(pairing, seed, apart=True)
    move_a, move_b = motions(pairing, seed)
    times = {(i, j): h.t for i, p in parts(a) for j, q in parts(b)
             for h in [convex_sweeps.sweep(p, q, move_a, move_b)] if h is not None}
    ab, ba = sweep(a, b, move_a, move_b), sweep(b, a, move_b, move_a)
    assert (ab is None) == (ba is None) == (not times)
    if ab is None:
        return
    assert 0.0 <= ab.t <= 1.0
    assert ab.t == pytest.approx(min(times.values()), abs=1e-9)
    assert ba.t == pytest.approx(ab.t, abs=1e-9)
    # Each names a pair that meets first (two triangles tie where it lands on their edge).
    assert times[ab.part_a, ab.part_b] == pytest.approx(ab.t, abs=1e-9)
    assert times[ba.part_b, ba.part_a] == pytest.approx(ab.t, abs=1e-9)
    if ab.t > 0.0:
        assert np.linalg.norm(ab.normal) == pytest.approx(1.0, abs=1e-9)
        assert ba.normal == pytest.approx(-ab.normal, abs=1e-6)
        # At the time of contact the named parts, moved so far, touch.
        p = moved(part(a, ab.part_a), ab.t * np.asarray(move_a))
        q = moved(part(b, ab.part_b), ab.t * np.asarray(move_b))
        assert gjk.distance(p, q).distance <= 1e-6


@pytest.mark.parametrize("kind", ["compound", "mesh"])
@pytest.mark.parametrize("seed", range(6))
def test_a_ray_hits_the_nearest_part_and_names_it(kind, seed):
    rng = np.random.default_rng(seed)
    shape = make(kind, rng, np.array((0.0, 0.0, 0.3)))
    origin = np.array((*rng.uniform(-1.5, 1.5, 2), 3.0))
    direction = np.array((*rng.normal(0.0, 0.3, 2), -1.0))
    hits = [(h.t, pid) for pid, p in parts(shape)
            for h in [convex_rays.ray_cast(p, origin, direction)] if h is not None]
    hit = ray_cast(shape, origin, direction)
    assert (hit is None) == (not hits)
    if hit is None:
        return
    assert hit.t == pytest.approx(min(hits)[0], abs=1e-9)
    assert off(part(shape, hit.part), hit.point) <= ON_PART
    assert hit.point == pytest.approx(origin + hit.t * direction)
    assert np.linalg.norm(hit.normal) == pytest.approx(1.0, abs=1e-9)
    assert float(np.dot(hit.normal, direction)) < 0.0          # it faces the ray


def test_a_posed_scene_gives_the_same_answers_moved():
    # Rigid motion of both shapes moves every answer with them (parts unchanged).
    rng = np.random.default_rng(7)
    a, b = scene(("compound", "mesh"), 0, apart=False)
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = random_rotation(rng), rng.uniform(-5, 5, 3)
    before, after = penetration(a, b), penetration(a.transformed(m), b.transformed(m))
    assert after.depth == pytest.approx(before.depth, abs=1e-9)
    assert after.normal == pytest.approx(m[:3, :3] @ before.normal, abs=1e-9)
    assert (after.part_a, after.part_b) == (before.part_a, before.part_b)


def test_the_scenes_are_not_vacuous():
    # Most overlap, every "apart" one is apart, and most sweeps of those meet.
    assert sum(intersect(*scene(p, s, apart=False)) for p, s in CASES) >= 0.8 * len(CASES)
    assert not any(intersect(*scene(p, s, apart=True)) for p, s in CASES)
    met = sum(sweep(*scene(p, s, apart=True), *motions(p, s)) is not None for p, s in CASES)
    assert met >= 0.8 * len(CASES)
