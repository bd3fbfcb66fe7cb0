"""Objects checked through other objects: game-engine collision proxies and compound rigid bodies.

Game artists author collision in Blender with the naming conventions of the engine that imports
the file, and a level check has to see the level the way that engine will. ``docs/engines.md``
gives each rule with its source and the engine version it was read from; in short:

    Unreal Engine 5 (FBX import, Interchange)
        UCX_<mesh>[_<counter>]   convex: one hull per proxy mesh (One Convex Hull Per UCX, on by
                                 default), or one per loose part when that option is off
        UBX_ / USP_ / UCP_       a box / sphere / capsule fitted to the proxy mesh
        Prefixes in upper case as Epic writes them; the owner is the text after the prefix, or
        that text without its last ``_part`` (the counter), matched without regard to case.
    Godot 4.3+ (scene import, ``resource_importer_scene.cpp``)
        Suffixes after ``-``, ``_`` or ``$``, any case, read after trailing digits, spaces and
        underscores are dropped (Blender's ``.001`` reaches Godot as ``_001``):
        -noimp           removed on import with its children (not checked)
        -colonly         the object becomes a StaticBody3D of its own (triangle mesh); the object
                         of the same name without the suffix is the visual beside it
        -convcolonly     the same with a convex hull
        -colonly Empty   a box (display Cube), a ray (Single Arrow), an infinite plane (Image: not
                         checked) or a sphere (any other display type), of size 1 scaled by the
                         Empty
        -col / -convcol  the mesh keeps its look and gets a triangle-mesh / convex body
        -rigid           a RigidBody3D with the convex hull of the mesh
        -navmesh         a navigation mesh, -occonly an occluder: not collision (not checked)

``engine`` ("unreal", "godot" or "both") chooses which rules apply; with both, a name that reads
one way in each engine is read the Unreal way and warned about. ``ProxyIndex`` answers, for a
whole file at once, which objects stand in for which, what is excluded, and what an export
would change (``warnings``).

Blender's Compound Parent rigid bodies work like proxies (``rigidbody.cc``: the compound shape is
made of the shapes of the parent's direct children that have rigid bodies; the parent's own
mesh is not part of it; a child that is itself a compound parent contributes its children).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

ENGINES = ("both", "unreal", "godot")

# Unreal's prefixes and the shape kind each proxy becomes (``objects.KINDS``); a UCX proxy is
# CONVEX_PARTS instead of HULL when One Convex Hull Per UCX is off.
UNREAL_PREFIXES = {"UCX_": "HULL", "UBX_": "BOX", "USP_": "SPHERE", "UCP_": "CAPSULE"}
# Unreal's own default for One Convex Hull Per UCX (FBX import options and Interchange's generic
# mesh pipeline both start with it on; docs/engines.md cites them).
UNREAL_ONE_HULL_PER_UCX = True

# Godot's suffixes in the order ``_pre_fix_node`` tests them, with what each does:
# (suffix, action, kind, object types it applies to: None for any).
GODOT_SUFFIXES = (
    ("noimp", "removed", "", None),
    ("colonly", "body", "MESH", None),
    ("convcolonly", "body", "HULL", None),
    ("rigid", "mark", "HULL", "MESH"),
    ("col", "mark", "MESH", "MESH"),
    ("convcol", "mark", "HULL", "MESH"),
    ("navmesh", "not collision", "", "MESH"),
    ("occonly", "not collision", "", "MESH"),
)
# A suffix follows "$" anywhere in the name, or "-" or "_" at its end.
GODOT_SEPARATORS = "-_"
# A Godot -colonly Empty's collider by its display type (``empty_draw_type``); any other type
# gives a sphere. "PLANE" is Godot's WorldBoundaryShape3D: infinite, not checked.
GODOT_EMPTY_KINDS = {"CUBE": "BOX", "SINGLE_ARROW": "RAY", "IMAGE": "PLANE"}
GODOT_EMPTY_DEFAULT = "SPHERE"
# Suffixes without "col" in them (a name with neither is read no further).
_GODOT_RARE = ("noimp", "rigid", "navmesh", "occonly")

# Blender's duplicate suffix (".001").
_DUPLICATE = re.compile(r"^(.*?)(\.\d{3,})$")

# Rigid-body collision shapes that make a compound of the parent's children.
COMPOUND_SHAPE = "COMPOUND"
# Nested compound parents followed at most this deep (a cycle of parents cannot happen in
# Blender, but a bound keeps a corrupt file from looping).
MAX_COMPOUND_DEPTH = 16
# Parents followed up from an object to find a -noimp ancestor (as deep as any real hierarchy).
MAX_PARENT_DEPTH = 256


@dataclass(frozen=True)
class ProxyName:
    """What an object's name says about it as collision, in one engine.

    ``convention``: how the name marked it ("UCX_", "-colonly", "-noimp", ...); ``kind``: the
    shape its own geometry becomes ("" when it is not collision); ``owners``: for an Unreal
    proxy, the names of the object it stands in for, most specific first; for a Godot body, the
    names of the visual object beside it; ``action``: "proxy" (Unreal: part of its owner's
    collision), "body" (Godot -colonly: collision of its own), "mark" (the object itself, e.g.
    Godot -col), "removed" or "not collision" (not checked).
    """

    convention: str
    kind: str
    owners: tuple
    action: str = "proxy"

    @property
    def engine(self) -> str:
        return "Unreal" if self.convention.startswith("U") else "Godot"

    @property
    def stands_in(self) -> bool:
        """True for an Unreal proxy of another object."""
        return self.action == "proxy"


def check_engine(engine) -> str:
    """``engine`` as one of ``ENGINES`` (None: both; any case); ValueError otherwise."""
    if engine is None:
        return "both"
    value = str(engine).lower()
    if value not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    return value


def unreal_name(name: str, one_hull_per_ucx: bool = UNREAL_ONE_HULL_PER_UCX):
    """Unreal's reading of ``name``: a ``ProxyName`` for ``UCX_``/``UBX_``/``USP_``/``UCP_``
    names, else None. Owners: the text after the prefix, then that text without its last
    ``_part`` (Epic's ``UCX_[RenderMeshName]_##``; Interchange reads any last part so)."""
    head = name[:4]
    if head not in UNREAL_PREFIXES or len(name) <= 4:
        return None
    rest = name[4:]
    owners = [rest]
    base, duplicate = _split_duplicate(rest)
    if "_" in base.strip("_"):
        stem = base.rstrip("_").rsplit("_", 1)[0]
        if duplicate:
            owners.append(stem + duplicate)      # Blender's pairing of duplicated assets
        owners.append(stem)
    kind = UNREAL_PREFIXES[head]
    if head == "UCX_" and not one_hull_per_ucx:
        kind = "CONVEX_PARTS"
    return ProxyName(head, kind, tuple(dict.fromkeys(o for o in owners if o)), "proxy")


def godot_node_name(name: str) -> str:
    """The name Godot gives a node for a Blender object called ``name`` (a dot is not allowed in
    a node name and becomes ``_``: the comment of ``_teststr`` in resource_importer_scene.cpp)."""
    return name.replace(".", "_")


def _godot_trimmed(name: str) -> str:
    """``name`` without trailing digits, spaces and underscores, as ``_teststr`` reads it."""
    end = len(name)
    while end and (name[end - 1].isdigit() or name[end - 1] <= " " or name[end - 1] == "_"):
        end -= 1
    return name[:end]


def godot_has(name: str, suffix: str) -> bool:
    """Godot's ``_teststr``: whether the node called ``name`` carries ``suffix``."""
    what = _godot_trimmed(godot_node_name(name)).lower()
    return ("$" + suffix) in what or any(what.endswith(s + suffix) for s in GODOT_SEPARATORS)


def godot_fixed(name: str, suffix: str) -> str:
    """Godot's ``_fixstr``: the node's name once ``suffix`` is taken off (trailing counter kept)."""
    node = godot_node_name(name)
    what = _godot_trimmed(node)
    end = node[len(what):]
    lowered = what.lower()
    if ("$" + suffix) in lowered:
        # Found in any case, but taken out only as written (String::replace is case-sensitive).
        return what.replace("$" + suffix, "") + end
    return what[:len(what) - len(suffix) - 1] + end


def godot_name(name: str, obj_type: str = "MESH", empty_display: str = "", data_name: str = ""):
    """Godot's reading of an object called ``name``: a ``ProxyName`` or None. ``obj_type``:
    "MESH" for anything exported as a mesh, "EMPTY", or another Blender type; ``empty_display``:
    an Empty's display type; ``data_name``: a mesh's data name, Godot's last resort."""
    lowered = name.lower()
    if "col" not in lowered and not any(s in lowered for s in _GODOT_RARE) \
            and "col" not in data_name.lower():
        return None          # most names (a level has thousands)
    for suffix, action, kind, types in GODOT_SUFFIXES:
        if types is not None and obj_type != types:
            continue
        if action == "body" and obj_type not in ("MESH", "EMPTY"):
            continue           # a light or camera named -colonly stays what it is
        if not godot_has(name, suffix):
            continue
        convention = "-" + suffix
        if action != "body":
            return ProxyName(convention, kind, (), action)
        fixed = godot_fixed(name, suffix)
        if not _godot_trimmed(fixed):
            # "Skipped node because its name is empty after removing the suffix."
            return ProxyName(convention, "", (), "removed")
        if obj_type == "EMPTY":
            kind = GODOT_EMPTY_KINDS.get(empty_display, GODOT_EMPTY_DEFAULT)
        # The visual beside it: the node of the body's name, else that name without the counter
        # (``Crate-convcolonly_02`` makes the body ``Crate_02`` beside the visual ``Crate``).
        return ProxyName(convention, kind, tuple(dict.fromkeys((fixed, _godot_trimmed(fixed)))),
                         "body")
    if obj_type == "MESH" and data_name:
        # "Last attempt, maybe collision inside the mesh data": the mesh's own name.
        for suffix, kind in (("col", "MESH"), ("convcol", "HULL")):
            if godot_has(data_name, suffix):
                return ProxyName(f"-{suffix} (mesh data)", kind, (), "mark")
    return None


def parse_name(name: str, engine: str = "both", one_hull_per_ucx=None, obj_type: str = "MESH",
               empty_display: str = "", data_name: str = ""):
    """The ``ProxyName`` of an object called ``name`` under ``engine``'s rules (with both: the
    Unreal reading when there is one), or None for an ordinary name."""
    engine = check_engine(engine)
    hull = UNREAL_ONE_HULL_PER_UCX if one_hull_per_ucx is None else bool(one_hull_per_ucx)
    if engine != "godot" and obj_type == "MESH":
        parsed = unreal_name(name, hull)
        if parsed is not None:
            return parsed
    if engine != "unreal":
        return godot_name(name, obj_type, empty_display, data_name)
    return None


def _split_duplicate(name):
    match = _DUPLICATE.match(name)
    return match.groups() if match else (name, "")


def is_blender_duplicate(name: str) -> bool:
    """Whether ``name`` ends in the ``.001`` Blender gives a duplicate's name."""
    return _DUPLICATE.match(name) is not None


@dataclass(frozen=True)
class Part:
    """An object whose geometry is part of another object's collision."""

    obj: object
    kind: str          # the shape kind its geometry becomes
    source: str        # "UCX_", "-colonly", ... or "rigid body compound"


class ProxyIndex:
    """Who stands in for whom, over a set of objects (by default every object of the file),
    under ``engine``'s naming rules ("both", "unreal" or "godot"; any case) and Unreal's One
    Convex Hull Per UCX (None: Unreal's default, on).

    ``parts_of(obj)``: the proxies or compound children ``obj`` is checked through (empty when
    it is checked through its own geometry); ``owner_of(obj)``: the object an Unreal proxy or
    compound child belongs to (None for others); ``own_mark(obj)``: the ``ProxyName`` of an
    object checked as itself by its name (Godot -col, -rigid, and -colonly bodies);
    ``visual_of(obj)``: for a Godot -colonly body, the visual object beside it;
    ``orphans``: name -> why an Unreal proxy is not checked; ``excluded``: name -> why the
    engine's rules leave an object out (removed on import, not collision, the visual of a
    body); ``warnings``: (name, message) for what an export would change or what a name leaves
    open, and notes (messages starting "note: ") on owners found by a reading Epic does not
    document; ``notes``: name -> which owner or visual a name resolved to, and why.
    """

    def __init__(self, objects=None, geometry_types=None, *, engine="both",
                 one_hull_per_ucx=None, table=None) -> None:
        # ``table``: the file's ``bulk.ObjectTable`` when the caller has read one (its names
        # and types read in bulk); used when ``objects`` is None.
        if objects is None:
            if table is None:
                from .bulk import ObjectTable
                table = ObjectTable()
            objects, names, types = table.objects, table.names, table.types
        else:
            objects = list(objects)
            names, types = [o.name for o in objects], [o.type for o in objects]
        if geometry_types is None:
            from .objects import GEOMETRY_TYPES
            geometry_types = GEOMETRY_TYPES
        self.engine = check_engine(engine)
        self.one_hull_per_ucx = (UNREAL_ONE_HULL_PER_UCX if one_hull_per_ucx is None
                                 else bool(one_hull_per_ucx))
        self._geometry = geometry_types
        self._by_name = by_name = dict(zip(names, objects))
        self._parts: dict = {}
        self._owner: dict = {}
        self._marks: dict = {}
        self._visual: dict = {}
        self.orphans: dict = {}
        self.excluded: dict = {}
        self.warnings: list = []
        self.notes: dict = {}
        named, rigid_children, removed = [], [], []
        # Only names that may mean something to an engine are read further (most names of a
        # level say nothing); in the objects' order, as the warnings come.
        for k in _maybe_marked(names, types, objects):
            obj = objects[k]
            parsed = self._read(obj)
            if parsed is not None:
                name = names[k]
                if parsed.action in ("removed", "not collision"):
                    self.excluded[name] = _exclusion_reason(parsed)
                    if parsed.action == "removed":
                        removed.append(obj)
                else:
                    named.append((obj, parsed))
        for obj, typ in zip(objects, types):     # a rigid body, then its parent: few have one
            if typ in geometry_types and obj.rigid_body is not None and obj.parent is not None:
                rigid_children.append(obj)
        if removed:
            self._exclude_children(objects, removed)
        self._folded = None        # upper-case name -> names, made on first need
        self._godot_names = None   # Godot node name -> names, made on first need
        for obj, parsed in named:
            if obj.name in self.excluded:
                continue
            if parsed.action == "mark":
                self._marks[obj.name] = parsed
            elif parsed.action == "body":
                self._add_body(obj, parsed)
            else:
                self._add_proxy(obj, parsed)
        for obj in rigid_children:
            if obj.name in self._owner or obj.name in self.excluded:
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

    # --- reading names ---------------------------------------------------------------------
    def _read(self, obj):
        """The reading of ``obj``'s name under this index's engine(s); warns when both engines
        read it, or when an Unreal prefix is not in Epic's case."""
        name, typ = obj.name, obj.type
        kind = "MESH" if typ in self._geometry else typ
        unreal = godot = None
        if self.engine != "godot" and kind == "MESH":
            unreal = unreal_name(name, self.one_hull_per_ucx)
            if unreal is None and name[:4].upper() in UNREAL_PREFIXES and len(name) > 4:
                self.warnings.append((name, (
                    f"'{name[:4]}' is not an Unreal collision prefix in Epic's case "
                    f"({name[:4].upper()}): Unreal imports '{name}' as a mesh of its own")))
        if self.engine != "unreal":
            data = obj.data if typ == "MESH" else None
            godot = godot_name(name, kind,
                               obj.empty_display_type if typ == "EMPTY" else "",
                               data.name if data is not None else "")
        if unreal is not None and godot is not None:
            self.warnings.append((name, (
                f"reads two ways: Unreal's {unreal.convention} proxy of '{unreal.owners[0]}' "
                f"and Godot's {godot.convention}; checked the Unreal way (choose one engine "
                f"in the Level Check to read it the other way)")))
        return unreal if unreal is not None else godot

    def _exclude_children(self, objects, removed):
        """Godot deletes a -noimp node with everything under it."""
        gone = {o.name for o in removed}
        for obj in objects:
            parent = obj.parent
            for _ in range(MAX_PARENT_DEPTH):
                if parent is None:
                    break
                if parent.name in gone:
                    self.excluded.setdefault(obj.name, (
                        f"removed by Godot on import with its parent '{parent.name}' "
                        f"(-noimp takes a node's children with it)"))
                    break
                parent = parent.parent

    def _folded_names(self):
        if self._folded is None:
            self._folded = {}
            for name, obj in self._by_name.items():
                if obj.type in self._geometry:
                    self._folded.setdefault(name.upper(), []).append(name)
        return self._folded

    def _godot_named(self):
        if self._godot_names is None:
            self._godot_names = {}
            for name, obj in self._by_name.items():
                if obj.type in self._geometry:
                    self._godot_names.setdefault(godot_node_name(name), []).append(name)
        return self._godot_names

    # --- pairing ------------------------------------------------------------------------------
    def _add_proxy(self, obj, parsed):
        """An Unreal proxy: find its owner as the importer would (exact name, then any case),
        say which and why, and warn about pairings an export changes."""
        name = obj.name
        base, duplicate = _split_duplicate(name[4:])
        found = []                      # (candidate, owner name)
        for candidate in parsed.owners:
            if candidate in self._by_name and candidate != name \
                    and self._by_name[candidate].type in self._geometry:
                found.append((candidate, candidate))
                continue
            for other in self._folded_names().get(candidate.upper(), ()):
                if other != name:
                    found.append((candidate, other))
        owners = list(dict.fromkeys(o for _, o in found if o not in self.excluded))
        if not owners:
            parent = obj.parent
            hint = ""
            if parent is not None and parent.type in self._geometry:
                hint = (f"; Unreal pairs by name and does not follow its parent "
                        f"'{parent.name}' (name it {parsed.convention}{parent.name}_01)")
            self.orphans[name] = (
                f"{parsed.convention} collision proxy of '{parsed.owners[-1]}', which is not "
                f"a mesh-like object of this file (the engine would drop it){hint}")
            return
        owner = self._by_name[owners[0]]
        self._add(owner, Part(obj, parsed.kind, parsed.convention))
        rest = name[4:]
        matched = next(c for c, o in found if o == owner.name)
        plain = True          # the documented reading: the whole name, or it and a number
        if matched == rest:
            why = "the whole name after the prefix"
        else:
            counter = base.rstrip("_").rsplit("_", 1)[-1]
            why = f"the name after the prefix without its last part '_{counter}'"
            if duplicate and matched.endswith(duplicate):
                why += f", Blender's duplicate suffix '{duplicate}' carried over"
            if not counter.isdigit():
                plain = False
                why += (" (Epic documents that part as a number, UCX_[RenderMeshName]_##; "
                        "the importers take any last part as one)")
        if matched != owner.name:
            plain = False
            why += ", in another letter case (Unreal matches names in any case)"
        self.notes[name] = f"collision of '{owner.name}': {why}"
        if not plain:         # a reading worth telling in the report, not only the Sidebar
            self.warnings.append((name, "note: " + self.notes[name]))
        stem = base.rstrip("_").rsplit("_", 1)[0]
        engine_reads = {rest.upper(), stem.upper()}
        # Two readings the importer itself has (not Blender's ".001" pairing, warned below).
        read = list(dict.fromkeys(o for c, o in found if c.upper() in engine_reads
                                  and o not in self.excluded))
        if len(read) > 1:
            others = ", ".join(f"'{o}'" for o in read if o != owner.name)
            self.warnings.append((name, (
                f"reads two ways: collision of '{owner.name}' or of {others}; an importer may "
                f"attach it to either; checked as part of '{owner.name}' (rename one of them)")))
        if duplicate and matched.upper() not in engine_reads:
            # Paired through the ".001" Blender gives duplicates: the exported names do not.
            target = self._by_name.get(stem)
            fate = (f"Unreal attaches it to '{stem}' instead" if target is not None and
                    target.type in self._geometry else
                    f"Unreal looks for '{rest}' or '{stem}' and, finding neither, drops it")
            self.warnings.append((name, (
                f"pairs with '{owner.name}' only through Blender's '{duplicate}' duplicate "
                f"suffix, which the importer does not read: {fate} (Make Colliders names "
                f"proxies without this trap)")))
        parent = obj.parent
        if parent is not None and parent != owner:
            self.warnings.append((name, (
                f"parented to '{parent.name}', not to '{owner.name}': Unreal pairs by name "
                f"alone, so it is collision of '{owner.name}', but Blender moves it with "
                f"'{parent.name}'")))

    def _add_body(self, obj, parsed):
        """A Godot -colonly/-convcolonly object: a body of its own; the object of its name
        without the suffix, if any, is the visual beside it (left out of the check)."""
        name = obj.name
        if parsed.kind == "PLANE":
            self.excluded[name] = (
                "a Godot -colonly Empty displayed as an Image: Godot makes an infinite plane "
                "(WorldBoundaryShape3D), which a level check cannot measure against")
            return
        self._marks[name] = parsed
        visual = None
        for candidate in parsed.owners:
            for other in self._godot_named().get(candidate, ()):
                if other != name and other not in self.excluded \
                        and self._by_name[other].type in self._geometry:
                    visual = self._by_name[other]
                    break
            if visual is not None:
                break
        body = godot_node_name(parsed.owners[0])
        if "$" in body:
            self.warnings.append((name, (
                f"Godot takes '${parsed.convention[1:]}' out of a name only in lower case: the "
                f"body keeps the name '{body}' and no visual is paired with it")))
        if visual is not None:
            self._visual[name] = visual
            self._parts.setdefault(visual.name, []).append(Part(obj, parsed.kind,
                                                               parsed.convention))
            self.excluded.setdefault(visual.name, (
                f"the visual of '{name}': Godot makes that a body of its own and gives this "
                f"mesh no collision; the level check measures '{name}'"))
            self.notes[name] = (f"a Godot body of its own (named '{body}' in Godot), beside "
                                f"the visual '{visual.name}'")
        else:
            self.notes[name] = f"a Godot body of its own (named '{body}' in Godot)"
        if obj.type == "EMPTY":
            self._empty_warnings(obj, parsed)

    def _empty_warnings(self, obj, parsed):
        name = obj.name
        self.warnings.append((name, (
            "Godot reads an Empty's display type only from Collada files (its documentation: "
            "'With Collada files, the option -colonly can also be used with Blender's empty "
            "objects'); exported as glTF or FBX this Empty gives no collider in Godot")))
        if abs(obj.empty_display_size - 1.0) > EMPTY_SIZE_TOLERANCE:
            self.warnings.append((name, (
                f"Godot ignores the Display Size ({obj.empty_display_size:g}): its collider is "
                f"a {parsed.kind.lower()} of size 1 scaled by the Empty; scale the Empty "
                f"instead")))
        if parsed.kind == "RAY" and any(abs(a) > EMPTY_SIZE_TOLERANCE
                                        for a in obj.rotation_euler):
            self.warnings.append((name, (
                "a rotated ray: the check takes Godot's ray as 1 along the Empty's -Z; Godot "
                "turns the body a quarter turn about the parent's X, which for a rotated Empty "
                "points elsewhere")))

    def _add(self, owner, part):
        self._parts.setdefault(owner.name, []).append(part)
        self._owner[part.obj.name] = owner

    # --- questions ----------------------------------------------------------------------------
    def parts_of(self, obj) -> list:
        return list(self._parts.get(obj.name, ()))

    def owner_of(self, obj):
        """``obj``: an object or its name."""
        return self._owner.get(obj if isinstance(obj, str) else obj.name)

    def standing_in(self) -> set:
        """Names of the objects that stand in for another (``owner_of`` is not None)."""
        return set(self._owner)

    def own_mark(self, obj):
        """``obj``: an object or its name."""
        return self._marks.get(obj if isinstance(obj, str) else obj.name)

    def visual_of(self, obj):
        """For a Godot -colonly/-convcolonly body, the visual object beside it (else None)."""
        return self._visual.get(obj.name if not isinstance(obj, str) else obj)

    def visual_name(self, name: str):
        """The name of the visual object beside the body called ``name``, else None."""
        visual = self._visual.get(name)
        return None if visual is None else visual.name

    def finding_extra(self, object_a, object_b=None) -> dict:
        """For a finding between the entries named ``object_a`` and ``object_b``: the visual
        object beside each one that is a Godot body, as ``{"visual_a": …, "visual_b": …}``
        (only the sides that have one), to merge into the finding's ``extra``."""
        if not self._visual:           # (no Godot body beside a visual in the file)
            return {}
        from .instances import SEPARATOR      # an instance's path: "Shelf_B/Rock-colonly"

        extra = {}
        for side, name in (("visual_a", object_a), ("visual_b", object_b)):
            own = name.rsplit(SEPARATOR, 1)[-1] if name else None
            visual = self.visual_name(own) if own else None
            if visual is not None:
                extra[side] = name[:len(name) - len(own)] + visual
        return extra

    def is_part(self, obj) -> bool:
        return obj.name in self._owner

    def has_parts(self, name: str) -> bool:
        """Whether the object called ``name`` is checked through proxies or children."""
        return name in self._parts and name not in self.excluded

    def warnings_of(self, name: str) -> list:
        """The warnings about the object called ``name`` and about its proxies."""
        related = {name, *(p.obj.name for p in self._parts.get(name, ()))}
        return [(n, m) for n, m in self.warnings if n in related]

    def __len__(self) -> int:
        return len(self._owner)


# Display sizes and rotations closer to 1 and 0 than this are taken as exactly that (Blender
# stores them as floats; a user typing 1 gets 1.0 exactly).
EMPTY_SIZE_TOLERANCE = 1e-6


def _exclusion_reason(parsed) -> str:
    if parsed.convention == "-noimp":
        return "removed by Godot on import (-noimp)"
    if parsed.convention == "-navmesh":
        return "a Godot navigation mesh (-navmesh), not collision"
    if parsed.convention == "-occonly":
        return "a Godot occluder only (-occonly), not collision"
    return (f"removed by Godot on import: nothing is left of its name without "
            f"{parsed.convention}")


# What makes ``ProxyIndex._read`` look at a name at all (``unreal_name``, ``godot_name``, and the
# warning about a prefix in the wrong case): a Godot suffix's letters anywhere in the lower-case
# name (or its mesh's name), or "_" as its fourth character (an Unreal prefix in any case).
_GODOT_LETTERS = re.compile("|".join(("col",) + _GODOT_RARE))
_FOURTH_UNDERSCORE = re.compile(r"(?:^|\0)[^\0]{3}_")


def _maybe_marked(names, types, objects) -> list:
    """Positions of the names ``ProxyIndex._read`` may find something in (a superset), in
    order: one regular-expression pass over all names joined by NUL (which no name holds)."""
    if not names:
        return []
    starts = np.cumsum([0] + [len(n) + 1 for n in names[:-1]])
    joined = "\0".join(names)
    lowered = joined.lower()
    hits = set()
    if len(lowered) == len(joined):
        positions = [m.start() for m in _GODOT_LETTERS.finditer(lowered)]
        hits.update(np.searchsorted(starts, positions, side="right") - 1)
    else:                                 # (a name whose lower case is longer: read them all)
        hits.update(k for k, n in enumerate(names) if _GODOT_LETTERS.search(n.lower()))
    ends = [m.end() - 1 for m in _FOURTH_UNDERSCORE.finditer(joined)]
    hits.update(np.searchsorted(starts, ends, side="right") - 1)
    meshes = [m for m in _mesh_names() if _GODOT_LETTERS.search(m.lower())]
    if meshes:          # Godot's last resort reads the mesh's name: "-col" in the mesh data
        meshes = set(meshes)
        hits.update(k for k, (obj, typ) in enumerate(zip(objects, types))
                    if typ == "MESH" and obj.data is not None and obj.data.name in meshes)
    return sorted(int(k) for k in hits)


def _mesh_names():
    import bpy

    return bpy.data.meshes.keys()


def options_for(scene=None, engine=None, one_hull_per_ucx=None) -> dict:
    """``ProxyIndex`` keywords: ``engine`` and ``one_hull_per_ucx`` as given, else the scene's
    Level Check settings (``Scene.convex_level``), else the defaults."""
    settings = getattr(scene, "convex_level", None) if scene is not None else None
    if engine is None and settings is not None:
        engine = getattr(settings, "engine", None)
    if one_hull_per_ucx is None and settings is not None:
        one_hull_per_ucx = getattr(settings, "one_hull_per_ucx", None)
    return {"engine": check_engine(engine), "one_hull_per_ucx": one_hull_per_ucx}


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
_cached = None   # ((number of objects, engine, one hull), ProxyIndex) of the file


def cached_index() -> ProxyIndex:
    """The open file's ``ProxyIndex``, made again after any depsgraph update (renames, new or
    deleted objects) or file load; the Sidebar asks for it on every redraw."""
    import bpy

    global _cached
    options = options_for(bpy.context.scene)
    key = (len(bpy.data.objects), options["engine"], options["one_hull_per_ucx"])
    if _cached is None or _cached[0] != key:
        _cached = (key, ProxyIndex(**options))
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
