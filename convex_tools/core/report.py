"""The level check's report: one model, and every output format a writer of it.

The model is plain data (what ``json`` reads and writes), so that a report read back from a file
(``check_level.py merge``) is the same model as the one a run builds, and every writer gives the
same bytes for both:

    report = {"schema_version", "tool": {"name", "version"}, "blender_version", "generated_at",
              "complete", ["incomplete_reason"], "options", "rules": {"path", "sha256"} | None,
              ["shard": {"index", "count", "files"}], "gate": {...} | None, "warnings",
              "counts", "files": [section, ...]}
    section = {"file", "status" ("checked" | "incomplete" | "error"), ["error"], "scene",
               "rules", "units": {"system", "scale_length", "length_unit"}, "objects_checked",
               "objects_with_own_clearance", "objects_skipped", "objects_excluded",
               "objects_unchecked", "unmatched", "warnings", "counts", "findings": [finding]}

A finding is ``Finding.to_dict()``; once the gate ran (``core.gate``) it also carries
``status`` ("new", "baselined", "worse", "expired") and ``gating`` (whether it fails the
build). ``docs/report.schema.json`` is the JSON Schema of all this. Lengths in the model are in
Blender units; the human text (``report_table``, ``count_line``) is in the scene's units.

Writers: ``to_json``, ``to_csv``, ``to_junit`` (JUnit XML, a test suite per file) and
``to_sarif`` (SARIF 2.1.0). ``report_dict``/``report_json``/``report_csv`` are the older
single-list reports of ``core.level`` (a list of findings and free metadata), kept for scripts.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import json
import math
import os
import re
import tomllib
import urllib.parse
import xml.etree.ElementTree as ET

from .units import LENGTH_UNITS, PLAIN, Units, significant

# Version of the report's layout (``docs/report.schema.json``). Fields are added, never renamed;
# a change that a reader of an earlier version would misread raises it.
SCHEMA_VERSION = 1

TOOL_NAME = "convex_tools"
SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

# Statuses of a checked file's section.
CHECKED, INCOMPLETE, FAILED = "checked", "incomplete", "error"

# Finding kinds: the level check's (``core.level``) ...
OVERLAP = "overlap"
TOO_CLOSE = "too_close"
SUNK = "sunk"
FLOATING = "floating"
# ... and the traversal check's (``core.traversal``): regions the agent cannot reach, and why.
UNREACHABLE = "unreachable"
NARROW = "narrow"
LOW_HEADROOM = "low_headroom"
STEP = "step"
KINDS = (OVERLAP, SUNK, TOO_CLOSE, FLOATING)
TRAVERSAL_KINDS = (UNREACHABLE, NARROW, LOW_HEADROOM, STEP)
ALL_KINDS = KINDS + TRAVERSAL_KINDS

# Traversal findings' points are keyed on a grid of this size when the finding gives no cell
# size of its own (``cell_size`` in its extra fields): a region found again a little elsewhere
# keeps its key.
TRAVERSAL_KEY_CELL = 0.25

# Part labels that are positions rather than names (``Compound.part_label``,
# ``TriangleMesh.part_label``): not part of a key, since they change when a mesh is edited.
_POSITIONAL_PART = re.compile(r"^(part|triangle) \d+$")

# What each finding kind means (SARIF rule descriptions, JUnit messages).
KIND_TEXT = {
    "overlap": "Two objects overlap deeper than the touch tolerance",
    "sunk": "An object is sunk into a static object supporting it deeper than it may be",
    "too_close": "Two objects are closer than the clearance they need",
    "floating": "An object that must rest on something has no support",
    "unreachable": "A walkable region cannot be reached",
    "narrow": "A passage is narrower than the agent",
    "low_headroom": "A passage is lower than the agent",
    "step": "A step is higher than the agent can climb",
}


# --- the tool ---------------------------------------------------------------------------------
def tool_version() -> str:
    """The extension's version from ``blender_manifest.toml`` (beside the package in the
    repository, inside it in the extension archive); "unknown" when neither is found."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for folder in (package, os.path.dirname(package)):
        path = os.path.join(folder, "blender_manifest.toml")
        try:
            with open(path, "rb") as f:
                return str(tomllib.load(f).get("version", "unknown"))
        except (OSError, tomllib.TOMLDecodeError):
            continue
    return "unknown"


