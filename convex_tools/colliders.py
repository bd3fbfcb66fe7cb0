"""Make Colliders: collision proxies for the selected objects, named so that the engine and the
Level Check both pair them (``docs/engines.md``).

Unreal (``UCX_``/``UBX_``/``USP_``/``UCP_`` + the object's name + ``_NN``) or Godot (the
object's name + ``-convcolonly``, or ``-colonly`` for the parts); each collider is a mesh in the
object's own frame, parented to it, hidden, drawn as wire, and linked to a ``Collision``
collection. Making them again replaces the ones made before for that object.

Shapes:
    HULL     the convex hull of the evaluated mesh, at most ``vertex_limit`` corners
    BOX      the object's local bounding box
    SPHERE   a sphere around the bounds (radius: the largest half size)
    CAPSULE  a capsule along the longest axis of the bounds
    PARTS    one hull per loose part (Unreal: a UCX_ proxy each; Godot: one -colonly triangle
             mesh of their surfaces, so that the parts make one body and do not meet each other)

A hull's corners are the support points of the object's hull along evenly spread directions,
as many directions as keep them within the limit: a hull inside the object's own, touching it
at those corners, and the engine builds the same hull from them.
"""

from __future__ import annotations

import math

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, IntProperty
from mathutils import Matrix

from . import proxies as proxy_rules
from .core import Hull
from .objects import GEOMETRY_TYPES, local_bounds, part_hulls, read_geometry

# The collection colliders are linked to, and the custom property naming each one's object.
COLLECTION_NAME = "Collision"
OWNER_PROPERTY = "convex_collider_of"

# Corners per hull: engines cap convex hulls (Unreal's convex decomposition defaults to 32
# vertices a hull, and its physics takes at most 255).
DEFAULT_VERTEX_LIMIT = 32
MAX_VERTEX_LIMIT = 255
# Halvings of the direction count searched for the most corners within the limit.
DIRECTION_SEARCH_ROUNDS = 24
# Directions tried at most (a hull with this many corners is beyond every engine's cap).
MAX_DIRECTIONS = 1 << 16
# Segments around a sphere's or capsule's axis and rings from pole to equator.
ROUND_SEGMENTS = 12
ROUND_RINGS = 3

ENGINE_ITEMS = [('UNREAL', "Unreal", "UCX_, UBX_, USP_, UCP_ proxies named after the object"),
                ('GODOT', "Godot", "-convcolonly / -colonly bodies named after the object")]
SHAPE_ITEMS = [
    ('HULL', "Convex Hull", "One convex hull of the object (at most Vertex Limit corners)"),
    ('BOX', "Box", "The object's bounding box"),
    ('SPHERE', "Sphere", "A sphere around the object's bounds"),
    ('CAPSULE', "Capsule", "A capsule along the longest axis of the object's bounds"),
    ('PARTS', "Convex Parts", "One convex hull per loose part of the object"),
]
UNREAL_PREFIX = {"HULL": "UCX_", "PARTS": "UCX_", "BOX": "UBX_", "SPHERE": "USP_",
                 "CAPSULE": "UCP_"}


# --- geometry -----------------------------------------------------------------------------------
def fibonacci_directions(n: int) -> np.ndarray:
    """``n`` unit vectors spread evenly over the sphere (a Fibonacci lattice)."""
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    r = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    phi = k * math.pi * (3.0 - math.sqrt(5.0))
    return np.column_stack((r * np.cos(phi), r * np.sin(phi), z))


def limited_corners(points, limit: int) -> np.ndarray:
    """At most ``limit`` corners of the convex hull of ``points`` whose hull stays close to it:
    the hull's support points along the most evenly spread directions that give no more than
    ``limit`` distinct ones. ``ValueError`` for fewer than 4 allowed corners or no points."""
    if int(limit) < 4:
        raise ValueError(f"vertex limit must be at least 4 (a solid), got {limit}")
    corners = np.asarray(Hull(np.asarray(points, dtype=float)).vertices)
    if len(corners) <= limit:
        return corners
    centred = corners - corners.mean(axis=0)

    def chosen(n):
        return np.unique(np.argmax(centred @ fibonacci_directions(n).T, axis=0))

    low, high = 4, min(MAX_DIRECTIONS, 64 * int(limit))
    best = chosen(low)
    for _ in range(DIRECTION_SEARCH_ROUNDS):
        if high - low <= 1:
            break
        middle = (low + high) // 2
        picked = chosen(middle)
        if len(picked) <= limit:
            low, best = middle, picked if len(picked) >= len(best) else best
        else:
            high = middle
    return corners[best]


