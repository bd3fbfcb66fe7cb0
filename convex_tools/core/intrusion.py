"""How deep a convex shape intrudes into a triangle mesh, as a level designer measures it.

``mesh_intrusion(shape, mesh)`` answers the level check's question "how far is this prop sunk
into the floor, pushed into the wall?" on a ``TriangleMesh`` (issue 18, *depth against a
triangle mesh*). A mesh is a surface: each triangle is one-sided, free space in front of it
(``trimesh``), so the depth is measured triangle by triangle:

- **A triangle's depth** is the length of the shortest translation that separates A from that
  triangle without pushing A through the triangle's back — a translation v with v·n ≥ 0 (n the
  front normal). With P = T − A (the translations at which A + v meets T), that is the distance
  from the origin to the part of P's boundary on the front side.
- **The intrusion** is the largest triangle depth over the triangles A touches deeper than
  ``touch_tolerance``, with every such triangle listed in ``contacts``. So a crate sunk d into a
  floor beside a step is d deep, pushed w into a wall w deep (not the wall's thickness), both
  max(d, w); never more than the largest single intrusion.

**Computing a triangle's depth.** Every unit d with d·n ≥ 0 gives a separating push: moving A
by h_T(d) + h_A(−d) along d (h the support function; h_P(d) for P = T − A). The nearest
front-side boundary point of P lies either in the open front half-space, where it is the foot
of a facet of P whose normal points to the front, or on the plane v·n = 0, where only A's
cross-section C = A ∩ plane(T) matters (the push along the plane has to clear C, not A's
shadow: a tilted crate or a ball reaching under a step's edge).

- *Boxes and hulls* (``_PolytopeModel``, all candidate triangles at once in numpy): the facet
  normals of P are the triangle's normal, A's face normals and the cross products of a
  triangle edge with an A edge, so the least h_P over the front-side ones is exact off the
  plane; on it, the 2D SAT of the triangle against the cross-section polygon (A's edges cut by
  the plane), on the triangle's in-plane edge normals and A's face normals projected into the
  plane. The depth is the smaller of the two.
- *Rounded shapes whose core is wholly in front of the plane* (a sphere, capsule or round box
  sunk by less than its radius): margin − distance(core, T), one GJK distance, whose direction
  already points to the front.
- *Any other shape* (``_GenericModel``, triangle by triangle): the depth is the largest r
  whose front half-ball r·H fits in P, which the one-sided EPA (``one_sided_depth``) brackets
  from both sides until the bounds meet. Where it cannot prove its answer (A touching the
  triangle's plane from behind makes the half-ball's rim meet a face of P in that plane: 0/0),
  the push along the plane is measured on A's cross-section by a 2D EPA
  (``sideways_depth``, with the section's support from A's by bisection).

**Cost.** Triangles come from the mesh's box tree (those whose boxes meet A's box). One support
of A per candidate triangle (A's reach behind its plane, h_P(n)) bounds its depth from above,
so triangles whose bound is within ``touch_tolerance`` — every triangle under an object resting
on a flat floor — are dropped in one numpy pass.

Layering (docs/ARCHITECTURE.md): a concave query, beside ``concave``; uses ``bvh``, ``gjk``,
``simplex``, ``hull``, ``shapes`` and ``trimesh``.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field

import numpy as np

from . import bvh, gjk, validation
from .hull import Hull
from .shapes import Box, Point, Rectangle, Segment, Transformed
from .simplex import closest_to_origin
from .trimesh import Triangle, TriangleMesh

# A direction counts as front-side when d·n ≥ −FRONT_SLACK: the in-plane candidates (edge
# normals, cross products with A's vertical edges) have d·n zero up to rounding.
FRONT_SLACK = 1e-9

# A triangle edge and an A edge whose cross product is shorter than this fraction of the
# triangle edge's length (the sine of their angle) are parallel: they span no facet of T − A.
PARALLEL_SINE = 1e-9

# Rounding, as a fraction of the scene's size: a vertex of A this near a triangle's plane lies
# on it (it belongs to the cross-section), a point this near a support plane is on it, and a
# front-side depth within this of the least over all directions is that least.
PLANE_TOLERANCE = 1e-12

# Boxes and hulls with at most this many distinct edge directions are handled as polytopes in
# numpy: each direction gives 6 candidate axes per triangle, each a pass over A's vertices.
# Beyond it (a scanned rock) the one-sided EPA per triangle is cheaper.
MAX_POLYTOPE_EDGE_DIRECTIONS = 64

# Cap on the bisection steps of a cross-section support (``_section_support``): each halves the
# tilt interval, so 64 reach the spacing of doubles near ±π/2.
MAX_SECTION_STEPS = 64

# The bisection stops once the support points below and above the plane are this fraction of
# the scene's size apart (the cross-section point between them is then exact to that fraction).
SECTION_TOLERANCE = 1e-12

# Cap on the expansions of the 2D EPA on T − C (``sideways_depth``); each adds a support point
# of a convex curve, and the gap shrinks linearly as EPA's does.
MAX_SIDEWAYS_STEPS = 64

# Cap on the expansions of the one-sided EPA (``one_sided_depth``). Polytopes end in a few
# dozen; on curved shapes the gap shrinks linearly (as EPA's), about a factor 100 per 6 steps.
MAX_SIDED_STEPS = 128

# The one-sided EPA stops when its upper and lower bounds on the depth are this fraction of the
# scene's size apart (0.1 µm on a 1 m crate).
SIDED_TOLERANCE = 1e-7


@dataclass(slots=True)
class Intrusion:
    """The intrusion of a convex shape into a ``TriangleMesh`` (``mesh_intrusion``).

    ``depth`` is the deepest triangle's depth; ``normal`` (unit) points from the shape toward
    the mesh, so translating the shape by ``-depth * normal`` resolves that triangle (the
    ``Contact`` convention); ``point_a`` lies on the shape, ``point_b`` on the triangle, with
    ``point_a - point_b == depth * normal`` wherever the triangle reaches the foot of the push
    (else ``point_b`` is the triangle's point nearest that foot). ``part`` is the triangle's
    row in the mesh's input ``triangles``; ``contacts`` lists ``(part, depth, normal)`` for
    every touched triangle, deepest first.
    """

    depth: float
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    part: int
    contacts: list = field(default_factory=list)


def mesh_intrusion(shape, mesh, touch_tolerance: float = 1e-4) -> Intrusion | None:
    """Intrusion of the convex ``shape`` into ``mesh`` (both in world space), or None when it
    touches no triangle deeper than ``touch_tolerance``. See the module for the definition."""
    if not isinstance(mesh, TriangleMesh):
        raise ValueError(f"mesh must be a TriangleMesh, got {type(mesh).__name__}")
    shape = validation.shape("shape", shape)
    tolerance = validation.finite_scalar("touch_tolerance", touch_tolerance)
    if tolerance < 0.0:
        raise ValueError(f"touch_tolerance must not be negative, got {tolerance}")
    lower, upper = shape.aabb()
    items = np.array([j for _, j in bvh.overlapping_pairs(bvh.AABBTree.single(lower, upper),
                                                          mesh.tree)], dtype=np.int64)
    if not len(items):
        return None
    model = _model(shape)
    corners = mesh.vertices[mesh.triangles[items]]                  # (K, 3, 3)
    normals = mesh.normals[items]
    offsets = np.einsum("ij,ij->i", normals, corners[:, 0])
    # h_P(n): A's reach behind each plane bounds the triangle's depth from above.
    reach = offsets - np.einsum("ij,ij->i", normals, model.support(-normals))
    deep = np.flatnonzero(reach > tolerance)
    if not len(deep):
        return None
    size = max(float(np.max(upper - lower)), float(np.ptp(corners[deep].reshape(-1, 3), axis=0)
                                                   .max()))
    found = model.depths(shape, corners[deep], normals[deep], offsets[deep], size)
    touched = [(depth, d, hint, k) for k, (depth, d, hint) in enumerate(found)
               if depth > tolerance]
    if not touched:
        return None
    touched.sort(key=lambda t: -t[0])
    contacts = [(mesh.part_id(int(items[deep[k]])), depth, -d) for depth, d, _, k in touched]
    depth, d, hint, k = touched[0]
    point_a, point_b = model.witness(depth, d, hint, corners[deep[k]], size)
    return Intrusion(depth, -d, point_a, point_b, contacts[0][0], contacts)


# --- shapes as vertex sets and polytopes --------------------------------------------------------

def _model(shape):
    """The cheapest exact handling of ``shape``: a ``_PolytopeModel`` for boxes and small hulls
    (posed or not), else the generic one (vectorised supports where the shape is a vertex set
    plus a margin: spheres, capsules, round boxes)."""
    polytope = _polytope(shape)
    if polytope is not None:
        return polytope
    return _GenericModel(shape)


_BOX_VERTICES = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
# Corners k and k ^ bit differ in one coordinate: the 12 edges of a box.
_BOX_EDGES = np.array([(k, k ^ bit) for k in range(8) for bit in (1, 2, 4) if k < k ^ bit])

# Hull → (vertices, edges, distinct unit face normals, distinct unit edge directions) in its
# own frame (shapes are immutable; a linear map keeps parallel directions parallel, so the
# distinct ones stay distinct in any pose).
_HULL_FEATURES = weakref.WeakKeyDictionary()


def _local_polytope(shape):
    """(vertices, edges (E, 2), distinct unit face normals, distinct unit edge directions) of a
    bare box or 3D hull in its own frame, or None."""
    if isinstance(shape, Box):
        return _BOX_VERTICES * shape.half_extents, _BOX_EDGES, np.eye(3), np.eye(3)
    if not isinstance(shape, Hull) or shape.dim != 3:
        return None
    found = _HULL_FEATURES.get(shape)
    if found is None:
        vertices = np.asarray(shape.vertices, float)
        faces = np.asarray(shape.faces)
        edges = np.array([(i, j) for i, around in enumerate(shape.adjacency) for j in around
                          if i < j]).reshape(-1, 2)
        p = vertices[faces]
        normals = _distinct_axes(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]))
        directions = _distinct_axes(vertices[edges[:, 1]] - vertices[edges[:, 0]])
        found = _HULL_FEATURES[shape] = (vertices, edges, normals, directions)
    return found


def _polytope(shape):
    """A ``_PolytopeModel`` of a box or small 3D hull, bare or ``Transformed``; else None."""
    inner, matrix = (shape.shape, shape.matrix) if isinstance(shape, Transformed) else \
        (shape, None)
    local = _local_polytope(inner)
    if local is None or len(local[3]) > MAX_POLYTOPE_EDGE_DIRECTIONS:
        return None
    vertices, edges, normals, directions = local
    if matrix is not None:
        linear = matrix[:3, :3]
        vertices = vertices @ linear.T + matrix[:3, 3]
        directions = _unit(directions @ linear.T)
        # Normals map by the cofactor matrix (det · B⁻ᵀ: the columns' cross products), which
        # needs no inverse; the sign does not matter, axes are taken both ways.
        columns = linear.T
        normals = _unit(normals @ _cross(columns[[1, 2, 0]], columns[[2, 0, 1]]))
    return _PolytopeModel(vertices, edges, normals, directions)


def _distinct_axes(vectors):
    """Unit vectors of ``vectors`` with parallel and opposite ones merged (signs are taken both
    ways by the callers)."""
    length = np.linalg.norm(vectors, axis=1)
    v = vectors[length > 0.0] / length[length > 0.0, None]
    # One sign per line: the first clearly non-zero coordinate positive.
    lead = np.argmax(np.abs(v) > 0.5 / math.sqrt(3.0), axis=1)
    v = v * np.sign(v[np.arange(len(v)), lead])[:, None]
    _, keep = np.unique(np.round(v, 9), axis=0, return_index=True)
    return v[np.sort(keep)]


def _vertex_set(shape):
    """World vertices (V, 3) of a box, rectangle, segment, point or hull, bare or ``Transformed``
    (its support is the vertex of greatest d · x); else None."""
    inner, matrix = (shape.shape, shape.matrix) if isinstance(shape, Transformed) else \
        (shape, None)
    if isinstance(inner, (Box, Rectangle)):
        h = np.zeros(3)
        h[:len(inner.half_extents)] = inner.half_extents
        v = _BOX_VERTICES * h
    elif isinstance(inner, Segment):
        v = np.array(((0.0, 0.0, -inner.half_length), (0.0, 0.0, inner.half_length)))
    elif isinstance(inner, Point):
        v = np.zeros((1, 3))
    elif isinstance(inner, Hull):
        v = np.asarray(inner.vertices, float)
    else:
        return None
    if matrix is not None:
        v = v @ matrix[:3, :3].T + matrix[:3, 3]
    return v


# --- boxes and hulls: every triangle in one numpy pass ------------------------------------------

class _PolytopeModel:
    """A polytope A as world ``vertices``, ``edges`` (index pairs), distinct unit face
    ``normals`` and edge ``directions``: the facet normals of T − A are known, so a triangle's
    depth is exact from finitely many axes (module, 1 and 2)."""

    def __init__(self, vertices, edges, normals, directions):
        self.vertices = vertices
        self.edges = edges
        self.normals = normals
        self.directions = directions

    def support(self, d):
        """Support points (K, 3) along the rows of ``d`` (K, 3)."""
        return self.vertices[np.argmax(d @ self.vertices.T, axis=1)]

    def depths(self, shape, corners, normals, offsets, size):
        """(depth, escape direction d, point on A, point on T) per triangle; depth 0 for a
        triangle A does not touch. Moving A by depth · d separates it from the triangle."""
        k = len(corners)
        edges = corners[:, [1, 2, 0]] - corners                       # (K, 3, 3)
        outward = _unit(_cross(edges, normals[:, None, :]))          # in-plane edge normals
        crosses = _cross(edges[:, :, None, :], self.directions[None, None, :, :])
        length = np.sqrt(np.sum(crosses * crosses, axis=3, keepdims=True))
        edge_length = np.sqrt(np.sum(edges * edges, axis=2))[:, :, None, None]
        crosses = np.where(length > PARALLEL_SINE * edge_length,
                           crosses / np.maximum(length, _TINY), np.nan).reshape(k, -1, 3)
        faces = np.broadcast_to(self.normals, (k,) + self.normals.shape)
        # The facet normals of T − A, both ways: its complete set of separating axes.
        axes = np.concatenate((normals[:, None, :], faces, crosses), axis=1)
        axes = np.concatenate((axes, -axes), axis=1)                  # (K, D, 3)
        overlap = self._overlap(corners, axes)
        overlap = np.where(np.isnan(overlap), np.inf, overlap)
        # The penetration depth with no side barred: the least of all, and 0 or less apart.
        unbarred = np.min(overlap, axis=1)
        separated = unbarred < 0.0
        front = np.einsum("kdi,ki->kd", axes, normals) >= -FRONT_SLACK
        # Out of the front: the best front-side facet normal (in-plane edge normals with the
        # shadow are upper bounds too, often exact: an upright crate at a step's edge).
        candidates = np.concatenate((axes, outward), axis=1)
        values = np.concatenate((np.where(front, overlap, np.inf),
                                 self._overlap(corners, outward)), axis=1)
        values = np.where(np.isnan(values), np.inf, values)
        best = np.argmin(values, axis=1)
        rows = np.arange(k)
        depth = values[rows, best]
        escape = candidates[rows, best]
        point_a = self.support(-escape)
        # Sideways in the plane (2D SAT of the triangle against A's cross-section), where
        # the front's best is not already the least of all directions.
        open_rows = np.flatnonzero(~separated & (depth > unbarred + PLANE_TOLERANCE * size))
        if len(open_rows):
            side, side_escape, side_point = self._sideways(
                corners[open_rows], normals[open_rows], offsets[open_rows], outward[open_rows],
                size)
            use = side < depth[open_rows]
            rows = open_rows[use]
            depth[rows], escape[rows], point_a[rows] = side[use], side_escape[use], \
                side_point[use]
        depth = np.where(separated, 0.0, depth)
        return list(zip(depth.tolist(), escape, point_a))

    def witness(self, depth, escape, hint, corners, size):
        """(point on A, point on T) for a push of ``depth`` along ``escape``: the first point
        of T's leading feature (its corners, their centre, the triangle's centre and edge
        midpoints) whose pre-image ``q − depth · escape`` lies in A — between A's extremes
        along each face normal, which bound a polytope exactly; else A's leading vertices'
        best foot."""
        slack = PLANE_TOLERANCE * size
        lead = corners @ escape
        top = corners[lead >= lead.max() - slack]
        tries = np.vstack((top, top.mean(axis=0), corners.mean(axis=0),
                           0.5 * (corners + corners[[1, 2, 0]])))
        tries = tries[np.abs((tries - top[0]) @ escape) <= slack]
        heights = self.vertices @ self.normals.T                       # (V, F)
        x = (tries - depth * escape) @ self.normals.T                  # (Q, F)
        inside = ((x <= heights.max(axis=0) + slack)
                  & (x >= heights.min(axis=0) - slack)).all(axis=1)
        if inside.any():
            q = tries[int(np.argmax(inside))]
            return q - depth * escape, q
        reach = self.vertices @ -escape
        feature = self.vertices[reach >= reach.max() - slack]
        return _nearest_foot([hint] + list(feature) + [feature.mean(axis=0)], depth, escape,
                             corners)

    def _overlap(self, corners, axes):
        """h_T(d) + h_A(−d) for each triangle's axes (K, D, 3): how far A must move along d."""
        h_t = np.einsum("kci,kdi->kdc", corners, axes).max(axis=2)
        h_a = -np.einsum("vi,kdi->kdv", self.vertices, axes).min(axis=2)
        return h_t + h_a

    def _sideways(self, corners, normals, offsets, outward, size):
        """Per triangle, the 2D penetration of the triangle and A's cross-section with its
        plane: (depth, in-plane escape direction, the cross-section point leading it)."""
        k = len(corners)
        height = self.vertices @ normals.T - offsets                   # (V, K)
        on_plane = np.abs(height) <= PLANE_TOLERANCE * size
        h0, h1 = height[self.edges[:, 0]], height[self.edges[:, 1]]    # (E, K)
        crossing = ((h0 < 0.0) & (h1 > 0.0)) | ((h0 > 0.0) & (h1 < 0.0))
        t = np.where(crossing, h0 / np.where(crossing, h0 - h1, 1.0), 0.0)
        p0, p1 = self.vertices[self.edges[:, 0]], self.vertices[self.edges[:, 1]]
        cut = p0[:, None, :] + t[:, :, None] * (p1 - p0)[:, None, :]   # (E, K, 3)
        points = np.concatenate((np.broadcast_to(self.vertices[:, None, :],
                                                 (len(self.vertices), k, 3)), cut))
        valid = np.concatenate((on_plane, crossing))                   # (V + E, K)
        # The cross-section's edges lie in A's faces: their in-plane normals are the faces'
        # normals projected into the plane, both ways (T − C has −C's normals).
        projected = self.normals[None, :, :] - np.einsum(
            "fi,ki->kf", self.normals, normals)[:, :, None] * normals[:, None, :]
        projected = _unit(projected)
        axes = np.concatenate((outward, projected, -projected), axis=1)  # (K, D, 3)
        h_t = np.einsum("kci,kdi->kdc", corners, axes).max(axis=2)
        reach = np.einsum("pki,kdi->kdp", points, -axes)
        reach = np.where(valid.T[:, None, :], reach, -np.inf)
        lead = np.argmax(reach, axis=2)                                # (K, D)
        value = h_t + np.take_along_axis(reach, lead[:, :, None], axis=2)[:, :, 0]
        # No section point (A meets the plane only to rounding) or an axis that is none.
        value = np.where(np.isfinite(value), value, np.inf)
        best = np.argmin(value, axis=1)
        rows = np.arange(k)
        depth = value[rows, best]
        point = points[lead[rows, best], rows]
        return depth, axes[rows, best], point


