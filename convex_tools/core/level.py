"""Level-design collision checks: every pair of shapes closer than the clearance they need.

A level is a list of world-space shapes with names. A pair is a *finding* when its signed
distance s (the distance when apart, minus the penetration depth when overlapping) is

    overlap     s < -touch_tolerance             (a real overlap, not two faces resting together)
    too_close   -touch_tolerance <= s < c        (only when the pair needs a clearance c > 0)

where c is the larger of the two objects' clearances (an object's clearance is the free space it
needs around it; a pair must satisfy the more demanding of the two).

The work is in three phases, the first two vectorised over all objects at once:

1. broad phase: AABBs fattened by each object's clearance go through sort-and-sweep
   (``broadphase.candidate_pairs``);
2. cheap rejections: pairs ignored by name pattern, and pairs whose AABB gap (a lower bound on
   their distance) already reaches the clearance;
3. narrow phase: distances, and penetration depths for overlapping pairs. The batched engine
   (``batch.screen``) takes all pairs at once in numpy: it drops the pairs it certifies clear,
   and measures the overlaps of polytopes (``batch_epa``) and the distances clearly inside or
   outside a clearance; the single queries (``distance``, ``penetration``) measure the rest,
   in worker processes with ``jobs`` > 1 (``run_to_end``). Checks of fewer than
   ``MIN_PAIRS_FOR_BATCH`` pairs go to the single queries whole.

Concave shapes (``Compound``, ``TriangleMesh``) take part like any other: their boxes come from
their own ``aabb()`` and the narrow phase runs the queries, which answer part by part. A pair
with a concave shape asks its distance only up to the clearance (``concave.distance`` with
``max_distance``): part pairs whose boxes, or a triangle's plane, are already farther are never
tested, so a prop standing clear of a terrain (whose box holds the whole level) costs a walk of
the terrain's tree and no narrow-phase test. A finding names the parts involved (``part_a``/
``part_b``: the compound's part names, or "part 3", "triangle 17"). Two triangle meshes are
never checked against each other: both are static level geometry with no inside (terrain
meeting a room shell is how levels are built, not a collision), and such pairs are only counted
(``Stats.static_pairs``).

Only phase 3 costs per pair, so it runs in chunks (``LevelCheck.step``) that a caller can
interleave with progress reports and a cancel button. Findings come out sorted by kind and names,
and each pair's finding is computed the same way wherever and whenever it runs, so the same
level always gives the same report, byte for byte, whatever ``jobs``.
"""

from __future__ import annotations

import fnmatch
import contextlib
import gc
import math
import multiprocessing
import os
import signal
import time
from dataclasses import dataclass, field

import numpy as np

from . import batch, broadphase, classify, concave
from .compound import Compound, ConcaveShape
from .hull import Hull
from .intrusion import mesh_intrusion
from .placement import LazyShapes, PoseTable, world_aabbs
from .queries import distance, penetration
# The finding kinds and the reports live in ``core.report`` (one model, every format a writer
# of it); these names stay importable from here for the code, scripts and tests that import
# them from ``core.level``.
from .report import (ALL_KINDS, CSV_COLUMNS, FLOATING, KINDS, LOW_HEADROOM,  # noqa: F401
                     NARROW, OVERLAP, STEP, SUNK, TOO_CLOSE, TRAVERSAL_KINDS, UNREACHABLE,
                     count_line, report_csv, report_dict, report_json, report_table, summary)
from .rules import EntryInfo, Rules
from .shapes import ConvexHullOf, MinkowskiSum, Transformed


# Overlaps no deeper than this are two surfaces resting on each other, not a collision (model
# units: 0.1 mm in a level modelled in metres; well above the float noise of snapped vertices
# and far below anything a player would see).
TOUCH_TOLERANCE = 1e-4

# Narrow-phase pairs per step of ``check_shapes``: one step is a few milliseconds, so progress
# and cancel requests are seen several times a second.
PAIRS_PER_STEP = 256
# With fewer pairs than this the single queries measure them all: the batch's numpy calls cost
# about the same for 10 pairs as for 1,000 (bench level: 47 pairs took 0.07 s batched, 0.04 s
# single; 166 pairs 0.054 s and 0.043 s; 1,747 pairs 0.19 s and 0.54 s).
MIN_PAIRS_FOR_BATCH = 512
# Pairs the batched engine screens per step: its cost per pair falls with the batch (each
# numpy call serves more pairs) and a step of this many takes a few tenths of a second.
BATCH_PAIRS_PER_STEP = 16384
# Pairs per task handed to a worker process (``jobs`` > 1): small enough that the tasks of a
# few heavy pairs (a terrain under many props) spread over the workers, large enough that a
# task's overhead stays small (100k bench level, 1,890 pairs on 2 workers: 64 a task took
# 0.74 s, 256 0.63 s, 1,000 0.85 s; noisy, ±0.1 s).
PAIRS_PER_TASK = 128
# Below this many pairs left for the single queries, worker processes cost more than they save
# (a fork of a process holding a level is tens of milliseconds).
MIN_PAIRS_FOR_JOBS = 256


ERROR = "error"
WARNING = "warning"
SEVERITIES = (ERROR, WARNING)

# Penetration method for overlapping pairs ("epa", "mpr" or "hybrid", see core.penetration).
PENETRATION_METHOD = "epa"


def _vector(value):
    return None if value is None else [float(v) for v in value]


