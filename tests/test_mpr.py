"""Minkowski Portal Refinement: intersection test and two-pass depth heuristic (seed 001 §2.4)."""

import math

import numpy as np
import pytest

from convex_tools import core
from convex_tools.core import depth_polish, gjk, mpr
from convex_tools.core.hull import Hull
from convex_tools.core.penetration import penetration
from convex_tools.core.results import Status
from convex_tools.core.shapes import (Box, Capsule, Cone, Cylinder, Ellipsoid, RoundBox, Sphere,
                                      posed, translated)

from geometry_helpers import rotation


def random_rotation(rng):
    return rotation(rng.normal(size=3), rng.uniform(0, math.pi))


SHAPES = {
    "box": Box((1, 1, 1)),
    "ellipsoid": Ellipsoid((0.5, 1.0, 0.75)),
    "round_box": RoundBox((1, 1, 1), 0.5),
    "cone": Cone(1.0, 1.0),
    "cylinder": Cylinder(0.6, 0.8),
    "capsule": Capsule(0.4, 0.7),
    "hull": Hull(np.random.default_rng(3).normal(size=(30, 3))),
}


def separation(a, b):
    """A certified lower bound on the distance of a and b: GJK's distance when it converged,
    else its lower bound (GJK's v stalls on some touching curved pairs around 1e-7)."""
    run = gjk.run(a.support_xyz, b.support_xyz, None, gjk.DISTANCE)
    if run.status in (Status.CONVERGED, Status.INTERSECTING, Status.TOUCHING):
        return run.distance
    return run.lower_bound


def h(a, b, n):
    """Support value of A − B along n."""
    return float(np.dot(a.support(n) - b.support(-np.asarray(n)), n))


# --- intersection -----------------------------------------------------------------------------

def test_intersect_overlapping_and_apart():
    assert mpr.intersect(Box((1, 1, 1)), translated(Box((1, 1, 1)), (1.9, 0.5, -0.3)))
    assert mpr.intersect(Box((1, 1, 1)), translated(Box((1, 1, 1)), (2.1, 0.5, -0.3))) is False
    assert mpr.intersect(Sphere(1), translated(Sphere(1), (1.99, 0, 0)))
    assert mpr.intersect(Sphere(1), translated(Sphere(1), (2.01, 0, 0))) is False


def test_intersect_counts_touching_as_intersecting():
    # As gjk.intersect does: touching shapes intersect. MPR leaves a contact this close to its
    # boundary to GJK (``INTERSECT_MARGIN``), and the public query says so.
    for offset in ((2.0, 0.3, 0.1), (2.0, 2.0, 2.0)):
        other = translated(Box((1, 1, 1)), offset)
        assert mpr.intersect(Box((1, 1, 1)), other) is None
        assert core.intersect(Box((1, 1, 1)), other, "mpr")


def test_intersect_decides_clear_overlaps_and_gaps_itself():
    assert mpr.intersect(Box((1, 1, 1)), translated(Box((1, 1, 1)), (1.9, 0.3, 0.1))) is True
    assert mpr.intersect(Box((1, 1, 1)), translated(Box((1, 1, 1)), (2.1, 0.3, 0.1))) is False


def test_a_small_flat_shape_nearly_touching_a_large_one_is_apart():
    # A rectangle 1e-5 the size of another, 1e-11 apart: C is 1e-5 thin, and the portal's plane
    # rounds by about that much; MPR called the pair intersecting (found by Hypothesis,
    # test_extreme_ratios), GJK decides it now, exactly relative to the small rectangle.
    import test_extreme_ratios as extreme

    case = extreme.ExtremeCase("rectangle", "rectangle", -5, 0, "nearly touching", 144)
    gap = core.distance(case.a, case.b).distance
    assert gap > case.touch
    assert not core.intersect(case.a, case.b, "mpr")
    assert not core.intersect(case.b, case.a, "mpr")


