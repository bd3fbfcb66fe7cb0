"""What is in the level: the *collect* stage of the level check (Blender side).

``collect_entries`` turns a file's objects into ``Entry``s, the things the check measures, and
says what it left out and why. Nothing after it reads ``bpy`` to decide what is checked.

What is an entry
    Every object with geometry (``objects.GEOMETRY_TYPES``) among the objects given, the
    collection's, or the view layer's — through its collision proxies or compound children when
    it has them (a proxy stands for its owner, ``proxies.ProxyIndex.owner_of``) — and every
    object the level instances:

    * collection instances (an empty instancing a collection, nested ones followed), placed and
      named as ``instances`` says: ``Shelf/Crate.003``, ``Room/Shelf/Crate.003``;
    * geometry-nodes instances (Instance on Points of an Object Info or Collection Info), particle
      instances (Render As Object / Collection), vertex and face instancing, read from the
      evaluated depsgraph's ``object_instances``. Each is named by the path of objects leading
      to it and its index among its instancer's instances, ``Scatter/Rock [instance 12]``
      (``Field/Scatter/Rock [instance 12]`` inside a collection instance), and placed by its
      full world matrix.

    An object whose evaluated output is instances only (a scatter) is not an entry of its own;
    its instances are. A geometry-nodes instance of geometry the node tree made itself (a Cube
    node on points) belongs to no object, so it is *skipped* with the reason.

The instance index
    ``[instance k]`` is the instance's position in its instancer's output: the point's index for
    Instance on Points (the instances follow the points' order), the vertex's or face's for
    vertex/face instancing, the particle's for particles (counted on across the emitter's
    particle systems). Blender's ``DepsgraphObjectInstance.persistent_id`` is not that index: at
    the instancer's level it holds the point's ``id`` attribute when the geometry has one
    (Distribute Points on Faces makes one), and ``random_id`` is a hash of it. The depsgraph
    lists an instancer's instances in their order, so the index is counted here: the rank of the
    instance's ``persistent_id`` entry at the instancer's level among the distinct entries met so
    far (all the objects one point instances, e.g. a Collection Info's, share the point's index).

Placement
    An entry's shape is ``obj``'s geometry at ``objects.world_matrix(obj, placement)`` =
    ``placement @ obj.matrix_world``. A depsgraph instance's placement is therefore its world
    matrix times the inverse of the instanced object's own: the instanced object is the
    original one (``DepsgraphObjectInstance.object.original``), whose evaluated mesh the shape
    code reads as for any object, and whose proxies keep their place relative to it. An object
    whose matrix cannot be inverted (scale 0) cannot place its instances: they are skipped.

What is left out
    *excluded* (by rule): objects disabled in viewports — the monitor icon
    (``Object.hide_viewport``), or every collection holding them excluded from the view layer
    (``LayerCollection.exclude``) or disabled in viewports (``Collection.hide_viewport``); an
    object instancing on its vertices, faces or particles whose Instancing > Show Instancer
    (Viewport) is off (its instances stay); objects used as a Boolean modifier's operand by
    another object (object or collection operand); and what the proxy rules exclude
    (``ProxyIndex.excluded``, e.g. Godot ``-noimp``). ``include_hidden`` brings back the hidden
    ones, ``include_cutters`` the operands. An object hidden with the eye icon (``hide_set``)
    is still checked. Inside collection instances, Blender's own rule applies
    (``instances.instanced_objects``). Blender does not evaluate an object disabled in
    viewports, so one brought back is read without its modifiers (as before this stage
    existed), and one that instances is skipped.
    *skipped*: things that could not be checked (an Unreal proxy naming no object, instanced
    node-tree geometry, a non-invertible matrix).
    *ignored*: what ``ignore`` names; the names and patterns that matched nothing are returned
    in ``unmatched_ignores`` for a warning.
"""

from __future__ import annotations

import contextlib
import fnmatch
import gc
from dataclasses import dataclass, field

import bpy
import numpy as np

from . import instances
from .bulk import ObjectTable, matrices_of_bytes, matrix_bytes, session_uids
from .objects import GEOMETRY_TYPES, resolve_object

