"""Overlays verified by pixels: each result's colour appears where its points project.

A picture is rendered headless (``picture.render_picture``: the scene by ``draw_view3d``, then the
overlays by the viewport's own drawing code); every drawn point is projected with the picture's
view-projection matrix and the PNG is read back at that pixel.
"""

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import core, objects, overlay, picture, preferences, result_drawings  # noqa: E402

from bpy_helpers import add  # noqa: E402

WIDTH, HEIGHT = 320, 240
COLOUR_MATCH = 0.05   # RGB distance: the PNG is 8-bit and colours are drawn opaque


def render(tmp_path, drawing, name):
    overlay.clear()
    overlay.show("test", drawing)
    path = str(tmp_path / f"{name}.png")
    view_projection = picture.render_picture(path, width=WIDTH, height=HEIGHT)
    return picture.load_png(path), overlay.projector(view_projection, WIDTH, HEIGHT)


def colour_near(pixels, xy, role, radius=2):
    """Whether the role's colour is within ``radius`` pixels of the pixel position ``xy``."""
    colour = np.array(preferences.DEFAULT_COLORS[role][:3])
    row, col = int(round(xy[1])), int(round(xy[0]))
    assert radius <= row < HEIGHT - radius and radius <= col < WIDTH - radius, xy
    window = pixels[row - radius:row + radius + 1, col - radius:col + radius + 1, :3]
    return bool(np.min(np.linalg.norm(window - colour, axis=2)) < COLOUR_MATCH)


def crate_on_floor():
    floor = add("cube", "Floor", size=2.0, location=(0.0, 0.0, -1.0))
    floor.scale = (3.0, 3.0, 1.0)
    crate = add("cube", "Crate", size=1.0, location=(0.2, -0.3, 0.4), rotation=(0.0, 0.0, 0.5))
    bpy.context.view_layer.update()   # the crate sinks 0.1 into the floor
    return objects.shape_from_object(crate), objects.shape_from_object(floor)


def test_contact_points_are_drawn_at_their_projected_pixels(addon, tmp_path):
    crate, floor = crate_on_floor()
    manifold = core.contact_manifold(crate, floor)
    assert manifold is not None and len(manifold.points) == 4
    pixels, project = render(tmp_path, result_drawings.manifold_drawing(manifold, 0.3),
                             "contacts")
    for p in manifold.points:
        assert colour_near(pixels, project(p), "contact"), p
    # Control: nothing yellow at the crate's top, far from every contact point.
    assert not colour_near(pixels, project((0.2, -0.3, 0.9)), "contact")


def test_penetration_vector_is_drawn_from_point_a_to_point_b(addon, tmp_path):
    crate, floor = crate_on_floor()
    contact = core.penetration(crate, floor)
    assert contact is not None and contact.depth == pytest.approx(0.1, abs=1e-6)
    pixels, project = render(tmp_path, result_drawings.penetration_drawing(contact), "depth")
    for p in (contact.point_a, contact.point_b):
        assert colour_near(pixels, project(p), "penetration"), p


def test_ray_and_hit_point_are_drawn_where_they_project(addon, tmp_path):
    add("cube", "Target", size=2.0, location=(0.0, 0.0, 0.0), rotation=(0.3, 0.2, 0.0))
    bpy.context.view_layer.update()
    target = objects.shape_from_object(bpy.data.objects["Target"])
    origin, direction = np.array([4.0, -3.0, 1.0]), np.array([-4.0, 3.0, -1.0])
    hit = core.ray_cast(target, origin, direction)
    assert hit is not None
    pixels, project = render(tmp_path, result_drawings.ray_drawing(origin, direction, hit, 3.0),
                             "ray")
    assert colour_near(pixels, project(hit.point), "hit")
    # The ray's own colour along its visible part, a third of the way from its origin.
    assert colour_near(pixels, project(origin + (hit.point - origin) / 3.0), "ray")


def test_wire_role_draws_a_shape_outline(addon, tmp_path):
    add("cube", "Box", size=2.0)
    bpy.context.view_layer.update()
    box = objects.shape_from_object(bpy.data.objects["Box"], kind="BOX")
    segments = result_drawings.shape_wire(box)
    pixels, project = render(tmp_path, overlay.Drawing().wire(segments, "wire"), "wire")
    # The box's eight corners are on its outline (every corner is an end of some segment).
    for corner in np.unique(segments.reshape(-1, 3).round(9), axis=0):
        assert colour_near(pixels, project(corner), "wire"), corner
