"""The convex hull of a point set as a shape: support by hill-climbing with a warm start.

Seed 000 §2: the support point of a polytope is its vertex with the greatest dot product, found
in linear time by scanning, or in "almost constant time" under frame coherence by *hill-climbing*
the vertex adjacency graph from the previously returned vertex: move to any neighbour that is
farther along the direction until none is. On a convex polytope a vertex with no farther
neighbour is a global maximiser (the polytope lies in the cone of its edges at that vertex), so
the walk is exact; each move strictly increases the dot product, so it ends within M moves.

The graph comes from ``quickhull.convex_hull``: triangle edges for solid hulls, the polygon cycle
for flat ones, the single edge of a segment, nothing for a point.

Two refinements, both measured below: tiny hulls are scanned instead (``SCAN_MAX_VERTICES``), and
a walk that is still going after a move -- the direction changed a lot since the last call --
jumps to the support vertex of the nearest of a grid of precomputed directions (a *cube map* of
the Gauss map: each face of the direction cube split into K×K cells), so that an unrelated
direction starts next to its answer instead of crossing the hull one edge at a time. A jump only
ever moves to a higher vertex, so the walk stays monotone and exact.
"""

from __future__ import annotations

from itertools import accumulate, chain

import numpy as np

from .quickhull import _in_safe_range, collector_paused, convex_hull
from .shapes import Shape

# Hulls with at most this many vertices are scanned instead of climbed. Median µs per
# ``support_xyz`` call on sphere hulls ("coherent": the direction turns 0.5° per call; 50 and up
# from ``scripts/bench.py hull``, smaller sizes from the same loops; the machine was shared, so
# +-30%):
#
#   vertices | scan | numpy argmax | climb, random directions | climb, coherent
#         8  | 1.2  | 5.9          | 1.5                      | 0.9
#        12  | 1.7  | 6.3          | 1.9                      | 0.9
#        16  | 1.9  | 5.3          | 2.0                      | 0.9
#        50  | 4.9  | 5.5          | 3.0 (3.4 before the map) | 1.1
#       500  | 48   | 6.2          | 3.2 (7.8)                | 1.5
#     10000  | 1015 | 16.5         | 6.0 (19)                 | 1.6
#
# (The climb's random-direction figures are with the cube map below; in brackets, with the 16
# seed vertices it replaced.)
#
# Scanning only wins below ~16 vertices and only for incoherent directions, by ~0.3 µs; numpy
# never wins. The threshold keeps boxes and other hulls of up to 8 corners on the plain scan.
SCAN_MAX_VERTICES = 8
# After this many moves a climb looks its direction up in the cube map (below) and jumps to that
# cell's vertex if it is higher: coherent queries (GJK's iterations, a watched pair from frame to
# frame) mostly end before and pay nothing, while an unrelated direction (MPR's portal search)
# resumes next to its answer.
JUMP_AFTER_MOVES = 1
_INF = float("inf")
# Cells along each edge of a cube-map face: about one vertex per cell, at most this many.
CUBE_MAP_MAX_CELLS = 16
# Vertex-direction dot products per matrix product when the cube map is built: the temporary
# (2 MB in single precision) stays in cache (100k vertices, in doubles: 0.46 s with 4 MB; 0.69 s
# at 64 MB; 10 s all at once).
CUBE_MAP_CHUNK = 1 << 19


