"""Live check: the Level Check's findings kept current while you work (Sidebar › Convex ›
Level Check › Live, or ``object.convex_live_check``).

Turning it on runs the full check (``operators.level_run``: the Level Check panel's scope,
clearance and rules), in slices. After that, each depsgraph update re-measures only what moved
or changed: the changed object's shape is made again, its box updated in place, its candidate
pairs found against every other box (the broad phase's closed-box test, fattened by each
object's reach, in one numpy pass), filtered as the full check filters them (ignored pairs, name
order, the rules' clearances, the box-gap cull), and measured by the same single queries
(``LevelCheck.check_rows``); its old measurements are dropped. Each measurement is classified by
the full check's own classification, one measurement at a time, and kept with the findings and
the support it gives; floating objects are found from all the supports together. So the live
findings are the findings a full re-check would give (tested after random sequences of moves,
adds, deletes, renames, rule changes and undo).

What the incremental path cannot take in place — objects added, deleted or renamed, a changed
rule, clearance or object setting that the rules read, a moved collection instance, undo, a new
file — starts a full check again.

The live state is the full check's own ``LevelCheck``, extended in place: new pair rows are
appended to its pairs, clearances and rules, boxes and shapes are replaced, and its
``check_rows`` and ``_classify`` measure and classify. It leans on that class's internals on
purpose — one check, not a second copy of its rules — and the tests that compare the live
findings with a full check's guard the coupling.

Work is split so the viewport never stalls: the depsgraph handler works at most
``FRAME_BUDGET`` seconds, and a timer (``bpy.app.timers``) goes on with the rest, a budget per
tick. Headless there is no timer: ``finish()`` (``api.live_findings()``) does what is pending.
"""

from __future__ import annotations

import bisect
import fnmatch
import time
from collections import defaultdict
from types import SimpleNamespace

import bpy
import numpy as np
from bpy.app.handlers import persistent

from . import level_check
from .collect import Entry
from .core.level import OVERLAP, SUNK, Finding, LevelCheck
from .core.placement import PoseTable, world_aabbs
from .objects import GEOMETRY_TYPES

# Seconds of work per depsgraph update or timer tick: the viewport stalls at most this long.
FRAME_BUDGET = 0.05
# Seconds between timer ticks while work is pending (0: as soon as Blender is idle again).
TICK_INTERVAL = 0.0
# Changed objects taken per chunk of incremental work (a chunk is measured in one go; the budget
# is looked at between chunks).
OBJECTS_PER_CHUNK = 8
# The appended pair rows are compacted once dead rows outnumber live ones by this factor.
COMPACT_RATIO = 4

# Level Check settings that are not rules of the check (results and display).
_NOT_RULES = {"findings", "active_index", "summary", "complete", "show_labels", "rna_type",
              "name"}


# Stands for the full check while ``operators.level_run`` makes it.
_STARTING = object()


