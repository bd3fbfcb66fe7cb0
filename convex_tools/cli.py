"""Command line level check, shared by ``scripts/check_level.py`` and Blender's ``-c`` command:

    python scripts/check_level.py LEVEL.blend [MORE.blend|.glb|.gltf|.fbx|.obj ...] [options]
    python scripts/check_level.py merge SHARD1.json SHARD2.json ... [gate and report options]
    blender -b LEVEL.blend -c convex_tools check [options]

(the last registered by ``attach`` when the add-on is enabled). Every file is checked in turn in
this one Blender process, with the same options (a .blend is opened with its scripts off; other
formats are imported into an empty scene by Blender's own importers). It prints a table of each
file's findings (``--quiet``: one line a file), writes JSON / CSV / JUnit / SARIF reports and a
picture when asked, and exits with

    0  every file checked and no finding fails the gate,
    1  a finding fails the gate (``--fail-on``, ``--baseline``: ``core.gate``),
    2  a file could not be checked, or the arguments, the rules or an output path are wrong
       (with a message saying what is wrong), or ``--strict`` found a pattern matching nothing
       or an object it could not check,
    130 when interrupted (Ctrl-C).

``--shard K/N`` checks the K-th of N slices of the sorted file list and writes its findings
ungated (exit 0 once its report is written); ``merge`` gates the shards' reports together and
writes what one run over every file would have written, byte for byte but for
``generated_at``, with the same exit code.

Reports always describe the latest run: once the arguments are understood, every report asked
for is replaced by one marked incomplete ("the check has not finished"), then by the final one;
an interrupted run writes the findings it had, marked incomplete, and an error writes its
reason. Writes are safe (``files``): atomic for files, through symbolic links, direct to FIFOs,
devices and ``-``.
"""

from __future__ import annotations

import argparse
import fnmatch
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130   # 128 + SIGINT: what shells report for a command stopped by Ctrl-C

# Progress lines on stderr at most this often (seconds), and only for checks that take longer.
PROGRESS_INTERVAL = 1.0

DEFAULT_PICTURE_SIZE = (1600, 1000)

# Files the command reads, by suffix: a .blend is opened, the others imported (bpy operator).
IMPORTERS = {".glb": "gltf", ".gltf": "gltf", ".fbx": "fbx", ".obj": "obj"}
READABLE = (".blend",) + tuple(IMPORTERS)

REPORT_OPTIONS = ("--json", "--csv", "--junit", "--sarif")


class UsageError(Exception):
    """Bad arguments or an unusable file: exit code 2 with this message."""


@dataclass
class RunResult:
    code: int
    findings: list = field(default_factory=list)
    stats: object = None
    message: str = ""
    report: dict = None


def _add_report_options(parser):
    parser.add_argument("--json", metavar="PATH",
                        help="write the report as JSON (docs/report.schema.json); '-' for "
                             "standard output")
    parser.add_argument("--csv", metavar="PATH", help="write the findings as CSV")
    parser.add_argument("--junit", metavar="PATH",
                        help="write JUnit XML: a test suite per file, a failing test case per "
                             "finding that fails the gate")
    parser.add_argument("--sarif", metavar="PATH",
                        help="write SARIF 2.1.0 (GitHub / GitLab code scanning)")


def _add_gate_options(parser):
    parser.add_argument("--fail-on", choices=("error", "warning"), default="error",
                        help="severities that make the exit code 1 (default: error; warning: "
                             "errors and warnings)")
    parser.add_argument("--baseline", metavar="FILE",
                        help="accepted findings (written by --write-baseline): only findings "
                             "not in it, worse than it or whose entry expired fail")
    parser.add_argument("--write-baseline", metavar="FILE",
                        help="write the findings of the files checked as accepted (entries of "
                             "other files in FILE, and each entry's reason and expiry, stay)")
    parser.add_argument("--prune-baseline", action="store_true",
                        help="rewrite --baseline without the entries of the files checked that "
                             "no longer occur (never after an interrupted run)")
    parser.add_argument("--strict", action="store_true",
                        help="a pattern that matches nothing in any file and an object that "
                             "could not be checked are errors (exit 2), not warnings")