def hull_mesh(points):
    """(vertices, triangles) of the convex hull of ``points``."""
    hull = Hull(np.asarray(points, dtype=float))
    return np.asarray(hull.vertices), np.asarray(hull.faces)


def box_mesh(centre, half):
    corners = np.array([(x, y, z) for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])
    return hull_mesh(centre + corners * half)


def round_mesh(radius: float, half_straight: float):
    """(vertices, triangles) of a sphere (``half_straight`` 0) or capsule along Z, its poles at
    ±(half_straight + radius) and its equators through ±radius on X and Y."""
    points = [(0.0, 0.0, half_straight + radius), (0.0, 0.0, -half_straight - radius)]
    for ring in range(ROUND_RINGS):
        polar = 0.5 * math.pi * (ring + 1) / ROUND_RINGS     # down to the equator
        for k in range(ROUND_SEGMENTS):
            azimuth = 2.0 * math.pi * k / ROUND_SEGMENTS
            x = radius * math.sin(polar) * math.cos(azimuth)
            y = radius * math.sin(polar) * math.sin(azimuth)
            z = radius * math.cos(polar)
            points.append((x, y, half_straight + z))
            points.append((x, y, -half_straight - z))
    return hull_mesh(np.array(points))


def _axis_frame(axis: int) -> np.ndarray:
    """A rotation taking local Z to the coordinate axis ``axis`` (0, 1 or 2)."""
    frame = np.eye(3)
    if axis == 0:
        frame = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
    elif axis == 1:
        frame = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    return frame


def collider_meshes(obj, shape: str, engine: str, vertex_limit: int, depsgraph):
    """[(vertices, triangles, 4×4 matrix in the object's frame)] of the colliders ``obj`` gets."""
    if shape == "HULL":
        coords = read_geometry(obj, depsgraph)[0]
        if coords.size == 0:
            raise ValueError(f"'{obj.name}' has no vertices to make a collider of")
        return [(*hull_mesh(limited_corners(coords, vertex_limit)), np.eye(4))]
    if shape == "PARTS":
        meshes = [hull_mesh(limited_corners(h.vertices, vertex_limit))
                  for h in part_hulls(obj, depsgraph)]
        if engine == "GODOT":         # one -colonly surface: the parts make one body
            vertices, triangles, offset = [], [], 0
            for v, t in meshes:
                vertices.append(v)
                triangles.append(t + offset)
                offset += len(v)
            return [(np.concatenate(vertices), np.concatenate(triangles), np.eye(4))]
        return [(v, t, np.eye(4)) for v, t in meshes]
    centre, half = local_bounds(obj, depsgraph)
    if shape == "BOX":
        return [(*box_mesh(centre, half), np.eye(4))]
    place = np.eye(4)
    place[:3, 3] = centre
    if shape == "SPHERE":
        return [(*round_mesh(float(half.max()), 0.0), place)]
    if shape == "CAPSULE":
        axis = int(np.argmax(half))
        radius = float(max(half[(axis + 1) % 3], half[(axis + 2) % 3]))
        place[:3, :3] = _axis_frame(axis)
        return [(*round_mesh(radius, max(float(half[axis]) - radius, 0.0)), place)]
    raise ValueError(f"shape must be one of HULL, BOX, SPHERE, CAPSULE, PARTS, got {shape!r}")


# --- names and objects ------------------------------------------------------------------------
def _free(name: str) -> bool:
    return bpy.data.objects.get(name) is None


def collider_names(owner_name: str, shape: str, engine: str, count: int) -> list:
    """Names for ``count`` colliders of the object ``owner_name`` that the engine pairs with it
    and that no other object of the file takes (no Blender ``.001`` ever added)."""
    if engine == "UNREAL":
        prefix = UNREAL_PREFIX[shape]
        names, k = [], 1
        while len(names) < count:
            name = f"{prefix}{owner_name}_{k:02d}"
            # "Crate_01" existing would take "UCX_Crate_01" for itself: skip that number.
            if _free(name) and _free(f"{owner_name}_{k:02d}"):
                names.append(name)
            k += 1
        return names
    suffix = "-colonly" if shape == "PARTS" else "-convcolonly"
    names, k = [], 1
    while len(names) < count:
        name = f"{owner_name}{suffix}" if k == 1 else f"{owner_name}{suffix}_{k:02d}"
        if _free(name):
            names.append(name)
        k += 1
    return names