_TINY = np.finfo(float).tiny


def _unit(v):
    """Rows of ``v`` scaled to unit length; NaN rows where ``v`` is zero."""
    length = np.sqrt(np.sum(v * v, axis=-1, keepdims=True))
    return np.where(length > 0.0, v / np.maximum(length, _TINY), np.nan)


def _cross(a, b):
    """Cross products of broadcast rows (numpy's ``cross`` costs several axis moves)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


def _nearest_foot(points, depth, escape, corners):
    """(p, q): of the points ``points`` of A, the one whose foot ``p + depth · escape`` comes
    nearest the triangle, and the triangle's point q nearest that foot."""
    best = None
    for p in points:
        p = np.asarray(p, float)
        q = _closest_on_triangle(p + depth * escape, corners)
        miss = float(np.linalg.norm(p + depth * escape - q))
        if best is None or miss < best[0]:
            best = (miss, p, q)
    return best[1], best[2]


def _closest_on_triangle(p, corners):
    """The point of the triangle ``corners`` (3, 3) nearest ``p``: the GJK sub-algorithm's
    closest point of a simplex to the origin, with the triangle moved by −p."""
    v, _ = closest_to_origin([tuple(row) for row in (corners - p).tolist()])
    return np.array(v) + p


# --- any other convex shape: triangle by triangle -----------------------------------------------

