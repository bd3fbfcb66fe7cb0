"""Triangle meshes: concave static geometry (terrain, room shells, stairs) as triangle surfaces.

``TriangleMesh(vertices, triangles)`` is what engines call a mesh shape (Jolt ``MeshShape``,
Bullet ``btBvhTriangleMeshShape``, coal's BVH models): no volume, a surface whose triangles are
each a convex shape (``Triangle``, a three-point support mapping), with an ``AABBTree`` over
them. Queries (``concave``) test only the triangles whose boxes can matter.

**Front faces.** A triangle's front is the side its vertices run counter-clockwise around (the
right-hand rule, as Blender draws normals); the space in front is free, behind is solid. A
penetration against a mesh therefore pushes the shape out of the front face, whichever side it
came from, and never sideways across an edge where the surface goes on: see ``active_edges``.

**Active edges.** Where two triangles meet flat or in a valley (a concave edge), a shape sunk
into one of them near the edge must not be pushed sideways across the edge: the neighbour
continues the surface there. Only *active* edges — convex edges sharper than ACTIVE_EDGE_ANGLE,
boundary edges, and edges shared by more than two triangles or by triangles wound inconsistently
— and the vertices they end at allow a contact normal other than the face's (after Jolt's
active-edge treatment).

**Bad input** raises ValueError naming it: non-finite vertices or vertices beyond the supported
range (``vertices[i]``), indices that are not integers or out of range, and degenerate
triangles — a repeated vertex index, zero area, or less than the supported range's smallest
size across (``triangles[i]``), which have no front face. ``drop_degenerate=True`` leaves the
degenerate ones out instead (their number is ``dropped``; results still report triangles by
their index in the input array).
"""

from __future__ import annotations

import math

import numpy as np

from . import kinds, validation
from .bvh import AABBTree
from .compound import ConcaveShape
from .shapes import Shape

# A triangle is degenerate when twice its area is at most this fraction of its longest edge
# squared: the sine of its smallest angle is then at rounding level, and its normal is noise.
DEGENERATE_AREA = 1e-12

# Edges whose two faces turn by less than this angle (radians) are flat, not active: a contact
# normal through them is replaced by the face normal. 5° keeps tessellated gentle curvature
# (terrain undulation, a 72-segment cylinder) smooth while every modelled corner stays sharp.
ACTIVE_EDGE_ANGLE = math.radians(5.0)


class Triangle(Shape):
    """The triangle with corners ``a``, ``b``, ``c`` (a flat convex shape).

    ``normal`` is the unit normal of its front face (counter-clockwise a, b, c), zero when the
    corners are collinear.
    """

    __slots__ = ("_a", "_b", "_c", "_frozen")
    kind = "triangle"
    polytope = True

    def __init__(self, a, b, c) -> None:
        super().__init__()
        self._a = tuple(float(x) for x in validation.vector("a", a))
        self._b = tuple(float(x) for x in validation.vector("b", b))
        self._c = tuple(float(x) for x in validation.vector("c", c))
        self._freeze()

    @classmethod
    def _from_floats(cls, a: tuple, b: tuple, c: tuple) -> "Triangle":
        """A triangle from corners already checked (a mesh's): no validation, no numpy."""
        t = cls.__new__(cls)
        object.__setattr__(t, "_margin", 0.0)
        object.__setattr__(t, "_core", t)
        object.__setattr__(t, "_a", a)
        object.__setattr__(t, "_b", b)
        object.__setattr__(t, "_c", c)
        object.__setattr__(t, "_frozen", True)
        return t

    def _init_args(self):
        return (self._a, self._b, self._c)

    def support_xyz(self, x, y, z):
        a, b, c = self._a, self._b, self._c
        da = a[0] * x + a[1] * y + a[2] * z
        db = b[0] * x + b[1] * y + b[2] * z
        dc = c[0] * x + c[1] * y + c[2] * z
        if da >= db:
            return a if da >= dc else c
        return b if db >= dc else c

    def aabb(self):
        v = np.array((self._a, self._b, self._c))
        return v.min(axis=0), v.max(axis=0)

    def center_xyz(self):
        a, b, c = self._a, self._b, self._c
        return ((a[0] + b[0] + c[0]) / 3.0, (a[1] + b[1] + c[1]) / 3.0,
                (a[2] + b[2] + c[2]) / 3.0)

    @property
    def vertices(self) -> np.ndarray:
        """(3, 3) corners (so that contact manifolds find its face, as for a ``Hull``)."""
        return np.array((self._a, self._b, self._c))

    @property
    def faces(self) -> np.ndarray:
        """Both sides of the one face: the manifold code looks for the face facing a normal."""
        return np.array(((0, 1, 2), (0, 2, 1)))

    @property
    def normal(self) -> np.ndarray:
        n = np.cross(np.subtract(self._b, self._a), np.subtract(self._c, self._a))
        length = float(np.linalg.norm(n))
        return n / length if length > 0.0 else np.zeros(3)

    def _params_repr(self):
        return f"{self._a!r}, {self._b!r}, {self._c!r}"


