"""Overlay drawing: results as world-space lines, points and labels, drawn by the gpu module.

A ``Drawing`` is plain data (lines, points, labels by colour role). Drawings are kept under keys
(one per query or feature: "distance", "level", "watch:…") and drawn by the same two functions
in the viewport (draw handlers, added by ``attach`` and removed by ``detach``) and in the
offscreen pictures of ``picture``: ``draw_geometry`` with the view-projection already loaded,
``draw_labels`` in pixel space with a projection function (pictures also put each label on a
dark backdrop: ``place_labels``, ``draw_label_backdrops``, ``draw_label_texts``). Colours and
sizes come from the add-on preferences (``preferences.style``).
"""

from __future__ import annotations

import math

import bpy
import numpy as np

from . import preferences

_drawings: dict = {}
_handles: list = []


class Drawing:
    """World-space primitives by colour role (see ``preferences.DEFAULT_COLORS``)."""

    def __init__(self):
        self.lines = []    # (a, b, role)
        self.points = []   # (p, role)
        self.labels = []   # (p, text, role)
        self.areas = {}    # role -> (T, 3, 3) triangles filled in the role's colour, see-through

    def line(self, a, b, role):
        self.lines.append((_v(a), _v(b), role))
        return self

    def arrow(self, a, b, role):
        """A line from a to b with a head at b (head length a fifth of the line, capped)."""
        a, b = _v(a), _v(b)
        self.lines.append((a, b, role))
        d = np.subtract(b, a)
        n = float(np.linalg.norm(d))
        if n == 0.0:
            return self
        d /= n
        side = np.cross(d, (0.0, 0.0, 1.0) if abs(d[2]) < 0.9 else (1.0, 0.0, 0.0))
        side /= np.linalg.norm(side)
        head = min(0.2 * n, 0.25)
        for s in (side, -side):
            self.lines.append((b, _v(np.asarray(b) - head * d + 0.5 * head * s), role))
        return self

    def point(self, p, role):
        self.points.append((_v(p), role))
        return self

    def label(self, p, text, role):
        self.labels.append((_v(p), str(text), role))
        return self

    def wire(self, segments, role):
        for a, b in np.asarray(segments, dtype=float).reshape(-1, 2, 3):
            self.lines.append((_v(a), _v(b), role))
        return self

    def fill(self, triangles, role):
        """Filled triangles (T, 3, 3), drawn half see-through under the lines (a map)."""
        triangles = np.asarray(triangles, dtype=np.float32).reshape(-1, 3, 3)
        if len(triangles):
            kept = self.areas.get(role)
            self.areas[role] = triangles if kept is None else np.concatenate((kept, triangles))
        return self

    def __bool__(self):
        return bool(self.lines or self.points or self.labels or self.areas)

    def bounds(self):
        pts = [p for a, b, _ in self.lines for p in (a, b)] + [p for p, _ in self.points] \
            + [p for p, _, _ in self.labels] \
            + [tuple(c) for t in self.areas.values() for c in (t.reshape(-1, 3).min(axis=0),
                                                               t.reshape(-1, 3).max(axis=0))]
        if not pts:
            return None
        pts = np.array(pts)
        return pts.min(axis=0), pts.max(axis=0)


def _v(p):
    return tuple(float(c) for c in p)


# --- the store ------------------------------------------------------------------------------

def show(key: str, drawing: Drawing) -> None:
    """Replace the drawing under ``key`` and redraw the 3D viewports."""
    _drawings[key] = drawing
    tag_redraw()


def clear(key: str | None = None) -> None:
    """Remove the drawing under ``key`` (all drawings when None)."""
    if key is None:
        _drawings.clear()
    else:
        _drawings.pop(key, None)
    tag_redraw()


def drawings(keys=None) -> list:
    if keys is None:
        return list(_drawings.values())
    return [_drawings[k] for k in keys if k in _drawings]


