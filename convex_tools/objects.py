"""Blender objects → world-space core shapes.

What an object becomes (``representation``), first rule that applies:

1. the ``kind`` asked for, or the object's own Convex Tools *Shape* setting, when not AUTO;
2. its collision proxies (Unreal ``UCX_``/``UBX_``/``USP_``/``UCP_`` objects; for a visual, the
   Godot ``-colonly``/``-convcolonly`` bodies beside it) or, for a Compound Parent rigid body,
   its rigid-body children (``proxies``): a ``Compound`` of their convex parts, or a
   ``TriangleMesh`` of mesh proxies;
3. a Godot suffix on the object itself (``-col``/``-convcol``/``-rigid``; a ``-colonly`` body;
   a ``-colonly`` Empty's box, sphere or ray: ``godot_empty_shape``);
4. its rigid-body collision shape (Mesh → triangle mesh);
5. the convex hull of its evaluated mesh (modifiers applied; curves, text and metaballs through
   their evaluated mesh).

The kinds and what each is for:

    HULL          one convex hull of the evaluated mesh: props, the fastest and most robust
    BOX ... CONE  primitives fitted like Blender's rigid-body shapes (below)
    CONVEX_PARTS  one hull per loose part of the evaluated mesh (``Compound``): modular kit
                  pieces, arches, L-shaped walls built as separate convex pieces
    MESH          the evaluated triangles (``TriangleMesh``): static concave geometry such as
                  terrain and room shells; a surface whose front faces look into free space

Primitive sizes follow Blender's rigid-body conventions (source/blender/blenkernel/intern/
rigidbody.cc, ``rigidbody_validate_sim_shape``): ``size`` is half the object's local bounding
box, the shape is centred on the object's origin with +Z as its axis, and

    BOX        half extents = size
    SPHERE     radius = max(size)
    CAPSULE    radius = max(size.x, size.y), total half height = size.z
    CYLINDER   radius = max(size.x, size.y), half height = size.z
    CONE       radius = max(size.x, size.y), half height = size.z (apex at +Z)
    ELLIPSOID  radii = size                         (ours; Blender has no such shape)
    ROUND_BOX  the box of ``size`` with its edges rounded by the object's radius setting

The object's full world matrix then applies, non-uniform scale and shear included; an instance
of a collection also gets the instancer's ``placement`` in front of it. A margin (the object's
own setting, or a convex-hull rigid body's collision margin when "use margin" is on, which
Bullet adds around the hull) is a sphere Minkowski-added in world units, to every convex part.
A triangle mesh takes no margin (it is a surface; its faces have no inside to grow), and
Bullet's margins on primitives are not modelled: boxes and cylinders keep theirs inside the
fitted size (the outer surface is the same), and a cone's outer margin (0.04 by default) is left
out.

Hulls, loose-part splits and triangle meshes are cached by the content of the geometry (and a
triangle mesh, built in world space, by its matrix too): moving an object costs a read of its
coordinates and a hash, never a rebuild of its hulls.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .core import (Box, Capsule, Cone, Cylinder, Ellipsoid, Hull, MinkowskiSum, RoundBox,
                   Sphere, Transformed)

# Kinds made from the object's own geometry as one convex shape.
CONVEX_KINDS = ("HULL", "SPHERE", "CAPSULE", "BOX", "ROUND_BOX", "CYLINDER", "CONE", "ELLIPSOID")
# Kinds made of many convex parts or triangles.
CONCAVE_KINDS = ("CONVEX_PARTS", "MESH")
KINDS = ("AUTO",) + CONVEX_KINDS + CONCAVE_KINDS

# How a representation made of other objects is named (``Representation.kind``).
PROXIES = "PROXIES"
RIGID_COMPOUND = "RIGID_COMPOUND"

# Rigid-body collision shapes → our kinds (Compound is handled apart: its children are parts).
RIGID_BODY_KINDS = {"BOX": "BOX", "SPHERE": "SPHERE", "CAPSULE": "CAPSULE",
                    "CYLINDER": "CYLINDER", "CONE": "CONE", "CONVEX_HULL": "HULL",
                    "MESH": "MESH"}

# Object types that become shapes: those whose evaluated geometry Blender turns into a mesh
# (``Object.to_mesh``). Every part of the add-on (operators, Level Check, watch, pictures) uses
# this one set. Hair curves (CURVES) and point clouds are left out: ``to_mesh`` refuses them
# ("Object does not have geometry data"), and the hull of their points would ignore the radius
# of every strand and point.
GEOMETRY_TYPES = frozenset({"MESH", "CURVE", "SURFACE", "FONT", "META"})

# Distinct hulls kept (least recently used dropped first); each is the hull of one mesh state.
HULL_CACHE_SIZE = 4096
_hulls: "OrderedDict[bytes, Hull]" = OrderedDict()
# Hulls built so far (a test checks that moving an object builds none).
hull_builds = 0
# Loose-part splits kept: content key -> tuple of vertex-index arrays.
PARTS_CACHE_SIZE = 1024
_splits: "OrderedDict[bytes, tuple]" = OrderedDict()
# World-space triangle meshes kept. Few: a 100k-triangle terrain holds tens of megabytes, and
# building it again costs about half a second (the cache serves the panel, operators, watch).
MESH_CACHE_SIZE = 4
_meshes: "OrderedDict[bytes, object]" = OrderedDict()

# Rounds of label hooking in ``loose_parts`` before it finishes with a plain union-find. Each
# round joins every part with its smallest neighbour, so real meshes need a handful.
LOOSE_PART_ROUNDS = 64


class ConversionError(ValueError):
    """An object cannot become a shape (no geometry, empty mesh, unknown kind)."""


def resolve_object(item, argument: str = "obj"):
    """The Blender object ``item`` is, or names (``bpy.data.objects[item]``); anything else is a
    ``ValueError`` naming ``argument``. The one rule for every function taking objects."""
    import bpy

    if isinstance(item, str):
        obj = bpy.data.objects.get(item)
        if obj is None:
            raise ValueError(f"{argument}: there is no object named {item!r}")
        return obj
    if not isinstance(item, bpy.types.Object):
        raise ValueError(f"{argument} must be a Blender object or the name of one, got "
                         f"{'None' if item is None else type(item).__name__}")
    try:
        item.name
    except ReferenceError:
        raise ValueError(f"{argument} is an object that was deleted") from None
    return item


def settings_of(obj):
    """The object's Convex Tools settings (None before the add-on is registered)."""
    return getattr(obj, "convex_tools", None)