__all__ = ["Entry", "Collected", "collect_entries", "INSTANCE_LABEL"]

# How an instance's index follows its path: "Scatter/Rock [instance 12]".
INSTANCE_LABEL = " [instance {}]"
# ``persistent_id`` fills the levels below an instance's depth with this value (INT_MAX).
_UNUSED_LEVEL = 2**31 - 1
# Modifiers and instancing that make instances the depsgraph reports (besides collections).
_INSTANCING_MODIFIERS = {'NODES', 'PARTICLE_SYSTEM'}
_INSTANCING_TYPES = {'VERTS', 'FACES'}
# A matrix whose determinant is below this (in absolute value) has no usable inverse: the
# instanced object is flattened to a plane, line or point (scale 0), so its instances' world
# matrices cannot be expressed in front of its own.
SINGULAR_DETERMINANT = 1e-12


class Entry:
    """One thing the level check measures.

    ``name``: how it is reported (an object's name, or an instance's path); ``obj``: the object
    whose geometry, settings and proxies make its shape; ``placement``: None, or a 4×4 matrix in
    front of ``obj.matrix_world`` (``objects.world_matrix``); ``instancers``: the objects leading
    to an instance, outermost first.
    ``mover``: the name of the object a fix moves (the object itself; a collection instance's
    outermost instancing empty; None for geometry-nodes, particle, vertex and face instances,
    which only their instancer's settings move); ``instanced_by``: for those, the name of the
    object that instances it; ``collections``: names of the collections holding the object and
    its instancers (their parent collections too); ``properties``: the object's custom
    properties of plain types (str, int, float, bool), its instancers' too, its own winning;
    ``passive``: True for a passive rigid body. The last three are read on first use;
    ``object_name`` (``obj.name``) once.
    """

    __slots__ = ("name", "obj", "placement", "instancers", "mover", "instanced_by",
                 "_collections", "_properties", "_passive", "_parents", "_object_name")

    _SAME = object()    # ``mover`` default: the collection-instance rule

    def __init__(self, name, obj, placement=None, instancers=(), *, mover=_SAME,
                 instanced_by=None, parents=None, object_name=None):
        self.name, self.obj, self.placement, self.instancers = name, obj, placement, instancers
        self._object_name = object_name    # ``obj.name`` when the caller has read it
        if mover is Entry._SAME:
            mover = (instancers[0] if instancers else obj).name
        self.mover = mover
        self.instanced_by = instanced_by
        self._parents = parents            # a shared ``_CollectionParents`` (made if None)
        self._collections = self._properties = self._passive = None

    @property
    def object_name(self) -> str:
        """``obj.name`` (read once)."""
        if self._object_name is None:
            self._object_name = self.obj.name
        return self._object_name

    @property
    def selectable(self):
        """The object a user selects for it: the outermost instancer of an instance."""
        return self.instancers[0] if self.instancers else self.obj

    @property
    def collections(self) -> tuple:
        if self._collections is None:
            if self._parents is None:
                self._parents = _CollectionParents()
            names = self._parents.holding(self.obj)
            if self.instancers:
                names = list(names)
                for source in reversed(self.instancers):
                    for name in self._parents.holding(source):
                        if name not in names:
                            names.append(name)
            self._collections = tuple(names)
        return self._collections

    @property
    def properties(self) -> dict:
        if self._properties is None:
            merged = {}
            for source in (*self.instancers, self.obj):     # the object's own last: it wins
                merged.update(plain_properties(source))
            self._properties = merged
        return self._properties

    @property
    def passive(self) -> bool:
        if self._passive is None:
            rigid = getattr(self.obj, "rigid_body", None)
            self._passive = rigid is not None and rigid.type == 'PASSIVE'
        return self._passive

    def __repr__(self):
        return f"Entry({self.name!r})"


@dataclass
class Collected:
    """What ``collect_entries`` found: ``entries`` to check; ``skipped`` (name, reason) of what
    could not be checked; ``excluded`` (name, reason) of what a rule left out; and
    ``unmatched_ignores``, the ignore names and patterns that matched nothing."""

    entries: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    excluded: list = field(default_factory=list)
    unmatched_ignores: list = field(default_factory=list)


