"""The hull of a mesh given with its triangles: a convex mesh is its own hull.

A closed, consistently oriented triangle mesh that is locally convex at every edge and every
vertex bounds a convex body: a compact connected surface that is locally convex everywhere (and
strictly convex somewhere, as any corner is) is the boundary of a convex body (Hadamard; van
Heijenoort for surfaces that are not smooth). Most game props -- UV spheres, cylinders, boxes,
bevelled crates -- are such meshes, and certifying one takes a few dozen array operations over
its edges instead of a Quickhull. The steps:

1. *Topology*: every point is a vertex of some triangle; every directed edge occurs once and its
   reverse once (closed, consistently oriented); V - E + F == 2 (one shell: every shell of a
   locally convex surface is a sphere, so a second one would count 4).
2. *Edges*: the far vertex of the triangle across each edge lies on or below the plane of the
   other one, decided exactly (``quickhull``'s predicates: float filter, extended precision,
   integers). An edge that is only slightly concave (``FLIP_MAX_RISE``) is most likely a quad
   split along its concave diagonal -- half the quads of a UV sphere once rounding has moved
   their corners off their plane, a fixed share of a subdivided cube's, which are not planar:
   it is flipped and the edges are checked again. Flipping never makes a wrong hull -- a closed
   convex surface through all the points is their hull, whichever way it was reached -- it only
   costs a pass when it fails. An edge concave by more is a dent: not convex.
3. *Vertices*: the triangles around each vertex must wind once around it, seen from inside
   (from the centroid of the points). Convex edges alone allow a vertex covered twice (a
   branched double cover of a convex polyhedron has convex edges everywhere) or two fans
   pinched together at one vertex.
4. *Corners*: an edge whose triangles are exactly coplanar is flat. A vertex is a corner unless
   it has no crease around it (inside a flat face) or two (in the middle of a straight edge; two
   planes meet along one line, so two creases continue each other). Flat regions holding such
   vertices are re-triangulated as fans over their corners, as the hull output expects.

Anything that fails gives the reason instead of a hull, and ``convex_hull`` runs Quickhull.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from .predicates import (NEXT_VERTEX, PREV_VERTEX, UNDECIDED, ORIENT_ERRBOUND, orient,
                        orient_signs)

# An edge is flipped (step 2) if the far vertex rises above the plane of the triangle across by at
# most this fraction of the edge's length, else the mesh is taken as not convex at once. Quads
# split along the concave diagonal rise by ~1e-7 when they are planar but rounded to float32
# (Blender's coordinates), up to 0.02 on a bevelled or subdivided cube (their quads are not
# planar) -- while the lumps of a noisy or sculpted surface rise by tenths.
FLIP_MAX_RISE = 0.1
# Edge-flip passes (step 2): one flips every concave diagonal of quads that share no triangle,
# the next confirms (or flips the few that had to wait). A pass that leaves as many concave
# edges as the one before ends them early: the mesh is not convex (a dent is never flipped away:
# its vertex stays below the hull of the others). Meshes whose near-flat regions need flips
# cascading further (a rotated, finely subdivided box face, where rounding scatters the grid
# off its plane) are left to Quickhull, which also drops the grid points rounding put below the
# hull.
FLIP_PASS_CAP = 6
# Step 3 trusts a triangle's float normal only if its component along the direction from the
# centroid to the vertex exceeds this (as a cosine): far above the ~1e-15 rounding of either
# vector, so "winds once" is never decided by rounding. It is the height of the triangle's plane
# above the centroid over the vertex's distance from it: only meshes flatter than a millionth of
# their size fail it, and go to Quickhull.
WINDING_MIN_COS = 1e-6
# A triangle's float cross product must exceed this fraction of |u||v| (the product of its two
# edge lengths): below it the direction of its normal is rounding, and a triangle of no area
# leaves its edges' convexity undecided. Such meshes go to Quickhull.
SLIVER_SIN = 1e-9


class MeshVerdict(enum.Enum):
    """Why a mesh was (not) taken as its own hull."""
    CONVEX = "convex"                     # certified: the mesh, re-triangulated, is the hull
    LOOSE_VERTICES = "loose vertices"     # a point is on no triangle
    DEGENERATE = "degenerate triangle"    # repeated index or (nearly) no area
    OPEN = "open or inconsistently oriented"
    NOT_ONE_SHELL = "not one closed shell of genus 0"
    CONCAVE_EDGE = "concave edge"
    UNFLIPPABLE = "slightly concave edges that flips do not make convex"
    VERTEX_NOT_CONVEX = "a vertex is not locally convex"


def convex_mesh_hull(q: np.ndarray, tris: np.ndarray):
    """``(hull, verdict)``: for a convex closed mesh, ``hull == (corners, faces, planes)`` as
    ``quickhull`` builds them (sorted corner indices into ``q``, outward counter-clockwise
    triangles over the corners, their unit normals and offsets); otherwise ``(None, reason)``."""
    n, nf = len(q), len(tris)
    if np.bincount(tris.ravel(), minlength=n).min() == 0:
        return None, MeshVerdict.LOOSE_VERTICES
    t0, t1, t2 = tris.T
    if ((t0 == t1) | (t1 == t2) | (t2 == t0)).any():
        return None, MeshVerdict.DEGENERATE
    edges = _twins(tris, n)
    if edges is None:
        return None, MeshVerdict.OPEN
    twin, edge_keys = edges
    if nf != 2 * n - 4:  # V - E + F == 2 with 2E == 3F
        return None, MeshVerdict.NOT_ONE_SHELL
    xyz = np.ascontiguousarray(q.T)  # (one contiguous array per coordinate: cheaper gathers)
    # The sign of each edge's orientation test, stored on both of its half-edges; after flips
    # only the edges of the changed triangles are tested again.
    sign = np.empty(3 * nf, dtype=np.intp)
    once = np.arange(3 * nf) < twin  # each edge once, by its lower half-edge
    todo = once.nonzero()[0]
    before = len(todo) + 1
    for _ in range(FLIP_PASS_CAP):
        src, dst, apex = _ends(tris)
        s, rise = _edge_signs(xyz, src[todo], dst[todo], apex[todo], apex[twin[todo]])
        sign[todo] = sign[twin[todo]] = s
        if (rise[s > 0] > FLIP_MAX_RISE).any():
            return None, MeshVerdict.CONCAVE_EDGE
        concave = ((sign > 0) & once).nonzero()[0]
        if not len(concave):
            break
        if len(concave) >= before:
            return None, MeshVerdict.UNFLIPPABLE
        before = len(concave)
        flips = _flipped(tris, n, concave, src, dst, apex, twin, edge_keys)
        if flips is None:  # a new diagonal would be an edge twice
            return None, MeshVerdict.UNFLIPPABLE
        tris, twin, f, g = flips
        edge_keys = None  # (stale now: a later pass pairs its half-edges from scratch)
        once = np.arange(3 * nf) < twin
        # The new diagonals are convex: orient(d, c, a, b) == -orient(a, b, c, d) (an odd
        # permutation). The other edges of the flipped triangles are tested again.
        sign[3 * f + 1] = sign[3 * g + 1] = -1
        half = np.concatenate((3 * f, 3 * f + 2, 3 * g, 3 * g + 2))
        again = np.zeros(3 * nf, dtype=bool)
        again[np.minimum(half, twin[half])] = True
        todo = again.nonzero()[0]
    else:
        return None, MeshVerdict.UNFLIPPABLE
    planes = _planes(xyz, tris)
    if planes is None:
        return None, MeshVerdict.DEGENERATE
    if not _vertices_wind_once(xyz, (src, dst, apex), planes[0], planes[1]):
        return None, MeshVerdict.VERTEX_NOT_CONVEX
    # Creases: edges whose triangles are not coplanar, counted at both ends (each half-edge
    # counts at its start).
    crease = sign != 0
    creases = np.bincount(src[crease], minlength=n)
    if (creases == 1).any():  # impossible on a convex surface: a bug, not the input's fault
        return None, MeshVerdict.VERTEX_NOT_CONVEX
    corner = creases >= 3
    if not corner.all():
        tris = _without_non_corners(tris, corner, ~crease, twin, src, dst)
        if tris is None:  # (a region's boundary is not one cycle: impossible when convex)
            return None, MeshVerdict.VERTEX_NOT_CONVEX
        planes = _planes(xyz, tris)
        if planes is None:
            return None, MeshVerdict.DEGENERATE
    corners = corner.nonzero()[0]
    if len(tris) != 2 * len(corners) - 4:
        return None, MeshVerdict.NOT_ONE_SHELL  # (cannot happen: the regions are discs)
    normals, _, offsets = planes
    return (corners, tris, (normals.T.copy(), offsets)), MeshVerdict.CONVEX


def _twins(tris: np.ndarray, n: int):
    """``(twin, keys)``: the reverse of each half-edge ``3 f + k`` (edge k of triangle f, from
    its vertex k to vertex k + 1), and the sorted keys ``min * n + max`` of the edges; None
    unless every edge is one half-edge each way (closed, manifold at its edges, consistently
    oriented)."""
    if len(tris) % 2:
        return None  # (3F half-edges in pairs)
    src = tris.ravel()
    dst = tris[:, NEXT_VERTEX].ravel()
    # Sorted by undirected edge, the two halves of each edge come out side by side.
    key = np.minimum(src, dst) * n + np.maximum(src, dst)
    order = key.argsort(kind="stable")  # (timsort: a mesh's triangle order leaves long runs)
    first, second = order[0::2], order[1::2]
    k1, k2 = key[first], key[second]
    if (k1 != k2).any() or (k2[:-1] == k1[1:]).any() or (src[first] == src[second]).any():
        return None
    twin = np.empty_like(order)
    twin[first], twin[second] = second, first
    return twin, k1


def _ends(tris: np.ndarray):
    """``(src, dst, apex)`` of each half-edge: its start, its end and the triangle's third
    vertex."""
    return tris.ravel(), tris[:, NEXT_VERTEX].ravel(), tris[:, PREV_VERTEX].ravel()


def _edge_signs(xyz: np.ndarray, a, b, c, d):
    """``(sign, rise)``: the exact sign of ``orient(a, b, c, d)`` (+1: d above the plane of
    triangle a, b, c) for many quadruples, and d's float height above that plane divided by
    the length of a-b."""
    x, y, z = xyz
    ax, ay, az = x[a], y[a], z[a]
    ux, uy, uz = x[b] - ax, y[b] - ay, z[b] - az
    vx, vy, vz = x[c] - ax, y[c] - ay, z[c] - az
    wx, wy, wz = x[d] - ax, y[d] - ay, z[d] - az
    # u x v term by term, for the determinant and its permanent (the rounding bound)
    p0, m0 = uy * vz, uz * vy
    p1, m1 = uz * vx, ux * vz
    p2, m2 = ux * vy, uy * vx
    nx, ny, nz = p0 - m0, p1 - m1, p2 - m2
    det = wx * nx + wy * ny + wz * nz
    permanent = (abs(wx) * (abs(p0) + abs(m0)) + abs(wy) * (abs(p1) + abs(m1))
                 + abs(wz) * (abs(p2) + abs(m2)))
    sign = np.sign(det).astype(np.intp)
    rest = (abs(det) <= ORIENT_ERRBOUND * permanent).nonzero()[0]
    if len(rest):
        q = xyz.T
        sign[rest] = orient_signs(xyz, a[rest], b[rest], c[rest], d[rest])
        undecided = rest[sign[rest] == UNDECIDED]
        if len(undecided):
            pts = [map(tuple, q[i[undecided]].tolist()) for i in (a, b, c, d)]
            sign[undecided] = [orient(*quad) for quad in zip(*pts)]
    rise = np.zeros(len(sign))
    up = (sign > 0).nonzero()[0]
    if len(up):
        scale = np.sqrt((nx[up] ** 2 + ny[up] ** 2 + nz[up] ** 2)
                        * (ux[up] ** 2 + uy[up] ** 2 + uz[up] ** 2))
        # (a sliver's cross product may round to zero: a steep or undefined rise is a dent or
        # a flip attempt, both safe)
        with np.errstate(divide="ignore", invalid="ignore"):
            rise[up] = det[up] / scale
    return sign, rise


def _flipped(tris, n, concave, src, dst, apex, twin, edge_keys):
    """``(tris, twin, f, g)`` with the concave edges flipped, as many as share no triangle (the
    rest wait for the next pass): the triangles, their half-edge pairing, and the two triangles
    of each flip -- ``f`` is now (a, d, c) and ``g`` (b, c, d), so that their edges 1 are the
    new diagonal d-c and c-d. None if a new diagonal would be an edge twice. ``edge_keys`` are
    ``_twins``'s sorted keys of the edges before (None if stale: then the pairing is redone)."""
    f, g = concave // 3, twin[concave] // 3
    claim = np.full(len(tris), len(twin), dtype=np.intp)
    np.minimum.at(claim, f, concave)
    np.minimum.at(claim, g, concave)
    mine = (claim[f] == concave) & (claim[g] == concave)
    e, f, g = concave[mine], f[mine], g[mine]
    t = twin[e]
    a, b = src[e], dst[e]
    c, d = apex[e], apex[t]
    # Triangles (a, b, c) and (b, a, d) around the quad a -> d -> b -> c become (a, d, c) and
    # (b, c, d): the quad's four edges keep their directions, the diagonal turns.
    out = tris.copy()
    out[f] = np.stack((a, d, c), axis=1)
    out[g] = np.stack((b, c, d), axis=1)
    if edge_keys is None:
        edges = _twins(out, n)
        return None if edges is None else (out, edges[0], f, g)
    new_keys = np.minimum(c, d) * n + np.maximum(c, d)
    pos = np.minimum(edge_keys.searchsorted(new_keys), len(edge_keys) - 1)
    ordered = np.sort(new_keys)
    if (edge_keys[pos] == new_keys).any() or (ordered[1:] == ordered[:-1]).any():
        return None
    # The pairing moves with the half-edges: b->c (was after e in f) is now g's edge 0, c->a
    # f's edge 2, a->d (after t in g) f's edge 0, d->b g's edge 2; the diagonals pair up.
    e1, e2 = 3 * f + (e + 1) % 3, 3 * f + (e + 2) % 3
    t1, t2 = 3 * g + (t + 1) % 3, 3 * g + (t + 2) % 3
    moved = np.arange(len(twin))
    moved[e1], moved[e2], moved[t1], moved[t2] = 3 * g, 3 * f + 2, 3 * f, 3 * g + 2
    keep = np.ones(len(twin), dtype=bool)
    keep[e] = keep[t] = False
    h = keep.nonzero()[0]
    paired = np.empty_like(twin)
    paired[moved[h]] = moved[twin[h]]
    paired[3 * f + 1], paired[3 * g + 1] = 3 * g + 1, 3 * f + 1
    return out, paired, f, g