def collision_collection(scene):
    coll = bpy.data.collections.get(COLLECTION_NAME)
    if coll is None:
        coll = bpy.data.collections.new(COLLECTION_NAME)
    if coll.name not in scene.collection.children and scene.collection.children.get(
            coll.name) is None:
        scene.collection.children.link(coll)
    return coll


def remove_made_colliders(owner) -> int:
    """Delete the colliders this operator made for ``owner`` before (and their meshes)."""
    gone = [o for o in bpy.data.objects if o.get(OWNER_PROPERTY) == owner.name]
    for obj in gone:
        mesh = obj.data
        bpy.data.objects.remove(obj)
        if mesh is not None and mesh.users == 0:
            bpy.data.meshes.remove(mesh)
    return len(gone)


def _unique_owner_name(obj) -> str:
    """``obj``'s name without Blender's ``.NNN``: ``Crate.001`` becomes ``Crate_001`` (or the
    next free ``Crate_001_2``...), which exported proxies can name."""
    base = obj.name.replace(".", "_")
    name, k = base, 2
    while bpy.data.objects.get(name) not in (None, obj):
        name = f"{base}_{k}"
        k += 1
    return name


def make_colliders(obj, shape="HULL", engine="UNREAL", vertex_limit=DEFAULT_VERTEX_LIMIT,
                   depsgraph=None, scene=None, rename=True):
    """Make ``obj``'s colliders; returns (the colliders, the object's old name if renamed)."""
    scene = scene or bpy.context.scene
    depsgraph = depsgraph or bpy.context.evaluated_depsgraph_get()
    if obj.type not in GEOMETRY_TYPES:
        raise ValueError(f"'{obj.name}' is a {obj.type.lower()} object with no geometry")
    meshes = collider_meshes(obj, shape, engine, int(vertex_limit), depsgraph)
    remove_made_colliders(obj)
    renamed = None
    if engine == "UNREAL" and rename and proxy_rules.is_blender_duplicate(obj.name):
        renamed, obj.name = obj.name, _unique_owner_name(obj)
    coll = collision_collection(scene)
    made = []
    for name, (vertices, triangles, place) in zip(
            collider_names(obj.name, shape, engine, len(meshes)), meshes):
        mesh = bpy.data.meshes.new(name)
        mesh.from_pydata([tuple(map(float, v)) for v in vertices], [],
                         [tuple(map(int, t)) for t in triangles])
        mesh.update()
        collider = bpy.data.objects.new(name, mesh)
        coll.objects.link(collider)
        collider.parent = obj
        collider.matrix_parent_inverse.identity()
        collider.matrix_basis = Matrix(place.tolist())
        collider[OWNER_PROPERTY] = obj.name
        collider.display_type = 'WIRE'
        collider.hide_render = True
        made.append(collider)
    view_layer = bpy.context.view_layer
    view_layer.update()          # (syncs the view layer with the new objects' bases)
    for collider in made:
        if view_layer.objects.get(collider.name) is not None:
            collider.hide_set(True)
    proxy_rules.forget()
    return made, renamed


def default_engine(scene) -> str:
    """The scene's engine preset for new colliders: Unreal when it is both."""
    engine = getattr(getattr(scene, "convex_level", None), "engine", "BOTH")
    return "GODOT" if engine == "GODOT" else "UNREAL"


def _targets(context):
    """Selected objects with geometry that are not themselves collision of another object."""
    index = proxy_rules.cached_index()
    return [o for o in context.selected_objects if o.type in GEOMETRY_TYPES
            and not index.is_part(o) and index.visual_of(o) is None
            and o.get(OWNER_PROPERTY) is None]