class LiveCheck:
    """The live findings of one scene and the state that keeps them current."""

    def __init__(self, scene):
        self.scene_name = scene.name
        self.run = None             # the full check (LevelRun) the live state starts from
        self.rebuild = True         # a full check is needed before anything else
        self.building = None        # a LevelRun under way
        self.dirty = set()          # indices of entries to measure again
        self.poses = {}             # entry index -> (world matrix, content key) as measured
        self.reshape = False        # some geometry changed: shapes made before are stale
        self.during = []            # updates that came while a full check was under way
        self.pairs = {}             # (i, j) -> (row, findings, supported object or None)
        self.by_object = defaultdict(set)   # i -> keys of pairs involving i
        self.index = {}             # object name -> entry indices it moves (object, instancer)
        self.outside = set()        # names of geometry objects seen but not checked
        self.signature = None       # the rules' inputs the full check was made with
        self.findings = []          # sorted as the full check sorts them
        self.keys = []              # their sort keys
        self.floating = []
        self.stored = True          # the scene holds the current findings
        self.last_work = {}         # what the last incremental update did (tests, benchmark)
        self.full_checks = 0        # full checks started (tests, benchmark)
        self.display = Display()    # what the Level Check list and the viewport show
        self.error = None           # why the last full check failed (a one-line sentence)

    # --- what changed ------------------------------------------------------------------------
    @property
    def pending(self) -> bool:
        return self.rebuild or self.building is not None or bool(self.dirty) or not self.stored

    def restart(self):
        """Start over with a full check (objects added, deleted or renamed; rules changed)."""
        self.rebuild = True
        self.building = None
        self.dirty.clear()

    def note(self, scene, depsgraph):
        """Take in a depsgraph update: what moved or changed, or whether to start over."""
        if self.rebuild:
            return
        if self.building is not None:
            # The full check under way may have made some shapes already: what changes now
            # is taken in once it is done.
            self.during.extend(_updates(depsgraph))
            return
        if rules_signature(scene) != self.signature:
            self.restart()
            return
        if self.run is None:        # the last full check failed: only a rule change helps
            return
        self._take(_updates(depsgraph), scene)

    def _take(self, updates, scene, surely=False):
        """Mark what the updates ((ID, geometry changed, transform changed) each) moved or
        changed. ``surely``: each reported object changed (what came while the full check
        was under way: the matrices it is compared with were read after)."""
        try:
            self._take_each(updates, scene, surely)
        except ReferenceError:      # deleted since the update came: the level changed
            self.restart()

    def _take_each(self, updates, scene, surely):
        for thing, geometry, transform in updates:
            if isinstance(thing, bpy.types.Collection):
                if thing == _rigid_body_collection(scene):
                    continue        # a rigid body moved: its object says so itself
                # Objects added, deleted or moved between collections (which the rules may
                # read), or an instanced collection changed.
                self.restart()
                return
            elif isinstance(thing, bpy.types.Object):
                self._note_object(thing, geometry or surely, transform)
                if self.rebuild:
                    return
                # Shapes are shared by content, and an edited mesh keeps its identity: the
                # shapes made before an edit must not be handed out again.
                self.reshape |= geometry

    def _note_object(self, obj, geometry, transform):
        entries = self.index.get(obj.name)
        if entries is None:
            owner = self.run.proxies.owner_of(obj)      # a proxy moves its owner's shape
            entries = self.index.get(owner.name) if owner is not None else None
            geometry = True                             # (its parts, not its matrix)
        if entries is not None:
            self.dirty.update(k for k in entries if geometry or self._changed(k, transform))
        elif obj.name not in self.outside and (obj.type in GEOMETRY_TYPES
                                               or obj.instance_type == 'COLLECTION'):
            self.restart()      # a new, renamed or newly visible object

    def _changed(self, k, transform) -> bool:
        """Whether entry ``k`` may have changed: Blender reports every rigid body as moved when
        one moves, and settings changes without a flag. A reported move with the same world
        matrix is no move; an update without flags is a change unless the object's content key
        (what its shape is made of) is the one it was measured with."""
        entry = self.run.kept[k]
        matrix, key = self.poses.get(k, (None, None))
        if np.array(entry.obj.matrix_world, dtype=float).tobytes() != matrix:
            return True
        if transform:
            return False
        return key is None or self.run.shape_cache._content_key(entry.obj) != key

    def _pose(self, k):
        entry = self.run.kept[k]
        return (np.array(entry.obj.matrix_world, dtype=float).tobytes(),
                self.run.shape_cache._content_key(entry.obj))

    # --- work --------------------------------------------------------------------------------
    def work(self, budget=FRAME_BUDGET, depsgraph=None) -> bool:
        """Do pending work for about ``budget`` seconds; True once everything is current.
        ``depsgraph``: the one a depsgraph handler was given (there, a full check is left to
        the timer: it evaluates the depsgraph itself)."""
        deadline = time.perf_counter() + budget
        try:
            if self.rebuild or self.building is not None:
                if depsgraph is not None:
                    return False
                if self.rebuild:
                    self._start_full_check()
                if not self.building.step(max(deadline - time.perf_counter(), 0.0)):
                    return False
                self._adopt(self.building)
            updated = False
            while self.dirty:
                chunk = [self.dirty.pop() for _ in range(min(OBJECTS_PER_CHUNK, len(self.dirty)))]
                self._update(chunk, depsgraph or bpy.context.evaluated_depsgraph_get())
                if self.rebuild:
                    return self.work(max(deadline - time.perf_counter(), 0.0), depsgraph)
                updated = True
                if time.perf_counter() >= deadline and self.dirty:
                    return False
            if updated:
                self._collect()
        except ValueError as problem:   # a rules file or an object the check refuses
            self.error = str(problem)
            self.rebuild, self.building, self.dirty = False, None, set()
            self.findings, self.keys, self.floating = [], [], []
            self.stored = False
        if not self.stored:
            self._store()
        return True

    def finish(self) -> list:
        """Everything pending done; the findings."""
        scene = bpy.data.scenes.get(self.scene_name)
        # (a rules Text edited in the Text Editor updates no depsgraph)
        if scene is not None and not self.rebuild and self.building is None \
                and rules_signature(scene) != self.signature:
            self.restart()
        while not self.work(FRAME_BUDGET):
            pass
        return list(self.findings)

    def _start_full_check(self):
        from .operators import level_run
        self.rebuild = False
        self.error = None
        self.full_checks += 1
        self.signature = rules_signature(bpy.context.scene)
        self.during = []
        # (making the run evaluates the depsgraph, which calls the handler: it must see a
        # check under way)
        self.building = _STARTING
        self.building = level_run(bpy.context)
        # What the depsgraph reported while the run was made came before any of its shapes.
        self.during = []

    def _adopt(self, run):
        """Take a finished full check as the live state: index its objects and classify each
        measurement on its own."""
        self.building = None
        self.run = run
        check = run.check
        check.done = len(check.pairs)
        self.index = defaultdict(list)
        for k, entry in enumerate(run.kept):
            for obj in (entry.obj, *entry.instancers):
                self.index[obj.name].append(k)
        self.index = dict(self.index)
        # Each object's world matrix as measured (its content key: once it is measured again).
        self.poses = {k: (np.array(entry.obj.matrix_world, dtype=float).tobytes(), None)
                      for k, entry in enumerate(run.kept)}
        self.outside = {o.name for o in bpy.context.view_layer.objects
                        if o.name not in self.index}
        # What of an object the rules read, as ``LevelRun`` asks for it.
        groups = run.rules.groups
        self.rules_read = (any(g.collections for g in groups),
                           any(g.property is not None for g in groups))
        # The full check's pair filters, kept per object (they read every name otherwise).
        self.is_mesh = np.array([info.is_mesh for info in check.assign.infos], dtype=bool)
        self.name_masks = [tuple(np.array([fnmatch.fnmatchcase(n, pattern) for n in check.names],
                                          dtype=bool) for pattern in patterns)
                           for patterns in check.ignore_pairs]
        self.pairs.clear()
        self.by_object.clear()
        self.findings, self.keys, self.floating = [], [], []
        for m in check._measured:
            self._keep(check, m)
        self._collect()
        during, self.during = self.during, []
        scene = bpy.context.scene
        if rules_signature(scene) != self.signature:
            self.restart()
        else:
            self._take(during, scene, surely=True)

    def _keep(self, check, m, before=None):
        """Keep measurement ``m`` classified; ``before``: the pair's findings before it was
        measured again, kept as they were (the same objects) when nothing changed, so that the
        display redraws only what did."""
        found, supported = classify_one(check, m)
        if before is not None and _same(found, before):
            found = before
        self.pairs[(m.i, m.j)] = (m.row, found, supported)
        self.by_object[m.i].add((m.i, m.j))
        self.by_object[m.j].add((m.i, m.j))
        for f in found:
            self._insert(f)

    def _forget(self, k):
        for key in self.by_object.pop(k, ()):
            _, found, _ = self.pairs.pop(key)
            for f in found:
                self._remove(f)
            other = key[1] if key[0] == k else key[0]
            self.by_object[other].discard(key)

    # The findings stay sorted as the full check sorts them (``Finding.sort_key``; no two
    # findings share a key): each goes in and out by bisection.
    def _insert(self, f):
        key = f.sort_key()
        at = bisect.bisect_right(self.keys, key)
        self.keys.insert(at, key)
        self.findings.insert(at, f)
        self.stored = False

    def _remove(self, f):
        at = bisect.bisect_left(self.keys, f.sort_key())
        while self.findings[at] is not f:
            at += 1
        del self.keys[at], self.findings[at]
        self.stored = False

    def _collect(self):
        """The floating objects, from the supports of all the kept pairs."""
        check = self.run.check
        if not check.assign.must_rest.any():
            return
        supported = np.zeros(len(check.names), dtype=bool)
        for _, _, k in self.pairs.values():
            if k is not None:
                supported[k] = True
        before = {f.object_a: f for f in self.floating}
        floating = [before[f.object_a] if f.object_a in before
                    and _same([f], [before[f.object_a]]) else f
                    for f in LevelCheck._floating(check, supported)]
        now, then = {id(f) for f in floating}, {id(f) for f in self.floating}
        for f in self.floating:
            if id(f) not in now:
                self._remove(f)
        for f in floating:
            if id(f) not in then:
                self._insert(f)
        self.floating = floating

    def _update(self, chunk, depsgraph):
        """Measure the objects ``chunk`` (entry indices) again against their neighbours (the
        floating objects are found again once no object is left to update)."""
        t0 = time.perf_counter()
        run, check = self.run, self.run.check
        if self.reshape:
            run.shape_cache = level_check.SharedShapes(run.shape_cache.enabled, run.proxies)
            self.reshape = False
        shapes = []
        for k in chunk:
            entry = run.kept[k]
            if entry.instancers or not _still_valid(entry.obj):
                self.restart()      # an instance's placement is made when the check starts
                return
            try:
                shape = run.shape_cache.shape(entry.obj, depsgraph, entry.placement)
            except ValueError:
                self.restart()      # it can no longer be checked: skipped by a full check
                return
            # What the rules read of it, read again (its collections change only with a
            # Collection update, which starts over: their map is the full check's).
            if (level_check.entry_info(_fresh(entry), shape, *self.rules_read) !=
                    check.assign.infos[k]
                    or not _same_clearance(entry, check, k, run)):
                self.restart()
                return
            shapes.append(shape)
        for k, shape in zip(chunk, shapes):
            run.shapes[k] = shape
            self.poses[k] = self._pose(k)
        lower, upper = world_aabbs(shapes, PoseTable.from_shapes(shapes))
        check.lower[chunk], check.upper[chunk] = lower, upper
        check.boxes_moved(chunk)
        before = {key: self.pairs[key][1] for k in chunk for key in self.by_object.get(k, ())}
        for k in chunk:
            self._forget(k)
        rows = self._new_rows(check, chunk)
        measured = check.check_rows(rows) if len(rows) else []
        for m in measured:
            self._keep(check, m, before.get((m.i, m.j)))
        check.done = len(check.pairs)
        self.last_work = dict(objects=len(chunk), pairs=len(rows),
                              seconds=time.perf_counter() - t0)
        self._compact(check)

    def _new_rows(self, check, chunk):
        """Rows appended to ``check.pairs`` for the candidate pairs of the objects ``chunk``,
        filtered as the full check filters its pairs (``LevelCheck.__init__``)."""
        # The broad phase's test: closed boxes, each grown by its own object's reach.
        grow = check.reach_of[:, None]
        lo, hi = check.lower - grow, check.upper + grow
        found = []
        for k in chunk:
            # x first (two comparisons over every box), then y and z of the few left.
            near = np.flatnonzero((lo[:, 0] <= hi[k, 0]) & (lo[k, 0] <= hi[:, 0]))
            near = near[np.all(lo[near, 1:] <= hi[k, 1:], axis=1)
                        & np.all(lo[k, 1:] <= hi[near, 1:], axis=1) & (near != k)]
            found.append(np.stack((np.full(len(near), k), near), axis=1))
        pairs = np.concatenate(found).astype(np.int64)
        if not len(pairs):
            return np.zeros(0, dtype=np.int64)
        pairs = np.unique(np.sort(pairs, axis=1), axis=0)    # a pair of two changed objects once
        i, j = pairs[:, 0], pairs[:, 1]
        # Ignored by a [[pair]] rule or a pattern pair; two triangle meshes never.
        ignored = check.assign.ignored_pairs(pairs) | (self.is_mesh[i] & self.is_mesh[j])
        for match_a, match_b in self.name_masks:
            ignored |= (match_a[i] & match_b[j]) | (match_b[i] & match_a[j])
        pairs = pairs[~ignored]
        names = check.names
        swap = np.array([names[b] < names[a] for a, b in pairs.tolist()], dtype=bool)
        pairs[swap] = pairs[swap][:, ::-1]
        need, label_index, labels = check.assign.pair_clearance(pairs)
        rule = np.array([_label_row(check, labels[x]) for x in label_index.tolist()],
                        dtype=np.int64).reshape(-1)
        # The box-gap cull: the distance of two shapes is at least the distance of their boxes.
        i, j = pairs[:, 0], pairs[:, 1]
        gap = np.maximum(np.maximum(check.lower[j] - check.upper[i],
                                    check.lower[i] - check.upper[j]), 0.0)
        lower_bound = np.sqrt((gap * gap).sum(axis=1))
        keep = (lower_bound == 0.0) | (lower_bound <= check._pair_reach(pairs, need))
        start = len(check.pairs)
        check.pairs = np.concatenate((check.pairs.reshape(-1, 2), pairs[keep]))
        check.pair_need = np.concatenate((check.pair_need, need[keep]))
        check._need_rule = np.concatenate((check._need_rule, rule[keep]))
        check._deep = np.concatenate((check._deep, np.zeros(int(keep.sum()), dtype=bool)))
        return np.arange(start, len(check.pairs))

    def _compact(self, check):
        """Drop the pair rows no kept measurement uses any more (rows are only appended)."""
        live = len(self.pairs)
        if len(check.pairs) <= COMPACT_RATIO * max(live, 1) + 1024:
            return
        keys = list(self.pairs)
        rows = np.array([self.pairs[key][0] for key in keys], dtype=np.int64)
        check.pairs = check.pairs[rows]
        check.pair_need = check.pair_need[rows]
        check._need_rule = check._need_rule[rows]
        check._deep = check._deep[rows]
        for new_row, key in enumerate(keys):
            _, found, supported = self.pairs[key]
            self.pairs[key] = (new_row, found, supported)
        check._measured = []
        check.done = len(check.pairs)

    def _store(self):
        """Show the findings in the Level Check list and the viewport."""
        self.stored = True
        scene = bpy.data.scenes.get(self.scene_name)
        if scene is None:
            return
        if self.error is not None:
            self.display = Display()
            level_check.store_findings(scene, [], f"Live check stopped: {self.error}",
                                       complete=False)
            return
        self.display.show(scene, self.findings, self.run)


