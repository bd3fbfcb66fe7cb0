"""Core results → ``overlay.Drawing``s (what each operator and the watch list draw).

On a ``Compound`` or ``TriangleMesh`` a result names the part(s) that realised it (``part_a``,
``part_b``, ``part``); ``parts_drawing`` outlines those parts so that one sees which pillar of an
arch, or which triangle of a terrain, the answer is about.
"""

from __future__ import annotations

import math
import re

import numpy as np

from .core import Transformed, translated
from .objects import is_concave
from .overlay import Drawing

# Directions sampled for the wireframe of a shape without explicit faces: a latitude-longitude
# grid; neighbouring support points are joined, which traces edges of polytopes and meridians and
# parallels of curved shapes.
WIRE_LONGITUDES = 32
WIRE_LATITUDES = 15


def fmt(x: float) -> str:
    return f"{x:.4g}"


def distance_drawing(res) -> Drawing:
    d = Drawing()
    if res.intersecting:
        d.point(res.point_a, "penetration").label(res.point_a, "overlapping", "penetration")
        return d
    mid = 0.5 * (res.point_a + res.point_b)
    d.line(res.point_a, res.point_b, "closest")
    d.point(res.point_a, "closest").point(res.point_b, "closest")
    d.label(mid, f"d = {fmt(res.distance)}", "closest")
    return d


def penetration_drawing(contact) -> Drawing:
    """The vector that moves A out of B: from point_a by -depth * normal (to point_b)."""
    d = Drawing()
    d.arrow(contact.point_a, contact.point_b, "penetration")
    d.point(contact.point_a, "penetration").point(contact.point_b, "penetration")
    d.label(0.5 * (contact.point_a + contact.point_b), f"depth {fmt(contact.depth)}",
            "penetration")
    return d


def manifold_drawing(manifold, normal_length: float) -> Drawing:
    d = Drawing()
    n = np.asarray(manifold.normal)
    for p, depth in zip(manifold.points, manifold.depths):
        d.point(p, "contact")
        d.arrow(p, p + normal_length * n, "normal")
    if len(manifold.points):
        d.label(manifold.points[0], f"{len(manifold.points)} contacts, max depth "
                f"{fmt(float(np.max(manifold.depths)))}", "contact")
    return d


def ray_drawing(origin, direction, hit, length: float) -> Drawing:
    d = Drawing()
    origin = np.asarray(origin, dtype=float)
    direction = np.asarray(direction, dtype=float)
    end = hit.point if hit is not None else origin + length * direction / np.linalg.norm(direction)
    d.line(origin, end, "ray").point(origin, "ray")
    if hit is not None:
        d.point(hit.point, "hit")
        d.arrow(hit.point, hit.point + 0.25 * length * hit.normal, "normal")
        d.label(hit.point, f"t = {fmt(hit.t)}", "hit")
    return d


def sweep_drawing(shape_a, start, translation, hit) -> Drawing:
    d = Drawing()
    start = np.asarray(start, dtype=float)
    translation = np.asarray(translation, dtype=float)
    t = hit.t if hit is not None else 1.0
    d.line(start, start + t * translation, "ray")
    d.wire(shape_wire(moved(shape_a, t * translation)), "ghost")
    if hit is not None:
        d.point(hit.point, "contact")
        d.arrow(hit.point, hit.point + 0.25 * float(np.linalg.norm(translation)) * hit.normal,
                "normal")
        d.label(hit.point, f"t = {fmt(hit.t)}", "contact")
    return d


def moved(shape, offset):
    """``shape`` translated by ``offset`` (a compound or triangle mesh as a whole)."""
    if is_concave(shape):
        m = np.eye(4)
        m[:3, 3] = offset
        return shape.transformed(m)
    return translated(shape, offset)


