"""Level checks on Blender objects: which pairs overlap or keep less than their clearance.

``check_scene`` gathers the objects to check (the given ones, a collection, or the scene; minus
the ignored ones), turns each into a world-space core shape (``objects.shape_from_object``), works
out each object's clearance, and hands the rest to ``core.level``. The operator, the command line
and scripts all go through ``LevelRun`` here, so they check exactly the same pairs.

The findings of the Check Level operator are stored in the scene (``Scene.convex_level``, see
``properties``) and drawn in the viewport from there: ``store_findings``, ``show_stored_findings``
(also after a file is loaded), ``select_pair``.

An object's clearance, first match wins:
1. ``clearances`` passed in (a mapping of object name or fnmatch pattern to metres);
2. the object's custom property ``convex_clearance``;
3. its Convex settings, when they carry one (``use_clearance`` and ``clearance``);
4. the ``clearance`` of the check.
A pair must keep the larger of its two objects' clearances. Name overrides match an object's
reported name (an instance's path, e.g. ``Shelf/Crate.003``) or the name of the object it is.

What is checked (``collect.collect_entries``): every object with geometry,
as the shape ``objects.shape_from_object`` makes of it — through its collision proxies or compound
rigid-body children when it has them (the proxies and children are then not checked on their own:
a selected proxy stands for its owner) — and every instance of every kind (collection instances,
geometry nodes, particles, vertex and face instancing), each with its own matrix and named by its
path (``Shelf/Crate.003``, ``Scatter/Rock [instance 12]``). An Unreal proxy that names no object
is skipped, with the reason; objects disabled in viewports and Boolean operands are excluded.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
import time

import bpy
import numpy as np

from .core import level as core_level
from .core.level import (FLOATING, OVERLAP, SUNK, TOO_CLOSE, TOUCH_TOLERANCE, TRAVERSAL_KINDS,
                         CheckCancelled, Finding, LevelCheck, Stats, report_csv, report_json,
                         report_table)
from .core.placement import (LazyShapes, Placed, PoseTable, group_positions, split_poses,
                             world_aabbs)
from .core.rules import EntryInfo, Rules, RulesError
from .core.units import Units
from .core.shapes import Transformed
from . import instances
from .bulk import ObjectTable
from .collect import Entry, collect_entries, cyclic_gc_paused
from .objects import (is_concave, settings_of, settings_snapshot, shape_from_object,
                      stored_group, stored_settings, world_matrix)
from .proxies import ProxyIndex, options_for as proxy_options
from .result_drawings import part_for_label, shape_wire

__all__ = ["check_scene", "LevelRun", "Entry", "Finding", "CheckCancelled", "LevelCheck", "Stats",
           "OVERLAP", "TOO_CLOSE", "TOUCH_TOLERANCE", "CLEARANCE_PROPERTY", "report_json",
           "report_csv", "report_table", "findings_drawing", "OVERLAY_KEY"]

# Custom property (Object Properties > Custom Properties) holding an object's own clearance.
CLEARANCE_PROPERTY = "convex_clearance"

# Key of the level findings in the viewport overlay (overlay.show / overlay.clear).
OVERLAY_KEY = "level_check"


# Share of the progress bar given to making shapes (the rest measures pairs).
SHAPES_SHARE = 0.4


class LevelRun:
    """A level check on Blender objects, run in steps so that a modal operator stays responsive.

    Construction gathers the objects (quick). ``step(seconds)`` then makes shapes chunk by chunk,
    does the broad phase once all shapes exist, and measures pairs chunk by chunk; it returns
    True when everything is done. ``fraction`` and ``phase`` say how far it got, ``findings``
    what it found so far (all of them once done).
    """

    def __init__(self, objects=None, clearance=None, *, collection=None, ignore=(),
                 ignore_pairs=(), clearances=None, touch_tolerance=None,
                 depsgraph=None, scene=None, context=None, share_shapes=True,
                 batched=True, rules=None, floating=None, include_hidden=False,
                 include_cutters=False, engine=None, one_hull_per_ucx=None) -> None:
        t0 = time.perf_counter()
        context = context or bpy.context
        self.scene = scene or context.scene
        # Evaluating first also brings the view layer up to date with objects added just now.
        self.depsgraph = depsgraph or context.evaluated_depsgraph_get()
        # The active scene's view layer leaves out excluded collections (work in progress);
        # another scene is taken whole.
        everything = (context.view_layer.objects if self.scene == context.scene
                      else self.scene.objects)
        self.rules = load_rules(rules, self.scene)
        self.warnings = list(self.rules.warnings)
        # The file's objects read in bulk (names, types, world matrices: ``bulk``).
        self.table = ObjectTable()
        # Whose proxy naming: the flag, else the rules file's [defaults], else the scene's.
        self.proxies = ProxyIndex(table=self.table, **proxy_options(
            self.scene, engine or self.rules.defaults["engine"],
            one_hull_per_ucx if one_hull_per_ucx is not None
            else self.rules.defaults["one_hull_per_ucx"]))
        collected = collect_entries(objects, collection, ignore, everything, self.proxies,
                                    self.depsgraph, include_hidden=include_hidden,
                                    include_cutters=include_cutters, table=self.table)
        self.pending, skipped = collected.entries, collected.skipped
        # Left out by rule (disabled in viewports, Boolean cutters, -noimp, proxies' looks):
        # listed, never an error.
        self.excluded = list(collected.excluded)
        self.unmatched_ignores = list(collected.unmatched_ignores)
        self.clearance = clearance
        self.options = dict(clearances=clearances, touch_tolerance=touch_tolerance,
                            ignore_pairs=ignore_pairs)
        # Level rules (issue 18; ``core.rules``): ``rules`` a rules file path, its TOML text in
        # a Text datablock, or a parsed ``Rules`` (None: the scene's setting, else the implicit
        # rules of the flags); ``floating``: check every movable object for floating with this
        # tolerance; ``include_hidden``/``include_cutters``: check objects disabled in viewports
        # and Boolean operands; ``engine``/``one_hull_per_ucx``: which engine's proxy naming
        # rules apply ("unreal", "godot", "both"; None: the rules' or the scene's setting).
        self.rule_options = dict(rules=rules, floating=floating, include_hidden=include_hidden,
                                 include_cutters=include_cutters, engine=engine,
                                 one_hull_per_ucx=one_hull_per_ucx)
        # Validate the cheap options now rather than after converting every object.
        for label, value in (("clearance", clearance), ("touch_tolerance", touch_tolerance),
                             ("floating", floating)):
            if value is not None:
                core_level._non_negative(label, value)
        core_level._pair_patterns(ignore_pairs)
        self.shape_cache = SharedShapes(enabled=share_shapes, proxies=self.proxies)
        self.batched = batched       # False: every pair by the single queries (benchmarks)
        self.shapes, self.names, self.kept, self.skipped = [], [], [], list(skipped)
        # Shapes shared with an object converted before, placed all at once when the last
        # object is converted (``_place_shared``): id(X) -> (inner, X, positions in
        # ``shapes``, rows of the bulk table or -1, [(index among them, placement)]).
        self._shared = {}
        self._own_world = {}   # position -> world matrix of a shared one not read in bulk
        self._keys = {}        # instanced object's session_uid -> its content key
        self.converted = 0
        self.own_clearances = 0   # objects with a clearance of their own (known once built)
        self.unchecked = []       # (name, reason): an unusable setting of its own (once built)
        self.check = None
        self.times = {"collect": time.perf_counter() - t0, "shapes": 0.0}

    @property
    def objects(self) -> dict:
        """Name -> object to select for everything checked (an instance's outermost
        instancer; to select and frame findings)."""
        return {e.name: e.selectable for e in self.kept}

    @property
    def finished(self) -> bool:
        return self.check is not None and self.check.finished

    @property
    def phase(self) -> str:
        if self.check is None:
            return f"making shapes ({self.converted}/{len(self.pending)} objects)"
        return f"measuring pairs ({self.check.done}/{self.check.total})"

    @property
    def fraction(self) -> float:
        if self.check is None:
            return SHAPES_SHARE * self.converted / max(1, len(self.pending))
        return SHAPES_SHARE + (1.0 - SHAPES_SHARE) * self.check.done / max(1, self.check.total)

    def step(self, seconds=0.05, shapes_only=False) -> bool:
        """Work for about ``seconds`` (at least one chunk); True once the check is done.
        ``shapes_only``: return as soon as the shapes are made and the pairs found."""
        deadline = time.perf_counter() + seconds
        while True:
            if self.check is None:
                self._convert(OBJECTS_PER_STEP)
                if self.converted == len(self.pending):
                    self._build()
                    if shapes_only:
                        return self.finished
            elif shapes_only:
                return self.finished
            else:
                self.check.step()
            if self.finished or time.perf_counter() >= deadline:
                return self.finished

    def run(self, progress=None, should_cancel=None, seconds=0.2, jobs=1) -> list:
        """Run to the end; ``progress(fraction, phase)`` after each step of about ``seconds``;
        ``CheckCancelled`` once ``should_cancel()`` is true. ``jobs``: processes measuring
        pairs once the shapes are made (``core.level.run_to_end``; None: one per core)."""
        while self.check is None or (jobs == 1 and not self.finished):
            if should_cancel is not None and should_cancel():
                raise CheckCancelled(self.findings)
            if self.step(seconds, shapes_only=jobs != 1):
                break
            if progress is not None:
                progress(self.fraction, self.phase)
        if not self.finished:
            core_level.run_to_end(
                self.check, jobs,
                None if progress is None else lambda done, total: progress(self.fraction,
                                                                           self.phase),
                should_cancel)
        if progress is not None:
            progress(1.0, "done")
        return self.findings

    @property
    def findings(self) -> list:
        """The check's findings; one with a Godot body names the visual object beside it
        (``visual_a``/``visual_b``)."""
        found = [] if self.check is None else self.check.findings
        out = []
        for f in found:
            extra = self.proxies.finding_extra(f.object_a, f.object_b)
            out.append(dataclasses.replace(f, extra={**(f.extra or {}), **extra})
                       if extra else f)
        return out

    @property
    def stats(self) -> Stats:
        """Counts and per-phase times so far (gathering objects and making shapes included)."""
        base = self.check.stats.__dict__ if self.check is not None else {}
        times = {**self.times, **(self.check.stats.times if self.check is not None else {})}
        return Stats(**{**base, "objects": len(self.shapes), "times": times,
                        "skipped_objects": list(self.skipped),
                        "excluded_objects": list(self.excluded),
                        "shapes_made": self.shape_cache.made,
                        "shapes_shared": self.shape_cache.reused})

    def outlines(self, findings) -> list:
        """For each finding, (segments of A, segments of B) in the world: the outline of the
        part that touches for a compound or triangle mesh, else the shape's bounding box."""
        index = {n: i for i, n in enumerate(self.names)}
        out = []
        for f in findings:
            pair = []
            for name, part in ((f.object_a, getattr(f, "part_a", None)),
                               (f.object_b, getattr(f, "part_b", None))):
                i = index.get(name)
                if i is None or self.check is None:
                    pair.append(None)
                    continue
                shape = self.check.shapes[i]
                piece = part_for_label(shape, part) if part and is_concave(shape) else None
                pair.append(shape_wire(piece) if piece is not None else
                            _box_edges(self.check.lower[i], self.check.upper[i]))
            out.append(tuple(pair))
        return out

    def _convert(self, count):
        t0 = time.perf_counter()
        stop = min(self.converted + count, len(self.pending))
        try:
            pose, depsgraph, groups = self.shape_cache.pose, self.depsgraph, self._shared
            rows, shapes, names, kept = self.table.row, self.shapes, self.names, self.kept
            for entry in self.pending[self.converted:stop]:
                name = entry.object_name
                try:
                    # (an instance's object is the same for many entries: its key read once)
                    shape, inner, x = pose(entry.obj, depsgraph, entry.placement, name=name,
                                           keys=self._keys if entry.instancers else None)
                except ValueError as error:  # e.g. a mesh without vertices
                    self.skipped.append((entry.name, str(error)))
                else:
                    if shape is None:
                        # Placed with the others sharing X once all are converted.
                        group = groups.get(id(x))
                        if group is None:
                            group = groups[id(x)] = (inner, x, [], [], [])
                        row = rows.get(name, -1)
                        if row < 0:      # (not in the bulk table: read alone)
                            self._own_world[len(shapes)] = world_matrix(entry.obj,
                                                                        entry.placement)
                        elif entry.placement is not None:
                            group[4].append((len(group[2]), entry.placement))
                        group[2].append(len(shapes))
                        group[3].append(row)
                    shapes.append(shape)
                    names.append(entry.name)
                    kept.append(entry)
                # Counted one by one: an interrupted run reports how far it really got.
                self.converted += 1
        finally:
            self.times["shapes"] += time.perf_counter() - t0

    def _place_shared(self):
        """The pose table of all shapes, the shared ones made first: the matrices M X of the
        objects sharing one X multiplied at once (as ``SharedShapes.shape`` multiplies them
        one by one), and the table built from them (``PoseTable.from_poses``) rather than split
        again from the shapes, in the same order as ``placement.split_poses``."""
        shapes = self.shapes
        n = len(shapes)
        matrices = np.empty((n, 4, 4))
        placed = np.zeros(n, dtype=bool)     # shared convex shapes: their matrix is set
        first = {}         # id(local shape) -> [first position, local shape, [positions]]

        def meet(inner, members):         # ``members``: ascending positions of ``inner``
            found = first.get(id(inner))
            if found is None:
                first[id(inner)] = [int(members[0]), inner, [members]]
            else:
                found[0] = min(found[0], int(members[0]))
                found[2].append(members)

        table = self.table.matrices if self._shared else None
        rows_of = list(matrices)             # (views, made in one pass)
        for inner, x, members, rows, placements in self._shared.values():
            members, rows = np.array(members, dtype=np.int64), np.array(rows, dtype=np.int64)
            world = table[np.maximum(rows, 0)]
            for i in np.flatnonzero(rows < 0).tolist():
                world[i] = self._own_world[int(members[i])]
            if placements:        # instances: placement @ matrix_world (``world_matrix``)
                _place_instances(world, placements)
            matrices[members] = world @ x
            if is_concave(inner):
                # (the row becomes the identity below, as for any concave shape: its own copy)
                for k in members.tolist():
                    shapes[k] = shared_shape(inner, matrices[k].copy())
                continue
            for k in members.tolist():
                shapes[k] = Placed(inner, rows_of[k])
            placed[members] = True
            meet(inner, members)
        self._shared, self._own_world = {}, {}
        # The others (made one by one) as ``placement.split_poses`` takes them apart.
        others = np.flatnonzero(~placed)
        if len(others):
            local_others, index_others, matrices[others] = split_poses(
                [shapes[k] for k in others.tolist()])
            for u, positions in group_positions(index_others):
                meet(local_others[u], others[positions])
        index = np.empty(n, dtype=np.int64)
        locals_ = []
        for _, inner, members in sorted(first.values(), key=lambda item: item[0]):
            for chunk in members:
                index[chunk] = len(locals_)
            locals_.append(inner)
        return PoseTable.from_poses(locals_, index, matrices)

    def _build(self):
        with cyclic_gc_paused():       # (a few objects per entry, no cycles)
            self._build_check()

    def _build_check(self):
        t0 = time.perf_counter()
        table = self._place_shared()
        aabbs = world_aabbs(self.shapes, table)
        flag, own, unchecked = _clearance_levels(self.kept, self.options["clearances"])
        if unchecked:
            # An object whose own setting is unusable is left unchecked, with the reason; the
            # run goes on.
            self.unchecked = unchecked
            keep = [k for k, e in enumerate(self.kept) if e.name not in dict(unchecked)]
            self.shapes = [self.shapes[k] for k in keep]
            self.names = [self.names[k] for k in keep]
            self.kept = [self.kept[k] for k in keep]
            flag, own = [flag[k] for k in keep], [own[k] for k in keep]
            table = PoseTable.from_shapes(self.shapes)
            aabbs = world_aabbs(self.shapes, table)
        self.own_clearances = sum(f is not None or o is not None for f, o in zip(flag, own))
        # Collections and custom properties are read only when a rule group matches by them.
        groups = self.rules.groups
        by_collection = any(g.collections for g in groups)
        by_property = any(g.property is not None for g in groups)
        infos = [entry_info(entry, shape, by_collection, by_property)
                 for entry, shape in zip(self.kept, self.shapes)]
        self.times["aabbs"] = time.perf_counter() - t0
        self.check = LevelCheck(LazyShapes(self.shapes), self.names, self.clearance, own,
                                self.options["touch_tolerance"], self.options["ignore_pairs"],
                                aabbs=aabbs, table=table, batched=self.batched,
                                rules=self.rules, infos=infos, flag_clearances=flag,
                                floating=self.rule_options["floating"])