class _GenericModel:
    """Any convex shape: supports one call per direction (vectorised for a vertex set plus a
    margin: spheres, capsules, round boxes), and each triangle's depth from the one-sided EPA
    (``one_sided_depth``)."""

    def __init__(self, shape):
        self.shape = shape
        core = shape.core if shape.margin > 0.0 else shape
        self._vertices = _vertex_set(core)
        self._margin = shape.margin

    def support(self, d):
        if self._vertices is not None:
            p = self._vertices[np.argmax(d @ self._vertices.T, axis=1)]
            if self._margin > 0.0:
                p = p + self._margin * _unit(d)
            return p
        s = self.shape.support_xyz
        return np.array([s(x, y, z) for x, y, z in d.tolist()], float).reshape(-1, 3)

    def depths(self, shape, corners, normals, offsets, size):
        out = []
        for r in range(len(corners)):
            triangle = _triangle(corners[r])
            rounded = self._rounded_depth(triangle, normals[r], float(offsets[r]))
            if rounded is not None:
                out.append(rounded)
                continue
            if not gjk.intersect(triangle, shape):
                out.append((0.0, normals[r], corners[r][0]))
                continue
            depth, escape, status = one_sided_depth(shape.support_xyz, corners[r], normals[r],
                                                    size)
            lead = np.array(shape.support_xyz(*(-escape)), float)
            if status != "exact":
                # Unproven where H's rim meets a face of P lying in the triangle's plane (A
                # touching the plane from behind: 0/0 in the gauge); the push along the
                # plane is measured on A's cross-section instead.
                side = sideways_depth(shape.support_xyz, corners[r], normals[r],
                                      float(offsets[r]), size)
                if side is not None and side[0] < depth:
                    depth, escape, lead = side
            out.append((depth, escape, lead))
        return out

    def _rounded_depth(self, triangle, n, offset):
        """(depth, escape, lead) of a rounded shape (a core ⊕ a ball: spheres, capsules,
        round boxes) whose core lies wholly in front of the triangle's plane, else None.

        Its nearest escape is then margin − distance(core, T) along the line from T's closest
        point to the core's, which points to the front (the core's point is in front, T's on
        the plane): the least push of all, so the one-sided depth, from one GJK distance."""
        if self._margin == 0.0:
            return None
        core = self.shape.core
        nx, ny, nz = (float(x) for x in n)
        px, py, pz = core.support_xyz(-nx, -ny, -nz)
        if nx * px + ny * py + nz * pz <= offset:
            return None
        r = gjk.distance(triangle, core)
        gap = np.asarray(r.point_b, float) - np.asarray(r.point_a, float)
        length = float(np.linalg.norm(gap))
        if r.intersecting or length == 0.0:
            return None
        escape = gap / length
        depth = max(self._margin - r.distance, 0.0)
        return depth, escape, np.asarray(r.point_b, float) - self._margin * escape

    def witness(self, depth, escape, hint, corners, size):
        """(point on A, point on T): A's leading point ``hint`` and the triangle's point
        nearest its foot."""
        return _nearest_foot([hint], depth, escape, corners)