def file_sha256(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def now_text() -> str:
    """``generated_at``: the UTC time to the second, ISO 8601."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- units ------------------------------------------------------------------------------------
def units_of(units) -> Units:
    """A section's ``units`` dict (``{"system", "scale_length", "length_unit"}``) as ``Units``;
    None: plain Blender units."""
    return PLAIN if not units else Units(units.get("system", "NONE"),
                                         float(units.get("scale_length", 1.0)),
                                         units.get("length_unit", "ADAPTIVE"))


def length_text(value, units=None) -> str:
    """A length in Blender units as the scene shows it ("12.0 cm"; ``core.units``)."""
    return units_of(units).format(value)


# --- findings as data ---------------------------------------------------------------------------
def as_dict(finding) -> dict:
    """A finding as report data (a ``Finding`` or its dict already)."""
    return finding if isinstance(finding, dict) else finding.to_dict()


def counts(findings) -> dict:
    """Findings per kind: the four level kinds always, traversal kinds when present."""
    out = {kind: 0 for kind in KINDS}
    for f in findings:
        kind = as_dict(f)["kind"]
        out[kind] = out.get(kind, 0) + 1
    return out


def depth_of(f) -> float:
    d = f.get("distance")
    return 0.0 if d is None else max(0.0, -float(d))


def measure_text(f, units=None) -> str:
    """What a finding measured, in words: "depth 0.2 m", "gap 0.03 m", "drop 1.5 m"."""
    kind, distance = f["kind"], f.get("distance")
    if kind in ("overlap", "sunk"):
        return f"depth {length_text(depth_of(f), units)}"
    if kind == "too_close":
        return f"gap {length_text(distance, units)}"
    if kind == "floating":
        return "nothing below" if distance is None else f"drop {length_text(distance, units)}"
    # Traversal findings (core.traversal): what is too small for the agent.
    for word, key in (("width", "width"), ("headroom", "clearance"), ("step", "height")):
        value = f.get(key)
        if kind != "unreachable" and isinstance(value, (int, float)) and \
                (key != "clearance" or kind == "low_headroom"):
            return f"{word} {length_text(value, units)}"
    if kind == "unreachable" and isinstance(f.get("area"), (int, float)):
        return f"area {area_text(f['area'], units)}"
    return "-"


def area_text(value, units=None) -> str:
    """An area (square Blender units) in the units' area: "8.55 m²"."""
    if units_of(units).system not in ("METRIC", "IMPERIAL"):
        return f"{value:.3g}"
    scene = units_of(units)
    # The unit a length of the square's side would be shown in, squared.
    symbol = length_text(math.sqrt(max(float(value), 0.0)), units).partition(" ")[2]
    factor = next((f for f, sym in LENGTH_UNITS.values() if sym == symbol), None)
    if factor is None:
        return f"{value:.3g}"
    return f"{significant(float(value) * scene.scale_length ** 2 / factor ** 2)} {symbol}²"


def with_part(name, part) -> str:
    return f"{name} [{part}]" if part else (name or "-")


def finding_title(f) -> str:
    """A finding in one line without numbers: "overlap: Barrel / Crate"."""
    objects = [with_part(f.get("object_a"), f.get("part_a"))]
    if f.get("object_b"):
        objects.append(with_part(f["object_b"], f.get("part_b")))
    elif f.get("objects"):
        objects = list(f["objects"])
    return f"{f['kind']}: {' / '.join(objects)}"


def finding_text(f, units=None) -> str:
    """A finding in one line: "overlap: Barrel / Crate, depth 0.2 m" (and its fix)."""
    text = f"{finding_title(f)}, {measure_text(f, units)}"
    if f["kind"] == "too_close":
        text += f" < {length_text(f.get('clearance'), units)}"
    if f.get("move") and f.get("translation") is not None:
        move = ", ".join(length_text(v, units) for v in f["translation"])
        text += f"; move {f['move']} by ({move})"
    return text


def _where(f):
    """Where a finding is: midway between its witness points, else its point."""
    a, b = f.get("point_a"), f.get("point_b")
    if a is not None and b is not None:
        return [0.5 * (x + y) for x, y in zip(a, b)]
    return a if a is not None else f.get("point")


NOTE_TEXT = {"baselined": "baselined", "worse": "worse than baseline",
             "expired": "baseline expired"}


def _note(f) -> str:
    notes = []
    if f.get("severity") == "warning":
        notes.append("warning")
    if f.get("status") in NOTE_TEXT:
        notes.append(NOTE_TEXT[f["status"]])
    return ", ".join(notes)


def count_line(findings, units=None) -> str:
    """One line saying how many findings of each kind there are (overlaps and too close always,
    the other kinds when there are any)."""
    findings = [as_dict(f) for f in findings]
    if not findings:
        return "No findings: nothing overlaps and every pair keeps its clearance."
    per_kind = counts(findings)
    parts = [f"{per_kind.get('overlap', 0)} overlap{'s' * (per_kind.get('overlap', 0) != 1)}",
             f"{per_kind.get('too_close', 0)} too close"]
    parts += [f"{n} {kind.replace('_', ' ')}" for kind, n in per_kind.items()
              if n and kind not in ("overlap", "too_close")]
    return f"{len(findings)} finding{'s' * (len(findings) != 1)}: {', '.join(parts)}"


def report_table(findings, limit=None, header=True, units=None) -> str:
    """A plain-text table, one finding a row (``limit`` rows at most, then a count of the rest),
    under the ``count_line`` when ``header``. An object's part, when the finding names one,
    follows its name in brackets: ``Terrain [triangle 17]``. Lengths in the scene's ``units``
    (``{"system", "scale_length", "length_unit"}``); without them, in Blender units to four
    decimals."""
    findings = [as_dict(f) for f in findings]
    head = count_line(findings)
    if not findings:
        return head + "\n" if header else ""
    shown = findings if limit is None else findings[:limit]

    def length(value):
        if units is None:
            return "-" if value is None else f"{float(value):.4f}"
        return length_text(value, units)

    rows = [("kind", "object A", "object B", "distance", "needed", "where", "note")]
    for f in shown:
        if units is None and f["kind"] in ("overlap", "sunk"):
            what = f"depth {depth_of(f):.4f}"
        elif units is None and f["kind"] == "too_close":
            what = f"gap {f['distance']:.4f}"
        else:
            what = measure_text(f, units)
        where = _where(f)
        rows.append((f["kind"], with_part(f.get("object_a"), f.get("part_a")),
                     with_part(f.get("object_b"), f.get("part_b")), what,
                     length(f.get("clearance")) if f["kind"] == "too_close" else "-",
                     "-" if where is None else "(" + ", ".join(
                         f"{v:.2f}" if units is None else length_text(v, units)
                         for v in where) + ")",
                     _note(f)))
    if not any(r[-1] for r in rows[1:]):
        rows = [r[:-1] for r in rows]
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = [head, ""] if header else []
    for k, r in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    if len(shown) < len(findings):
        lines.append(f"... and {len(findings) - len(shown)} more (see the JSON/CSV report)")
    return "\n".join(lines) + "\n"


# --- the model ----------------------------------------------------------------------------------
def file_section(file, *, findings=(), status=CHECKED, error=None, scene=None, units=None,
                 objects_checked=0, objects_with_own_clearance=0, objects_skipped=(),
                 objects_excluded=(), objects_unchecked=(), unmatched=(), warnings=(),
                 rules=None, traversal=None) -> dict:
    """The report's section of one checked file (``findings``: ``Finding``s or their dicts,
    in the check's order; ``rules``: the rules it was checked with, {"path", "sha256"};
    ``traversal``: the traversal check's summary, when it ran)."""
    found = [dict(as_dict(f)) for f in findings]
    section = {"file": file, "status": status}
    if error is not None:
        section["error"] = error
    section.update({
        "scene": scene,
        "rules": rules,
        "units": dict(units) if units is not None else None,
        "objects_checked": int(objects_checked),
        "objects_with_own_clearance": int(objects_with_own_clearance),
        "objects_skipped": [dict(s) for s in objects_skipped],
        "objects_excluded": [dict(s) for s in objects_excluded],
        "objects_unchecked": [dict(s) for s in objects_unchecked],
        "unmatched": list(unmatched),
        "warnings": list(warnings),
        "counts": counts(found),
        "findings": found,
    })
    if traversal is not None:
        section["traversal"] = traversal
    return section


def new_report(sections, *, options, rules=None, complete=True, incomplete_reason="",
               version=None, blender_version=None, generated_at=None, shard=None) -> dict:
    """A report of ``sections`` (``file_section``), not yet gated (``gate`` None: what a shard
    writes; ``core.gate.apply`` fills it in)."""
    report = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": TOOL_NAME, "version": version or tool_version()},
        "blender_version": blender_version,
        "generated_at": generated_at or now_text(),
        "complete": bool(complete),
    }
    if not complete:
        report["incomplete_reason"] = incomplete_reason
    report["options"] = options
    report["rules"] = rules
    if shard is not None:
        report["shard"] = shard
    report["gate"] = None
    report["warnings"] = []
    report["counts"] = {}
    report["files"] = list(sections)
    refresh_counts(report)
    return report