def tag_redraw() -> None:
    wm = getattr(bpy.context, "window_manager", None)
    for window in (wm.windows if wm is not None else ()):
        for area in window.screen.areas:
            if area.type == 'VIEW_3D':
                area.tag_redraw()


# --- drawing (shared by the viewport and the offscreen pictures) ------------------------------

def draw_geometry(items, viewport_size) -> None:
    """Draw lines and points of ``items`` (Drawings) with the current gpu matrices."""
    import gpu
    from gpu_extras.batch import batch_for_shader

    colors, line_width, point_size, _ = preferences.style()
    lines, points = {}, {}
    for drawing in items:
        for a, b, role in drawing.lines:
            lines.setdefault(role, []).extend((a, b))
        for p, role in drawing.points:
            points.setdefault(role, []).append(p)
    gpu.state.blend_set('ALPHA')
    gpu.state.depth_test_set('NONE')
    areas = {}
    for drawing in items:
        for role, triangles in getattr(drawing, "areas", {}).items():
            areas.setdefault(role, []).append(triangles.reshape(-1, 3))
    if areas:
        shader = gpu.shader.from_builtin('UNIFORM_COLOR')
        for role, chunks in areas.items():
            r, g, b, a = colors.get(role, (1, 1, 1, 1))
            shader.uniform_float("color", (r, g, b, AREA_ALPHA * a))
            batch_for_shader(shader, 'TRIS', {"pos": np.concatenate(chunks)}).draw(shader)
    if lines:
        shader = gpu.shader.from_builtin('POLYLINE_UNIFORM_COLOR')
        shader.uniform_float("viewportSize", viewport_size)
        shader.uniform_float("lineWidth", line_width)
        for role, coords in lines.items():
            shader.uniform_float("color", colors.get(role, (1, 1, 1, 1)))
            batch_for_shader(shader, 'LINES', {"pos": coords}).draw(shader)
    if points:
        shader = gpu.shader.from_builtin('POINT_UNIFORM_COLOR')
        gpu.state.point_size_set(point_size)
        for role, coords in points.items():
            shader.uniform_float("color", colors.get(role, (1, 1, 1, 1)))
            batch_for_shader(shader, 'POINTS', {"pos": coords}).draw(shader)
    gpu.state.blend_set('NONE')


# Filled areas (a traversal map) are drawn this opaque, so that the level shows through.
AREA_ALPHA = 0.55
# Labels start this many pixels right of and above their point.
LABEL_OFFSET = 6
# Backdrop behind a label (pictures): dark, mostly opaque, this many pixels around the text.
BACKDROP_COLOR = (0.05, 0.05, 0.05, 0.72)
BACKDROP_PADDING = 3


def draw_labels(items, project) -> None:
    """Draw the labels of ``items``; ``project(p)`` gives pixel (x, y) or None if off-screen."""
    draw_label_texts(place_labels(items, project))


def place_labels(items, project, frame=None) -> list:
    """(x, y, text, role) of every label of ``items`` that projects into the view: its text
    starts ``LABEL_OFFSET`` pixels right of and above its point. ``frame`` (width, height):
    labels that would run over the border are moved inside it."""
    import blf

    label_size = preferences.style()[3]
    font = 0
    blf.size(font, label_size)
    placed = []
    for drawing in items:
        for p, text, role in drawing.labels:
            xy = project(p)
            if xy is None:
                continue
            x, y = xy[0] + LABEL_OFFSET, xy[1] + LABEL_OFFSET
            if frame is not None:
                w, h = blf.dimensions(font, text)
                pad = BACKDROP_PADDING
                x = max(pad, min(x, frame[0] - w - pad))
                y = max(pad + _descent(label_size), min(y, frame[1] - h - pad))
            placed.append((x, y, text, role))
    return placed


def _descent(label_size):
    """Descenders reach about a third of the size below the baseline."""
    return 0.3 * label_size