@dataclass(frozen=True, eq=False)
class Finding:
    """Something in the level a designer should fix (API.md lists every field).

    ``distance`` is signed: negative for an overlap or a sunk object (minus its depth), else the
    gap (``too_close``) or the drop distance (``floating``; None when nothing is below).
    ``point_a`` lies on ``object_a`` and ``point_b`` on ``object_b``; for an overlap
    ``point_b - point_a`` is the depth vector (moving A by it leaves the two touching), for a gap
    they are the closest points. ``clearance`` is the clearance the pair had to keep.
    ``object_a`` is the name that sorts first (for pair findings without a role; ``sunk`` and
    ``floating`` put the object that sinks or floats first). ``part_a``/``part_b`` label the
    parts of a ``Compound`` or ``TriangleMesh`` that realised the finding (None for a convex
    object). ``move`` names the object to move and ``translation`` the move that resolves the
    finding (None when nothing can be moved); ``contacts`` lists, for a triangle mesh, each
    touched triangle's ``part``, ``depth`` and ``normal``. ``rule`` says what decided the
    finding and ``severity`` is ``error`` or ``warning``. Traversal findings carry ``objects``,
    ``point``, ``area`` and ``bbox``.
    """

    object_a: str
    object_b: str | None
    kind: str
    distance: float | None
    point_a: np.ndarray | None
    point_b: np.ndarray | None
    clearance: float = 0.0
    part_a: str | None = None
    part_b: str | None = None
    move: str | None = None
    translation: np.ndarray | None = None
    contacts: tuple | None = None     # ({"part", "depth", "normal"}, ...)
    rule: str | None = None
    severity: str = ERROR
    objects: tuple | None = None
    point: np.ndarray | None = None
    area: float | None = None
    bbox: tuple | None = None         # (lower, upper)
    extra: dict | None = None         # kind-specific fields (e.g. a traversal reason's width)

    @property
    def depth(self) -> float:
        """Penetration depth (0 for a clearance violation)."""
        return 0.0 if self.distance is None else max(0.0, -self.distance)

    @property
    def shortfall(self) -> float:
        """How far the pair must move apart to keep its clearance."""
        return self.clearance - (self.distance or 0.0)

    def sort_key(self) -> tuple:
        return (self.kind, self.object_a, self.object_b or "",
                tuple(self.point) if self.point is not None else ())

    def to_dict(self) -> dict:
        out = {
            "object_a": self.object_a,
            "object_b": self.object_b,
            "kind": self.kind,
            "distance": None if self.distance is None else float(self.distance),
            "clearance": float(self.clearance),
            "point_a": _vector(self.point_a),
            "point_b": _vector(self.point_b),
            "part_a": self.part_a,
            "part_b": self.part_b,
            "move": self.move,
            "translation": _vector(self.translation),
            "contacts": None if self.contacts is None else [
                {"part": c["part"], "depth": float(c["depth"]), "normal": _vector(c["normal"])}
                for c in self.contacts],
            "rule": self.rule,
            "severity": self.severity,
        }
        if self.kind in TRAVERSAL_KINDS or self.objects is not None:
            out.update(objects=None if self.objects is None else list(self.objects),
                       point=_vector(self.point), area=self.area,
                       bbox=None if self.bbox is None else [_vector(v) for v in self.bbox])
        if self.extra:
            out.update(self.extra)
        return out

    def __eq__(self, other) -> bool:
        if not isinstance(other, Finding):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self):
        return hash(self.sort_key())

    def __repr__(self) -> str:
        distance = "None" if self.distance is None else f"{self.distance:.6g}"
        return (f"Finding({self.object_a!r}, {self.object_b!r}, {self.kind!r}, "
                f"distance={distance}, clearance={self.clearance:.6g})")


class CheckCancelled(Exception):
    """Raised by ``check_shapes`` when ``should_cancel()`` said so; carries the findings so far."""

    def __init__(self, findings):
        super().__init__(f"level check cancelled after {len(findings)} finding(s)")
        self.findings = findings


@dataclass
class Stats:
    """What each phase did and took (seconds), for reports and benchmarks."""

    objects: int = 0
    candidates: int = 0        # pairs from the broad phase
    ignored: int = 0           # dropped by ignore_pairs and [[pair]] ignore rules
    culled: int = 0            # dropped by the AABB-gap lower bound
    narrow: int = 0            # pairs that went through the narrow phase
    batch_clear: int = 0       # of those, certified clear by the batched engine (``batch``)
    batch_depths: int = 0      # of those, overlaps whose depth the batched engine measured
    batch_distances: int = 0   # of those, pairs apart whose distance the batched engine gave
    single: int = 0            # of those, measured by the single queries (exact reports)
    penetrations: int = 0      # pairs that also needed a penetration depth
    times: dict = field(default_factory=dict)
    skipped_objects: list = field(default_factory=list)  # (name, reason) not checked
    excluded_objects: list = field(default_factory=list)  # (name, reason) left out by rule
    shapes_made: int = 0       # Blender side: shapes built from an object's content
    shapes_shared: int = 0     # Blender side: shapes moved from an instance with equal content
    part_culled: int = 0       # concave pairs with no part pair within the clearance
    static_pairs: int = 0      # triangle mesh against triangle mesh: not checked
    supports: int = 0          # support pairs (resting contact): never too close
    lift_tests: int = 0        # touching pairs whose push direction needed a lift test
    drops: int = 0             # drop sweeps of must-rest objects without support


