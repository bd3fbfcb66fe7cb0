"""3D Quickhull: the convex hull of a point cloud as outward triangles and a vertex graph.

Seed 000 §2 obtains the adjacency graph that hill-climbing needs "by computing the convex hull,
for instance, using Quickhull [BDH96]". This module is that step, written from the algorithm's
description:

1. *Initial simplex* from extreme points; its dimension (within tolerance) decides the
   degenerate cases -- a single point, a segment, a flat convex polygon -- before any 3D work.
2. *Outside sets*: every point is assigned to one face it lies above, with numpy matrix products
   (one for the whole cloud, then one per step for the points of the removed faces only).
   Points above no face are inside and are dropped for good.
3. *Main loop*: take the face whose farthest outside point is farthest above it (a heap); that
   point is the *eye*. Walk the faces the eye sees (depth first, which yields the *horizon* as an
   ordered cycle of edges), replace them by a cone of new faces from the horizon to the eye, and
   redistribute the orphaned points over the new faces only (a point above a removed face and
   above no new face is inside the new hull: the new faces bound the cone from the eye around the
   old hull).
   Once many faces have outside sets the loop runs in *rounds* instead (``_Batch``): every such
   face proposes its eye, the eyes whose visible regions share no face are added together, and
   all their orphans are redistributed in one pass over arrays. Adding independent eyes at once
   gives the same hull as adding them one after the other (see ``_Batch._cones``).
4. *Cleanup*: a triangulated hull keeps vertices that are not corners when ties made them eyes
   (a point in the middle of a flat face, or mid-edge). Vertices within ``tolerance`` of the hull
   of their neighbours are removed and the hull is rebuilt from the rest.

Robustness. Visibility -- "is the eye strictly above this face?" -- is decided *exactly*: by the
float plane distance when it is clearly away from zero, else by the sign of the orientation
determinant (float with a rounding bound, then extended precision where numpy has it, then
integers). Every hull built is therefore exactly
convex in the input coordinates, however flat, collinear or duplicated the points (Quickhull
with tolerance-based visibility piles "almost coplanar" decisions up into concavities on nearly
flat clouds). A point is an eye only if it is clearly above a face; points within rounding of a
plane (the many points on the flat faces of a subdivided box) are dropped at once instead of
becoming eyes, and are checked against the final hull like the cleanup's removed vertices. The
result: every input point lies at most ``tolerance`` above every face plane.

Speed. Before the main loop the hull of the cloud's extreme points along 26 fixed directions is
built, and one matrix product against its faces drops every point strictly inside it (most of a
random cloud; the points in a ball inside it are dropped before, by their distance to its
centre), so the loop only sees the outer shell. One eye at a time costs ~35 us of Python per
hull vertex; a round costs ~0.5 ms of numpy calls whatever its size, so small hulls and small
outside sets stay in plain Python floats and large ones go to the rounds, which keep
coordinates and normals one array per axis (100k points on a sphere: 8.4 s one at a time,
~0.9 s in 35 rounds; a million points in a cube: ~0.25 s). Fixed per-call costs set a floor:
a hull with ~1,000 vertices takes 10-15 ms (~15 rounds and the eyes before them), and a closed
convex mesh given with its faces is certified by ``convex_mesh`` in ~2 ms instead.

Tolerance: ``DIST_TOL_REL * extent + ROUNDOFF_REL * max|coordinate|`` with extent the largest
side of the bounding box, so the result is invariant to a uniform scale of the input. Clouds of
extreme magnitude (beyond 2**-64 ... 2**64) are built scaled by a power of two, which is exact:
every finite input works, from subnormal coordinates to the largest floats.
"""

from __future__ import annotations

import gc
import heapq
import math
from contextlib import contextmanager
from itertools import compress
from typing import NamedTuple

import numpy as np

from . import validation
from .convex_mesh import convex_mesh_hull
from .predicates import (LONG, LONG_FILTER, LONG_NORMAL_SIN, NEXT_VERTEX, PREV_VERTEX, UNDECIDED,
                         integers, orient, orient_float, orient_integers, orient_signs,
                         point_integers)

# --- tolerances ----------------------------------------------------------------------------------
# Distance (relative to the cloud's extent) within which points count as one point, on one line or
# on one plane (steps 1 and 4): far above float rounding (~1e-16), far below real features (the
# sagitta of 20k random points on a unit sphere is ~1e-4).
DIST_TOL_REL = 1e-10
# Rounding of a float dot product of input coordinates, relative to the largest absolute input
# coordinate (a few ulps, with margin): a tiny cloud far from the origin cannot be resolved finer.
ROUNDOFF_REL = 1e-14
# Float plane distances farther than this from zero (relative to the extent, plus ROUNDOFF_REL)
# are trusted; nearer ones are re-decided exactly when they decide visibility, and a point that
# is nowhere farther above a face is dropped as "on the hull" (and checked against the final
# hull). It bounds the float error of ``n . p - offset``: the normal's direction error (<= ~5e-13,
# see EXACT_NORMAL_SIN) times the distance to the face (<= 2 extents), plus the dot products'
# rounding, with a 20x margin; and it stays 4x below DIST_TOL_REL, so that dropped points remain
# within tolerance even beside an edge (as long as its dihedral angle is not very sharp).
PREDICATE_FILTER_REL = 2.5e-11
# Below this sine of the angle between the two edges a normal is computed from, the float cross
# product's direction error (~4e-16 / sine) could exceed ~4e-13: the normal is then computed
# exactly from the coordinates and rounded once.
EXACT_NORMAL_SIN = 1e-3
# Cleanup distances below this (relative to the extent) are rounding: such vertices lie on the
# hull of their neighbours, and removing any number of them at once cannot add up to tolerance.
ROUNDING_DIST_REL = 1e-13

# Largest |coordinate| outside this range is scaled into it (by a power of two): normals' squared
# lengths and orientation determinants multiply up to four coordinate differences, which must
# neither overflow (coordinates ~1e307 once raised ZeroDivisionError) nor underflow (~1e-150).
# Differences of at least the roundoff tolerance (ROUNDOFF_REL x the largest coordinate) keep
# every such product far inside the float range over [2**-64, 2**64].
SAFE_MAGNITUDE_MIN = 2.0 ** -64
SAFE_MAGNITUDE_MAX = 2.0 ** 64

# --- caps and batch sizes ------------------------------------------------------------------------
# Each main-loop step makes its eye a hull vertex, and a point is an eye at most once (it is then
# on the hull and never again strictly above a face): the loop is bounded by N steps.
ITERATION_SLACK = 16
# Cleanup rebuilds: one suffices unless removed points must be reinstated (see convex_hull).
CLEANUP_PASS_CAP = 4
# Rows per matrix product when a whole cloud is classified (bounds the rows x faces temporary).
ASSIGN_CHUNK = 1 << 15
# Plane distances per block when points are checked against the final hull (_height_above):
# 2 MB stay in cache. (The 30 points dropped near a plane while building a 100k-point sphere,
# against its 200k faces in one 48 MB block: ~120 ms; in blocks: ~20 ms.)
HEIGHT_BLOCK = 1 << 18
HEIGHT_BLOCK_ROWS = 1024
# Below this many points the prefilter polytope costs more than it saves.
PREFILTER_MIN_POINTS = 256
# From this many faces with outside sets on, the main loop runs in rounds over arrays (``_Batch``)
# instead of one eye at a time in plain Python. Median ms to build by threshold, 16 / 32 / 64 /
# 96 (shared machine, interleaved runs): 994-vertex UV sphere 28 / 26 / 26 / 77 (never batched:
# 48); 1,000-point blob, 261 on the hull, 9.5 / 9.4 / 10.1 / 13.1; 1,000 points in a cube 5.1 /
# 5.1 / 3.4 / 3.3. A round costs ~0.5 ms of numpy calls: worth it from ~15 eyes a round.
BATCH_MIN_FACES = 64
# ... or from this many points in outside sets on: on a curve (the rims of a cylinder) the outside
# points gather in a few dozen faces at any time, so the face count alone never calls the rounds
# in.
BATCH_MIN_POINTS = 1000
# From this many points on, a round's redistribution handles the points in groups of equal cone
# size (one dense array each) rather than as one flat list of (point, face) pairs: 86 vs 170 ms
# for 200k points against cones of 3-9 faces, but a dozen numpy calls per group.
GROUPED_MIN_POINTS = 2048
# Faces the rounds make per outside point they start with, to reserve room for (rows are
# allocated, not touched, until used). Points on a sphere, every one an eye: 5.2 faces made
# per point (a cone of ~6, 35 rounds, 518k faces for 100k points); a cloud with interior
# points makes fewer. Past this, the arrays double.
FACES_PER_OUTSIDE_POINT = 6
# At most this many orphaned points are redistributed in plain Python instead of numpy, and
# outside sets this small are kept as lists. Build time of 20k sphere points by threshold, one
# eye at a time (before the rounds): 0 (always numpy) 2.2 s, 12: 1.5 s, 32: 1.22 s, 64: 1.16 s,
# 128: 1.25 s, always Python 1.45 s.
SMALL_REDISTRIBUTE = 64