def stored_settings(obj):
    """The object's Convex Tools settings when any of them was ever set, else None (all at
    their defaults, or the add-on not registered). Blender keeps an add-on's properties in the
    object's system properties, made on the first write: asking for them costs ~0.2 µs, while
    ``obj.convex_tools`` costs ~1 µs and each of its fields ~0.8 µs more (a level check reads
    them for every object). For callers to which a default setting and no setting are the
    same."""
    return None if stored_group(obj) is None else settings_of(obj)


def stored_group(obj):
    """The ID property group holding the object's Convex settings; None when there is none or
    it is empty (reading ``obj.convex_tools`` makes an empty one): all at their defaults."""
    system = getattr(obj, "bl_system_properties_get", None)
    if system is None:                      # (Blender before 5.0: among the custom properties)
        group = obj.get("convex_tools")
    else:
        group = system()
        group = group.get("convex_tools") if group is not None else None
    return group if group else None


def settings_snapshot(group):
    """A hashable snapshot of a ``stored_group`` (None for None: objects at their defaults
    share it): what of its settings a shape may depend on."""
    if group is None:
        return None
    to_dict = getattr(group, "to_dict", None)
    return repr(sorted((to_dict() if to_dict is not None else dict(group)).items()))


# --- which representation ---------------------------------------------------------------------
@dataclass(frozen=True)
class Representation:
    """What an object is checked as.

    ``kind``: a kind of ``KINDS`` made from the object's own geometry, or ``PROXIES`` /
    ``RIGID_COMPOUND`` for a shape made of other objects' geometry (``parts``, a list of
    ``proxies.Part``). ``source`` says which rule chose it, for the panel and reports;
    ``ignored`` names proxies or children a setting overrides (they still stand in for nothing
    else).
    """

    kind: str
    source: str
    parts: tuple = ()
    ignored: str = ""


def _check_kind(kind):
    if kind not in KINDS:
        raise ConversionError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")