class LevelCheck:
    """One level check, run in steps: ``while not check.step(): report(check.done, check.total)``.

    Construction does the vectorised phases (rules, broad phase, ignores, AABB-gap cull);
    ``step`` runs the narrow phase on the next chunk of pairs. ``findings`` classifies the
    measured pairs (``classify``) once all steps are done.

    The narrow phase is in two stages. The batched engine (``batch.screen``) screens the pairs
    16k at a time, in numpy: it drops every pair it certifies farther apart than the pair's
    *reach* (its clearance, or the floating tolerance when one of the two must rest) — most
    pairs of a level — and measures the overlaps, contacts and distances it can; the rest —
    curved overlaps, some touching pairs, distances within rounding of the reach, what the batch
    hands back — are measured by the single queries (``distance``, ``penetration``; a convex
    shape against a triangle mesh by its intrusion, ``_mesh_contact``). A pair's measurement
    does not depend on how the pairs were split (``jobs``): the batch screens the same chunks
    in any case, and each single query starts every hull's climb afresh
    (``reset_warm_starts``).

    ``shapes``: world-space shapes; ``names``: one unique name each.
    ``clearance``: the clearance every object needs (None: the rules' default, else 0).
    ``clearances``: per-object own clearances (the ``convex_clearance`` property level of the
    rules), either a sequence aligned with ``shapes`` (None or NaN: none) or a mapping
    name -> clearance. ``flag_clearances``: the same for command-line overrides.
    ``touch_tolerance``: overlaps up to this depth count as touching, not as findings (None:
    the rules' default).
    ``ignore_pairs``: (pattern_a, pattern_b) fnmatch patterns; a pair whose names match them in
    either order is not checked.
    ``rules``: a ``rules.Rules`` (None: the implicit rules of the flags); ``infos``: a
    ``rules.EntryInfo`` per shape (None: names only; a triangle mesh is static);
    ``floating``: a tolerance makes every movable object must-rest (``--floating``).
    ``aabbs``: optional precomputed (lower, upper) arrays (N, 3), e.g. batched by the caller.
    ``shapes`` may be a ``placement.LazyShapes`` (whose ``Placed`` entries are made into shapes
    only when a single query needs them); ``table``, optional, the ``placement.PoseTable`` of
    the same shapes if the caller made one. ``batched=False`` measures every pair by the single
    queries (for comparison: the findings are the same), as does a check of fewer than
    ``MIN_PAIRS_FOR_BATCH`` pairs.
    """

    def __init__(self, shapes, names, clearance=None, clearances=None,
                 touch_tolerance=None, ignore_pairs=(), aabbs=None, *, table=None,
                 batched=True, rules=None, infos=None, flag_clearances=None,
                 floating=None) -> None:
        # A LazyShapes is kept as it is (it makes its shapes on first access); other shapes are
        # listed, a user's own (support_xyz only) wrapped as the queries wrap them.
        if not isinstance(shapes, LazyShapes):
            shapes = broadphase.shape_list(shapes)
        names = [str(n) for n in names]
        if len(shapes) != len(names):
            raise ValueError(f"got {len(shapes)} shapes but {len(names)} names")
        if len(set(names)) != len(names):
            raise ValueError("names must be unique (findings are reported by name)")
        self.shapes = shapes
        self.names = names
        for label, value in (("clearance", clearance), ("touch_tolerance", touch_tolerance),
                             ("floating", floating)):
            if value is not None:
                _non_negative(label, value)
        base = rules if rules is not None else Rules()
        self.rules = base.with_flags(clearance=clearance, touch_tolerance=touch_tolerance,
                                     floating=floating)
        defaults = self.rules.defaults
        self.clearance = defaults["clearance"]
        self.touch_tolerance = defaults["touch_tolerance"]
        self.settings = classify.Settings(defaults["touch_tolerance"], defaults["floating"],
                                          defaults["support_angle"])
        if infos is None:
            infos = [EntryInfo(n, is_mesh=bool(getattr(_raw(shapes, k), "is_mesh", False)),
                               mover=n) for k, n in enumerate(names)]
        elif len(infos) != len(names):
            raise ValueError(f"got {len(infos)} infos for {len(names)} shapes")
        self.assign = self.rules.assign(infos)
        self.ignore_pairs = _pair_patterns(ignore_pairs)
        flag = _per_object("clearance override", flag_clearances, names)
        own = _per_object("clearance", clearances, names)
        self.object_clearance = self.assign.clearance_levels(flag, own)
        # How far each object's box grows in the broad phase: its largest clearance, and the
        # floating tolerance for an object that must rest (its supporters are found in it).
        self.reach_of = np.where(self.assign.must_rest,
                                 np.maximum(self.object_clearance, self.settings.floating),
                                 self.object_clearance)
        self.stats = Stats(objects=len(shapes))
        self.batched = bool(batched)
        self._table = table
        self._measured = []
        self._findings = None

        t0 = time.perf_counter()
        n = len(shapes)
        if aabbs is None:
            entries = _entries(shapes)
            if self._table is None:
                self._table = PoseTable.from_shapes(entries)
            lower, upper = world_aabbs(entries, self._table)
        else:
            lower, upper = (np.asarray(v, dtype=float).reshape(n, 3) for v in aabbs)
        self.lower, self.upper = lower, upper
        t1 = time.perf_counter()
        # Each box grows by its own object's reach: a pair closer than max(r_i, r_j) is closer
        # than r_i + r_j, so its fattened boxes overlap.
        grow = self.reach_of[:, None]
        pairs = broadphase.candidate_pairs(lower - grow, upper + grow) if n > 1 else \
            np.zeros((0, 2), dtype=np.int64)
        self.stats.candidates = len(pairs)
        t2 = time.perf_counter()
        pairs = self._drop_ignored(pairs)
        pairs = self._in_name_order(pairs)
        self.pair_need, self._need_rule, self._need_labels = self.assign.pair_clearance(pairs)
        pairs = self._drop_by_aabb_gap(pairs, lower, upper)
        t3 = time.perf_counter()
        self.pairs = pairs
        self.stats.narrow = len(pairs)
        if aabbs is None:
            self.stats.times["aabbs"] = t1 - t0
        self.stats.times.update(broad_phase=t2 - t1, cull=t3 - t2, narrow_phase=0.0, batch=0.0)
        self.done = 0
        self._screened = 0            # pairs the batch has looked at
        self._queue = np.zeros(0, dtype=np.int64)   # rows of ``pairs`` left for single queries
        self._queued = 0              # of which measured
        self._deep = np.zeros(len(pairs), dtype=bool)   # rows the batch saw overlap for sure

    @property
    def table(self) -> PoseTable:
        """The shapes as a ``PoseTable`` (made on first need)."""
        if self._table is None:
            self._table = PoseTable.from_shapes(_entries(self.shapes))
        return self._table

    # --- vectorised phases -------------------------------------------------------------------
    def _drop_ignored(self, pairs):
        if not len(pairs):
            return pairs
        keep = ~self.assign.ignored_pairs(pairs)
        i, j = pairs[:, 0], pairs[:, 1]
        for pat_a, pat_b in self.ignore_pairs:
            match_a = np.array([fnmatch.fnmatchcase(n, pat_a) for n in self.names])
            match_b = np.array([fnmatch.fnmatchcase(n, pat_b) for n in self.names])
            keep &= ~((match_a[i] & match_b[j]) | (match_b[i] & match_a[j]))
        # Two triangle meshes are static level geometry with no inside: never a finding.
        mesh = np.array([info.is_mesh for info in self.assign.infos], dtype=bool)
        both = mesh[i] & mesh[j]
        self.stats.static_pairs += int((both & keep).sum())
        keep &= ~both
        self.stats.ignored = int(len(pairs) - keep.sum())
        return pairs[keep]

    def _in_name_order(self, pairs):
        """Each pair (i, j) with names[i] < names[j]: a finding's A is the name that sorts
        first, so that its witness points do not depend on the input order."""
        if not len(pairs):
            return pairs
        rank = np.empty(len(self.names), dtype=np.int64)
        rank[np.argsort(np.array(self.names, dtype=object), kind="stable")] = \
            np.arange(len(self.names))
        swap = rank[pairs[:, 1]] < rank[pairs[:, 0]]
        pairs = pairs.copy()
        pairs[swap] = pairs[swap][:, ::-1]
        return pairs

    def _pair_reach(self, pairs, need):
        """How far apart each pair is measured: its clearance, or the floating tolerance when
        one of the two must rest (its support is looked for that far)."""
        rest = self.assign.must_rest[pairs[:, 0]] | self.assign.must_rest[pairs[:, 1]]
        return np.where(rest, np.maximum(need, self.settings.floating), need)

    def _drop_by_aabb_gap(self, pairs, lower, upper):
        if not len(pairs):
            return pairs
        i, j = pairs[:, 0], pairs[:, 1]
        gap = np.maximum(np.maximum(lower[j] - upper[i], lower[i] - upper[j]), 0.0)
        # The distance of two shapes is at least the distance of their boxes.
        lower_bound = np.sqrt((gap * gap).sum(axis=1))
        reach = self._pair_reach(pairs, self.pair_need)
        # Apart boxes (lower_bound > 0) cannot hold an overlap; they matter only within reach.
        keep = (lower_bound == 0.0) | (lower_bound <= reach)
        self.stats.culled = int(len(pairs) - keep.sum())
        self.pair_need = self.pair_need[keep]
        self._need_rule = self._need_rule[keep]
        return pairs[keep]

    # --- narrow phase ------------------------------------------------------------------------
    @property
    def total(self) -> int:
        return len(self.pairs)

    @property
    def finished(self) -> bool:
        return self.done >= len(self.pairs)

    def need(self, rows) -> np.ndarray:
        """The clearance each pair of ``pairs[rows]`` must keep (``rules`` precedence)."""
        return self.pair_need[rows]

    def reach(self, rows) -> np.ndarray:
        """How far apart each pair of ``pairs[rows]`` is measured."""
        return self._pair_reach(self.pairs[rows], self.pair_need[rows])

    def step(self, max_pairs: int = PAIRS_PER_STEP) -> bool:
        """Measure the next ``max_pairs`` pairs queued for single queries, screening the next
        chunk of pairs by the batch first when the queue is empty; True once every pair is
        checked."""
        t0 = time.perf_counter()
        if self._queued == len(self._queue) and self._screened < len(self.pairs):
            self._screen(BATCH_PAIRS_PER_STEP)
        stop = min(self._queued + max(1, int(max_pairs)), len(self._queue))
        rows = self._queue[self._queued:stop]
        self._measured.extend(self.check_rows(rows))
        self._queued = stop
        self.done += len(rows)
        self.stats.times["narrow_phase"] += time.perf_counter() - t0
        return self.finished

    def _screen(self, count):
        """Let the batch certify the next ``count`` pairs; queue the rest for single queries."""
        t0 = time.perf_counter()
        rows = np.arange(self._screened, min(self._screened + count, len(self.pairs)))
        if self.batched and len(self.pairs) >= MIN_PAIRS_FOR_BATCH:
            reach = self.reach(rows)
            sc = batch.screen(self.table, self.pairs[rows], reach, hand_back=True)
            clear, measured = sc.clear, sc.measured
            self._deep[rows[sc.deep]] = True
            # Overlaps the batch measured (polytope cores) need no single query, unless one
            # of the two is a triangle mesh (its depth is the intrusion) - never batched.
            self._batch_measured(rows, measured, -sc.depth, sc.point_a, sc.point_b, sc.normal)
            self.stats.batch_depths += int(measured.sum())
            self.stats.penetrations += int(measured.sum())
            # Pairs the batch measured apart: measured when clearly inside their reach (and
            # clearly apart, so that their closest points give the push direction), nothing
            # when clearly outside it; within the slack of either, the single query says.
            apart = sc.apart & ~clear
            gap = sc.distance - reach
            inside = apart & (reach > 0.0) & (gap < -sc.slack) & (sc.distance > sc.slack)
            outside = apart & (gap > sc.slack)
            self._batch_measured(rows, inside, sc.distance, sc.closest_a, sc.closest_b, None)
            self.stats.batch_distances += int((inside | outside).sum())
            settled = clear | measured | inside | outside
        else:
            settled = clear = np.zeros(len(rows), dtype=bool)
        self._screened += len(rows)
        self.stats.batch_clear += int(clear.sum())
        self.done += int(settled.sum())
        self._queue = np.concatenate((self._queue[self._queued:], rows[~settled]))
        self._queued = 0
        self.stats.times["batch"] += time.perf_counter() - t0

    def _batch_measured(self, rows, chosen, signed, point_a, point_b, normal):
        """Measurements of the pairs ``pairs[rows[chosen]]`` from the batch's signed distances,
        witness points and (overlaps) normals (convex shapes: no parts to name)."""
        for k in np.flatnonzero(chosen).tolist():
            i, j = self.pairs[rows[k]].tolist()
            self._measured.append(classify.Measured(
                int(rows[k]), i, j, float(signed[k]), point_a[k].copy(), point_b[k].copy(),
                None if normal is None else normal[k].copy()))

    def screen_all(self):
        """Run the batch over every pair not screened yet (before handing the rest to
        workers)."""
        t0 = time.perf_counter()
        while self._screened < len(self.pairs):
            self._screen(BATCH_PAIRS_PER_STEP)
        self.stats.times["narrow_phase"] += time.perf_counter() - t0

    def check_rows(self, rows) -> list:
        """Measurements of the pairs ``pairs[rows]`` by the single queries (counts into
        stats); pairs farther apart than their reach give none."""
        found = []
        reach = self.reach(rows).tolist()
        for row, (i, j), deep, r in zip(np.asarray(rows).tolist(), self.pairs[rows].tolist(),
                                        self._deep[rows].tolist(), reach):
            measured = self._check_pair(row, i, j, r, deep)
            if measured is not None:
                found.append(measured)
        self.stats.single += len(rows)
        return found

    def _check_pair(self, row, i, j, reach, deep=False):
        """The measurement of pair (i, j) or None (farther apart than ``reach``). ``deep``: the
        batch saw the two overlap for sure (the distance query, which would say so, is
        skipped; its result is used only when the penetration query finds no depth). The pair
        is in name order (``_in_name_order``)."""
        a, b = self.shapes[i], self.shapes[j]
        _reset(a, b)
        if deep:
            self.stats.penetrations += 1
            contact = penetration(a, b, method=PENETRATION_METHOD)
            result = None
            if contact is None:         # no depth after all: the distance says where they touch
                _reset(a, b)
                result = distance(a, b)
            return self._record(row, i, j, reach, *_overlap(result, contact))
        if isinstance(a, ConcaveShape) or isinstance(b, ConcaveShape):
            result = concave.distance(a, b, max_distance=reach)
            if result is None:                # no part pair within reach: nothing to report
                self.stats.part_culled += 1
                return None
        else:
            result = distance(a, b)
        if result.intersecting:
            self.stats.penetrations += 1
            _reset(a, b)
            mesh = _mesh_contact(a, b, result, self.touch_tolerance)
            if mesh is not None:
                return self._record(row, i, j, reach, *mesh)
            return self._record(row, i, j, reach, *_overlap(
                result, penetration(a, b, method=PENETRATION_METHOD)))
        return self._record(row, i, j, reach, result.distance, result.point_a, result.point_b,
                            None, (result.part_a, result.part_b))

    def _record(self, row, i, j, reach, signed, point_a, point_b, normal, parts,
                contacts=None):
        if signed > reach:
            return None
        # (A part is named only on a concave shape; a convex one is not even made here, if it
        # is still a ``Placed`` entry: the batch measured it.)
        label_a = None if parts[0] is None else _label(self.shapes[i], parts[0])
        label_b = None if parts[1] is None else _label(self.shapes[j], parts[1])
        return classify.Measured(row, i, j, float(signed), np.asarray(point_a, dtype=float),
                                 np.asarray(point_b, dtype=float),
                                 None if normal is None else np.asarray(normal, dtype=float),
                                 label_a, label_b, contacts)

    def add_findings(self, found) -> None:
        """Measurements made elsewhere (a worker process) for this check."""
        self._measured.extend(found)

    @property
    def findings(self) -> list:
        """Findings so far, sorted by kind then names (all of them once ``finished``): the
        measured pairs classified (``classify``), and the must-rest objects without support
        (once every pair is measured)."""
        if self._findings is None or self._findings[0] != (len(self._measured), self.finished):
            found = self._classify()
            self._findings = ((len(self._measured), self.finished),
                              sorted(found, key=Finding.sort_key))
        return list(self._findings[1])

    # --- classify ----------------------------------------------------------------------------
    def _classify(self) -> list:
        t0 = time.perf_counter()
        assign, settings = self.assign, self.settings
        tolerance, cos_up = settings.touch_tolerance, classify.cos_limit(settings)
        supported = np.zeros(len(self.names), dtype=bool)
        found = []
        supports = lifts = 0
        sizes = self._sizes
        for m in sorted(self._measured, key=lambda m: m.row):
            i, j = m.i, m.j
            need = float(self.pair_need[m.row])
            scale = max(sizes[i], sizes[j])
            up = None
            sup = None
            if m.signed <= settings.floating:
                step = classify.LIFT * settings.floating or classify.LIFT_OF_SIZE * scale
                # (The entries as given: a convex shape the batch measured is not made here
                # unless a lift test needs it.)
                if isinstance(_raw(self.shapes, i), ConcaveShape) or \
                        isinstance(_raw(self.shapes, j), ConcaveShape):
                    # A compound or mesh touches in several places: any part may hold it up.
                    a, b = self.shapes[i], self.shapes[j]
                    _reset(a, b)
                    side = classify.concave_support(a, b, settings.floating, step, tolerance,
                                                    scale, cos_up)
                    up = float(side)
                else:
                    direction = classify.push_direction(m, tolerance, scale)
                    if direction is not None:
                        up = float(direction[2])
                    else:
                        lifts += 1
                        a, b = self.shapes[i], self.shapes[j]
                        _reset(a, b)
                        up = classify.lift_slope(a, b, m.signed, step)
            # Who rests on whom: j supports i when i's push direction is near up, i supports
            # j when it is near down.
            if up is not None and up >= cos_up:
                sup = (i, j)
            elif up is not None and -up >= cos_up:
                sup = (j, i)
            if sup is not None:
                supports += 1
                supported[sup[0]] = True
                if m.signed < -tolerance and assign.static[sup[1]] \
                        and self._pushed_up(m, sup, cos_up):
                    finding = self._sunk(m, sup)
                    if finding is not None:
                        found.append(finding)
                    continue
                if m.signed >= -tolerance:
                    continue                     # resting contact: never too close
            if m.signed < -tolerance:
                found.append(self._pair_finding(OVERLAP, m, need))
            elif need > 0.0 and m.signed < need:
                found.append(self._pair_finding(TOO_CLOSE, m, need))
        if self.finished:
            found.extend(self._floating(supported))
        self.stats.supports, self.stats.lift_tests = supports, lifts
        self.stats.times["classify"] = time.perf_counter() - t0
        return found

    @property
    def _sizes(self) -> list:
        """Each object's box diagonal (a pair's size is the larger of its two)."""
        if getattr(self, "_size_list", None) is None:
            self._size_list = np.linalg.norm(self.upper - self.lower, axis=1).tolist()
        return self._size_list

    def boxes_moved(self, indices) -> None:
        """Objects ``indices`` have new boxes in ``lower``/``upper`` (the live check moves
        them): the per-object sizes the classification keeps follow."""
        for name, of in (("_size_list", lambda lo, up: float(np.linalg.norm(up - lo))),
                         ("_volume_list", lambda lo, up: float(np.prod(up - lo)))):
            cached = getattr(self, name, None)
            if cached is not None:
                for k in indices:
                    cached[k] = of(self.lower[k], self.upper[k])

    @property
    def _volumes(self) -> list:
        """Each object's box volume (of two movable objects, the smaller moves)."""
        if getattr(self, "_volume_list", None) is None:
            self._volume_list = np.prod(self.upper - self.lower, axis=1).tolist()
        return self._volume_list

    def _pushed_up(self, m, sup, cos_up) -> bool:
        """Whether a support pair's contact pushes the supported object up (it sank): a
        concave supporter may hold it up in one place while it is pushed into a wall in
        another (an overlap). Against a triangle mesh any touched triangle that pushes it up
        will do (the deepest may be left sideways across an inner edge a hair more cheaply)."""
        if m.contacts:
            # Each contact's normal points from the convex shape toward the mesh.
            convex_is_i = not getattr(self.shapes[m.i], "is_mesh", False)
            sign = -1.0 if (sup[0] == m.i) == convex_is_i else 1.0
            return any(sign * float(c["normal"][2]) >= cos_up for c in m.contacts)
        if m.normal is None:
            return True
        up = -float(m.normal[2])          # i's push direction is -normal
        return (up if sup[0] == m.i else -up) >= cos_up

    def _rule_and_severity(self, kind, i, j, clearance_rule=None):
        assign = self.assign
        pair = assign.pair_rule(i, j, "severity")
        severity, decided = self.rules.severity_for(
            kind, (assign.group_of[i], assign.group_of[j]), pair)
        if clearance_rule is not None:
            return clearance_rule, severity
        groups = [g for g in (assign.group_of[i], assign.group_of[j]) if g is not None]
        return (assign.group_label(i, j) if groups else decided), severity

    def _mover(self, m, sinking=None):
        """(index of the object a fix moves, or None): a movable one; of two, the smaller;
        ``sinking``: only that one (a sunk object)."""
        assign = self.assign
        candidates = [k for k in ((sinking,) if sinking is not None else (m.i, m.j))
                      if not assign.static[k]]
        if not candidates:
            return None
        volumes = self._volumes
        return min(candidates, key=lambda k: (volumes[k], self.names[k]))

    def _fix(self, k, m, translation_of_i):
        """(move, translation, extra) for moving object k, given the translation that would
        resolve the finding by moving i."""
        if k is None:
            return None, None, None
        info = self.assign.infos[k]
        if info.mover is None:
            extra = {"instanced_by": info.instanced_by} if info.instanced_by else None
            return None, None, extra
        t = np.asarray(translation_of_i, dtype=float)
        return info.mover, (t if k == m.i else -t), None

    def _pair_finding(self, kind, m, need):
        i, j = m.i, m.j
        if kind == OVERLAP:
            translation = m.point_b - m.point_a          # moving i by it leaves them touching
            rule, severity = self._rule_and_severity(kind, i, j)
        else:
            scale = max(self._sizes[i], self._sizes[j])
            direction = classify.push_direction(m, self.touch_tolerance, scale)
            if direction is None or m.signed <= 0.0:
                a, b = self.shapes[i], self.shapes[j]
                _reset(a, b)
                normal = classify.touch_normal(a, b, scale, self.touch_tolerance)
                direction = -normal if normal is not None else None
            translation = None if direction is None else direction * (need - m.signed)
            label = self._need_labels[int(self._need_rule[m.row])]
            if label == "groups":
                label = self.assign.group_label(i, j)
            rule, severity = self._rule_and_severity(kind, i, j, label)
        mover = self._mover(m)
        move, moved, extra = self._fix(mover, m, translation) if translation is not None \
            else (None, None, None)
        return Finding(self.names[i], self.names[j], kind, float(m.signed), m.point_a,
                       m.point_b, float(need), m.part_a, m.part_b, move, moved, m.contacts,
                       rule, severity, extra=extra)

    def _sunk(self, m, sup):
        """The ``sunk`` finding of object ``sup[0]`` in its static supporter ``sup[1]``, or None
        within its allowed embed."""
        a, b = sup
        depth = -m.signed
        embed = float(self.assign.embed[a])
        if depth <= embed + self.touch_tolerance:
            return None
        flip = a != m.i
        normal = m.normal if m.normal is not None else (m.point_a - m.point_b) / max(depth, 1e-300)
        normal = np.asarray(normal, dtype=float)
        if flip:
            normal = -normal
        point_a, point_b = (m.point_b, m.point_a) if flip else (m.point_a, m.point_b)
        part_a, part_b = (m.part_b, m.part_a) if flip else (m.part_a, m.part_b)
        group = self.assign.group_of[a]
        rule = (f"group {group.name} embed" if group is not None and group.embed is not None
                else "defaults (embed 0)")
        _, severity = self._rule_and_severity(SUNK, a, b)
        move = translation = extra = None
        if not self.assign.static[a]:
            info = self.assign.infos[a]
            if info.mover is not None:
                move, translation = info.mover, -normal * (depth - embed)
            elif info.instanced_by:
                extra = {"instanced_by": info.instanced_by}
        return Finding(self.names[a], self.names[b], SUNK, float(m.signed), point_a, point_b,
                       float(self.pair_need[m.row]), part_a, part_b, move, translation,
                       m.contacts, rule, severity, extra=extra)

    def _floating(self, supported) -> list:
        """``floating`` findings: must-rest objects with no support, with their drop."""
        found = []
        assign = self.assign
        for a in np.flatnonzero(assign.must_rest & ~supported).tolist():
            self.stats.drops += 1
            drop, below = classify.drop_distance(self.shapes, a, self.lower, self.upper)
            group = assign.group_of[a]
            rule = (f"group {group.name} must_rest" if group is not None and group.must_rest
                    else "flag --floating")
            _, severity = self._rule_and_severity(
                FLOATING, a, below if below is not None else a)
            info = assign.infos[a]
            move = translation = extra = None
            if drop is not None and info.mover is not None:
                move, translation = info.mover, np.array([0.0, 0.0, -drop])
            elif info.mover is None and info.instanced_by:
                extra = {"instanced_by": info.instanced_by}
            center = 0.5 * (self.lower[a] + self.upper[a])
            bottom = np.array([center[0], center[1], self.lower[a, 2]])
            found.append(Finding(
                self.names[a], None if below is None else self.names[below], FLOATING,
                drop, bottom, None if drop is None else bottom - np.array([0.0, 0.0, drop]),
                0.0, None, None, move, translation, None, rule, severity, extra=extra))
        return found


