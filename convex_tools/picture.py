"""Pictures of a scene with its overlays, rendered headless (or from the UI) to an image file.

The scene is drawn with ``GPUOffScreen.draw_view3d`` (solid shading, as the viewport shows it)
and the overlays on top by the very functions the viewport handlers use (``overlay``). In
background mode the gpu module needs one Workbench render before it can draw, so the first
picture makes a 1×1 render (settings restored afterwards). The file's suffix chooses its format
(``PICTURE_FORMATS``); it is written atomically. The EGL_BAD_MATCH lines the headless GPU
set-up prints are dropped (``console``): they are harmless and would bury the useful output.
"""

from __future__ import annotations

import math
import os

import bpy
import numpy as np
from mathutils import Matrix, Vector

from . import overlay, preferences
from .console import EGL_BAD_MATCH, filtered_output
from .files import replaced_atomically
from .objects import GEOMETRY_TYPES

# Image formats by file suffix (Blender's own image writers).
PICTURE_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".webp": "WEBP",
                   ".tif": "TIFF", ".tiff": "TIFF", ".bmp": "BMP"}
# JPEG and WebP quality (0-100): high enough that thin overlay lines keep their colour.
LOSSY_QUALITY = 92

_gpu_ready = False


def _initialise_gpu(scene) -> None:
    """One tiny Workbench render: in background mode the gpu module needs it before drawing."""
    global _gpu_ready
    if _gpu_ready or not bpy.app.background:
        _gpu_ready = True
        return
    render = scene.render
    saved = (render.engine, render.resolution_x, render.resolution_y,
             render.resolution_percentage, scene.camera)
    temporary = None
    try:
        render.engine = 'BLENDER_WORKBENCH'
        render.resolution_x = render.resolution_y = 1
        render.resolution_percentage = 100
        if scene.camera is None:
            temporary = bpy.data.objects.new("convex_tools_init", bpy.data.cameras.new("init"))
            scene.collection.objects.link(temporary)
            scene.camera = temporary
        with filtered_output(EGL_BAD_MATCH):
            bpy.ops.render.render()
        _gpu_ready = True
    finally:
        (render.engine, render.resolution_x, render.resolution_y,
         render.resolution_percentage, scene.camera) = saved
        if temporary is not None:
            data = temporary.data
            bpy.data.objects.remove(temporary)
            bpy.data.cameras.remove(data)


def _view3d():
    for screen in bpy.data.screens:
        for area in screen.areas:
            if area.type == 'VIEW_3D':
                region = next(r for r in area.regions if r.type == 'WINDOW')
                return area.spaces.active, region
    raise RuntimeError("no 3D view found to draw the scene with")


def scene_points(scene, keys=None) -> np.ndarray:
    """(N, 3) world points to frame: visible objects' bounding-box corners and drawn points."""
    points = []
    for obj in scene.objects:
        if obj.type in GEOMETRY_TYPES and obj.visible_get():
            m = obj.matrix_world
            points.extend(tuple(m @ Vector(c)) for c in obj.bound_box)
    for drawing in overlay.drawings(keys):
        points.extend(a for a, _, _ in drawing.lines)
        points.extend(b for _, b, _ in drawing.lines)
        points.extend(p for p, _ in drawing.points)
        points.extend(p for p, _, _ in drawing.labels)
    if not points:
        return np.array([[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]])
    return np.array(points, dtype=float)


# Framed points stay inside this fraction of the picture's half-width and half-height.
FRAME_FILL = 0.9
FIELD_OF_VIEW = math.radians(40.0)   # of the picture's longer side


def _perspective(width, height, near, far):
    aspect = width / height
    f = 1.0 / math.tan(0.5 * FIELD_OF_VIEW)
    fx, fy = (f / aspect, f) if aspect >= 1.0 else (f, f * aspect)
    return Matrix(((fx, 0, 0, 0), (0, fy, 0, 0),
                   (0, 0, (far + near) / (near - far), 2 * far * near / (near - far)),
                   (0, 0, -1, 0)))


