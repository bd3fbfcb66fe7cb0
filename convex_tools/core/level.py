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
import gc
import math
import multiprocessing
import os
import signal
import time
from dataclasses import dataclass, field

import numpy as np

from . import batch, broadphase, concave
from .compound import Compound, ConcaveShape
from .hull import Hull
from .placement import LazyShapes, PoseTable, world_aabbs
from .queries import distance, penetration
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

OVERLAP = "overlap"
TOO_CLOSE = "too_close"
SUNK = "sunk"
FLOATING = "floating"
# Traversal findings (``core.traversal``): regions the agent cannot reach, and why.
UNREACHABLE = "unreachable"
NARROW = "narrow"
LOW_HEADROOM = "low_headroom"
STEP = "step"
KINDS = (OVERLAP, SUNK, TOO_CLOSE, FLOATING)
TRAVERSAL_KINDS = (UNREACHABLE, NARROW, LOW_HEADROOM, STEP)
ALL_KINDS = KINDS + TRAVERSAL_KINDS

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
    ignored: int = 0           # dropped by ignore_pairs
    culled: int = 0            # dropped by the AABB-gap lower bound
    narrow: int = 0            # pairs that went through the narrow phase
    batch_clear: int = 0       # of those, certified clear by the batched engine (``batch``)
    batch_depths: int = 0      # of those, overlaps whose depth the batched engine measured
    batch_distances: int = 0   # of those, pairs apart whose distance the batched engine gave
    single: int = 0            # of those, measured by the single queries (exact reports)
    penetrations: int = 0      # pairs that also needed a penetration depth
    times: dict = field(default_factory=dict)
    skipped_objects: list = field(default_factory=list)  # (name, reason) not checked
    shapes_made: int = 0       # Blender side: shapes built from an object's content
    shapes_shared: int = 0     # Blender side: shapes moved from an instance with equal content
    part_culled: int = 0       # concave pairs with no part pair within the clearance
    static_pairs: int = 0      # triangle mesh against triangle mesh: not checked