def _cube_map(vertices: np.ndarray) -> tuple:
    """(k, table): the support vertex of the centre direction of each of the 6·k² cells, indexed
    as ``_cell`` computes."""
    m = len(vertices)
    k = int(min(CUBE_MAP_MAX_CELLS, max(1, round(np.sqrt(m / 6.0)))))
    centres = -1.0 + (2.0 * np.arange(k) + 1.0) / k
    u, v = (c.ravel() for c in np.meshgrid(centres, centres, indexing="ij"))
    one = np.ones_like(u)
    faces = []
    for axis in range(3):
        for sign in (1.0, -1.0):
            d = np.empty((len(u), 3))
            d[:, axis] = sign * one
            others = [i for i in range(3) if i != axis]
            d[:, others[0]], d[:, others[1]] = u, v
            faces.append(d)
    directions = np.concatenate(faces).astype(np.float32)
    # In single precision: a cell's vertex is only where a climb resumes (it moves on to the
    # exact support), and near-ties are all the rounding can change; half the time of doubles
    # (0.5 against 1.0 ms for 1,000 vertices). Scaled by a power of two if huge, so that no
    # product overflows.
    scaled_t = _in_safe_range(vertices)[0].T.astype(np.float32)
    # A few directions at a time, each a contiguous row of dot products (all 6·16² at once
    # against 100k vertices, reduced down the columns, was a 1.2 GB array).
    step = max(1, CUBE_MAP_CHUNK // m)
    table = [(directions[s:s + step] @ scaled_t).argmax(axis=1)
             for s in range(0, len(directions), step)]
    return k, tuple(np.concatenate(table).tolist())


def _centroid(vertices: np.ndarray) -> tuple:
    """The vertex centroid (summed in a power-of-two scaled copy when the sum could overflow)."""
    scaled, exponent = _in_safe_range(vertices)
    return tuple(float(c) for c in np.ldexp(scaled.mean(axis=0), exponent))


def _cell(x, y, z, k) -> int:
    """The cube-map cell of direction (x, y, z) (not zero): the face of its largest component,
    then the other two components divided by it, in k×k cells."""
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax == _INF or ay == _INF or az == _INF:
        return 0                      # (an overflowed direction: any start is exact)
    if ax >= ay and ax >= az:
        face, u, v, m = (0 if x > 0.0 else 1), y, z, ax
    elif ay >= az:
        face, u, v, m = (2 if y > 0.0 else 3), x, z, ay
    else:
        face, u, v, m = (4 if z > 0.0 else 5), x, y, az
    i = int((u / m + 1.0) * 0.5 * k)
    j = int((v / m + 1.0) * 0.5 * k)
    return (face * k + (i if i < k else k - 1)) * k + (j if j < k else k - 1)


class Hull(Shape):
    """Convex hull of an (N, 3) array of points; flat, collinear and single-point sets are valid.

    ``search`` picks the support method: ``"auto"`` (scan small hulls, climb the rest),
    ``"climb"`` or ``"scan"`` (for benchmarks and tests). The warm start is shared by every
    caller of the shape (threads included): harmless, as any start gives a true maximiser.

    ``faces``, optional, are the (F, 3) triangles of the mesh the points come from (outward,
    counter-clockwise): a closed convex mesh is then taken as its own hull after a check, much
    faster than a Quickhull; any other mesh gives the hull the points alone give.
    """

    __slots__ = ("_data", "_vertices", "_faces", "_vl", "_adj", "_nbrs", "_warm", "_scan",
                 "_cap", "_cells", "_map", "_center", "_frozen")
    kind = "hull"
    polytope = True

    def __init__(self, points, search: str = "auto", faces=None) -> None:
        super().__init__()
        if search not in ("auto", "climb", "scan"):
            raise ValueError(f"search must be 'auto', 'climb' or 'scan', got {search!r}")
        data = convex_hull(points, faces)  # validates: ValueError naming ``points``, ``faces``
        self._data = data
        self._vertices = data.vertices
        self._vertices.setflags(write=False)
        self._faces = data.faces
        self._faces.setflags(write=False)
        self._adj = data.adjacency
        with collector_paused():
            self._vl = list(map(tuple, data.vertices.tolist()))
            # The climb's neighbour lists carry the neighbours' coordinates, (j, x, y, z) each,
            # so that a step reads them without indexing the vertex list: ~0.6 µs a call. (Made
            # in bulk: one tuple at a time took 0.6 s for a 100k-vertex hull.)
            heads = list(chain.from_iterable(self._adj))
            xs, ys, zs = (data.vertices[np.array(heads, dtype=np.intp)].T.tolist() if heads
                          else ([], [], []))
            entries = list(zip(heads, xs, ys, zs))
            ends = list(accumulate(map(len, self._adj)))
            self._nbrs = tuple(map(tuple, map(entries.__getitem__,
                                              map(slice, [0] + ends[:-1], ends))))
        # The warm start: the last two distinct vertices returned, newest first. Shapes are
        # immutable, so this one piece of mutable state lives in a list (it never changes the
        # answer, only where the climb starts).
        self._warm = [0, 0]
        m = len(self._vl)
        self._scan = search == "scan" or (search == "auto" and m <= SCAN_MAX_VERTICES)
        # Each move strictly increases the dot product, so a walk visits each vertex at most
        # once: M moves is a hard cap that only a bug (or a non-convex graph) could reach.
        self._cap = m
        self._cells, self._map = _cube_map(data.vertices)
        self._center = _centroid(data.vertices)
        self._freeze()

    def _init_args(self):
        # Its own vertices (and, when solid, faces: a closed convex mesh, checked, not rebuilt).
        search = "scan" if self._scan else ("climb" if len(self._vl) <= SCAN_MAX_VERTICES
                                            else "auto")
        return (self._vertices, search, self._faces if self._data.dim == 3 else None)

    # --- the hull ------------------------------------------------------------------------------
    @property
    def vertices(self) -> np.ndarray:
        """(M, 3) corners of the hull (exact copies of input points; read-only)."""
        return self._vertices

    @property
    def faces(self) -> np.ndarray:
        """(F, 3) vertex indices of outward counter-clockwise triangles (one side when flat)."""
        return self._faces

    @property
    def adjacency(self) -> tuple:
        """``adjacency[i]``: the vertices joined to vertex ``i`` by a hull edge (climbing graph)."""
        return self._adj

    @property
    def dim(self) -> int:
        """3 for a solid hull, 2 flat, 1 a segment, 0 a single point."""
        return self._data.dim

    @property
    def data(self):
        """The ``quickhull.HullData`` it was built from (normal, tolerance, input indices)."""
        return self._data

    # --- the support mapping -------------------------------------------------------------------
    def support_xyz(self, x, y, z):
        vl = self._vl
        if self._scan:
            best, bd = 0, -float("inf")
            for i, (vx, vy, vz) in enumerate(vl):
                d = vx * x + vy * y + vz * z
                if d > bd:
                    bd, best = d, i
            self._warm[0] = best
            return vl[best]
        nbrs = self._nbrs
        warm = self._warm
        i = warm[0]
        vx, vy, vz = vl[i]
        bd = vx * x + vy * y + vz * z
        # The second slot serves a hull queried alternately from two sides (both shapes of a
        # pair sharing one Hull, as linked duplicates do; GJK asks A along -v and B along +v).
        vx, vy, vz = vl[warm[1]]
        d = vx * x + vy * y + vz * z
        if d > bd:
            bd, i = d, warm[1]
        moves = 0
        for _ in range(self._cap):
            # steepest ascent: the best neighbour, so the walk takes as few moves as possible
            nxt = -1
            for j, vx, vy, vz in nbrs[i]:
                d = vx * x + vy * y + vz * z
                if d > bd:
                    bd, nxt = d, j
            if nxt < 0:
                break
            i = nxt
            moves += 1
            if moves == JUMP_AFTER_MOVES:
                # Maybe a long walk ahead (the direction changed a lot): jump to the support
                # vertex of the nearest cube-map direction, if it is higher.
                j = self._map[_cell(x, y, z, self._cells)]
                vx, vy, vz = vl[j]
                d = vx * x + vy * y + vz * z
                if d > bd:
                    bd, i = d, j
        else:
            raise RuntimeError("hull hill-climbing exceeded its move cap (adjacency not convex?)")
        if i != warm[0]:
            warm[1] = warm[0]
            warm[0] = i
        return vl[i]

    def support_index(self, direction) -> int:
        """Index into ``vertices`` of a support vertex for ``direction``."""
        self.support(direction)
        return self._warm[0]

    @property
    def warm_start(self) -> int:
        """The vertex the next climb starts from (the last one returned)."""
        return self._warm[0]

    def set_warm_start(self, index: int) -> None:
        """Start the next climb at vertex ``index`` (any vertex gives the same answer)."""
        index = int(index)
        if not 0 <= index < len(self._vl):
            raise ValueError(f"index must be a vertex index in [0, {len(self._vl)}), got {index}")
        self._warm[:] = [index, index]

    # --- derived -------------------------------------------------------------------------------
    def aabb(self):
        return self._vertices.min(axis=0), self._vertices.max(axis=0)

    def center_xyz(self):
        """The vertex centroid: inside the hull (relative interior when flat)."""
        return self._center

    def _params_repr(self):
        return f"<{len(self._vl)} vertices, dim {self._data.dim}>"