# Its kind: a face of three vertices for contact manifolds; not batched (a level's meshes are
# ``TriangleMesh``es, measured by ``intrusion``), no closed-form ray (the GJK ray cast).
kinds.register(kinds.Kind(Triangle, feature=lambda triangle: (kinds.FEATURE_HULL,)))


class TriangleMesh(ConcaveShape):
    """A surface of triangles: ``vertices`` (V, 3) and ``triangles`` (T, 3) vertex indices.

    Results name a triangle by its row in the ``triangles`` given (``part_a``/``part_b``/
    ``part``). See the module for front faces, active edges and what is refused.
    """

    __slots__ = ("_vertices", "_triangles", "_source", "_normals", "_active", "_active_vertices",
                 "_any_active", "_corners", "_normal_list", "_tree", "_lower", "_upper",
                 "_dropped", "_frozen", "__weakref__")
    kind = "triangle_mesh"
    is_mesh = True

    def __init__(self, vertices, triangles, drop_degenerate: bool = False) -> None:
        v = _vertices(vertices)
        t = _triangles(triangles, len(v))
        corners = v[t]                                         # (T, 3, 3)
        edges = corners - np.roll(corners, 1, axis=1)
        # A triangle less than MIN_SIZE across is out of the supported range (its squared
        # lengths underflow): degenerate too, and said so.
        span = np.max(np.abs(edges), axis=(1, 2))
        tiny = (span > 0.0) & (span < validation.MIN_SIZE)
        cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
        area2 = np.linalg.norm(cross, axis=1)
        longest2 = np.max(np.sum(edges ** 2, axis=2), axis=1)
        repeated = (t[:, 0] == t[:, 1]) | (t[:, 1] == t[:, 2]) | (t[:, 2] == t[:, 0])
        flat = repeated | tiny | (area2 <= DEGENERATE_AREA * longest2)
        source = np.arange(len(t))
        if flat.any():
            bad = np.flatnonzero(flat)
            if not drop_degenerate:
                k = int(bad[0])
                why = "repeats a vertex" if repeated[k] else (
                    f"is only {span[k]:.3g} across, below the supported range's "
                    f"{validation.MIN_SIZE:g}" if tiny[k] else "has zero area")
                raise ValueError(
                    f"triangles[{k}] {why} ({t[k].tolist()}); {len(bad)} degenerate "
                    f"triangle{'s' * (len(bad) != 1)} in all (drop_degenerate=True leaves "
                    f"them out)")
            keep = ~flat
            if not keep.any():
                raise ValueError("triangles are all degenerate (no triangle has an area)")
            t, corners, cross, area2 = t[keep], corners[keep], cross[keep], area2[keep]
            source = source[keep]
        self._vertices = v
        self._triangles = t
        self._source = source
        self._dropped = int(flat.sum())
        self._normals = cross / area2[:, None]
        self._active = _active_edges(v, t, self._normals)
        # A vertex is active when an active edge ends at it (a cliff's top corner, a border).
        self._active_vertices = np.zeros(len(v), dtype=bool)
        self._active_vertices[t[self._active]] = True
        self._active_vertices[t[:, [1, 2, 0]][self._active]] = True
        self._any_active = (self._active.any(axis=1)
                            | self._active_vertices[t].any(axis=1)).tolist()
        for a in (v, t, source, self._normals, self._active, self._active_vertices):
            a.setflags(write=False)
        self._corners = [(tuple(row[0:3]), tuple(row[3:6]), tuple(row[6:9]))
                         for row in corners.reshape(-1, 9).tolist()]
        self._normal_list = [tuple(row) for row in self._normals.tolist()]
        lower, upper = corners.min(axis=1), corners.max(axis=1)
        self._tree = AABBTree(lower, upper)
        self._lower, self._upper = lower.min(axis=0), upper.max(axis=0)
        self._freeze()

    # --- the surface -----------------------------------------------------------------------------
    @property
    def vertices(self) -> np.ndarray:
        return self._vertices

    @property
    def triangles(self) -> np.ndarray:
        """(T, 3) vertex indices of the triangles kept (all of them unless some were dropped)."""
        return self._triangles

    @property
    def normals(self) -> np.ndarray:
        """(T, 3) unit front-face normals of the triangles kept."""
        return self._normals

    @property
    def active_edges(self) -> np.ndarray:
        """(T, 3) bool: edge k of triangle i (from its corner k to corner k+1) is active."""
        return self._active

    def has_active_feature(self, i: int) -> bool:
        """Whether triangle ``i`` has an active edge or vertex (else every contact with it is
        out of its face)."""
        return self._any_active[i]

    def feature_is_active(self, i: int, corners: list) -> bool:
        """Whether the feature of triangle ``i`` spanned by ``corners`` (indices 0–2: one is a
        vertex, two an edge) is active."""
        if len(corners) == 1:
            return bool(self._active_vertices[self._triangles[i, corners[0]]])
        if len(corners) == 2:
            k0, k1 = corners
            return bool(self._active[i, k0 if (k0 + 1) % 3 == k1 else k1])
        return False

    @property
    def dropped(self) -> int:
        """How many degenerate triangles ``drop_degenerate=True`` left out."""
        return self._dropped

    @property
    def tree(self) -> AABBTree:
        return self._tree

    def __len__(self) -> int:
        return len(self._triangles)

    def part(self, i: int) -> Triangle:
        a, b, c = self._corners[i]
        return Triangle._from_floats(a, b, c)

    def corners(self, i: int) -> tuple:
        """Corners of triangle ``i`` (internal numbering) as three float tuples."""
        return self._corners[i]

    def normal_tuple(self, i: int) -> tuple:
        """Front normal of triangle ``i`` (internal numbering) as a float tuple."""
        return self._normal_list[i]

    def part_id(self, i: int) -> int:
        return int(self._source[i])

    def part_label(self, part_id: int) -> str:
        """How a report names the triangle results call ``part_id`` (its row in the input)."""
        return f"triangle {int(part_id)}"

    def aabb(self) -> tuple:
        return self._lower.copy(), self._upper.copy()

    def transformed(self, matrix) -> "TriangleMesh":
        """This mesh under a 4×4 affine ``matrix`` (vertices moved, the tree rebuilt). A mirroring
        matrix (negative determinant) also reverses the winding, so that front faces stay on
        the side they were on."""
        m = validation.affine_matrix("matrix", matrix)
        v = self._vertices @ m[:3, :3].T + m[:3, 3]
        t = self._triangles
        if np.linalg.det(m[:3, :3]) < 0.0:
            t = t[:, ::-1]
        mesh = TriangleMesh(v, t, drop_degenerate=True)
        # Keep reporting the original rows (a shear can flatten nothing: the matrix is regular).
        object.__setattr__(mesh, "_source", self._source[mesh._source])
        object.__setattr__(mesh, "_dropped", self._dropped + mesh._dropped)
        return mesh

    def _init_args(self):
        return (self._vertices, self._triangles)

    def __reduce__(self):
        # Rebuilt from the triangles kept, still reporting the rows of the triangles given.
        return (_restored_mesh, (self._vertices, self._triangles, self._source, self._dropped))

    def __repr__(self) -> str:
        return f"TriangleMesh(<{len(self._vertices)} vertices, {len(self._triangles)} triangles>)"