class LevelCheck:
    """One level check, run in steps: ``while not check.step(): report(check.done, check.total)``.

    Construction does the vectorised phases (broad phase, ignores, AABB-gap cull); ``step`` runs
    the narrow phase on the next chunk of pairs. ``findings`` are sorted once all steps are done.

    The narrow phase is in two stages. The batched engine (``batch.screen``) screens the pairs
    16k at a time, in numpy: it drops every pair it certifies to keep its clearance (most pairs
    of a level) and makes findings of the overlaps and distances it measured; the rest — curved
    overlaps, touching pairs, distances within rounding of a clearance, what the batch hands
    back — are measured by the single queries (``distance``, ``penetration``). A pair's finding
    does not depend on how the pairs were split (``jobs``): the batch screens the same chunks
    in any case, and each single query starts every hull's climb afresh
    (``reset_warm_starts``), so its witness points never depend on the pairs before it.

    ``shapes``: world-space shapes; ``names``: one unique name each.
    ``clearance``: the clearance every object needs (0 finds overlaps only).
    ``clearances``: per-object overrides, either a sequence aligned with ``shapes`` (None or NaN
    keeps the default) or a mapping name -> clearance.
    ``touch_tolerance``: overlaps up to this depth count as touching, not as findings.
    ``ignore_pairs``: (pattern_a, pattern_b) fnmatch patterns; a pair whose names match them in
    either order is not checked.
    ``aabbs``: optional precomputed (lower, upper) arrays (N, 3), e.g. batched by the caller.
    ``shapes`` may be a ``placement.LazyShapes`` (whose ``Placed`` entries are made into shapes
    only when a single query needs them); ``table``, optional, the ``placement.PoseTable`` of
    the same shapes if the caller made one. ``batched=False`` measures every pair by the single
    queries (for comparison: the findings are the same), as does a check of fewer than
    ``MIN_PAIRS_FOR_BATCH`` pairs.
    """

    def __init__(self, shapes, names, clearance=0.0, clearances=None,
                 touch_tolerance=TOUCH_TOLERANCE, ignore_pairs=(), aabbs=None, *, table=None,
                 batched=True) -> None:
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
        self.clearance = _non_negative("clearance", clearance)
        self.touch_tolerance = _non_negative("touch_tolerance", touch_tolerance)
        self.object_clearance = _object_clearances(clearances, names, self.clearance)
        self.ignore_pairs = _pair_patterns(ignore_pairs)
        self.stats = Stats(objects=len(shapes))
        self.batched = bool(batched)
        self._table = table
        self._found = []
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
        # Each box grows by its own object's clearance: a pair closer than max(c_i, c_j) is
        # closer than c_i + c_j, so its fattened boxes overlap.
        grow = self.object_clearance[:, None]
        pairs = broadphase.candidate_pairs(lower - grow, upper + grow) if n > 1 else \
            np.zeros((0, 2), dtype=np.int64)
        self.stats.candidates = len(pairs)
        t2 = time.perf_counter()
        pairs = self._drop_ignored(pairs)
        pairs = self._drop_by_aabb_gap(pairs, lower, upper)
        pairs = self._in_name_order(pairs)
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
        if not self.ignore_pairs or not len(pairs):
            return pairs
        keep = np.ones(len(pairs), dtype=bool)
        for pat_a, pat_b in self.ignore_pairs:
            match_a = np.array([fnmatch.fnmatchcase(n, pat_a) for n in self.names])
            match_b = np.array([fnmatch.fnmatchcase(n, pat_b) for n in self.names])
            i, j = pairs[:, 0], pairs[:, 1]
            keep &= ~((match_a[i] & match_b[j]) | (match_b[i] & match_a[j]))
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

    def _drop_by_aabb_gap(self, pairs, lower, upper):
        if not len(pairs):
            return pairs
        i, j = pairs[:, 0], pairs[:, 1]
        gap = np.maximum(np.maximum(lower[j] - upper[i], lower[i] - upper[j]), 0.0)
        # The distance of two shapes is at least the distance of their boxes.
        lower_bound = np.sqrt((gap * gap).sum(axis=1))
        need = np.maximum(self.object_clearance[i], self.object_clearance[j])
        # Apart boxes (lower_bound > 0) cannot hold an overlap; they matter only within a clearance.
        keep = (lower_bound == 0.0) | (lower_bound < need)
        self.stats.culled = int(len(pairs) - keep.sum())
        return pairs[keep]

    # --- narrow phase ------------------------------------------------------------------------
    @property
    def total(self) -> int:
        return len(self.pairs)

    @property
    def finished(self) -> bool:
        return self.done >= len(self.pairs)

    def need(self, rows) -> np.ndarray:
        """The clearance each pair of ``pairs[rows]`` must keep: the larger of its objects'."""
        pairs = self.pairs[rows]
        clear = self.object_clearance
        return np.maximum(clear[pairs[:, 0]], clear[pairs[:, 1]])

    def step(self, max_pairs: int = PAIRS_PER_STEP) -> bool:
        """Measure the next ``max_pairs`` pairs queued for single queries, screening the next
        chunk of pairs by the batch first when the queue is empty; True once every pair is
        checked."""
        t0 = time.perf_counter()
        if self._queued == len(self._queue) and self._screened < len(self.pairs):
            self._screen(BATCH_PAIRS_PER_STEP)
        stop = min(self._queued + max(1, int(max_pairs)), len(self._queue))
        rows = self._queue[self._queued:stop]
        self._found.extend(self.check_rows(rows))
        self._queued = stop
        self.done += len(rows)
        self.stats.times["narrow_phase"] += time.perf_counter() - t0
        return self.finished

    def _screen(self, count):
        """Let the batch certify the next ``count`` pairs; queue the rest for single queries."""
        t0 = time.perf_counter()
        rows = np.arange(self._screened, min(self._screened + count, len(self.pairs)))
        if self.batched and len(self.pairs) >= MIN_PAIRS_FOR_BATCH:
            need = self.need(rows)
            sc = batch.screen(self.table, self.pairs[rows], need)
            clear, measured = sc.clear, sc.measured
            self._deep[rows[sc.deep]] = True
            # Overlaps the batch measured (polytope cores): findings without a single query.
            self._batch_findings(rows, measured, need, -sc.depth, sc.point_a, sc.point_b)
            self.stats.batch_depths += int(measured.sum())
            self.stats.penetrations += int(measured.sum())
            # Pairs the batch measured apart: a finding when clearly inside their clearance,
            # nothing when clearly outside it; within the slack of it, the single query says.
            apart = sc.apart & ~clear
            gap = sc.distance - need
            inside = apart & (need > 0.0) & (gap < -sc.slack)
            outside = apart & (gap > sc.slack)
            self._batch_findings(rows, inside, need, sc.distance, sc.closest_a, sc.closest_b)
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

    def _batch_findings(self, rows, chosen, need, signed, point_a, point_b):
        """Findings of the pairs ``pairs[rows[chosen]]`` from the batch's signed distances and
        witness points (convex shapes: no parts to name)."""
        for k in np.flatnonzero(chosen).tolist():
            i, j = self.pairs[rows[k]].tolist()
            finding = self._finding(i, j, float(need[k]), float(signed[k]),
                                    point_a[k].copy(), point_b[k].copy(), (None, None))
            if finding is not None:
                self._found.append(finding)

    def screen_all(self):
        """Run the batch over every pair not screened yet (before handing the rest to
        workers)."""
        t0 = time.perf_counter()
        while self._screened < len(self.pairs):
            self._screen(BATCH_PAIRS_PER_STEP)
        self.stats.times["narrow_phase"] += time.perf_counter() - t0

    def check_rows(self, rows) -> list:
        """Findings of the pairs ``pairs[rows]`` by the single queries (counts into stats)."""
        found = []
        clear = self.object_clearance
        for (i, j), deep in zip(self.pairs[rows].tolist(), self._deep[rows].tolist()):
            finding = self._check_pair(i, j, max(clear[i], clear[j]), deep)
            if finding is not None:
                found.append(finding)
        self.stats.single += len(rows)
        return found

    def _check_pair(self, i, j, need, deep=False):
        """The finding of pair (i, j) or None. ``deep``: the batch saw the two overlap for sure
        (the distance query, which would say so, is skipped; its result is used only when the
        penetration query finds no depth). The pair is in name order (``_in_name_order``)."""
        a, b = self.shapes[i], self.shapes[j]
        _reset(a, b)
        if deep:
            self.stats.penetrations += 1
            contact = penetration(a, b, method=PENETRATION_METHOD)
            result = None
            if contact is None:         # no depth after all: the distance says where they touch
                _reset(a, b)
                result = distance(a, b)
            return self._finding(i, j, need, *_overlap(result, contact))
        if isinstance(a, ConcaveShape) or isinstance(b, ConcaveShape):
            if getattr(a, "is_mesh", False) and getattr(b, "is_mesh", False):
                self.stats.static_pairs += 1
                return None
            result = concave.distance(a, b, max_distance=need)
            if result is None:                # no part pair within need: nothing to report
                self.stats.part_culled += 1
                return None
        else:
            result = distance(a, b)
        if result.intersecting:
            self.stats.penetrations += 1
            _reset(a, b)
            signed, point_a, point_b, parts = _overlap(
                result, penetration(a, b, method=PENETRATION_METHOD))
        else:
            signed, point_a, point_b = result.distance, result.point_a, result.point_b
            parts = (result.part_a, result.part_b)
        return self._finding(i, j, need, signed, point_a, point_b, parts)

    def _finding(self, i, j, need, signed, point_a, point_b, parts):
        if signed < -self.touch_tolerance:
            kind = OVERLAP
        elif need > 0.0 and signed < need:
            kind = TOO_CLOSE
        else:
            return None
        # (A part is named only on a concave shape; a convex one is not even made here, if it
        # is still a ``Placed`` entry: the batch measured it.)
        label_a = None if parts[0] is None else _label(self.shapes[i], parts[0])
        label_b = None if parts[1] is None else _label(self.shapes[j], parts[1])
        return Finding(self.names[i], self.names[j], kind, float(signed),
                       np.asarray(point_a, dtype=float), np.asarray(point_b, dtype=float),
                       float(need), label_a, label_b)

    def add_findings(self, found) -> None:
        """Findings measured elsewhere (a worker process) for this check."""
        self._found.extend(found)

    @property
    def findings(self) -> list:
        """Findings so far, sorted by kind then names (all of them once ``finished``)."""
        if self._findings is None or len(self._findings) != len(self._found):
            self._findings = sorted(self._found, key=Finding.sort_key)
        return list(self._findings)


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
        return 0.0, result.point_a, result.point_b, (result.part_a, result.part_b)
    return -float(contact.depth), contact.point_a, contact.point_b, \
        (contact.part_a, contact.part_b)