# Objects converted per step of ``LevelRun.step`` (a few milliseconds of work).
OBJECTS_PER_STEP = 64


def check_scene(objects=None, clearance=None, *, collection=None, ignore=(), ignore_pairs=(),
                clearances=None, touch_tolerance=None, progress=None,
                should_cancel=None, depsgraph=None, scene=None, stats=None, jobs=1,
                **rule_options) -> list:
    """Pairs of objects that overlap or are closer than their clearance, as ``Finding`` s.

    ``objects``: objects (or names) to check; by default every object of ``collection`` (a
    collection or its name) or, without one, of the scene's view layer (collections excluded
    from it are left out). Only objects with geometry count.
    ``clearance``: metres every object needs around it (0 finds overlaps only).
    ``ignore``: objects, collections, names or fnmatch name patterns left out (e.g. the floor).
    ``ignore_pairs``: (pattern_a, pattern_b) pairs of name patterns not checked against each
    other, in either order (or strings ``"pattern_a:pattern_b"``).
    ``clearances``: mapping of object name or pattern to its own clearance (see the module doc
    for the custom property and the per-object setting).
    ``touch_tolerance``: overlaps up to this depth are touching, not findings.
    ``progress(fraction, phase)`` is called as the check goes (fraction from 0 to 1, phase a
    short text); once ``should_cancel()`` returns True, ``CheckCancelled`` is raised carrying the
    findings so far. ``stats``: a ``Stats`` filled with counts and per-phase times.
    ``jobs``: processes that measure pairs (None: one per core; see ``core.level.run_to_end``);
    the findings do not depend on it.

    Findings are sorted by kind then names; ``distance`` is negative for an overlap's depth.
    """
    level_run = LevelRun(objects, clearance, collection=collection, ignore=ignore,
                         ignore_pairs=ignore_pairs, clearances=clearances,
                         touch_tolerance=touch_tolerance, depsgraph=depsgraph, scene=scene,
                         **rule_options)
    try:
        return level_run.run(progress, should_cancel, jobs=jobs)
    finally:
        if stats is not None:
            stats.__dict__.update(level_run.stats.__dict__)


