"""Level rules: which groups of objects matter to which, and what each must keep.

A rules file is TOML (read with ``tomllib``)::

    [defaults]            # every key optional
    clearance = 0.0       # as --clearance
    touch_tolerance = 0.0001
    floating = 0.01       # support gap, and drop distance beyond which a must_rest object floats
    support_angle = 45    # degrees from up (+Z) within which a contact supports
    severity = "error"    # error | warning
    engine = "both"       # unreal | godot | both: whose proxy naming rules apply
    one_hull_per_ucx = true   # Unreal's import option (its default: on)

    [severity]            # per finding kind
    floating = "warning"

    [groups.props]        # any of: collections, names (patterns), property (name=value or name)
    names = ["Crate*", "Barrel*"]
    collections = ["Props"]
    must_rest = true
    embed = 0.02          # allowed sinking into a static supporter
    static = false
    clearance = 0.05
    severity = "warning"

    [[pair]]              # between two groups; "*" = any object
    groups = ["props", "props"]
    clearance = 0.0
    [[pair]]
    groups = ["decals", "*"]
    ignore = true

    [traversal]           # the traversal check's agent (see core.traversal)
    agent_radius = 0.35

An object belongs to the first group, in file order, that matches it (by name pattern, by
collection, or by a custom property). A pair's clearance is decided by the first of these that
gives one (``Rules.pair_values``):

1. a command-line flag naming either object (``--object-clearance``): the larger of the two;
2. either object's own property (``convex_clearance``): the larger of the two;
3. the most specific ``[[pair]]`` that matches and sets ``clearance`` (named groups before
   ``"*"``; among equals, later before earlier);
4. the larger of the two groups' ``clearance``;
5. ``[defaults] clearance`` (``--clearance`` replaces it).

A rules error is a ``RulesError`` (a ValueError) naming the file, the line and the key; an
unknown key or a group that matches no object is a warning (``Rules.warnings``,
``Rules.unmatched_groups``). Values are in Blender units.
"""

from __future__ import annotations

import fnmatch
import hashlib
import math
import re
import tomllib
from dataclasses import dataclass, field

import numpy as np

ERROR, WARNING = "error", "warning"
SEVERITIES = (ERROR, WARNING)
ENGINES = ("unreal", "godot", "both")
ANY = "*"

# [defaults] keys and their default values (Blender units, degrees).
DEFAULTS = {
    "clearance": 0.0,
    "touch_tolerance": 1e-4,
    "floating": 0.01,
    "support_angle": 45.0,
    "severity": ERROR,
    "engine": None,                # None: the scene's setting (Sidebar), else "both"
    "one_hull_per_ucx": None,      # None: the scene's setting, else Unreal's own default
}
GROUP_KEYS = ("names", "collections", "property", "must_rest", "embed", "static", "clearance",
              "severity", "walkable", "blocks_agent")
PAIR_KEYS = ("groups", "clearance", "ignore", "severity")
TRAVERSAL_KEYS = ("agent_radius", "agent_height", "max_step", "max_slope", "cell", "start",
                  "min_area")
FINDING_KINDS = ("overlap", "sunk", "too_close", "floating", "unreachable", "narrow",
                 "low_headroom", "step")


class RulesError(ValueError):
    """A rules file that cannot be used: the message names the file, the line and the key."""


@dataclass(frozen=True)
class Group:
    name: str
    names: tuple = ()
    collections: tuple = ()
    property: tuple | None = None      # (name, value as text or None for "has it")
    must_rest: bool | None = None
    embed: float | None = None
    static: bool | None = None
    clearance: float | None = None
    severity: str | None = None
    walkable: bool | None = None
    blocks_agent: bool | None = None

    def matches(self, info) -> bool:
        names = info.all_names
        if any(fnmatch.fnmatchcase(n, p) for p in self.names for n in names):
            return True
        if any(fnmatch.fnmatchcase(c, p) for p in self.collections for c in info.collections):
            return True
        if self.property is not None:
            key, want = self.property
            if key in info.properties:
                return want is None or _same_value(info.properties[key], want)
        return False


