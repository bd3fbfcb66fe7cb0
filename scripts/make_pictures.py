#!/usr/bin/env python
"""Regenerate every picture of the README from the current code, in one run:

    scripts/run.sh python scripts/make_pictures.py [--out docs] [--scale 1.0]

- ``overlay.png``: the showcase scene of ``render_picture.py --showcase`` (a distance, a
  penetration vector, a contact manifold, a ray hit and a sweep's ghost);
- ``findings.png``: the demo level of ``scripts/demo.sh`` checked as the demo checks it, with
  its findings drawn, labelled and explained by a legend;
- ``map.png``: the same check's traversal map, seen from above.

The run fails (exit 1) unless the check finds exactly the problems the demo planted (and the
traversal course's), so the pictures always show a correct check.

``--scale`` multiplies every picture's size (the tests render them small). Exit code 0 when
every picture was written, 1 when the demo check went wrong, 2 for bad arguments.
"""

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

# Each picture of the README and its size in pixels at --scale 1.
PICTURES = {"overlay.png": (1280, 720), "findings.png": (1600, 1000), "map.png": (1200, 1000)}


def _scaled(size, scale):
    return tuple(max(16, int(round(scale * v))) for v in size)


def showcase_picture(path, size) -> int:
    import render_picture

    import convex_tools
    from convex_tools import picture

    convex_tools.register()
    try:
        render_picture.showcase()
        picture.render_picture(path, width=size[0], height=size[1])
    finally:
        convex_tools.unregister()
    return 0


def demo_pictures(findings_path, findings_size, map_path, map_size) -> int:
    """Build the demo level, check it as the demo does (traversal too), draw the findings to
    ``findings_path`` and the traversal map to ``map_path``."""
    import bpy
    import demo_level

    import convex_tools
    from convex_tools import cli
    from convex_tools.console import SAVED_AS, filtered_output

    expected = demo_level.build_demo_level()
    with tempfile.TemporaryDirectory() as folder:
        blend = os.path.join(folder, "demo_level.blend")
        with filtered_output(SAVED_AS):
            bpy.ops.wm.save_as_mainfile(filepath=blend)
        convex_tools.register()
        try:
            # The level carries its rules (demo_level.RULES) as a Text datablock. (Both
            # pictures have one size on the command line: the map is drawn by a second run's
            # --map at its own size.)
            result = cli.run([blend, "--traversal", "--picture", findings_path,
                              "--picture-size", "{}x{}".format(*findings_size), "--quiet"])
            mapped = cli.run([blend, "--traversal", "--map", map_path, "--picture-size",
                              "{}x{}".format(*map_size), "--quiet"])
        finally:
            convex_tools.unregister()
    found = sorted((f.kind, f.object_a, f.object_b) for f in result.findings
                   if f.kind not in demo_level.TRAVERSAL_KINDS)
    travel = sorted((f.kind, f.object_a) for f in result.findings
                    if f.kind in demo_level.TRAVERSAL_KINDS)
    if result.code != cli.EXIT_FINDINGS or found != sorted(expected) or \
            travel != demo_level.TRAVERSAL_PLANTED or mapped.code != cli.EXIT_FINDINGS:
        print(f"make_pictures.py: the demo check did not find exactly the {len(expected)} "
              f"planted problems and the traversal course's (exit code {result.code}, "
              f"{len(found)} + {len(travel)} findings); {findings_path} and {map_path} show a "
              f"wrong check", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "docs"),
                        help="folder of the pictures (default: docs/)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="factor on every picture's size (default 1)")
    args = parser.parse_args(argv)
    if not 0.01 <= args.scale <= 4.0:
        parser.error(f"--scale must be between 0.01 and 4, got {args.scale}")
    os.makedirs(args.out, exist_ok=True)
    sizes = {name: _scaled(size, args.scale) for name, size in PICTURES.items()}
    path = {name: os.path.join(args.out, name) for name in PICTURES}
    code = showcase_picture(path["overlay.png"], sizes["overlay.png"]) or demo_pictures(
        path["findings.png"], sizes["findings.png"], path["map.png"], sizes["map.png"])
    if code != 0:
        return code
    for name in PICTURES:
        print(f"Wrote {path[name]} ({'x'.join(map(str, sizes[name]))})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