def representation(obj, kind: str = "AUTO", proxies=None) -> Representation:
    """What ``obj`` becomes (see the module docstring). ``proxies``: a ``proxies.ProxyIndex``
    of the file, made when not given (a scan of every object's name)."""
    _check_kind(kind)
    if proxies is None:
        from .proxies import ProxyIndex
        proxies = ProxyIndex()
    parts = tuple(proxies.parts_of(obj))
    rigid = getattr(obj, "rigid_body", None)
    compound = rigid is not None and rigid.collision_shape == "COMPOUND"
    settings = settings_of(obj)
    chosen = kind if kind != "AUTO" else (settings.kind if settings is not None else "AUTO")
    if chosen != "AUTO":
        source = "Convex Tools setting" if kind == "AUTO" else "Kind asked for"
        ignored = ""
        if parts:
            ignored = _parts_phrase(parts) + " ignored"
        return Representation(chosen, source, (), ignored)
    if parts:
        if compound:
            return Representation(RIGID_COMPOUND, "Rigid body", parts)
        return Representation(PROXIES, _proxy_source(parts), parts)
    if compound:
        raise ConversionError(f"'{obj.name}' is a Compound Parent rigid body without rigid-body "
                              f"children (its compound shape would be empty)")
    mark = proxies.own_mark(obj)
    if mark is not None:
        what = "Empty" if obj.type == "EMPTY" else "suffix"
        return Representation(mark.kind, f"Godot {mark.convention} {what}")
    if rigid is not None:
        return Representation(RIGID_BODY_KINDS.get(rigid.collision_shape, "HULL"), "Rigid body")
    return Representation("HULL", "Evaluated mesh")


def _proxy_source(parts) -> str:
    conventions = sorted({p.source for p in parts})
    engines = {"Unreal" if c.startswith("U") else "Godot" for c in conventions}
    if len(conventions) == 1:
        name = conventions[0].rstrip("_") if conventions[0].startswith("U") else conventions[0]
        if name.startswith("-"):       # a Godot body of its own, beside this visual
            return f"Godot {name} {'bodies' if len(parts) > 1 else 'body'}"
        return f"{name} {'proxies' if len(parts) > 1 else 'proxy'}"
    return f"{' and '.join(sorted(engines))} proxies"


def _parts_phrase(parts) -> str:
    if parts[0].source == "rigid body compound":
        return f"{len(parts)} compound child{'ren' * (len(parts) != 1)}"
    return _proxy_source(parts)


# --- geometry ---------------------------------------------------------------------------------
def _depsgraph(depsgraph):
    if depsgraph is not None:
        return depsgraph
    import bpy
    return bpy.context.evaluated_depsgraph_get()


def _require_geometry(obj):
    if obj.type not in GEOMETRY_TYPES:
        raise ConversionError(f"'{obj.name}' is a {obj.type.lower()} object with no geometry")


def read_geometry(obj, depsgraph, edges=False, triangles=False):
    """Local (coordinates (N, 3), edges (E, 2) or None, triangles (T, 3) or None) of the
    object's evaluated geometry (modifiers applied). An object the depsgraph does not hold (a
    proxy in no scene, say) gives its original mesh."""
    _require_geometry(obj)
    evaluated = obj.evaluated_get(depsgraph)
    owned = evaluated.type != "MESH"
    # For meshes the evaluated data already has the modifiers; other types go through to_mesh.
    mesh = evaluated.to_mesh() if owned else evaluated.data
    try:
        if mesh is None:
            return np.empty((0, 3)), None, None
        coords = np.empty(len(mesh.vertices) * 3)
        mesh.vertices.foreach_get("co", coords)
        edge_array = tri_array = None
        if edges:
            edge_array = np.empty(len(mesh.edges) * 2, dtype=np.int64)
            mesh.edges.foreach_get("vertices", edge_array)
            edge_array = edge_array.reshape(-1, 2)
        if triangles:
            tri_array = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int64)
            mesh.loop_triangles.foreach_get("vertices", tri_array)
            tri_array = tri_array.reshape(-1, 3)
        return coords.reshape(-1, 3), edge_array, tri_array
    finally:
        if owned:
            evaluated.to_mesh_clear()