def reset_warm_starts(shape) -> None:
    """Start every hull climb inside ``shape`` at its first vertex again. A hull's support
    point along a direction that ties several vertices depends on where the climb starts, so
    without this the witness points of a pair could depend on the queries run before it."""
    if isinstance(shape, Transformed):
        shape = shape.shape
    if isinstance(shape, Hull):
        shape.set_warm_start(0)
    elif isinstance(shape, (MinkowskiSum, ConvexHullOf)):
        reset_warm_starts(shape.a)
        reset_warm_starts(shape.b)
    elif isinstance(shape, Compound):
        for part in shape.parts:
            reset_warm_starts(part)


def _reset(a, b):
    # Each query of a pair starts from the same hull climbs, whichever ran before it.
    reset_warm_starts(a)
    reset_warm_starts(b)


def _raw(shapes, i):
    return shapes.raw(i) if isinstance(shapes, LazyShapes) else shapes[i]


def _entries(shapes) -> list:
    """The shapes as given (``Placed`` entries of a ``LazyShapes`` not made)."""
    return [_raw(shapes, i) for i in range(len(shapes))]


def _overlap(result, contact):
    """Signed distance (minus the depth), witness points and parts of an overlapping pair from
    its ``contact`` (its penetration), or, when that found no depth, from ``result`` (its
    distance: GJK saw contact, penetration none, so they touch)."""
    if contact is None:
        return 0.0, result.point_a, result.point_b, None, (result.part_a, result.part_b)
    return -float(contact.depth), contact.point_a, contact.point_b, contact.normal, \
        (contact.part_a, contact.part_b)


