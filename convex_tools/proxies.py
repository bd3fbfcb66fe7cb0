"""Objects checked through other objects: game-engine collision proxies and compound rigid bodies.

Game artists author collision in Blender with the naming conventions of the engine that imports
the file, and a level check has to see the level the way that engine will:

    Unreal (FBX import)     UCX_<name>[_NN]   convex: each loose part of the proxy its own hull
                            UBX_<name>[_NN]   a box fitted to the proxy object
                            USP_<name>[_NN]   a sphere fitted to the proxy object
                            UCP_<name>[_NN]   a capsule fitted to the proxy object
    Godot (scene import)    <name>-colonly    a triangle mesh standing in for <name>
                            <name>-convcolonly  a convex hull standing in for <name>
                            <name>-col        the object itself, as a triangle mesh
                            <name>-convcol    the object itself, as a convex hull

Godot also accepts ``$`` and ``_`` for the ``-`` and any letter case; Unreal prefixes are matched
in any case too. A proxy is matched to its owner by name; a Blender duplicate's numeric suffix
is carried over (``UCX_Crate_01.001`` belongs to ``Crate.001``). An object with proxies is checked
through them, and the proxies are not checked as objects of their own. An Unreal proxy that
names no object is an orphan (reported, not checked: the engine would drop it); a Godot
``-colonly`` object with no owner is collision of its own and is checked as itself.

Blender's Compound Parent rigid bodies work the same way (``rigidbody.cc``: the compound shape is
made of the shapes of the parent's direct children that have rigid bodies; the parent's own
mesh is not part of it; a child that is itself a compound parent contributes its children).

``ProxyIndex`` answers, for a whole file at once, which objects stand in for which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Unreal's prefixes and the shape kind each proxy becomes (``objects.KINDS``).
UNREAL_PREFIXES = {"UCX_": "CONVEX_PARTS", "UBX_": "BOX", "USP_": "SPHERE", "UCP_": "CAPSULE"}

# Godot's suffixes, longest first so that "-convcolonly" is not read as "-colonly":
# (suffix, kind, stands in for another object).
GODOT_SUFFIXES = (("convcolonly", "HULL", True), ("colonly", "MESH", True),
                  ("convcol", "HULL", False), ("col", "MESH", False))
GODOT_SEPARATORS = "-$_"

# Blender's duplicate suffix (".001") and Unreal's proxy counter ("_01").
_DUPLICATE = re.compile(r"^(.*?)(\.\d{3,})$")
_COUNTER = re.compile(r"^(.+)_\d+$")

# Rigid-body collision shapes that make a compound of the parent's children.
COMPOUND_SHAPE = "COMPOUND"
# Nested compound parents followed at most this deep (a cycle of parents cannot happen in
# Blender, but a bound keeps a corrupt file from looping).
MAX_COMPOUND_DEPTH = 16


@dataclass(frozen=True)
class ProxyName:
    """What an object's name says about it as collision.

    ``convention``: how the name marked it ("UCX_", "-colonly", ...); ``kind``: the shape its own
    geometry becomes; ``owners``: names of the object it may stand in for, most specific first
    (empty for Godot's ``-col``/``-convcol``, which mark the object itself).
    """

    convention: str
    kind: str
    owners: tuple

    @property
    def engine(self) -> str:
        return "Unreal" if self.convention.startswith("U") else "Godot"

    @property
    def stands_in(self) -> bool:
        """True for a proxy of another object, False for a mark on the object itself."""
        return bool(self.owners)


def parse_name(name: str):
    """The ``ProxyName`` of an object called ``name``, or None for an ordinary name."""
    if name[:4].upper() not in UNREAL_PREFIXES and "col" not in name.lower():
        return None           # most names: no prefix, no suffix (a level has thousands)
    base, duplicate = name, ""
    match = _DUPLICATE.match(name)
    if match:
        base, duplicate = match.groups()
    head = base[:4].upper()
    if head in UNREAL_PREFIXES and len(base) > 4:
        rest = name[4:]            # the exact owner name, duplicate suffix included
        owners = [rest]
        counted = _COUNTER.match(base[4:])
        if counted:
            owners.append(counted.group(1) + duplicate)
        return ProxyName(head, UNREAL_PREFIXES[head], tuple(dict.fromkeys(owners)))
    lowered = base.lower()
    for suffix, kind, stands_in in GODOT_SUFFIXES:
        cut = len(base) - len(suffix) - 1
        if cut > 0 and lowered.endswith(suffix) and base[cut] in GODOT_SEPARATORS:
            owners = (base[:cut] + duplicate,) if stands_in else ()
            return ProxyName("-" + suffix, kind, owners)
    return None


@dataclass(frozen=True)
class Part:
    """An object whose geometry is part of another object's collision."""

    obj: object
    kind: str          # the shape kind its geometry becomes
    source: str        # "UCX_", "-colonly", ... or "rigid body compound"


class ProxyIndex:
    """Who stands in for whom, over a set of objects (by default every object of the file).

    ``parts_of(obj)``: the proxies or compound children ``obj`` is checked through (empty when
    it is checked through its own geometry); ``owner_of(obj)``: the object a proxy or compound
    child belongs to (None for others); ``own_mark(obj)``: the ``ProxyName`` of an object marked
    by a Godot suffix and checked as itself; ``orphans``: name -> why an Unreal proxy is not
    checked.
    """

    def __init__(self, objects=None, geometry_types=None) -> None:
        if objects is None:
            import bpy
            objects = bpy.data.objects
        if geometry_types is None:
            from .objects import GEOMETRY_TYPES
            geometry_types = GEOMETRY_TYPES
        objects = list(objects)
        by_name = {}
        named, rigid_children = [], []
        for obj in objects:          # one pass reading each object's name, type, rigid body
            name = obj.name
            by_name[name] = obj
            if obj.type not in geometry_types:
                continue
            parsed = parse_name(name)
            if parsed is not None:
                named.append((obj, parsed))
            if obj.rigid_body is not None and obj.parent is not None:
                rigid_children.append(obj)
        self._parts: dict = {}
        self._owner: dict = {}
        self._marks: dict = {}
        self.orphans: dict = {}
        for obj, parsed in named:
            if not parsed.stands_in:
                self._marks[obj.name] = parsed
                continue
            owner = next((by_name[n] for n in parsed.owners
                          if n in by_name and by_name[n].type in geometry_types
                          and n != obj.name), None)
            if owner is not None:
                self._add(owner, Part(obj, parsed.kind, parsed.convention))
            elif parsed.engine == "Godot":
                self._marks[obj.name] = parsed      # collision of its own
            else:
                self.orphans[obj.name] = (
                    f"{parsed.convention} collision proxy of '{parsed.owners[-1]}', which is "
                    f"not a mesh-like object of this file (the engine would drop it)")
        for obj in rigid_children:
            if obj.name in self._owner:
                continue
            rigid = obj.rigid_body
            parent = _compound_parent(obj)
            if parent is None:
                continue
            if rigid.collision_shape == COMPOUND_SHAPE:
                # A nested compound parent adds its children, not its own geometry.
                self._owner[obj.name] = parent
                continue
            self._add(parent, Part(obj, compound_child_kind(rigid.collision_shape),
                                   "rigid body compound"))
        for parts in self._parts.values():
            parts.sort(key=lambda p: p.obj.name)

    def _add(self, owner, part):
        self._parts.setdefault(owner.name, []).append(part)
        self._owner[part.obj.name] = owner

    def parts_of(self, obj) -> list:
        return list(self._parts.get(obj.name, ()))

    def owner_of(self, obj):
        return self._owner.get(obj.name)

    def own_mark(self, obj):
        return self._marks.get(obj.name)

    def is_part(self, obj) -> bool:
        return obj.name in self._owner

    def has_parts(self, name: str) -> bool:
        """Whether the object called ``name`` is checked through proxies or children."""
        return name in self._parts

    def __len__(self) -> int:
        return len(self._owner)


def compound_child_kind(collision_shape: str) -> str:
    """The kind a compound child's rigid-body shape becomes: a compound's parts are convex, so
    a Mesh child is taken one hull per loose part."""
    from .objects import RIGID_BODY_KINDS

    kind = RIGID_BODY_KINDS.get(collision_shape, "HULL")
    return "CONVEX_PARTS" if kind == "MESH" else kind


def _compound_parent(obj):
    """The top Compound Parent rigid body whose compound ``obj`` is part of, or None."""
    parent, found = obj.parent, None
    for _ in range(MAX_COMPOUND_DEPTH):
        rigid = getattr(parent, "rigid_body", None) if parent is not None else None
        if rigid is None or rigid.collision_shape != COMPOUND_SHAPE:
            break
        found = parent
        # A compound parent that is itself a child of a compound parent is one of its parts.
        parent = parent.parent
    return found


# --- one index for the panel and the watch list ------------------------------------------------
_cached = None   # (number of objects, ProxyIndex) of the open file


def cached_index() -> ProxyIndex:
    """The open file's ``ProxyIndex``, made again after any depsgraph update (renames, new or
    deleted objects) or file load; the Sidebar asks for it on every redraw."""
    import bpy

    global _cached
    if _cached is None or _cached[0] != len(bpy.data.objects):
        _cached = (len(bpy.data.objects), ProxyIndex())
    return _cached[1]


def forget(*_args) -> None:
    global _cached
    _cached = None


def attach():
    import bpy

    bpy.app.handlers.persistent(forget)   # kept across file loads
    for handlers in (bpy.app.handlers.depsgraph_update_post, bpy.app.handlers.load_post):
        if forget not in handlers:
            handlers.append(forget)


def detach():
    import bpy

    for handlers in (bpy.app.handlers.depsgraph_update_post, bpy.app.handlers.load_post):
        while forget in handlers:
            handlers.remove(forget)
    forget()