def plain_properties(obj) -> dict:
    """The object's custom properties whose values are str, int, float or bool."""
    out = {}
    for key in obj.keys():
        value = obj.get(key)
        if isinstance(value, (str, int, float, bool)):
            out[key] = value
    return out


def collect_entries(objects, collection, ignore, everything, proxies, depsgraph,
                    include_hidden=False, include_cutters=False, table=None) -> Collected:
    """What the level check measures among ``objects`` (objects or names), else the objects of
    ``collection`` (a collection or its name), else ``everything`` (the view layer's objects, or
    a scene's), minus what ``ignore`` names (objects, collections, names, fnmatch patterns); see
    the module docstring. ``proxies``: the file's ``ProxyIndex``; ``depsgraph``: the evaluated
    depsgraph whose object instances are read; ``include_hidden``, ``include_cutters``: check
    objects disabled in viewports, and Boolean operands; ``table``: the file's
    ``bulk.ObjectTable`` if the caller has read one (made here otherwise)."""
    view_layer = _view_layer_of(everything)
    names = None         # the objects' names, when read in bulk
    if objects is not None:
        objs = [resolve_object(o, "objects") for o in objects]
    elif collection is not None:
        coll = _collection(collection)
        objs, names = list(coll.all_objects), coll.all_objects.keys()
    else:
        objs = list(everything)
        names = _names(everything, objs)
        if include_hidden and view_layer is not None:
            # Objects of excluded collections are not in the view layer's list.
            present = set(names)
            more = [o for o in view_layer.id_data.objects if o.name not in present]
            objs += more
            names = list(names) + [o.name for o in more]
    collector = _Collector(ignore, proxies, depsgraph, view_layer, include_hidden,
                           include_cutters, table)
    with cyclic_gc_paused():
        collector.scan_file()
        collector.add_objects(objs, names)
    return collector.finish()


def _names(collection, objs) -> list:
    """Names of ``objs``, the items of ``collection``: read in one call when it is a
    ``bpy_prop_collection``."""
    keys = getattr(collection, "keys", None)
    names = keys() if keys is not None else None
    if names is None or len(names) != len(objs):
        names = [o.name for o in objs]
    return names