def refresh_counts(report) -> None:
    report["counts"] = counts([f for s in report["files"] for f in s["findings"]])


def all_findings(report):
    """(section, finding) of every finding, in report order."""
    for section in report["files"]:
        for f in section["findings"]:
            yield section, f


# --- writers ----------------------------------------------------------------------------------
def to_json(report) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def from_json(text, source="report") -> dict:
    """A report read back (``ValueError`` naming ``source`` when it is not one)."""
    try:
        report = json.loads(text)
    except json.JSONDecodeError as problem:
        raise ValueError(f"{source}: not a JSON report ({problem})") from None
    if not isinstance(report, dict) or "files" not in report or "schema_version" not in report:
        raise ValueError(f"{source}: not a level check report (no schema_version or files)")
    if report["schema_version"] != SCHEMA_VERSION:
        raise ValueError(f"{source}: report schema_version {report['schema_version']!r}, "
                         f"this tool reads {SCHEMA_VERSION}")
    return report


# The CSV's columns: those of ``core.level.CSV_COLUMNS`` first (readers by position keep
# working), then the file and what the rules and the gate decided.
REPORT_CSV_COLUMNS = ("kind", "object_a", "object_b", "distance", "clearance",
                      "point_a_x", "point_a_y", "point_a_z", "point_b_x", "point_b_y",
                      "point_b_z", "part_a", "part_b", "file", "rule", "severity", "status",
                      "gating", "move", "translation_x", "translation_y", "translation_z")