class Display:
    """The live findings in the Level Check list (``scene.convex_level.findings``, as
    ``level_check.store_findings`` keeps them) and in the viewport, changed finding by finding:
    a move that changes one finding rewrites one row and one finding's drawing, not a thousand.
    Findings that did not change are the same objects from one update to the next."""

    def __init__(self):
        self.shown = []         # the findings the list holds, in its order
        self.pieces = {}        # id(finding) -> (finding, its Drawing)
        self.labels = None      # the Labels setting the pieces were drawn with

    def show(self, scene, findings, run):
        settings = scene.convex_level
        if len(settings.findings) != len(self.shown):       # someone else stored a list
            self.shown = []
            settings.findings.clear()
        changed = [id(f) for f in findings] != [id(f) for f in self.shown]
        if changed or settings.show_labels != self.labels:
            if settings.show_labels != self.labels:
                self.pieces.clear()
                self.labels = settings.show_labels
            new = [f for f in findings if id(f) not in self.pieces]
            outlines = dict(zip(map(id, new), outlines_of(run, new))) if new else {}
            if changed:
                self._update_list(settings, findings, outlines)
            self._draw(findings, outlines)
            summary = level_check.summary_text(findings, len(run.shapes)) + " (live)"
            if settings.summary != summary:
                settings.summary = summary
        if not settings.complete:
            settings.complete = True

    def _update_list(self, settings, findings, outlines):
        items = settings.findings
        keep = {id(f) for f in findings}
        for k in range(len(self.shown) - 1, -1, -1):      # the gone ones, from the end
            if id(self.shown[k]) not in keep:
                items.remove(k)
                del self.shown[k]
        # What stays is in sorted order still: the new ones go between, each where it sorts.
        for position, finding in enumerate(findings):
            if position < len(self.shown) and self.shown[position] is finding:
                continue
            level_check.write_item(items.add(), finding, outlines[id(finding)])
            items.move(len(items) - 1, position)
            self.shown.insert(position, finding)
        if settings.active_index >= len(items):
            settings["active_index"] = -1       # without the update: nothing is selected

    def _draw(self, findings, outlines):
        from . import overlay
        pieces = {}
        for f in findings:
            piece = self.pieces.get(id(f))
            if piece is None or piece[0] is not f:
                piece = (f, level_check.findings_drawing([f], labels=self.labels,
                                                         outlines=[outlines[id(f)]]))
            pieces[id(f)] = piece
        self.pieces = pieces
        # As ``findings_drawing`` orders them: overlaps last, so their colour shows on top.
        ordered = [pieces[id(f)][1] for f in findings if f.kind not in (OVERLAP, SUNK)] + \
            [pieces[id(f)][1] for f in findings if f.kind in (OVERLAP, SUNK)]
        if ordered:
            overlay.show(level_check.OVERLAY_KEY, Combined(ordered))
        else:
            overlay.clear(level_check.OVERLAY_KEY)


