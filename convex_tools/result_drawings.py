"""Core results → ``overlay.Drawing``s (what each operator and the watch list draw)."""

from __future__ import annotations

import math

import numpy as np

from .core import Hull, Transformed, translated
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
    d.wire(shape_wire(translated(shape_a, t * translation)), "ghost")
    if hit is not None:
        d.point(hit.point, "contact")
        d.arrow(hit.point, hit.point + 0.25 * float(np.linalg.norm(translation)) * hit.normal,
                "normal")
        d.label(hit.point, f"t = {fmt(hit.t)}", "contact")
    return d


def shape_wire(shape) -> np.ndarray:
    """(N, 2, 3) segments outlining a shape: hull edges when it has faces, else sampled supports."""
    if isinstance(shape, Transformed) and isinstance(shape.shape, Hull) and len(shape.shape.faces):
        m = shape.matrix
        verts = shape.shape.vertices @ m[:3, :3].T + m[:3, 3]
        faces = shape.shape.faces
        edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]),
                        axis=1)
        edges = np.unique(edges, axis=0)
        return verts[edges]
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