def build_parser(prog="check_level") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Check Blender levels for objects that overlap, are sunk, float or are "
                    "closer than a clearance. Exit code 0: clean, 1: findings that fail the "
                    "gate, 2: a bad file, bad arguments or rules. "
                    f"'{prog} merge --help': merging the reports of --shard runs.")
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="the files to check: .blend, .glb, .gltf, .fbx or .obj (default: "
                             "the .blend file Blender has open)")
    parser.add_argument("--clearance", type=_length, default=None, metavar="M",
                        help="free space every object needs around it, in metres, unless it "
                             "has its own (--object-clearance, its custom property "
                             "convex_clearance or its Own Clearance setting); with 0 (the "
                             "default) only objects with their own clearance are checked for "
                             "gaps, the others for overlaps only")
    parser.add_argument("--rules", metavar="FILE",
                        help="level rules (TOML: groups, pairs, severities; default: the rules "
                             "the scene names, else the implicit rules of the flags)")
    parser.add_argument("--floating", type=_length, default=None, metavar="TOL",
                        help="report every movable object resting on nothing (farther than TOL "
                             "above what is below)")
    parser.add_argument("--include-hidden", action="store_true",
                        help="also check objects disabled in viewports or in disabled "
                             "collections")
    parser.add_argument("--include-cutters", action="store_true",
                        help="also check objects used as Boolean cutters")
    parser.add_argument("--engine", choices=("unreal", "godot", "both"), default=None,
                        help="whose collision naming rules (UCX_, -col...) pair proxies with "
                             "their objects (default: the rules' or the scene's setting)")
    parser.add_argument("--collection", metavar="NAME",
                        help="check only the objects of this collection (and its children)")
    parser.add_argument("--scene", metavar="NAME", help="scene to check (default: the active one)")
    parser.add_argument("--ignore", action="append", default=[], metavar="NAME",
                        help="leave out an object, a collection, or objects matching a name "
                             "pattern such as 'Floor*' (repeatable)")
    parser.add_argument("--ignore-pair", action="append", default=[], nargs=2,
                        metavar=("PATTERN_A", "PATTERN_B"),
                        help="do not check objects matching PATTERN_A against objects matching "
                             "PATTERN_B, e.g. --ignore-pair 'Lamp*' 'Pillar*' (repeatable)")
    parser.add_argument("--object-clearance", action="append", default=[], type=_override,
                        metavar="PATTERN=M",
                        help="clearance of the objects matching PATTERN, e.g. 'Door*=0.6' "
                             "(repeatable; overrides the custom property convex_clearance)")
    parser.add_argument("--touch-tolerance", type=_length, default=None, metavar="M",
                        help="overlaps no deeper than this are touching, not findings "
                             "(default 0.0001)")
    traversal = parser.add_argument_group(
        "traversal", "where a player capsule can stand and go (Recast's agent; the rules' "
                     "[traversal] table gives the defaults)")
    traversal.add_argument("--traversal", action="store_true",
                           help="also check traversal: standable areas the player cannot "
                                "reach from its starts, and the narrow passages, low beams and "
                                "high steps that cut them off")
    traversal.add_argument("--agent-radius", type=_positive, default=None, metavar="M",
                           help="agent radius (default 0.35)")
    traversal.add_argument("--agent-height", type=_positive, default=None, metavar="M",
                           help="agent height (default 1.8)")
    traversal.add_argument("--max-step", type=_length, default=None, metavar="M",
                           help="highest step the agent climbs (default 0.45)")
    traversal.add_argument("--max-slope", type=_degrees, default=None, metavar="DEG",
                           help="steepest walkable slope (default 45)")
    traversal.add_argument("--cell", type=_positive, default=None, metavar="M",
                           help="grid cell size (default: agent radius / 3)")
    traversal.add_argument("--start", action="append", default=None, metavar="NAME|X,Y,Z",
                           help="a start: an object (its origin; patterns allowed) or a point "
                                "(repeatable; default: objects named PlayerStart*)")
    traversal.add_argument("--min-area", type=_length, default=None, metavar="M2",
                           help="smallest unreachable region reported (default 1.0)")
    traversal.add_argument("--map", metavar="PATH",
                           help="picture of the traversal map seen from above (one file only; "
                                "suffix as --picture)")
    _add_gate_options(parser)
    _add_report_options(parser)
    parser.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                        help="check only the K-th (from 1) of N slices of the sorted file list "
                             "and write its findings ungated to --json, for "
                             f"'{prog} merge'")
    parser.add_argument("--picture", metavar="PATH",
                        help="render a picture of the level with the findings drawn and "
                             "labelled (one file only); the suffix chooses the format: .png, "
                             ".jpg, .webp, .tif or .bmp")
    parser.add_argument("--picture-size", type=_size, default=DEFAULT_PICTURE_SIZE,
                        metavar="WxH", help="picture size in pixels (default 1600x1000)")
    parser.add_argument("--camera", metavar="NAME",
                        help="camera for the picture (default: the scene camera, else one "
                             "framing the level)")
    parser.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                        help="processes measuring pairs (default: one per core); the report "
                             "is the same for any N")
    parser.add_argument("--max-rows", type=int, default=60, metavar="N",
                        help="rows of each printed table (default 60; the reports hold all)")
    parser.add_argument("--quiet", action="store_true",
                        help="print only one summary line a file (warnings and errors still go "
                             "to stderr)")
    return parser


def build_merge_parser(prog="check_level merge") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Gate the JSON reports of --shard runs together and write what one run "
                    "over all their files would have written (same findings, same exit code).")
    parser.add_argument("reports", nargs="+", metavar="SHARD.json",
                        help="the --json reports of every shard")
    _add_gate_options(parser)
    _add_report_options(parser)
    parser.add_argument("--max-rows", type=int, default=60, metavar="N",
                        help="rows of each printed table (default 60)")
    parser.add_argument("--quiet", action="store_true",
                        help="print only one summary line a file")
    return parser