def _mesh_contact(a, b, result, tolerance):
    """(signed, point_a, point_b, normal, parts, contacts) of a convex shape overlapping a
    triangle mesh (either way round) by its intrusion (``intrusion.mesh_intrusion``): the
    depth a person would measure, with every touched triangle listed (``result``, their
    distance, where no triangle is entered deeper than ``tolerance``); None when the pair is
    not a convex shape and a triangle mesh."""
    mesh_a, mesh_b = getattr(a, "is_mesh", False), getattr(b, "is_mesh", False)
    if mesh_a == mesh_b or isinstance(b if mesh_a else a, ConcaveShape):
        return None
    flip = bool(mesh_a)
    convex, mesh = (b, a) if flip else (a, b)
    hit = mesh_intrusion(convex, mesh, touch_tolerance=tolerance)
    if hit is None:
        return _overlap(result, None)
    contacts = tuple({"part": mesh.part_label(k), "depth": float(d),
                      "normal": np.asarray(n, dtype=float)} for k, d, n in hit.contacts)
    part = hit.part                   # (labelled by ``_record``, as every part)
    normal = np.asarray(hit.normal, dtype=float)
    if flip:
        return -float(hit.depth), hit.point_b, hit.point_a, -normal, (part, None), contacts
    return -float(hit.depth), hit.point_a, hit.point_b, normal, (None, part), contacts