class Combined:
    """A drawing made of the findings' own drawings, joined when it is first drawn (a redraw
    walks every line anyway; an update that changes one finding does not)."""

    def __init__(self, pieces):
        self._pieces = pieces
        self._joined = None

    def _join(self):
        if self._joined is None:
            from . import overlay
            joined = overlay.Drawing()
            for piece in self._pieces:
                joined.lines += piece.lines
                joined.points += piece.points
                joined.labels += piece.labels
            self._joined = joined
        return self._joined

    @property
    def lines(self):
        return self._join().lines

    @property
    def points(self):
        return self._join().points

    @property
    def labels(self):
        return self._join().labels

    def __bool__(self):
        return any(self._pieces)

    def bounds(self):
        return self._join().bounds()


def outlines_of(run, findings) -> list:
    """``LevelRun.outlines`` of a few findings, without indexing every name of the level: it
    is given a view of the objects they name."""
    index = _name_index(run)
    names = sorted({n for f in findings for n in (f.object_a, f.object_b) if n in index})
    rows = [index[n] for n in names]
    check = run.check
    view = SimpleNamespace(names=names, check=SimpleNamespace(
        shapes=[check.shapes[k] for k in rows], lower=check.lower[rows],
        upper=check.upper[rows]))
    return level_check.LevelRun.outlines(view, findings)