def _length(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a length in metres, got {text!r}") from None
    if not math.isfinite(value) or value < 0.0:
        raise argparse.ArgumentTypeError(f"expected a length >= 0, got {text!r}")
    return value


def _positive(text):
    value = _length(text)
    if value <= 0.0:
        raise argparse.ArgumentTypeError(f"expected a length > 0, got {text!r}")
    return value


def _degrees(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an angle in degrees, got {text!r}") \
            from None
    if not 0.0 <= value < 90.0:
        raise argparse.ArgumentTypeError(f"expected an angle from 0 to under 90, got {text!r}")
    return value


def _jobs(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes >= 1, got {text!r}")
    return value


def _shard(text):
    k, sep, n = text.partition("/")
    try:
        k, n = int(k), int(n)
    except ValueError:
        sep = ""
    if not sep or not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N, e.g. 2/4, got "
                                         f"{text!r}")
    return k, n


def _override(text):
    pattern, sep, value = text.rpartition("=")
    if not sep or not pattern:
        raise argparse.ArgumentTypeError(f"expected PATTERN=METRES, got {text!r}")
    return pattern, _length(value)


def _size(text):
    w, sep, h = text.lower().partition("x")
    try:
        size = (int(w), int(h))
    except ValueError:
        size = None
    if not sep or size is None or min(size) < 16 or max(size) > 8192:
        raise argparse.ArgumentTypeError(f"expected a size like 1600x1000, got {text!r}")
    return size


def parse(argv, prog="check_level", merge=False):
    """Parsed arguments, or UsageError (argparse's own exit turned into an exception)."""
    parser = build_merge_parser(f"{prog} merge") if merge else build_parser(prog)

    def error(message):
        raise UsageError(f"error: {message}\n{parser.format_usage().strip()}")

    parser.error = error
    try:
        # Intermixed: files may follow options (check_level.py a.blend --json r.json b.blend).
        return parser.parse_intermixed_args(argv)
    except SystemExit as done:  # --help
        raise _HelpShown(done.code or 0) from None


class _HelpShown(Exception):
    def __init__(self, code):
        super().__init__("help")
        self.code = code


# --- the run --------------------------------------------------------------------------------
def run(argv=None, *, prog="check_level", load=True, out=None, err=None) -> RunResult:
    """Parse ``argv``, check each file (opening it when ``load``), gate, report. Never raises
    on user errors: they come back as ``RunResult(code=2, message=...)`` after printing to
    ``err``. ``argv`` starting with ``merge`` merges shard reports instead."""
    out = out or sys.stdout
    err = err or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["merge"]:
            return _merge(parse(argv[1:], prog, merge=True), out, err)
        args = parse(argv, prog)
        return _run(args, load, out, err)
    except _HelpShown as shown:
        return RunResult(shown.code)
    except UsageError as problem:
        message = f"{prog}: {problem}"
        print(message, file=err, flush=True)
        return RunResult(EXIT_ERROR, message=message)
    except KeyboardInterrupt:  # a second Ctrl-C, while the reports or the picture were written
        message = f"{prog}: interrupted (Ctrl-C)"
        print(message, file=err, flush=True)
        return RunResult(EXIT_INTERRUPTED, message=message)


def main(argv=None, prog="check_level") -> int:
    keep_freed_memory()
    return run(argv, prog=prog).code


# glibc's ``mallopt`` parameters (malloc.h), and what the command line sets them to: freed
# memory is kept (up to TRIM_THRESHOLD), the heap grows TOP_PAD at a time, and arrays up to
# MMAP_THRESHOLD come from the heap rather than from a mapping of their own each time.
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
TRIM_THRESHOLD = 1 << 30
TOP_PAD = 256 << 20
MMAP_THRESHOLD = 32 << 20


def keep_freed_memory() -> bool:
    """Let this process keep the memory it frees for its next allocations (glibc only; False
    elsewhere, or if glibc refuses). A level check allocates and frees arrays of tens of
    megabytes stage after stage; by default glibc hands much of that back to the system, and
    each new array faults its pages in again (100k bench level: tens of thousands of page
    faults; the broad phase took 0.16 s instead of 0.07, the check about 0.1 s longer). The
    command line owns its process; inside Blender's interface this is never called."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        import ctypes.util

        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    settings = ((M_TRIM_THRESHOLD, TRIM_THRESHOLD), (M_TOP_PAD, TOP_PAD),
                (M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    return all([mallopt(parameter, value) == 1 for parameter, value in settings])


def blender_command(argv) -> int:
    """Handler of ``blender -b LEVEL.blend -c convex_tools check [options]`` (and ``merge``)."""
    argv = list(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print("usage: blender -b LEVEL.blend -c convex_tools check [options]\n"
              "       blender -c convex_tools merge SHARD.json ... [options]\n"
              "       (blender -c convex_tools check --help lists the options)")
        return EXIT_CLEAN if argv else EXIT_ERROR
    if argv[0] == "merge":
        return main(argv, prog="convex_tools")
    if argv[0] != "check":
        print(f"convex_tools: unknown command {argv[0]!r} (the commands are 'check' and "
              f"'merge')", file=sys.stderr)
        return EXIT_ERROR
    return main(argv[1:], prog="convex_tools check")


def _options(args, tolerance) -> dict:
    """What the check was asked to do (the report's ``options``: the same in every shard)."""
    return {
        "clearance": args.clearance,
        "touch_tolerance": tolerance,
        "collection": args.collection,
        "scene": args.scene,
        "ignore": list(args.ignore),
        "ignore_pairs": [list(p) for p in args.ignore_pair],
        "object_clearance": {p: c for p, c in args.object_clearance},
        "floating": args.floating,
        "include_hidden": bool(args.include_hidden),
        "include_cutters": bool(args.include_cutters),
        "engine": args.engine,
        "traversal": None if not args.traversal else {
            "agent_radius": args.agent_radius, "agent_height": args.agent_height,
            "max_step": args.max_step, "max_slope": args.max_slope, "cell": args.cell,
            "start": args.start, "min_area": args.min_area},
    }


def _file_list(args):
    """The files to check, sorted (the order of the report, and what --shard slices), and the
    full sorted list."""
    everything = sorted(set(args.files))
    if args.shard is None:
        return everything, everything
    k, n = args.shard
    return everything[(k - 1) * len(everything) // n:k * len(everything) // n], everything


def _check_arguments(args):
    if args.shard is not None:
        if not args.files:
            raise UsageError("error: --shard needs the list of files to slice")
        for option, value in (("--baseline", args.baseline), ("--junit", args.junit),
                              ("--sarif", args.sarif), ("--csv", args.csv),
                              ("--write-baseline", args.write_baseline),
                              ("--prune-baseline", args.prune_baseline),
                              ("--picture", args.picture)):
            if value:
                raise UsageError(f"error: {option} does not go with --shard: a shard writes "
                                 f"its findings ungated (--json); give {option} to merge")
        if not args.json:
            raise UsageError("error: --shard writes its findings with --json PATH")
    if args.picture and len(set(args.files)) > 1:
        raise UsageError("error: --picture draws one level; give one file")
    if args.map and len(set(args.files)) > 1:
        raise UsageError("error: --map draws one level; give one file")
    if args.map and not args.traversal:
        raise UsageError("error: --map draws the traversal map: give --traversal too")
    if args.shard is not None and args.map:
        raise UsageError("error: --map does not go with --shard")
    _check_gate_arguments(args)


def _check_gate_arguments(args):
    if args.prune_baseline and not args.baseline:
        raise UsageError("error: --prune-baseline rewrites the --baseline FILE; give it")
    if args.prune_baseline and args.write_baseline:
        raise UsageError("error: --write-baseline already leaves out what no longer occurs in "
                         "the files checked; give it or --prune-baseline, not both")
    if sum(getattr(args, o[2:]) == "-" for o in REPORT_OPTIONS) > 1:
        raise UsageError("error: only one report can go to standard output ('-')")


def _read_baseline(path):
    from .core import gate

    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as problem:
        raise UsageError(f"error: --baseline {path}: {problem.strerror or problem}") from None
    try:
        return gate.parse_baseline(text, path)
    except ValueError as problem:
        raise UsageError(f"error: {problem}") from None


def _rules_record(path):
    """The report's ``rules``: the file and its sha256 (None without --rules)."""
    from .core import report as core_report

    if path is None:
        return None
    try:
        return {"path": path, "sha256": core_report.file_sha256(path)}
    except OSError as problem:
        raise UsageError(f"error: --rules {path}: {problem.strerror or problem}") from None


def _run(args, load, out, err) -> RunResult:
    import bpy

    from .core import report as core_report

    started = time.perf_counter()
    _check_arguments(args)
    _check_outputs(args)
    # None: from the rules file (or the scene's rules), else the defaults.
    tolerance = args.touch_tolerance
    options = _options(args, tolerance)
    rules = _rules_record(args.rules)
    baseline = _read_baseline(args.baseline)
    todo, everything = _file_list(args)
    shard = None if args.shard is None else {"index": args.shard[0], "count": args.shard[1],
                                             "files": everything}
    meta = dict(options=options, rules=rules, blender_version=bpy.app.version_string,
                shard=shard)
    reports = _Reports(args)
    reports.write(core_report.new_report(
        [], complete=False, incomplete_reason="the check has not finished (it is still "
                                              "running, or it was stopped before writing)",
        **meta), final=False)
    if "-" in reports.paths:
        out = err        # standard output carries the report; the tables go to stderr

    sections, interrupted, last = [], "", None
    # No file given: the open one. (A shard may be given no file: more shards than files.)
    names = todo if args.files else [None]
    for number, path in enumerate(names, 1):
        if not args.quiet and len(names) > 1:
            print(f"[{number}/{len(names)}] {path}", file=err, flush=True)
        try:
            section, last = _check_file(args, path, load, tolerance, out, err,
                                        several=len(names) > 1)
        except UsageError as problem:
            if len(names) == 1 and path is None:
                reports.write(core_report.new_report(
                    [], complete=False,
                    incomplete_reason=f"the check could not run: {problem}", **meta))
                raise
            label = path if path is not None else _label(None)
            reason = str(problem).removeprefix("error: ")
            if label not in reason:
                reason = f"{label}: {reason}"
            print(f"error: {reason}", file=err, flush=True)
            section = core_report.file_section(label, status=core_report.FAILED,
                                               error=reason)
        except KeyboardInterrupt:      # while a file was opened, before its check started
            interrupted = f"interrupted (Ctrl-C) while opening {path}"
            break
        sections.append(section)
        if section["status"] == core_report.INCOMPLETE:
            interrupted = last.interrupted
            break

    report = core_report.new_report(sections, complete=not interrupted,
                                    incomplete_reason=interrupted, **meta)
    code = _gate_and_write(args, report, baseline, reports, out, err,
                           interrupted=bool(interrupted), picture_of=last)
    if not args.quiet:
        print(f"Time {time.perf_counter() - started:.2f} s"
              + (f" for {len(sections)} files" if len(sections) > 1 else
                 _phase_times(last)), file=out, flush=True)
    findings = last.findings if last is not None and len(names) == 1 else \
        [f for s in sections for f in s["findings"]]
    stats = last.stats if last is not None else None
    return RunResult(code, findings, stats, message=interrupted, report=report)


def _phase_times(done) -> str:
    if done is None or done.stats is None:
        return ""
    times = done.stats.times
    broad = times.get('aabbs', 0) + times.get('broad_phase', 0) + times.get('cull', 0)
    return (f": load {times.get('load', 0):.2f}, shapes {times.get('shapes', 0):.2f}, broad "
            f"phase {broad:.2f}, narrow phase {times.get('narrow_phase', 0):.2f}")


@dataclass
class _Checked:
    """What one file's check left for the printing, the picture and the result."""

    findings: list
    stats: object
    level_run: object
    scene: object
    label: str
    interrupted: str = ""
    traversal: object = None     # traversal_check.TraversalRun, with --traversal


def _check_file(args, path, load, tolerance, out, err, several=False):
    """Open and check one file: (its report section, ``_Checked``). ``UsageError`` when the
    file cannot be opened or checked with these options."""
    from . import level_check
    from .core import report as core_report

    t0 = time.perf_counter()
    # A report on stdout must be all of stdout: Blender's "Read blend" line goes too.
    to_stdout = any(getattr(args, o[2:], None) == "-" for o in REPORT_OPTIONS)
    label = _open(path, load, quiet=args.quiet or to_stdout)
    loaded = time.perf_counter()
    scene = _scene(args.scene, label)
    _check_names(args, label)
    if not args.quiet and not several:
        print(f"Checking {label} ...", file=err, flush=True)
    progress = _Progress(err, silent=args.quiet)
    try:
        level_run = level_check.LevelRun(
            None, args.clearance, collection=args.collection, ignore=args.ignore,
            ignore_pairs=[tuple(p) for p in args.ignore_pair],
            clearances=dict(args.object_clearance), touch_tolerance=tolerance, scene=scene,
            rules=args.rules, floating=args.floating, include_hidden=args.include_hidden,
            include_cutters=args.include_cutters, engine=args.engine)
    except ValueError as problem:   # the rules, a pattern, a value
        raise UsageError(f"error: {problem}") from None
    interrupted = ""
    try:
        findings = level_run.run(progress=progress.update, jobs=args.jobs)
    except KeyboardInterrupt:
        findings = level_run.findings
        interrupted = f"interrupted (Ctrl-C) while {level_run.phase}"
    except ValueError as problem:
        raise UsageError(f"error: {problem}") from None
    stats = level_run.stats
    stats.times["load"] = loaded - t0
    travel = None
    if args.traversal and not interrupted:
        travel, interrupted = _traversal(args, level_run, progress)
        if travel is not None:
            findings = sorted(findings + travel.findings, key=lambda f: f.sort_key())
            stats.times["traversal"] = travel.seconds

    unchecked = level_run.unchecked
    # Rule groups that match no object of this file: a warning only if they match nothing in
    # any file (``core.gate``), as the options' patterns.
    rules = level_run.rules
    groups = [] if level_run.check is None else [
        f"{rules.source}: group {name}" for name in rules.unmatched_groups(level_run.check.assign)]
    units = scene.unit_settings
    section = core_report.file_section(
        label, findings=findings,
        status=core_report.INCOMPLETE if interrupted else core_report.CHECKED,
        scene=scene.name,
        units={"system": units.system, "scale_length": float(units.scale_length),
               "length_unit": units.length_unit},
        objects_checked=stats.objects,
        objects_with_own_clearance=level_run.own_clearances,
        objects_skipped=_listed(level_run.skipped),
        objects_excluded=_listed(level_run.excluded),
        objects_unchecked=_listed(unchecked),
        unmatched=_unmatched(args, level_run, scene) + groups,
        warnings=[str(w) for w in level_run.warnings],
        rules=None if rules is None or not rules.source else
        {"path": rules.source, "sha256": rules.sha256},
        traversal=None if travel is None else travel.summary())
    return section, _Checked(findings, stats, level_run, scene, label, interrupted, travel)


def _traversal(args, level_run, progress):
    """(the traversal check of the level ``level_run`` collected, or None when interrupted;
    what interrupted it)."""
    from . import traversal_check

    t0 = time.perf_counter()
    try:
        travel = traversal_check.run_traversal(
            level_run=level_run, starts=args.start, min_area=args.min_area, jobs=args.jobs,
            radius=args.agent_radius, height=args.agent_height, max_step=args.max_step,
            max_slope=args.max_slope, cell=args.cell,
            progress=lambda done, total: progress.update(done / max(total, 1),
                                                         f"traversal ({done}/{total} tiles)"))
    except KeyboardInterrupt:
        return None, "interrupted (Ctrl-C) during the traversal check"
    except ValueError as problem:
        raise UsageError(f"error: {problem}") from None
    travel.seconds = time.perf_counter() - t0
    return travel, ""


def _listed(pairs):
    """(name, reason) pairs as the report's {"object", "reason"}."""
    return [{"object": name, "reason": reason} for name, reason in pairs]


def _unmatched(args, level_run, scene) -> list:
    """The patterns of the options that match nothing in this file, as the option reads."""
    objects = {o.name for o in scene.objects} | set(level_run.names) | \
        {n for n, _ in level_run.skipped} | {e.obj.name for e in level_run.kept}

    def matches(pattern, names):
        return pattern in names or any(fnmatch.fnmatchcase(n, pattern) for n in names)

    # The collector knows what each --ignore left out (instances included).
    out = [f"--ignore {p}" for p in level_run.unmatched_ignores]
    out += [f"--ignore-pair {a} {b}" for a, b in args.ignore_pair
            if not (matches(a, objects) and matches(b, objects))]
    out += [f"--object-clearance {p}" for p, _ in args.object_clearance
            if not matches(p, objects)]
    return out


def _check_names(args, label):
    import bpy

    if args.collection is not None and bpy.data.collections.get(args.collection) is None:
        raise UsageError(f"error: there is no collection named {args.collection!r} in {label}")
    if args.camera is not None:
        camera = bpy.data.objects.get(args.camera)
        if camera is None or camera.type != 'CAMERA':
            raise UsageError(f"error: there is no camera named {args.camera!r} in {label}")


def _gate_and_write(args, report, baseline, reports, out, err, interrupted=False,
                    picture_of=None) -> int:
    """Gate the report (unless it is a shard's), write every report and the baseline, print the
    tables and the verdict; the exit code."""
    from .core import gate

    shard = report.get("shard") is not None
    code = EXIT_CLEAN
    if not shard:
        code = gate.apply(report, baseline, fail_on=args.fail_on, strict=args.strict)
    notes = []
    if args.write_baseline:
        notes.append(_write_baseline(args, report, baseline, interrupted))
    if args.prune_baseline and not shard:
        notes.append(_prune_baseline(baseline, report, interrupted))
    reports.write(report)
    picture_note = ""
    if getattr(args, "picture", None) and picture_of is not None:
        if interrupted:
            picture_note = _no_picture(args.picture, "the check was interrupted")
        else:
            picture_note = _picture(args, picture_of.findings, picture_of.level_run,
                                    picture_of.scene)
        if picture_note:
            notes.append(picture_note)
    written = [args.picture] if getattr(args, "picture", None) and picture_of is not None \
        and not picture_note else []
    if getattr(args, "map", None) and picture_of is not None:
        map_note = _map_picture(args, picture_of, interrupted)
        if map_note:
            notes.append(map_note)
        else:
            written.append(args.map)
    _print(args, report, reports, out, err, notes, picture_written=written)
    if interrupted:
        return EXIT_INTERRUPTED
    return code


def _write_baseline(args, report, baseline, interrupted) -> str:
    from . import files
    from .core import gate

    if interrupted or not report["complete"]:
        return f"Not written: {args.write_baseline} (the check did not finish)"
    existing = baseline
    if os.path.exists(args.write_baseline) and (
            baseline is None or os.path.realpath(baseline.path) !=
            os.path.realpath(args.write_baseline)):
        try:
            existing = _read_baseline(args.write_baseline)
        except UsageError as problem:
            raise UsageError(f"{problem} (--write-baseline keeps the entries of files not "
                             f"checked, so it must be a baseline or not exist)") from None
    written = gate.baseline_from_report(report, existing)
    try:
        files.write_text_atomically(args.write_baseline, written.to_text())
    except OSError as problem:
        raise UsageError(f"error: cannot write {args.write_baseline}: "
                         f"{problem.strerror or problem}") from None
    return f"Wrote {len(written.entries)} accepted findings to {args.write_baseline}"


def _prune_baseline(baseline, report, interrupted) -> str:
    from . import files
    from .core import gate

    fixed = report["gate"]["fixed"]
    if interrupted or not report["complete"]:
        return f"Not pruned: {baseline.path} (the check did not finish)"
    if not fixed:
        return f"Nothing to prune in {baseline.path}"
    kept = gate.pruned(baseline, fixed)
    try:
        files.write_text_atomically(baseline.path, kept.to_text())
    except OSError as problem:
        raise UsageError(f"error: cannot write {baseline.path}: "
                         f"{problem.strerror or problem}") from None
    return f"Pruned {len(fixed)} fixed entr{'y' if len(fixed) == 1 else 'ies'} from " \
           f"{baseline.path}"


def _print(args, report, reports, out, err, notes, picture_written=()):
    """stdout: what the user asked for; stderr: warnings and errors, so that --quiet keeps
    them."""
    from .core import report as core_report

    gate = report.get("gate")
    stderr_lines = []
    for section in report["files"]:
        if section["status"] == core_report.FAILED:
            continue    # said on stderr when it happened
        units = section.get("units")
        complete = section["status"] == core_report.CHECKED
        reason = "" if complete else report.get("incomplete_reason", "")
        stderr_lines += [f"Skipped {s['object']}: {s['reason']}"
                         for s in section["objects_skipped"]]
        stderr_lines += [f"Not checked {s['object']}: {s['reason']}"
                         for s in section["objects_unchecked"]]
        stderr_lines += [f"Warning: {section['file']}: {w}" for w in section["warnings"]]
        if args.quiet:
            print(_result_line(section, reason), file=out)
            continue
        print(_summary_line(section, report["options"], complete), file=out)
        print(_count_text(section["findings"], reason), file=out)
        if section["findings"]:
            print(file=out)
            print(core_report.report_table(section["findings"], limit=args.max_rows,
                                           header=False, units=units), file=out, end="")
        if len(report["files"]) > 1:
            print(file=out)
    stderr_lines += [f"Warning: {w}" for w in report.get("warnings", [])]
    if not report["complete"]:
        found = sum(len(s["findings"]) for s in report["files"])
        stderr_lines.append(f"Interrupted: the {found} finding{'s' * (found != 1)} found so far "
                            f"are not the whole level"
                            + ("; the reports say so" if reports.paths else ""))
    if gate is not None:
        verdict = _verdict(report)
        if verdict:
            print(verdict, file=out)
        stderr_lines += [f"Error: {e}" for e in gate["errors"]
                         if e.startswith("--strict")]
    if not args.quiet:
        written = [p for p in reports.paths if p != "-"]
        written += list(picture_written or ())
        if written:
            incomplete = " (marked incomplete)" if not report["complete"] and reports.paths \
                else ""
            print(f"Wrote {', '.join(written)}{incomplete}", file=out)
    out.flush()
    for line in stderr_lines + notes:
        print(line, file=err, flush=True)


def _verdict(report) -> str:
    """The gate's line: what fails, what the baseline accepted, what it no longer needs."""
    gate = report["gate"]
    statuses = gate["statuses"]
    several = len(report["files"]) > 1
    parts = []
    if several:
        total = sum(len(s["findings"]) for s in report["files"])
        failed = sum(s["status"] == "error" for s in report["files"])
        parts.append(f"{len(report['files'])} files, {total} finding{'s' * (total != 1)}"
                     + (f", {failed} file{'s' * (failed != 1)} not checked" if failed else ""))
    if gate["baseline"] is not None or several or gate["gating"] != sum(statuses.values()):
        parts.append(f"{gate['gating']} fail{'s' * (gate['gating'] == 1)} the gate "
                     f"(--fail-on {gate['fail_on']})")
    if gate["baseline"] is not None:
        parts.append(f"{statuses['baselined']} baselined, {statuses['worse']} worse than the "
                     f"baseline, {statuses['expired']} expired, {len(gate['fixed'])} fixed")
    text = "; ".join(parts)
    for entry in gate["fixed"]:
        text += f"\nFixed (in the baseline, no longer found): {entry['file']}: {entry['kind']} " \
                f"{' / '.join(entry['objects'])}"
    return text


class _Reports:
    """The reports one run was asked for (JSON, CSV, JUnit, SARIF), rewritten as it goes."""

    def __init__(self, args):
        self.targets = [(getattr(args, o[2:]), o) for o in REPORT_OPTIONS
                        if getattr(args, o[2:], None)]
        self.paths = [p for p, _ in self.targets]

    def write(self, report, final=True):
        """Write ``report`` to every target; ``final`` False: the placeholder written before
        the check, which a FIFO, a device or standard output never gets (their reader would
        take it for the report)."""
        from . import files
        from .core import report as core_report

        writers = {"--json": core_report.to_json, "--csv": core_report.to_csv,
                   "--junit": core_report.to_junit, "--sarif": core_report.to_sarif}
        for path, option in self.targets:
            if not final and files.is_special(files.resolved(path)):
                continue
            try:
                files.write_text_atomically(path, writers[option](report))
            except OSError as problem:
                raise UsageError(f"error: cannot write {path}: "
                                 f"{problem.strerror or problem}") from None


def _label(path):
    """The checked file's name for messages and reports, before it is opened."""
    if path is not None:
        return path
    import bpy

    return os.path.basename(bpy.data.filepath)


# Blender's importers print their progress on stdout; the command says which file it checks.
_ANY_LINE = re.compile("")


def _open(path, load, quiet=False):
    """Open ``path`` (a .blend with its scripts off; other formats imported into an empty
    scene), or keep the open file; the file's name for messages and reports."""
    import bpy

    from .console import READ_BLEND, filtered_output

    if path is None:
        if not bpy.data.filepath:
            raise UsageError("error: no .blend file given (and none is open)")
        return os.path.basename(bpy.data.filepath)
    if not os.path.exists(path):
        raise UsageError(f"error: {path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"error: {path} is a folder, not a .blend file")
    suffix = os.path.splitext(path)[1].lower()
    if not load:
        return path
    if suffix in IMPORTERS:
        _import(path, IMPORTERS[suffix])
        return path
    # Blender's "Read blend: ..." line says what "Checking ..." says; --quiet drops it.
    patterns = (READ_BLEND,) if quiet else ()
    try:
        with filtered_output(*patterns):
            # use_scripts=False: a level's registered scripts and drivers never run here.
            bpy.ops.wm.open_mainfile(filepath=os.path.abspath(path), load_ui=False,
                                     use_scripts=False)
    except RuntimeError as problem:
        reason = str(problem).strip().splitlines()[-1] if str(problem).strip() else ""
        what = "a .blend file" if suffix == ".blend" else \
            f"a readable file (the suffixes read are {', '.join(READABLE)})"
        raise UsageError(f"error: {path}: not a readable .blend file ({reason})"
                         if suffix == ".blend" else f"error: {path}: not {what}") from None
    return path


def _import(path, importer):
    """Import ``path`` into an empty scene with Blender's own importer (names as imported)."""
    import bpy

    from .console import filtered_output

    bpy.ops.wm.read_factory_settings(use_empty=True)
    operator = {"gltf": bpy.ops.import_scene.gltf, "fbx": bpy.ops.import_scene.fbx,
                "obj": bpy.ops.wm.obj_import}[importer]
    try:
        with filtered_output(_ANY_LINE, fds=(1,)):
            result = operator(filepath=os.path.abspath(path))
    except (RuntimeError, Exception) as problem:  # importers raise whatever their parser does
        lines = str(problem).strip().splitlines()
        raise UsageError(f"error: {path}: the {importer} importer could not read it "
                         f"({lines[-1] if lines else type(problem).__name__})") from None
    if 'FINISHED' not in result:
        raise UsageError(f"error: {path}: the {importer} importer could not read it")


def _scene(name, label=""):
    import bpy

    if name is None:
        return bpy.context.scene
    scene = bpy.data.scenes.get(name)
    if scene is None:
        raise UsageError(f"error: there is no scene named {name!r}"
                         + (f" in {label}" if label else ""))
    return scene


def _check_outputs(args):
    """Exit 2 before any work for an output that cannot be written: a folder, a missing folder,
    a folder not written to, a picture suffix of no known format."""
    from . import files

    for option in REPORT_OPTIONS + ("--picture", "--map", "--write-baseline"):
        path = getattr(args, option[2:].replace("-", "_"), None)
        if not path:
            continue
        if path == files.STDOUT and option not in REPORT_OPTIONS:
            raise UsageError(f"error: {option} takes a file, not '-'")
        if os.path.isdir(files.resolved(path)):
            raise UsageError(f"error: {option} {path} is a folder; give a file name, e.g. "
                             f"{os.path.join(path, _EXAMPLE_NAMES[option])}")
        if option in ("--picture", "--map"):
            from .picture import picture_format
            try:
                picture_format(path)
            except ValueError as problem:
                raise UsageError(f"error: {option}: {problem}") from None
        try:
            files.check_writable(path)
        except OSError as problem:
            raise UsageError(f"error: {option} {path}: cannot write there "
                             f"({problem.strerror or problem})") from None


_EXAMPLE_NAMES = {"--json": "report.json", "--csv": "report.csv", "--junit": "report.xml",
                  "--sarif": "report.sarif", "--picture": "findings.png", "--map": "map.png",
                  "--write-baseline": "baseline.json"}


def _summary_line(section, options, complete=True):
    from .core.report import length_text

    units = section.get("units")

    def setting(name, value):
        return f"{name} from the rules" if value is None else \
            f"{name} {length_text(value, units)}"

    clearance = setting("clearance", options["clearance"])
    own = section["objects_with_own_clearance"]
    if own:
        clearance += f", own clearance on {own} object{'s' * (own != 1)}"
    parts = [clearance, setting("touch tolerance", options["touch_tolerance"])]
    if options.get("collection"):
        parts.append(f"collection {options['collection']}")
    if options.get("ignore"):
        parts.append("ignoring " + ", ".join(options["ignore"]))
    if options.get("ignore_pairs"):
        parts.append("ignoring pairs " + ", ".join(f"{a}/{b}" for a, b in
                                                   options["ignore_pairs"]))
    if options.get("object_clearance"):
        parts.append("clearances " + ", ".join(f"{p}={c:g}" for p, c in
                                               options["object_clearance"].items()))
    count = section["objects_checked"]
    noun = "object" if count == 1 else "objects"
    checked = "Checked" if complete else "Partly checked"
    return f"{checked} {count} {noun} of {section['file']} ({'; '.join(parts)})"


def _count_text(findings, interrupted=""):
    """The counts of the findings; for an interrupted run, said to be those found so far."""
    from .core.report import count_line, counts

    if not interrupted:
        return count_line(findings)
    per_kind = counts(findings)
    overlaps = per_kind.get("overlap", 0)
    return (f"INCOMPLETE, {interrupted}: {len(findings)} finding"
            f"{'s' * (len(findings) != 1)} so far ({overlaps} overlap{'s' * (overlaps != 1)}, "
            f"{len(findings) - overlaps} too close)")


def _result_line(section, interrupted=""):
    """The one line of ``--quiet`` for a file: the counts, how many objects, which file."""
    count = section["objects_checked"]
    noun = "object" if count == 1 else "objects"
    return (f"{_count_text(section['findings'], interrupted).rstrip('.')} ({count} {noun} of "
            f"{section['file']})")


class _Progress:
    """Progress lines on stderr, at most one a second (so short checks print none)."""

    def __init__(self, err, silent=False):
        self.err = err
        self.silent = silent
        self.last = time.perf_counter()

    def update(self, fraction, phase):
        now = time.perf_counter()
        if not self.silent and now - self.last >= PROGRESS_INTERVAL and fraction < 1.0:
            self.last = now
            print(f"  {100 * fraction:3.0f}%  {phase}", file=self.err, flush=True)


# --- merging shards ---------------------------------------------------------------------------
# Fields every shard of one run must agree on (else they are not shards of one run).
_SAME_IN_EVERY_SHARD = ("schema_version", "tool", "blender_version", "options", "rules")


def _merge(args, out, err) -> RunResult:
    """``merge``: the shards' reports gated together, written as one run would have."""
    from .core import report as core_report

    _check_gate_arguments(args)
    args.picture = None
    _check_outputs(args)
    baseline = _read_baseline(args.baseline)
    shards = []
    for path in args.reports:
        try:
            with open(path, encoding="utf-8") as f:
                shards.append((path, core_report.from_json(f.read(), path)))
        except OSError as problem:
            raise UsageError(f"error: {path}: {problem.strerror or problem}") from None
        except ValueError as problem:
            raise UsageError(f"error: {problem}") from None
    merged = merge_reports(shards)
    reports = _Reports(args)
    if "-" in reports.paths:
        out = err
    for section in merged["files"]:     # (the shard's run said so on its own stderr)
        if section["status"] == core_report.FAILED:
            print(f"error: {section.get('error')}", file=err, flush=True)
    code = _gate_and_write(args, merged, baseline, reports, out, err,
                           interrupted=not merged["complete"])
    if not merged["complete"]:
        print(f"{args.reports[0]}...: a shard did not finish: "
              f"{merged.get('incomplete_reason')}", file=err, flush=True)
        code = EXIT_ERROR
    return RunResult(code, [f for s in merged["files"] for f in s["findings"]],
                     report=merged)


def merge_reports(shards) -> dict:
    """One ungated report of every file of the shards ``[(path, report)]``; ``UsageError``
    unless they are all the shards of one run."""
    from .core import gate
    from .core import report as core_report

    first_path, first = shards[0]
    if first.get("shard") is None:
        raise UsageError(f"error: {first_path} is not a shard's report (written without "
                         f"--shard)")
    count, files = first["shard"]["count"], first["shard"]["files"]
    seen = {}
    for path, shard in shards:
        info = shard.get("shard")
        if info is None:
            raise UsageError(f"error: {path} is not a shard's report (written without --shard)")
        if info["count"] != count or info["files"] != files:
            raise UsageError(f"error: {path} is a shard of another run (other files or another "
                             f"number of shards than {first_path})")
        for key in _SAME_IN_EVERY_SHARD:
            if shard.get(key) != first.get(key):
                raise UsageError(f"error: {path} was checked with other {key} than "
                                 f"{first_path}")
        if info["index"] in seen:
            raise UsageError(f"error: {path} and {seen[info['index']]} are both shard "
                             f"{info['index']}/{count}")
        seen[info["index"]] = path
        gate.ungated(shard)
    missing = [k for k in range(1, count + 1) if k not in seen]
    if missing:
        raise UsageError(f"error: shard{'s' * (len(missing) > 1)} "
                         f"{', '.join(f'{k}/{count}' for k in missing)} missing")
    sections = [s for _, shard in sorted(shards, key=lambda item: item[1]["shard"]["index"])
                for s in shard["files"]]
    reasons = [shard.get("incomplete_reason", "") for _, shard in shards
               if not shard["complete"]]
    return core_report.new_report(
        sections, options=first["options"], rules=first["rules"], complete=not reasons,
        incomplete_reason="; ".join(reasons), version=first["tool"]["version"],
        blender_version=first["blender_version"])


# --- picture --------------------------------------------------------------------------------
def _picture(args, findings, level_run, scene) -> str:
    """Render the picture; an empty string when it worked, else a note saying why not."""
    import bpy

    from . import level_check

    width, height = args.picture_size
    path = os.path.abspath(args.picture)
    temporary = None
    try:
        camera = bpy.data.objects.get(args.camera) if args.camera else scene.camera
        from . import overlay, picture
        if camera is None:
            reserve = picture.legend_height(LEGEND_ROWS) / height
            camera = temporary = framing_camera(scene, *_level_box(level_run), width / height,
                                                top_reserve=reserve)
        # Each finding outlines what touches: the part of a compound or mesh, else the box.
        overlay.show(level_check.OVERLAY_KEY, level_check.findings_drawing(
            findings, outlines=level_run.outlines(findings)))
        picture.render_picture(path, scene=scene, camera=camera, width=width, height=height,
                               keys=[level_check.OVERLAY_KEY],
                               legend=level_check.findings_legend(findings))
    except Exception as problem:  # the reports are written already; say why there is no picture
        return _no_picture(args.picture, f"{type(problem).__name__}: {problem}")
    finally:
        if temporary is not None:
            data = temporary.data
            bpy.data.objects.remove(temporary)
            bpy.data.cameras.remove(data)
    return ""


def _map_picture(args, checked, interrupted) -> str:
    """Render the traversal map seen from above; an empty string when it worked, else a note
    saying why not."""
    from . import traversal_check

    if interrupted or checked.traversal is None:
        return _no_picture(args.map, "the check was interrupted")
    width, height = args.picture_size
    try:
        traversal_check.map_picture(os.path.abspath(args.map), checked.traversal,
                                    checked.scene, width, height)
    except Exception as problem:  # the reports are written already; say why there is no map
        return _no_picture(args.map, f"{type(problem).__name__}: {problem}")
    return ""


def _no_picture(path, reason) -> str:
    """The note for a picture not drawn; a picture of an earlier run at ``path`` is removed, so
    that it is not taken for this run's."""
    note = f"No picture: {reason}"
    if os.path.isfile(path):
        try:
            os.remove(path)
            note += f"; removed {path}, which showed an earlier check"
        except OSError as problem:
            note += f"; {path} is from an earlier check (cannot remove it: {problem.strerror})"
    return note


# Framed corners stay this fraction of the picture's half-size inside its border.
FRAME_MARGIN = 0.04
# Rows of the findings pictures' legend at most (``level_check.findings_legend``): one a
# kind of the level check and the fix arrows.
LEGEND_ROWS = 5


def framing_camera(scene, lower, upper, aspect, pitch_degrees=55.0, lens=35.0,
                   name="ConvexLevelCamera", top_reserve=0.0):
    """A camera looking north and down ``pitch_degrees`` at the box ``lower``–``upper`` that
    frames it tightly (``aspect`` = width / height): as close as it can be with every corner in
    the picture, and its lens shifted so that the box's picture is centred. Without the shift
    the far half of the box, smaller in perspective, would leave an empty band above it.
    ``top_reserve``: fraction of the picture's height kept free at the top (for a legend)."""
    import bpy
    import numpy as np

    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    center = 0.5 * (lower + upper)
    corners = np.array([[x, y, z] for x in (lower[0], upper[0]) for y in (lower[1], upper[1])
                        for z in (lower[2], upper[2])]) - center
    data = bpy.data.cameras.new(name)
    data.lens = lens
    # With sensor fit AUTO the sensor width spans the longer side of the picture; a corner at
    # (x, y, depth) in the camera's frame lands at (x, y) / depth on the image plane, whose
    # half-width and half-height are tan_x and tan_y at distance 1.
    tan_long = data.sensor_width / (2.0 * lens)
    tan_x, tan_y = (tan_long, tan_long / aspect) if aspect >= 1.0 else \
        (tan_long * aspect, tan_long)
    pitch = math.radians(pitch_degrees)
    # Camera axes in the world: right, up, and forward (the view direction).
    right = np.array([1.0, 0.0, 0.0])
    forward = np.array([0.0, math.cos(pitch), -math.sin(pitch)])
    up = np.cross(right, forward)
    x, y, depth = corners @ right, corners @ up, corners @ forward
    size = float(np.linalg.norm(upper - lower)) or 1.0

    def extent(distance):
        u, v = x / (depth + distance), y / (depth + distance)
        return u.min(), u.max(), v.min(), v.max()

    # The box's picture must fit in this much of the picture's height.
    height_share = 1.0 - FRAME_MARGIN - top_reserve

    def fits(distance):
        u0, u1, v0, v1 = extent(distance)
        return (u1 - u0 <= 2.0 * tan_x * (1.0 - FRAME_MARGIN)
                and v1 - v0 <= 2.0 * tan_y * height_share)

    # The extents shrink as the camera backs away: bisect between a distance just in front of
    # the nearest corner and one that surely fits.
    near = float(-depth.min()) + 1e-3 * size
    far = near + size / min(tan_x, tan_y) + size
    for _ in range(60):
        middle = 0.5 * (near + far)
        near, far = (near, middle) if fits(middle) else (middle, far)
    distance = far
    u0, u1, v0, v1 = extent(distance)
    # Shifts are in units of the longer side of the picture (2 tan_long on the image plane).
    data.shift_x = 0.5 * (u0 + u1) / (2.0 * tan_long)
    # Centred in the part of the picture below the reserved band.
    data.shift_y = (0.5 * (v0 + v1) + top_reserve * tan_y) / (2.0 * tan_long)
    cam = bpy.data.objects.new(name, data)
    cam.location = center - distance * forward
    cam.rotation_euler = (math.pi / 2 - pitch, 0.0, 0.0)
    data.clip_start = max(1e-3, 0.5 * float(depth.min() + distance))
    data.clip_end = 4.0 * (distance + size)
    scene.collection.objects.link(cam)
    return cam


def _level_box(level_run):
    import numpy as np

    check = level_run.check
    if check is None or not check.shapes:
        return np.zeros(3), np.ones(3)
    return check.lower.min(axis=0), check.upper.max(axis=0)


# --- Blender's -c command ---------------------------------------------------------------------
_command_handle = None


def attach():
    """Register ``blender -c convex_tools ...`` (once, however often this is called)."""
    global _command_handle
    if _command_handle is None:
        import bpy

        _command_handle = bpy.utils.register_cli_command("convex_tools", blender_command)


def detach():
    global _command_handle
    if _command_handle is not None:
        import bpy

        bpy.utils.unregister_cli_command(_command_handle)
        _command_handle = None
