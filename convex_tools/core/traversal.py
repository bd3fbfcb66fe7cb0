"""Traversal check: where a player capsule can stand and go, from the level's collision shapes.

The definitions are the user contract (issue 21), in Recast's vocabulary (agent radius r, height
h, max climb s, max slope):

- **Walkable surface**: on a grid of square cells (size c, centres at ``origin + (i + ½) c``),
  every upward surface the vertical line through a cell's centre meets (several floors, a bridge
  over a corridor) whose normal is within the max slope and which belongs to a walkable object.
  A surface is a *sample*: its cell, height ``z`` and the piece it lies on. A surface with a
  blocking solid resting on it (a wall, a crate: the solid meets the column between z and
  z + s) is covered, not a sample; surfaces closer than ``MERGE_HEIGHT`` in one cell are one.
  (A triangle mesh has no inside, so it covers nothing: a surface under a mesh lower than s
  stays a sample, under a higher one the capsule is blocked anyway.)
- **Standable**: the agent's capsule on the sample, raised by the max step (bottom at z + s, top
  at z + h), overlaps nothing that blocks the agent. Geometry below z + s is the step it climbs.
- **Link**: samples of 8-neighbouring cells whose heights differ by at most s, both standable,
  and the convex hull of their two raised capsules overlaps nothing that blocks the agent.
- **Reachable**: the connected components of the links that hold a start.

A doorway at least 2r + c wide is passable on every grid placement (its strip of free capsule
centres is at least c wide, so a column of cell centres lies in it); narrower than 2r never
(no capsule centre is at least r from both jambs).

Findings (``level.Finding``): each connected standable region of at least ``min_area`` that no
start reaches is ``unreachable`` (``area``, ``bbox``, a representative ``point``, the walkable
``objects`` under it), and for each such region the reason next to it, where there is one:

- ``narrow``: a passage of samples whose capsules are blocked only by width (the column above
  the surface is free up to h, something blocking reaches below z + s) between a reachable
  sample and the region, where it is pinched: the two nearest pieces lie on opposite sides
  (``PINCH_COS``) with less than 2r between them; ``width`` (the distance between those two
  pieces), ``object_a``/``object_b`` the objects on both sides, ``point`` the pinch with the
  most room, ``bbox`` around the pinches;
- ``low_headroom``: a passage of samples blocked only by pieces above z + s between a reachable
  sample and the region; ``clearance`` (from the surface to the lowest blocking piece, at the
  passage's best point) and the object above, ``bbox`` around the passage;
- ``step``: a step edge (neighbouring cells whose heights differ by more than s and at most h:
  taller than the agent is a wall) from the reachable samples' *flat* to the region's, a flat
  being the samples standable or blocked only by a step (a piece from below z + s to below
  z + h: the foot of a platform the capsule keeps off) joined within s; ``height`` (the lowest
  such step), ``object_a`` the object of the higher surface (``object_b`` the lower one's).

A reason's ``area`` is the area of the region it leads to (its ``unreachable`` finding's).

**How** (all vectorised: no Python loop over cells, objects or pairs). Shapes become *pieces*:
a convex shape is one piece, a ``Compound`` one per part, a ``TriangleMesh`` one per triangle.
The grid is cut into tiles of ``TILE_CELLS``² cells (plus a one-cell halo, so that links across
a tile's edge are tested there); a tile takes

1. the vertical lines of its cells against its pieces, per piece over all the cells under its
   box: solids as planes (boxes, hulls, and curved shapes as the polytope of their support
   points along ``FACET_DIRECTIONS`` directions) clipped in the piece's own frame (one matrix
   product per group of pieces sharing a local shape), flat pieces as triangles (barycentric
   coordinates in the plane);
2. the raised capsules of its samples against the blocking pieces whose boxes, grown by r and by
   the link band, reach them: GJK in numpy (``batch.run``; a capsule is a segment with a margin
   in a ``placement.PoseTable``), pieces the batch has no family for by the single query;
3. the links: the hull of two raised capsules is a parallelogram with margin r, and only the
   pieces within half the link's length of either capsule (measured in step 2) can meet it.

Tiles run in ``jobs`` forked processes; then the links are joined into components (hooking and
pointer jumping in numpy), and the findings made.

Public functions:

- ``Agent(radius=0.35, height=1.8, max_step=0.45, max_slope=45.0, cell=None)``: the agent
  (cell defaults to radius / 3); ValueError for bad values.
- ``check_traversal(shapes, names, walkable, blocks_agent, agent=None, starts=(),
  min_area=1.0, bounds=None, origin=None, jobs=1, progress=None) -> TraversalResult``: the
  check. ``shapes``: world-space core shapes (convex, ``Compound``, ``TriangleMesh``);
  ``walkable``/``blocks_agent``: one bool per shape (a sequence, or one bool for all);
  ``starts``: points (x, y, z) (a start stands on the standable surface nearest to it within r
  horizontally, at most s above it and at most h below it; the highest of those in one cell;
  a start with none is listed in ``unplaced_starts``); ``bounds``: ((x0, y0), (x1, y1)) of
  the grid (default: the walkable shapes' boxes); ``origin``: a point the cell corners are
  aligned to (default: the bounds' lower corner); ``jobs``: processes for the tiles (None: one
  per core; the result does not depend on it); ``progress(done, total)`` after each tile.
- ``TraversalResult``: the grid (``shape`` (nx, ny), ``origin``, ``cell``, ``cell_x``/
  ``cell_y`` the centres, ``surface`` (nx·ny,) a walkable surface in the cell, covered or
  not), ``heights(ix, iy)`` the cell's surfaces, the samples (sorted by cell, then height) as
  arrays (``sample_cell``, ``sample_x``, ``sample_y``, ``sample_z``, ``sample_object``,
  ``standable``, ``reachable``), ``starts``, ``unplaced_starts``, ``findings``,
  ``reachable_area``, ``standable_area``, ``stats``, ``summary()`` (a dict for a report).
- ``map_image(result, cell_pixels=1, max_size=None) -> (H, W, 3) uint8``: the top-down map
  (north up): reachable green, standable but unreachable orange, blocked walkable surface red,
  no surface dark grey, starts marked white; ``COLOURS`` holds the colours (for a legend).
- ``image_pixel(result, x, y, cell_pixels=1, max_size=None) -> (row, column)``: where a world
  point is in that image (to label findings).

Layering (docs/ARCHITECTURE.md): level logic, beside ``level``; uses ``placement``, ``batch``,
``broadphase``, ``queries``, the shapes and ``level.Finding``.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass

import numpy as np

from . import batch, queries, validation
from .broadphase import _expand
from .compound import Compound, ConcaveShape
from .hull import Hull
from .level import (LOW_HEADROOM, NARROW, STEP, UNREACHABLE, Finding, _can_fork,
                    default_jobs, forked)
from .placement import (B00, C0, C1, C2, HX, HZ, N_PARAMS, OTHER, POLY, LazyShapes, Placed,
                        PoseTable, split_poses)
from .shapes import (Box, Capsule, ConvexHullOf, Point, Rectangle, Segment, Transformed,
                     translated)
from .trimesh import Triangle, TriangleMesh

# Cells per tile side: a tile (with its halo) is the unit of work and of progress; 128² cells
# keep a tile's pair arrays at a few hundred thousand rows (tens of MB) on a cluttered level.
TILE_CELLS = 128
# The largest grid. A cell costs 400–800 bytes of peak memory while the check runs (1M cells:
# 425 MB with 10k props, ``bench.py traversal``; 790 MB on a 100k-triangle terrain, whose
# every cell has a surface and four links), so this bounds it at several GB; a bigger level
# needs a bigger cell or smaller bounds.
MAX_CELLS = 10_000_000

# Curved convex shapes (spheres, capsules, cylinders, cones, user shapes) meet the vertical
# lines as the polytope of their support points along this many directions (a Fibonacci sphere
# plus the six axes): the polytope lies inside the shape and its faces are within about
# 0.5 % of the shape's size of the surface (angular spacing ~0.2 rad; sagitta 1 − cos 0.1).
# Only the surface heights use it: the capsule tests use the exact support mappings.
FACET_DIRECTIONS = 250

# A plane is parallel to the vertical line when |n · u| is below this fraction of |u| (n unit):
# rounding of a vertical face's normal after a rotation is ~1e-16.
PARALLEL_SINE = 1e-12
# A line through a face's edge, or on a vertical face, counts as meeting the piece when it is
# outside by at most this (model units; rounding of level coordinates is ~1e-12 at 1 km):
# seams between floor tiles then have a surface on both sides.
EDGE_SLACK = 1e-9
# Surfaces of one cell closer than this in height are one surface (coplanar floor tiles, a
# prop's top flush with the floor): 1 mm, far below any step.
MERGE_HEIGHT = 1e-3
# A blocking solid covers a surface (a wall standing on a floor) when it meets the column above
# the surface higher than this: a solid whose top is flush with the surface only touches it.
COVER_HEIGHT = 1e-3
# A normal within the max slope: n_z >= cos(max slope) − this (rounding of a rotated normal).
SLOPE_SLACK = 1e-9
# A capsule overlapping a piece by less than this is touching it, not blocked (model units):
# above GJK's rounding on level coordinates (1e-8 of the shapes' size), below anything a player
# could notice. A doorway exactly 2r wide is therefore passable (the capsule touches both jambs).
CONTACT_TOLERANCE = 1e-6
# A narrow passage is pinched between two pieces on opposite sides: the horizontal directions
# from the capsule's axis to the two nearest blocking pieces make an angle of more than 120°
# (cos < −0.5); a room's corner (90°) is not a passage.
PINCH_COS = -0.5
# Component labelling: hooking rounds and pointer-jumping steps. Each round at least halves
# the roots that still have an edge to another root, and each jump halves the longest pointer
# path, so 64 of each bound any array numpy can hold.
MAX_HOOK_ROUNDS = 64
MAX_JUMPS = 64
# Rows of one vectorised plane clip (pairs × planes): bounds its temporaries to ~100 MB.
CLIP_CHUNK_ENTRIES = 2_000_000

# Edge kinds between samples of neighbouring cells.
LINK, LINK_BLOCKED, STEP_EDGE, OPEN = range(4)

# The eight neighbours, as the four directions each cell owns (the others are its neighbours').
_DIRECTIONS = ((1, 0), (0, 1), (1, 1), (-1, 1))

COLOURS = {
    "reachable": (60, 180, 75),
    "unreachable": (245, 130, 48),
    "blocked": (200, 40, 40),
    "empty": (40, 40, 40),
    "start": (255, 255, 255),
}


@dataclass(frozen=True)
class Agent:
    """The player capsule (Recast's agent): ``radius`` r, ``height`` h, ``max_step`` s (the
    climb), ``max_slope`` in degrees, and the grid's ``cell`` size (default r / 3). Blender
    units. The raised capsule (bottom at s, top at h) needs h − s >= 2 r."""

    radius: float = 0.35
    height: float = 1.8
    max_step: float = 0.45
    max_slope: float = 45.0
    cell: float | None = None

    def __post_init__(self):
        r = _positive("radius", self.radius)
        h = _positive("height", self.height)
        s = validation.size("max_step", self.max_step)
        slope = validation.finite_scalar("max_slope", self.max_slope)
        if not 0.0 <= slope < 90.0:
            raise ValueError(f"max_slope must be in [0, 90) degrees, got {slope:g}")
        cell = r / 3.0 if self.cell is None else _positive("cell", self.cell)
        if h - s < 2.0 * r:
            raise ValueError(f"height − max_step must be at least 2 × radius (the raised "
                             f"capsule from z + {s:g} to z + {h:g} holds no capsule of radius "
                             f"{r:g}), got height {h:g}")
        for name, value in (("radius", r), ("height", h), ("max_step", s), ("max_slope", slope),
                            ("cell", cell)):
            object.__setattr__(self, name, value)

    @property
    def segment_length(self) -> float:
        """Length of the raised capsule's axis: h − s − 2 r."""
        return self.height - self.max_step - 2.0 * self.radius