# The 26 directions of the prefilter (cube faces, edges and corners), turned by a fixed small
# rotation so that grid-aligned inputs (boxes, voxel clouds) do not tie.
_DIRS = np.array([(i, j, k) for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)
                  if (i, j, k) != (0, 0, 0)], dtype=float)
_DIRS /= np.linalg.norm(_DIRS, axis=1)[:, None]


def _rotation(ax: float, ay: float, az: float) -> np.ndarray:
    cx, sx, cy, sy, cz, sz = (math.cos(ax), math.sin(ax), math.cos(ay), math.sin(ay),
                              math.cos(az), math.sin(az))
    rx = np.array(((1, 0, 0), (0, cx, -sx), (0, sx, cx)))
    ry = np.array(((cy, 0, sy), (0, 1, 0), (-sy, 0, cy)))
    rz = np.array(((cz, -sz, 0), (sz, cz, 0), (0, 0, 1)))
    return rz @ ry @ rx


_TILT = _rotation(0.0123, 0.0321, 0.0231)
_DIRS = _DIRS @ _TILT.T
_AXES = _TILT  # rows: the tilted x, y, z axes that pick the initial extreme pair


class HullData(NamedTuple):
    """A convex hull.

    ``vertices`` (M, 3) are input points (exact copies), the corners of the hull; ``indices`` (M,)
    their rows in the input. ``faces`` (F, 3) index ``vertices``:

    * ``dim == 3``: a closed triangulated surface, every triangle counter-clockwise seen from
      outside; V - E + F == 2. Coplanar corners give coplanar triangles (not merged polygons).
    * ``dim == 2`` (all points within tolerance of a plane): ``vertices`` is the convex polygon in
      counter-clockwise order seen from ``normal``; ``faces`` a fan triangulation of it on that
      one side only (a mesh made from it has no duplicate faces).
    * ``dim == 1`` (collinear): the two end points, no faces.
    * ``dim == 0`` (all points equal within tolerance): one vertex, no faces.

    ``adjacency[i]`` is the tuple of the vertices joined to vertex ``i`` by a hull edge (the polygon
    cycle when flat): the graph hill-climbing walks. ``normal`` is the unit plane normal of a flat
    hull (largest component positive), else None. ``tolerance`` is the distance within which
    points counted as one point, line or plane: no input point lies farther than it above any
    face plane (or, for lower dimensions, from the polygon, segment or point).
    """

    vertices: np.ndarray
    faces: np.ndarray
    adjacency: tuple
    dim: int
    normal: np.ndarray | None
    tolerance: float
    indices: np.ndarray


class QuickhullError(RuntimeError):
    """The main loop exceeded its iteration cap, or met a horizon that is not a simple cycle
    (impossible with exact visibility: it would be a bug, reported instead of a wrong hull)."""


def convex_hull(points, faces=None) -> HullData:
    """Convex hull of an (N, 3) array of finite points (see ``HullData`` for the degenerate cases).

    ``faces``, optional, are the (F, 3) triangles of a mesh over ``points`` (indices, outward
    counter-clockwise). When that mesh is closed and convex it is its own hull, which is
    certified and returned without a Quickhull (``convex_mesh``); any other mesh gives the same
    hull as no faces, built by Quickhull.

    Raises ValueError naming ``points`` for empty, non-finite or wrongly shaped input, and naming
    ``faces`` for faces that are not triangles of indices into ``points``.
    """
    with collector_paused():
        return _convex_hull(points, faces)


