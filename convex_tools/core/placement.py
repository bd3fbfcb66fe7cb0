"""Many posed convex shapes at once: their support mappings and boxes as numpy arrays.

A level is thousands of objects, most of them a few shared shapes (a crate mesh, a barrel, a
rigid-body sphere) under their own matrices. Making a ``Transformed`` per object costs tens of
microseconds each and is only needed for the few objects that reach a single query; the boxes
and the batched narrow phase (``batch``) need only the local shape and the matrix. This module
holds that set-up:

- ``Placed(inner, matrix)``: a ``Transformed`` not made yet, and ``LazyShapes``, a sequence that
  makes each one when first indexed (only the shapes of candidate pairs are ever needed);
- ``PoseTable``: N posed convex shapes as arrays, built in one numpy pass from the distinct
  local shapes and an (N, 4, 4) matrix stack — per object a support *family* and its
  parameters, the matrix, the margin and the centre. ``support`` evaluates the support
  mappings of any selection of them along (3, K) directions, vectorised per family, and
  ``aabbs`` gives all world boxes from six such calls;
- ``world_aabbs(shapes)``: boxes of a list of shapes (posed or not), batched where they are.

Support families (the local mapping, seed 001 Table 1, before the matrix applies). Which shape
is in which family, with which parameters, is its kind's batch description (``kinds``, one table
entry per shape type); the shapes listed are those the table puts there today:

    POLY   point, segment, rectangle, box          s(d) = sign(d) ∘ h
    ROUND  disc, cylinder, ellipsoid, and spheres,  s(d) = sign(d) ∘ h + ρ (dx, dy, 0)/|(dx, dy)|
           capsules and round boxes whose matrix            + R² d / |R d|
           is not a similarity
    CONE   cone                                     apex, or the base rim
    HULL   Hull                                     the vertex of greatest d · x (per hull, one
                                                    matrix product for all its instances)
    OTHER  kinds without a batch description (sums, hulls of two shapes, user shapes,
           triangles, concave shapes): the batch leaves such pairs to the single queries

Rounded shapes are split as ``Transformed`` splits them (``shapes``): under a similarity map a
sphere, capsule or round box is its core (a point, segment or box: POLY) plus a margin scaled by
the map; under any other map the margin does not carry over and the whole shape is ROUND.

Layering (docs/ARCHITECTURE.md): uses ``shapes`` and ``kinds`` only (the families and the rows
of ``PoseTable.params`` are defined there, beside the descriptions that use them); ``batch`` and
``level`` use it, and the Blender layer builds its tables.
"""

from __future__ import annotations

import numpy as np

from . import shapes as _shapes
# The families and the rows of ``PoseTable.params`` are the kinds' batch vocabulary.
from .kinds import (B00, B01, B02, B10, B11, B12, B20, B21, B22, C0, C1, C2, CONE, CONE_H,
                    CONE_R, CONE_SIN, FAMILIES, HULL, HX, HY, HZ, N_PARAMS, OTHER, POLY, RHO,
                    ROUND, RX, RY, RZ, kind_of)

# A matrix is a similarity (a margin carries over, scaled) when BᵀB is s² I to this fraction of
# s² in every entry: the same test and tolerance as ``Transformed`` makes.
SIMILARITY_TOLERANCE = _shapes.SIMILARITY_TOLERANCE

# Hull instances whose boxes are computed per matrix product: bounds the temporary (V, 3k)
# array of dot products to about three times this many entries.
AABB_CHUNK_POINTS = 1_000_000


class Placed:
    """``Transformed(inner, matrix)`` not made yet: most objects of a level are never in a
    candidate pair, and their boxes come straight from ``inner`` and ``matrix``."""

    __slots__ = ("inner", "matrix")

    def __init__(self, inner, matrix):
        self.inner = inner
        self.matrix = matrix

    def make(self):
        return _shapes.Transformed(self.inner, self.matrix)


class LazyShapes:
    """A sequence of shapes that makes each ``Placed`` one when first indexed."""

    def __init__(self, entries):
        self._entries = entries

    def __len__(self):
        return len(self._entries)

    def __getitem__(self, i):
        entry = self._entries[i]
        if isinstance(entry, Placed):
            entry = self._entries[i] = entry.make()
        return entry

    def raw(self, i):
        """The entry as given: a shape, or a ``Placed`` not made yet."""
        return self._entries[i]


