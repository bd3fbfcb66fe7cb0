"""The batched engine mirrors the single one function by function; one test per mirrored pair,
so that a change to either side alone fails here (issue 22: one contract for both paths).

Each feeds both sides the same inputs — general simplices, slivers 1e6 times longer than wide
far from the origin, flat and degenerate ones — and asks for the same answer to rounding. The
differences ``batch``'s docstring lists are the cases left out (a needle tetrahedron holding the
origin: the single path's exact weights).
"""

import math

import numpy as np
import pytest

from convex_tools.core import batch, batch_epa, epa, gjk, simplex
from convex_tools.core.results import STATUS_OF, Code, Status


def _simplices(rng, n, size):
    """n simplices of ``size`` points each: random ones, slivers (two points far along a line
    1e6 times longer than the others' spread) placed far from the origin, and flat ones."""
    out = []
    for k in range(n):
        p = rng.normal(size=(size, 3))
        kind = k % 3
        if kind == 1:                       # a sliver: a long segment beside a small shape
            axis = rng.normal(size=3)
            p = rng.normal(size=(size, 3)) * 1e-6 + np.outer(rng.choice([-1.0, 1.0], size), axis)
            p *= 10.0 ** rng.integers(0, 6)
            p += rng.normal(size=3) * 1e-6 * np.abs(p).max()
        elif kind == 2 and size >= 3:       # flat: in a plane through a random point
            p[:, 2] = 0.0
            p += rng.normal(size=3)
        out.append(p)
    return np.array(out)                     # (n, size, 3)


def _batched(fn, simplices):
    return fn(*(simplices[:, i, :].T.copy() for i in range(simplices.shape[1])))


def _assert_same(simplices, single, batched, size):
    v_b, lam_b = batched
    for k, p in enumerate(simplices):
        v_s, lam_s = single(*map(tuple, p))
        scale = float(np.abs(p).max())
        np.testing.assert_allclose(v_b[:, k], v_s, rtol=0, atol=1e-13 * scale)
        np.testing.assert_allclose(lam_b[:size, k], lam_s, rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_segment_parity(seed):
    p = _simplices(np.random.default_rng(seed), 60, 2)
    _assert_same(p, simplex._segment, _batched(batch._segment, p), 2)


@pytest.mark.parametrize("seed", range(3))
def test_triangle_parity(seed):
    # Both solve across the longest edge (``simplex._across_long_edge``): the slivers' answers
    # agree to rounding of the coordinates.
    p = _simplices(np.random.default_rng(seed), 60, 3)
    _assert_same(p, simplex._triangle, _batched(batch._triangle, p), 3)


@pytest.mark.parametrize("seed", range(3))
def test_a_sliver_clearly_outside_keeps_cramers_signs_and_the_answer_across(seed, monkeypatch):
    # The single path takes a sliver's edges from Cramer's signs where each weight is beyond
    # its rounding (``simplex.CRAMER_ULPS``), without the solve across the long edge that the
    # batch always makes: the answers must be the same, bit for bit, as with that solve.
    rng = np.random.default_rng(seed)
    p = list(_simplices(rng, 300, 3))
    # And slivers whose origin projects within rounding of an edge, where Cramer's sign of
    # the opposite weight is noise: each moved so that a point just beside the middle of one
    # edge, in the plane, and some way off it along the normal, is at the origin.
    for q in _simplices(rng, 300, 3)[1::3]:
        i, j = rng.choice(3, 2, replace=False)
        k = 3 - i - j
        n = np.cross(q[1] - q[0], q[2] - q[0])
        n /= np.linalg.norm(n)
        edge = q[j] - q[i]
        across = np.cross(n, edge)
        across /= np.linalg.norm(across)
        scale = np.abs(q).max()
        x = 0.5 * (q[i] + q[j]) + across * scale * rng.choice([-1e-13, 1e-13, -1e-15, 1e-15]) \
            + n * scale * rng.uniform(-1.0, 1.0)
        p.append(q - x)
    shortcut = [simplex._triangle(*map(tuple, q)) for q in p]
    monkeypatch.setattr(simplex, "CRAMER_ULPS", 1e300)      # every sliver solved across
    for q, (v, lam) in zip(p, shortcut):
        assert simplex._triangle(*map(tuple, q)) == (v, lam)


@pytest.mark.parametrize("seed", range(3))
def test_tetrahedron_parity(seed):
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.normal(size=(40, 4, 3)),
                        rng.normal(size=(20, 4, 3)) * 0.2])          # some hold the origin
    _assert_same(p, simplex._tetrahedron, _batched(batch._tetrahedron, p), 4)