def _triangle(corners):
    """The triangle of three corner rows as a convex shape (the mesh's own class)."""
    a, b, c = (tuple(float(x) for x in row) for row in corners)
    return Triangle._from_floats(a, b, c)


# --- the one-sided EPA --------------------------------------------------------------------------

def one_sided_depth(support, corners, n, size):
    """The depth of a convex shape A (its ``support_xyz``) against the triangle ``corners``
    with front normal ``n``: the length of the shortest translation v with v·n ≥ 0 that
    separates them, as (depth, unit escape direction, status).

    With P = T − A (the translations at which A + v meets T) and H the front half-ball, the
    depth is the largest r with r·H ⊂ P, that is the minimum over unit m of h_P(m) / h_H(m)
    (a convex set lies in another when its support function is below the other's). That is
    EPA with H in place of the unit ball (seed 000 §4): a polytope Q ⊂ P of support points of P
    grows toward P; its face nearest in H's gauge (offset / h_H(normal)) bounds the depth from
    below, the support of P along that normal from above, and the loop stops when they meet
    (SIDED_TOLERANCE of ``size``). A minimum along a back-facing m is reached on H's rim: the
    escape is then m's in-plane part, a push along the triangle's plane. ``status`` says how it
    ended: "exact", "flat" (P has no volume: A lies flat in T's plane; the first bounds are
    the answer), "stalled" (no support point beyond Q: the bounds are as close as rounding lets
    them) or "iteration_limit"; the depth is always a translation that separates.
    """
    tri = [tuple(float(x) for x in row) for row in corners]
    nx, ny, nz = (float(x) for x in n)

    def support_p(m):
        mx, my, mz = m
        t = max(tri, key=lambda c: c[0] * mx + c[1] * my + c[2] * mz)
        a = support(-mx, -my, -mz)
        return (t[0] - a[0], t[1] - a[1], t[2] - a[2])

    def gauge(offset, m):
        """The largest r with r·H inside {x : m·x ≤ offset} (h_H(m): 1 toward the front, the
        length of m's in-plane part toward the back, where H's farthest point is on its
        rim)."""
        along = m[0] * nx + m[1] * ny + m[2] * nz
        reach = 1.0 if along >= 0.0 else math.sqrt(max(0.0, 1.0 - along * along))
        if reach == 0.0:
            return math.inf if offset >= 0.0 else -math.inf
        return offset / reach

    edges = np.asarray(corners)[[1, 2, 0]] - np.asarray(corners)
    start = [(nx, ny, nz), (-nx, -ny, -nz)] + [tuple(u) for u in
                                               _unit(np.cross(edges, n)).tolist()]
    points = [support_p(m) for m in start]
    best = (math.inf, start[0])
    for m, w in zip(start, points):
        bound = gauge(_dot(m, w), m)
        if bound < best[0]:
            best = (bound, m)
    tolerance = SIDED_TOLERANCE * size
    faces = _initial_faces(points, tolerance, gauge)
    if faces is None:
        return best[0], _escape(best[1], n), "flat"
    status = "iteration_limit"
    final = set()             # faces P reaches no farther than: their planes support P
    for _ in range(MAX_SIDED_STEPS):
        lower = min(f[0] for f in faces)
        if best[0] - lower <= tolerance:
            status = "exact"
            break
        open_faces = [f for f in faces if f[3] not in final]
        if not open_faces:
            status = "stalled"
            break
        key, m, offset, ids = min(open_faces, key=lambda f: f[0])
        if key >= best[0] - tolerance:
            status = "stalled"
            break
        w = support_p(m)
        bound = gauge(_dot(m, w), m)
        if bound < best[0]:
            best = (bound, m)
        if _dot(m, w) - offset <= tolerance:
            final.add(ids)
            continue
        points.append(w)
        grown = _add_point(faces, points, len(points) - 1, tolerance, gauge)
        # Once Q holds r·H (lower > 0) it only grows, so its nearest face never comes nearer;
        # if rounding says otherwise (w nearly in a face's plane), the polytope is no longer
        # trusted.
        if grown is None or (lower > 0.0 and min(f[0] for f in grown) < lower - tolerance):
            status = "stalled"
            break
        faces = grown
    return max(best[0], 0.0), _escape(best[1], n), status