def _planes(xyz: np.ndarray, tris: np.ndarray):
    """``(normals, area2, offsets)``: the triangles' float unit normals (3, F), the lengths of
    their cross products and their planes' offsets (through the centroids, which averages the
    rounding of the three corners); None if a triangle is too thin to trust (``SLIVER_SIN``)."""
    x, y, z = xyz
    i, j, k = tris.T
    xi, yi, zi = x[i], y[i], z[i]
    xj, yj, zj = x[j], y[j], z[j]
    xk, yk, zk = x[k], y[k], z[k]
    ux, uy, uz = xj - xi, yj - yi, zj - zi
    vx, vy, vz = xk - xi, yk - yi, zk - zi
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    length = np.sqrt(nx * nx + ny * ny + nz * nz)
    if not (length > SLIVER_SIN * np.sqrt((ux * ux + uy * uy + uz * uz)
                                          * (vx * vx + vy * vy + vz * vz))).all():
        return None
    nx, ny, nz = nx / length, ny / length, nz / length
    offsets = (nx * (xi + xj + xk) + ny * (yi + yj + yk) + nz * (zi + zj + zk)) / 3.0
    return np.stack((nx, ny, nz)), length, offsets


def _vertices_wind_once(xyz: np.ndarray, ends: tuple, normals: np.ndarray,
                        area2: np.ndarray) -> bool:
    """Do the triangles around every vertex wind exactly once around it?

    Seen along d = v - c (c the centroid of the points: inside the hull), each triangle's
    corner at v is a wedge. On a convex mesh every triangle faces along d -- its normal's
    component is the height of its plane above c, over |d| -- so the wedges turn one way and
    their angles add up to 2 pi times the winding number: 2 pi, against 4 pi for a double cover
    or two fans pinched together, told apart with no rounding concerns. A mesh where some
    triangle does not clearly face along d (``WINDING_MIN_COS``) is not certified.
    """
    n = xyz.shape[1]
    corner, nxt, prv = ends  # (``_ends``: each corner of each triangle, and the next two)
    x, y, z = xyz
    vx, vy, vz = x[corner], y[corner], z[corner]
    cx, cy, cz = xyz.mean(axis=1).tolist()
    dx, dy, dz = vx - cx, vy - cy, vz - cz
    length = np.sqrt(dx * dx + dy * dy + dz * dz)
    nx, ny, nz = normals.repeat(3, axis=1)  # per corner of each triangle
    along = nx * dx + ny * dy + nz * dz     # |d| times the cosine
    if not (along > WINDING_MIN_COS * length).all():
        return False
    # The corner of triangle (v, x, y) at v: its edges u = x - v and w = y - v, seen along d.
    ux, uy, uz = x[nxt] - vx, y[nxt] - vy, z[nxt] - vz
    wx, wy, wz = x[prv] - vx, y[prv] - vy, z[prv] - vz
    # The projections' cross product along d is det[u, w, d] / |d| == |u x w| cos, u x w being
    # the triangle's cross product; their dot product is u.w - (u.d)(w.d) / |d|^2. Both times
    # |d|^2 (the angle is the same):
    ud = ux * dx + uy * dy + uz * dz
    wd = wx * dx + wy * dy + wz * dz
    angle = np.arctan2(area2.repeat(3) * along * length,
                       (ux * wx + uy * wy + uz * wz) * (length * length) - ud * wd)
    total = np.bincount(corner, weights=angle, minlength=n)
    return bool((abs(total - 2.0 * math.pi) < math.pi).all())