def test_a_depth_near_touching_is_left_to_epa():
    # A segment beside a flat cylinder 1e6 times larger, 9e-11 apart: MPR's first pass "hit"
    # within its portal's rounding and gave a depth (found by Hypothesis, test_extreme_ratios).
    # So near C's boundary its estimate stands aside, and EPA (from GJK's verdict) answers.
    import test_extreme_ratios as extreme

    case = extreme.ExtremeCase("segment", "flat cylinder", -6, 0, "nearly touching", 32)
    assert core.distance(case.a, case.b).distance > case.touch
    assert penetration(case.a, case.b, "mpr") is None
    est = mpr.estimate(case.a, case.b)
    assert est is None or est.status is Status.FAILED


def test_intersect_with_coincident_centres():
    assert mpr.intersect(Sphere(1), Box((0.1, 0.1, 0.1)))


def test_undecided_mpr_intersect_is_answered_by_gjk(monkeypatch):
    # mpr.intersect says None when its portal search cannot decide; the public query (the one
    # place that chooses a method) then asks GJK.
    monkeypatch.setattr(mpr, "intersect", lambda a, b: None)
    assert core.intersect(Box((1, 1, 1)), translated(Box((1, 1, 1)), (1.9, 0.5, -0.3)), "mpr")
    assert not core.intersect(Box((1, 1, 1)), translated(Box((1, 1, 1)), (2.1, 0.5, -0.3)),
                              "mpr")


@pytest.mark.parametrize("pair", [("box", "box"), ("ellipsoid", "ellipsoid"), ("box", "cone"),
                                  ("round_box", "cylinder"), ("hull", "capsule")])
def test_intersect_agrees_with_gjk(pair):
    rng = np.random.default_rng(sum(map(ord, "".join(pair))))
    a0, b0 = SHAPES[pair[0]], SHAPES[pair[1]]
    for _ in range(150):
        a = posed(a0, random_rotation(rng), rng.uniform(-1.5, 1.5, 3))
        b = posed(b0, random_rotation(rng), rng.uniform(-1.5, 1.5, 3))
        d = gjk.distance(a, b)
        if d.intersecting:
            # Clear overlaps only: the exact boundary is a matter of tolerance.
            c = penetration(a, b)
            if c is None or c.depth < 1e-6:
                continue
        elif d.distance < 1e-6:
            continue
        assert mpr.intersect(a, b) == d.intersecting


def test_intersect_through_the_public_front_door():
    # core.intersect(method="mpr") reaches MPR (queries.py dispatches on the method).
    a, b = Box((1, 1, 1)), translated(Sphere(0.5), (1.4, 0, 0))
    assert core.intersect(a, b, method="mpr")
    assert not core.intersect(a, translated(Sphere(0.5), (1.6, 0, 0)), method="mpr")


# --- depth heuristic ------------------------------------------------------------------------------