def _restored_mesh(vertices, triangles, source, dropped) -> TriangleMesh:
    """A pickled ``TriangleMesh``: its kept triangles, their rows in the input, the count left
    out."""
    mesh = TriangleMesh(vertices, triangles)
    object.__setattr__(mesh, "_source", np.asarray(source))
    object.__setattr__(mesh, "_dropped", int(dropped))
    return mesh


def _vertices(value) -> np.ndarray:
    try:
        v = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("vertices must be an (N, 3) array of numbers") from None
    if v.ndim != 2 or v.shape[1] != 3:
        raise ValueError(f"vertices must be an (N, 3) array, got shape {v.shape}")
    if len(v) == 0:
        raise ValueError("vertices must not be empty")
    bad = np.flatnonzero(~np.all(np.isfinite(v), axis=1))
    if len(bad):
        raise ValueError(f"vertices[{int(bad[0])}] is not finite ({v[bad[0]].tolist()}); "
                         f"{len(bad)} non-finite vertex row{'s' * (len(bad) != 1)} in all")
    far = np.flatnonzero(np.any(np.abs(v) > validation.MAX_COORDINATE, axis=1))
    if len(far):
        raise ValueError(f"vertices[{int(far[0])}] lies beyond ±{validation.MAX_COORDINATE:g} "
                         f"(the supported range): {v[far[0]].tolist()}")
    return v