@contextlib.contextmanager
def cyclic_gc_paused():
    """Python's cycle collector off for a while. Collecting allocates a few small objects per
    instance and makes no cycles, yet each of the collector's passes walks every tracked object
    of Blender's interpreter: with it on, a 10,000-rock scatter took 30 µs an instance to read,
    10 µs with it off (and the level check's set-up of 100,000 objects, 0.55 s rather than
    0.44 s)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _Collector:
    def __init__(self, ignore, proxies, depsgraph, view_layer, include_hidden, include_cutters,
                 table=None):
        self.table = table if table is not None else ObjectTable()
        self.ignored = _Ignore(ignore)
        self.proxies = proxies
        self.depsgraph = depsgraph
        self.visibility = _Visibility(view_layer)
        self.include_hidden, self.include_cutters = include_hidden, include_cutters
        self.rule_excluded = dict(getattr(proxies, "excluded", None) or {})
        self.parents = _CollectionParents()
        self.out = Collected()
        self.seen = set()
        self.cutters = {}          # object name -> why it is a Boolean operand
        self.kits = {}             # what each instanced collection holds (instances.expand)
        self.may_instance = set()  # names of objects whose instances come from the depsgraph
        self._records = None       # parent name -> [instance record] (read on first need)
        self._instancing = None    # names of the objects that instance something

    # --- the file ---------------------------------------------------------------------------
    def scan_file(self):
        """One pass over the file's objects: Boolean operands, and objects that instance
        through the depsgraph (only then are its object instances read)."""
        table = self.table
        instancing = np.isin(table.instance_type,
                             [table.instance_code(t) for t in _INSTANCING_TYPES])
        for k in np.flatnonzero(instancing).tolist():
            self.may_instance.add(table.names[k])
        for obj in table.objects:
            if not obj.modifiers:
                continue
            for mod in obj.modifiers:
                if mod.type in _INSTANCING_MODIFIERS:
                    self.may_instance.add(obj.name)
                elif mod.type == 'BOOLEAN':
                    for operand in _boolean_operands(mod):
                        if operand != obj and operand.name not in self.cutters:
                            self.cutters[operand.name] = (f"Boolean operand of '{obj.name}' "
                                                          f"(modifier '{mod.name}')")

    def records(self, parent_name) -> list:
        if self._records is None:
            self._records = {}
            if self.may_instance and self.depsgraph is not None:
                with _eye_hidden_shown(self.visibility.view_layer, self.may_instance,
                                       self.depsgraph):
                    self._records = _depsgraph_instances(self.depsgraph)
        return self._records.get(parent_name, ())

    # --- objects ----------------------------------------------------------------------------
    def add_objects(self, objs, names=None):
        """``add_object`` of each of ``objs`` (``names``: theirs, if read), in order. Most
        objects of a level are plain: with geometry, instancing nothing, no proxy nor stand-in,
        no Boolean operand, enabled in viewports (``_plain``, read in bulk); they become an
        entry of their own directly, as ``consider`` makes it."""
        if names is None:
            names = [o.name for o in objs]
        plain = self._plain()
        row = self.table.row
        quick = plain[[row.get(n, -1) for n in names]].tolist() if names else []
        entries, seen, parents = self.out.entries, self.seen, self.parents
        ignored = self.ignored if self.ignored else None
        for obj, name, fast in zip(objs, names, quick):
            if not fast:
                self.add_object(obj)
            elif name not in seen:
                seen.add(name)
                if ignored is None or not ignored.match(name):
                    entries.append(Entry(name, obj, None, (), mover=name, parents=parents,
                                         object_name=name))

    def _plain(self) -> np.ndarray:
        """Bool array over the table's objects (one more, False, for an object not in it):
        whether each one is plain (``add_objects``)."""
        table = self.table
        plain = table.of_types(GEOMETRY_TYPES) & \
            (table.instance_type == table.instance_code('NONE'))
        if not self.include_hidden:
            plain &= ~table.hide_viewport & self.visibility.enabled(table)
        special = set(self.may_instance) | self.proxies.standing_in() | \
            set(self.proxies.orphans) | set(self.rule_excluded)
        if not self.include_cutters:
            special |= set(self.cutters)
        for name in special:
            k = table.row.get(name)
            if k is not None:
                plain[k] = False
        return np.append(plain, False)

    def add_object(self, obj):
        if instances.is_instancer(obj):
            if self.ignored.match(obj.name):
                return
            reason = None if self.include_hidden else self.visibility.disabled(obj)
            if reason is not None:
                self.out.excluded.append((obj.name, reason))
                return
            for inst in instances.expand(obj, cache=self.kits):
                if self._instances_only(inst.obj):
                    continue
                self.consider(inst.name[:len(inst.name) - len(inst.obj.name)], inst.obj, "",
                              inst.placement, inst.instancers, mover=inst.instancers[0].name)
        else:
            if self.include_hidden and self._not_evaluated(obj):
                return
            if not self._instances_only(obj):
                self.consider("", obj, "", top_level=True,
                              hidden_instancer=not obj.show_instancer_for_viewport
                              and (obj.instance_type in _INSTANCING_TYPES
                                   or len(obj.particle_systems) > 0))
        for record in self.records(obj.name):
            self.add_instance(record)

    def _not_evaluated(self, obj) -> bool:
        """True (and ``obj`` skipped with the reason) for an instancer brought back by
        ``include_hidden`` that Blender does not evaluate: its instances are unknown, and its
        own geometry would be read without its modifiers."""
        if (obj.name not in self.may_instance or self.depsgraph is None
                or self.visibility.disabled(obj) is None or self.ignored.match(obj.name)
                or self.depsgraph.objects.get(obj.name) is not None):
            return False
        self.out.skipped.append((obj.name, "disabled in viewports, so Blender does not evaluate "
                                           "its modifiers and instances: enable it to check it"))
        return True

    def _instances_only(self, obj) -> bool:
        """True when ``obj`` instances objects and its evaluated output has no geometry of its
        own (a scatter); such an object is not an entry, its instances are."""
        if obj.type not in GEOMETRY_TYPES or obj.name not in self.may_instance:
            return False
        if self._instancing is None:
            self.records("")
            self._instancing = {o.name for records in self._records.values()
                                for r in records for o in r.instancers}
        if obj.name not in self._instancing:
            return False
        evaluated = obj.evaluated_get(self.depsgraph)
        if obj.type == 'MESH':
            return len(evaluated.data.vertices) == 0
        mesh = evaluated.to_mesh()
        try:
            return mesh is None or len(mesh.vertices) == 0
        finally:
            evaluated.to_mesh_clear()

    def add_instance(self, record):
        if record.obj.type not in GEOMETRY_TYPES:
            return
        if not record.labels:
            return          # only collection levels: ``instances.expand`` has it
        prefix = instances.SEPARATOR.join(record.path) + instances.SEPARATOR
        suffix = INSTANCE_LABEL.format(", ".join(map(str, record.labels)))
        if record.own_geometry:
            self.out.skipped.append((prefix + record.obj.name + suffix,
                                     f"geometry made by the node tree of '{record.obj.name}' is "
                                     f"instanced, not an object: instance an object (Object "
                                     f"Info, Collection Info) or realize the instances to "
                                     f"check it"))
            return
        if record.placement is None:
            self.out.skipped.append((prefix + record.obj.name + suffix,
                                     f"'{record.obj.name}' has a matrix that cannot be inverted "
                                     f"(scale 0), so its instances cannot be placed"))
            return
        self.consider(prefix, record.obj, suffix, record.placement, record.instancers,
                      mover=None, instanced_by=record.instanced_by)

    def consider(self, prefix, obj, suffix, placement=None, instancers=(), *, mover=Entry._SAME,
                 instanced_by=None, top_level=False, hidden_instancer=False):
        if obj.type not in GEOMETRY_TYPES and self.proxies.own_mark(obj) is None and not (
                obj.type == 'EMPTY' and obj.name in self.rule_excluded):
            return                       # (a Godot -colonly Empty is a collider)
        owner = self.proxies.owner_of(obj)
        if owner is not None:            # a proxy or compound child stands for its owner
            obj = owner
        obj_name = obj.name
        name = prefix + obj_name + suffix
        if top_level:
            mover = obj_name
        if name in self.seen:
            return
        self.seen.add(name)
        if self.ignored and self.ignored.match_any({name, obj_name,
                                                    *(o.name for o in instancers)}):
            return
        if obj_name in self.proxies.orphans:
            self.out.skipped.append((name, self.proxies.orphans[obj_name]))
            return
        reason = self._excluded(obj, obj_name, top_level)
        if reason is None and hidden_instancer and not self.include_hidden:
            reason = "instancer not shown in viewports (Instancing > Show Instancer: Viewport)"
        if reason is not None:
            self.out.excluded.append((name, reason))
            return
        self.out.entries.append(Entry(name, obj, placement, instancers, mover=mover,
                                      instanced_by=instanced_by, parents=self.parents,
                                      object_name=obj_name))

    def _excluded(self, obj, obj_name, top_level):
        """Why a rule leaves ``obj`` out, or None. Visibility is the view layer's only for the
        level's own objects: Blender decides what an instancer shows."""
        if top_level and not self.include_hidden:
            reason = self.visibility.disabled(obj)
            if reason is not None:
                return reason
        if not self.include_cutters and obj_name in self.cutters:
            return self.cutters[obj_name]
        return self.rule_excluded.get(obj_name)

    def finish(self) -> Collected:
        self.out.unmatched_ignores = self.ignored.unmatched()
        return self.out


