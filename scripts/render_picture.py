#!/usr/bin/env python
"""Render a picture of a scene with Convex Tools overlays, headless (bpy module).

    scripts/run.sh python scripts/render_picture.py LEVEL.blend   # its watched pairs → LEVEL.png
    scripts/run.sh python scripts/render_picture.py --showcase    # → showcase.png

With a .blend, the pairs in the scene's watch list are evaluated and drawn (set them up in
the Sidebar's Convex tab, or with ``object.convex_watch_add``). ``--showcase`` builds a small
scene that shows every kind of overlay: a distance, a penetration vector, a contact manifold,
a ray hit and a sweep's ghost at its time of impact (the picture at the top of the README;
``scripts/make_pictures.py`` renders it into docs/). ``--out`` names the picture (default:
showcase.png, or the .blend's name with .png, in the current folder); its suffix chooses the
format (.png, .jpg, .webp, .tif, .bmp). Exit code 0 when the picture was written, 2 for a
missing file or bad arguments.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def showcase():
    import bpy
    import numpy as np

    from convex_tools import core, objects, overlay, result_drawings

    def add(kind, name, **kw):
        getattr(bpy.ops.mesh, f"primitive_{kind}_add")(**kw)
        obj = bpy.context.active_object
        obj.name = name
        return obj

    bpy.ops.wm.read_factory_settings(use_empty=True)
    crate = add("cube", "Crate", size=2.0, location=(-4.0, 0.0, 0.6))   # 0.4 into the floor
    ball = add("uv_sphere", "Ball", radius=1.0, location=(-0.6, 1.2, 1.6))
    floor = add("cube", "Floor", size=2.0, location=(0.0, 0.0, -0.5))
    floor.scale = (8.0, 5.0, 0.5)
    block = add("cube", "Block", size=2.0, location=(2.5, -1.5, 0.9), rotation=(0, 0, 0.4))
    pillar = add("cylinder", "Pillar", radius=0.6, depth=3.0, location=(5.5, 2.0, 1.5))
    bpy.context.view_layer.update()
    shape = objects.shape_from_object
    drawings = {
        "distance": result_drawings.distance_drawing(core.distance(shape(crate), shape(ball))),
        "penetration": result_drawings.penetration_drawing(
            core.penetration(shape(crate), shape(floor))),
        "contact": result_drawings.manifold_drawing(
            core.contact_manifold(shape(block), shape(floor)), 0.8),
    }
    origin, direction = np.array([5.5, -4.0, 2.0]), np.array([0.0, 1.0, -0.1])
    drawings["ray"] = result_drawings.ray_drawing(
        origin, direction, core.ray_cast(shape(pillar), origin, direction), 4.0)
    translation = np.array([4.0, 1.5, 0.0])
    hit = core.sweep(shape(ball), shape(pillar), translation)
    drawings["sweep"] = result_drawings.sweep_drawing(
        shape(ball), np.array(ball.location), translation, hit)
    for key, drawing in drawings.items():
        overlay.show(key, drawing)


def watched(path):
    import bpy

    from convex_tools import watch

    bpy.ops.wm.open_mainfile(filepath=path)
    scene = bpy.context.scene
    scene.convex_tools.watch_enabled = True
    watch.refresh(scene)


def default_out(args):
    """The picture's path when ``--out`` is not given: in the current folder."""
    if args.showcase:
        return "showcase.png"
    return os.path.splitext(os.path.basename(args.blend))[0] + ".png"


def _size(text):
    width, sep, height = text.lower().partition("x")
    try:
        size = (int(width), int(height))
    except ValueError:
        size = None
    if not sep or size is None or min(size) < 16 or max(size) > 8192:
        raise argparse.ArgumentTypeError(f"expected a size like 1280x720, got {text!r}")
    return size


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("blend", nargs="?", help="a .blend whose watched pairs are drawn")
    parser.add_argument("--showcase", action="store_true", help="render the built-in showcase")
    parser.add_argument("--out", help="picture to write (default: showcase.png, or the "
                                      ".blend's name with .png); the suffix chooses the format")
    parser.add_argument("--size", type=_size, default=(1280, 720),
                        help="WxH in pixels (default 1280x720)")
    args = parser.parse_args(argv)
    if bool(args.blend) == args.showcase:
        parser.error("give either a .blend file or --showcase")
    if args.blend and not os.path.isfile(args.blend):
        print(f"render_picture.py: error: no such file: {args.blend}", file=sys.stderr)
        return 2
    out = args.out or default_out(args)
    width, height = args.size

    import bpy

    import convex_tools
    from convex_tools import files, picture

    try:
        files.check_writable(out)
        picture.picture_format(out)
    except OSError as problem:
        print(f"render_picture.py: error: --out {out}: {problem.strerror or problem}",
              file=sys.stderr)
        return 2
    except ValueError as problem:
        print(f"render_picture.py: error: --out {out}: {problem}", file=sys.stderr)
        return 2
    bpy.ops.wm.read_factory_settings(use_empty=True)
    convex_tools.register()
    try:
        showcase() if args.showcase else watched(args.blend)
        picture.render_picture(out, width=width, height=height)
    finally:
        convex_tools.unregister()
    print(f"Wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