# --- which objects ---------------------------------------------------------------------------
# --- shapes ---------------------------------------------------------------------------------
class _Unshareable(Exception):
    """The object's shape may depend on more than its own data and settings."""


# Modifiers whose result depends only on the mesh and their own settings (unless one of their
# settings points at another data-block or uses global coordinates, which ``_rna_key`` refuses).
SHAREABLE_MODIFIERS = {
    'ARRAY', 'BEVEL', 'BUILD', 'CAST', 'CORRECTIVE_SMOOTH', 'DECIMATE', 'DISPLACE', 'EDGE_SPLIT',
    'LAPLACIANSMOOTH', 'MASK', 'MIRROR', 'MULTIRES', 'REMESH', 'SCREW', 'SIMPLE_DEFORM', 'SKIN',
    'SMOOTH', 'SOLIDIFY', 'SUBSURF', 'TRIANGULATE', 'UV_PROJECT', 'UV_WARP', 'WAVE',
    'WEIGHTED_NORMAL', 'WELD', 'WIREFRAME',
}

# RNA properties that never change the evaluated geometry (UI state, statistics).
_IGNORED_PROPERTIES = {"rna_type", "name", "show_expanded", "is_active", "execution_time",
                       "persistent_uid", "show_in_editmode", "show_on_cage", "is_override_data",
                       "use_pin_to_last", "is_override_data_editable"}