def _name_index(run) -> dict:
    index = getattr(run, "_live_name_index", None)
    if index is None:
        index = run._live_name_index = {name: k for k, name in enumerate(run.names)}
    return index


def _same(found, before) -> bool:
    """Whether two lists of findings say the same, number for number."""
    return len(found) == len(before) and all(
        a.to_dict() == b.to_dict() for a, b in zip(found, before))


def classify_one(check, m):
    """(findings, supported object index or None) of one measurement, by the full check's own
    classification (``LevelCheck._classify`` on this measurement alone; its floating step is
    replaced by noting which object the measurement supports)."""
    captured = []
    saved_measured, saved_done = check._measured, check.done
    check._measured = [m]
    check.done = len(check.pairs)          # finished: _classify asks for floating objects
    check._floating = lambda supported: captured.append(np.flatnonzero(supported)) or []
    try:
        found = check._classify()
    finally:
        del check._floating
        check._measured, check.done = saved_measured, saved_done
    supported = captured[0] if captured else ()
    return found, (int(supported[0]) if len(supported) else None)


def _updates(depsgraph):
    """(ID, geometry changed, transform changed) of each update of ``depsgraph``."""
    return [(u.id.original, u.is_updated_geometry, u.is_updated_transform)
            for u in depsgraph.updates if u.id is not None]