def _escape(m, n):
    """The push that realises a bound along the unit m: m itself toward the front, else its
    in-plane part (H's rim)."""
    m = np.array(m)
    if float(m @ n) < 0.0:
        m = m - float(m @ n) * n
        m = m / np.linalg.norm(m)
    return m


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _face(points, i, j, k, gauge):
    """A face record (gauge distance, unit outward normal, offset, (i, j, k)) of the
    counter-clockwise triple, or None when it has no normal."""
    a, b, c = points[i], points[j], points[k]
    ux, uy, uz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    vx, vy, vz = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    x, y, z = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    length = math.sqrt(x * x + y * y + z * z)
    if length == 0.0:
        return None
    m = (x / length, y / length, z / length)
    offset = _dot(m, a)
    return (gauge(offset, m), m, offset, (i, j, k))


def _initial_faces(points, slack, gauge):
    """Face records of the convex hull of the first points: the largest tetrahedron among
    them (two farthest apart, the farthest from their line, the farthest from that plane),
    then the others added; None if the points are flat."""
    p = np.array(points)
    i0, i1 = divmod(int(np.argmax(((p[:, None, :] - p[None, :, :]) ** 2).sum(axis=2))),
                    len(p))
    line = p[i1] - p[i0]
    off_line = np.linalg.norm(np.cross(p - p[i0], line), axis=1)
    i2 = int(np.argmax(off_line))
    normal = np.cross(line, p[i2] - p[i0])
    heights = (p - p[i0]) @ normal
    i3 = int(np.argmax(np.abs(heights)))
    length = float(np.linalg.norm(normal))
    if length == 0.0 or abs(float(heights[i3])) <= slack * length:
        return None
    if heights[i3] > 0.0:
        i1, i2 = i2, i1           # make (i0, i1, i2) face away from i3
    faces = [_face(points, *f, gauge) for f in
             ((i0, i1, i2), (i0, i3, i1), (i1, i3, i2), (i2, i3, i0))]
    if any(f is None for f in faces):
        return None
    for k in range(len(points)):
        if k not in (i0, i1, i2, i3):
            faces = _add_point(faces, points, k, slack, gauge) or faces
    return faces