def _boolean_operands(mod):
    if mod.operand_type == 'OBJECT':
        return [mod.object] if mod.object is not None else []
    if mod.operand_type == 'COLLECTION' and mod.collection is not None:
        return list(mod.collection.all_objects)
    return []


# --- depsgraph instances -----------------------------------------------------------------------
@dataclass
class _Record:
    """One object instance the depsgraph reports under a top-level ``parent``."""

    obj: object                 # the original instanced object
    path: tuple                 # names of the objects leading to it, outermost first
    labels: tuple               # its index at each non-collection level, outermost first
    instancers: tuple           # the original objects leading to it, outermost first
    instanced_by: str | None    # the object at its innermost non-collection level
    placement: np.ndarray | None
    own_geometry: bool          # geometry the instancer's node tree made (no object of its own)


@dataclass
class _Node:
    """An object in the depsgraph's instance tree, which later instances may lie under."""

    obj: object
    path: tuple
    labels: tuple
    instancers: tuple
    instanced_by: str | None
    counts: dict = field(default_factory=dict)   # level entry -> index, for its instances


def _depsgraph_instances(depsgraph) -> dict:
    """Top-level instancer name -> its ``_Record``s, in the depsgraph's order.

    ``persistent_id`` lists an instance's index at each level of instancing, innermost first.
    An object instanced at a level is itself listed under the shorter id of that level, so an
    instance's object ancestors are those whose ids end its own; the levels between an ancestor
    and the instance are one for a collection, one for vertex or face instancing, one (the
    point) plus those inside the instanced geometry for geometry nodes, and the particle and
    its system for particles.
    """
    out, trees, kinds = {}, {}, {}
    placed = []          # (record, world matrix, inverse of the object's own)
    for inst in depsgraph.object_instances:
        if not inst.is_instance:
            continue
        parent = inst.parent.original
        ids = tuple(inst.persistent_id)
        if _UNUSED_LEVEL in ids:
            ids = ids[:ids.index(_UNUSED_LEVEL)]
        tree = trees.get(parent)
        if tree is None:
            tree = trees[parent] = {(): _Node(parent, (parent.name,), (), (parent,), None)}
            kinds.setdefault(parent, (parent.name, parent.type in GEOMETRY_TYPES,
                                      parent.instance_type == 'COLLECTION', False))
        depth = len(ids)
        for length in range(depth - 1, -1, -1):     # the nearest object ancestor
            ancestor = tree.get(ids[depth - length:])
            if ancestor is not None:
                break
        obj = inst.object.original
        kind = kinds.get(obj)
        if kind is None:      # (name, has geometry, instances a collection, inverse matrix)
            kind = kinds[obj] = (obj.name, obj.type in GEOMETRY_TYPES,
                                 obj.instance_type == 'COLLECTION', False)
        between = depth - length
        particle = inst.particle_system is not None
        if between == 1 and not particle and kinds[ancestor.obj][2]:
            labels, instanced_by = ancestor.labels, ancestor.instanced_by
        else:
            level = ids[between - 1]
            if particle and between >= 2:
                level = (level, ids[between - 2])     # (system, particle)
            index = ancestor.counts.setdefault(level, len(ancestor.counts))
            labels, instanced_by = ancestor.labels + (index,), ancestor.path[-1]
        path = ancestor.path
        tree[ids] = _Node(obj, path + (kind[0],), labels, ancestor.instancers + (obj,),
                          instanced_by)
        record = _Record(obj, path, labels, ancestor.instancers, instanced_by, None,
                         own_geometry=obj == ancestor.obj)
        out.setdefault(parent.name, []).append(record)
        if kind[1] and labels:
            inverse = kind[3]
            if inverse is False:
                inverse = _inverse(np.array(obj.matrix_world, dtype=float))
                kind = kinds[obj] = kind[:3] + (inverse,)
            if inverse is not None:
                # (read now: the instance, and the matrix it wraps, live only for this step)
                placed.append((record, matrix_bytes(inst.matrix_world), inverse))
    if placed:
        placements = (matrices_of_bytes([m for _, m, _ in placed])
                      @ np.array([i for _, _, i in placed]))
        for (record, _, _), placement in zip(placed, placements):
            record.placement = placement
    return out