def _rigid_body_collection(scene):
    world = scene.rigidbody_world
    return world.collection if world is not None else None


def _fresh(entry):
    """The entry with nothing read yet (an entry keeps its custom properties once read)."""
    return Entry(entry.name, entry.obj, entry.placement, entry.instancers, mover=entry.mover,
                 instanced_by=entry.instanced_by, parents=entry._parents)


def _label_row(check, label) -> int:
    """The index of a clearance rule's label in the check's own list (appended if new)."""
    labels = check._need_labels
    if label not in labels:
        labels.append(label)
    return labels.index(label)


def _still_valid(obj) -> bool:
    try:
        obj.name
    except ReferenceError:
        return False
    return True


def _same_clearance(entry, check, k, run) -> bool:
    """Whether the entry's own and override clearances are those the check started with."""
    flag, own, unchecked = level_check._clearance_levels([entry], run.options["clearances"])
    if unchecked:               # its own value is unusable: a full check leaves it out
        return False
    now = np.array([np.nan if v is None else v for v in (flag[0], own[0])], dtype=float)
    then = np.array([check.assign.flag[k], check.assign.own[k]], dtype=float)
    return bool(np.array_equal(now, then, equal_nan=True))


def rules_signature(scene) -> tuple:
    """Everything of the Level Check panel that the check reads, and the selection when the
    selection is what is checked (a change starts over)."""
    settings = getattr(scene, "convex_level", None)
    if settings is None:
        return ()
    values = []
    for prop in settings.bl_rna.properties:
        if prop.identifier in _NOT_RULES or prop.type == 'COLLECTION':
            continue
        value = getattr(settings, prop.identifier)
        if isinstance(value, bpy.types.Text):
            value = (value.name, value.as_string())
        elif isinstance(value, bpy.types.ID):
            value = value.name
        elif hasattr(value, "__len__") and not isinstance(value, str):
            value = tuple(value)
        values.append((prop.identifier, value))
    if settings.scope == 'SELECTED':      # the selection is what is checked
        values.append(("selection", frozenset(o.name for o in
                                              bpy.context.view_layer.objects.selected)))
    return tuple(values)