@dataclass(frozen=True)
class PairRule:
    groups: tuple
    clearance: float | None = None
    ignore: bool | None = None
    severity: str | None = None

    @property
    def label(self) -> str:
        return f"pair {self.groups[0]}/{self.groups[1]}"

    @property
    def specificity(self) -> int:
        return sum(g != ANY for g in self.groups)


@dataclass
class EntryInfo:
    """What the rules see of one checked object (the Blender side fills it in)."""

    name: str                          # reported name or instance path
    object_name: str | None = None     # the object it is (an instance's object)
    collections: tuple = ()
    properties: dict = field(default_factory=dict)
    passive: bool = False              # a passive rigid body
    is_mesh: bool = False              # a triangle mesh (static level geometry)
    mover: str | None = None           # what a fix moves (None: nothing can be moved)
    instanced_by: str | None = None    # for a geometry-nodes/particle instance: its instancer

    @property
    def all_names(self) -> tuple:
        return (self.name,) if not self.object_name or self.object_name == self.name else \
            (self.name, self.object_name)


@dataclass
class Rules:
    defaults: dict = field(default_factory=lambda: dict(DEFAULTS))
    severity_by_kind: dict = field(default_factory=dict)
    groups: list = field(default_factory=list)
    pairs: list = field(default_factory=list)
    traversal: dict = field(default_factory=dict)
    source: str | None = None          # the file (or Text datablock) the rules came from
    sha256: str | None = None          # of its text
    warnings: list = field(default_factory=list)
    # Which defaults came from a flag rather than the file (for each finding's ``rule``).
    flagged: set = field(default_factory=set)

    # --- making ----------------------------------------------------------------------------
    @classmethod
    def from_text(cls, text: str, source: str = "rules") -> "Rules":
        return _parse(text, source)

    @classmethod
    def from_file(cls, path) -> "Rules":
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as problem:
            raise RulesError(f"{path}: cannot read the rules file "
                             f"({problem.strerror or problem})") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RulesError(f"{path}: the rules file is not UTF-8 text") from None
        return _parse(text, str(path))

    def with_flags(self, **flags) -> "Rules":
        """These rules with command-line values in place of their ``[defaults]`` (None: not
        given). ``floating`` given as a flag also makes every movable object must-rest."""
        out = Rules(dict(self.defaults), dict(self.severity_by_kind), list(self.groups),
                    list(self.pairs), dict(self.traversal), self.source, self.sha256,
                    list(self.warnings), set(self.flagged))
        for key, value in flags.items():
            if value is None:
                continue
            if key not in DEFAULTS:
                raise ValueError(f"unknown rules flag {key!r}")
            out.defaults[key] = _check_default(key, value, lambda m: ValueError(m))
            out.flagged.add(key)
        return out

    # --- per object ------------------------------------------------------------------------
    def assign(self, infos) -> "Assignment":
        """Each object's group and the per-object values the checks need."""
        return Assignment(self, list(infos))

    def unmatched_groups(self, assignment) -> list:
        used = set(assignment.group_index.tolist())
        return [g.name for k, g in enumerate(self.groups) if k not in used]

    def severity_for(self, kind, groups=(), pair=None):
        """(severity, what decided it) of a finding of ``kind`` between ``groups`` (Group or
        None each) under ``pair`` (a PairRule or None)."""
        if pair is not None and pair.severity is not None:
            return pair.severity, pair.label
        set_by = [g for g in groups if g is not None and g.severity is not None]
        if set_by:
            worst = min(set_by, key=lambda g: SEVERITIES.index(g.severity))
            return worst.severity, f"group {worst.name}"
        if kind in self.severity_by_kind:
            return self.severity_by_kind[kind], f"severity.{kind}"
        return self.defaults["severity"], "defaults"