def _rna_key(struct, depth=0):
    """A hashable snapshot of every setting of ``struct`` (nested structs included)."""
    key = []
    for ident, how in _rna_plan(struct.bl_rna):
        value = getattr(struct, ident)
        if how is _POINTER:
            if value is None:
                key.append((ident, None))
            elif isinstance(value, bpy.types.ID) or depth >= 2:
                raise _Unshareable(ident)
            else:
                key.append((ident, _rna_key(value, depth + 1)))
        elif how is _COLLECTION:
            if depth >= 2:
                raise _Unshareable(ident)
            key.append((ident, tuple(_rna_key(item, depth + 1) for item in value)))
        elif how is _FLAGS:
            key.append((ident, tuple(sorted(value))))
        elif how is _ARRAY:
            key.append((ident, tuple(np.asarray(value, dtype=float).ravel().tolist())))
        else:
            if value == 'GLOBAL':  # e.g. a displacement textured in world coordinates
                raise _Unshareable(ident)
            key.append((ident, value))
    return tuple(key)


_POINTER, _COLLECTION, _FLAGS, _ARRAY, _VALUE = range(5)
_RNA_PLANS = {}


def _rna_plan(rna):
    """(identifier, how to read it) for the properties of an RNA type, worked out once per
    type: walking ``bl_rna.properties`` made each modifier's key cost ~95 µs, most of it
    building the property descriptions."""
    plan = _RNA_PLANS.get(rna.identifier)
    if plan is None:
        plan = []
        for prop in rna.properties:
            ident = prop.identifier
            if ident in _IGNORED_PROPERTIES:
                continue
            if prop.type == 'POINTER':
                how = _POINTER
            elif prop.type == 'COLLECTION':
                how = _COLLECTION
            elif prop.type == 'ENUM' and getattr(prop, "is_enum_flag", False):
                how = _FLAGS
            elif prop.type in {'FLOAT', 'INT', 'BOOLEAN'} and getattr(prop, "array_length", 0):
                how = _ARRAY
            else:
                how = _VALUE
            plan.append((ident, how))
        plan = _RNA_PLANS[rna.identifier] = tuple(plan)
    return plan


_UNKNOWN = object()     # (no content key kept yet)