@contextmanager
def collector_paused():
    """Python's cyclic garbage collector paused for the block (as it was after it). A hull is
    built of many small tuples and lists holding only numbers, and the collector, which runs
    every 700 new containers, re-scans them each time for cycles they cannot have: a fifth
    of the time of a 100k-vertex ``Hull`` (and a twentieth of its Quickhull) went to it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _convex_hull(points, faces) -> HullData:
    p = validation.points("points", points)
    tris = None if faces is None else _triangles("faces", faces, len(p))
    # The hull is built on the input coordinates themselves (not re-centred copies): the exact
    # predicates then make the returned vertices exactly convex, not just their rounded images.
    # Only a cloud of extreme magnitude is scaled, by a power of two (exact).
    q, exponent = _in_safe_range(p)
    # (one contiguous row per coordinate: reducing (N, 3) rows down axis 0 is 7x slower)
    xyz = np.ascontiguousarray(q.T)
    lower, upper = xyz.min(axis=1), xyz.max(axis=1)
    extent = float(np.max(upper - lower))
    roundoff = ROUNDOFF_REL * max(float(np.max(upper)), -float(np.min(lower)))
    tol = DIST_TOL_REL * extent + roundoff
    filt = PREDICATE_FILTER_REL * extent + roundoff
    rounding = ROUNDING_DIST_REL * extent + roundoff
    ids = np.arange(len(p))
    # Points to verify against the final hull: those dropped within rounding of a plane, and the
    # vertices the cleanup removed. Each is within tolerance of the hull it was dropped from, but
    # the hull changes afterwards (and removals can compound on a densely sampled shallow dome).
    check = np.zeros(0, dtype=np.intp)
    pinned = np.zeros(0, dtype=np.intp)  # reinstated points: never dropped again
    exact = False
    given = None
    if tris is not None:
        given, _ = convex_mesh_hull(q, tris)
    for _ in range(CLEANUP_PASS_CAP):
        if given is not None:
            hull, near, given = (3, *given), _NONE, None
        else:
            hull, near = _hull_of(q, ids, tol, filt, exact)
        if hull[0] != 3:
            return _package(p, hull, _unscaled(tol, exponent))
        _, corners, faces, planes = hull
        check = np.union1d(check, near)
        if len(check):
            stray = check[_height_above(q, planes, check) > tol]
            if len(stray):
                # Rare: reinstate them, and decide near points exactly from now on so that
                # nothing can be dropped again.
                ids = np.union1d(ids, stray)
                check = np.setdiff1d(check, stray)
                pinned = np.union1d(pinned, stray)
                exact = True
                continue
        drop = _removable(q, corners, faces, planes[0], tol, rounding)
        if len(pinned):
            drop &= ~np.isin(corners, pinned)
        if not drop.any():
            return _package(p, hull, _unscaled(tol, exponent))
        check = np.union1d(check, corners[drop])
        ids = corners[~drop]
    # The cap was reached while still removing or reinstating: an exact hull of everything is
    # always correct (it may keep a few vertices that are not corners).
    hull, _ = _hull_of(q, np.arange(len(p)), tol, filt, True)
    return _package(p, hull, _unscaled(tol, exponent))


def _triangles(name: str, value, n: int) -> np.ndarray:
    """An (F, 3) array of indices into ``n`` points (whole numbers stored as floats accepted,
    as ``TriangleMesh`` accepts them)."""
    try:
        t = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an (F, 3) array of point indices") from None
    if t.ndim != 2 or t.shape[1] != 3:
        raise ValueError(f"{name} must be an (F, 3) array of point indices, got shape {t.shape}")
    if t.dtype.kind not in "iu":
        whole = t.dtype.kind in "fb" and bool(np.all((t == np.round(t)) & (abs(t) <= n)))
        if not whole:
            raise ValueError(f"{name} must hold integer point indices")
    t = t.astype(np.intp)
    if len(t) and (t.min() < 0 or t.max() >= n):
        raise ValueError(f"{name} must index the {n} points, found indices from {t.min()} to "
                         f"{t.max()}")
    return t


def _unscaled(length: float, exponent: int) -> float:
    """``length * 2**exponent``, rounded up to the least subnormal rather than to zero."""
    out = math.ldexp(length, exponent)
    return out if out > 0.0 or length == 0.0 else math.ulp(0.0)


def _in_safe_range(p: np.ndarray) -> tuple:
    """``(q, e)`` with ``p == q * 2**e`` and the largest |coordinate| of q in the safe range.

    Scaling by a power of two is exact (coordinates below 2**-1022 of the largest one excepted,
    which are far below ROUNDOFF_REL) and changes no predicate's decision, so q has the same hull.
    """
    big = float(np.max(np.abs(p)))
    if big == 0.0 or SAFE_MAGNITUDE_MIN <= big <= SAFE_MAGNITUDE_MAX:
        return p, 0
    _, e = math.frexp(big)  # big == m * 2**e with 0.5 <= m < 1
    return np.ldexp(p, -e), e


# --- dimension and degenerate hulls --------------------------------------------------------------

_NONE = np.zeros(0, dtype=np.intp)


def _hull_of(q: np.ndarray, ids: np.ndarray, tol: float, filt: float, exact: bool):
    """``((dim, corners, faces_or_normal[, planes]), near)`` for the points ``q[ids]`` (indices
    into q); solid hulls also give their face ``planes`` (unit normals, offsets).

    ``near`` are the points dropped for lying within ``filt`` of a face plane (none if exact).
    """
    sub = q if len(ids) == len(q) else q[ids]  # (ids are sorted and distinct)
    # Extreme pair along the (tilted) axis of largest spread: both are corners of the hull.
    proj = _AXES @ sub.T  # (one row per axis: reductions along rows, not down columns)
    axis = int(np.argmax(proj.max(axis=1) - proj.min(axis=1)))
    i0, i1 = int(np.argmin(proj[axis])), int(np.argmax(proj[axis]))
    line = sub[i1] - sub[i0]
    length = float(np.linalg.norm(line))
    if length <= tol:
        return (0, ids[i0:i0 + 1], None), _NONE
    line /= length
    rel = sub - sub[i0]
    off_line = rel - np.outer(rel @ line, line)
    dist_line = np.einsum("ij,ij->i", off_line, off_line)
    i2 = int(np.argmax(dist_line))
    if math.sqrt(dist_line[i2]) <= tol:
        t = sub @ line
        return (1, ids[[int(np.argmin(t)), int(np.argmax(t))]], None), _NONE
    (lx, ly, lz), (dx, dy, dz) = line.tolist(), (sub[i2] - sub[i0]).tolist()
    normal = np.array((ly * dz - lz * dy, lz * dx - lx * dz, lx * dy - ly * dx))  # line x d
    normal /= math.sqrt(normal @ normal)
    height = rel @ normal
    i3 = int(np.argmax(np.abs(height)))
    if abs(float(height[i3])) <= tol:
        k = int(np.argmax(np.abs(normal)))
        if normal[k] < 0.0:
            normal = -normal  # a canonical side: the largest component positive
        order = _polygon(sub, normal, tol)
        if len(order) < 3:  # the 2D test found a segment after all (within tolerance)
            return (1, ids[order], None), _NONE
        return (2, ids[order], normal), _NONE
    builder = _Builder(q, filt, exact)
    builder.tetrahedron(*(int(ids[i]) for i in (i0, i1, i2, i3)))
    if len(ids) >= PREFILTER_MIN_POINTS:
        # The hull of the extreme points along 26 directions first: the assign() of the whole
        # cloud below then drops everything inside it with one matrix product.
        builder.assign(ids[_extreme_points(sub, _DIRS)])
        builder.run(batch=False)
    builder.assign(ids)
    corners, faces, planes, near = builder.run().result()
    if 2 * len(corners) - len(faces) != 4:  # V - E + F == 2 with 2E == 3F
        raise QuickhullError("the hull is not a closed surface of genus 0 (a bug)")
    return (3, corners, faces, planes), near


def _extreme_points(pts: np.ndarray, dirs: np.ndarray) -> np.ndarray:
    """Sorted distinct rows of ``pts`` farthest along each of ``dirs`` (the first of ties):
    ``np.unique(np.argmax(pts @ dirs.T, axis=0))``, a chunk of points at a time and with the
    directions along rows (the argmax down the columns of (N, 26) took 520 ms for a million
    points, 120 ms this way; and the temporary stays small)."""
    best = np.full(len(dirs), -np.inf)
    where = np.zeros(len(dirs), dtype=np.intp)
    rows = np.arange(len(dirs))
    for s in range(0, len(pts), ASSIGN_CHUNK):
        dist = dirs @ pts[s:s + ASSIGN_CHUNK].T
        i = dist.argmax(axis=1)
        top = dist[rows, i]
        better = top > best  # (strictly: an earlier chunk keeps its ties)
        best[better], where[better] = top[better], i[better] + s
    return np.unique(where)


def _polygon(sub: np.ndarray, normal: np.ndarray, tol: float) -> list:
    """Rows of ``sub`` (coplanar) forming its convex polygon, counter-clockwise about ``normal``."""
    u = np.cross(normal, _AXES[int(np.argmin(np.abs(_AXES @ normal)))])
    u /= np.linalg.norm(u)
    w = np.cross(normal, u)  # (u, w, normal) right-handed: CCW in (u, w) is CCW seen from normal
    xy = np.stack((sub @ u, sub @ w), axis=1)
    cand = np.arange(len(sub))
    if len(sub) >= PREFILTER_MIN_POINTS:
        # Drop points strictly inside the polygon of the extremes along 16 directions.
        ang = np.arange(16) * (2.0 * math.pi / 16) + 0.0123
        dirs = np.stack((np.cos(ang), np.sin(ang)), axis=1)
        ext = _extreme_points(xy, dirs)
        ring = [int(ext[i]) for i in _monotone_chain(xy[ext].tolist(), tol)]
        if len(ring) >= 3:
            a = xy[ring]
            edge = np.roll(a, -1, axis=0) - a
            edge /= np.linalg.norm(edge, axis=1)[:, None]
            # signed distance to the left of each CCW edge; inside means left of all by > tol
            left = (xy[:, None, 1] - a[None, :, 1]) * edge[None, :, 0] \
                - (xy[:, None, 0] - a[None, :, 0]) * edge[None, :, 1]
            cand = np.nonzero(~(left.min(axis=1) > tol))[0]
    chain = _monotone_chain(xy[cand].tolist(), tol)
    return [int(cand[i]) for i in chain]


def _monotone_chain(pts: list, tol: float) -> list:
    """Indices of the strict corners of a 2D point list, counter-clockwise (Andrew's scan)."""
    order = sorted(range(len(pts)), key=pts.__getitem__)

    def half(seq):
        out = []
        for i in seq:
            bx, by = pts[i]
            while len(out) >= 2:
                ox, oy = pts[out[-2]]
                ax, ay = pts[out[-1]]
                # a is kept only if it lies right of o->b by more than tol (a strict left turn)
                cross = (ax - ox) * (by - oy) - (ay - oy) * (bx - ox)
                if cross > tol * math.hypot(bx - ox, by - oy):
                    break
                out.pop()
            out.append(i)
        return out

    lower = half(order)
    upper = half(reversed(order))
    ring = lower[:-1] + upper[:-1]
    if len(ring) == 2 and pts[ring[0]] == pts[ring[1]]:
        ring = ring[:1]
    return ring


def _exact_unit_normal(a: tuple, b: tuple, c: tuple) -> tuple:
    """``(b - a) x (c - a)`` computed exactly and rounded once to a unit vector (None if zero)."""
    ax, ay, az, bx, by, bz, cx, cy, cz = integers((*a, *b, *c))
    ux, uy, uz = bx - ax, by - ay, bz - az
    vx, vy, vz = cx - ax, cy - ay, cz - az
    n = (uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx)
    big = max(abs(t) for t in n)
    if big == 0:
        return None
    nx, ny, nz = (t / big for t in n)  # int / int is correctly rounded
    length = math.sqrt(nx * nx + ny * ny + nz * nz)
    return nx / length, ny / length, nz / length


def _unit_normal(a: tuple, b: tuple, c: tuple) -> tuple:
    """Unit normal of the triangle (a, b, c), counter-clockwise; exact for slivers."""
    ux, uy, uz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    vx, vy, vz = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    length = math.sqrt(nx * nx + ny * ny + nz * nz)
    if length < EXACT_NORMAL_SIN * math.sqrt((ux * ux + uy * uy + uz * uz)
                                             * (vx * vx + vy * vy + vz * vz)):
        n = _exact_unit_normal(a, b, c)
        if n is None:
            raise QuickhullError("a hull face has no area (the eye was on a horizon edge)")
        return n
    return nx / length, ny / length, nz / length


# --- the 3D main loop ----------------------------------------------------------------------------

# The two edges to continue with after entering a face by edge k (counter-clockwise order).
_NEXT_EDGES = ((1, 2), (2, 0), (0, 1))


# No eye's rank: the sentinel of ``_Batch.best``.
_NO_RANK = np.iinfo(np.intp).max

# ``_Batch``'s arrays with a row per face (besides the normals, one row per axis): dtype and
# width (0: one value per face). ``best``, ``owner`` and ``taken`` are per-round scratch, reset
# after use.
_FACE_ROWS = {"fv": (np.intp, 3), "fo": (float, 0), "fnb": (np.intp, 3), "alive": (bool, 0),
              "far": (np.intp, 0), "fard": (float, 0), "best": (np.intp, 0),
              "owner": (np.intp, 0), "taken": (bool, 0)}


class _Builder:
    """Triangles with neighbour links, outside sets and the Quickhull loop, one eye at a time in
    plain Python (indices into ``q``); it hands over to ``_Batch`` once many faces have outside
    sets (``run``).

    Face ``f`` has vertices ``fv[f] = (a, b, c)`` counter-clockwise seen from outside, and
    ``fnb[f][k]`` is the face across its edge k (a->b, b->c, c->a). Removed faces are only marked
    dead, never reused, so no index held anywhere goes stale.

    Visibility ("is the eye above face f?") uses the float distance ``fn[f] . p - fo[f]`` when it
    is beyond ``filt`` either way, else the exact ``above``: the decisions of exact arithmetic.
    Outside sets take only points clearly (by more than ``filt``) above a face; the points within
    ``filt`` are collected in ``near`` for the caller to verify against the final hull -- or,
    with ``exact``, also decided exactly (the fallback that drops nothing).
    """

    def __init__(self, q: np.ndarray, filt: float, exact: bool) -> None:
        self.q = q
        self.filt = filt
        self.exact = exact
        self.near: list = []     # dropped points within ``filt`` of a plane (when not exact)
        self.fv: list = []
        self.fn: list = []       # unit outward normals (tuples)
        self.fo: list = []       # plane offsets: n . x == fo on the plane
        self.fnb: list = []
        self.alive: list = []
        self.out: list = []      # outside set: int array, a list when small, or None
        self.far: list = []      # the farthest point of the outside set
        # Faces that may have a non-empty outside set, as a heap of (-distance of the eye, face):
        # the farthest eye first. Eyes far out are most often corners of the final hull; taken
        # last in, first out (depth first), one eye in four for 1,000 points in a ball was
        # buried again later (183 steps for 135 corners, 156 so).
        self.pending: list = []
        self.xyz: dict = {}      # float coordinate tuples of every point the loop may touch
        self.ints: dict = {}     # exact integers of those the exact predicates met
        self.verdicts: dict = {}  # (face, point): ``above``, once decided exactly
        self.outside = 0         # live faces with an outside set
        self.outside_points = 0  # points in those sets
        self.steps = 0
        self.cap = len(q) + ITERATION_SLACK

    def point(self, i: int) -> tuple:
        t = self.xyz.get(i)
        if t is None:
            t = self.xyz[i] = tuple(self.q[i].tolist())
        return t

    def orient(self, a: int, b: int, c: int, p: int) -> int:
        """``orient`` of four points by index (their exact integers are computed once)."""
        point = self.point
        sign = orient_float(point(a), point(b), point(c), point(p))
        if sign != UNDECIDED:
            return sign
        ints = self.ints
        for i in (a, b, c, p):
            if i not in ints:
                ints[i] = point_integers(point(i))
        return orient_integers(ints[a], ints[b], ints[c], ints[p])

    def above(self, f: int, i: int) -> bool:
        """Is point ``i`` strictly above the plane of face ``f``? The exact decision, for points
        the float filter leaves undecided (faces never change, so each pair is decided once)."""
        key = (f, i)
        verdict = self.verdicts.get(key)
        if verdict is None:
            a, b, c = self.fv[f]
            verdict = self.verdicts[key] = self.orient(int(a), int(b), int(c), i) > 0
        return verdict

    def add_face(self, a: int, b: int, c: int) -> int:
        pa, pb, pc = self.point(a), self.point(b), self.point(c)
        nx, ny, nz = _unit_normal(pa, pb, pc)
        f = len(self.fv)
        self.fv.append((a, b, c))
        self.fn.append((nx, ny, nz))
        # offset through the centroid: averages the rounding of the three vertices
        self.fo.append((nx * (pa[0] + pb[0] + pc[0]) + ny * (pa[1] + pb[1] + pc[1])
                        + nz * (pa[2] + pb[2] + pc[2])) / 3.0)
        self.fnb.append([-1, -1, -1])
        self.alive.append(True)
        self.out.append(None)
        self.far.append(-1)
        return f

    def tetrahedron(self, i0: int, i1: int, i2: int, i3: int) -> None:
        """The initial simplex (i3 is off the plane of the others by more than the tolerance)."""
        pts = [self.point(i) for i in (i0, i1, i2, i3)]
        tris = [(i0, i1, i2), (i0, i3, i1), (i1, i3, i2), (i2, i3, i0)]
        if orient(*pts) > 0:  # i3 above (i0, i1, i2): every triangle is inside out
            tris = [(a, c, b) for a, b, c in tris]
        faces = [self.add_face(a, b, c) for a, b, c in tris]
        edge_face = {}
        for f in faces:
            a, b, c = self.fv[f]
            for e in ((a, b), (b, c), (c, a)):
                edge_face[e] = f
        for f in faces:
            a, b, c = self.fv[f]
            self.fnb[f] = [edge_face[(b, a)], edge_face[(c, b)], edge_face[(a, c)]]

    # --- outside sets -----------------------------------------------------------------------------
    def assign(self, pts: np.ndarray) -> None:
        """Distribute ``pts`` over all live faces (which have empty outside sets)."""
        faces = [f for f in range(len(self.fv)) if self.alive[f]]
        if len(pts) >= PREFILTER_MIN_POINTS:
            pts = pts[~self._deep_inside(faces, pts)]
        self._classify(faces, pts)

    def _deep_inside(self, faces: list, pts: np.ndarray) -> np.ndarray:
        """Which of ``pts`` lie in a ball inside the faces' polytope, so far from every face
        that ``_classify`` would find them below all of them (by more than ``filt``): four
        array operations per point instead of a plane distance per face (a cube's random cloud
        is half inside the ball of the 26-direction prefilter polytope)."""
        corners = np.unique(np.array([self.fv[f] for f in faces]))
        centre = self.q[corners].mean(axis=0)  # (inside: the corners' hull is the polytope)
        normals = np.array([self.fn[f] for f in faces])
        offsets = np.array([self.fo[f] for f in faces])
        # Every face is at least ``radius`` away from the centre; a point closer to it than
        # radius - 2 filt is below every face plane by more than filt, float rounding of the
        # distances (a few ulps of the coordinates, inside ``filt``'s roundoff term) included.
        radius = float(np.min(offsets - normals @ centre)) - 2.0 * self.filt
        if radius <= 0.0:
            return np.zeros(len(pts), dtype=bool)
        x, y, z = (np.take(self.q[:, k], pts) - centre[k] for k in range(3))
        return x * x + y * y + z * z < radius * radius

    def _classify(self, faces: list, pts: np.ndarray) -> None:
        """Give each of ``pts`` to the face of ``faces`` it is farthest above, if any (one matrix
        product per chunk of points)."""
        normals = np.array([self.fn[f] for f in faces])
        offsets = np.array([self.fo[f] for f in faces])
        best = np.empty(len(pts), dtype=np.intp)
        top = np.empty(len(pts))
        for s in range(0, len(pts), ASSIGN_CHUNK):
            dist = self.q[pts[s:s + ASSIGN_CHUNK]] @ normals.T - offsets
            best[s:s + len(dist)] = np.argmax(dist, axis=1)
            top[s:s + len(dist)] = dist[np.arange(len(dist)), best[s:s + len(dist)]]
        sure = top > self.filt
        unsure = np.nonzero(~sure & (top >= -self.filt))[0]
        labels, dists, pts_out = best[sure], top[sure], pts[sure]
        if len(unsure) and not self.exact:
            self.near.append(pts[unsure])  # within rounding of a plane: dropped, checked later
        elif len(unsure):
            # Near a plane: try the faces the point might be above, nearest-above first.
            extra = []
            for r in unsure.tolist():
                i = int(pts[r])
                dist = self.q[i] @ normals.T - offsets
                for j in np.argsort(-dist).tolist():
                    if dist[j] < -self.filt:
                        break
                    if self.above(faces[j], i):
                        extra.append((i, j, float(dist[j])))
                        break
            if extra:
                pts_out = np.concatenate((pts_out, np.array([e[0] for e in extra], dtype=np.intp)))
                labels = np.concatenate((labels, np.array([e[1] for e in extra], dtype=np.intp)))
                dists = np.concatenate((dists, np.array([e[2] for e in extra])))
        if len(pts_out):
            self._distribute(faces, pts_out, labels, dists)

    def _distribute(self, faces: list, pts, labels, dists) -> None:
        """Outside sets from points sorted to faces (whose sets are empty)."""
        # Sort by face, farthest first: each face's slice starts with its eye.
        order = np.lexsort((-dists, labels))
        pts = pts[order]
        counts = np.bincount(labels, minlength=len(faces))
        ends = np.cumsum(counts)
        # Small sets become lists handled in plain Python, which reads their coordinates from
        # ``xyz``; large ones stay arrays for numpy (only their eye needs coordinates).
        small = np.repeat(counts <= SMALL_REDISTRIBUTE, counts)
        small[ends[counts > 0] - counts[counts > 0]] = True
        touched = pts[small]
        self.xyz.update(zip(touched.tolist(), self.q[touched].tolist()))
        start = 0
        tops = (-dists[order]).tolist()
        for j, n in enumerate(counts.tolist()):
            if n:
                f = faces[j]
                chunk = pts[start:start + n]
                self.far[f] = int(chunk[0])
                heapq.heappush(self.pending, (tops[start], f))
                self.outside += 1
                self.outside_points += n
                # small sets as lists: the late steps of the loop stay in plain Python
                self.out[f] = chunk.tolist() if n <= SMALL_REDISTRIBUTE else chunk
                start += n

    # --- main loop --------------------------------------------------------------------------------
    def run(self, batch: bool = True):
        """Add eyes until no outside set is left; returns the builder that finished: this one, or
        the ``_Batch`` it hands over to once ``BATCH_MIN_FACES`` faces or ``BATCH_MIN_POINTS``
        points are in outside sets."""
        fv, fn, fo, fnb = self.fv, self.fn, self.fo, self.fnb
        alive, out, far, pending = self.alive, self.out, self.far, self.pending
        xyz = self.xyz
        while pending:
            if batch and (self.outside >= BATCH_MIN_FACES
                          or self.outside_points >= BATCH_MIN_POINTS):
                return _Batch(self).run()
            _, f = heapq.heappop(pending)
            if not alive[f] or out[f] is None:
                continue
            self.steps += 1
            if self.steps > self.cap:
                raise QuickhullError(f"Quickhull exceeded its iteration cap ({self.cap} steps)")
            eye = far[f]
            ex, ey, ez = xyz[eye]
            visible, horizon = self._horizon(f, eye)
            # The horizon is one simple cycle a0->a1->...->a0 in exact arithmetic (the visible
            # region of a convex polytope is a disc); anything else is a bug, not bad input.
            m = len(horizon)
            starts = [e[0] for e in horizon]
            if m < 3 or any(horizon[i - 1][1] != starts[i] for i in range(m)) \
                    or len(set(starts)) != m:
                raise QuickhullError("the horizon of an eye point is not a simple cycle")
            # The cone of new faces: horizon edge a->b keeps its orientation, apex at the eye.
            # Its normal is (a - eye) x (b - eye), the same as (b - a) x (eye - a).
            rel = {}
            for a in starts:
                x, y, z = xyz[a]
                rel[a] = (x - ex, y - ey, z - ez)
            first = len(fv)
            for i, (a, b, h, slot) in enumerate(horizon):
                ux, uy, uz = rel[a]
                vx, vy, vz = rel[b]
                nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
                area2 = math.sqrt(nx * nx + ny * ny + nz * nz)
                if area2 < EXACT_NORMAL_SIN * math.sqrt((ux * ux + uy * uy + uz * uz)
                                                        * (vx * vx + vy * vy + vz * vz)):
                    # a sliver: its rounded cross product has lost its direction
                    nx, ny, nz = _unit_normal(xyz[a], xyz[b], (ex, ey, ez))
                else:
                    nx, ny, nz = nx / area2, ny / area2, nz / area2
                fv.append((a, b, eye))
                fn.append((nx, ny, nz))
                # through the centroid (averages the rounding of the three vertices)
                fo.append(nx * (ex + (ux + vx) / 3.0) + ny * (ey + (uy + vy) / 3.0)
                          + nz * (ez + (uz + vz) / 3.0))
                # across a->b: the kept neighbour; b->eye: the next cone face; eye->a: the previous
                fnb.append([h, first + (i + 1) % m, first + (i - 1) % m])
                fnb[h][slot] = first + i
                alive.append(True)
                out.append(None)
                far.append(-1)
            orphans = []
            count = 0
            for g in visible:
                alive[g] = False
                o = out[g]
                if o is not None:
                    orphans.append(o)
                    count += len(o)
                    out[g] = None
                    self.outside -= 1
                    self.outside_points -= len(o)
            if count <= SMALL_REDISTRIBUTE:
                if count > 1:
                    self._redistribute_small(first, [i for o in orphans for i in o if i != eye])
                continue
            pts = np.concatenate(orphans)
            # Points above no new face are inside the new hull and are dropped for good.
            self._classify(list(range(first, first + m)), pts[pts != eye])
        return self

    def _redistribute_small(self, first: int, pts: list) -> None:
        """``_classify`` for a handful of orphaned points, in plain Python."""
        fn, fo, xyz, filt = self.fn, self.fo, self.xyz, self.filt
        planes = [(nx, ny, nz, o, g) for g, ((nx, ny, nz), o)
                  in enumerate(zip(fn[first:], fo[first:]), first)]
        groups: dict = {}
        for i in pts:
            x, y, z = xyz[i]
            best_d, best_g = -math.inf, -1
            for nx, ny, nz, o, g in planes:
                d = nx * x + ny * y + nz * z - o
                if d > best_d:
                    best_d, best_g = d, g
                    if d > filt:
                        break  # the first face it is clearly above will do
            if best_d <= filt:
                if best_d < -filt:
                    continue
                if not self.exact:
                    self.near.append([i])
                    continue
                near = sorted(((nx * x + ny * y + nz * z - o, g) for nx, ny, nz, o, g in planes),
                              reverse=True)
                best_g = next((g for d, g in near if d >= -filt and self.above(g, i)), -1)
                if best_g < 0:
                    continue
            group = groups.get(best_g)
            if group is None:
                groups[best_g] = [best_d, i, [i]]
            else:
                group[2].append(i)
                if best_d > group[0]:
                    group[0], group[1] = best_d, i
        out, far, pending = self.out, self.far, self.pending
        for g, (d, top, members) in groups.items():
            out[g] = members
            far[g] = top
            heapq.heappush(pending, (-d, g))
            self.outside_points += len(members)
        self.outside += len(groups)

    def _horizon(self, f: int, eye_index: int):
        """Faces visible from the eye, and the horizon as ordered ``(a, b, h, slot)`` edges.

        ``a->b`` is an edge of a visible face whose neighbour ``h`` is not visible, and
        ``fnb[h][slot]`` points back across it. Depth first from ``f``; each entered face goes on
        with the edges after the one it was entered by, so the horizon comes out as one
        counter-clockwise cycle seen from the eye.
        """
        fv, fn, fo, fnb, filt = self.fv, self.fn, self.fo, self.fnb, self.filt
        ex, ey, ez = self.xyz[eye_index]
        seen = {f: True}
        visible = [f]
        horizon = []
        frames = [(f, iter((0, 1, 2)))]
        while frames:
            g, edges = frames[-1]
            k = next(edges, -1)
            if k < 0:
                frames.pop()
                continue
            h = fnb[g][k]
            vis = seen.get(h)
            if vis is None:
                nx, ny, nz = fn[h]
                d = nx * ex + ny * ey + nz * ez - fo[h]
                vis = d > filt or (d >= -filt and self.above(h, eye_index))
                seen[h] = vis
                if vis:
                    visible.append(h)
                    kin = fnb[h].index(g)
                    frames.append((h, iter(_NEXT_EDGES[kin])))
                    continue
            if not vis:
                tri = fv[g]
                horizon.append((tri[k], tri[k - 2], h, fnb[h].index(g)))
        return visible, horizon

    def result(self):
        """Sorted corner indices, faces (indices into q), their planes (unit normals, offsets)
        and the dropped near points."""
        alive = self.alive
        faces = np.array(list(compress(self.fv, alive)), dtype=np.intp)
        planes = np.array(list(compress(self.fn, alive))), np.array(list(compress(self.fo, alive)))
        return _corners(faces, len(self.q)), faces, planes, _near_points(self.near)


class _Batch:
    """The main loop in rounds over arrays, taken over from a ``_Builder`` once many faces have
    outside sets: each round adds the eyes of many faces at once.

    Faces are rows: ``fv[f] = (a, b, c)`` counter-clockwise seen from outside, unit normal
    ``fn[:, f]``, offset ``fo[f]``, neighbours ``fnb[f, k]`` across edge k (a->b, b->c, c->a);
    removed faces are only marked dead (``alive``), never reused. The outside points are
    ``active``, each with its face in ``pt_face``; ``far[f]`` is the farthest point above face f
    (-1: none), ``fard[f]`` its distance, and ``pending`` lists the faces that have one.

    A round is the Quickhull step done for many eyes at once (``_round``):

    1. every pending face proposes its farthest point as an eye, and the eyes whose visible
       regions share no face are chosen (``_choose``: the regions are flooded ring by ring for
       all eyes together, ``_flood``; the choice is a greedy independent set, ``_independent``);
    2. chosen eyes whose cones would meet concavely across a shared horizon edge are taken back
       (``_cones``), which leaves eyes that could have been added one after the other;
    3. each chosen eye's region is replaced by its cone (``_add_cones``) and the region's
       outside points are redistributed over that cone (``_redistribute``).

    Visibility, outside sets and near points follow ``_Builder`` exactly (same float filter,
    same exact predicates), so the hull is the same exact hull. Each round adds at least its
    best-ranked eye, so ``cap`` (N steps) bounds the rounds too.
    """

    def __init__(self, seq: "_Builder") -> None:
        self.q, self.filt, self.exact = seq.q, seq.filt, seq.exact
        # The coordinates and (below) the face normals one contiguous array per axis: gathers
        # and products of 1-D arrays take a quarter of the time of (k, 3) rows and einsum.
        self.rows = np.ascontiguousarray(seq.q.T)
        self.x, self.y, self.z = self.rows
        self.near = seq.near
        self.xyz, self.ints, self.verdicts = seq.xyz, seq.ints, seq.verdicts
        self.steps, self.cap = seq.steps, seq.cap
        self.rounds = 0
        self.nf = 0
        self.size = 0
        for name, (dtype, width) in _FACE_ROWS.items():
            setattr(self, name, np.empty((0, width) if width else 0, dtype=dtype))
        self.fn = np.empty((3, 0))
        nf = len(seq.fv)
        # (untouched rows cost no memory: room for the faces the outside points will likely
        # make saves copying the arrays as they double)
        self._reserve(2 * nf + FACES_PER_OUTSIDE_POINT * seq.outside_points)
        self._fresh_rows(0, nf)
        self.nf = nf
        self.fv[:nf] = seq.fv
        self.fn[:, :nf] = np.array(seq.fn).T
        self.fo[:nf] = seq.fo
        self.fnb[:nf] = seq.fnb
        self.alive[:nf] = seq.alive
        sets = [(f, o) for f, o in enumerate(seq.out) if o is not None and seq.alive[f]]
        self.active = np.zeros(0, dtype=np.intp)
        self.pt_face = np.zeros(0, dtype=np.intp)
        self.pending = np.array([f for f, _ in sets], dtype=np.intp)
        if sets:
            pts = np.concatenate([np.asarray(o, dtype=np.intp) for _, o in sets])
            face = np.repeat(self.pending, [len(o) for _, o in sets])
            self._keep(pts, face, self._heights(face, pts))

    def _reserve(self, extra: int) -> None:
        """Room for ``extra`` more faces (doubling). Rows past ``nf`` stay uninitialised until
        ``_fresh_rows``: filling the doubled arrays up front touched memory the build never
        reached (a tenth of the build time of a 100k-point sphere)."""
        need = self.nf + extra
        if need <= self.size:
            return
        size = max(need, 2 * self.size, 64)
        n = self.nf
        for name in _FACE_ROWS:
            old = getattr(self, name)
            arr = np.empty((size,) + old.shape[1:], dtype=old.dtype)
            arr[:n] = old[:n]
            setattr(self, name, arr)
        fn = np.empty((3, size))
        fn[:, :n] = self.fn[:, :n]
        self.fn = fn
        self.size = size

    def _fresh_rows(self, lo: int, hi: int) -> None:
        """Faces ``lo ... hi - 1`` start dead, with no outside set and the scratch reset."""
        self.alive[lo:hi] = False
        self.far[lo:hi] = -1
        self.fard[lo:hi] = -np.inf
        self.best[lo:hi] = _NO_RANK
        self.owner[lo:hi] = -1
        self.taken[lo:hi] = False

    point = _Builder.point
    orient = _Builder.orient
    above = _Builder.above

    def _heights(self, faces: np.ndarray, pts: np.ndarray) -> np.ndarray:
        """The float height of each point ``pts[i]`` above the plane of face ``faces[i]``."""
        nx, ny, nz = self.fn
        return _dot(nx.take(faces), ny.take(faces), nz.take(faces),
                    self.x.take(pts), self.y.take(pts), self.z.take(pts)) - self.fo.take(faces)

    def _keep(self, pts: np.ndarray, face: np.ndarray, dist: np.ndarray) -> None:
        """Add outside points (clearly above ``face``, by ``dist``) and update the farthest."""
        self.active = np.concatenate((self.active, pts))
        self.pt_face = np.concatenate((self.pt_face, face))
        np.maximum.at(self.fard, face, dist)
        top = dist == self.fard[face]
        self.far[face[top]] = pts[top]  # (any one of ties)

    # --- main loop --------------------------------------------------------------------------------
    def run(self) -> "_Batch":
        while len(self.pending):
            self.rounds += 1
            self._round()
        return self

    def _round(self) -> None:
        cand = self.pending
        # Farthest eyes first: rank 0 is always chosen, so every round makes progress.
        cand = cand[(-self.fard[cand]).argsort(kind="stable")]
        eyes = self.far[cand]
        owner, faces, win = self._choose(cand, eyes)
        cones = self._cones(owner, faces, eyes, win)  # (may take back a few eyes)
        keep = win[owner]
        owner, faces = owner[keep], faces[keep]
        # Each eye becomes a hull vertex and a point is an eye at most once: N steps at most.
        self.steps += int(np.count_nonzero(win))
        if self.steps > self.cap:
            raise QuickhullError(f"Quickhull exceeded its iteration cap ({self.cap} steps)")
        first = self.nf
        cone_start, cone_size = self._add_cones(win, cones)
        self.alive[faces] = False
        self._redistribute(owner, faces, eyes, cone_start, cone_size)
        fresh = first + (self.far[first:self.nf] >= 0).nonzero()[0]
        self.pending = np.concatenate((cand[self.alive[cand]], fresh))

    def _choose(self, cand: np.ndarray, eyes: np.ndarray):
        """The eyes to add this round and their visible regions: ``(owner, faces, win)``, every
        face a chosen eye sees with the eye's rank (its index in ``cand``), and which ranks won.

        Each eye sees its own face. The first ring (its three neighbours) is tested for every
        eye, and eyes are chosen on these partial regions; only the chosen ones' regions are
        flooded further (most end at the first ring), and chosen again on their full regions.
        Rank 0 wins both choices: every round adds an eye.
        """
        n = len(cand)
        stride = self.nf
        xyz = self.x.take(eyes), self.y.take(eyes), self.z.take(eyes)
        ranks = np.arange(n)
        e = ranks.repeat(3)
        h = self.fnb[cand].ravel()
        vis = self._sees(h, e, xyz, eyes)
        e, h = e[vis], h[vis]
        seer, seen = np.concatenate((ranks, e)), np.concatenate((cand, h))
        win = self._independent(seer, seen, n)
        grow = win[e]
        more_e, more_f = self._flood(e[grow], h[grow], 2 * (ranks * stride + cand)[win],
                                     xyz, eyes)
        keep = win[seer]
        seer, seen = seer[keep], seen[keep]
        if len(more_e):
            seer, seen = np.concatenate((seer, more_e)), np.concatenate((seen, more_f))
            win &= self._independent(seer, seen, n)
            keep = win[seer]
            seer, seen = seer[keep], seen[keep]
        return seer, seen, win

    def _independent(self, seer: np.ndarray, seen: np.ndarray, n: int) -> np.ndarray:
        """Which ranks to add: greedily in rank order, every eye that sees no face a better
        chosen eye sees (the rank-order greedy maximal independent set, in a few vectorised
        sweeps: each sweep chooses the eyes best on all their faces among those still in play,
        and puts out of play the eyes that share a face with them). Rank 0 is always chosen."""
        win = np.zeros(n, dtype=bool)
        live = np.ones(n, dtype=bool)
        best, taken = self.best, self.taken
        pe, pf = seer, seen
        while len(pe):
            np.minimum.at(best, pf, pe)
            chosen = live.copy()
            chosen[pe[best[pf] != pe]] = False
            best[pf] = _NO_RANK
            win |= chosen
            taken[pf[chosen[pe]]] = True
            live[pe[taken[pf]]] = False
            taken[pf] = False
            act = live[pe]
            pe, pf = pe[act], pf[act]
        return win

    def _flood(self, e: np.ndarray, f: np.ndarray, before: np.ndarray, xyz: tuple,
               eyes: np.ndarray) -> tuple:
        """Every further (rank, face) pair where the eye sees the face, beyond a ring ``(e, f)``
        of faces found visible (``before``: the keys of the ring before it): the visible
        regions flooded ring by ring, for all eyes at once."""
        fnb = self.fnb
        stride = self.nf
        seer, seen = [], []
        while len(e):
            front = 2 * (e * stride + f)
            # The next ring: the neighbours of the faces just found visible, less repeats and
            # less the faces found visible before -- those are in the last two rings (an edge
            # joins faces of the same or consecutive rings); faces found invisible may be met
            # again. One sort does both, with known keys as 2k and new ones as 2k + 1.
            s = np.concatenate((before, front, 2 * (e.repeat(3) * stride + fnb[f].ravel()) + 1))
            s.sort()
            fresh = (s & 1).astype(bool)
            fresh[1:] &= (s[1:] >> 1) != (s[:-1] >> 1)
            key = s[fresh] >> 1
            e, h = key // stride, key % stride
            before = front
            vis = self._sees(h, e, xyz, eyes)
            e, f = e[vis], h[vis]
            seer.append(e)
            seen.append(f)
        if not seer:
            return seer, seen
        return np.concatenate(seer), np.concatenate(seen)

    def _sees(self, h: np.ndarray, e: np.ndarray, xyz: tuple, eyes: np.ndarray) -> np.ndarray:
        """Does the eye of rank ``e[i]`` (at ``xyz[:][e[i]]``) see face ``h[i]``? (exact)"""
        nx, ny, nz = self.fn
        ex, ey, ez = xyz
        dist = (_dot(nx.take(h), ny.take(h), nz.take(h), ex.take(e), ey.take(e), ez.take(e))
                - self.fo.take(h))
        vis = dist > self.filt
        unsure = (abs(dist) <= self.filt).nonzero()[0]
        if len(unsure):
            vis[unsure] = self._above_many(h[unsure], eyes[e[unsure]])
        return vis

    def _above_many(self, faces: np.ndarray, pts: np.ndarray) -> np.ndarray:
        """``above`` for many (face, point) pairs: extended precision, then ``above``'s exact
        integers for what it leaves undecided."""
        tri = self.fv[faces]
        signs = orient_signs(self.rows, tri[:, 0], tri[:, 1], tri[:, 2], pts)
        for r in (signs == UNDECIDED).nonzero()[0].tolist():
            signs[r] = 1 if self.above(int(faces[r]), int(pts[r])) else -1
        return signs > 0

    def _cones(self, owner, faces, eyes, win):
        """The horizon edges of the winners' regions and the planes of the cone faces over them,
        grouped by rank, after taking back (in ``win``) the eyes whose cones would meet
        concavely.

        The horizon of a region is the set of its edges whose face across is not in it. Two
        regions may share horizon edges: the two cone faces over such an edge become neighbours,
        which keeps the hull convex only if neither eye is above the other's face (then neither
        sees the other's cone, and adding both equals adding one after the other). Where one is
        above, the worse-ranked eye waits for a later round.
        """
        q, fv, x, y, z = self.q, self.fv, self.x, self.y, self.z
        owned = self.owner
        owned[faces] = owner
        nb = self.fnb[faces]
        rows, ks = (owned[nb] != owner[:, None]).nonzero()
        h = nb[rows, ks]
        other = owned[h]
        owned[faces] = -1
        he, g = owner[rows], faces[rows]
        a, b = fv[g, ks], fv[g, NEXT_VERTEX[ks]]
        # The cone face over horizon edge a->b keeps its orientation, apex at the eye. Its
        # normal is (a - eye) x (b - eye), the same as (b - a) x (eye - a).
        apex = eyes[he]
        px, py, pz = x.take(apex), y.take(apex), z.take(apex)
        ux, uy, uz = x.take(a) - px, y.take(a) - py, z.take(a) - pz
        vx, vy, vz = x.take(b) - px, y.take(b) - py, z.take(b) - pz
        nrm = np.stack((uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx))
        nx, ny, nz = nrm
        area2 = np.sqrt(nx * nx + ny * ny + nz * nz)  # (in order: see _dot)
        sliver = area2 < EXACT_NORMAL_SIN * np.sqrt(_dot(ux, uy, uz, ux, uy, uz)
                                                    * _dot(vx, vy, vz, vx, vy, vz))
        if sliver.any():
            # Slivers: the rounded cross product has lost its direction. Extended precision
            # restores it for most (many at once: the rims of a finely divided cylinder are
            # all slivers), integers for the rest.
            rows = sliver.nonzero()[0]
            area2[rows] = 1.0
            if LONG_FILTER:
                pl = q[apex[rows]].astype(LONG)
                ul, vl = q[a[rows]] - pl, q[b[rows]] - pl
                nl = ul[:, NEXT_VERTEX] * vl[:, PREV_VERTEX] \
                    - ul[:, PREV_VERTEX] * vl[:, NEXT_VERTEX]
                length = np.sqrt((nl * nl).sum(axis=1))
                good = length >= LONG_NORMAL_SIN * np.sqrt((ul * ul).sum(axis=1)
                                                           * (vl * vl).sum(axis=1))
                nrm[:, rows[good]] = (nl[good] / length[good, None]).astype(float).T
                rows = rows[~good]
            for r in rows.tolist():
                nrm[:, r] = _unit_normal(self.point(int(a[r])), self.point(int(b[r])),
                                         self.point(int(apex[r])))
        nrm /= area2
        # through the centroid (averages the rounding of the three vertices)
        off = (nx * (px + (ux + vx) / 3.0) + ny * (py + (uy + vy) / 3.0)
               + nz * (pz + (uz + vz) / 3.0))
        shared = (other >= 0).nonzero()[0]
        if len(shared):
            rival = eyes[other[shared]]
            dist = _dot(nx[shared], ny[shared], nz[shared],
                        x.take(rival), y.take(rival), z.take(rival)) - off[shared]
            concave = dist > self.filt
            unsure = (abs(dist) <= self.filt).nonzero()[0]
            if len(unsure):
                s = shared[unsure]
                signs = orient_signs(self.rows, a[s], b[s], apex[s], rival[unsure])
                for r, sign in zip(unsure.tolist(), signs.tolist()):
                    if sign == UNDECIDED:
                        sr = shared[r]
                        sign = self.orient(int(a[sr]), int(b[sr]), int(apex[sr]), int(rival[r]))
                    concave[r] = sign > 0
            if concave.any():
                win[np.maximum(he[shared[concave]], other[shared[concave]])] = False
                keep = win[he]
                he, g, h, other, a, b, apex, off = (
                    t[keep] for t in (he, g, h, other, a, b, apex, off))
                nrm = nrm[:, keep]
                other[(other >= 0) & ~win[np.maximum(other, 0)]] = -1  # h stays after all
        return he, g, h, other, a, b, apex, nrm, off

    def _add_cones(self, win, cones):
        """Replace each winner's visible faces by the cone from its horizon to its eye.

        In exact arithmetic a horizon is one simple cycle (the visible region of a convex
        polytope is a disc): checked here as far as cheap -- every vertex starts one horizon
        edge of a region and ends one -- and the whole hull's Euler characteristic at the end.
        Returns, per rank, the first new face id and the cone's size (new faces are numbered in
        rank order).
        """
        he, g, h, other, a, b, apex, nrm, off = cones
        m = len(he)
        size = np.bincount(he, minlength=len(win))
        start = size.cumsum() - size
        # The next cone face is the one whose horizon edge starts where this one ends.
        stride = len(self.q)
        key = he * stride + a
        korder = key.argsort()
        sorted_key = key[korder]
        target = he * stride + b
        pos = np.minimum(sorted_key.searchsorted(target), m - 1)
        if (sorted_key[1:] == sorted_key[:-1]).any() or (sorted_key[pos] != target).any():
            raise QuickhullError("the horizon of an eye point is not a simple cycle")
        nxt = korder[pos]
        prev = np.empty(m, dtype=np.intp)
        prev[nxt] = np.arange(m)
        # New faces in rank order (the horizon edges come grouped by rank, not sorted).
        slot_of = np.empty(m, dtype=np.intp)
        slot_of[he.argsort(kind="stable")] = np.arange(m)
        kept = other < 0
        across_kept, g_kept = self.fnb[h[kept]].T, g[kept]
        back = (across_kept[1] == g_kept) + 2 * (across_kept[2] == g_kept)  # h's slot facing g
        fstride = self.nf
        self._reserve(m)
        self._fresh_rows(self.nf, self.nf + m)
        fv, fnb = self.fv, self.fnb  # (reallocated if they grew)
        new = self.nf + slot_of
        self.nf += m
        across = h.copy()
        if not kept.all():
            # across an edge two regions share: the other eye's cone face over b->a
            shared = (~kept).nonzero()[0]
            pair = g[shared] * fstride + h[shared]
            porder = pair.argsort()
            mate = shared[porder[pair[porder].searchsorted(h[shared] * fstride + g[shared])]]
            across[shared] = new[mate]
        fv[new, 0], fv[new, 1], fv[new, 2] = a, b, apex
        self.fn[:, new] = nrm
        self.fo[new] = off
        # across a->b: the kept neighbour (or the other cone); b->eye: the next cone face;
        # eye->a: the previous one
        fnb[new, 0], fnb[new, 1], fnb[new, 2] = across, new[nxt], new[prev]
        fnb[h[kept], back] = new[kept]
        self.alive[new] = True
        return self.nf - m + start, size

    def _redistribute(self, owner, faces, eyes, cone_start, cone_size) -> None:
        """Give the outside points of the removed ``faces`` to the cone of the same eye.

        A point above a removed face and above no face of its cone is inside the new hull: the
        segment from the eye to a point beyond the hull (inside the cone) would cross the old
        hull, which lies below the removed face, while both ends are above it. Cones of other
        eyes need no test: they only replace faces this eye does not see.
        """
        gone = ~self.alive[self.pt_face]
        if not gone.any():
            return
        pts, old = self.active[gone], self.pt_face[gone]
        stay = ~gone
        self.active, self.pt_face = self.active[stay], self.pt_face[stay]
        self.owner[faces] = owner
        pe = self.owner[old]
        self.owner[faces] = -1
        keep = pts != eyes[pe]
        pts, pe = pts[keep], pe[keep]
        if not len(pts):
            return
        size = cone_size[pe]
        if len(pts) >= GROUPED_MIN_POINTS:
            order = _stable_order(size)
            pts, pe, size = pts[order], pe[order], size[order]
        xyz = self.x.take(pts), self.y.take(pts), self.z.take(pts)
        face, top = _farthest_faces(xyz, cone_start[pe], size, self.fn, self.fo)
        filt = self.filt
        sure = top > filt
        unsure = (~sure & (top >= -filt)).nonzero()[0]
        if len(unsure) and not self.exact:
            self.near.append(pts[unsure])  # within rounding of a plane: dropped, checked later
        elif len(unsure):
            # Near a plane: try the faces the point might be above, nearest-above first.
            for r in unsure.tolist():
                i = int(pts[r])
                cone = cone_start[pe[r]] + np.arange(cone_size[pe[r]])
                d = self.q[i] @ self.fn[:, cone] - self.fo[cone]
                for j in np.argsort(-d).tolist():
                    if d[j] < -filt:
                        break
                    if self.above(int(cone[j]), i):
                        sure[r], face[r], top[r] = True, cone[j], d[j]
                        break
        self._keep(pts[sure], face[sure], top[sure])

    def result(self):
        """Sorted corner indices, faces (indices into q), their planes (unit normals, offsets)
        and the dropped near points."""
        live = self.alive[:self.nf].nonzero()[0]
        faces = self.fv[live]
        return (_corners(faces, len(self.q)), faces, (self.fn[:, live].T, self.fo[live]),
                _near_points(self.near))


def _farthest_faces(xyz: tuple, start: np.ndarray, size: np.ndarray, fn: np.ndarray,
                    fo: np.ndarray) -> tuple:
    """For each point ``(x[i], y[i], z[i])`` of ``xyz``, the face of ``start[i] ... start[i] +
    size[i] - 1`` it is farthest above, and how far: ``(face, distance)`` (ties: any one).
    ``fn`` holds the faces' normals one row per axis. Large inputs must come sorted by ``size``
    (see GROUPED_MIN_POINTS)."""
    x, y, z = xyz
    nx, ny, nz = fn
    n = len(x)
    if n >= GROUPED_MIN_POINTS:
        # Face k of every range at once, for the points whose range has more than k faces:
        # sorted by size, those are a suffix. (Points in rows of their range's faces, one
        # einsum per size, took three times as long: gathers of (k, 3) rows are slow.)
        more = n - np.bincount(size).cumsum()  # more[k]: how many ranges have over k faces
        face = start.copy()
        top = _dot(nx.take(face), ny.take(face), nz.take(face), x, y, z) - fo.take(face)
        for k in range(1, len(more) - 1):
            lo = n - int(more[k])
            f = start[lo:] + k
            d = _dot(nx.take(f), ny.take(f), nz.take(f), x[lo:], y[lo:], z[lo:]) - fo.take(f)
            better = d > top[lo:]  # (ties: the first face, as argmax)
            np.copyto(top[lo:], d, where=better)
            np.copyto(face[lo:], f, where=better)
        return face, top
    # every point against every face of its range, as one flat list of pairs
    row = size.cumsum() - size
    pair_face = (start - row).repeat(size) + np.arange(int(row[-1] + size[-1]))
    pair_point = np.arange(n).repeat(size)
    dist = _dot(nx.take(pair_face), ny.take(pair_face), nz.take(pair_face),
                x.take(pair_point), y.take(pair_point), z.take(pair_point)) - fo.take(pair_face)
    top = np.maximum.reduceat(dist, row)
    at = (dist == top.take(pair_point)).nonzero()[0]
    face = np.empty(n, dtype=np.intp)
    face[pair_point[at]] = pair_face[at]
    return face, top


def _dot(ax, ay, az, bx, by, bz):
    """``a . b`` for many vectors given one array per axis, summed as (x + z) + y: the order in
    which numpy's einsum summed these products over contiguous (k, 3) rows before (over strided
    rows it summed in order, as the cone normals' lengths and offsets still do). The same float
    distances choose the same eyes and break the same ties, so the hull, down to the triangles
    of exactly coplanar facets, is the one it was."""
    return ax * bx + az * bz + ay * by


def _stable_order(size: np.ndarray) -> np.ndarray:
    """``size.argsort(kind="stable")`` for small non-negative integers: a radix sort once they
    are cast to 16 bits (0.7 ms for 300k against 11 ms for 64-bit integers)."""
    if int(size.max()) < 1 << 16:
        size = size.astype(np.uint16)
    return size.argsort(kind="stable")


def _corners(faces: np.ndarray, n: int) -> np.ndarray:
    """The sorted distinct point indices of ``faces`` (of points ``0 ... n - 1``)."""
    return np.bincount(faces.ravel(), minlength=n).nonzero()[0]


def _near_points(near: list) -> np.ndarray:
    """The sorted distinct indices in a list of index lists and arrays."""
    return np.unique(np.concatenate([np.asarray(n, dtype=np.intp) for n in near]
                                    or [np.zeros(0, dtype=np.intp)]))


# --- cleanup -------------------------------------------------------------------------------------

def _removable(q: np.ndarray, corners: np.ndarray, faces: np.ndarray, normals: np.ndarray,
               tol: float, rounding: float) -> np.ndarray:
    """Per corner: may it go, being within ``tol`` of the convex hull of its neighbours?

    Cheap bound first: for any unit direction d, the distance from v to the hull of its
    neighbours u is at least min over u of d . (v - u). With d the sum of v's face normals (inside
    its normal cone) that bound clears every true corner of an ordinary hull at once. The few
    left are measured against triangles of neighbours: each neighbour with each edge of the link
    (the polygon of neighbours), which contain v when v is mid-face or mid-edge.

    Vertices within ``rounding`` all go (they are on their neighbours' hull). Of those merely
    within ``tol``, no two neighbours go in one pass: each then keeps its whole neighbourhood, so
    it stays within ``tol`` of the rebuilt hull (a close pair on a circle must lose one point, not
    both).
    """
    local = _renumbered(corners, faces)
    m = len(corners)
    src = local.ravel()
    dst = local[:, NEXT_VERTEX].ravel()  # directed edges a->b, b->c, c->a
    # (one coordinate at a time: 1-D gathers and products)
    cx, cy, cz = (np.bincount(src, weights=c.repeat(3), minlength=m) for c in normals.T)
    length = np.maximum(np.sqrt(cx * cx + cy * cy + cz * cz), np.finfo(float).tiny)
    cx, cy, cz = cx / length, cy / length, cz / length
    qc = q[corners]
    x, y, z = qc.T
    drop = (cx[src] * (x[src] - x[dst]) + cy[src] * (y[src] - y[dst])
            + cz[src] * (z[src] - z[dst]))
    removable = np.zeros(m, dtype=bool)
    suspect = np.zeros(m, dtype=bool)
    suspect[src[drop <= tol]] = True  # (their bound, the least drop to a neighbour, is <= tol)
    suspects = suspect.nonzero()[0]
    if len(suspects) == 0:
        return removable
    # the link edge of each corner of each face is the face's opposite edge
    link_a = dst
    link_b = local[:, PREV_VERTEX].ravel()
    order = np.argsort(src, kind="stable")
    bounds = np.searchsorted(src[order], np.arange(m + 1))
    near = []
    for v in suspects.tolist():
        rows = order[bounds[v]:bounds[v + 1]]
        ea, eb = link_a[rows], link_b[rows]
        nbrs = np.unique(ea)
        tri_a = np.repeat(nbrs, len(ea))
        tri_b = np.tile(ea, len(nbrs))
        tri_c = np.tile(eb, len(nbrs))
        dist = _point_triangles_distance(qc[v], qc[tri_a], qc[tri_b], qc[tri_c])
        if dist <= rounding:
            removable[v] = True
        elif dist <= tol:
            near.append((dist, v, nbrs))
    blocked = set()
    for _, v, nbrs in sorted(near, key=lambda t: t[0]):  # the closest to their neighbours first
        nb = nbrs.tolist()
        if v not in blocked and not any(removable[u] for u in nb):
            removable[v] = True
            blocked.update(nb)
    return removable


def _point_triangles_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """Distance from ``p`` to the nearest of the triangles (a[i], b[i], c[i]) (any may be flat)."""
    best = np.inf
    for s, t in ((a, b), (b, c), (c, a)):
        e = t - s
        ee = np.einsum("ij,ij->i", e, e)
        u = np.clip(np.einsum("ij,ij->i", p - s, e) / np.where(ee > 0.0, ee, 1.0), 0.0, 1.0)
        best = min(best, float(np.min(np.linalg.norm(p - s - u[:, None] * e, axis=1))))
    n = np.cross(b - a, c - a)
    inside = np.ones(len(a), dtype=bool)
    for s, t in ((a, b), (b, c), (c, a)):  # the projection of p is left of every edge
        inside &= np.einsum("ij,ij->i", np.cross(t - s, p - s), n) >= 0.0
    nn = np.linalg.norm(n, axis=1)
    inside &= nn > 0.0
    if inside.any():
        h = np.abs(np.einsum("ij,ij->i", p - a[inside], n[inside])) / nn[inside]
        best = min(best, float(np.min(h)))
    return best


def _renumbered(corners: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """``faces`` (indices of points) as indices into the sorted ``corners``."""
    lookup = np.empty(int(corners[-1]) + 1, dtype=np.intp)
    lookup[corners] = np.arange(len(corners))
    return lookup[faces]


def _height_above(q: np.ndarray, planes: tuple, pts: np.ndarray) -> np.ndarray:
    """How far above the closed hull's face ``planes`` each of ``pts`` lies (<= 0: inside)."""
    normals, offsets = planes
    out = np.full(len(pts), -np.inf)
    rows = min(len(pts), HEIGHT_BLOCK_ROWS)
    cols = max(HEIGHT_BLOCK_ROWS, HEIGHT_BLOCK // max(rows, 1))
    for s in range(0, len(pts), rows):
        chunk = q[pts[s:s + rows]]
        for t in range(0, len(offsets), cols):
            block = chunk @ normals[t:t + cols].T - offsets[t:t + cols]
            np.maximum(out[s:s + rows], block.max(axis=1), out=out[s:s + rows])
    return out


# --- output --------------------------------------------------------------------------------------

def _package(p: np.ndarray, hull, tol: float) -> HullData:
    dim, corners, extra = hull[:3]
    corners = np.asarray(corners, dtype=np.intp)
    vertices = p[corners].copy()
    m = len(corners)
    if dim == 3:
        faces = _renumbered(corners, extra)
        src = faces.ravel()
        dst = faces[:, NEXT_VERTEX].ravel()
        # each vertex's neighbours (the heads of its out-edges), in increasing order
        # (Timsort: the keys are distinct, and triangles that share a vertex tend to come
        # together, which leaves runs it merges: half the time of the default sort on a mesh.)
        dl = dst[(src * m + dst).argsort(kind="stable")].tolist()
        bl = np.cumsum(np.bincount(src, minlength=m)).tolist()
        adjacency = tuple(map(tuple, map(dl.__getitem__, map(slice, [0] + bl[:-1], bl))))
        return HullData(vertices, faces, adjacency, 3, None, tol, corners)
    if dim == 2:
        faces = np.array([(0, i, i + 1) for i in range(1, m - 1)], dtype=np.intp).reshape(-1, 3)
        adjacency = tuple(((i - 1) % m, (i + 1) % m) for i in range(m))
        return HullData(vertices, faces, adjacency, 2, np.asarray(extra, dtype=float), tol, corners)
    faces = np.zeros((0, 3), dtype=np.intp)
    adjacency = ((1,), (0,)) if dim == 1 else ((),)
    return HullData(vertices, faces, adjacency, dim, None, tol, corners)