def framing_matrices(points, width, height, direction=(1.0, -1.3, 0.9)):
    """View and projection matrices of a perspective view from ``direction`` that shows every
    one of ``points`` (N, 3), as close as it can: the camera distance is bisected between one at
    which the points' bounding sphere surely fits and one just outside that sphere, and the
    projection is shifted (an off-centre frustum, as a camera's lens shift) so that the points'
    picture is centred rather than leaving an empty band on one side."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    lower, upper = points.min(axis=0), points.max(axis=0)
    centre = 0.5 * (lower + upper)
    radius = max(float(np.max(np.linalg.norm(points - centre, axis=1))), 1e-3)
    axis = Vector(direction).normalized()
    half_angle = math.atan(math.tan(0.5 * FIELD_OF_VIEW) * min(width / height, height / width, 1.0))

    def matrices(distance):
        eye = Vector(centre) + axis * distance
        rotation = (-axis).to_track_quat('-Z', 'Y').to_matrix().to_4x4()
        view = (Matrix.Translation(eye) @ rotation).inverted()
        near = max(0.5 * (distance - radius), 1e-3 * radius)
        return view, _perspective(width, height, near, distance + 2.0 * radius)

    def extent(distance):
        """(x_min, x_max, y_min, y_max) of the points in normalised device coordinates; None
        when one is behind the camera."""
        view, proj = matrices(distance)
        clip = np.c_[points, np.ones(len(points))] @ np.array(proj @ view).T
        if np.any(clip[:, 3] <= 1e-9):
            return None
        ndc = clip[:, :2] / clip[:, 3:4]
        return ndc[:, 0].min(), ndc[:, 0].max(), ndc[:, 1].min(), ndc[:, 1].max()

    def fits(distance):
        box = extent(distance)
        return box is not None and box[1] - box[0] <= 2.0 * FRAME_FILL \
            and box[3] - box[2] <= 2.0 * FRAME_FILL

    far = radius / (math.sin(half_angle) * FRAME_FILL)   # the whole sphere fits
    near = 1.05 * radius                                  # the camera just outside the sphere
    if not fits(near):
        for _ in range(30):
            middle = 0.5 * (near + far)
            near, far = (near, middle) if fits(middle) else (middle, far)
    else:
        far = near
    view, proj = matrices(far)
    x0, x1, y0, y1 = extent(far)
    # Centre the picture of the points: ndc' = ndc - c, i.e. rows x and y of the projection
    # less c times its row w.
    cx, cy = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
    shifted = proj.copy()
    for column in range(4):
        shifted[0][column] = proj[0][column] - cx * proj[3][column]
        shifted[1][column] = proj[1][column] - cy * proj[3][column]
    return view, shifted


def picture_format(path) -> str:
    """Blender's file format for the suffix of ``path``; ``ValueError`` for any other suffix."""
    suffix = os.path.splitext(str(path))[1].lower()
    if suffix not in PICTURE_FORMATS:
        known = ", ".join(PICTURE_FORMATS)
        what = f"'{suffix}' pictures" if suffix else "pictures without a suffix"
        raise ValueError(f"cannot write {what} ({path}); the suffix chooses the format: {known}")
    return PICTURE_FORMATS[suffix]


def render_picture(path, scene=None, camera=None, width=960, height=600, keys=None,
                   view_projection=None, legend=None):
    """Render ``scene`` with the overlays under ``keys`` (all when None) to the image ``path``
    (format by its suffix, see ``PICTURE_FORMATS``).

    The view is the ``camera`` given, else the scene camera, else one that frames the objects
    and drawings. Labels sit on dark boxes. ``legend``: rows (colour role, text) drawn in the
    top left corner, each after a swatch of its colour. Returns the 4×4 view-projection matrix
    used (to project points into it).
    """
    picture_format(path)   # refuse an unknown suffix before any work
    with filtered_output(EGL_BAD_MATCH):
        return _render(path, scene, camera, width, height, keys, view_projection, legend)


# Legend: distance of its box from the picture's corner, and padding inside it (pixels).
LEGEND_MARGIN = 12
LEGEND_PADDING = 10


def legend_height(rows: int) -> float:
    """Pixels from the top of a picture to the bottom of a legend of ``rows`` rows."""
    label_size = preferences.style()[3]
    return LEGEND_MARGIN + 2 * LEGEND_PADDING + label_size * (1.5 * rows - 0.5)