class Assignment:
    """Rules applied to a list of objects: per object its group, static/movable, must-rest,
    embed; per pair its clearance, ignore and the rule that decided them (``pair_values``)."""

    def __init__(self, rules: Rules, infos: list) -> None:
        self.rules = rules
        self.infos = infos
        n = len(infos)
        groups = rules.groups
        index = np.full(n, len(groups), dtype=np.int64)        # len(groups): no group
        for k, info in enumerate(infos):
            for g, group in enumerate(groups):
                if group.matches(info):
                    index[k] = g
                    break
        self.group_index = index
        table = groups + [None]
        self.group_of = [table[g] for g in index.tolist()]
        flag_floating = "floating" in rules.flagged
        self.static = np.array([bool((g is not None and g.static) or info.passive or info.is_mesh)
                                for g, info in zip(self.group_of, infos)], dtype=bool)
        self.must_rest = np.array([(g is not None and bool(g.must_rest)) or
                                   (flag_floating and not s)
                                   for g, s in zip(self.group_of, self.static)], dtype=bool)
        # A static object never floats: it is the level.
        self.must_rest &= ~self.static
        self.embed = np.array([g.embed if g is not None and g.embed is not None else 0.0
                               for g in self.group_of], dtype=float)
        self.group_clearance = np.array(
            [np.nan if g is None or g.clearance is None else g.clearance for g in table],
            dtype=float)
        self._pair_table = _pair_table(rules, len(groups))

    @property
    def names(self):
        return [info.name for info in self.infos]

    def pair_rule(self, i, j, key):
        """The most specific [[pair]] matching objects i and j that sets ``key``, or None."""
        return self._pair_table[key][self.group_index[i]][self.group_index[j]]

    def ignored_pairs(self, pairs) -> np.ndarray:
        """True for the rows of ``pairs`` that a [[pair]] says to ignore."""
        if not len(pairs) or not any(p.ignore for p in self.rules.pairs):
            return np.zeros(len(pairs), dtype=bool)
        table = np.array([[bool(r.ignore) if r is not None else False for r in row]
                          for row in self._pair_table["ignore"]], dtype=bool)
        gi, gj = self.group_index[pairs[:, 0]], self.group_index[pairs[:, 1]]
        return table[gi, gj]

    def clearance_levels(self, flag, own):
        """Per-object clearance bound for the broad phase and the pair values' inputs:
        ``flag`` and ``own`` are arrays (NaN: none) of flag overrides and own properties."""
        self.flag = np.asarray(flag, dtype=float)
        self.own = np.asarray(own, dtype=float)
        table = self._pair_table["clearance"]
        row_max = np.array([max([r.clearance for r in row if r is not None] or [0.0])
                            for row in table], dtype=float)
        c0 = self.rules.defaults["clearance"]
        group = self.group_clearance[self.group_index]
        stack = np.vstack([np.nan_to_num(self.flag, nan=0.0), np.nan_to_num(self.own, nan=0.0),
                           row_max[self.group_index], np.nan_to_num(group, nan=0.0),
                           np.full(len(self.infos), c0)])
        return stack.max(axis=0)

    def pair_clearance(self, pairs):
        """(clearance per pair, label index per pair, labels), vectorised over the rows of
        ``pairs``: each object's own value (flag, else property) or, without one, the pair's
        rule value (its most specific [[pair]], else the larger group value, else the
        defaults); the pair keeps the larger of its two objects' values."""
        i, j = pairs[:, 0], pairs[:, 1]
        n = len(pairs)
        labels = ["flag --clearance" if "clearance" in self.rules.flagged else "defaults",
                  "groups", "property convex_clearance", "flag --object-clearance"]
        base = np.full(n, self.rules.defaults["clearance"], dtype=float)
        base_label = np.zeros(n, dtype=np.int64)
        group = self.group_clearance[self.group_index]
        a, b = group[i], group[j]
        has = ~(np.isnan(a) & np.isnan(b))
        base[has] = np.fmax(a, b)[has]
        base_label[has] = 1
        table = self._pair_table["clearance"]
        if n and any(r is not None for row in table for r in row):
            gi, gj = self.group_index[i].tolist(), self.group_index[j].tolist()
            for k in range(n):
                rule = table[gi[k]][gj[k]]
                if rule is not None:
                    base[k] = rule.clearance
                    if rule.label not in labels:
                        labels.append(rule.label)
                    base_label[k] = labels.index(rule.label)
        out = base.copy()
        which = base_label.copy()
        for side in (i, j):
            value = np.where(~np.isnan(self.flag[side]), self.flag[side], self.own[side])
            level = np.where(~np.isnan(self.flag[side]), 3, 2)
            own = ~np.isnan(value)
            # An object's own value replaces the rules' for it; the pair keeps the larger.
            side_value = np.where(own, value, base)
            side_label = np.where(own, level, base_label)
            larger = (side_value > out) | ((side_value == out) & own)
            first = side is i
            take = np.ones(n, dtype=bool) if first else larger
            out = np.where(take, side_value, out)
            which = np.where(take, side_label, which)
        return out, which, labels

    def group_label(self, i, j) -> str:
        names = [g.name if g is not None else ANY for g in (self.group_of[i], self.group_of[j])]
        return "groups " + "/".join(names)