def part_shape(shape, part_id):
    """The part a result calls ``part_id`` of a compound or triangle mesh, as a convex shape
    (None if there is none). Results number a compound's parts as given and a mesh's triangles
    by their row in its input, which grows with the mesh's own order: a bisection finds it."""
    lo, hi = 0, len(shape) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if shape.part_id(mid) < part_id:
            lo = mid + 1
        else:
            hi = mid
    return shape.part(lo) if len(shape) and shape.part_id(lo) == part_id else None


def part_for_label(shape, label):
    """The part of a compound or triangle mesh a report names ``label`` (its ``part_label``:
    a part's name, "part 3", "triangle 17"), or None."""
    names = getattr(shape, "names", None)
    if names and label in names:
        part_id = names.index(label)
    else:
        number = re.search(r"(\d+)$", label or "")
        if number is None:
            return None
        part_id = int(number.group(1))
    if shape.part_label(part_id) != label:
        return None
    return part_shape(shape, part_id)


def parts_drawing(shape_a, part_a=None, shape_b=None, part_b=None, role="part") -> Drawing:
    """Outlines of the parts a result names (nothing for convex shapes)."""
    d = Drawing()
    for shape, part in ((shape_a, part_a), (shape_b, part_b)):
        if shape is not None and part is not None and is_concave(shape):
            piece = part_shape(shape, part)
            if piece is not None:
                d.wire(shape_wire(piece), role)
    return d


def part_text(shape, part) -> str:
    """" (part 2)" / " (triangle 17)" for a named part of a concave shape, else ""."""
    if part is None or not is_concave(shape):
        return ""
    return f" ({shape.part_label(part)})"


def shape_wire(shape) -> np.ndarray:
    """(N, 2, 3) segments outlining a shape: edges when it has faces (hulls, triangles, triangle
    meshes), every part's for a compound, else sampled supports."""
    if is_concave(shape):
        triangles = getattr(shape, "triangles", None)
        if triangles is not None:
            return _face_edges(np.asarray(shape.vertices), np.asarray(triangles))
        wires = [shape_wire(shape.part(i)) for i in range(len(shape))]
        return np.concatenate(wires) if wires else np.zeros((0, 2, 3))
    inner, matrix = (shape.shape, shape.matrix) if isinstance(shape, Transformed) else \
        (shape, None)
    faces = getattr(inner, "faces", None)
    if faces is not None and getattr(inner, "vertices", None) is not None and len(faces):
        verts = np.asarray(inner.vertices, dtype=float)
        if matrix is not None:
            verts = verts @ matrix[:3, :3].T + matrix[:3, 3]
        return _face_edges(verts, np.asarray(faces))
    lon = np.linspace(0.0, 2.0 * math.pi, WIRE_LONGITUDES, endpoint=False)
    lat = np.linspace(-0.5 * math.pi, 0.5 * math.pi, WIRE_LATITUDES)
    grid = np.empty((WIRE_LATITUDES, WIRE_LONGITUDES, 3))
    for i, phi in enumerate(lat):
        for j, theta in enumerate(lon):
            grid[i, j] = shape.support_xyz(math.cos(phi) * math.cos(theta),
                                           math.cos(phi) * math.sin(theta), math.sin(phi))
    segments = [np.stack([grid[:, :-1], grid[:, 1:]], axis=2).reshape(-1, 2, 3),
                np.stack([grid[:, -1], grid[:, 0]], axis=1),
                np.stack([grid[:-1], grid[1:]], axis=2).reshape(-1, 2, 3)]
    segments = np.concatenate(segments)
    keep = np.linalg.norm(segments[:, 0] - segments[:, 1], axis=1) > 1e-9
    return segments[keep]


def _face_edges(verts, faces) -> np.ndarray:
    """Each edge of the polygons ``faces`` (rows of vertex indices) once, as segments."""
    faces = np.asarray(faces, dtype=np.int64)
    edges = np.concatenate([faces[:, [k, (k + 1) % faces.shape[1]]]
                            for k in range(faces.shape[1])])
    edges = np.unique(np.sort(edges, axis=1), axis=0)
    return verts[edges]
