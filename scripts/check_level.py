#!/usr/bin/env python
"""Check a level for overlaps and clearance violations, from the command line.

    python scripts/check_level.py LEVEL.blend [--clearance M] [--collection NAME]
        [--ignore NAME ...] [--ignore-pair PATTERN_A PATTERN_B ...] [--object-clearance P=M ...]
        [--touch-tolerance M] [--json PATH] [--csv PATH] [--picture PATH]

Runs on the ``bpy`` module (Blender as a Python module, no Blender install needed); inside
Blender the same check is ``blender -b LEVEL.blend -c convex_tools check [options]``.
Exit code 0: clean, 1: findings, 2: missing or unreadable file, bad arguments or an output
path it cannot write, 130: interrupted (Ctrl-C; the reports then hold the findings so far,
marked incomplete). ``--help`` lists every option.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    try:
        import bpy  # noqa: F401  (Blender as a Python module)
    except ImportError:
        print("check_level: error: the bpy module is missing; run this script as "
              "`scripts/run.sh python scripts/check_level.py ...` (it installs the pinned bpy)",
              file=sys.stderr)
        return 2
    import convex_tools
    from convex_tools import cli

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