def _triangles(value, n_vertices) -> np.ndarray:
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError("triangles must be a (T, 3) array of vertex indices") from None
    if raw.ndim != 2 or raw.shape[1] != 3:
        raise ValueError(f"triangles must be a (T, 3) array, got shape {raw.shape}")
    if len(raw) == 0:
        raise ValueError("triangles must not be empty")
    if raw.dtype.kind not in "iu":
        as_float = np.asarray(raw, dtype=float) if raw.dtype.kind == "f" else None
        if as_float is None or not np.all(as_float == np.round(as_float)):
            raise ValueError("triangles must hold integer vertex indices")
    t = np.array(raw, dtype=np.int64)
    out = np.flatnonzero(np.any((t < 0) | (t >= n_vertices), axis=1))
    if len(out):
        k = int(out[0])
        raise ValueError(f"triangles[{k}] refers to a vertex out of range ({t[k].tolist()}; "
                         f"there are {n_vertices} vertices)")
    return t


def _active_edges(v, t, normals) -> np.ndarray:
    """(T, 3) bool: is edge k of triangle i (corner k to corner k+1) active (see the module)."""
    n = len(t)
    start = t.ravel()
    end = t[:, [1, 2, 0]].ravel()
    lo, hi = np.minimum(start, end), np.maximum(start, end)
    key = lo * np.int64(len(v)) + hi
    order = np.argsort(key, kind="stable")
    k = key[order]
    active = np.ones(3 * n, dtype=bool)
    # Edges shared by exactly two triangles: equal keys at p and p+1, different at p-1 and p+2.
    same = k[1:] == k[:-1]
    first = np.flatnonzero(same)
    if len(first):
        before = np.concatenate(([False], same))[first]
        after = np.concatenate((same, [False, False]))[first + 1]
        first = first[~before & ~after]
    e1, e2 = order[first], order[first + 1]
    t1, t2 = e1 // 3, e2 // 3
    # Consistently wound neighbours run along their common edge in opposite directions.
    consistent = start[e1] == end[e2]
    opposite = t[t2, (e2 % 3 + 2) % 3]              # t2's corner off the shared edge
    n1, n2 = normals[t1], normals[t2]
    height = np.einsum("ij,ij->i", n1, v[opposite] - v[start[e1]])
    turn = np.einsum("ij,ij->i", n1, n2)
    # Convex: the neighbour falls away behind t1's plane; sharp: the faces turn by more than
    # the angle. Anything else (flat, a valley) lets the surface go on: not active.
    smooth = consistent & ~((height < 0.0) & (turn < math.cos(ACTIVE_EDGE_ANGLE)))
    active[e1[smooth]] = False
    active[e2[smooth]] = False
    return active.reshape(n, 3)