def draw_legend(rows, height) -> None:
    """Rows (role, text) in the top left corner, each a swatch of the role's colour and its
    meaning, on a dark box (pixel-space matrices loaded)."""
    import blf

    if not rows:
        return
    colors, _, _, label_size = preferences.style()
    font = 0
    blf.size(font, label_size)
    line = 1.5 * label_size
    swatch = 0.8 * label_size
    text_width = max(blf.dimensions(font, text)[0] for _, text in rows)
    box_w = 2 * LEGEND_PADDING + swatch + 0.6 * label_size + text_width
    box_h = legend_height(len(rows)) - LEGEND_MARGIN
    left = LEGEND_MARGIN
    top = height - LEGEND_MARGIN
    overlay.fill_boxes([(left, top - box_h, box_w, box_h)], overlay.BACKDROP_COLOR)
    for k, (role, text) in enumerate(rows):
        baseline = top - LEGEND_PADDING - label_size - k * line
        x = left + LEGEND_PADDING
        overlay.fill_boxes([(x, baseline, swatch, swatch)], colors.get(role, (1, 1, 1, 1)))
        blf.color(font, 0.95, 0.95, 0.95, 1.0)
        blf.position(font, x + swatch + 0.6 * label_size, baseline, 0)
        blf.draw(font, text)


def _render(path, scene, camera, width, height, keys, view_projection, legend):
    import gpu

    scene = scene or bpy.context.scene
    _initialise_gpu(scene)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    camera = camera or scene.camera
    if view_projection is not None:
        view, proj = view_projection
    elif camera is not None:
        view = camera.matrix_world.inverted()
        proj = camera.calc_matrix_camera(depsgraph, x=width, y=height)
    else:
        view, proj = framing_matrices(scene_points(scene, keys), width, height)
    space, region = _view3d()
    offscreen = gpu.types.GPUOffScreen(width, height)
    try:
        offscreen.draw_view3d(scene, bpy.context.view_layer, space, region, view, proj,
                              do_color_management=True)
        items = overlay.drawings(keys)
        labels = overlay.place_labels(items, overlay.projector(proj @ view, width, height),
                                      frame=(width, height))
        # Labels and the legend in pixel space: an orthographic map of the pixel grid to clip
        # space. Backdrops first, lines and points over them, then the text.
        pixel_space = (Matrix.Translation((-1.0, -1.0, 0.0))
                       @ Matrix.Diagonal((2.0 / width, 2.0 / height, 1.0, 1.0)))
        with offscreen.bind():
            gpu.matrix.load_projection_matrix(Matrix.Identity(4))
            gpu.matrix.load_matrix(pixel_space)
            overlay.draw_label_backdrops(labels)
            gpu.matrix.load_matrix(view)
            gpu.matrix.load_projection_matrix(proj)
            overlay.draw_geometry(items, (width, height))
            gpu.matrix.load_projection_matrix(Matrix.Identity(4))
            gpu.matrix.load_matrix(pixel_space)
            overlay.draw_label_texts(labels)
            draw_legend(legend, height)
            buffer = offscreen.texture_color.read()
    finally:
        offscreen.free()
    buffer.dimensions = width * height * 4
    pixels = np.asarray(buffer, dtype=np.float32).reshape(height, width, 4)
    if pixels.max() > 1.5:  # an 8-bit texture reads back as 0..255
        pixels = pixels / 255.0
    save_picture(path, pixels)
    return np.array(proj @ view)


def save_picture(path, pixels) -> None:
    """Write (H, W, 4) float RGBA pixels (row 0 at the bottom, as Blender stores them) to
    ``path`` in the format its suffix names, atomically."""
    file_format = picture_format(path)
    height, width = pixels.shape[:2]
    image = bpy.data.images.new("convex_tools_picture", width, height, alpha=True)
    try:
        image.pixels.foreach_set(np.ascontiguousarray(pixels, dtype=np.float32).ravel())
        image.file_format = file_format
        with replaced_atomically(bpy.path.abspath(str(path)), keep_suffix=True) as temporary:
            image.filepath_raw = temporary
            image.save(quality=LOSSY_QUALITY)
    finally:
        bpy.data.images.remove(image)


def load_png(path) -> np.ndarray:
    """(H, W, 4) float RGBA pixels of a picture (PNG or any format Blender reads), row 0 at the
    bottom (for tests and checks)."""
    image = bpy.data.images.load(bpy.path.abspath(path))
    try:
        width, height = image.size
        pixels = np.empty(width * height * 4, dtype=np.float32)
        image.pixels.foreach_get(pixels)
        return pixels.reshape(height, width, 4)
    finally:
        bpy.data.images.remove(image)