def test_spheres_are_exact():
    # The centre ray runs through the first support point: exact (seed 001 §2.4.1).
    c = mpr.penetration(Sphere(1.0), translated(Sphere(0.5), (0.6, 0.8, 0.0)))
    assert c.depth == pytest.approx(0.5, abs=1e-12)
    np.testing.assert_allclose(c.normal, (0.6, 0.8, 0.0), atol=1e-12)
    np.testing.assert_allclose(c.point_a - c.point_b, c.depth * c.normal, atol=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_spheres_agree_with_epa(seed):
    rng = np.random.default_rng(seed)
    ra, rb = rng.uniform(0.2, 2, 2)
    d = rng.normal(size=3)
    centre = rng.uniform(-1, 1, 3)
    a = translated(Sphere(ra), centre)
    b = translated(Sphere(rb), centre + rng.uniform(0.05, 0.95) * (ra + rb) * d / np.linalg.norm(d))
    m, e = penetration(a, b, "mpr"), penetration(a, b, "epa")
    assert m.depth == pytest.approx(e.depth, abs=1e-9)
    np.testing.assert_allclose(m.normal, e.normal, atol=1e-9)


def test_face_centred_boxes_are_exact():
    c = mpr.penetration(Box((1, 1, 1)), translated(Box((0.5, 0.5, 0.5)), (0.0, 0.0, 1.3)))
    assert c.depth == pytest.approx(0.2, abs=1e-12)
    np.testing.assert_allclose(c.normal, (0, 0, 1), atol=1e-12)


def test_centred_shapes():
    # v0 is the origin itself: any ray leaves A − B; for concentric spheres all are minimal.
    c = mpr.penetration(Sphere(1.0), Sphere(0.5))
    assert c.depth == pytest.approx(1.5, abs=1e-12)


def test_apart_is_none():
    assert mpr.penetration(Box((1, 1, 1)), translated(Box((1, 1, 1)), (0, 2.5, 0))) is None


@pytest.mark.parametrize("pair", [("box", "box"), ("ellipsoid", "ellipsoid"), ("box", "ellipsoid"),
                                  ("round_box", "round_box"), ("hull", "hull"), ("cone", "cone"),
                                  ("cylinder", "capsule")])
def test_depth_is_a_boundary_point_no_shallower_than_epa(pair):
    """MPR answers with a boundary point of A − B (translating A by it leaves the shapes touching)
    that is never shallower than EPA's minimal depth."""
    rng = np.random.default_rng(7 + len(pair[0]) * 31 + len(pair[1]))
    a0, b0 = SHAPES[pair[0]], SHAPES[pair[1]]
    checked = 0
    for _ in range(60):
        a = posed(a0, random_rotation(rng), rng.uniform(-1, 1, 3))
        b = posed(b0, random_rotation(rng), rng.uniform(-1, 1, 3))
        c = mpr.penetration(a, b)
        if c is None:
            continue
        checked += 1
        n = c.normal
        assert np.linalg.norm(n) == pytest.approx(1.0)
        np.testing.assert_allclose(c.point_a - c.point_b, c.depth * n, atol=1e-12)
        moved = translated(a, -c.depth * n)
        rest = penetration(moved, b)
        assert rest is None or rest.depth <= 1e-7
        assert separation(moved, b) <= 1e-7
        e = penetration(a, b, "epa")
        # EPA's depth on curved C is exact to POLISH_TOLERANCE of C's size (under 5 here); an
        # MPR answer that is a support point on its ray can come closer to the true minimum.
        assert c.depth >= e.depth - 5 * depth_polish.POLISH_TOLERANCE
        # Never the wrong way out: pushing A the other way is not shorter.
        assert h(a, b, -n) >= c.depth - 1e-9
    assert checked > 10


def test_shallow_round_boxes_whose_portal_search_cycles_from_the_origin():
    # Found by the 100k benchmark: the origin lies only 0.07 inside A − B, and pass 2's portal
    # search from it cycles; it restarts further back on the same ray.
    v = [0.09495416602372819, 0.3877696116386036, -0.916852460674227, 0.8906417599465004,
         -0.44450818076822096, -0.09575872111472178, -0.44468074142483244, -0.8074943996832258,
         -0.38757171295914805, 1.3117660918094045, -1.8301456743734188, 0.7591114477051022,
         -0.5813665002985107, 0.44129111945826777, -0.6835752630237073, -0.7642196895621494,
         -0.007813667400944357, 0.6449086855418211, 0.2792512460423299, 0.8973299808259034,
         0.34178596679031426, -0.9480047055714076, 0.8440942909239526, 1.567231144861843]
    a = posed(RoundBox((1, 1, 1), 0.5), np.reshape(v[:9], (3, 3)), v[9:12])
    b = posed(RoundBox((1, 1, 1), 0.5), np.reshape(v[12:21], (3, 3)), v[21:24])
    c = mpr.penetration(a, b)
    assert c.status is Status.CONVERGED
    assert c.depth == pytest.approx(penetration(a, b).depth, abs=1e-6)


def test_status_and_method():
    c = mpr.penetration(Box((1, 1, 1)), translated(Ellipsoid((0.5, 1, 0.75)), (1.2, 0.1, 0.2)))
    assert c.method == "mpr"
    assert c.status is Status.CONVERGED
    assert c.support_calls > 0


# --- pass 2: secant steps on smooth parts, rulings on edge-swept parts ------------------------

def _exit_pass(a, b, r, secant, edges=mpr.NO_EDGES):
    return mpr._portal_pass(a.support_xyz, b.support_xyz, (0.0, 0.0, 0.0), tuple(r),
                            tolerance=mpr.DEPTH_TOLERANCE, secant=secant, edges=edges)


def _bisect(f, lo, hi, steps=200):
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if f(lo) * f(mid) <= 0.0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def test_secant_steps_reach_the_exit_point_of_a_smooth_difference():
    # A − B for two ellipsoids centred at the origin (B = −B) is their Minkowski sum; along the
    # ray the exit point t r satisfies the implicit equation of that smooth convex body, which
    # the support point returned must meet on the ray.
    a = posed(Ellipsoid((0.5, 1.0, 0.75)), rotation((1, 2, 3), 0.7))
    b = posed(Ellipsoid((0.9, 0.4, 0.6)), rotation((-2, 1, 0.5), 1.1))
    rng = np.random.default_rng(5)
    for _ in range(10):
        r = rng.normal(size=3)
        r /= np.linalg.norm(r)
        plain, fast = _exit_pass(a, b, r, False), _exit_pass(a, b, r, True)
        assert plain.status is fast.status is Status.CONVERGED
        t = h(a, b, r)      # an upper bound on the exit distance, for the scale
        w = np.array(fast.portal[0][0]) if len(fast.portal) == 1 else None
        if w is not None:
            # The support point found lies on the ray, and is a boundary point of A − B: the
            # shapes touch once A is moved back by it.
            assert np.linalg.norm(w - (w @ r) * r) <= mpr.DEPTH_TOLERANCE * 4 * t
            assert separation(translated(a, -w), b) <= 1e-9
            assert penetration(translated(a, -w), b) is None or \
                penetration(translated(a, -w), b).depth <= 1e-9
        assert fast.calls <= plain.calls
    assert _exit_pass(a, b, (0.0, 0.6, 0.8), True).calls < 0.6 * \
        _exit_pass(a, b, (0.0, 0.6, 0.8), False).calls


def test_rulings_of_a_box_edge_swept_over_an_ellipsoid_give_the_exact_exit():
    # A − B = box ⊕ ellipsoid (B centred): along r = (1, 1, 0.1) the ray leaves through the
    # part swept by the box edge x = y = 1, where the boundary is (1, 1, z) + s_E(n) for n
    # perpendicular to z: the exit follows from a one-dimensional equation in n's angle, and
    # the ruling through it is the segment z in [-1, 1] at that angle.
    radii = np.array((0.5, 1.0, 0.75))
    a, b = Box((1, 1, 1)), Ellipsoid(radii)
    r = np.array((1.0, 1.0, 0.1))
    r /= np.linalg.norm(r)

    def edge_point(phi):
        n = np.array((math.cos(phi), math.sin(phi), 0.0))
        return (1.0, 1.0, 0.0) + radii ** 2 * n / np.linalg.norm(radii * n)

    def off_ray(phi):              # the xy point's side of the ray's xy line
        p = edge_point(phi)
        return p[0] * r[1] - p[1] * r[0]

    phi = _bisect(off_ray, 0.0, math.pi / 2)
    t = edge_point(phi)[0] / r[0]
    assert abs(t * r[2]) < 1.0     # the exit lies within the edge's length
    plain = _exit_pass(a, b, r, True)
    ruled = _exit_pass(a, b, r, True, (True, False))
    for run in (plain, ruled):
        assert run.status is Status.CONVERGED
    w = np.array(ruled.portal[0][0])
    assert len(ruled.portal) == 1
    # The answer is the point nearest the origin of the ruling through the exit point: the
    # ruling runs along z, so it shares the exit's x and y, and is no farther than the exit.
    np.testing.assert_allclose(w[:2], t * r[:2], atol=1e-9)
    assert np.linalg.norm(w) <= t + 1e-12
    assert abs(w[2]) <= abs(t * r[2]) + 1e-12
    # The point on A lies on the edge, the point on B on the ellipsoid.
    pa, pb = np.array(ruled.portal[0][1]), np.array(ruled.portal[0][2])
    np.testing.assert_allclose(pa[:2], (1.0, 1.0), atol=1e-12)
    assert np.sum((pb / radii) ** 2) == pytest.approx(1.0, abs=1e-12)
    assert ruled.calls < plain.calls


def test_rulings_are_left_to_refinement_beyond_the_edge_ends():
    # Along (1, 1, 0.8) the ray leaves through the corner patch (a translated ellipsoid), past
    # the end of the edge: the ruling search must decline and the pass still end exactly.
    radii = np.array((0.5, 1.0, 0.75))
    a, b = Box((1, 1, 1)), Ellipsoid(radii)
    r = np.array((1.0, 1.0, 0.8))
    r /= np.linalg.norm(r)
    run = _exit_pass(a, b, r, True, (True, False))
    assert run.status is Status.CONVERGED
    if len(run.portal) == 1:
        w = np.array(run.portal[0][0])
    else:
        w = mpr.ray_crossing(run.portal, r)[0] * r
    # On the corner patch: (1, 1, 1) + s_E(n) with n = normal of the ellipsoid at w − corner.
    q = (w - 1.0) / radii
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-8)
    assert np.linalg.norm(w - (w @ r) * r) <= 1e-8


