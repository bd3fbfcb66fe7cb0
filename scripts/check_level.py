#!/usr/bin/env python
"""Check levels for overlaps, sunk and floating objects and clearance violations, from the
command line; gate a build on the result.

    python scripts/check_level.py LEVEL.blend [MORE.blend|.glb|.gltf|.fbx|.obj ...]
        [--clearance M] [--rules FILE] [--floating TOL] [--include-hidden] [--include-cutters]
        [--engine unreal|godot|both] [--collection NAME] [--ignore NAME ...]
        [--ignore-pair PATTERN_A PATTERN_B ...] [--object-clearance P=M ...]
        [--touch-tolerance M] [--fail-on error|warning] [--baseline FILE]
        [--write-baseline FILE] [--prune-baseline] [--strict] [--shard K/N]
        [--json PATH] [--csv PATH] [--junit PATH] [--sarif PATH] [--picture PATH]
    python scripts/check_level.py merge SHARD1.json SHARD2.json ... [--baseline FILE]
        [--fail-on ...] [--strict] [--json PATH] [--junit PATH] [--sarif PATH] [--csv PATH]

Every file is checked in turn in one process on the ``bpy`` module (Blender as a Python module,
no Blender install needed); inside Blender the same check is
``blender -b LEVEL.blend -c convex_tools check [options]``. ``merge`` needs no Blender at all.
Exit code 0: clean, 1: a finding fails the gate, 2: a file could not be checked, bad arguments,
rules or baseline, an output path it cannot write (or --strict and a pattern matched nothing),
130: interrupted (Ctrl-C; the reports then hold the findings so far, marked incomplete).
``--help`` lists every option; docs/ci.md shows it in CI pipelines.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from convex_tools import cli

    if argv[:1] == ["merge"]:          # gating saved reports: no Blender needed
        return cli.main(argv, prog="check_level.py")
    try:
        import bpy  # noqa: F401  (Blender as a Python module)
    except ImportError:
        print("check_level: error: the bpy module is missing; run this script as "
              "`scripts/run.sh python scripts/check_level.py ...` (it installs the pinned bpy)",
              file=sys.stderr)
        return 2
    import convex_tools

    convex_tools.register()
    try:
        return cli.main(argv, prog="check_level.py")
    finally:
        convex_tools.unregister()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # before the check started (importing bpy, registering)
        print("check_level.py: interrupted (Ctrl-C)", file=sys.stderr)
        sys.exit(130)
