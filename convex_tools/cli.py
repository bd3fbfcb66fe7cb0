"""Command line level check, shared by ``scripts/check_level.py`` and Blender's ``-c`` command:

    python scripts/check_level.py LEVEL.blend [options]
    blender -b LEVEL.blend -c convex_tools check [options]

(the second registered by ``attach`` when the add-on is enabled). Prints a table of the
findings (``--quiet``: one summary line), writes JSON / CSV reports and a picture when asked, and
exits with 0 when the level is clean, 1 when it has findings, 2 when the file, the arguments or
an output path are wrong (with a message saying what is wrong), 130 when interrupted (Ctrl-C).

Reports always describe the latest run: once the arguments are understood, every report asked
for is replaced by one marked incomplete ("the check has not finished"), then by the final one;
an interrupted run writes the findings it had, marked incomplete, and an error writes its
reason. Each write is atomic (``files``), so a pipeline never reads half a report, nor an old
report that looks current.
"""

from __future__ import annotations

import argparse
import math
import os
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


class UsageError(Exception):
    """Bad arguments or an unusable file: exit code 2 with this message."""


@dataclass
class RunResult:
    code: int
    findings: list = field(default_factory=list)
    stats: object = None
    message: str = ""


def build_parser(prog="check_level") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Check a Blender level for objects that overlap or are closer than a "
                    "clearance. Exit code 0: clean, 1: findings, 2: bad file or arguments.")
    parser.add_argument("blend", nargs="?",
                        help="the .blend file to check (default: the file Blender has open)")
    parser.add_argument("--clearance", type=_length, default=None, metavar="M",
                        help="free space every object needs around it, in metres, unless it "
                             "has its own (--object-clearance, its custom property "
                             "convex_clearance or its Own Clearance setting); with 0 (the "
                             "default) only objects with their own clearance are checked for "
                             "gaps, the others for overlaps only")
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
    parser.add_argument("--json", metavar="PATH", help="write the report as JSON")
    parser.add_argument("--csv", metavar="PATH", help="write the findings as CSV")
    parser.add_argument("--picture", metavar="PATH",
                        help="render a picture of the level with the findings drawn and "
                             "labelled; the suffix chooses the format: .png, .jpg, .webp, "
                             ".tif or .bmp")
    parser.add_argument("--picture-size", type=_size, default=DEFAULT_PICTURE_SIZE,
                        metavar="WxH", help="picture size in pixels (default 1600x1000)")
    parser.add_argument("--camera", metavar="NAME",
                        help="camera for the picture (default: the scene camera, else one "
                             "framing the level)")
    parser.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                        help="processes measuring pairs (default: one per core); the report "
                             "is the same for any N")
    parser.add_argument("--max-rows", type=int, default=60, metavar="N",
                        help="rows of the printed table (default 60; the reports hold all)")
    parser.add_argument("--quiet", action="store_true",
                        help="print only one summary line (warnings and errors still go to "
                             "stderr)")
    return parser