def _add_point(faces, points, w, slack, gauge):
    """The face records after adding point ``w``: the faces it sees removed, the hole closed
    by a fan from their silhouette; None when it sees no face (Q cannot grow)."""
    p = points[w]
    visible, kept = [], []
    for face in faces:
        (visible if _dot(face[1], p) - face[2] > slack else kept).append(face)
    if not visible:
        return None
    directed = set()
    for face in visible:
        a, b, c = face[3]
        directed.update(((a, b), (b, c), (c, a)))
    horizon = [(a, b) for a, b in directed if (b, a) not in directed]
    if len({a for a, _ in horizon}) != len(horizon):
        return None           # not one simple loop: the visible faces are not a disc
    for a, b in horizon:
        face = _face(points, a, b, w, gauge)
        if face is not None:
            kept.append(face)
    return kept


# --- the push along the triangle's plane, on A's cross-section ----------------------------------

def _section_support(support, u, n, offset, size):
    """The point of A ∩ {x : n·x = offset} farthest along the in-plane unit direction ``u``,
    or None if A does not reach the plane.

    The support of A along w(φ) = cos φ u + sin φ n climbs monotonically along n as φ goes from
    −π/2 to π/2; where it crosses the plane, it maximises u·x over the cross-section (for any
    section point x, u·x = (w·x − sin φ·offset) / cos φ, and w·x is largest there). Bisection
    on φ keeps a support point below the plane and one above; the answer is where the segment
    between them (inside A) meets the plane."""
    lo, hi = -0.5 * math.pi, 0.5 * math.pi
    p_lo = np.array(support(*(-n)), float)
    p_hi = np.array(support(*n), float)
    g_lo, g_hi = float(n @ p_lo) - offset, float(n @ p_hi) - offset
    if g_lo > 0.0 or g_hi < 0.0:
        return None
    for _ in range(MAX_SECTION_STEPS):
        if g_lo == 0.0:
            return p_lo
        if g_hi == 0.0 or float(np.max(np.abs(p_hi - p_lo))) <= SECTION_TOLERANCE * size:
            break
        mid = 0.5 * (lo + hi)
        p = np.array(support(*(math.cos(mid) * u + math.sin(mid) * n)), float)
        g = float(n @ p) - offset
        if g <= 0.0:
            lo, p_lo, g_lo = mid, p, g
        else:
            hi, p_hi, g_hi = mid, p, g
    if g_hi == g_lo:
        return p_hi
    return p_lo + (g_lo / (g_lo - g_hi)) * (p_hi - p_lo)