@contextlib.contextmanager
def _eye_hidden_shown(view_layer, names, depsgraph):
    """The objects of ``names`` hidden with the eye icon in ``view_layer`` shown for a moment:
    the depsgraph lists only visible objects' instances, and an object hidden with the eye is
    still in the level. Their hidden and selected states are put back."""
    hidden = []
    if view_layer is not None:
        hidden = [(obj, obj.select_get(view_layer=view_layer)) for obj in view_layer.objects
                  if obj.name in names and obj.hide_get(view_layer=view_layer)]
    try:
        for obj, _ in hidden:
            obj.hide_set(False, view_layer=view_layer)
        if hidden:
            depsgraph.update()
        yield
    finally:
        for obj, selected in hidden:
            obj.hide_set(True, view_layer=view_layer)
            obj.select_set(selected, view_layer=view_layer)
        if hidden:
            depsgraph.update()


def _inverse(matrix):
    if abs(np.linalg.det(matrix[:3, :3])) < SINGULAR_DETERMINANT:
        return None
    return np.linalg.inv(matrix)


# --- visibility --------------------------------------------------------------------------------
class _Visibility:
    """Whether an object is disabled in viewports in ``view_layer`` (None: by the objects' and
    collections' own monitor icons only), and why."""

    def __init__(self, view_layer):
        self.view_layer = view_layer
        self._collections = None     # collection pointer -> None (enabled) or the reason
        self._by_pointer = {}        # collection pointer -> the collection
        self._members = None         # object session_uid -> pointers of its collections

    def enabled(self, table) -> np.ndarray:
        """Bool array over ``table``'s objects: held by a collection enabled in viewports.
        For those whose own monitor icon is on, ``disabled`` is None (a collection enabled
        anywhere wins); the others are for ``disabled`` to tell."""
        out = np.zeros(len(table), dtype=bool)
        for key, reason in self._collection_reasons().items():
            if reason is None:
                out[table.rows_of(self._by_pointer[key].objects)] = True
        return out

    def disabled(self, obj):
        if obj.hide_viewport:
            return "disabled in viewports (monitor icon)"
        if self.view_layer is not None and obj.visible_get(view_layer=self.view_layer):
            return None
        # Hidden with the eye, or in no enabled collection: the collections tell which (read
        # from the collections' members: ``users_collection`` searches every collection of
        # the file for the object, quadratic over a level's disabled objects).
        reasons = self._collection_reasons()
        found = [reasons[key] for key in self._holders().get(obj.session_uid, ())]
        if not found or any(r is None for r in found):
            return None
        if len(set(found)) > 1:        # which one is told: the first in users_collection
            found = [reasons[c.as_pointer()] for c in obj.users_collection
                     if c.as_pointer() in reasons]
        return found[0]

    def _holders(self):
        """Object session_uid -> pointers of the view layer's collections holding it."""
        if self._members is None:
            self._members = {}
            for key in self._collection_reasons():
                for uid in session_uids(self._by_pointer[key].objects).tolist():
                    self._members.setdefault(uid, []).append(key)
        return self._members

    def _collection_reasons(self):
        if self._collections is None:
            reasons = {}
            if self.view_layer is not None:
                self._walk_layer(self.view_layer.layer_collection, None, reasons)
            else:
                scene = bpy.context.scene
                self._walk_collection(scene.collection, None, reasons)
            self._collections = reasons
        return self._collections

    def _walk_layer(self, layer, inherited, reasons):
        coll = layer.collection
        reason = inherited
        if reason is None and layer.exclude:
            reason = f"in collection '{coll.name}', excluded from the view layer"
        if reason is None and coll.hide_viewport:
            reason = f"in collection '{coll.name}', disabled in viewports"
        key = coll.as_pointer()
        self._by_pointer[key] = coll
        if reasons.get(key, "unset") is not None:     # enabled anywhere wins
            reasons[key] = reason
        for child in layer.children:
            self._walk_layer(child, reason, reasons)

    def _walk_collection(self, coll, inherited, reasons):
        reason = inherited
        if reason is None and coll.hide_viewport:
            reason = f"in collection '{coll.name}', disabled in viewports"
        key = coll.as_pointer()
        self._by_pointer[key] = coll
        if reasons.get(key, "unset") is not None:
            reasons[key] = reason
        for child in coll.children:
            self._walk_collection(child, reason, reasons)