def _length(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a length in metres, got {text!r}") from None
    if not math.isfinite(value) or value < 0.0:
        raise argparse.ArgumentTypeError(f"expected a length >= 0, got {text!r}")
    return value


def _jobs(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes >= 1, got {text!r}")
    return value


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


def parse(argv, prog="check_level"):
    """Parsed arguments, or UsageError (argparse's own exit turned into an exception)."""
    parser = build_parser(prog)

    def error(message):
        raise UsageError(f"error: {message}\n{parser.format_usage().strip()}")

    parser.error = error
    try:
        return parser.parse_args(argv)
    except SystemExit as done:  # --help
        raise _HelpShown(done.code or 0) from None


class _HelpShown(Exception):
    def __init__(self, code):
        super().__init__("help")
        self.code = code


# --- the run --------------------------------------------------------------------------------
def run(argv=None, *, prog="check_level", load=True, out=None, err=None) -> RunResult:
    """Parse ``argv``, open the file (when ``load``), check, report. Never raises on user
    errors: they come back as ``RunResult(code=2, message=...)`` after printing to ``err``."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        args = parse(list(sys.argv[1:] if argv is None else argv), prog)
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
    return run(argv, prog=prog).code


def blender_command(argv) -> int:
    """Handler of ``blender -b LEVEL.blend -c convex_tools check [options]``."""
    argv = list(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print("usage: blender -b LEVEL.blend -c convex_tools check [options]\n"
              "       (blender -c convex_tools check --help lists the options)")
        return EXIT_CLEAN if argv else EXIT_ERROR
    if argv[0] != "check":
        print(f"convex_tools: unknown command {argv[0]!r} (the command is 'check')",
              file=sys.stderr)
        return EXIT_ERROR
    return main(argv[1:], prog="convex_tools check")


def _run(args, load, out, err) -> RunResult:
    import bpy

    from . import level_check
    from .core.level import TOUCH_TOLERANCE, report_table

    started = time.perf_counter()
    _check_outputs(args)
    tolerance = TOUCH_TOLERANCE if args.touch_tolerance is None else args.touch_tolerance
    options = {
        "clearance": args.clearance,
        "touch_tolerance": tolerance,
        "collection": args.collection,
        "ignore": list(args.ignore),
        "ignore_pairs": [list(p) for p in args.ignore_pair],
        "object_clearance": {p: c for p, c in args.object_clearance},
    }
    reports = _Reports(args, _label(args.blend), options)
    reports.write([], complete=False, reason="the check has not finished (it is still "
                                             "running, or it was stopped before writing)")
    try:
        label = _open(args.blend, load, quiet=args.quiet)
        loaded = time.perf_counter()
        scene = _scene(args.scene)
        if args.collection is not None and bpy.data.collections.get(args.collection) is None:
            raise UsageError(f"error: there is no collection named {args.collection!r} in "
                             f"{label}")
        if args.camera is not None:
            camera = bpy.data.objects.get(args.camera)
            if camera is None or camera.type != 'CAMERA':
                raise UsageError(f"error: there is no camera named {args.camera!r} in {label}")
        reports.meta["scene"] = scene.name

        if not args.quiet:
            print(f"Checking {label} ...", file=err, flush=True)
        progress = _Progress(err, silent=args.quiet)
        try:
            level_run = level_check.LevelRun(
                None, args.clearance, collection=args.collection, ignore=args.ignore,
                ignore_pairs=[tuple(p) for p in args.ignore_pair],
                clearances=dict(args.object_clearance), touch_tolerance=tolerance, scene=scene)
        except ValueError as problem:
            raise UsageError(f"error: {problem}") from None
        try:
            findings = level_run.run(progress=progress.update, jobs=args.jobs)
            interrupted = ""
        except KeyboardInterrupt:
            findings = level_run.findings
            interrupted = f"interrupted (Ctrl-C) while {level_run.phase}"
        except ValueError as problem:  # e.g. a malformed custom property
            raise UsageError(f"error: {problem}") from None
    except UsageError as problem:
        reports.write([], complete=False, reason=f"the check could not run: {problem}")
        raise
    stats = level_run.stats
    stats.times["load"] = loaded - started
    finished = time.perf_counter()

    reports.write(findings, complete=not interrupted, reason=interrupted,
                  objects_checked=stats.objects,
                  objects_with_own_clearance=level_run.own_clearances,
                  objects_skipped=[{"object": n, "reason": r} for n, r in level_run.skipped])
    picture_note = ""
    if args.picture:
        if interrupted:
            picture_note = _no_picture(args.picture, "the check was interrupted")
        else:
            picture_note = _picture(args, findings, level_run, scene)

    # stdout: what the user asked for; stderr: warnings, so that --quiet keeps them.
    notes = [f"Skipped {name}: {reason}" for name, reason in level_run.skipped]
    if picture_note:
        notes.append(picture_note)
    if interrupted:
        notes.append(f"Interrupted: the {len(findings)} finding{'s' * (len(findings) != 1)} "
                     f"found so far are not the whole level"
                     + ("; the reports say so" if reports.paths else ""))
    if args.quiet:
        print(_result_line(label, stats, findings, interrupted), file=out, flush=True)
        for note in notes:
            print(note, file=err, flush=True)
    else:
        print(_summary_line(label, stats, args, tolerance, level_run.own_clearances,
                            complete=not interrupted), file=out)
        print(_count_text(findings, interrupted), file=out)
        if findings:
            print(file=out)
            print(report_table(findings, limit=args.max_rows, header=False), file=out)
        written = list(reports.paths)
        if args.picture and not picture_note:
            written.append(args.picture)
        if written:
            incomplete = " (marked incomplete)" if interrupted and reports.paths else ""
            print(f"Wrote {', '.join(written)}{incomplete}", file=out)
        times = stats.times
        print(f"Time {finished - started:.2f} s: load {times.get('load', 0):.2f}, "
              f"shapes {times.get('shapes', 0):.2f}, broad phase "
              f"{times.get('aabbs', 0) + times.get('broad_phase', 0) + times.get('cull', 0):.2f}"
              f", narrow phase {times.get('narrow_phase', 0):.2f}", file=out, flush=True)
        for note in notes:
            print(note, file=err, flush=True)
    if interrupted:
        return RunResult(EXIT_INTERRUPTED, findings, stats, message=interrupted)
    code = EXIT_FINDINGS if findings else EXIT_CLEAN
    return RunResult(code, findings, stats)


class _Reports:
    """The JSON and CSV reports one run was asked for, rewritten as the run goes."""

    def __init__(self, args, label, options):
        self.json, self.csv = args.json, args.csv
        self.paths = [p for p in (self.json, self.csv) if p]
        self.meta = {"file": label, "options": options}

    def write(self, findings, complete, reason="", **meta):
        from . import files, level_check

        texts = []
        if self.json:
            texts.append((self.json, level_check.json_report(
                findings, complete, reason, **{**self.meta, **meta})))
        if self.csv:
            texts.append((self.csv, level_check.csv_report(findings, complete, reason)))
        for path, text in texts:
            try:
                files.write_text_atomically(path, text)
            except OSError as problem:
                raise UsageError(f"error: cannot write {path}: "
                                 f"{problem.strerror or problem}") from None


def _label(path):
    """The checked file's name for messages and reports, before it is opened."""
    if path is not None:
        return path
    import bpy

    return os.path.basename(bpy.data.filepath)


def _open(path, load, quiet=False):
    """Open ``path`` (or keep the open file); the file's name for messages and reports."""
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
    if load:
        # Blender's "Read blend: ..." line says what "Checking ..." says; --quiet drops it.
        patterns = (READ_BLEND,) if quiet else ()
        try:
            with filtered_output(*patterns):
                bpy.ops.wm.open_mainfile(filepath=os.path.abspath(path), load_ui=False)
        except RuntimeError as problem:
            reason = str(problem).strip().splitlines()[-1] if str(problem).strip() else ""
            raise UsageError(f"error: {path}: not a readable .blend file ({reason})") from None
    return path


def _scene(name):
    import bpy

    if name is None:
        return bpy.context.scene
    scene = bpy.data.scenes.get(name)
    if scene is None:
        raise UsageError(f"error: there is no scene named {name!r}")
    return scene


def _check_outputs(args):
    """Exit 2 before any work for an output that cannot be written: a folder, a folder that
    cannot be made or written to, a picture suffix of no known format."""
    from . import files

    for option, path in (("--json", args.json), ("--csv", args.csv), ("--picture", args.picture)):
        if not path:
            continue
        if os.path.isdir(path):
            raise UsageError(f"error: {option} {path} is a folder; give a file name, e.g. "
                             f"{os.path.join(path, _EXAMPLE_NAMES[option])}")
        if option == "--picture":
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


_EXAMPLE_NAMES = {"--json": "report.json", "--csv": "report.csv", "--picture": "findings.png"}


def _summary_line(label, stats, args, tolerance, own_clearances=0, complete=True):
    clearance = ("clearance from the rules" if args.clearance is None
                 else f"clearance {args.clearance:g} m")
    if own_clearances:
        clearance += (f", own clearance on {own_clearances} "
                      f"object{'s' * (own_clearances != 1)}")
    parts = [clearance, f"touch tolerance {tolerance:g} m"]
    if args.collection:
        parts.append(f"collection {args.collection}")
    if args.ignore:
        parts.append("ignoring " + ", ".join(args.ignore))
    if args.ignore_pair:
        parts.append("ignoring pairs " + ", ".join(f"{a}/{b}" for a, b in args.ignore_pair))
    if args.object_clearance:
        parts.append("clearances " + ", ".join(f"{p}={c:g}" for p, c in args.object_clearance))
    noun = "object" if stats.objects == 1 else "objects"
    checked = "Checked" if complete else "Partly checked"
    return f"{checked} {stats.objects} {noun} of {label} ({'; '.join(parts)})"


def _count_text(findings, interrupted=""):
    """The counts of the findings; for an interrupted run, said to be those found so far."""
    from .core.level import OVERLAP, count_line

    if not interrupted:
        return count_line(findings)
    overlaps = sum(f.kind == OVERLAP for f in findings)
    return (f"INCOMPLETE, {interrupted}: {len(findings)} finding"
            f"{'s' * (len(findings) != 1)} so far ({overlaps} overlap{'s' * (overlaps != 1)}, "
            f"{len(findings) - overlaps} too close)")


def _result_line(label, stats, findings, interrupted=""):
    """The one line of ``--quiet``: the counts, how many objects, which file."""
    noun = "object" if stats.objects == 1 else "objects"
    return f"{_count_text(findings, interrupted).rstrip('.')} ({stats.objects} {noun} of {label})"


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