def _pair_table(rules, group_count):
    """For each key, a (G+1)×(G+1) table of the most specific pair rule setting it."""
    names = {g.name: k for k, g in enumerate(rules.groups)}
    out = {}
    for key in ("clearance", "ignore", "severity"):
        table = [[None] * (group_count + 1) for _ in range(group_count + 1)]
        best = [[(-1, -1)] * (group_count + 1) for _ in range(group_count + 1)]
        for order, rule in enumerate(rules.pairs):
            if getattr(rule, key) is None:
                continue
            a, b = (list(range(group_count + 1)) if g == ANY else [names[g]]
                    for g in rule.groups)
            rank = (rule.specificity, order)
            for x in a:
                for y in b:
                    for p, q in ((x, y), (y, x)):
                        if rank > best[p][q]:
                            best[p][q] = rank
                            table[p][q] = rule
        out[key] = table
    return out


def _same_value(value, text) -> bool:
    if isinstance(value, bool):
        return str(value).lower() == str(text).lower()
    if isinstance(value, (int, float)) and not isinstance(text, bool):
        try:
            return float(value) == float(text)
        except (TypeError, ValueError):
            return False
    return str(value) == str(text)


# --- parsing --------------------------------------------------------------------------------
def _parse(text: str, source: str) -> Rules:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as problem:
        raise RulesError(f"{source}: {problem}") from None
    lines = text.splitlines()
    rules = Rules(source=source, sha256=hashlib.sha256(text.encode("utf-8")).hexdigest())

    def error(section, key, message):
        line = _line_of(lines, section, key)
        where = f"{source}:{line}" if line else source
        name = f"{section}.{key}" if section and key else (section or key)
        return RulesError(f"{where}: {name}: {message}")

    def unknown(section, key):
        line = _line_of(lines, section, key)
        where = f"{source}:{line}" if line else source
        rules.warnings.append(f"{where}: unknown key {section + '.' if section else ''}{key} "
                              f"(ignored)")

    defaults = _table(data, "defaults", error)
    for key, value in defaults.items():
        if key not in DEFAULTS:
            unknown("defaults", key)
            continue
        rules.defaults[key] = _check_default(key, value, lambda m: error("defaults", key, m))
    for kind, value in _table(data, "severity", error).items():
        if kind not in FINDING_KINDS:
            unknown("severity", kind)
            continue
        rules.severity_by_kind[kind] = _severity(value, lambda m: error("severity", kind, m))
    for name, body in _table(data, "groups", error).items():
        section = f"groups.{name}"
        if name == ANY:
            raise error(section, "", '"*" is not a group name (it means any object)')
        if not isinstance(body, dict):
            raise error("groups", name, "must be a table ([groups.NAME])")
        rules.groups.append(_group(name, body, section, error, unknown))
    known = {g.name for g in rules.groups}
    pairs = data.get("pair", [])
    if not isinstance(pairs, list):
        raise error("pair", "", "must be an array of tables ([[pair]])")
    for k, body in enumerate(pairs):
        section = "pair"
        if not isinstance(body, dict):
            raise error(section, "", "must be a table ([[pair]])")
        for key in body:
            if key not in PAIR_KEYS:
                unknown(section, key)
        groups = body.get("groups")
        if (not isinstance(groups, list) or len(groups) != 2
                or not all(isinstance(g, str) for g in groups)):
            raise error(section, "groups", f"[[pair]] number {k + 1} needs groups = two group "
                                           f"names (or \"*\"), got {groups!r}")
        for g in groups:
            if g != ANY and g not in known:
                raise error(section, "groups", f"no group named {g!r} "
                                               f"(groups: {', '.join(sorted(known)) or 'none'})")
        clearance = body.get("clearance")
        if clearance is not None:
            clearance = _length(clearance, lambda m: error(section, "clearance", m))
        ignore = body.get("ignore")
        if ignore is not None and not isinstance(ignore, bool):
            raise error(section, "ignore", f"must be true or false, got {ignore!r}")
        severity = body.get("severity")
        if severity is not None:
            severity = _severity(severity, lambda m: error(section, "severity", m))
        rules.pairs.append(PairRule(tuple(groups), clearance, ignore, severity))
    for key, value in _table(data, "traversal", error).items():
        if key not in TRAVERSAL_KEYS:
            unknown("traversal", key)
            continue
        if key == "start":
            if not isinstance(value, list) or not all(isinstance(s, (str, list)) for s in value):
                raise error("traversal", key, "must be a list of object names or [x, y, z]")
            rules.traversal[key] = value
        else:
            rules.traversal[key] = _length(value, lambda m: error("traversal", key, m))
    for top in data:
        if top not in ("defaults", "severity", "groups", "pair", "traversal"):
            unknown("", top)
    return rules