def draw_label_backdrops(placed) -> None:
    """A dark box under each placed label (pixel-space matrices loaded): drawn before the
    lines and points, it keeps red and orange text readable on any surface of a still picture
    without hiding a marker."""
    import blf

    label_size = preferences.style()[3]
    blf.size(0, label_size)
    boxes = []
    for x, y, text, _ in placed:
        w, h = blf.dimensions(0, text)
        boxes.append((x, y - _descent(label_size), w, h + _descent(label_size)))
    fill_boxes(boxes, BACKDROP_COLOR, BACKDROP_PADDING)


def draw_label_texts(placed) -> None:
    """The text of each placed label in its role's colour, outlined in black."""
    import blf

    colors, _, _, label_size = preferences.style()
    font = 0
    blf.size(font, label_size)
    # A dark outline keeps light labels readable on light surfaces (a grey floor, say).
    blf.enable(font, blf.SHADOW)
    blf.shadow(font, 3, 0.0, 0.0, 0.0, 0.9)
    blf.shadow_offset(font, 1, -1)
    for x, y, text, role in placed:
        blf.color(font, *colors.get(role, (1, 1, 1, 1)))
        blf.position(font, x, y, 0)
        blf.draw(font, text)
    blf.disable(font, blf.SHADOW)


def fill_boxes(boxes, color, padding=0.0) -> None:
    """Filled rectangles (x, y, width, height) in the current (pixel-space) matrices."""
    if not boxes:
        return
    import gpu
    from gpu_extras.batch import batch_for_shader

    triangles = []
    for x, y, w, h in boxes:
        x0, y0, x1, y1 = x - padding, y - padding, x + w + padding, y + h + padding
        triangles += [(x0, y0), (x1, y0), (x1, y1), (x0, y0), (x1, y1), (x0, y1)]
    shader = gpu.shader.from_builtin('UNIFORM_COLOR')
    shader.uniform_float("color", color)
    gpu.state.blend_set('ALPHA')
    batch_for_shader(shader, 'TRIS', {"pos": triangles}).draw(shader)
    gpu.state.blend_set('NONE')


# --- viewport handlers ----------------------------------------------------------------------

def _settings():
    scene = getattr(bpy.context, "scene", None)
    return getattr(scene, "convex_tools", None)


def _draw_view():
    settings = _settings()
    if not _drawings or (settings is not None and not settings.show_overlays):
        return
    region = bpy.context.region
    draw_geometry(list(_drawings.values()), (region.width, region.height))


def _draw_pixel():
    settings = _settings()
    if not _drawings or (settings is not None and not (settings.show_overlays
                                                       and settings.show_labels)):
        return
    from bpy_extras.view3d_utils import location_3d_to_region_2d
    region, rv3d = bpy.context.region, bpy.context.region_data

    def project(p):
        xy = location_3d_to_region_2d(region, rv3d, p)
        return None if xy is None else (xy.x, xy.y)

    draw_labels(list(_drawings.values()), project)


def projector(view_projection, width, height):
    """World → pixel function for a 4×4 view-projection matrix (None behind the camera)."""
    m = np.array(view_projection, dtype=float)

    def project(p):
        x, y, z, w = m @ (p[0], p[1], p[2], 1.0)
        if w <= 1e-12 or not math.isfinite(w):
            return None
        return ((x / w + 1.0) * 0.5 * width, (y / w + 1.0) * 0.5 * height)

    return project


def attach():
    """Add the viewport draw handlers (once, however often this is called)."""
    if _handles:
        return
    space = bpy.types.SpaceView3D
    _handles.append(space.draw_handler_add(_draw_view, (), 'WINDOW', 'POST_VIEW'))
    _handles.append(space.draw_handler_add(_draw_pixel, (), 'WINDOW', 'POST_PIXEL'))


def detach():
    space = bpy.types.SpaceView3D
    while _handles:
        space.draw_handler_remove(_handles.pop(), 'WINDOW')
    _drawings.clear()