INCOMPLETE_CSV_MARK = "# INCOMPLETE"


def _number(value) -> str:
    return "" if value is None else repr(float(value))


def to_csv(report) -> str:
    """One row a finding of every file; an ``INCOMPLETE_CSV_MARK`` line first when the run did
    not finish (it is not a row: a reader expecting the header there stops)."""
    out = io.StringIO()
    if not report.get("complete", True):
        out.write(f"{INCOMPLETE_CSV_MARK}: {report.get('incomplete_reason', '')}; the rows are "
                  f"the findings found before it stopped\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(REPORT_CSV_COLUMNS)
    for section, f in all_findings(report):
        a = f.get("point_a") or [None] * 3
        b = f.get("point_b") or [None] * 3
        t = f.get("translation") or [None] * 3
        gating = f.get("gating")
        writer.writerow([f["kind"], f.get("object_a") or "", f.get("object_b") or "",
                         _number(f.get("distance")), _number(f.get("clearance")),
                         *map(_number, a), *map(_number, b), f.get("part_a") or "",
                         f.get("part_b") or "", section["file"], f.get("rule") or "",
                         f.get("severity") or "", f.get("status") or "",
                         "" if gating is None else str(bool(gating)).lower(),
                         f.get("move") or "", *map(_number, t)])
    return out.getvalue()


def _units(section):
    return section.get("units")


def to_junit(report) -> str:
    """JUnit XML: a test suite per file; each gating finding a failing test case, the others
    (warnings, baselined) passing cases with the finding in ``system-out``; a clean file one
    passing case; a file that could not be checked one case with an ``error``."""
    root = ET.Element("testsuites", name=TOOL_NAME)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for section in report["files"]:
        suite = ET.SubElement(root, "testsuite", name=section["file"])
        tests = failures = errors = 0
        units = _units(section)
        if section["status"] == FAILED:
            case = ET.SubElement(suite, "testcase", classname=section["file"],
                                 name="open and check the file")
            ET.SubElement(case, "error", message=section.get("error") or "failed",
                          type="file_error").text = section.get("error") or ""
            tests, errors = 1, 1
        for f in section["findings"]:
            case = ET.SubElement(suite, "testcase", classname=section["file"],
                                 name=finding_title(f))
            text = finding_text(f, units)
            details = json.dumps(f, ensure_ascii=False, sort_keys=True)
            if f.get("gating"):
                failure = ET.SubElement(case, "failure", message=text, type=f["kind"])
                failure.text = f"{text}\nrule: {f.get('rule')}, severity: {f.get('severity')}" \
                               f", status: {f.get('status')}\n{details}"
                failures += 1
            else:
                why = _note(f) or "not gating"
                ET.SubElement(case, "system-out").text = f"{text} ({why})\n{details}"
            tests += 1
        if section["status"] == INCOMPLETE:
            case = ET.SubElement(suite, "testcase", classname=section["file"],
                                 name="the check ran to the end")
            ET.SubElement(case, "error", message=report.get("incomplete_reason") or
                          "incomplete", type="incomplete")
            tests, errors = tests + 1, errors + 1
        if tests == 0:
            ET.SubElement(suite, "testcase", classname=section["file"], name="no findings")
            tests = 1
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        totals["tests"] += tests
        totals["failures"] += failures
        totals["errors"] += errors
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"


def artifact_uri(path) -> str:
    """A file as a SARIF artifact location: a relative URI (forward slashes, escaped) for a
    relative path, a file URI for an absolute one."""
    if os.path.isabs(path):
        return "file://" + urllib.parse.quote(path.replace(os.sep, "/"))
    return urllib.parse.quote(path.replace(os.sep, "/"))


def to_sarif(report) -> str:
    """SARIF 2.1.0: one run; a rule per finding kind; each finding a result with its
    ``level`` from its severity, the file as artifact location and the objects as logical
    locations; baselined findings carry ``suppressions``."""
    kinds = sorted({f["kind"] for _, f in all_findings(report)},
                   key=lambda k: (ALL_KINDS.index(k) if k in ALL_KINDS else len(ALL_KINDS), k))
    rules = [{"id": kind, "name": kind,
              "shortDescription": {"text": KIND_TEXT.get(kind, kind)},
              "defaultConfiguration": {"level": "error"}} for kind in kinds]
    results = []
    for section, f in all_findings(report):
        objects = [o for o in (f.get("object_a"), f.get("object_b")) if o] or \
            list(f.get("objects") or ())
        result = {
            "ruleId": f["kind"],
            "ruleIndex": kinds.index(f["kind"]),
            "level": "warning" if f.get("severity") == "warning" else "error",
            "message": {"text": finding_text(f, _units(section))},
            "locations": [{
                "physicalLocation": {"artifactLocation": {"uri": artifact_uri(section["file"])}},
                "logicalLocations": [{"name": o, "fullyQualifiedName": f"{section['file']}:{o}",
                                      "kind": "object"} for o in objects],
            }],
            "partialFingerprints": {"convexFinding/v1": finding_fingerprint(section["file"], f)},
            "properties": {k: f[k] for k in ("distance", "clearance", "rule", "status",
                                              "gating", "move") if k in f},
        }
        if f.get("status") == "baselined":
            result["suppressions"] = [{"kind": "external", "status": "accepted",
                                       "justification": (f.get("baseline") or {}).get(
                                           "reason") or "accepted in the baseline"}]
        results.append(result)
    errors = [{"level": "error", "message": {"text": f"{s['file']}: {s.get('error')}"},
               "descriptor": {"id": "file_error"}}
              for s in report["files"] if s["status"] == FAILED]
    gate = report.get("gate") or {}
    sarif = {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {"name": TOOL_NAME, "version": report["tool"]["version"],
                                "rules": rules}},
            "invocations": [{"executionSuccessful": bool(report.get("complete"))
                             and not errors and gate.get("exit_code", 0) in (0, 1),
                             "toolExecutionNotifications": errors}],
            "results": results,
        }],
    }
    return json.dumps(sarif, indent=2, ensure_ascii=False) + "\n"