def _positive(name, value) -> float:
    x = validation.finite_scalar(name, value)
    if x <= 0.0:
        raise ValueError(f"{name} must be positive, got {x:g}")
    return x


# --- pieces: the convex parts of every shape, as arrays ----------------------------------------
class _Pieces:
    """Every shape split into convex pieces: ``owner`` (P,) the shape's index, ``lower``/
    ``upper`` (P, 3) boxes, ``table`` (a ``PoseTable`` of them all; a triangle is a flat hull),
    and for the vertical lines the solids (``solid_group``, per group its local planes, per
    piece the inverse linear map and translation) and the flat triangles (``tri_*``)."""

    def __init__(self, shapes):
        owner, convex = [], []
        tri_corners, tri_owner, tri_normals = [], [], []
        for k, shape in enumerate(shapes):
            if isinstance(shape, Placed):         # (a posed convex shape, made on need)
                convex.append(shape)
                owner.append(k)
                continue
            if isinstance(shape, TriangleMesh):
                tri_corners.append(shape.vertices[shape.triangles])
                tri_normals.append(shape.normals)
                tri_owner.append(np.full(len(shape), k))
                continue
            if isinstance(shape, ConcaveShape) and not isinstance(shape, Compound):
                raise ValueError(f"shapes[{k}] is a {type(shape).__name__}: only convex shapes, "
                                 f"Compound and TriangleMesh are supported")
            parts = shape.parts if isinstance(shape, Compound) else (shape,)
            for part in parts:
                convex.append(validation.shape(f"shapes[{k}]", part))
                owner.append(k)
        inners, index, conv_m = split_poses(convex)
        n_convex = len(convex)
        corners = (np.concatenate(tri_corners) if tri_corners else np.zeros((0, 3, 3)))
        normals = (np.concatenate(tri_normals) if tri_normals else np.zeros((0, 3)))
        self.n_convex = n_convex
        self.convex = LazyShapes(convex)
        self.mesh_corners = corners
        self.owner = np.asarray(owner + (np.concatenate(tri_owner).tolist() if tri_owner else []),
                                dtype=np.int64)
        # The table: the convex pieces, then each triangle as the unit triangle under the map
        # (1,0,0) ↦ b − a, (0,1,0) ↦ c − a, (0,0,1) ↦ n, 0 ↦ a.
        unit = Hull(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
        tri_matrices = np.zeros((len(corners), 4, 4))
        tri_matrices[:, :3, 0] = corners[:, 1] - corners[:, 0]
        tri_matrices[:, :3, 1] = corners[:, 2] - corners[:, 0]
        tri_matrices[:, :3, 2] = normals
        tri_matrices[:, :3, 3] = corners[:, 0]
        tri_matrices[:, 3, 3] = 1.0
        all_index = np.concatenate([np.asarray(index, dtype=np.int64),
                                    np.full(len(corners), len(inners), dtype=np.int64)])
        self.table = PoseTable.from_poses(inners + [unit], all_index,
                                          np.concatenate([conv_m, tri_matrices]))
        n = len(self.owner)
        lower, upper = np.empty((n, 3)), np.empty((n, 3))
        batched = np.flatnonzero(self.table.family[:n_convex] != OTHER)
        if len(batched):
            lower[batched], upper[batched] = self.table.aabbs(batched)
        for p in np.flatnonzero(self.table.family[:n_convex] == OTHER).tolist():
            lower[p], upper[p] = self.convex[p].aabb()
        lower[n_convex:], upper[n_convex:] = corners.min(axis=1), corners.max(axis=1)
        self.lower, self.upper = lower, upper
        self._columns(inners, index, conv_m, corners, normals)

    def _columns(self, inners, index, matrices, mesh_corners, mesh_normals):
        """What the vertical lines meet: solid pieces as planes in their own frame (grouped by
        local shape), flat ones (and every mesh triangle) as world triangles."""
        forms = [_column_form(inner) for inner in inners]
        self.group_planes = []
        group_of_inner = np.full(len(inners), -1, dtype=np.int64)
        for u, form in enumerate(forms):
            if form is not None and form[0] == "solid":
                group_of_inner[u] = len(self.group_planes)
                self.group_planes.append((form[1], form[2]))
        n_convex = self.n_convex
        self.solid_group = (group_of_inner[index] if n_convex else np.zeros(0, dtype=np.int64))
        linear = matrices[:, :3, :3]
        solid = np.flatnonzero(self.solid_group >= 0)
        self.inverse = np.zeros((n_convex, 3, 3))
        if len(solid):
            self.inverse[solid] = np.linalg.inv(linear[solid])
        self.translation = matrices[:, :3, 3].copy()
        # Flat triangles: flat convex pieces (two-sided) and mesh triangles (front faces).
        corners, piece, two_sided = [mesh_corners], \
            [n_convex + np.arange(len(mesh_corners))], [np.zeros(len(mesh_corners), bool)]
        for p in np.flatnonzero(self.solid_group < 0).tolist():
            form = forms[index[p]]
            if form is None or form[0] != "flat":
                continue
            local = form[1]
            corners.append(local @ linear[p].T + matrices[p, :3, 3])
            piece.append(np.full(len(local), p))
            two_sided.append(np.ones(len(local), bool))
        self.tri_corners = np.concatenate(corners)
        self.tri_piece = np.concatenate(piece).astype(np.int64)
        cross = np.cross(self.tri_corners[:, 1] - self.tri_corners[:, 0],
                         self.tri_corners[:, 2] - self.tri_corners[:, 0])
        length = np.linalg.norm(cross, axis=1)
        nz = np.where(length > 0.0, cross[:, 2] / np.where(length > 0.0, length, 1.0), 0.0)
        self.tri_nz = np.where(np.concatenate(two_sided), np.abs(nz), nz)
        self.tri_lower = self.tri_corners.min(axis=1)
        self.tri_upper = self.tri_corners.max(axis=1)

    def __len__(self):
        return len(self.owner)

    def shape(self, p):
        """Piece ``p`` as a core shape (for the single queries)."""
        if p < self.n_convex:
            return self.convex[p]
        a, b, c = self.mesh_corners[p - self.n_convex]
        return Triangle(a, b, c)


def _column_form(inner):
    """How a local convex shape meets vertical lines: ("solid", normals (F, 3), offsets (F,))
    with n · x <= d inside, ("flat", triangles (T, 3, 3)) or None (no area: a point, a segment)."""
    if isinstance(inner, Box):
        hx, hy, hz = inner.half_extents.tolist()
        n = np.vstack((np.eye(3), -np.eye(3)))
        return "solid", n, np.array([hx, hy, hz, hx, hy, hz])
    if isinstance(inner, Rectangle):
        hx, hy = inner.half_extents.tolist()
        quad = np.array([[-hx, -hy, 0.0], [hx, -hy, 0.0], [hx, hy, 0.0], [-hx, hy, 0.0]])
        return "flat", quad[[[0, 1, 2], [0, 2, 3]]]
    if isinstance(inner, (Point, Segment)):
        return None
    if isinstance(inner, Triangle):
        return "flat", np.array([_triangle_corners(inner)])
    if not isinstance(inner, Hull):
        inner = Hull(np.array([inner.support_xyz(*d) for d in _facet_directions()]))
    if inner.dim == 3:
        v = inner.vertices[inner.faces]
        n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
        n /= np.linalg.norm(n, axis=1)[:, None]
        return "solid", n, np.einsum("ij,ij->i", n, v[:, 0])
    if inner.dim == 2:
        return "flat", inner.vertices[inner.faces]
    return None


def _triangle_corners(triangle):
    return [list(triangle._a), list(triangle._b), list(triangle._c)]


def _facet_directions():
    """``FACET_DIRECTIONS`` unit directions: a Fibonacci sphere, plus the six axes (so that the
    polytope has the shape's exact box)."""
    k = np.arange(FACET_DIRECTIONS) + 0.5
    z = 1.0 - 2.0 * k / FACET_DIRECTIONS
    phi = k * math.pi * (3.0 - math.sqrt(5.0))
    rho = np.sqrt(1.0 - z * z)
    dirs = np.stack((rho * np.cos(phi), rho * np.sin(phi), z), axis=1)
    return np.vstack((dirs, np.eye(3), -np.eye(3))).tolist()


# --- the grid ----------------------------------------------------------------------------------
class _Grid:
    """Cells of size ``c`` with centres ``x0 + (i + ½) c``, ``y0 + (j + ½) c``."""

    def __init__(self, x0, y0, c, nx, ny):
        self.x0, self.y0, self.c, self.nx, self.ny = x0, y0, c, nx, ny

    def cell_range(self, lo, hi, axis, first, stop):
        """Index ranges [a, b) of the cells whose centres lie in [lo, hi] along ``axis``
        (arrays), clipped to [first, stop)."""
        o = self.x0 if axis == 0 else self.y0
        a = np.ceil((lo - o) / self.c - 0.5)
        b = np.floor((hi - o) / self.c - 0.5) + 1.0
        return (np.clip(a, first, stop).astype(np.int64),
                np.clip(b, first, stop).astype(np.int64))


def _make_grid(pieces, walkable_piece, agent, bounds, origin) -> _Grid:
    c = agent.cell
    if bounds is None:
        rows = np.flatnonzero(walkable_piece)
        if not len(rows):
            raise ValueError("no walkable shape: mark the floors walkable (walkable=True)")
        lo = pieces.lower[rows, :2].min(axis=0)
        hi = pieces.upper[rows, :2].max(axis=0)
    else:
        try:
            b = np.asarray(bounds, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"bounds must be ((x0, y0), (x1, y1)), got {bounds!r}") from None
        if b.shape != (2, 2) or not np.all(np.isfinite(b)) or np.any(b[1] < b[0]):
            raise ValueError(f"bounds must be ((x0, y0), (x1, y1)) with x0 <= x1, y0 <= y1, "
                             f"got {bounds!r}")
        lo, hi = b[0], b[1]
    if origin is not None:
        o = validation.vector("origin", origin, len(np.atleast_1d(origin)))[:2]
        lo = o + np.floor((lo - o) / c) * c
    n = np.maximum(np.ceil((hi - lo) / c - 1e-9), 1).astype(np.int64)
    if int(n[0]) * int(n[1]) > MAX_CELLS:
        raise ValueError(f"the grid would have {int(n[0]) * int(n[1]):,} cells (over "
                         f"{MAX_CELLS:,}): use a bigger cell or smaller bounds")
    return _Grid(float(lo[0]), float(lo[1]), c, int(n[0]), int(n[1]))


# --- the check ---------------------------------------------------------------------------------
class _Context:
    """What every tile needs (inherited by forked workers)."""

    def __init__(self, pieces, walkable, blocking, agent, grid):
        self.pieces = pieces
        self.walk_piece = walkable[pieces.owner]
        self.block_piece = blocking[pieces.owner]
        self.agent = agent
        self.grid = grid
        self.cos_slope = math.cos(math.radians(agent.max_slope))
        c, s = agent.cell, agent.max_step
        # Links are tested only against pieces within half a link's length of one of its two
        # capsules (the hull of two capsules lies within |δ|/2 of them): the longest link is
        # a diagonal climbing s.
        self.band = 0.5 * math.sqrt(2.0 * c * c + s * s) + CONTACT_TOLERANCE
        p = pieces
        self.solid_rows = np.flatnonzero(
            (p.solid_group[:p.n_convex] >= 0)
            & (self.walk_piece[:p.n_convex] | self.block_piece[:p.n_convex]))
        self.tri_rows = np.flatnonzero(self.walk_piece[p.tri_piece])
        self.block_rows = np.flatnonzero(self.block_piece)
        # GJK pairs of the tiles run in this process (``_tile`` hands them back per tile).
        self.counts = {"capsule_pairs": 0, "link_pairs": 0}


def _tile(ctx: _Context, tx: int, ty: int) -> dict:
    """Samples, standability and links of the cells of tile (tx, ty)."""
    g = ctx.grid
    before = dict(ctx.counts)
    i0, i1 = tx * TILE_CELLS, min((tx + 1) * TILE_CELLS, g.nx)
    j0, j1 = ty * TILE_CELLS, min((ty + 1) * TILE_CELLS, g.ny)
    hi0, hi1, hj0, hj1 = max(i0 - 1, 0), min(i1 + 1, g.nx), max(j0 - 1, 0), min(j1 + 1, g.ny)
    box = (hi0, hi1, hj0, hj1)
    samples, surface_cells = _surfaces(ctx, box)
    _standable(ctx, box, samples)
    edges = _links(ctx, box, (i0, i1, j0, j1), samples)
    width = hi1 - hi0

    def owned(local):
        lx, ly = local % width + hi0, local // width + hj0
        return (lx >= i0) & (lx < i1) & (ly >= j0) & (ly < j1), ly * g.nx + lx

    own, cell = owned(samples["cell"])
    out = {key: value[own] for key, value in samples.items()
           if key not in ("cell", "column_free") and not key.startswith("near_")}
    out["cell"] = cell[own]
    out.update(edges)
    own, cell = owned(surface_cells)
    out["surface_cells"] = cell[own]
    out["pairs"] = np.array([ctx.counts[k] - before[k] for k in sorted(ctx.counts)])
    return out


def _pairs_in_box(g, lower, upper, rows, box, grow=0.0):
    """(row, local cell) for each of ``rows`` (indices into ``lower``/``upper``) and each cell
    of the tile ``box`` whose centre lies in its box grown by ``grow`` in x and y."""
    hi0, hi1, hj0, hj1 = box
    a, b = g.cell_range(lower[rows, 0] - grow, upper[rows, 0] + grow, 0, hi0, hi1)
    c, d = g.cell_range(lower[rows, 1] - grow, upper[rows, 1] + grow, 1, hj0, hj1)
    nxr, nyr = b - a, np.maximum(d - c, 0)
    item, k = _ranges(np.zeros(len(rows), dtype=np.int64), nxr * nyr)
    if not len(item):
        return item, item
    nx_i = nxr[item]
    ix = a[item] + k % nx_i
    iy = c[item] + k // nx_i
    return rows[item], (iy - hj0) * (hi1 - hi0) + (ix - hi0)


def _ranges(start, stop):
    """(row, value) for every value in range(start[row], stop[row]), all rows."""
    chunks = list(_expand(np.asarray(start, dtype=np.int64), np.asarray(stop, dtype=np.int64)))
    if not chunks:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return (np.concatenate([c[0] for c in chunks]).astype(np.int64),
            np.concatenate([c[1] for c in chunks]).astype(np.int64))


def _cell_centres(g, box, cells):
    hi0, hi1, hj0, _ = box
    width = hi1 - hi0
    return (g.x0 + (cells % width + hi0 + 0.5) * g.c, g.y0 + (cells // width + hj0 + 0.5) * g.c)


def _surfaces(ctx, box) -> dict:
    """The tile's samples, sorted by (local cell, z): walkable surfaces not covered by a blocking
    solid, merged within ``MERGE_HEIGHT``; with what is above them in their column."""
    g, p, agent = ctx.grid, ctx.pieces, ctx.agent
    # Solids: spans [bottom, top] of the lines through the cells under their boxes.
    rows, cells = _pairs_in_box(g, p.lower, p.upper, ctx.solid_rows, box)
    x, y = _cell_centres(g, box, cells)
    top, bottom, nz = _clip_solids(p, rows, x, y)
    hit = np.isfinite(top)
    rows, cells, top, bottom, nz = rows[hit], cells[hit], top[hit], bottom[hit], nz[hit]
    # Flat triangles.
    t_rows, t_cells = _pairs_in_box(g, p.tri_lower, p.tri_upper, ctx.tri_rows, box)
    tx, ty = _cell_centres(g, box, t_cells)
    tz = _clip_triangles(p.tri_corners[t_rows], tx, ty)
    ok = np.isfinite(tz)
    t_rows, t_cells, tz = t_rows[ok], t_cells[ok], tz[ok]
    # Candidate surfaces: tops within the max slope, on walkable pieces.
    up = ctx.walk_piece[rows] & (nz >= ctx.cos_slope - SLOPE_SLACK)
    t_up = p.tri_nz[t_rows] >= ctx.cos_slope - SLOPE_SLACK
    cand_cell = np.concatenate([cells[up], t_cells[t_up]])
    surface_cells = np.unique(cand_cell)
    cand_z = np.concatenate([top[up], tz[t_up]])
    cand_piece = np.concatenate([rows[up], p.tri_piece[t_rows[t_up]]])
    # Blocking spans, by cell.
    blocking = ctx.block_piece[rows]
    span_cell, span_top, span_bottom = cells[blocking], top[blocking], bottom[blocking]
    order = np.argsort(span_cell, kind="stable")
    span_cell, span_top, span_bottom = span_cell[order], span_top[order], span_bottom[order]
    n_cells = (box[1] - box[0]) * (box[3] - box[2])
    span_start = np.searchsorted(span_cell, np.arange(n_cells + 1))
    sample, span = _ranges(span_start[cand_cell], span_start[cand_cell + 1])
    z = cand_z[sample]
    covering = (span_bottom[span] < z + agent.max_step) & (span_top[span] > z + COVER_HEIGHT)
    covered = np.zeros(len(cand_z), dtype=bool)
    covered[sample[covering]] = True
    keep = ~covered
    cand_cell, cand_z, cand_piece = cand_cell[keep], cand_z[keep], cand_piece[keep]
    # One sample per surface: sort by (cell, z, piece), drop those within MERGE_HEIGHT above
    # the previous one of their cell.
    order = np.lexsort((cand_piece, cand_z, cand_cell))
    cand_cell, cand_z, cand_piece = cand_cell[order], cand_z[order], cand_piece[order]
    dup = np.zeros(len(cand_z), dtype=bool)
    if len(cand_z) > 1:
        dup[1:] = (cand_cell[1:] == cand_cell[:-1]) & (cand_z[1:] - cand_z[:-1] <= MERGE_HEIGHT)
    # (A run of near-equal heights keeps its first: drop every later one of the run.)
    cand_cell, cand_z, cand_piece = cand_cell[~dup], cand_z[~dup], cand_piece[~dup]
    # The column above each sample: is a blocking solid in it below z + h?
    sample, span = _ranges(span_start[cand_cell], span_start[cand_cell + 1])
    z = cand_z[sample]
    in_column = (span_bottom[span] < z + agent.height) & (span_top[span] > z + COVER_HEIGHT)
    column_free = np.ones(len(cand_z), dtype=bool)
    column_free[sample[in_column]] = False
    sx, sy = _cell_centres(g, box, cand_cell)
    return {"cell": cand_cell, "x": sx, "y": sy, "z": cand_z, "piece": cand_piece,
            "column_free": column_free}, surface_cells


def _clip_solids(p, rows, x, y):
    """Top, bottom and the top face's normal z of the vertical lines (x, y) through solid
    pieces ``rows`` (NaN where a line misses): each line clipped by the planes of its piece's
    local shape, in that shape's frame (Cyrus–Beck)."""
    k = len(rows)
    top, bottom, nz = np.full(k, np.nan), np.full(k, np.nan), np.full(k, np.nan)
    if not k:
        return top, bottom, nz
    group = p.solid_group[rows]
    order = np.argsort(group, kind="stable")
    bounds = np.flatnonzero(np.r_[True, group[order][1:] != group[order][:-1], True])
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        sel = order[a:b]
        normals, offsets = p.group_planes[int(group[sel[0]])]
        step = max(1, CLIP_CHUNK_ENTRIES // len(offsets))
        for s in range(0, len(sel), step):
            part = sel[s:s + step]
            _clip_group(p, rows[part], x[part], y[part], normals, offsets, part,
                        top, bottom, nz)
    return top, bottom, nz


def _clip_group(p, rows, x, y, normals, offsets, out_rows, top, bottom, nz):
    inv = p.inverse[rows]                                   # (K, 3, 3)
    rel = np.stack((x, y, np.zeros_like(x)), axis=1) - p.translation[rows]
    o = np.einsum("kij,kj->ki", inv, rel)                   # the line's point at z = 0, local
    u = -inv[:, :, 2]                                       # the direction (0, 0, −1), local
    num = offsets[None, :] - o @ normals.T                  # n·(o + t u) <= d  ⇔  t·den <= num
    den = u @ normals.T
    ulen = np.linalg.norm(u, axis=1)[:, None]
    parallel = np.abs(den) <= PARALLEL_SINE * ulen
    outside = (parallel & (num < -EDGE_SLACK)).any(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = num / den
    enter = np.where((den < 0.0) & ~parallel, t, -np.inf)
    leave = np.where((den > 0.0) & ~parallel, t, np.inf)
    face = enter.argmax(axis=1)
    t_in = enter[np.arange(len(face)), face]
    t_out = leave.min(axis=1)
    # The line runs down from z = 0 with speed 1: height = −t. (World units: u is the image
    # of the world direction, so t is in world length.)
    hit = ~outside & np.isfinite(t_in) & (t_in <= t_out + EDGE_SLACK)
    n_world = np.einsum("kji,kj->ki", inv, normals[face])  # B^{-T} n: the world normal
    length = np.linalg.norm(n_world, axis=1)
    top[out_rows] = np.where(hit, -t_in, np.nan)
    bottom[out_rows] = np.where(hit, -t_out, np.nan)
    nz[out_rows] = np.where(hit, n_world[:, 2] / np.where(length > 0.0, length, 1.0), np.nan)


def _clip_triangles(corners, x, y):
    """Height of each triangle (K, 3, 3) at (x, y) (K,), NaN outside it or where it is vertical
    (barycentric coordinates in the xy projection, edges included to ``EDGE_SLACK``)."""
    if not len(corners):
        return np.zeros(0)
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    e1, e2 = b - a, c - a
    area = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]
    px, py = x - a[:, 0], y - a[:, 1]
    scale = np.maximum(np.abs(e1[:, :2]).max(axis=1), np.abs(e2[:, :2]).max(axis=1))
    vertical = np.abs(area) <= PARALLEL_SINE * scale * scale
    safe = np.where(vertical, 1.0, area)
    wb = (px * e2[:, 1] - py * e2[:, 0]) / safe
    wc = (e1[:, 0] * py - e1[:, 1] * px) / safe
    wa = 1.0 - wb - wc
    slack = EDGE_SLACK / np.maximum(scale, EDGE_SLACK)
    inside = ~vertical & (wa >= -slack) & (wb >= -slack) & (wc >= -slack)
    z = a[:, 2] + wb * e1[:, 2] + wc * e2[:, 2]
    return np.where(inside, z, np.nan)


# --- capsules and links against the pieces -----------------------------------------------------
def _entries(ctx, centres, half_delta):
    """PoseTable rows (params, margin, extent) of raised capsules (``half_delta`` zero) or of
    the hulls of two of them (the parallelogram ± half_delta ± the half axis, margin r):
    ``centres``/``half_delta`` (K, 3)."""
    agent = ctx.agent
    k = len(centres)
    params = np.zeros((N_PARAMS, k))
    params[B00 + 0] = half_delta[:, 0]                      # column 0: δ / 2
    params[B00 + 3] = half_delta[:, 1]
    params[B00 + 6] = half_delta[:, 2]
    params[B00 + 8] = 1.0                                   # column 2: vertical
    params[C0], params[C1], params[C2] = centres.T
    params[HX] = 1.0
    params[HZ] = 0.5 * agent.segment_length
    extent = agent.segment_length + 2.0 * np.linalg.norm(half_delta, axis=1)
    return params, np.full(k, agent.radius), np.maximum(extent, agent.radius)


def _against_pieces(ctx, centres, half_delta, pieces_of, need):
    """GJK between each entry (raised capsule or link hull, see ``_entries``) ``e`` and piece
    ``pieces_of[e]`` (rows: one pair each). Returns (blocked, distance lower bound of the rounded
    shapes, core distance minus the piece's margin (the room from the axis), the horizontal
    unit direction from the entry's axis to the piece)."""
    p = ctx.pieces
    k = len(pieces_of)
    blocked = np.zeros(k, dtype=bool)
    distance = np.full(k, np.inf)
    room = np.full(k, np.inf)
    direction = np.zeros((k, 2))
    if not k:
        return blocked, distance, room, direction
    used, local = np.unique(pieces_of, return_inverse=True)
    base = p.table
    params, margin, extent = _entries(ctx, centres, half_delta)
    table = PoseTable.__new__(PoseTable)
    table.family = np.concatenate([base.family[used], np.full(k, POLY, dtype=np.int8)])
    table.params = np.ascontiguousarray(np.concatenate([base.params[:, used], params], axis=1))
    table.margin = np.concatenate([base.margin[used], margin])
    table.centre = np.concatenate([base.centre[:, used], centres.T], axis=1)
    table.hull_index = np.concatenate([base.hull_index[used], np.full(k, -1, dtype=np.int64)])
    table.hulls = base.hulls
    table.extent = np.concatenate([base.extent[used], extent])
    table._hull_t = base._hull_t
    ia = len(used) + np.arange(k)
    res = batch.run(table, ia, local, need=np.broadcast_to(need, (k,)).astype(float))
    code = res.code
    margins = margin + base.margin[pieces_of]
    gap = res.core_b - res.core_a
    core = np.sqrt((gap * gap).sum(axis=1))
    decided = code != batch.FALLBACK
    clear = code == batch.CLEAR
    measured = decided & ~clear
    blocked[measured] = core[measured] < margins[measured] - CONTACT_TOLERANCE
    distance[measured] = core[measured] - margins[measured]
    distance[clear] = np.broadcast_to(need, (k,))[clear]
    room[measured] = core[measured] - base.margin[pieces_of][measured]
    horizontal = gap[:, :2]
    hlen = np.sqrt((horizontal * horizontal).sum(axis=1))
    good = measured & (hlen > 0.0)
    direction[good] = horizontal[good] / hlen[good, None]
    for row in np.flatnonzero(~decided).tolist():
        a = _entry_shape(ctx, centres[row], half_delta[row])
        b = p.shape(int(pieces_of[row]))
        signed = queries.signed_distance(a, b)
        blocked[row] = signed < -CONTACT_TOLERANCE
        distance[row] = signed
        room[row] = signed + ctx.agent.radius
    return blocked, distance, room, direction


def _entry_shape(ctx, centre, half_delta):
    """An entry of ``_entries`` as a core shape (for the single queries)."""
    capsule = Capsule(ctx.agent.radius, 0.5 * ctx.agent.segment_length)
    if not np.any(half_delta):
        return translated(capsule, centre)
    return ConvexHullOf(translated(capsule, centre - half_delta),
                        translated(capsule, centre + half_delta))


def _capsule_centres(ctx, x, y, z):
    agent = ctx.agent
    mid = z + agent.max_step + agent.radius + 0.5 * agent.segment_length
    return np.stack((x, y, mid), axis=1)


def _standable(ctx, box, s) -> None:
    """Adds to the samples ``s``: ``standable``, why not (``narrow``: blocked only by width;
    ``headroom``: only by pieces above z + max_step, ``clearance`` under them), the nearest
    blocking pieces (``block_a``, ``block_b``, ``room`` from the axis to the nearest, ``pinch``:
    the two are on opposite sides) and the pieces near enough to matter for links (``near_*``,
    sorted by sample)."""
    g, p, agent = ctx.grid, ctx.pieces, ctx.agent
    n = len(s["z"])
    n_cells = (box[1] - box[0]) * (box[3] - box[2])
    cell_start = np.searchsorted(s["cell"], np.arange(n_cells + 1))
    reach = agent.radius + ctx.band
    rows, cells = _pairs_in_box(g, p.lower, p.upper, ctx.block_rows, box, grow=reach)
    pair, sample = _ranges(cell_start[cells], cell_start[cells + 1])
    piece = rows[pair]
    z = s["z"][sample]
    # The distance from the capsule's axis (vertical) to the piece's box bounds the piece's
    # from below: pieces whose box is r + band away or more are clear of the capsule and of
    # every link from it.
    x, y = s["x"][sample], s["y"][sample]
    lo, hi = p.lower[piece], p.upper[piece]
    bottom = z + agent.max_step + agent.radius
    top = bottom + agent.segment_length
    gx = np.maximum(np.maximum(lo[:, 0] - x, x - hi[:, 0]), 0.0)
    gy = np.maximum(np.maximum(lo[:, 1] - y, y - hi[:, 1]), 0.0)
    gz = np.maximum(np.maximum(lo[:, 2] - top, bottom - hi[:, 2]), 0.0)
    near = gx * gx + gy * gy + gz * gz < reach * reach
    piece, sample, z = piece[near], sample[near], z[near]
    centres = _capsule_centres(ctx, s["x"][sample], s["y"][sample], z)
    ctx.counts["capsule_pairs"] += len(piece)
    blocked, distance, room, direction = _against_pieces(
        ctx, centres, np.zeros_like(centres), piece, ctx.band)
    s["standable"] = np.bincount(sample[blocked], minlength=n) == 0
    low = blocked & (p.lower[piece, 2] < z + agent.max_step - CONTACT_TOLERANCE)
    any_low = np.bincount(sample[low], minlength=n) > 0
    overhead = ~s["standable"] & ~any_low
    s["headroom"] = overhead
    s["narrow"] = ~s["standable"] & any_low & s["column_free"]
    # Blocked only by a step: every blocking piece reaches below z + s and ends below z + h
    # (the agent could climb onto it if steps were higher).
    stepish = low & (p.upper[piece, 2] <= z + agent.height)
    s["step"] = ~s["standable"] & (np.bincount(sample[stepish], minlength=n)
                                   == np.bincount(sample[blocked], minlength=n))
    # Headroom: the lowest blocking piece's height above the surface, and that piece.
    head = p.lower[piece, 2] - z
    order = np.lexsort((piece[blocked], head[blocked], sample[blocked]))
    h_sample = sample[blocked][order]
    first = _firsts(h_sample)
    s["clearance"] = np.full(n, np.inf)
    s["head_piece"] = np.full(n, -1)
    s["clearance"][h_sample[first]] = head[blocked][order][first]
    s["head_piece"][h_sample[first]] = piece[blocked][order][first]
    # Width: the two nearest pieces (blocking, or within the band) of each sample; a pinch
    # when they lie on opposite sides and the room between them is less than 2r.
    measured = blocked | (distance < ctx.band)
    m_sample, m_piece, m_room = sample[measured], piece[measured], room[measured]
    m_dir = direction[measured]
    order = np.lexsort((m_piece, m_room, m_sample))
    m_sample, m_piece, m_room, m_dir = m_sample[order], m_piece[order], m_room[order], \
        m_dir[order]
    first = _firsts(m_sample)
    block_a, block_b = np.full(n, -1), np.full(n, -1)
    s["room"] = np.full(n, np.inf)
    pinch = np.zeros(n, dtype=bool)
    block_a[m_sample[first]] = m_piece[first]
    s["room"][m_sample[first]] = m_room[first]
    second = first + 1
    has_second = second < len(m_sample)
    has_second[has_second] = m_sample[second[has_second]] == m_sample[first[has_second]]
    f2, s2 = first[has_second], second[has_second]
    block_b[m_sample[f2]] = m_piece[s2]
    pinch[m_sample[f2]] = (((m_dir[f2] * m_dir[s2]).sum(axis=1) < PINCH_COS)
                           & (m_room[f2] + m_room[s2] < 2.0 * agent.radius))
    s["block_a"], s["block_b"], s["pinch"] = block_a, block_b, pinch
    # Pieces within the band of standable samples (those a link from them could meet).
    near = ~blocked & (distance < ctx.band)
    order = np.argsort(sample[near], kind="stable")
    s["near_sample"] = sample[near][order]
    s["near_piece"] = piece[near][order]
    s["near_distance"] = distance[near][order]


def _firsts(sorted_keys):
    """Positions of the first row of each run of equal keys."""
    if not len(sorted_keys):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])


def _links(ctx, box, own, s) -> dict:
    """Edges from the samples of the tile's own cells to those of their neighbours (E, N, NE,
    NW): kind LINK / LINK_BLOCKED (standable ends within max_step; the hull of the two capsules
    tested), STEP_EDGE (ends standable or blocked only by a step, higher than max_step, at
    most the agent's height) or
    OPEN (within max_step, an end not standable: for the reasons). Ends as (cell, rank)."""
    g, agent = ctx.grid, ctx.agent
    hi0, hi1, hj0, hj1 = box
    i0, i1, j0, j1 = own
    width = hi1 - hi0
    n_cells = width * (hj1 - hj0)
    cell_start = np.searchsorted(s["cell"], np.arange(n_cells + 1))
    iy, ix = np.divmod(np.arange(n_cells), width)
    ix, iy = ix + hi0, iy + hj0
    owned = np.flatnonzero((ix >= i0) & (ix < i1) & (iy >= j0) & (iy < j1))
    pieces_a, pieces_b = [], []
    for dx, dy in _DIRECTIONS:
        nbx, nby = ix[owned] + dx, iy[owned] + dy
        ok = (nbx >= hi0) & (nbx < hi1) & (nby >= hj0) & (nby < hj1)
        ca = owned[ok]
        cb = (nby[ok] - hj0) * width + (nbx[ok] - hi0)
        pair, a = _ranges(cell_start[ca], cell_start[ca + 1])
        pair2, b = _ranges(cell_start[cb[pair]], cell_start[cb[pair] + 1])
        pieces_a.append(a[pair2])
        pieces_b.append(b)
    a = np.concatenate(pieces_a)
    b = np.concatenate(pieces_b)
    z = s["z"]
    dz = z[b] - z[a]
    both = s["standable"][a] & s["standable"][b]
    small = np.abs(dz) <= agent.max_step
    # (Other edges matter only between samples a reason can relax.)
    relaxable = s["standable"] | s["narrow"] | s["headroom"] | s["step"]
    climbable = s["standable"] | s["step"]
    step = ~small & climbable[a] & climbable[b] & (np.abs(dz) <= agent.height)
    keep = (small & relaxable[a] & relaxable[b]) | step
    a, b, dz, both, small, step = a[keep], b[keep], dz[keep], both[keep], small[keep], step[keep]
    kind = np.full(len(a), OPEN, dtype=np.int8)
    kind[step] = STEP_EDGE
    test = np.flatnonzero(both & small)
    kind[test] = LINK
    if len(test):
        blocked = _link_hulls(ctx, s, a[test], b[test])
        kind[test[blocked]] = LINK_BLOCKED
    cell = s["cell"]
    ly_a, lx_a = np.divmod(cell[a], width)
    ly_b, lx_b = np.divmod(cell[b], width)
    # (int32: a grid has at most MAX_CELLS cells, a cell a few surfaces.)
    return {"edge_a_cell": ((ly_a + hj0) * g.nx + lx_a + hi0).astype(np.int32),
            "edge_a_rank": (a - cell_start[cell[a]]).astype(np.int32),
            "edge_b_cell": ((ly_b + hj0) * g.nx + lx_b + hi0).astype(np.int32),
            "edge_b_rank": (b - cell_start[cell[b]]).astype(np.int32),
            "edge_kind": kind}


def _link_hulls(ctx, s, a, b):
    """Whether the hull of the raised capsules of samples ``a`` and ``b`` (standable) overlaps
    a blocking piece: tested against the pieces within |δ|/2 of either capsule."""
    k = len(a)
    ca = _capsule_centres(ctx, s["x"][a], s["y"][a], s["z"][a])
    cb = _capsule_centres(ctx, s["x"][b], s["y"][b], s["z"][b])
    half_delta = 0.5 * (cb - ca)
    half = np.linalg.norm(half_delta, axis=1)
    near_sample = s["near_sample"]
    n = len(s["z"])
    start = np.searchsorted(near_sample, np.arange(n + 1))
    links, pieces = [], []
    for end in (a, b):
        link, row = _ranges(start[end], start[end + 1])
        close = s["near_distance"][row] < half[link]
        links.append(link[close])
        pieces.append(s["near_piece"][row[close]])
    link = np.concatenate(links)
    piece = np.concatenate(pieces)
    blocked = np.zeros(k, dtype=bool)
    if not len(link):
        return blocked
    key = np.unique(link * len(ctx.pieces) + piece)
    link, piece = np.divmod(key, len(ctx.pieces))
    mid = 0.5 * (ca + cb)
    ctx.counts["link_pairs"] += len(link)
    hit, _, _, _ = _against_pieces(ctx, mid[link], half_delta[link], piece, 0.0)
    blocked[link[hit]] = True
    return blocked


# --- the whole level ---------------------------------------------------------------------------
class TraversalResult:
    """What ``check_traversal`` found (see the module doc for every field)."""

    def __init__(self, agent, grid, samples, surface, names, starts, unplaced, findings, stats):
        self.agent = agent
        self.origin = (grid.x0, grid.y0)
        self.cell = grid.c
        self.shape = (grid.nx, grid.ny)
        self.cell_x = grid.x0 + (np.arange(grid.nx) + 0.5) * grid.c
        self.cell_y = grid.y0 + (np.arange(grid.ny) + 0.5) * grid.c
        self.sample_cell = samples["cell"]
        self.sample_x = samples["x"]
        self.sample_y = samples["y"]
        self.sample_z = samples["z"]
        self.sample_object = samples["object"]
        self.standable = samples["standable"]
        self.reachable = samples["reachable"]
        self.surface = surface          # (nx·ny,) a walkable surface, covered or not
        self.cell_start = np.searchsorted(self.sample_cell, np.arange(grid.nx * grid.ny + 1))
        self.names = list(names)
        self.starts = starts
        self.unplaced_starts = unplaced
        self.findings = findings
        self.stats = stats

    def heights(self, ix: int, iy: int) -> list:
        """Heights of the walkable surfaces of cell (ix, iy), lowest first."""
        k = iy * self.shape[0] + ix
        return self.sample_z[self.cell_start[k]:self.cell_start[k + 1]].tolist()

    @property
    def reachable_area(self) -> float:
        return float(np.count_nonzero(self.reachable)) * self.cell * self.cell

    @property
    def standable_area(self) -> float:
        return float(np.count_nonzero(self.standable)) * self.cell * self.cell

    def summary(self) -> dict:
        """Plain numbers for a report's metadata: the agent, the grid, areas and starts."""
        a = self.agent
        return {"agent": {"radius": a.radius, "height": a.height, "max_step": a.max_step,
                          "max_slope": a.max_slope, "cell": a.cell},
                "cells": [int(self.shape[0]), int(self.shape[1])],
                "origin": [float(self.origin[0]), float(self.origin[1])],
                "surfaces": int(len(self.sample_z)),
                "standable_area": self.standable_area, "reachable_area": self.reachable_area,
                "starts": [[float(self.sample_x[k]), float(self.sample_y[k]),
                            float(self.sample_z[k])] for k in self.starts.tolist()],
                "unplaced_starts": [list(p) for p in self.unplaced_starts]}

    def __repr__(self) -> str:
        return (f"TraversalResult({self.shape[0]}×{self.shape[1]} cells, "
                f"{len(self.sample_z)} surfaces, {len(self.findings)} findings)")


def check_traversal(shapes, names, walkable, blocks_agent, agent: Agent | None = None,
                    starts=(), min_area: float = 1.0, bounds=None, origin=None, jobs=1,
                    progress=None) -> TraversalResult:
    """The traversal check of a level given as world-space core shapes (see the module doc)."""
    t0 = time.perf_counter()
    agent = Agent() if agent is None else agent
    if not isinstance(agent, Agent):
        raise ValueError(f"agent must be an Agent, got {type(agent).__name__}")
    shapes = list(shapes)
    names = [str(n) for n in names]
    if len(names) != len(shapes):
        raise ValueError(f"names has {len(names)} entries for {len(shapes)} shapes")
    walkable = _flags("walkable", walkable, len(shapes))
    blocking = _flags("blocks_agent", blocks_agent, len(shapes))
    min_area = validation.size("min_area", min_area)
    start_points = _points("starts", starts)
    jobs = default_jobs() if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    pieces = _Pieces(shapes)
    grid = _make_grid(pieces, walkable[pieces.owner], agent, bounds, origin)
    ctx = _Context(pieces, walkable, blocking, agent, grid)
    stats = {"pieces": len(pieces), "cells": grid.nx * grid.ny,
             "times": {"setup": time.perf_counter() - t0}}
    t1 = time.perf_counter()
    tiles = _run_tiles(ctx, jobs, progress)
    stats["times"]["tiles"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    pairs = np.sum([t["pairs"] for t in tiles], axis=0)
    stats.update(zip(sorted(ctx.counts), pairs.tolist()))
    samples, edges, surface = _join(tiles, grid)
    del tiles
    samples["object"] = pieces.owner[samples["piece"]]
    starts_ids, unplaced = _place_starts(samples, grid, agent, start_points)
    label = _components(len(samples["z"]), *_edges_of(edges, samples, (LINK,)))
    reachable = np.zeros(len(label), dtype=bool)
    if len(starts_ids):
        reachable = np.isin(label, label[starts_ids]) & samples["standable"]
    samples["reachable"] = reachable
    findings = _findings(ctx, samples, edges, label, names, min_area)
    stats["samples"] = len(samples["z"])
    stats["links"] = int(np.count_nonzero(edges["kind"] == LINK))
    stats["times"]["graph"] = time.perf_counter() - t2
    return TraversalResult(agent, grid, samples, surface, names, starts_ids, unplaced,
                           findings, stats)


def _flags(name, value, n):
    if isinstance(value, (bool, np.bool_)):
        return np.full(n, bool(value))
    try:
        flags = np.asarray(list(value), dtype=bool)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be one bool per shape, got {value!r}") from None
    if flags.shape != (n,):
        raise ValueError(f"{name} has {flags.size} entries for {n} shapes")
    return flags


def _points(name, value):
    try:
        p = np.asarray(value, dtype=float).reshape(-1, 3) if len(value) else np.zeros((0, 3))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be points (x, y, z), got {value!r}") from None
    if not np.all(np.isfinite(p)):
        raise ValueError(f"{name} must be finite points, got {p.tolist()}")
    return p


def _work(ctx, tile):
    return _tile(ctx, *tile)


def _run_tiles(ctx, jobs, progress):
    g = ctx.grid
    tiles = [(tx, ty) for ty in range(-(-g.ny // TILE_CELLS))
             for tx in range(-(-g.nx // TILE_CELLS))]
    total = len(tiles)
    if progress is not None:
        progress(0, total)
    if jobs == 1 or total == 1 or not _can_fork():
        tiled = contextlib.nullcontext(_work(ctx, tile) for tile in tiles)
    else:
        tiled = forked(_work, ctx, tiles, jobs)
    out = []
    with tiled as results:
        for k, result in enumerate(results):
            out.append(result)
            if progress is not None:
                progress(k + 1, total)
    return out


def _join(tiles, grid):
    """All tiles' samples in (cell, z) order, and their edges by sample index."""
    keys = [k for k in tiles[0]
            if not k.startswith("edge_") and k not in ("surface_cells", "pairs")]
    samples = {k: np.concatenate([t[k] for t in tiles]) for k in keys}
    order = np.argsort(samples["cell"], kind="stable")
    samples = {k: v[order] for k, v in samples.items()}
    start = np.searchsorted(samples["cell"], np.arange(grid.nx * grid.ny + 1))
    surface = np.zeros(grid.nx * grid.ny, dtype=bool)
    a, b, kind = [], [], []
    for t in tiles:             # (tile by tile, each tile's arrays freed as it is joined)
        surface[t.pop("surface_cells")] = True
        a.append((start[t.pop("edge_a_cell")] + t.pop("edge_a_rank")).astype(np.int32))
        b.append((start[t.pop("edge_b_cell")] + t.pop("edge_b_rank")).astype(np.int32))
        kind.append(t.pop("edge_kind"))
    edges = {"a": np.concatenate(a), "b": np.concatenate(b), "kind": np.concatenate(kind)}
    return samples, edges, surface


def _edges_of(edges, samples, kinds):
    keep = np.isin(edges["kind"], kinds)
    return edges["a"][keep], edges["b"][keep]


def _components(n, u, v):
    """Connected-component label of each of ``n`` nodes under the edges (u, v): the smallest
    node of its component (hooking of roots onto smaller roots, then pointer jumping). Edges
    inside one component are dropped as they appear: they never matter again."""
    label = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    for _ in range(MAX_HOOK_ROUNDS):
        lu, lv = label[u], label[v]
        differ = lu != lv
        if not differ.any():
            return label
        u, v, lu, lv = u[differ], v[differ], lu[differ], lv[differ]
        np.minimum.at(label, np.maximum(lu, lv), np.minimum(lu, lv))
        for _ in range(MAX_JUMPS):
            jumped = label[label]
            if np.array_equal(jumped, label):
                break
            label = jumped
        else:
            raise RuntimeError("component labelling exceeded MAX_JUMPS (a bug)")
    raise RuntimeError("component labelling exceeded MAX_HOOK_ROUNDS (a bug)")


def _place_starts(samples, grid, agent, points):
    """Sample of each start: the standable surface within r of it (horizontally, nearest
    first) at most max_step above it and at most the agent's height below, highest first."""
    ids, unplaced = [], []
    x, y, z = samples["x"], samples["y"], samples["z"]
    for point in points:
        px, py, pz = point.tolist()
        d2 = (x - px) ** 2 + (y - py) ** 2
        ok = ((d2 <= agent.radius ** 2) & samples["standable"]
              & (z <= pz + agent.max_step) & (z >= pz - agent.height))
        rows = np.flatnonzero(ok)
        if not len(rows):
            unplaced.append((px, py, pz))
            continue
        best = rows[np.lexsort((-z[rows], d2[rows]))[0]]
        ids.append(int(best))
    return np.asarray(ids, dtype=np.int64), unplaced


# --- findings ----------------------------------------------------------------------------------
def _findings(ctx, s, edges, label, names, min_area):
    c = ctx.agent.cell
    reachable = s["reachable"]
    unreached = s["standable"] & ~reachable
    if not unreached.any():
        return []
    regions, counts = np.unique(label[unreached], return_counts=True)
    big = regions[counts * c * c >= min_area - 1e-12 * max(min_area, 1.0)]
    if not len(big):
        return []
    # region index of each sample (-1: not in a reported region)
    region = np.full(len(label), -1)
    in_big = unreached & np.isin(label, big)
    region[in_big] = np.searchsorted(big, label[in_big])
    rows_of = _grouped(region, len(big))
    found = [_unreachable(ctx, s, rows_of(r), names) for r in range(len(big))]
    found += _step_reasons(ctx, s, edges, region, rows_of, names)
    found += _passage_reasons(ctx, s, edges, region, rows_of, names, "narrow")
    found += _passage_reasons(ctx, s, edges, region, rows_of, names, "headroom")
    return sorted(found, key=Finding.sort_key)


def _grouped(keys, count):
    """A function giving the rows whose key is g, for g in range(count) (keys < 0: none),
    from one sort."""
    rows = np.flatnonzero(keys >= 0)
    order = rows[np.argsort(keys[rows], kind="stable")]
    start = np.searchsorted(keys[order], np.arange(count + 1))
    return lambda g: order[start[g]:start[g + 1]]


def _region_box(ctx, s, rows):
    h = 0.5 * ctx.agent.cell
    lower = np.array([s["x"][rows].min() - h, s["y"][rows].min() - h, s["z"][rows].min()])
    upper = np.array([s["x"][rows].max() + h, s["y"][rows].max() + h, s["z"][rows].max()])
    return lower, upper


def _point(s, row):
    return np.array([s["x"][row], s["y"][row], s["z"][row]])


def _unreachable(ctx, s, rows, names):
    objects = s["object"][rows]
    owners, counts = np.unique(objects, return_counts=True)
    main = owners[np.lexsort((owners, -counts))[0]]
    centre = np.array([s["x"][rows].mean(), s["y"][rows].mean(), s["z"][rows].mean()])
    d2 = (s["x"][rows] - centre[0]) ** 2 + (s["y"][rows] - centre[1]) ** 2 \
        + (s["z"][rows] - centre[2]) ** 2
    point = _point(s, rows[int(np.argmin(d2))])
    area = len(rows) * ctx.agent.cell ** 2
    return Finding(names[main], None, UNREACHABLE, None, None, None,
                   objects=tuple(sorted({names[o] for o in owners.tolist()})), point=point,
                   area=float(area), bbox=_region_box(ctx, s, rows),
                   extra={"cells": int(len(rows))})


def _step_reasons(ctx, s, edges, region, rows_of, names):
    """A ``step`` finding per region reached from a reachable sample over one step higher than
    max_step: the samples standable or blocked only by a step, joined by the edges within
    max_step, make *flats*; a step edge from a flat holding a reachable sample to a flat
    holding the region's samples is its reason (the lowest such step)."""
    node = s["standable"] | s["step"]
    kind, a, b = edges["kind"], edges["a"], edges["b"]
    flat_edge = (kind != STEP_EDGE) & node[a] & node[b]
    flat = _components(len(node), a[flat_edge], b[flat_edge])
    reach_flat = np.zeros(len(node), dtype=bool)
    reach_flat[flat[s["reachable"]]] = True
    # The region of each flat that holds one (the first by region index, when several).
    flat_region = np.full(len(node), -1)
    inside = np.flatnonzero(region >= 0)[::-1]
    flat_region[flat[inside]] = region[inside]
    steps = kind == STEP_EDGE
    a, b = a[steps], b[steps]
    dz = s["z"][b] - s["z"][a]
    fwd = reach_flat[flat[a]] & (flat_region[flat[b]] >= 0)
    back = reach_flat[flat[b]] & (flat_region[flat[a]] >= 0)
    src = np.concatenate([a[fwd], b[back]])
    dst = np.concatenate([b[fwd], a[back]])
    height = np.abs(np.concatenate([dz[fwd], dz[back]]))
    out = []
    if not len(src):
        return out
    reg = flat_region[flat[dst]]
    order = np.lexsort((dst, src, height, reg))
    first = order[np.r_[True, reg[order][1:] != reg[order][:-1]]]
    for k in first.tolist():
        lo, hi = (src[k], dst[k]) if s["z"][src[k]] <= s["z"][dst[k]] else (dst[k], src[k])
        o_hi, o_lo = s["object"][hi], s["object"][lo]
        rows = rows_of(reg[k])
        point = 0.5 * (_point(s, src[k]) + _point(s, dst[k]))
        out.append(Finding(names[o_hi], names[o_lo] if o_lo != o_hi else None, STEP, None,
                           None, None, objects=tuple(sorted({names[o_hi], names[o_lo]})),
                           point=point, area=float(len(rows) * ctx.agent.cell ** 2),
                           bbox=_region_box(ctx, s, rows),
                           extra={"height": float(height[k])}))
    return out


def _passage_reasons(ctx, s, edges, region, rows_of, names, why):
    """``narrow`` or ``low_headroom`` findings: components of samples blocked only by width
    (or only by height), joined by edges within max_step, that touch both a reachable sample
    and a reported region; per region the passage's best sample (the pinched one with the
    most room, or the one with the most clearance)."""
    node = s["narrow"] if why == "narrow" else s["headroom"]
    if not node.any():
        return []
    small = edges["kind"] != STEP_EDGE
    a, b = edges["a"][small], edges["b"][small]
    inner = node[a] & node[b]
    label = _components(len(node), a[inner], b[inner])
    # Which passages touch a reachable sample, and which regions.
    cross = node[a] ^ node[b]
    pa, other = np.where(node[a], a, b)[cross], np.where(node[a], b, a)[cross]
    passage = label[pa]
    touches_reach = np.unique(passage[s["reachable"][other]])
    into = region[other] >= 0
    pairs = np.unique(np.stack((passage[into], region[other][into]), axis=1), axis=0)
    pairs = pairs[np.isin(pairs[:, 0], touches_reach)]
    members_of = _grouped(np.where(node, label, -1), len(node))
    out = []
    done = set()
    for q, r in pairs.tolist():
        if r in done:
            continue
        members = members_of(q)
        if why == "narrow":
            pinched = members[s["pinch"][members]]
            if not len(pinched):
                continue
            best = pinched[np.argmax(s["room"][pinched])]
            pa_, pb_ = int(s["block_a"][best]), int(s["block_b"][best])
            width = float(queries.distance(ctx.pieces.shape(pa_),
                                           ctx.pieces.shape(pb_)).distance)
            oa, ob = ctx.pieces.owner[pa_], ctx.pieces.owner[pb_]
            na, nb = sorted((names[oa], names[ob]))
            kind, extra = NARROW, {"width": width}
            members = pinched
        else:
            best = members[np.argmax(s["clearance"][members])]
            piece = int(s["head_piece"][best])
            na, nb = names[ctx.pieces.owner[piece]], None
            kind, extra = LOW_HEADROOM, {"clearance": float(s["clearance"][best])}
        done.add(r)
        rows = rows_of(r)
        objs = tuple(sorted({na} | ({nb} if nb else set())))
        out.append(Finding(na, nb, kind, None, None, None, objects=objs,
                           point=_point(s, best), area=float(len(rows) * ctx.agent.cell ** 2),
                           bbox=_region_box(ctx, s, members), extra=extra))
    return out


# --- the map -----------------------------------------------------------------------------------
def _map_scale(result, cell_pixels, max_size):
    nx, ny = result.shape
    k = int(cell_pixels)
    if k < 1:
        raise ValueError(f"cell_pixels must be at least 1, got {cell_pixels!r}")
    step = 1
    if max_size is not None:
        step = max(1, -(-max(nx, ny) // int(max_size)))
    return k, step


def map_image(result: TraversalResult, cell_pixels: int = 1, max_size: int | None = None):
    """The top-down map of ``result`` as an (H, W, 3) uint8 RGB image, north (+y) up: per cell
    the best of its surfaces — reachable (green), standable but unreachable (orange), a walkable
    surface where the agent cannot stand or that a blocking solid covers (red: under walls and
    props too) — or no walkable surface (dark grey); starts white.
    ``cell_pixels`` pixels per cell; ``max_size`` caps the larger side in cells (every k-th cell
    is drawn, k the smallest that fits)."""
    k, step = _map_scale(result, cell_pixels, max_size)
    nx, ny = result.shape
    # 0 no walkable surface, 1 walkable but blocked or covered, 2 unreachable, 3 reachable
    state = result.surface.astype(np.int8)
    cell = result.sample_cell
    value = np.where(result.reachable, 3, np.where(result.standable, 2, 1)).astype(np.int8)
    np.maximum.at(state, cell, value)
    palette = np.array([COLOURS["empty"], COLOURS["blocked"], COLOURS["unreachable"],
                        COLOURS["reachable"]], dtype=np.uint8)
    grid = state.reshape(ny, nx)[::step, ::step][::-1]
    image = palette[grid]
    for row in result.starts.tolist():
        i, j = divmod(int(cell[row]), nx)
        r, c = grid.shape[0] - 1 - i // step, j // step
        image[max(r - 1, 0):r + 2, c] = COLOURS["start"]
        image[r, max(c - 1, 0):c + 2] = COLOURS["start"]
    if k > 1:
        image = np.repeat(np.repeat(image, k, axis=0), k, axis=1)
    return image


def image_pixel(result: TraversalResult, x: float, y: float, cell_pixels: int = 1,
                max_size: int | None = None) -> tuple:
    """(row, column) of the world point (x, y) in ``map_image(result, cell_pixels, max_size)``."""
    k, step = _map_scale(result, cell_pixels, max_size)
    nx, ny = result.shape
    j = int(math.floor((x - result.origin[0]) / result.cell))
    i = int(math.floor((y - result.origin[1]) / result.cell))
    rows = -(-ny // step)
    return ((rows - 1 - i // step) * k + k // 2, (j // step) * k + k // 2)