class OBJECT_OT_convex_make_collision(bpy.types.Operator):
    """Make collision proxies for the selected objects, named for Unreal or Godot, parented,
    hidden, in a "Collision" collection: the Level Check then checks the objects through them"""

    bl_idname = "object.convex_make_collision"
    bl_label = "Make Colliders"
    bl_options = {'REGISTER', 'UNDO'}

    engine: EnumProperty(name="Engine", items=ENGINE_ITEMS, default='UNREAL',
                         description="Whose naming the colliders follow (default: the Level "
                                     "Check's engine, Unreal when it is Both)")
    shape: EnumProperty(name="Shape", items=SHAPE_ITEMS, default='HULL')
    vertex_limit: IntProperty(name="Vertex Limit", min=4, max=MAX_VERTEX_LIMIT,
                              default=DEFAULT_VERTEX_LIMIT,
                              description="Most corners a convex hull may have (engines cap "
                                          "hulls: 32 is Unreal's default for convex pieces)")
    rename: BoolProperty(name="Rename Duplicates", default=True,
                         description="Unreal: rename an object called like a Blender duplicate "
                                     "(Crate.001 to Crate_001), as exported names lose '.001'")

    @classmethod
    def poll(cls, context):
        if context.mode != 'OBJECT':
            cls.poll_message_set("Switch to Object Mode")
            return False
        if not _targets(context):
            cls.poll_message_set("Select mesh-like objects (not their colliders)")
            return False
        return True

    def execute(self, context):
        if not self.properties.is_property_set("engine"):
            self.engine = default_engine(context.scene)
        targets = _targets(context)
        depsgraph = context.evaluated_depsgraph_get()
        made, renamed, failed = 0, [], []
        for obj in targets:
            try:
                colliders, old = make_colliders(obj, self.shape, self.engine, self.vertex_limit,
                                                depsgraph, context.scene, self.rename)
            except ValueError as problem:
                failed.append(str(problem))
                continue
            made += len(colliders)
            if old is not None:
                renamed.append(f"{old} → {obj.name}")
        for problem in failed:
            self.report({'WARNING'}, problem)
        if not made:
            self.report({'ERROR'}, "No colliders made")
            return {'CANCELLED'}
        text = (f"Made {made} {self.engine.title()} collider{'s' * (made != 1)} for "
                f"{len(targets) - len(failed)} object{'s' * (len(targets) - len(failed) != 1)}")
        if renamed:
            text += f"; renamed {', '.join(renamed)}"
        self.report({'INFO'}, text)
        return {'FINISHED'}


class VIEW3D_PT_convex_collision(bpy.types.Panel):
    """Sidebar › Convex › Level Check › Collision: the engine rules and Make Colliders."""

    bl_parent_id = "VIEW3D_PT_convex_level"     # (a sub-panel of the Level Check)
    bl_label = "Collision"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Convex"

    def draw(self, context):
        settings, layout = context.scene.convex_level, self.layout
        col = layout.column()
        col.prop(settings, "engine", expand=True)
        sub = col.row()
        sub.active = settings.engine != 'GODOT'
        sub.prop(settings, "one_hull_per_ucx")
        layout.operator(OBJECT_OT_convex_make_collision.bl_idname, icon='MOD_PHYSICS')
        obj = context.active_object
        if obj is None:
            return
        index = proxy_rules.cached_index()
        box = layout.box()
        for line in status_lines(obj, index):
            box.label(text=line)


def status_lines(obj, index) -> list:
    """What the Level Check does with ``obj`` under ``index``'s rules, for the Sidebar."""
    name = obj.name
    lines = []
    parts = index.parts_of(obj)
    if name in index.excluded:
        lines.append(f"Not checked: {index.excluded[name]}")
    elif parts:
        lines.append(f"Checked through {len(parts)} collider{'s' * (len(parts) != 1)}: "
                     + ", ".join(p.obj.name for p in parts[:3]) + ("…" if len(parts) > 3 else ""))
    elif index.owner_of(obj) is not None:
        lines.append(f"Collision of '{index.owner_of(obj).name}'")
    elif name in index.orphans:
        lines.append(f"Not checked: {index.orphans[name]}")
    elif index.own_mark(obj) is not None:
        lines.append(f"Checked as itself: {index.notes.get(name, index.own_mark(obj).convention)}")
    else:
        lines.append("No colliders: checked through its own shape")
    if name in index.notes and index.owner_of(obj) is not None:
        lines.append(index.notes[name])
    lines += [f"⚠ {n}: {m}" for n, m in index.warnings_of(name)]
    return lines


CLASSES = (OBJECT_OT_convex_make_collision, VIEW3D_PT_convex_collision)
