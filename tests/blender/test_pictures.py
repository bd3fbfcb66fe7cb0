"""The README's pictures and the pictures of the command line: one script renders them all, the
findings picture frames the level tightly and explains its colours, and every picture command
writes the format its file name asks for."""

import os
import struct
import subprocess
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from convex_tools import cli, overlay, picture, preferences  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def legend_swatch_centres(height, rows):
    """Pixel (x, y) (y up, as ``load_png`` gives them) of the centre of each legend swatch."""
    size = preferences.DEFAULT_LABEL_SIZE
    x = picture.LEGEND_MARGIN + picture.LEGEND_PADDING + 0.4 * size
    top = height - picture.LEGEND_MARGIN - picture.LEGEND_PADDING - size
    return [(int(x), int(top - k * 1.5 * size + 0.4 * size)) for k in range(rows)]


def assert_colour_at(pixels, xy, role):
    colour = np.array(preferences.DEFAULT_COLORS[role][:3])
    assert np.linalg.norm(pixels[xy[1], xy[0], :3] - colour) < 0.05, (xy, pixels[xy[1], xy[0]])


def test_make_pictures_renders_every_readme_picture(tmp_path):
    done = subprocess.run([sys.executable, os.path.join(SCRIPTS, "make_pictures.py"),
                           "--out", str(tmp_path), "--scale", "0.25"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert png_size(tmp_path / "overlay.png") == (320, 180)
    assert png_size(tmp_path / "findings.png") == (400, 250)
    assert png_size(tmp_path / "map.png") == (300, 250)
    # The README shows exactly the pictures the script makes.
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for name in ("overlay.png", "findings.png", "map.png"):
        assert f"](docs/{name})" in readme
    assert "EGL" not in done.stderr


def test_the_findings_picture_has_a_legend_of_its_colours(addon, tmp_path):
    from test_level_cli import _cube

    _cube("Crate", (0, 0, 0.5))
    _cube("Barrel", (0.8, 0, 0.5))
    _cube("Keg", (1.83, 0, 0.5))
    level = str(tmp_path / "level.blend")
    bpy.ops.wm.save_as_mainfile(filepath=level)
    path = tmp_path / "findings.png"
    result = cli.run([level, "--clearance", "0.05", "--picture", str(path),
                      "--picture-size", "480x300", "--quiet"])
    assert result.code == cli.EXIT_FINDINGS
    pixels = picture.load_png(str(path))
    overlap, too_close = legend_swatch_centres(300, 2)
    assert_colour_at(pixels, overlap, "overlap")
    assert_colour_at(pixels, too_close, "too_close")


def projected_box(camera, lower, upper, width, height):
    """Normalised device coordinates (8, 2) of the box's corners in ``camera``'s picture."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    matrix = np.array(camera.calc_matrix_camera(depsgraph, x=width, y=height)) @ \
        np.array(camera.matrix_world.inverted())
    corners = np.array([[x, y, z, 1.0] for x in (lower[0], upper[0])
                        for y in (lower[1], upper[1]) for z in (lower[2], upper[2])])
    clip = corners @ matrix.T
    return clip[:, :2] / clip[:, 3:4]


@pytest.mark.parametrize("lower, upper, width, height", [
    ((0, 0, 0), (45, 40, 2), 1600, 1000),       # the demo floor, wider than deep
    ((-3, -1, 0), (3, 30, 4), 1600, 1000),       # a long corridor going away
    ((0, 0, 0), (10, 10, 10), 600, 900),         # a tower, in a portrait picture
])
def test_the_framing_camera_leaves_no_empty_band(addon, lower, upper, width, height):
    # Regression: the camera aimed at the box's centre; the far half, smaller in perspective,
    # left an empty band at the top of the picture.
    camera = cli.framing_camera(bpy.context.scene, lower, upper, width / height)
    bpy.context.view_layer.update()
    ndc = projected_box(camera, lower, upper, width, height)
    assert np.all(np.abs(ndc) <= 1.0)
    (x0, y0), (x1, y1) = ndc.min(axis=0), ndc.max(axis=0)
    fill = 1.0 - cli.FRAME_MARGIN
    # Centred both ways, and touching the margin on the tighter side.
    assert (x0 + x1) / 2 == pytest.approx(0.0, abs=1e-6)
    assert (y0 + y1) / 2 == pytest.approx(0.0, abs=1e-6)
    assert max((x1 - x0) / 2, (y1 - y0) / 2) == pytest.approx(fill, abs=1e-6)


def test_the_framing_camera_keeps_the_band_asked_for_free(addon):
    lower, upper = (0, 0, 0), (45, 40, 2)
    camera = cli.framing_camera(bpy.context.scene, lower, upper, 1.6, top_reserve=0.1)
    bpy.context.view_layer.update()
    ndc = projected_box(camera, lower, upper, 1600, 1000)
    # The top tenth of the picture (0.2 of the NDC range 2) stays free for the legend.
    assert ndc[:, 1].max() == pytest.approx(1.0 - cli.FRAME_MARGIN - 0.2, abs=1e-6)
    assert ndc[:, 1].min() == pytest.approx(-1.0 + cli.FRAME_MARGIN, abs=1e-6)


def test_framed_pictures_centre_what_they_show(addon):
    points = np.array([[0, 0, 0], [8, 5, 0], [8, 0, 0], [0, 5, 0], [4, 2.5, 3]], dtype=float)
    view, proj = picture.framing_matrices(points, 640, 360)
    clip = np.c_[points, np.ones(len(points))] @ np.array(proj @ view).T
    ndc = clip[:, :2] / clip[:, 3:4]
    (x0, y0), (x1, y1) = ndc.min(axis=0), ndc.max(axis=0)
    assert (x0 + x1) / 2 == pytest.approx(0.0, abs=1e-6)
    assert (y0 + y1) / 2 == pytest.approx(0.0, abs=1e-6)
    assert max(x1 - x0, y1 - y0) / 2 == pytest.approx(picture.FRAME_FILL, abs=1e-3)


def test_labels_running_over_the_border_are_moved_inside(addon):
    drawing = overlay.Drawing().label((0, 0, 0), "a label near the right border", "overlap")
    (x, y, _, _), = overlay.place_labels([drawing], lambda p: (630.0, 350.0), frame=(640, 360))
    import blf
    blf.size(0, preferences.DEFAULT_LABEL_SIZE)
    w, h = blf.dimensions(0, "a label near the right border")
    assert x + w <= 640 and y + h <= 360


def render_picture_script(*argv, cwd):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, "render_picture.py"), *argv],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def test_showcase_without_out_writes_showcase_png_in_the_current_folder(tmp_path):
    # Regression: --out was required, though the README's caption implied --showcase alone.
    done = render_picture_script("--showcase", "--size", "96x54", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert png_size(tmp_path / "showcase.png") == (96, 54)
    assert done.stdout == "Wrote showcase.png\n" and "EGL" not in done.stderr


@pytest.mark.parametrize("out, magic", [("s.jpg", b"\xff\xd8\xff"), ("s.webp", b"RIFF")])
def test_render_picture_writes_the_format_of_the_suffix(tmp_path, out, magic):
    done = render_picture_script("--showcase", "--size", "64x36", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / out).read_bytes().startswith(magic)


@pytest.mark.parametrize("out, message", [("s.gif", "cannot write '.gif' pictures"),
                                          (".", "it is a folder")])
def test_render_picture_refuses_what_it_cannot_write(tmp_path, out, message):
    done = render_picture_script("--showcase", "--out", out, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr
    assert list(tmp_path.iterdir()) == []