def _label(shape, part):
    """How a report names ``part`` of ``shape`` (None for a convex shape)."""
    return None if part is None else shape.part_label(part)


def check_shapes(shapes, names, clearance=0.0, clearances=None, touch_tolerance=TOUCH_TOLERANCE,
                 ignore_pairs=(), progress=None, should_cancel=None, aabbs=None,
                 stats=None, jobs=1, batched=True) -> list:
    """Findings of a level given as world-space ``shapes`` and their ``names``.

    Arguments are those of ``LevelCheck``. ``progress(done, total)`` is called after each chunk
    of narrow-phase pairs; ``should_cancel()`` is asked as often and, once it returns True,
    ``CheckCancelled`` (carrying the findings so far) is raised. ``stats``, a ``Stats``, receives
    the per-phase counts and times. ``jobs``: processes for the single queries (see
    ``run_to_end``; None for one per core); the findings do not depend on it.
    """
    check = LevelCheck(shapes, names, clearance, clearances, touch_tolerance, ignore_pairs, aabbs,
                       batched=batched)
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


# The check the worker processes measure pairs of (set before they are forked, so that each
# inherits it with every shape already made; never pickled).
_WORKER_CHECK = None
# Stats a worker counts per task and sends back.
_WORKER_COUNTS = ("single", "penetrations", "static_pairs", "part_culled")


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _ignore_interrupts():
    # Ctrl-C reaches every process of the terminal's group: the parent stops the workers and
    # reports; the workers themselves must not each print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _work(rows):
    check = _WORKER_CHECK
    before = [getattr(check.stats, name) for name in _WORKER_COUNTS]
    found = check.check_rows(rows)
    counts = [getattr(check.stats, name) - b for name, b in zip(_WORKER_COUNTS, before)]
    return len(rows), found, counts


