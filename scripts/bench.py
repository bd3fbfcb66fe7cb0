#!/usr/bin/env python
"""Benchmarks: medians per query and support calls per query (numbers, not pass/fail tests).

    python scripts/bench.py [SECTION ...] [--quick] [--configs N]

Sections live in scripts/benchmarks/<name>.py, each with ``run(args)``. Without a section name
all of them run. ``--quick`` shrinks every section to a smoke run (seconds); fixed seeds
everywhere, so two runs print the same support-call counts.
"""

import argparse
import importlib
import os
import pkgutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)


def sections():
    return sorted(m.name for m in pkgutil.iter_modules([os.path.join(HERE, "benchmarks")])
                  if not m.name.startswith("_"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", help=f"any of: {', '.join(sections())}")
    parser.add_argument("--quick", action="store_true", help="smoke-run sizes (seconds)")
    parser.add_argument("--configs", type=int, default=None,
                        help="random configurations per pair (default per section)")
    parser.add_argument("--baseline", metavar="CHECKOUT", default=None,
                        help="another checkout of this repository (an earlier version) to "
                             "measure beside this one, where a section supports it (ab, "
                             "level, peers)")
    parser.add_argument("--peer-python", metavar="PATH", default=None,
                        help="Python of the peer environment with coal (section peers; "
                             "default: $CONVEX_PEER_PYTHON, else /work/peers/venv/bin/python "
                             "if it exists)")
    args = parser.parse_args(argv)
    chosen = args.sections or sections()
    unknown = set(chosen) - set(sections())
    if unknown:
        parser.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    for name in chosen:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"\n== {name} ==", flush=True)
        start = time.perf_counter()
        module.run(args)
        print(f"({name}: {time.perf_counter() - start:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