def local_half_size(obj, depsgraph) -> np.ndarray:
    """Half the local bounding box of the evaluated object (Blender's rigid-body ``size``)."""
    return local_bounds(obj, depsgraph)[1]


def local_bounds(obj, depsgraph):
    """(centre, half size) of the local bounding box of the evaluated object."""
    _require_geometry(obj)
    evaluated = obj.evaluated_get(depsgraph)
    # An empty mesh has a bounding box of zeros: a primitive fitted to it would be a point at the
    # origin that counts as checked. Refuse it as a hull of no vertices is refused.
    if evaluated.type == "MESH":
        empty = len(evaluated.data.vertices) == 0
    else:
        mesh = evaluated.to_mesh()
        try:
            empty = mesh is None or len(mesh.vertices) == 0
        finally:
            evaluated.to_mesh_clear()
    if empty:
        raise ConversionError(f"'{obj.name}' has no vertices to build a shape from")
    corners = np.array([tuple(c) for c in evaluated.bound_box])
    lower, upper = corners.min(axis=0), corners.max(axis=0)
    return 0.5 * (lower + upper), 0.5 * (upper - lower)


def _content_key(*arrays) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
        h.update(b"|")
    return h.digest()


def _remember(cache, key, value, size):
    cache[key] = value
    if len(cache) > size:
        cache.popitem(last=False)
    return value


def _recall(cache, key):
    value = cache.get(key)
    if value is not None:
        cache.move_to_end(key)
    return value


def hull_of(coords: np.ndarray, triangles=None) -> Hull:
    """The cached hull of these coordinates (built on first sight of this exact content).

    ``triangles`` (T, 3), the mesh's own faces, let a closed convex mesh (a UV sphere, a
    cylinder, a bevelled crate: most props) be certified as its own hull in a few milliseconds
    instead of running Quickhull; any other mesh falls back to Quickhull, with the same corners.
    """
    global hull_builds
    digest = hashlib.blake2b(np.ascontiguousarray(coords).tobytes(), digest_size=16)
    if triangles is not None:
        digest.update(np.ascontiguousarray(triangles).tobytes())
    key = digest.digest()
    hull = _recall(_hulls, key)
    if hull is None:
        hull = _remember(_hulls, key, Hull(coords, faces=triangles), HULL_CACHE_SIZE)
        hull_builds += 1
    return hull


def clear_cache() -> None:
    _hulls.clear()
    _splits.clear()
    _meshes.clear()


def loose_parts(n_vertices: int, edges) -> list:
    """Vertex indices of each loose part (vertices joined by edges, as Blender's Separate by
    Loose Parts sees them), ordered by their first vertex; a vertex on no edge is a part."""
    label = np.arange(n_vertices)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    u, v = edges[:, 0], edges[:, 1]
    for _ in range(LOOSE_PART_ROUNDS):
        lu, lv = label[u], label[v]
        if np.array_equal(lu, lv):
            break
        # Hook the larger root of each edge under the smaller, then point every vertex at its
        # root (pointer jumping); labels only ever decrease, so this ends.
        np.minimum.at(label, np.maximum(lu, lv), np.minimum(lu, lv))
        while True:
            jumped = label[label]
            if np.array_equal(jumped, label):
                break
            label = jumped
    else:
        label = _union_find(label, u, v)
    order = np.argsort(label, kind="stable")
    cuts = np.flatnonzero(np.diff(label[order])) + 1
    return np.split(order, cuts)