def _label(shape, part):
    """How a report names ``part`` of ``shape`` (None for a convex shape)."""
    return None if part is None else shape.part_label(part)


def check_shapes(shapes, names, clearance=None, clearances=None, touch_tolerance=None,
                 ignore_pairs=(), progress=None, should_cancel=None, aabbs=None,
                 stats=None, jobs=1, batched=True, **rules) -> list:
    """Findings of a level given as world-space ``shapes`` and their ``names``.

    Arguments are those of ``LevelCheck``. ``progress(done, total)`` is called after each chunk
    of narrow-phase pairs; ``should_cancel()`` is asked as often and, once it returns True,
    ``CheckCancelled`` (carrying the findings so far) is raised. ``stats``, a ``Stats``, receives
    the per-phase counts and times. ``jobs``: processes for the single queries (see
    ``run_to_end``; None for one per core); the findings do not depend on it. ``rules``:
    LevelCheck's ``rules``, ``infos``, ``flag_clearances`` and ``floating``.
    """
    check = LevelCheck(shapes, names, clearance, clearances, touch_tolerance, ignore_pairs, aabbs,
                       batched=batched, **rules)
    try:
        return run_to_end(check, jobs, progress, should_cancel)
    finally:
        if stats is not None:
            stats.__dict__.update(check.stats.__dict__)