# --- the one live check, its handler and its timer ----------------------------------------------
_live: LiveCheck | None = None


def current() -> LiveCheck | None:
    """The live check of the scene it was started in, or None when it is off."""
    return _live


def start(scene):
    """Turn the live check on for ``scene`` (a full check first, in slices)."""
    global _live
    _live = LiveCheck(scene)
    _schedule()


def stop():
    global _live
    _live = None
    if bpy.app.timers.is_registered(_tick):
        bpy.app.timers.unregister(_tick)


def list_replaced():
    """The Level Check list was stored by someone else (Check Level, Clear Findings): the live
    check writes it whole again at its next update."""
    if _live is not None:
        _live.display = Display()
        _live.stored = False
        _schedule()


def finish() -> list:
    """The live findings, once every pending update is done (headless: no timer runs)."""
    if _live is None:
        raise ValueError("The live check is off: turn on Live in the Level Check panel "
                         "(or run object.convex_live_check)")
    return _live.finish()


def _schedule():
    if not bpy.app.timers.is_registered(_tick):
        bpy.app.timers.register(_tick, first_interval=TICK_INTERVAL)


def _tick():
    if _live is None or _live.work(FRAME_BUDGET):
        return None
    return TICK_INTERVAL


# Seconds the handler took on the last depsgraph update (read by the benchmark).
last_handler_seconds = 0.0


@persistent
def _on_depsgraph_update(scene, depsgraph):
    global last_handler_seconds
    live = _live
    if live is None or scene.name != live.scene_name:
        return
    start = time.perf_counter()
    live.note(scene, depsgraph)
    if live.pending and not live.work(FRAME_BUDGET, depsgraph):
        _schedule()
    last_handler_seconds = time.perf_counter() - start


@persistent
def _on_undo(*_args):
    # Undo brings back another state of every object: start over from a full check, or stop
    # (or start) as the Live setting it brings back says.
    scene = bpy.context.scene
    settings = getattr(scene, "convex_tools", None) if scene is not None else None
    if settings is None or not settings.live_check:
        stop()
    elif _live is None or _live.scene_name != scene.name:
        start(scene)
    else:
        _live.restart()
        _schedule()


@persistent
def _on_load(*_args):
    # The live state belongs to the file that was open; the new one may have Live on.
    stop()
    scene = bpy.context.scene
    settings = getattr(scene, "convex_tools", None) if scene is not None else None
    if settings is not None and settings.live_check:
        start(scene)


_HANDLERS = (("depsgraph_update_post", _on_depsgraph_update), ("undo_post", _on_undo),
             ("redo_post", _on_undo), ("load_post", _on_load))


def attach():
    for name, handler in _HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        if handler not in handlers:
            handlers.append(handler)


def detach():
    stop()
    for name, handler in _HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        while handler in handlers:
            handlers.remove(handler)