def _union_find(label, u, v):
    """Finish ``loose_parts`` one edge at a time (for meshes the rounds did not settle)."""
    parent = label.tolist()

    def root(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in zip(u.tolist(), v.tolist()):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return np.array([root(x) for x in range(len(parent))])


def part_hulls(obj, depsgraph) -> tuple:
    """One cached hull per loose part of the object's evaluated mesh (local coordinates)."""
    coords, edges, _ = read_geometry(obj, depsgraph, edges=True)
    if coords.size == 0:
        raise ConversionError(f"'{obj.name}' has no vertices to build a shape from")
    key = _content_key(coords, edges)
    split = _recall(_splits, key)
    if split is None:
        split = _remember(_splits, key, tuple(loose_parts(len(coords), edges)), PARTS_CACHE_SIZE)
    return tuple(hull_of(coords[indices]) for indices in split)


def local_triangles(obj, depsgraph):
    """(coordinates (N, 3), triangles (T, 3)) of the object's evaluated mesh, local frame."""
    coords, _, tris = read_geometry(obj, depsgraph, triangles=True)
    if coords.size == 0:
        raise ConversionError(f"'{obj.name}' has no vertices to build a shape from")
    if len(tris) == 0:
        raise ConversionError(f"'{obj.name}' has no faces to make a triangle mesh of")
    return coords, tris


def local_shape(obj, kind: str, depsgraph):
    """The object's convex shape in its own (unscaled) local frame, for a convex ``kind``."""
    if kind == "HULL":
        coords, _, triangles = read_geometry(obj, depsgraph, triangles=True)
        if coords.size == 0:
            raise ConversionError(f"'{obj.name}' has no vertices to build a shape from")
        return hull_of(coords, triangles if len(triangles) else None)
    size = local_half_size(obj, depsgraph)
    radial = float(max(size[0], size[1]))
    if kind == "BOX":
        return Box(size)
    if kind == "SPHERE":
        return Sphere(float(size.max()))
    if kind == "CAPSULE":
        return Capsule(radial, max(float(size[2]) - radial, 0.0))
    if kind == "CYLINDER":
        return Cylinder(radial, float(size[2]))
    if kind == "CONE":
        return Cone(radial, float(size[2]))
    if kind == "ELLIPSOID":
        return Ellipsoid(size)
    if kind == "ROUND_BOX":
        settings = settings_of(obj)
        radius = float(settings.round_radius) if settings is not None else 0.0
        radius = min(radius, float(size.min()))
        return RoundBox(np.maximum(size - radius, 0.0), radius)
    raise ConversionError(f"unknown kind {kind!r}")


def margin_of(obj, kind: str) -> float:
    """World-units margin around each convex part of ``obj`` made as ``kind`` (0 for MESH)."""
    if kind == "MESH":
        return 0.0
    settings = settings_of(obj)
    margin = float(settings.margin) if settings is not None else 0.0
    rigid = getattr(obj, "rigid_body", None)
    if kind == "HULL" and rigid is not None and rigid.collision_shape == "CONVEX_HULL" \
            and rigid.use_margin:
        margin += float(rigid.collision_margin)
    return margin


def world_matrix(obj, placement=None) -> np.ndarray:
    """The object's world matrix, behind ``placement`` (a collection instance's) if given."""
    matrix = np.array(obj.matrix_world, dtype=float)
    return matrix if placement is None else np.asarray(placement, dtype=float) @ matrix


# --- world shapes ------------------------------------------------------------------------------
def is_concave(shape) -> bool:
    """True for a ``Compound`` or ``TriangleMesh`` (a shape made of convex parts, which has no
    support mapping of its own)."""
    return callable(getattr(shape, "part_label", None))


def shape_from_object(obj, kind: str = "AUTO", depsgraph=None, *, placement=None,
                      proxies=None):
    """World-space core shape of a Blender object, or of the object of that name (see the module
    docstring for the rules): a convex shape, a ``Compound`` or a ``TriangleMesh``.
    ``placement``: a 4×4 matrix in front of the world matrices (a collection instance's);
    ``proxies``: a ``proxies.ProxyIndex`` to reuse. ``ValueError`` (``ConversionError``) when
    the object cannot be one."""
    obj = resolve_object(obj, "obj")
    depsgraph = _depsgraph(depsgraph)
    return shape_of(obj, representation(obj, kind, proxies), depsgraph, placement)


def shape_of(obj, rep, depsgraph, placement=None):
    """The world-space shape of ``obj`` as its ``Representation`` ``rep`` says."""
    try:
        if obj.type == "EMPTY" and not rep.parts:
            return godot_empty_shape(obj, rep.kind, placement)
        if rep.parts:
            return _shape_of_parts(obj, rep, depsgraph, placement)
        if rep.kind == "MESH":
            return world_mesh([(obj, placement)], depsgraph)
        parts = own_convex_parts(obj, rep.kind, depsgraph, placement)
        if rep.kind in CONVEX_KINDS:
            return parts[0][0]
        return _compound(parts)
    except ValueError as problem:
        if isinstance(problem, ConversionError):
            raise
        raise ConversionError(f"'{obj.name}' cannot become a {_kind_text(rep.kind)}: "
                              f"{problem}") from None


# Godot's -colonly Empty colliders (resource_importer_scene.cpp): a BoxShape3D of size 2 (half
# extents 1), a SphereShape3D of radius 1, or a SeparationRayShape3D of length 1, all under the
# Empty's transform; Godot ignores the Display Size. The ray is taken along the Empty's -Z from
# its origin (see docs/engines.md).
GODOT_EMPTY_RAY_LENGTH = 1.0


def godot_empty_shape(obj, kind, placement=None):
    """The world-space collider Godot makes of a -colonly Empty displayed as ``kind``."""
    matrix = world_matrix(obj, placement)
    if kind == "BOX":
        return Transformed(Box((1.0, 1.0, 1.0)), matrix)
    if kind == "SPHERE":
        return Transformed(Sphere(1.0), matrix)
    if kind == "RAY":
        from .core import Segment

        half = 0.5 * GODOT_EMPTY_RAY_LENGTH
        shift = np.eye(4)
        shift[2, 3] = -half          # from the origin down its -Z
        return Transformed(Segment(half), matrix @ shift)
    raise ConversionError(f"'{obj.name}' is an Empty: it has no geometry to make a "
                          f"{_kind_text(kind)} of")


def _kind_text(kind):
    return {"PROXIES": "shape of its proxies", "RIGID_COMPOUND": "compound of its children",
            "MESH": "triangle mesh", "CONVEX_PARTS": "set of convex parts"}.get(
        kind, kind.replace("_", " ").lower())


def own_convex_parts(obj, kind, depsgraph, placement=None, margin=None, label=None,
                     centred=False) -> list:
    """[(world-space convex shape, label)] of ``obj``'s own geometry as a convex ``kind`` (one
    part) or CONVEX_PARTS (one a loose part). ``margin`` overrides the object's own; ``label``
    names the parts (None: the core's "part 3"); ``centred`` fits a primitive around the centre
    of the object's bounds rather than its origin (as engines fit a box, sphere or capsule
    proxy to its mesh)."""
    matrix = world_matrix(obj, placement)
    margin = margin_of(obj, kind) if margin is None else margin
    if kind == "CONVEX_PARTS":
        locals_ = part_hulls(obj, depsgraph)
    else:
        local = local_shape(obj, kind, depsgraph)
        if centred and kind != "HULL":
            shift = np.eye(4)
            shift[:3, 3] = local_bounds(obj, depsgraph)[0]
            matrix = matrix @ shift
        locals_ = (local,)
    out = []
    for k, local in enumerate(locals_):
        shape = Transformed(local, matrix)
        if margin > 0.0:
            shape = MinkowskiSum(shape, Sphere(margin))
        name = None if label is None else (label if len(locals_) == 1 else f"{label} part {k}")
        out.append((shape, name))
    return out


def _compound(parts):
    from .core import Compound

    names = [n for _, n in parts]
    return Compound([s for s, _ in parts], None if all(n is None for n in names) else names)


def world_mesh(sources, depsgraph):
    """One world-space ``TriangleMesh`` of the evaluated triangles of ``sources``, a list of
    (object, placement); cached by content and matrices. Degenerate triangles (zero area, which
    real meshes have) are left out."""
    from .core import TriangleMesh

    pieces, key_parts = [], []
    for obj, placement in sources:
        coords, tris = local_triangles(obj, depsgraph)
        matrix = world_matrix(obj, placement)
        pieces.append((coords, tris, matrix))
        key_parts += [coords, tris, matrix]
    key = _content_key(*key_parts)
    mesh = _recall(_meshes, key)
    if mesh is None:
        vertices, triangles, offset = [], [], 0
        for coords, tris, matrix in pieces:
            vertices.append(coords @ matrix[:3, :3].T + matrix[:3, 3])
            # A mirroring matrix turns the winding over; keep the front faces where they were.
            triangles.append((tris[:, ::-1] if np.linalg.det(matrix[:3, :3]) < 0.0 else tris)
                             + offset)
            offset += len(coords)
        mesh = _remember(_meshes, key, TriangleMesh(np.concatenate(vertices),
                                                    np.concatenate(triangles),
                                                    drop_degenerate=True), MESH_CACHE_SIZE)
    return mesh


def _shape_of_parts(obj, rep, depsgraph, placement):
    """The compound (or triangle mesh) an object's proxies or compound children make."""
    settings = settings_of(obj)
    extra = float(settings.margin) if settings is not None else 0.0
    meshes = [p for p in rep.parts if p.kind == "MESH"]
    if meshes and len(meshes) != len(rep.parts):
        names = ", ".join(sorted(p.obj.name for p in rep.parts))
        raise ConversionError(f"'{obj.name}' mixes mesh and convex collision proxies ({names}); "
                              f"make them all one or the other")
    if meshes:
        return world_mesh([(p.obj, placement) for p in meshes], depsgraph)
    parts = []
    for part in rep.parts:
        if part.obj.type == "EMPTY":
            parts.append((godot_empty_shape(part.obj, part.kind, placement), part.obj.name))
            continue
        try:
            # Engines fit a proxy's primitive to its mesh; Blender fits a compound child's
            # around the child's origin, as for any rigid body.
            parts += own_convex_parts(part.obj, part.kind, depsgraph, placement,
                                      margin=margin_of(part.obj, part.kind) + extra,
                                      label=part.obj.name,
                                      centred=part.source != "rigid body compound")
        except ValueError as problem:
            raise ConversionError(f"'{obj.name}': its part '{part.obj.name}' cannot become a "
                                  f"{_kind_text(part.kind)}: {problem}") from None
    return _compound(parts)


# --- what the panel says ---------------------------------------------------------------------
_PLURALS = {"box": "boxes", "round box": "round boxes", "child": "children"}


def _count(n, noun):
    return f"{n:,} {noun if n == 1 else _PLURALS.get(noun, noun + 's')}"


def _tally(obj, kind, depsgraph, tally):
    """Add what ``obj``'s own geometry becomes as ``kind`` to ``tally`` (noun -> count)."""
    if kind == "CONVEX_PARTS":
        noun, n = "hull", len(part_hulls(obj, depsgraph))
    elif kind == "MESH":
        noun, n = "triangle", len(local_triangles(obj, depsgraph)[1])
    else:
        noun, n = ("hull" if kind == "HULL" else kind.replace("_", " ").lower()), 1
    tally[noun] = tally.get(noun, 0) + n


def describe(obj, kind: str = "AUTO", depsgraph=None, proxies=None) -> str:
    """One line saying what the object becomes and why, e.g. "UCX proxies: 3 hulls",
    "Rigid body: mesh, 1,204 triangles" or "Evaluated mesh: convex hull" (panel, reports)."""
    try:
        rep = representation(obj, kind, proxies)
    except ConversionError as problem:
        return f"Not checked: {problem}"
    if obj.type == "EMPTY" and not rep.parts:
        return f"{rep.source}: {_kind_text(rep.kind)}"
    depsgraph = _depsgraph(depsgraph)
    tally = {}
    try:
        for part_obj, part_kind in ([(p.obj, p.kind) for p in rep.parts] or [(obj, rep.kind)]):
            if part_obj.type == "EMPTY":
                noun = _kind_text(part_kind)
                tally[noun] = tally.get(noun, 0) + 1
                continue
            _tally(part_obj, part_kind, depsgraph, tally)
    except ValueError as problem:
        return f"{rep.source}: {_kind_text(rep.kind)}, which cannot be built: {problem}"
    what = ", ".join(_count(n, noun) for noun, n in tally.items())
    if rep.kind == "HULL" and not rep.parts:
        what = "convex hull"
    elif rep.kind in ("MESH", "CONVEX_PARTS") or (rep.parts and "triangle" in tally):
        what = ("mesh, " if "triangle" in tally else "convex parts, ") + what
    elif not rep.parts:
        what = rep.kind.replace("_", " ").lower()
    if rep.kind == RIGID_COMPOUND:
        text = f"Rigid body: compound of {_count(len(rep.parts), 'child')}, {what}"
    else:
        text = f"{rep.source}: {what}"
    if "triangle" in tally and float(getattr(settings_of(obj), "margin", 0.0) or 0.0) > 0.0:
        text += " (margin not applied: a triangle mesh is a surface)"
    if rep.ignored:
        text += f" ({rep.ignored})"
    return text