class SharedShapes:
    """World-space shapes of objects, made once per distinct object *content*.

    Levels are built from instances: a thousand crates share one mesh, and a hundred bevelled
    crates one mesh and one modifier stack. Their shapes differ only by the object's matrix, so
    the shape is made once (``objects.shape_from_object``) and moved to every other instance. The
    content key is everything the shape can depend on besides the matrix: the object data, its
    modifiers' settings, its vertex group names, its rigid-body and Convex settings. Objects whose
    content may depend on other objects (a modifier pointing at one, geometry nodes, armature or
    lattice parents, metaballs) are converted one by one.

    ``shape_from_object`` builds ``Transformed(local shape, matrix_world)`` with the local shape
    made from the content alone (API.md: "the object's full world matrix applies"), so such a
    shape is carried to another instance by M₂ M₁⁻¹ whatever their scales. A shape with a margin
    (a sphere Minkowski-added in world units) moves only by rigid motions, so for it the key also
    holds the object's scale (two unparented objects with equal scales differ by a rotation and a
    translation). The test against one-by-one conversion guards both rules.
    """

    def __init__(self, enabled=True, proxies=None):
        self.enabled = enabled
        self.proxies = proxies   # the file's ProxyIndex (made on first need if None)
        self._local = {}     # content key -> (inner shape, X) with shape = Transformed(inner, M X)
        self.made = 0        # shapes made by shape_from_object
        self.reused = 0      # shapes moved from another instance

    def shape(self, obj, depsgraph, placement=None, *, name=None):
        """The world-space shape of ``obj`` (placed by a collection instance's ``placement``);
        ``name``: ``obj.name`` when the caller has read it."""
        shape, inner, x = self.pose(obj, depsgraph, placement, name=name)
        if shape is not None:
            return shape
        return shared_shape(inner, world_matrix(obj, placement) @ x)

    def pose(self, obj, depsgraph, placement=None, *, name=None, keys=None):
        """``shape`` in two halves: (shape, None, None) for a shape made now (or not
        shareable); (None, inner, X) for one shared with an object seen before: the shape is
        ``shared_shape(inner, M @ X)`` with M the object's world matrix, which the caller may
        multiply for many objects at once. ``keys``: a dict where the content key of each
        object is kept by its ``session_uid`` (for the instances of one object, while nothing
        changes)."""
        if not self.enabled:
            key = None
        elif keys is None:
            key = self._content_key(obj, name)
        else:
            uid = obj.session_uid
            key = keys.get(uid, _UNKNOWN)
            if key is _UNKNOWN:
                key = keys[uid] = self._content_key(obj, name)
        if key is None:
            self.made += 1
            return shape_from_object(obj, depsgraph=depsgraph, placement=placement,
                                     proxies=self.proxies), None, None
        hit = self._local.get(key)
        stretch = None
        if hit is None and placement is None:
            stretch = _stretch(obj)     # (read only when needed: ~2 µs an object)
            if stretch is not None:
                hit = self._local.get(key + (stretch,))
        if hit is not None:
            self.reused += 1
            return None, hit[0], hit[1]
        self.made += 1
        world = shape_from_object(obj, depsgraph=depsgraph, placement=placement,
                                  proxies=self.proxies)
        inverse = _affine_inverse(world_matrix(obj, placement))
        if inverse is None:
            return world, None, None
        if isinstance(world, Transformed):
            self._local[key] = (world.shape, inverse @ world.matrix)
        elif is_concave(world):
            self._local[key] = (world, inverse)
        elif stretch is not None:
            self._local[key + (stretch,)] = (world, inverse)
        return world, None, None

    def _content_key(self, obj, name=None):
        """What the object's shape depends on besides its matrix; None when unknown. Each
        setting is read once (this runs for every object of a level)."""
        kind, data = obj.type, obj.data
        if kind == 'META' or data is None:
            return None
        parent = obj.parent
        if parent is not None and obj.parent_type in {'ARMATURE', 'LATTICE'}:
            return None
        if self.proxies is None:       # one index for all the objects this cache sees
            self.proxies = ProxyIndex()
        if name is None:
            name = obj.name
        # Proxies and compound children bring other objects' data and matrices (a childless
        # compound parent is refused by shape_from_object); margins on convex parts do not move
        # with a stretching matrix as a compound does.
        if self.proxies.has_parts(name):
            return None
        rigid = obj.rigid_body
        if rigid is not None and rigid.collision_shape == 'COMPOUND':
            return None
        # The Convex settings: the kind, margin and radius choose the shape (none stored: all
        # at their defaults).
        group = stored_group(obj)
        if group is not None:
            settings = settings_of(obj)
            if settings.kind == 'CONVEX_PARTS' and settings.margin > 0.0:
                return None
        mark = self.proxies.own_mark(name)     # a Godot suffix chooses the kind by name
        modifiers = ()
        stack = obj.modifiers
        try:
            if stack:
                modifiers = []
                for mod in stack:
                    if mod.type not in SHAREABLE_MODIFIERS:
                        return None
                    modifiers.append((mod.type, _rna_key(mod)))
                modifiers = tuple(modifiers)
            # What of a rigid body makes its shape (``objects``: the collision shape, and the
            # margin of a convex hull); reading all of its settings cost ~20 µs an object.
            rigid_body = (rigid.collision_shape, rigid.use_margin,
                          rigid.collision_margin) if rigid is not None else None
        except _Unshareable:
            return None
        groups = tuple(g.name for g in obj.vertex_groups) if modifiers else ()
        return (kind, data.as_pointer(), modifiers, groups, rigid_body,
                settings_snapshot(group), mark.kind if mark is not None else None)


def _place_instances(world, placements):
    """``world[i] = placement @ world[i]`` for each (i, placement) of ``placements``, in one
    product (instances of one instancer share its placement array)."""
    distinct, which = {}, []
    for _, placement in placements:
        which.append(distinct.setdefault(id(placement), (len(distinct), placement))[0])
    stack = np.array([np.asarray(p, dtype=float) for _, p in distinct.values()])
    rows = np.array([i for i, _ in placements], dtype=np.int64)
    world[rows] = stack[which] @ world[rows]


def shared_shape(inner, matrix):
    """The world shape of a shared local shape under ``matrix`` (``SharedShapes.pose``): a
    compound or triangle mesh moves as a whole (its parts keep their matrices), a convex shape
    is placed (made on first use)."""
    return inner.transformed(matrix) if is_concave(inner) else Placed(inner, matrix)


def _stretch(obj):
    """The object's scale, which with its rotation and location makes its matrix; two objects
    with equal scales differ by a rigid motion. None for a parented object (its parents' scales
    and rotations combine into a stretch this does not capture)."""
    if obj.parent is not None:
        return None
    return tuple(s * d for s, d in zip(obj.scale, obj.delta_scale))