def test_depth_of_exactly_touching_smooth_shapes_is_never_negative():
    # Found by adversarial probing: MPR's polished depth of touching ellipsoids came out
    # -1.7e-16 (a support value at rounding); the contract is depth >= 0.
    from geometry_helpers import random_rotation
    rng = np.random.default_rng(3)
    for _ in range(100):
        a = core.posed(Ellipsoid(rng.uniform(0.3, 2, 3)), random_rotation(rng))
        shape_b = core.posed(Ellipsoid(rng.uniform(0.3, 2, 3)), random_rotation(rng))
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        b = core.translated(shape_b, a.support(d) - shape_b.support(-d))
        for method in ("mpr", "epa", "hybrid"):
            c = penetration(a, b, method)
            assert c is None or c.depth >= 0.0


@pytest.mark.parametrize("seed", range(40))
def test_coordinates_on_a_sliver_portal_rebuild_their_point(seed):
    # Two support points of a small curved shape a hair (1e-7) apart and one of a large shape
    # far away: the triple products rebuilt the crossing up to 2e-9 off over these seeds, and a
    # contact point moved that far to close the gap. Solved again from the long edge, the point
    # comes back to rounding of the triangle's coordinates.
    from convex_tools.core.geometry import cross, triangle_coordinates
    from convex_tools.core.simplex import refined_coordinates
    rng = np.random.default_rng(seed)
    p1 = rng.normal(size=3) * 0.3
    p2 = p1 + rng.normal(size=3)
    p3 = p1 + 1e-7 * rng.normal(size=3)
    lam = rng.dirichlet([1.0, 1.0, 1.0])
    corners = np.array([p1, p2, p3])
    q = lam @ corners
    raw = np.array(triangle_coordinates(*map(tuple, corners), tuple(q),
                                        cross(tuple(p2 - p1), tuple(p3 - p1))))
    raw /= raw.sum()
    refined = np.array(refined_coordinates(*map(tuple, corners), tuple(q), tuple(raw)))
    assert np.all(refined >= 0.0) and refined.sum() == pytest.approx(1.0, abs=1e-15)
    assert np.linalg.norm(refined @ corners - q) <= 64 * np.finfo(float).eps * 2.0
    # On the long edge itself, where a re-solved weight can come out -1e-9 and be clamped:
    # never further from q than the coordinates it was given.
    on_edge = 0.3 * p1 + 0.7 * p2
    raw = np.array(triangle_coordinates(*map(tuple, corners), tuple(on_edge),
                                        cross(tuple(p2 - p1), tuple(p3 - p1))))
    raw = np.maximum(raw, 0.0) / np.maximum(raw, 0.0).sum()
    again = np.array(refined_coordinates(*map(tuple, corners), tuple(on_edge), tuple(raw)))
    assert np.linalg.norm(again @ corners - on_edge) <= np.linalg.norm(raw @ corners - on_edge)
    # Well-shaped triangles keep the coordinates they had, bit for bit.
    wide = corners.copy()
    wide[2] = p1 + rng.normal(size=3)
    q = lam @ wide
    raw = np.array(triangle_coordinates(*map(tuple, wide), tuple(q),
                                        cross(tuple(wide[1] - p1), tuple(wide[2] - p1))))
    raw /= raw.sum()
    assert refined_coordinates(*map(tuple, wide), tuple(q), tuple(raw)) == tuple(raw)