def sideways_depth(support, corners, n, offset, size):
    """The shortest push along the triangle's plane (v·n = 0) that separates A from it: the 2D
    penetration depth of the triangle and A's cross-section C with its plane, by EPA on the
    polygon T − C in plane coordinates. Returns (depth, in-plane unit escape, the section
    point leading A), or None without a cross-section.

    Support points of T − C are corners of T minus section points (``_section_support``), so
    the polygon they span lies in T − C: its nearest edge bounds the depth from below, the
    support along that edge's normal from above, and the loop stops when they meet."""
    corners = np.asarray(corners, float)
    e1 = _unit(corners[1] - corners[0])
    e2 = np.cross(n, e1)
    tri2 = np.stack((corners @ e1, corners @ e2), axis=1)

    def support_2d(d2):
        """Support of T − C along d2: (2D point, section point), or (None, None)."""
        q = _section_support(support, -(d2[0] * e1 + d2[1] * e2), n, offset, size)
        if q is None:
            return None, None
        t = tri2[int(np.argmax(tri2 @ d2))]
        return t - np.array((q @ e1, q @ e2)), q

    points = []
    outward = _unit(np.cross(corners[[1, 2, 0]] - corners, n))
    starts = [np.array((u @ e1, u @ e2)) for u in outward]
    for d2 in starts + [-d for d in starts]:
        p, q = support_2d(d2)
        if p is None:
            return None
        points.append(p)
    best = (math.inf, None, None)
    tolerance = SIDED_TOLERANCE * size
    for _ in range(MAX_SIDEWAYS_STEPS):
        nearest = _nearest_edge_2d(points)
        if nearest is None:
            break
        gap, m = nearest
        p, q = support_2d(m)
        if p is None:
            break
        reach = float(m @ p)
        if reach < best[0]:
            best = (reach, m, q)
        if reach - gap <= tolerance:
            break
        points.append(p)
    if best[1] is None:
        return None
    depth, m, q = best
    return max(depth, 0.0), m[0] * e1 + m[1] * e2, q