def _affine_inverse(matrix):
    """Inverse of a 4×4 affine matrix by cofactors, in floats (numpy's per-call overhead is
    most of the cost at 3×3); None when singular."""
    (a, b, c, x), (d, e, f, y), (g, h, i, z) = matrix[:3].tolist()
    co = (e * i - f * h, f * g - d * i, d * h - e * g)
    det = a * co[0] + b * co[1] + c * co[2]
    if det == 0.0 or not np.isfinite(det):
        return None
    r = 1.0 / det
    inv = ((co[0] * r, (c * h - b * i) * r, (b * f - c * e) * r),
           (co[1] * r, (a * i - c * g) * r, (c * d - a * f) * r),
           (co[2] * r, (b * g - a * h) * r, (a * e - b * d) * r))
    out = np.eye(4)
    out[:3, :3] = inv
    out[:3, 3] = [-(row[0] * x + row[1] * y + row[2] * z) for row in inv]
    return out


# --- rules ---------------------------------------------------------------------------------
def load_rules(rules, scene=None) -> Rules:
    """The level rules to check with: ``rules`` (a ``Rules``, a rules file's path, or a Text
    datablock), else the scene's Rules File, else its Rules Text, else none (the flags' implicit
    rules). A rules error is a ``RulesError`` (ValueError) naming file, line and key."""
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, bpy.types.Text):
        return Rules.from_text(rules.as_string(), source=f"Text {rules.name}")
    if rules:
        return Rules.from_file(bpy.path.abspath(str(rules)))
    settings = getattr(scene, "convex_level", None) if scene is not None else None
    if settings is not None:
        if settings.rules_file:
            return Rules.from_file(bpy.path.abspath(settings.rules_file))
        if settings.rules_text is not None:
            return Rules.from_text(settings.rules_text.as_string(),
                                   source=f"Text {settings.rules_text.name}")
    return Rules()


def entry_info(entry, shape, collections=True, properties=True) -> EntryInfo:
    """What the rules see of one entry: its names, collections and custom properties (when
    asked: a rule group matches by them), whether it is a passive rigid body or a triangle mesh,
    and what a fix moves."""
    # (A placed convex shape is no triangle mesh: asking it for ``is_mesh`` would raise and
    # catch an AttributeError, ~1 µs for each of most objects.)
    is_mesh = False if type(shape) is Placed else bool(getattr(shape, "is_mesh", False))
    return EntryInfo(entry.name, entry.object_name, entry.collections if collections else (),
                     entry.properties if properties else {}, entry.passive, is_mesh,
                     entry.mover, entry.instanced_by)


# --- clearances -----------------------------------------------------------------------------
def _clearance_levels(entries, overrides):
    """(flag, own, unchecked): per entry, None where none: a command-line override matching its
    reported name or its object's name; its object's own clearance (``object_clearance``), else an
    instancer's; and (name, reason) of the entries whose own value is unusable (they get
    None)."""
    patterns = []
    exact = {}
    for key, value in (overrides or {}).items():
        if any(ch in key for ch in "*?["):
            patterns.append((key, value))
        else:
            exact[key] = value
    flag, own = [], []
    unchecked = []
    shared = {}       # session_uid -> (clearance, problem) of objects instances share

    def instanced(obj):
        found = shared.get(obj.session_uid)
        if found is None:
            try:
                found = (object_clearance(obj), None)
            except ValueError as problem:
                found = (None, str(problem))
            shared[obj.session_uid] = found
        if found[1] is not None:
            raise ValueError(found[1])
        return found[0]

    for entry in entries:
        value = None
        if exact or patterns:
            names = (entry.name, entry.object_name)
            value = next((exact[n] for n in names if n in exact), None)
            if value is None:
                value = next((v for p, v in patterns for n in names
                              if fnmatch.fnmatchcase(n, p)), None)
        flag.append(value)
        try:
            if not entry.instancers:
                value = object_clearance(entry.obj)
            else:             # (an instanced object and its instancers: read once each)
                value = instanced(entry.obj)
                for source in reversed(entry.instancers):
                    if value is not None:
                        break
                    value = instanced(source)
        except ValueError as problem:
            unchecked.append((entry.name, str(problem)))
            value = None
        own.append(value)
    return flag, own, unchecked


def object_clearance(obj):
    """The object's own clearance (custom property, then Convex settings), or None; a
    ``ValueError`` saying what is wrong with an unusable custom property."""
    value = obj.get(CLEARANCE_PROPERTY)
    if value is not None:
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{obj.name}: custom property {CLEARANCE_PROPERTY} must be a "
                             f"number, got {value!r}") from None
        if not math.isfinite(value) or value < 0.0:
            raise ValueError(f"{obj.name}: custom property {CLEARANCE_PROPERTY} must be a "
                             f"number >= 0, got {value!r}")
        return value
    settings = stored_settings(obj)      # (none stored: no clearance of its own)
    if settings is not None and getattr(settings, "use_clearance", False):
        return float(settings.clearance)
    return None


# --- drawing --------------------------------------------------------------------------------
def named(name, part) -> str:
    """An object's name with the part of it a finding is about, e.g. "Terrain [triangle 17]"."""
    return f"{name} [{part}]" if part else name


def pair_text(finding) -> str:
    """The two objects of a finding (a ``Finding`` or a stored one), with their parts."""
    return (f"{named(finding.object_a, getattr(finding, 'part_a', None))} / "
            f"{named(finding.object_b, getattr(finding, 'part_b', None))}")


def finding_label(finding: Finding, units=None) -> str:
    """The finding's label in the viewport and pictures, lengths in the scene's units."""
    fmt = units or _plain_length
    pair = pair_text(finding)
    kind = finding.kind
    if kind == OVERLAP:
        text = f"{pair}: {fmt(finding.depth)} deep"
    elif kind == SUNK:
        text = f"{pair}: sunk {fmt(finding.depth)}"
    elif kind == FLOATING:
        text = (f"{finding.object_a}: floating {fmt(finding.distance)} above "
                f"{finding.object_b}" if finding.distance is not None
                else f"{finding.object_a}: floating, nothing below")
    elif kind == TOO_CLOSE:
        text = (f"{pair}: gap {fmt(max(finding.distance, 0.0))} < "
                f"{fmt(finding.clearance)}")
    else:
        text = f"{finding.object_a}: {kind}"
    if finding.move and finding.translation is not None:
        text += f"; move {finding.move} {fmt(float(np.linalg.norm(finding.translation)))}"
    return text