def test_tolerance_parity():
    # The batch takes its stopping rules from the single modules, not copies of their values.
    assert (batch.MAX_ITERATIONS, batch.REL_TOLERANCE, batch.SIZE_TOLERANCE,
            batch.CONTAINMENT_TOLERANCE, batch.STALL_GAP, batch.STALL_RETRIES) == \
        (gjk.MAX_ITERATIONS, gjk.REL_TOLERANCE, gjk.SIZE_TOLERANCE, gjk.CONTAINMENT_TOLERANCE,
         gjk.STALL_GAP, gjk.STALL_RETRIES)
    assert (batch.FLAT_TRIANGLE_SIN2, batch.FLAT_TETRAHEDRON_RATIO, batch.INSIDE_RESIDUAL) == \
        (simplex.FLAT_TRIANGLE_SIN2, simplex.FLAT_TETRAHEDRON_RATIO, simplex.INSIDE_RESIDUAL)
    assert (batch_epa.ROUNDING_GAP, batch_epa.VISIBLE_TOLERANCE, batch_epa.ORIGIN_TOLERANCE,
            batch_epa.COPLANAR_COSINE_GAP) == \
        (epa.ROUNDING_GAP, epa.VISIBLE_TOLERANCE, epa.ORIGIN_TOLERANCE, epa.COPLANAR_COSINE_GAP)


def test_stop_vocabulary_parity():
    # One set of stop codes for both batched engines, each mapping to the single path's Status.
    assert (batch.RUNNING, batch.CONVERGED, batch.REPEATED, batch.INTERSECTING, batch.TOUCHING,
            batch.CLEAR, batch.FALLBACK) == tuple(map(int, Code))
    assert (batch_epa.RUNNING, batch_epa.CONVERGED, batch_epa.FALLBACK) == \
        (Code.RUNNING, Code.CONVERGED, Code.FALLBACK)
    assert batch.STATUS_OF == {int(c): s for c, s in STATUS_OF.items()}
    assert set(STATUS_OF.values()) <= set(Status)


def test_distance_result_engine_keeps_its_former_name():
    # ``method`` was renamed ``engine`` (it names the engine, not a depth method as
    # ``Contact.method`` does); scripts that read or set the old name keep working.
    from convex_tools.core import Box, Sphere, translated
    shapes = [Box((0.5, 0.5, 0.5)), translated(Sphere(0.5), (2.0, 0.0, 0.0))]
    (r,) = batch.distances(shapes, [(0, 1)], None)
    assert r.engine == r.method == "batch"
    r.method = "single"
    assert r.engine == "single"


@pytest.mark.parametrize("seed", range(3))
def test_face_plane_parity(seed):
    # A face's plane as the single EPA's fan makes it and as the batched EPA does, slivers (two
    # vertices 1e-6 apart, the third far off, in each order) included.
    rng = np.random.default_rng(seed)
    faces = []
    for k in range(60):
        p, q, w = rng.normal(size=(3, 3))
        if k % 2:
            p, q, w = np.roll(np.array([p, p + 1e-6 * rng.normal(size=3), w * 2.0]), k % 3,
                              axis=0)
        faces.append((p, q, w))
    faces = np.array(faces)
    n_b, d_b, fine_b = batch_epa._face_planes(faces[:, 0], faces[:, 1], faces[:, 2], -np.inf)
    for (p, q, w), n, d, fine in zip(faces, n_b, d_b, fine_b):
        hull = epa._Faces([tuple(p), tuple(q), tuple(w)])
        assert hull.fan([(0, 1, -1)], 2, -math.inf) == bool(fine)
        if fine:
            np.testing.assert_allclose(hull.faces[0][1:4], n, rtol=0, atol=1e-15)
            assert hull.faces[0][0] == pytest.approx(d, rel=0, abs=1e-15)
