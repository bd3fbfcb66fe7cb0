"""The gate: which findings fail the build, from their severity and a baseline of accepted ones.

A *baseline* is a small JSON file of findings a team has accepted (``--write-baseline``), meant
to be committed and reviewed; with ``--baseline`` only findings not in it fail the build, the
way linters' baselines work. It reads::

    {
      "convex_tools_baseline": 1,
      "tolerance": 0.001,
      "entries": [
        {"file": "levels/a.blend", "kind": "overlap", "objects": ["Barrel", "Crate"],
         "distance": -0.2, "reason": "fixed in the art pass", "expires": "2026-03-01"},
        ...
      ]
    }

An entry's key (``finding_key``) is the file as given on the command line, the kind, the
objects' names or instance paths (an instance keeps its index: it shifts when points are added
before it, and the finding is then new), the parts only where they have names (a proxy's, a
compound part's; "triangle 17" and "part 3" are positions, not names), and for traversal
findings the objects and the point rounded to the cell size. ``reason`` and ``expires`` (an ISO
date; from the day after it the entry no longer accepts the finding) are optional, written by
people. ``distance`` is the finding's signed distance when it was accepted: a finding worse than
that by more than ``tolerance`` (a deeper overlap, a smaller gap, a longer drop) fails again.
Entries are sorted by key, so a changed baseline reviews as a small diff.

``apply`` gates a report (``core.report``): each finding gets ``status`` ("new", "baselined",
"worse", "expired") and ``gating``; the report's ``gate`` says what was decided and the exit
code: 2 when a file could not be checked (or ``strict`` and a pattern matched nothing or an
object was left unchecked), else 1 when a finding gates, else 0. Entries of the files checked
that matched nothing are *fixed*: listed, and ``pruned`` leaves them out.
"""

from __future__ import annotations

import datetime
import json
import math

from .report import CHECKED, FAILED, all_findings, finding_key, refresh_counts

BASELINE_MARK = "convex_tools_baseline"
BASELINE_VERSION = 1
# A baselined finding fails again once it is worse than its entry by more than this (Blender
# units: 1 mm in a level modelled in metres; above the float noise of re-measuring a pair, below
# any change a designer makes on purpose).
DEFAULT_TOLERANCE = 0.001

FAIL_ON = ("error", "warning")
GATING_SEVERITIES = {"error": {"error"}, "warning": {"error", "warning"}}

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

NEW, BASELINED, WORSE, EXPIRED = "new", "baselined", "worse", "expired"


# --- keys ---------------------------------------------------------------------------------------
# (``finding_key``, the baseline key of a finding, is ``core.report``'s: its SARIF fingerprints
# are made of it too.)
def _key_text(key) -> str:
    return json.dumps({k: key[k] for k in ("file", "kind", "objects", "parts", "cell")
                       if k in key}, sort_keys=True, ensure_ascii=False)


def _badness(kind, distance):
    """How bad a finding is along its kind's measure (larger is worse), or None."""
    if kind in ("overlap", "sunk", "too_close"):
        return None if distance is None else -float(distance)
    if kind == "floating":
        return math.inf if distance is None else float(distance)
    return None


# --- the baseline file ----------------------------------------------------------------------------
class Baseline:
    """Accepted findings: ``entries`` (dicts as in the file), ``tolerance``, ``path``."""

    def __init__(self, entries=(), tolerance=DEFAULT_TOLERANCE, path=None):
        self.entries = [dict(e) for e in entries]
        self.tolerance = float(tolerance)
        self.path = path

    def to_text(self) -> str:
        entries = sorted(self.entries, key=_key_text)
        return json.dumps({BASELINE_MARK: BASELINE_VERSION, "tolerance": self.tolerance,
                           "entries": [_ordered_entry(e) for e in entries]},
                          indent=2, ensure_ascii=False) + "\n"


ENTRY_FIELDS = ("file", "kind", "objects", "parts", "cell", "distance", "reason", "expires")


def _ordered_entry(entry) -> dict:
    return {k: entry[k] for k in ENTRY_FIELDS if k in entry and
            (entry[k] is not None or k == "distance")}