def _run_workers(check, jobs, progress, should_cancel):
    """Measure the pairs queued for single queries in ``jobs`` forked processes."""
    global _WORKER_CHECK
    t0 = time.perf_counter()
    rows = check._queue[check._queued:]
    tasks = [rows[k:k + PAIRS_PER_TASK] for k in range(0, len(rows), PAIRS_PER_TASK)]
    _WORKER_CHECK = check
    # Objects made so far move to the collector's permanent generation: a worker's collector
    # then never walks them, so the pages holding them stay shared with this process instead
    # of being copied on the first collection (the workers were slower than one process).
    gc.freeze()
    pool = multiprocessing.get_context("fork").Pool(min(jobs, len(tasks)),
                                                    initializer=_ignore_interrupts)
    try:
        for count, found, counts in pool.imap_unordered(_work, tasks):
            check.add_findings(found)
            for name, value in zip(_WORKER_COUNTS, counts):
                setattr(check.stats, name, getattr(check.stats, name) + value)
            check.done += count
            check._queued += count
            if progress is not None:
                progress(check.done, check.total)
            if should_cancel is not None and should_cancel():
                raise CheckCancelled(check.findings)
        pool.close()
    finally:
        pool.terminate()
        pool.join()
        gc.unfreeze()
        _WORKER_CHECK = None
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


def _object_clearances(clearances, names, default) -> np.ndarray:
    out = np.full(len(names), default, dtype=float)
    if clearances is None:
        return out
    if isinstance(clearances, dict):
        index = {n: k for k, n in enumerate(names)}
        items = ((index[n], c) for n, c in clearances.items() if n in index)
    else:
        clearances = list(clearances)
        if len(clearances) != len(names):
            raise ValueError(f"clearances has {len(clearances)} entries for {len(names)} shapes")
        items = enumerate(clearances)
    for k, c in items:
        if c is None or (isinstance(c, float) and math.isnan(c)):
            continue
        out[k] = _non_negative(f"clearance of {names[k]!r}", c)
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


# --- reports ---------------------------------------------------------------------------------
# The reports live in ``core.report`` (one model, every format a writer of it); these names stay
# importable from here for the scripts and tests that import them from ``core.level``.
from .report import (CSV_COLUMNS, count_line, report_csv, report_dict,  # noqa: E402,F401
                     report_json, report_table, summary)