def _plain_length(value) -> str:
    return f"{value:.3f}"


def findings_drawing(findings, labels=True, boxes=True, outlines=None, units=None):
    """An ``overlay.Drawing`` of the findings in the colour of their kind: overlap and sunk
    depth vectors as arrows, clearance gaps as lines, a floating object's drop as an arrow down
    to what is below; each labelled with its pair and size above the pair, the fix (when there
    is one) as an arrow in the "fix" colour from the object it moves, and (with ``boxes``)
    what is involved on each side: ``outlines[k]`` = (segments of A, segments of B) for finding
    k (the parts that touch, or the objects' boxes: ``LevelRun.outlines``); without them, the
    objects' bounding boxes. ``units`` formats lengths (the scene's units)."""
    from .overlay import Drawing

    drawing = Drawing()
    if outlines is None:
        outlines = _object_boxes(findings)
    # Overlaps last, so that where outlines coincide the overlap colour shows.
    order = sorted(range(len(findings)), key=lambda k: findings[k].kind in (OVERLAP, SUNK))
    for k in order:
        f = findings[k]
        if f.point_a is None:
            continue
        a = tuple(map(float, f.point_a))
        b = tuple(map(float, f.point_b)) if f.point_b is not None else a
        if f.kind in (OVERLAP, SUNK, FLOATING):
            if a != b:
                drawing.arrow(a, b, f.kind)   # moving A along it leaves the pair touching
        else:
            drawing.line(a, b, f.kind)
        drawing.point(a, f.kind)
        drawing.point(b, f.kind)
        if f.move and f.translation is not None and f.kind != FLOATING:
            start = a if f.move == f.object_a else b
            end = tuple(p + float(t) for p, t in zip(start, f.translation))
            if start != end:
                drawing.arrow(start, end, "fix")
        pair = list(outlines[k])
        if f.kind in (SUNK, FLOATING) and not f.part_b:
            # What it sinks into or floats above is the ground: its box would frame the level.
            pair = pair[:1]
        sides = [np.asarray(o, dtype=float).reshape(-1, 2, 3) for o in pair if o is not None]
        if labels:
            # Above the pair, so that the label does not sit on its outlines.
            mid = [0.5 * (p + q) for p, q in zip(a, b)]
            mid[2] = max([mid[2]] + [float(o[:, :, 2].max()) for o in sides if len(o)])
            drawing.label(tuple(mid), finding_label(f, units), f.kind)
        if boxes:
            for segments in sides:
                drawing.wire(segments, f.kind)
    return drawing


def _object_boxes(findings):
    """Bounding-box edges of each finding's two objects (or their instancers), as outlines."""
    boxes = {}
    out = []
    for f in findings:
        pair = []
        for name in (f.object_a, f.object_b):
            if name is None:
                pair.append(None)
                continue
            if name not in boxes:
                obj = object_named(name)
                boxes[name] = _box_edges(*_world_box(obj)) if obj is not None else None
            pair.append(boxes[name])
        out.append(tuple(pair))
    return out


def object_named(name):
    """The object a reported name stands for: the object itself, or for an instance's path
    (``Shelf/Crate.003``) the outermost instancer; None when there is none."""
    obj = bpy.data.objects.get(name)
    if obj is None and instances.SEPARATOR in name:
        obj = bpy.data.objects.get(name.split(instances.SEPARATOR, 1)[0])
    return obj


# The 12 edges of a box as pairs of corner indices (corner bits: x = 4, y = 2, z = 1).
_BOX_EDGES = [(a, b) for a in range(8) for b in range(a + 1, 8) if bin(a ^ b).count("1") == 1]


def _world_box(obj):
    """(lower, upper) of the object's bounding box corners in the world."""
    corners = np.array([tuple(c) for c in obj.bound_box], dtype=float)
    m = np.array(obj.matrix_world, dtype=float)
    world = corners @ m[:3, :3].T + m[:3, 3]
    return world.min(axis=0), world.max(axis=0)


def _box_edges(lower, upper):
    """Edges (12, 2, 3) of the axis-aligned box lower..upper."""
    box = np.array([[(upper if k & 4 else lower)[0], (upper if k & 2 else lower)[1],
                     (upper if k & 1 else lower)[2]] for k in range(8)])
    return np.array([(box[a], box[b]) for a, b in _BOX_EDGES])


LEGEND_TEXT = {
    OVERLAP: "arrow = depth vector, box or outline = object or part involved",
    SUNK: "sunk into what it stands on deeper than allowed; arrow = depth",
    TOO_CLOSE: "line = gap, smaller than the clearance needed",
    FLOATING: "must rest but nothing supports it; arrow = drop to what is below",
}


def findings_legend(findings) -> list:
    """Legend rows (colour role, meaning) of a findings picture: overlaps and clearances
    always, sunk and floating when there are any, and the fix arrows when a finding has one."""
    counts = {kind: sum(f.kind == kind for f in findings) for kind in LEGEND_TEXT}
    rows = [(kind, f"{kind.replace('_', ' ')} ({counts[kind]}): {text}")
            for kind, text in LEGEND_TEXT.items()
            if kind in (OVERLAP, TOO_CLOSE) or counts[kind]]
    if any(f.move and f.translation is not None for f in findings):
        rows.append(("fix", "green arrow = the move that resolves the finding"))
    return rows


def clear_findings():
    from . import overlay

    overlay.clear(OVERLAY_KEY)


# --- report files -----------------------------------------------------------------------------
# The report writers live in ``core.report``; these names stay importable from here.
from .core.report import INCOMPLETE_CSV_MARK, csv_report, json_report  # noqa: E402,F401


# --- findings stored in the scene (the operator's list) --------------------------------------
def summary_text(findings, objects, complete=True) -> str:
    """One line for the panel: objects checked and findings by kind."""
    overlaps = sum(f.kind == OVERLAP for f in findings)
    close = len(findings) - overlaps
    text = (f"{objects} object{'s' * (objects != 1)}: {overlaps} overlap{'s' * (overlaps != 1)}, "
            f"{close} too close")
    return text if complete else "Cancelled; so far " + text