def _local_description(shape):
    """(family, params dict, margin) of a bare local shape, or None for OTHER: its kind's batch
    description (``kinds``). ``margin`` is the margin the shape keeps under a similarity map
    (then the family is its core's)."""
    batch = kind_of(type(shape)).batch
    return None if batch is None else batch(shape)


def _whole_description(family, params, margin):
    """The description of a rounded shape without its margin split off (for a matrix that is
    not a similarity): its core's parameters plus a ROUND sphere of the margin."""
    if margin == 0.0:
        return family, params
    whole = dict(params)
    whole.update({RX: margin, RY: margin, RZ: margin})
    return ROUND, whole


def similarity_scales(linear):
    """s for each (N, 3, 3) linear part with BᵀB = s² I (to ``SIMILARITY_TOLERANCE``), else
    NaN."""
    gram = np.einsum("nki,nkj->nij", linear, linear)
    s2 = np.trace(gram, axis1=1, axis2=2) / 3.0
    off = np.abs(gram - s2[:, None, None] * np.eye(3)).max(axis=(1, 2))
    ok = off <= SIMILARITY_TOLERANCE * s2
    return np.where(ok, np.sqrt(s2), np.nan)


class PoseTable:
    """N convex shapes, each a local shape under an affine map, as arrays (see the module doc).

    Build it with ``from_shapes`` (any shapes: ``Transformed`` ones and ``Placed`` ones are
    split into their local shape and matrix, bare ones take the identity) or ``from_poses``
    (distinct local shapes, an index into them per object and an (N, 4, 4) matrix stack).

    ``family`` (N,) is each object's support family (OTHER: not batched), ``params``
    (N_PARAMS, N) the matrix and the family's parameters, ``margin`` (N,) its world margin,
    ``centre`` (3, N) a point inside it (where GJK's first direction comes from, as
    ``centre_difference`` takes it), ``hull_index`` (N,) into ``hulls`` (-1 for non-hulls).
    """

    def __init__(self, family, params, margin, centre, hull_index, hulls, extent):
        self.family = family
        self.params = params
        self.margin = margin
        self.centre = centre
        self.hull_index = hull_index
        self.hulls = hulls            # local vertex arrays (V, 3) of the distinct hulls
        self.extent = extent          # (N,) each shape's size: its largest box edge
        self._hull_t = [np.ascontiguousarray(v.T) for v in hulls]

    def __len__(self):
        return len(self.family)

    # --- construction --------------------------------------------------------------------
    @classmethod
    def from_shapes(cls, shapes) -> "PoseTable":
        """A table of any sequence of shapes (OTHER for those it cannot batch)."""
        return cls.from_poses(*split_poses(shapes))

    @classmethod
    def from_poses(cls, local_shapes, index, matrices) -> "PoseTable":
        """Objects ``k`` = ``Transformed(local_shapes[index[k]], matrices[k])``, in one pass:
        each distinct local shape is described once, then broadcast to its objects."""
        index = np.asarray(index, dtype=np.int64)
        matrices = np.asarray(matrices, dtype=float).reshape(-1, 4, 4)
        n = len(index)
        families = np.full(len(local_shapes), OTHER, dtype=np.int8)
        whole_families = families.copy()
        local_params = np.zeros((N_PARAMS, len(local_shapes)))
        whole_params = np.zeros((N_PARAMS, len(local_shapes)))
        local_margin = np.zeros(len(local_shapes))
        local_centre = np.zeros((3, len(local_shapes)))
        local_hull = np.full(len(local_shapes), -1, dtype=np.int64)
        local_extent = np.zeros(len(local_shapes))
        hulls = []
        for u, shape in enumerate(local_shapes):
            description = _local_description(shape)
            if description is None:
                continue
            family, params, margin = description
            families[u] = family
            for row, value in params.items():
                local_params[row, u] = value
            local_margin[u] = margin
            whole_family, whole = _whole_description(family, params, margin)
            whole_families[u] = whole_family
            for row, value in whole.items():
                whole_params[row, u] = value
            local_centre[:, u] = shape.center_xyz()
            local_extent[u] = shape.extent()[0]
            if family == HULL:
                local_hull[u] = len(hulls)
                hulls.append(np.asarray(shape.vertices, dtype=float))

        linear = matrices[:, :3, :3]
        scale = similarity_scales(linear) if n else np.zeros(0)
        # A margin carries over under a similarity only; otherwise the whole shape is ROUND.
        rounded = local_margin[index] > 0.0
        split = rounded & np.isfinite(scale)
        whole = rounded & ~split
        family = np.where(whole, whole_families[index], families[index]).astype(np.int8)
        params = np.where(whole[None, :], whole_params[:, index], local_params[:, index])
        params[:9] = linear.reshape(n, 9).T
        params[9:12] = matrices[:, :3, 3].T
        margin = np.where(split, local_margin[index] * np.where(split, scale, 0.0), 0.0)
        c = local_centre[:, index]
        centre = np.einsum("nij,jn->in", linear, c) + matrices[:, :3, 3].T
        # Sizes grow with the map's largest entry (within a factor 3, as Transformed bounds it).
        extent = local_extent[index] * np.abs(linear).reshape(n, 9).max(axis=1, initial=0.0)
        return cls(family, np.ascontiguousarray(params), margin, centre, local_hull[index],
                   hulls, extent)

    # --- support mappings ----------------------------------------------------------------
    def support(self, objects, d, params=None):
        """World support points (3, K) of ``objects`` (K,) along directions ``d`` (3, K) (not
        necessarily unit; a zero direction gives some point of the shape). ``params``: the
        objects' columns of ``self.params`` if the caller holds them already. Objects of
        family OTHER get NaN."""
        p = self.params[:, objects] if params is None else params
        fam = self.family[objects]
        out = np.full((3, len(fam)), np.nan)
        for family in FAMILIES:
            rows = np.flatnonzero(fam == family)
            if not len(rows):
                continue
            q = p[:, rows]
            dx, dy, dz = d[0, rows], d[1, rows], d[2, rows]
            # Bᵀ d: the direction in the shape's own frame.
            lx = q[B00] * dx + q[B10] * dy + q[B20] * dz
            ly = q[B01] * dx + q[B11] * dy + q[B21] * dz
            lz = q[B02] * dx + q[B12] * dy + q[B22] * dz
            if family == HULL:
                sx, sy, sz = self._hull_support(self.hull_index[objects[rows]], lx, ly, lz)
            else:
                sx, sy, sz = local_support(family, q, lx, ly, lz)
            out[0, rows] = q[B00] * sx + q[B01] * sy + q[B02] * sz + q[C0]
            out[1, rows] = q[B10] * sx + q[B11] * sy + q[B12] * sz + q[C1]
            out[2, rows] = q[B20] * sx + q[B21] * sy + q[B22] * sz + q[C2]
        return out

    def _hull_support(self, hull_ids, lx, ly, lz):
        """Local support vertices of hull instances: per distinct hull one (k, 3) × (3, V)
        product and an argmax over its rows."""
        sx, sy, sz = np.empty_like(lx), np.empty_like(lx), np.empty_like(lx)
        local = np.stack((lx, ly, lz), axis=1)
        for h, rows in group_positions(hull_ids):
            best = (local[rows] @ self._hull_t[h]).argmax(axis=1)
            vertices = self.hulls[h][best]
            sx[rows], sy[rows], sz[rows] = vertices[:, 0], vertices[:, 1], vertices[:, 2]
        return sx, sy, sz

    # --- boxes ---------------------------------------------------------------------------
    def aabbs(self, objects=None):
        """World boxes (lower, upper), each (K, 3), of ``objects`` (default: all): along axis i
        the extremes are row_i · s(±row_i) + c_i for the rows of the linear part (seed 000 §2),
        plus the margin. Hull instances take their boxes from their transformed vertices.
        Objects of family OTHER get NaN."""
        objects = np.arange(len(self)) if objects is None else np.asarray(objects)
        k = len(objects)
        lower, upper = np.empty((k, 3)), np.empty((k, 3))
        is_hull = self.family[objects] == HULL
        rest = np.flatnonzero(~is_hull)
        if len(rest):
            chosen = objects[rest]
            p = self.params[:, chosen]
            margin = self.margin[chosen]
            for axis in range(3):
                for sign, out in ((1.0, upper), (-1.0, lower)):
                    d = np.zeros((3, len(rest)))
                    d[axis] = sign
                    out[rest, axis] = self.support(chosen, d, params=p)[axis] + sign * margin
        hulls = np.flatnonzero(is_hull)
        if len(hulls):
            self._hull_aabbs(objects[hulls], hulls, lower, upper)
        return lower, upper

    def _hull_aabbs(self, objects, rows, lower, upper):
        """Exact boxes of hull instances from their vertices: along axis i the extremes of
        row_i · v over the vertices v, for every instance of a hull in one (V, 3) × (3, 3k)
        matrix product."""
        for h, members in group_positions(self.hull_index[objects]):
            verts = self.hulls[h]
            chunk = max(1, AABB_CHUNK_POINTS // max(1, len(verts)))
            for s in range(0, len(members), chunk):
                sel = members[s:s + chunk]
                p = self.params[:, objects[sel]]
                # Column 3k + i of the product is row i of instance k's linear part.
                dots = verts @ p[:9].T.reshape(-1, 3).T
                c = p[9:12].T
                lower[rows[sel]] = dots.min(axis=0).reshape(-1, 3) + c
                upper[rows[sel]] = dots.max(axis=0).reshape(-1, 3) + c


def split_poses(shapes):
    """(distinct local shapes, index (N,) into them, matrices (N, 4, 4)) of a sequence of
    shapes: ``Transformed`` and ``Placed`` ones split into their local shape and matrix, bare
    ones under the identity; local shapes are shared by identity."""
    locals_, index, matrices = [], [], []
    seen = {}
    identity = np.eye(4)
    placed, transformed = Placed, _shapes.Transformed
    for shape in shapes:
        if isinstance(shape, placed):
            inner, matrix = shape.inner, shape.matrix
        elif isinstance(shape, transformed):
            inner, matrix = shape.shape, shape.matrix
        else:
            inner, matrix = shape, identity
        u = seen.get(id(inner))
        if u is None:
            u = seen[id(inner)] = len(locals_)
            locals_.append(inner)
        index.append(u)
        matrices.append(matrix)
    stack = np.stack(matrices) if matrices else np.zeros((0, 4, 4))
    return locals_, np.asarray(index, dtype=np.int64), stack


def group_positions(values):
    """(value, positions) for each distinct value of the integer array ``values`` (a hull
    index, a local shape's): where it occurs, in increasing order of the values."""
    if len(values) == 0:
        return
    order = np.argsort(values, kind="stable")
    ids = values[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    stops = np.r_[starts[1:], len(ids)]
    for start, stop in zip(starts.tolist(), stops.tolist()):
        yield int(ids[start]), order[start:stop]


def local_support(family, q, lx, ly, lz):
    """Local support points of the POLY, ROUND or CONE family: (sx, sy, sz) arrays along the
    local directions (lx, ly, lz), with parameters ``q`` (rows as in ``PoseTable.params``).
    The same mappings as the shapes' own ``support_xyz``, one array operation per term."""
    if family == CONE:
        r, h, sin = q[CONE_R], q[CONE_H], q[CONE_SIN]
        s = np.sqrt(lx * lx + ly * ly)
        apex = lz > sin * np.sqrt(s * s + lz * lz)
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(s > 0.0, r / s, 0.0)
        return (np.where(apex, 0.0, lx * f), np.where(apex, 0.0, ly * f),
                np.where(apex, h, -h))
    sx = np.copysign(q[HX], lx)
    sy = np.copysign(q[HY], ly)
    sz = np.copysign(q[HZ], lz)
    if family == POLY:
        return sx, sy, sz
    rho = q[RHO]
    s = np.sqrt(lx * lx + ly * ly)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(s > 0.0, rho / s, 0.0)
    sx = sx + lx * f
    sy = sy + ly * f
    ax, ay, az = q[RX] * q[RX], q[RY] * q[RY], q[RZ] * q[RZ]
    qx, qy, qz = ax * lx, ay * ly, az * lz
    n = np.sqrt(qx * lx + qy * ly + qz * lz)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(n > 0.0, 1.0 / n, 0.0)
    return (sx + qx * g, sy + qy * g, sz + np.where(n > 0.0, qz * g, q[RZ]))


def world_aabbs(shapes, table: PoseTable | None = None):
    """Bounding boxes (lower, upper), each (N, 3), of world-space shapes (``Placed`` ones
    included): the posed convex ones in one ``PoseTable`` pass (``table``, if the caller has
    made it of the same shapes), the rest by their own ``aabb``."""
    n = len(shapes)
    lower, upper = np.empty((n, 3)), np.empty((n, 3))
    if n == 0:
        return lower, upper
    if table is None:
        table = PoseTable.from_shapes(shapes)
    batched = np.flatnonzero(table.family != OTHER)
    if len(batched):
        lower[batched], upper[batched] = table.aabbs(batched)
    for k in np.flatnonzero(table.family == OTHER).tolist():
        shape = shapes[k]
        if isinstance(shape, Placed):
            shape = shape.make()
        lower[k], upper[k] = shape.aabb()
    return lower, upper
