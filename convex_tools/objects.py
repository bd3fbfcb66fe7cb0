"""Blender objects → world-space core shapes.

Which shape an object becomes (``resolve_kind``): its own Convex Tools setting when that is not
AUTO, else its rigid-body collision shape, else the convex hull of its evaluated mesh (modifiers
applied; curves, text and metaballs through their evaluated mesh).

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

The object's full world matrix then applies, non-uniform scale and shear included. A margin
(the object's own setting, or a convex-hull rigid body's collision margin when "use margin" is
on, which Bullet adds around the hull) is a sphere Minkowski-added in world units. Bullet's
margins on primitives are not modelled: boxes and cylinders keep theirs inside the fitted size
(the outer surface is the same), and a cone's outer margin (0.04 by default) is left out.

Hulls are cached by the content of the vertex coordinates: moving an object costs a read of its
coordinates and a hash, never a rebuild; editing the mesh (or a modifier) changes the hash.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from .core import (Box, Capsule, Cone, Cylinder, Ellipsoid, Hull, MinkowskiSum, RoundBox,
                   Sphere, Transformed)

KINDS = ("AUTO", "HULL", "SPHERE", "CAPSULE", "BOX", "ROUND_BOX", "CYLINDER", "CONE",
         "ELLIPSOID")

# Rigid-body collision shapes → our kinds. Triangle meshes and compounds have no convex
# equivalent; their convex hull is the closest convex shape (documented, not silent: see
# ``describe``).
RIGID_BODY_KINDS = {"BOX": "BOX", "SPHERE": "SPHERE", "CAPSULE": "CAPSULE",
                    "CYLINDER": "CYLINDER", "CONE": "CONE", "CONVEX_HULL": "HULL",
                    "MESH": "HULL", "COMPOUND": "HULL"}

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


def resolve_kind(obj, kind: str = "AUTO") -> str:
    if kind not in KINDS:
        raise ConversionError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind != "AUTO":
        return kind
    settings = settings_of(obj)
    if settings is not None and settings.kind != "AUTO":
        return settings.kind
    rigid = getattr(obj, "rigid_body", None)
    if rigid is not None:
        return RIGID_BODY_KINDS.get(rigid.collision_shape, "HULL")
    return "HULL"


def _depsgraph(depsgraph):
    if depsgraph is not None:
        return depsgraph
    import bpy
    return bpy.context.evaluated_depsgraph_get()


def evaluated_coordinates(obj, depsgraph) -> np.ndarray:
    """(N, 3) local vertex coordinates of the object's evaluated geometry (modifiers applied)."""
    if obj.type not in GEOMETRY_TYPES:
        raise ConversionError(f"'{obj.name}' is a {obj.type.lower()} object with no geometry")
    evaluated = obj.evaluated_get(depsgraph)
    if evaluated.type == "MESH":
        mesh = evaluated.data      # for meshes the evaluated data already has the modifiers
        coords = np.empty(len(mesh.vertices) * 3)
        mesh.vertices.foreach_get("co", coords)
    else:
        mesh = evaluated.to_mesh()
        try:
            coords = np.empty(len(mesh.vertices) * 3) if mesh is not None else np.empty(0)
            if mesh is not None:
                mesh.vertices.foreach_get("co", coords)
        finally:
            evaluated.to_mesh_clear()
    if coords.size == 0:
        raise ConversionError(f"'{obj.name}' has no vertices to build a shape from")
    return coords.reshape(-1, 3)


def local_half_size(obj, depsgraph) -> np.ndarray:
    """Half the local bounding box of the evaluated object (Blender's rigid-body ``size``)."""
    if obj.type not in GEOMETRY_TYPES:
        raise ConversionError(f"'{obj.name}' is a {obj.type.lower()} object with no geometry")
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
    return 0.5 * (corners.max(axis=0) - corners.min(axis=0))


def hull_of(coords: np.ndarray) -> Hull:
    """The cached hull of these coordinates (built on first sight of this exact content)."""
    global hull_builds
    key = hashlib.blake2b(np.ascontiguousarray(coords).tobytes(), digest_size=16).digest()
    hull = _hulls.get(key)
    if hull is None:
        hull = Hull(coords)
        hull_builds += 1
        _hulls[key] = hull
        if len(_hulls) > HULL_CACHE_SIZE:
            _hulls.popitem(last=False)
    else:
        _hulls.move_to_end(key)
    return hull


def clear_cache() -> None:
    _hulls.clear()


def local_shape(obj, kind: str, depsgraph):
    """The object's shape in its own (unscaled) local frame, for a resolved ``kind``."""
    if kind == "HULL":
        return hull_of(evaluated_coordinates(obj, depsgraph))
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
    settings = settings_of(obj)
    margin = float(settings.margin) if settings is not None else 0.0
    rigid = getattr(obj, "rigid_body", None)
    if kind == "HULL" and rigid is not None and rigid.collision_shape == "CONVEX_HULL" \
            and rigid.use_margin:
        margin += float(rigid.collision_margin)
    return margin


def world_matrix(obj) -> np.ndarray:
    return np.array(obj.matrix_world, dtype=float)


def shape_from_object(obj, kind: str = "AUTO", depsgraph=None):
    """World-space core shape of a Blender object, or of the object of that name (see the module
    docstring for the rules). ``ValueError`` (``ConversionError``) when it cannot be one."""
    obj = resolve_object(obj, "obj")
    depsgraph = _depsgraph(depsgraph)
    resolved = resolve_kind(obj, kind)
    try:
        shape = Transformed(local_shape(obj, resolved, depsgraph), world_matrix(obj))
    except ValueError as problem:
        if isinstance(problem, ConversionError):
            raise
        raise ConversionError(f"'{obj.name}' cannot become a {resolved.lower()}: {problem}") \
            from None
    margin = margin_of(obj, resolved)
    if margin > 0.0:
        shape = MinkowskiSum(shape, Sphere(margin))
    return shape


def describe(obj, kind: str = "AUTO") -> str:
    """One line saying what the object becomes and why (for the panel and reports)."""
    resolved = resolve_kind(obj, kind)
    settings = settings_of(obj)
    if kind != "AUTO" or (settings is not None and settings.kind != "AUTO"):
        why = "its Convex Tools setting"
    elif getattr(obj, "rigid_body", None) is not None:
        shape = obj.rigid_body.collision_shape
        why = f"its rigid body ({shape.lower()})"
        if shape in ("MESH", "COMPOUND"):
            why += ", approximated by its convex hull"
    else:
        why = "its evaluated mesh"
    return f"{resolved.replace('_', ' ').title()} from {why}"