def default_jobs() -> int:
    """Processes the level check uses when not told: one per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:          # (not on every platform)
        return max(1, os.cpu_count() or 1)


def run_to_end(check: LevelCheck, jobs=1, progress=None, should_cancel=None) -> list:
    """Run ``check``'s narrow phase to the end and return its findings.

    With ``jobs`` > 1 (None: ``default_jobs()``) the batch screens every pair here, then the
    pairs left for the single queries are shared out to ``jobs`` worker processes, a few dozen
    at a time (forked: they see the shapes as they are; where processes cannot be forked, or
    with few pairs, it all runs here). Each pair's finding is computed the same way wherever it
    runs, and findings are sorted at the end, so the report is the same byte for byte.
    ``progress`` and ``should_cancel`` as in ``check_shapes``.
    """
    jobs = default_jobs() if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if progress is not None:
        progress(check.done, check.total)
    if jobs > 1 and not check.finished:
        check.screen_all()
        if progress is not None:
            progress(check.done, check.total)
        if len(check._queue) - check._queued >= MIN_PAIRS_FOR_JOBS and _can_fork():
            _run_workers(check, jobs, progress, should_cancel)
    while not check.finished:
        check.step()
        if progress is not None:
            progress(check.done, check.total)
        if should_cancel is not None and should_cancel():
            raise CheckCancelled(check.findings)
    return check.findings


# What forked workers run: (work, state, stop), set in the parent before the fork (``forked``),
# so that each worker inherits the state (a check with every shape made, a traversal context)
# without pickling it.
_FORKED = None
# Stats a worker counts per task and sends back.
_WORKER_COUNTS = ("single", "penetrations", "static_pairs", "part_culled")


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _ignore_interrupts():
    # Ctrl-C reaches every process of the terminal's group: the parent stops the workers and
    # reports; the workers themselves must not each print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _forked_task(task):
    work, state, stop = _FORKED
    return None if stop.is_set() else work(state, task)


@contextlib.contextmanager
def forked(work, state, tasks, jobs, ordered=True):
    """``work(state, task)`` for every task in ``jobs`` forked worker processes: the results
    as an iterator (in task order, or as they come with ``ordered=False``), valid inside the
    ``with``. ``state`` reaches the workers by the fork, never pickled.

    Leaving the ``with`` by an exception (an interrupt, a cancel) stops the workers after the
    task in hand: a stop event makes them skip the rest, and the pool is closed and joined, not
    terminated (``Pool.terminate`` can deadlock on the task queue's lock, which an idle worker
    holds while it waits)."""
    global _FORKED
    context = multiprocessing.get_context("fork")
    stop = context.Event()
    _FORKED = (work, state, stop)
    # Objects made so far move to the collector's permanent generation: a worker's collector
    # then never walks them, so the pages holding them stay shared with this process instead
    # of being copied on the first collection (the workers were slower than one process).
    gc.freeze()
    pool = context.Pool(min(jobs, len(tasks)), initializer=_ignore_interrupts)
    try:
        yield (pool.imap if ordered else pool.imap_unordered)(_forked_task, tasks)
    except BaseException:
        stop.set()
        raise
    finally:
        pool.close()
        pool.join()
        gc.unfreeze()
        _FORKED = None


def _work(check, rows):
    before = [getattr(check.stats, name) for name in _WORKER_COUNTS]
    found = check.check_rows(rows)
    counts = [getattr(check.stats, name) - b for name, b in zip(_WORKER_COUNTS, before)]
    return len(rows), found, counts


def _run_workers(check, jobs, progress, should_cancel):
    """Measure the pairs queued for single queries in ``jobs`` forked processes (``forked``:
    an interrupt or a cancel stops them after the task in hand).

    The batch has screened every chunk before the fork, here, and not in the workers nor
    alongside them: its numpy temporaries are tens of megabytes a chunk, and after a fork the
    first write to each page shared with a worker copies it, in either process. On the 100k
    bench level a chunk took 2.5 times as long to screen in a worker (34,000 page faults
    against 700 here), and the check was 0.5 s slower with the chunks screened in the workers
    or here while the workers measured; threads screened no faster than one."""
    t0 = time.perf_counter()
    rows = check._queue[check._queued:]
    tasks = [rows[k:k + PAIRS_PER_TASK] for k in range(0, len(rows), PAIRS_PER_TASK)]
    try:
        with forked(_work, check, tasks, jobs, ordered=False) as results:
            for count, found, counts in results:
                check.add_findings(found)
                for name, value in zip(_WORKER_COUNTS, counts):
                    setattr(check.stats, name, getattr(check.stats, name) + value)
                check.done += count
                check._queued += count
                if progress is not None:
                    progress(check.done, check.total)
                if should_cancel is not None and should_cancel():
                    raise CheckCancelled(check.findings)
    finally:
        check.stats.times["narrow_phase"] += time.perf_counter() - t0
        check.stats.times["jobs"] = jobs


# --- options ---------------------------------------------------------------------------------
def _non_negative(name, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x) or x < 0.0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return x


def _per_object(label, values, names) -> np.ndarray:
    """Per-object values (NaN: none) from a sequence aligned with ``names`` (None or NaN: none)
    or a mapping name -> value."""
    out = np.full(len(names), np.nan, dtype=float)
    if values is None:
        return out
    if isinstance(values, dict):
        index = {n: k for k, n in enumerate(names)}
        items = ((index[n], c) for n, c in values.items() if n in index)
    else:
        values = list(values)
        if len(values) != len(names):
            raise ValueError(f"clearances has {len(values)} entries for {len(names)} shapes")
        items = enumerate(values)
    for k, c in items:
        if c is None or (isinstance(c, float) and math.isnan(c)):
            continue
        out[k] = _non_negative(f"{label} of {names[k]!r}", c)
    return out


def _pair_patterns(ignore_pairs) -> list:
    patterns = []
    for item in ignore_pairs or ():
        if isinstance(item, str):
            parts = item.split(":")
            if len(parts) != 2:
                raise ValueError(f"an ignored pair is two name patterns like 'Floor*:Crate*', "
                                 f"got {item!r}")
            item = parts
        item = tuple(item)
        if len(item) != 2 or not all(isinstance(p, str) and p for p in item):
            raise ValueError(f"an ignored pair is two name patterns, got {item!r}")
        patterns.append(item)
    return patterns


def pair_is_ignored(name_a: str, name_b: str, ignore_pairs) -> bool:
    """True when the pair matches one of the (pattern_a, pattern_b) patterns, in either order."""
    m = fnmatch.fnmatchcase
    return any((m(name_a, pa) and m(name_b, pb)) or (m(name_a, pb) and m(name_b, pa))
               for pa, pb in _pair_patterns(ignore_pairs))