@pytest.mark.parametrize("seed", range(40))
def test_a_ray_crosses_a_sliver_portal_where_exact_arithmetic_puts_it(seed):
    # Two vertices of the portal 1e-8 apart and one 0.7 away (a small sphere's point against a
    # large curved shape): from one far vertex both edges are long and nearly parallel, their
    # cross product cancelled, and the plane tilted by ~1e-8. The crossing came 1.1e-9 beyond
    # C's boundary, and translating by it left the shapes that far apart. The sliver's normal
    # now comes from its short edge (``geometry.sliver_cross``).
    from fractions import Fraction
    rng = np.random.default_rng(seed)
    w1 = rng.normal(size=3) * 0.5
    w2 = w1 + rng.normal(size=3) * 0.7
    w3 = w2 + 1e-8 * rng.normal(size=3)
    lam = rng.dirichlet([1.0, 1.0, 1.0])
    target = lam[0] * w1 + lam[1] * w2 + lam[2] * w3
    r = target / np.linalg.norm(target)
    portal = [(tuple(w), None, None) for w in (w1, w2, w3)]
    if np.dot(np.cross(w2 - w1, w3 - w1), r) < 0.0:
        portal = [portal[0], portal[2], portal[1]]
    t, weights = mpr.ray_crossing(portal, tuple(r))
    # Exactly: t = (n · w1) / (n · r) with n = (w2 − w1) × (w3 − w1) in rationals.
    W = [[Fraction(float(c)) for c in p[0]] for p in portal]
    R = [Fraction(float(c)) for c in r]
    u = [W[1][i] - W[0][i] for i in range(3)]
    v = [W[2][i] - W[0][i] for i in range(3)]
    n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
    exact = sum(n[i] * W[0][i] for i in range(3)) / sum(n[i] * R[i] for i in range(3))
    assert abs(t - float(exact)) <= 64 * np.finfo(float).eps
    rebuilt = sum(l * np.asarray(p[0]) for l, p in zip(weights, portal))
    assert np.linalg.norm(rebuilt - t * r) <= 64 * np.finfo(float).eps


def test_a_portal_with_two_vertices_a_hair_apart_has_the_normal_of_its_plane():
    # Two support points of a small sphere 1e-9 apart and one of a large box 2 away: from the
    # far vertex the cross product cancelled to a normal 4e-7 off, whose plane MPR's pass 2
    # took for C's boundary. From the two shorter edges it is square to every edge to rounding.
    far = (0.072243892, 1.993221351, 0.153846706)
    near = (-1.85e-07, -6.89e-07, 7.02e-07)
    apart = (near[0] + 1e-9, near[1] - 2e-9, near[2] + 1e-9)
    n = np.array(mpr._portal_dir((far, near, apart)))
    for e in (np.subtract(near, far), np.subtract(apart, near), np.subtract(far, apart)):
        assert abs(n @ e) <= 1e-12 * np.linalg.norm(e)