def _view_layer_of(everything):
    """The view layer whose objects ``everything`` is (None for a scene's objects or a list)."""
    try:
        path = everything.path_from_id()
        owner = everything.id_data
    except (AttributeError, TypeError, ValueError):
        return None
    if not isinstance(owner, bpy.types.Scene) or not path.startswith("view_layers["):
        return None
    return owner.path_resolve(path.rsplit(".", 1)[0])


class _CollectionParents:
    """Names of the collections holding an object, their parent collections included (the
    scene's master collection left out), made from one pass over the file's collections (an
    object's ``users_collection`` walks every collection of the file: ~140 µs an object in a
    level of 2,000, quadratic in the level's size). The members of each collection are read in
    bulk (their ``session_uid``, unique among the session's data-blocks); objects held by the
    same collections share one answer."""

    def __init__(self):
        self._parents = None
        self._closures = {}        # names of the direct holders -> with their parents

    def holding(self, obj) -> tuple:
        if self._parents is None:
            parents, holders = {}, {}
            for coll in bpy.data.collections:
                name = coll.name
                for child in coll.children.keys():
                    parents.setdefault(child, []).append(name)
                for uid in session_uids(coll.objects).tolist():
                    holders.setdefault(uid, []).append(name)
            self._parents = parents
            self._holders = {uid: tuple(names) for uid, names in holders.items()}
        direct = self._holders.get(obj.session_uid, ())
        found = self._closures.get(direct)
        if found is None:
            out, todo = [], list(direct)
            while todo:
                name = todo.pop(0)
                if name not in out:
                    out.append(name)
                    todo += self._parents.get(name, ())
            found = self._closures[direct] = tuple(out)
        return found