def _table(data, key, error):
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise error(key, "", "must be a table")
    return value


def _group(name, body, section, error, unknown) -> Group:
    values = {}
    for key, value in body.items():
        if key not in GROUP_KEYS:
            unknown(section, key)
            continue

        def fail(message, key=key):
            return error(section, key, message)

        if key in ("names", "collections"):
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise fail("must be a list of names or patterns")
            values[key] = tuple(value)
        elif key == "property":
            if not isinstance(value, str) or not value.strip("= "):
                raise fail('must be "name=value" or "name"')
            prop, sep, want = value.partition("=")
            values[key] = (prop.strip(), want.strip() if sep else None)
        elif key in ("must_rest", "static", "walkable", "blocks_agent"):
            if not isinstance(value, bool):
                raise fail(f"must be true or false, got {value!r}")
            values[key] = value
        elif key in ("embed", "clearance"):
            values[key] = _length(value, fail)
        elif key == "severity":
            values[key] = _severity(value, fail)
    if not any(k in values for k in ("names", "collections", "property")):
        raise error(section, "", "a group needs names, collections or property to match "
                                 "objects by")
    return Group(name, **values)


def _check_default(key, value, fail):
    if key == "severity":
        return _severity(value, fail)
    if key == "engine":
        if not isinstance(value, str) or value.lower() not in ENGINES:
            raise fail(f"must be one of {', '.join(ENGINES)}, got {value!r}")
        return value.lower()
    if key == "one_hull_per_ucx":
        if not isinstance(value, bool):
            raise fail(f"must be true or false, got {value!r}")
        return value
    if key == "support_angle":
        angle = _number(value, fail)
        if not 0.0 <= angle <= 90.0:
            raise fail(f"must be an angle from 0 to 90 degrees, got {value!r}")
        return angle
    return _length(value, fail)


def _number(value, fail) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(f"must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise fail(f"must be a finite number, got {value!r}")
    return value


def _length(value, fail) -> float:
    value = _number(value, fail)
    if value < 0.0:
        raise fail(f"must be >= 0, got {value!r}")
    return value


def _severity(value, fail) -> str:
    if not isinstance(value, str) or value.lower() not in SEVERITIES:
        raise fail(f'must be "error" or "warning", got {value!r}')
    return value.lower()


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _line_of(lines, section, key):
    """Line number (1-based) of ``key`` in ``section`` (dotted, as in the file), else of the
    section's header, else None: for error messages only."""
    current = ""
    header_line = None
    for number, line in enumerate(lines, 1):
        match = _HEADER.match(line)
        if match:
            current = match.group(1).replace('"', "").replace(" ", "")
            if current == section and header_line is None:
                header_line = number
            if not section and current == key:      # a table of its own at the top level
                return number
            continue
        if key and current == section and re.match(rf"^\s*{re.escape(key)}\s*=", line):
            return number
    return header_line