def store_findings(scene, findings, summary, complete=True, outlines=None):
    """Keep the findings in ``scene.convex_level`` (saved with the file) and draw them;
    ``outlines`` as for ``findings_drawing`` (kept with each finding, to draw it again after the
    file is opened)."""
    settings = scene.convex_level
    settings.findings.clear()
    for k, f in enumerate(findings):
        write_item(settings.findings.add(), f, outlines[k] if outlines else ())
    settings["active_index"] = -1  # without the update: storing must not select anything
    settings.summary = summary
    settings.complete = complete
    show_stored_findings(scene)


def write_item(item, f, outline=()):
    """One row of the Level Check list (``properties.ConvexLevelFinding``) from a finding, so
    that it reads back (``to_finding``) the same; ``outline``: (segments of A, segments of B)
    kept with it, to draw it again after the file is opened."""
    point_a = f.point_a if f.point_a is not None else f.point
    point_b = f.point_b if f.point_b is not None else point_a
    fields = dict(object_a=f.object_a, object_b=f.object_b or "", kind=f.kind,
                  part_a=f.part_a or "", part_b=f.part_b or "",
                  has_distance=f.distance is not None, distance=f.distance or 0.0,
                  clearance=f.clearance, move=f.move or "", rule=f.rule or "",
                  severity=f.severity, instanced_by=(f.extra or {}).get("instanced_by") or "")
    if point_a is not None:
        fields.update(point_a=tuple(point_a), point_b=tuple(point_b))
    if f.translation is not None:
        fields.update(translation=tuple(f.translation))
    for name, value in fields.items():
        setattr(item, name, value)
    for side, segments in zip(("outline_a", "outline_b"), outline):
        if segments is not None:
            item[side] = np.asarray(segments, dtype=float).ravel().tolist()


def store_traversal_findings(scene, findings):
    """Put the traversal check's findings in the scene's list in place of the last traversal
    check's (the level check's stay)."""
    settings = scene.convex_level
    for k in reversed(range(len(settings.findings))):
        if settings.findings[k].kind in TRAVERSAL_KINDS:
            settings.findings.remove(k)
    for f in findings:
        write_item(settings.findings.add(), f)
    settings["active_index"] = -1


def stored_outlines(item):
    """(segments of A, segments of B) kept with a stored finding (None where none was kept)."""
    return tuple(np.array(item[side], dtype=float).reshape(-1, 2, 3) if side in item else None
                 for side in ("outline_a", "outline_b"))


def show_stored_findings(scene):
    """Draw the findings stored in ``scene`` (or clear the drawing when there are none)."""
    from . import overlay

    settings = getattr(scene, "convex_level", None)
    # (Traversal findings are drawn on the traversal map.)
    items = [item for item in settings.findings if item.kind not in TRAVERSAL_KINDS] \
        if settings is not None else []
    findings = [item.to_finding() for item in items]
    try:
        if findings:
            outlines = []
            for item, finding in zip(items, findings):
                kept = stored_outlines(item)
                if any(k is None for k in kept):   # stored before outlines were kept
                    kept = tuple(k if k is not None else box
                                 for k, box in zip(kept, _object_boxes([finding])[0]))
                outlines.append(kept)
            overlay.show(OVERLAY_KEY, findings_drawing(findings, labels=settings.show_labels,
                                                       units=scene_units(scene).format,
                                                       outlines=outlines))
        else:
            overlay.clear(OVERLAY_KEY)
    except Exception as problem:  # drawing is a convenience; the list still holds the findings
        print(f"convex_tools: cannot draw the level findings: {problem}")


def pair_objects(item):
    """The objects of a stored finding that still exist (an instance's outermost instancer)."""
    found = []
    for name in (item.object_a, item.object_b):
        obj = object_named(name)
        if obj is not None and obj not in found:
            found.append(obj)
    return found


def select_pair(context, item, frame):
    """Select the two objects of a stored finding (and frame them in the 3D view); False when
    neither exists any more."""
    objs = pair_objects(item)
    if not objs:
        return False
    view_layer = context.view_layer
    for obj in context.selected_objects:
        obj.select_set(False)
    for obj in objs:
        if obj.name in view_layer.objects:
            obj.select_set(True)
    view_layer.objects.active = objs[0]
    if frame:
        _frame_selected(context)
    return True


def _frame_selected(context):
    """Frame the selection in the 3D view the click came from (or the first one)."""
    screen = context.screen
    if screen is None:
        return
    areas = [context.area] if context.area and context.area.type == 'VIEW_3D' else \
        [a for a in screen.areas if a.type == 'VIEW_3D']
    for area in areas[:1]:
        region = next((r for r in area.regions if r.type == 'WINDOW'), None)
        if region is not None:
            with context.temp_override(area=area, region=region):
                bpy.ops.view3d.view_selected()


@bpy.app.handlers.persistent
def _show_findings_on_load(_dummy=None):
    # Drawings belong to the file that was open: show the findings the new file has stored.
    try:
        show_stored_findings(bpy.context.scene)
    except Exception as problem:
        print(f"convex_tools: cannot show the stored level findings: {problem}")


def attach():
    if _show_findings_on_load not in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.append(_show_findings_on_load)


def detach():
    while _show_findings_on_load in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(_show_findings_on_load)
    clear_findings()


# --- units ----------------------------------------------------------------------------------
def scene_units(scene) -> Units:
    """The scene's unit settings (lengths in messages, tables and labels)."""
    settings = scene.unit_settings
    return Units(settings.system, float(settings.scale_length), settings.length_unit)


def length_text(context_or_scene, value) -> str:
    """``value`` (Blender units) in the scene's units, e.g. "12.3 cm"."""
    scene = getattr(context_or_scene, "scene", context_or_scene)
    return scene_units(scene).format(value)