# --- ignored ------------------------------------------------------------------------------------
def _collection(item):
    if isinstance(item, bpy.types.Collection):
        return item
    coll = bpy.data.collections.get(str(item))
    if coll is None:
        raise ValueError(f"there is no collection named {item!r}")
    return coll


def _ignored_names(ignore):
    """(exact names, patterns) of everything ``ignore`` names."""
    if isinstance(ignore, (str, bpy.types.ID)):
        ignore = [ignore]
    names, patterns = set(), []
    for item in ignore or ():
        if isinstance(item, bpy.types.Collection):
            names.update(o.name for o in item.all_objects)
        elif isinstance(item, bpy.types.Object):
            names.add(item.name)
        elif isinstance(item, str):
            coll = bpy.data.collections.get(item)
            if coll is not None:
                names.update(o.name for o in coll.all_objects)
            # An instance's path ("Scatter/Rock [instance 3]") is a name, not a pattern.
            names.add(item)
            if any(ch in item for ch in "*?["):
                patterns.append(item)
        else:
            raise ValueError(f"ignore takes objects, collections, names or name patterns, "
                             f"got {type(item).__name__}")
    return names, patterns


def _is_ignored(name, ignored):
    names, patterns = ignored
    return name in names or any(fnmatch.fnmatchcase(name, p) for p in patterns)


class _Ignore:
    """``ignore`` as names and patterns, remembering which of its strings matched something."""

    def __init__(self, ignore):
        self.names, self.patterns = _ignored_names(ignore)
        items = [ignore] if isinstance(ignore, (str, bpy.types.ID)) else list(ignore or ())
        # The strings a user typed; a collection's name matches by naming the collection.
        self.asked = [i for i in items if isinstance(i, str)
                      and bpy.data.collections.get(i) is None]
        self.hit = set()

    def __bool__(self) -> bool:
        """Whether anything is ignored at all."""
        return bool(self.names or self.patterns)

    def match(self, name) -> bool:
        if name in self.names:
            self.hit.add(name)
            return True
        for pattern in self.patterns:
            if fnmatch.fnmatchcase(name, pattern):
                self.hit.add(pattern)
                return True
        return False

    def match_any(self, names) -> bool:
        found = False
        for name in names:
            found = self.match(name) or found
        return found

    def unmatched(self) -> list:
        """The strings that matched nothing checked and name no object of the file (an
        ignored light or camera is not worth a warning)."""
        out = []
        for item in self.asked:
            if item in self.hit:
                continue
            if item in self.names and bpy.data.objects.get(item) is not None:
                continue
            if item in self.patterns and any(fnmatch.fnmatchcase(o.name, item)
                                             for o in bpy.data.objects):
                continue
            out.append(item)
        return out