def finding_key(file, f) -> dict:
    """The baseline key of finding ``f`` (its dict) in ``file`` (``core.gate``'s baseline, and
    the fingerprint code scanning tracks a finding by)."""
    key = {"file": file, "kind": f["kind"]}
    if f["kind"] in TRAVERSAL_KINDS:
        # A region of the walkable map: its objects and where it is.
        key["objects"] = list(f.get("objects") or
                              [o for o in (f.get("object_a"), f.get("object_b")) if o])
        if f.get("point") is not None:
            cell = f.get("cell_size") or TRAVERSAL_KEY_CELL
            key["cell"] = [int(math.floor(float(v) / cell + 0.5)) for v in f["point"]]
        return key
    key["objects"] = [f["object_a"]] + ([f["object_b"]] if f.get("object_b") else [])
    parts = [_named_part(f.get("part_a")), _named_part(f.get("part_b"))]
    if any(parts):
        key["parts"] = parts[:len(key["objects"])]
    return key


def _named_part(part):
    return None if part is None or _POSITIONAL_PART.match(part) else part


def finding_fingerprint(file, f) -> str:
    """A stable hash of the finding's baseline key (``finding_key``): code scanning tracks a
    finding across runs by it."""
    key = json.dumps(finding_key(file, f), ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


# --- the older single-list reports (scripts, the core's tests) ---------------------------------
# The part columns come last, so that readers of the earlier columns by position still work.
CSV_COLUMNS = ("kind", "object_a", "object_b", "distance", "clearance",
               "point_a_x", "point_a_y", "point_a_z", "point_b_x", "point_b_y", "point_b_z",
               "part_a", "part_b")


def summary(findings) -> dict:
    """Counts per kind."""
    return counts(findings)


def report_dict(findings, **meta) -> dict:
    """A single-list report as a dict: ``meta`` (file, options, ...), counts, the findings."""
    return {**meta, "counts": summary(findings), "findings": [f.to_dict() for f in findings]}


def report_json(findings, **meta) -> str:
    return json.dumps(report_dict(findings, **meta), indent=2, sort_keys=False) + "\n"


def report_csv(findings) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for f in findings:
        writer.writerow([f.kind, f.object_a, f.object_b, repr(f.distance), repr(f.clearance),
                         *(repr(float(v)) for v in f.point_a),
                         *(repr(float(v)) for v in f.point_b),
                         f.part_a or "", f.part_b or ""])
    return out.getvalue()


def json_report(findings, complete=True, reason="", **meta) -> str:
    """A single-list JSON report: ``"complete"`` says whether the check ran to the end (else
    ``"incomplete_reason"`` says why not), then ``meta``, the counts and every finding."""
    status = {"complete": bool(complete)}
    if not complete:
        status["incomplete_reason"] = reason
    return report_json(findings, **status, **meta)


def csv_report(findings, complete=True, reason="") -> str:
    """A single-list CSV report, after an ``INCOMPLETE_CSV_MARK`` line when the check did not
    run to the end."""
    text = report_csv(findings)
    if complete:
        return text
    return (f"{INCOMPLETE_CSV_MARK}: {reason}; the rows are the findings found before it "
            f"stopped\n{text}")