def parse_baseline(text, path="baseline") -> Baseline:
    """A baseline from its text; ``ValueError`` naming ``path`` and what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as problem:
        raise ValueError(f"{path}: not a JSON baseline ({problem})") from None
    if not isinstance(data, dict) or data.get(BASELINE_MARK) != BASELINE_VERSION:
        raise ValueError(f"{path}: not a baseline (expected {{\"{BASELINE_MARK}\": "
                         f"{BASELINE_VERSION}, ...}})")
    tolerance = data.get("tolerance", DEFAULT_TOLERANCE)
    if not isinstance(tolerance, (int, float)) or not math.isfinite(tolerance) or tolerance < 0:
        raise ValueError(f"{path}: tolerance must be a number >= 0, got {tolerance!r}")
    entries = data.get("entries", [])
    if not isinstance(entries, list):
        raise ValueError(f"{path}: entries must be a list")
    for n, entry in enumerate(entries, 1):
        where = f"{path}: entry {n}"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} is not an object")
        unknown = set(entry) - set(ENTRY_FIELDS)
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        for name in ("file", "kind"):
            if not isinstance(entry.get(name), str):
                raise ValueError(f"{where}: {name} must be a string")
        if not isinstance(entry.get("objects"), list):
            raise ValueError(f"{where}: objects must be a list of names")
        distance = entry.get("distance")
        if distance is not None and not isinstance(distance, (int, float)):
            raise ValueError(f"{where}: distance must be a number or null")
        if entry.get("expires") is not None:
            try:
                datetime.date.fromisoformat(str(entry["expires"]))
            except ValueError:
                raise ValueError(f"{where}: expires must be a date like 2026-03-01, got "
                                 f"{entry['expires']!r}") from None
    return Baseline(entries, tolerance, path)


def baseline_from_report(report, existing=None, tolerance=None) -> Baseline:
    """Every finding of the files ``report`` checked, accepted. Entries of ``existing`` for
    other files stay, and an entry already accepted keeps its ``reason`` and ``expires``."""
    checked = {s["file"] for s in report["files"] if s["status"] == CHECKED}
    kept = [e for e in (existing.entries if existing else []) if e["file"] not in checked]
    people = {}
    for e in existing.entries if existing else []:
        people.setdefault(_key_text(e), []).append(e)
    entries = []
    for section, f in all_findings(report):
        if section["status"] != CHECKED:
            continue
        key = finding_key(section["file"], f)
        entry = {**key, "distance": None if f.get("distance") is None
                 else round(float(f["distance"]), 6)}
        earlier = people.get(_key_text(key))
        if earlier:
            old = earlier.pop(0)
            entry.update({k: old[k] for k in ("reason", "expires") if old.get(k) is not None})
        entries.append(entry)
    if tolerance is None:
        tolerance = existing.tolerance if existing else DEFAULT_TOLERANCE
    return Baseline(kept + entries, tolerance)


def pruned(baseline, fixed) -> Baseline:
    """``baseline`` without the ``fixed`` entries."""
    gone = {}
    for e in fixed:
        gone[_key_text(e)] = gone.get(_key_text(e), 0) + 1
    entries = []
    for e in baseline.entries:
        k = _key_text(e)
        if gone.get(k):
            gone[k] -= 1
            continue
        entries.append(e)
    return Baseline(entries, baseline.tolerance, baseline.path)


# --- the gate -----------------------------------------------------------------------------------
def _expired(entry, today) -> bool:
    expires = entry.get("expires")
    return expires is not None and datetime.date.fromisoformat(str(expires)) < today


def unmatched_everywhere(report) -> list:
    """Patterns of the options that matched nothing in any file that was checked."""
    sections = [s for s in report["files"] if s["status"] != FAILED]
    if not sections:
        return []
    common = set(sections[0].get("unmatched", []))
    for s in sections[1:]:
        common &= set(s.get("unmatched", []))
    return [p for p in sections[0].get("unmatched", []) if p in common]


def apply(report, baseline=None, fail_on="error", strict=False, today=None) -> int:
    """Gate ``report`` in place (see the module doc); the exit code."""
    if fail_on not in GATING_SEVERITIES:
        raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    gating_severities = GATING_SEVERITIES[fail_on]
    today = today or datetime.date.today()
    tolerance = baseline.tolerance if baseline is not None else DEFAULT_TOLERANCE
    waiting = {}
    for entry in baseline.entries if baseline is not None else ():
        waiting.setdefault(_key_text(entry), []).append(entry)
    counts = {NEW: 0, BASELINED: 0, WORSE: 0, EXPIRED: 0}
    gating = 0
    for section, f in all_findings(report):
        entries = waiting.get(_key_text(finding_key(section["file"], f)))
        entry = entries.pop(0) if entries else None
        status = NEW
        if entry is not None:
            before = _badness(f["kind"], entry.get("distance"))
            now = _badness(f["kind"], f.get("distance"))
            if _expired(entry, today):
                status = EXPIRED
            elif before is not None and now is not None and now > before + tolerance:
                status = WORSE
            else:
                status = BASELINED
            f["baseline"] = {k: entry.get(k) for k in ("distance", "reason", "expires")}
        else:
            f.pop("baseline", None)
        f["status"] = status
        f["gating"] = status != BASELINED and f.get("severity", "error") in gating_severities
        counts[status] += 1
        gating += f["gating"]
    # Entries of files checked to the end that no finding took: fixed.
    checked = {s["file"] for s in report["files"] if s["status"] == CHECKED}
    fixed = sorted((_ordered_entry(e) for entries in waiting.values() for e in entries
                    if e["file"] in checked), key=_key_text)

    warnings = [f"{p} matches nothing in any file" for p in unmatched_everywhere(report)]
    errors = [f"{s['file']}: {s.get('error')}" for s in report["files"] if s["status"] == FAILED]
    if strict:
        errors += [f"--strict: {w}" for w in warnings]
        errors += [f"--strict: {s['file']}: {u['object']} was not checked ({u['reason']})"
                   for s in report["files"] for u in s.get("objects_unchecked", [])]
    code = EXIT_ERROR if errors else EXIT_FINDINGS if gating else EXIT_CLEAN
    report["warnings"] = warnings
    report["gate"] = {
        "fail_on": fail_on,
        "strict": bool(strict),
        "baseline": None if baseline is None else baseline.path,
        "tolerance": tolerance,
        "gating": gating,
        "statuses": counts,
        "fixed": fixed,
        "errors": errors,
        "exit_code": code,
    }
    refresh_counts(report)
    return code


def ungated(report) -> dict:
    """``report`` without what a gate added (a shard's report, or one to gate again)."""
    for _, f in all_findings(report):
        for k in ("status", "gating", "baseline"):
            f.pop(k, None)
    report["gate"] = None
    report["warnings"] = []
    return report


__all__ = ["Baseline", "apply", "baseline_from_report", "finding_key", "parse_baseline",
           "pruned", "ungated", "unmatched_everywhere", "DEFAULT_TOLERANCE", "FAIL_ON"]