def _nearest_edge_2d(points):
    """(offset, outward unit normal) of the edge of the convex hull of the 2D ``points``
    nearest the origin (the most negative offset if the origin lies outside), or None if the
    hull is flat."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1]))

    def turn(o, a, b):
        pa, pb, po = points[a], points[b], points[o]
        return (pa[0] - po[0]) * (pb[1] - po[1]) - (pa[1] - po[1]) * (pb[0] - po[0])

    lower, upper = [], []
    for i in order:
        while len(lower) >= 2 and turn(lower[-2], lower[-1], i) <= 0.0:
            lower.pop()
        lower.append(i)
    for i in reversed(order):
        while len(upper) >= 2 and turn(upper[-2], upper[-1], i) <= 0.0:
            upper.pop()
        upper.append(i)
    hull = lower[:-1] + upper[:-1]            # counter-clockwise
    if len(hull) < 3:
        return None
    nearest = None
    for k in range(len(hull)):
        a, b = points[hull[k]], points[hull[(k + 1) % len(hull)]]
        m = np.array((b[1] - a[1], a[0] - b[0]))   # outward for a counter-clockwise hull
        length = math.hypot(m[0], m[1])
        if length == 0.0:
            continue
        m /= length
        offset = float(m @ a)
        if nearest is None or offset < nearest[0]:
            nearest = (offset, m)
    return nearest