def _without_non_corners(tris, corner, flat, twin, src, dst):
    """The triangles with every flat region that holds a non-corner vertex replaced by a fan
    over the region's corners (its boundary, a convex polygon, with the mid-edge vertices left
    out)."""
    nf = len(tris)
    face = np.arange(3 * nf) // 3
    # Regions: faces joined across flat edges (minimum label, spread with pointer jumping).
    label = np.arange(nf)
    fa, fb = face[flat], face[twin[flat]]
    for _ in range(nf):  # (each pass joins at least one more pair of faces, or ends)
        before = label
        low = np.minimum(label[fa], label[fb])
        label = label.copy()
        np.minimum.at(label, fa, low)
        label = label[label]
        if np.array_equal(label, before):
            break
    redo = np.zeros(nf, dtype=bool)
    redo[label[(~corner[tris]).any(axis=1)]] = True
    redo = redo[label]
    # Each region's boundary: its crease half-edges, chained by where one ends and the next starts.
    boundary = (redo[face] & ~flat).nonzero()[0]
    region = label[face[boundary]]
    n = len(corner)
    key = region * n + src[boundary]
    order = key.argsort()
    sorted_key = key[order]
    target = region * n + dst[boundary]
    pos = np.minimum(sorted_key.searchsorted(target), len(key) - 1)
    if (sorted_key[1:] == sorted_key[:-1]).any() or (sorted_key[pos] != target).any():
        return None
    nxt = order[pos].tolist()
    start = {}
    for i, r in enumerate(region.tolist()):
        start.setdefault(r, i)
    fans = []
    src_b = src[boundary].tolist()
    is_corner = corner.tolist()
    walked = 0
    for first in start.values():
        ring = []
        i = first
        for _ in range(len(nxt)):  # (a cycle is at most all the boundary edges)
            v = src_b[i]
            if is_corner[v]:
                ring.append(v)
            walked += 1
            i = nxt[i]
            if i == first:
                break
        fans.extend((ring[0], ring[j], ring[j + 1]) for j in range(1, len(ring) - 1))
    if walked != len(nxt):
        return None
    kept = tris[~redo]
    if not fans:
        return kept
    return np.vstack((kept, np.array(fans, dtype=tris.dtype)))
