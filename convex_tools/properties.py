"""Per-object shape settings; per-scene results, overlay toggles, watch list and Level Check.

Everything here is saved in the .blend: ``Object.convex_tools``, ``Scene.convex_tools`` and
``Scene.convex_level`` (the Level Check's options and its last findings).
"""

import bpy
import numpy as np
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty,
                       FloatVectorProperty, IntProperty, PointerProperty, StringProperty)

from . import level_check
from .core.level import OVERLAP, TOO_CLOSE, TOUCH_TOLERANCE, Finding

KIND_ITEMS = [
    ('AUTO', "Auto", "Collision proxies (UCX_, UBX_, USP_, UCP_, -colonly...) or compound "
                     "rigid-body children if any, else the rigid-body collision shape, else the "
                     "convex hull of the mesh"),
    ('HULL', "Convex Hull", "Convex hull of the evaluated mesh (modifiers applied)"),
    ('SPHERE', "Sphere", "Sphere fitted to the bounds (rigid-body convention)"),
    ('CAPSULE', "Capsule", "Capsule along local Z fitted to the bounds"),
    ('BOX', "Box", "Box of the object's bounds"),
    ('ROUND_BOX', "Round Box", "Box of the bounds with rounded edges"),
    ('CYLINDER', "Cylinder", "Cylinder along local Z fitted to the bounds"),
    ('CONE', "Cone", "Cone along local Z (apex at +Z) fitted to the bounds"),
    ('ELLIPSOID', "Ellipsoid", "Ellipsoid of the bounds"),
    ('CONVEX_PARTS', "Convex Parts", "One convex hull per loose part of the evaluated mesh "
                                     "(modular kit pieces, arches, L-shaped walls)"),
    ('MESH', "Triangle Mesh", "The evaluated triangles as a surface (static concave geometry: "
                              "terrain, room shells); its front faces look into free space"),
]

QUERY_ITEMS = [
    ('DISTANCE', "Distance", "Closest points and distance"),
    ('PENETRATION', "Penetration", "Penetration depth and vector when overlapping"),
    ('MANIFOLD', "Contact", "Contact manifold when overlapping"),
]


def _redraw(self, context):
    from . import overlay
    overlay.tag_redraw()


def _live_changed(self, context):
    from . import live
    if self.live_check:
        live.start(context.scene)
    else:
        live.stop()


def _watch_changed(self, context):
    from . import watch
    watch.refresh(context.scene)


class ConvexShapeSettings(bpy.types.PropertyGroup):
    kind: EnumProperty(name="Shape", items=KIND_ITEMS, default='AUTO',
                       description="What shape this object is for Convex Tools")
    margin: FloatProperty(name="Margin", min=0.0, default=0.0, unit='LENGTH', precision=4,
                          description="Extra radius added around the shape (world units)")
    round_radius: FloatProperty(name="Round Radius", min=0.0, default=0.1, unit='LENGTH',
                                description="Edge radius of the Round Box shape")
    use_clearance: BoolProperty(name="Own Clearance", default=False,
                                description="Give this object its own clearance in level checks")
    clearance: FloatProperty(name="Clearance", min=0.0, default=0.0, unit='LENGTH',
                             description="Free space this object needs around it in level checks")


class ConvexWatchPair(bpy.types.PropertyGroup):
    object_a: PointerProperty(name="A", type=bpy.types.Object, update=_watch_changed)
    object_b: PointerProperty(name="B", type=bpy.types.Object, update=_watch_changed)
    query: EnumProperty(name="Query", items=QUERY_ITEMS, default='DISTANCE',
                        update=_watch_changed)
    result: StringProperty(name="Result", default="")


# The query settings: each is also a property of its operator (shown in Adjust Last Operation),
# which takes the Sidebar's value unless the caller gives one. Shared here so the Sidebar and the
# operators offer the same choices.
PENETRATION_METHODS = [
    ('EPA', "EPA", "Expanding Polytope Algorithm (exact)"),
    ('MPR', "MPR", "Minkowski Portal Refinement depth heuristic (fast estimate)"),
    ('HYBRID', "Hybrid", "Margin GJK, EPA only when the cores overlap")]
RAY_AXES = [
    ('VIEW', "View", "Along the view direction of the 3D viewport"),
    ('X', "X", "Along +X"), ('Y', "Y", "Along +Y"), ('Z', "Z", "Along +Z"),
    ('NEG_X', "-X", "Along -X"), ('NEG_Y', "-Y", "Along -Y"), ('NEG_Z', "-Z", "Along -Z"),
    ('DIRECTION', "Direction", "Along the ray direction set beside it")]
SWEEP_MOTIONS = [
    ('TRANSLATION', "Translation", "Along the sweep translation"),
    ('TARGET', "To Target", "Toward the other selected object's origin (one other object)")]


class ConvexSceneSettings(bpy.types.PropertyGroup):
    last_result: StringProperty(name="Last Result", default="")
    show_overlays: BoolProperty(name="Show Overlays", default=True, update=_redraw)
    show_labels: BoolProperty(name="Show Labels", default=True, update=_redraw)
    penetration_method: EnumProperty(name="Method", default='EPA', items=PENETRATION_METHODS,
                                     description="How Convex Penetration measures the depth")
    ray_axis: EnumProperty(name="Direction", default='VIEW', items=RAY_AXES,
                           description="The direction of Convex Ray Cast, from the 3D cursor")
    ray_direction: FloatVectorProperty(
        name="Ray Direction", size=3, subtype='DIRECTION', default=(0.0, 0.0, -1.0),
        description="Direction of Convex Ray Cast when its direction is 'Direction' "
                    "(any length: the ray's t is a distance)")
    ray_max_distance: FloatProperty(
        name="Max Distance", unit='LENGTH', min=0.0, soft_max=1000.0, default=0.0,
        description="How far from the 3D cursor Convex Ray Cast looks; 0: without limit")
    sweep_mode: EnumProperty(name="Motion", default='TRANSLATION', items=SWEEP_MOTIONS,
                             description="How Convex Sweep moves the active object")
    sweep_translation: FloatVectorProperty(name="Translation", size=3, unit='LENGTH',
                                           default=(0.0, 0.0, -2.0),
                                           description="Motion of the active object in a "
                                                       "Convex Sweep")
    live_check: BoolProperty(
        name="Live", default=False, update=_live_changed,
        description="Keep the Level Check's findings current while you work: after each "
                    "change only the objects that moved or changed are measured again")
    watch_enabled: BoolProperty(name="Watch", default=False, update=_watch_changed,
                                description="Keep the watched pairs updated while objects move")
    watch_pairs: CollectionProperty(type=ConvexWatchPair)
    watch_index: IntProperty(default=0)


# --- Level Check ------------------------------------------------------------------------------
FINDING_KINDS = [(OVERLAP, "Overlap", "The two objects overlap"),
                 ("sunk", "Sunk", "The object is sunk into what it stands on deeper than "
                                  "its allowed embed"),
                 (TOO_CLOSE, "Too Close", "The two objects are closer than their clearance"),
                 ("floating", "Floating", "The object must rest on something but nothing "
                                          "supports it"),
                 ("unreachable", "Unreachable", "A standable area the player cannot reach"),
                 ("narrow", "Narrow", "A passage narrower than the player"),
                 ("low_headroom", "Low Headroom", "A passage lower than the player"),
                 ("step", "Step", "A step higher than the player can climb")]


class ConvexLevelFinding(bpy.types.PropertyGroup):
    """One finding of the last Level Check, as shown in the Sidebar list."""

    object_a: StringProperty(name="Object A")
    object_b: StringProperty(name="Object B")
    part_a: StringProperty(name="Part A", description="The part of A involved (a compound's "
                                                      "part or a mesh's triangle), if any")
    part_b: StringProperty(name="Part B", description="The part of B involved, if any")
    kind: EnumProperty(name="Kind", items=FINDING_KINDS)
    distance: FloatProperty(name="Distance", unit='LENGTH',
                            description="Gap between the objects; negative: overlap depth")
    clearance: FloatProperty(name="Clearance", unit='LENGTH')
    point_a: FloatVectorProperty(name="Point A", size=3, subtype='XYZ', unit='LENGTH')
    point_b: FloatVectorProperty(name="Point B", size=3, subtype='XYZ', unit='LENGTH')
    has_distance: BoolProperty(name="Has Distance", default=True,
                               description="False for a floating object with nothing below")
    move: StringProperty(name="Move", description="The object the fix moves (empty: none)")
    translation: FloatVectorProperty(name="Translation", size=3, subtype='TRANSLATION',
                                     unit='LENGTH', description="The fix: how far to move it")
    rule: StringProperty(name="Rule", description="What decided the finding")
    severity: EnumProperty(name="Severity", default='error',
                           items=[('error', "Error", "Fails the check"),
                                  ('warning', "Warning", "Reported, does not fail the check")])
    instanced_by: StringProperty(name="Instanced By",
                                 description="The object whose instances the finding is about")

    def to_finding(self) -> Finding:
        extra = {"instanced_by": self.instanced_by} if self.instanced_by else None
        return Finding(self.object_a, self.object_b or None, self.kind,
                       self.distance if self.has_distance else None,
                       np.array(self.point_a), np.array(self.point_b), self.clearance,
                       self.part_a or None, self.part_b or None, self.move or None,
                       np.array(self.translation) if self.move else None, None,
                       self.rule or None, self.severity, extra=extra)


def _on_active_finding(self, context):
    if 0 <= self.active_index < len(self.findings):
        level_check.select_pair(context, self.findings[self.active_index], frame=True)


def _on_show_labels(self, context):
    level_check.show_stored_findings(context.scene)


class ConvexLevelSettings(bpy.types.PropertyGroup):
    """Options and results of the Level Check (Scene > convex_level)."""

    scope: EnumProperty(
        name="Check", default='SCENE',
        items=[('SELECTED', "Selected", "Check the selected objects against each other"),
               ('COLLECTION', "Collection", "Check the objects of one collection"),
               ('SCENE', "Scene", "Check every object of the scene")])
    collection: PointerProperty(name="Collection", type=bpy.types.Collection,
                                description="Collection to check")
    clearance: FloatProperty(
        name="Clearance", unit='LENGTH', min=0.0, soft_max=10.0, default=0.0, precision=3,
        description="Free space every object needs around it unless it has its own clearance "
                    f"(custom property {level_check.CLEARANCE_PROPERTY} or its Own Clearance "
                    "setting). 0: objects without their own clearance are checked for overlaps "
                    "only")
    touch_tolerance: FloatProperty(
        name="Touch Tolerance", unit='LENGTH', min=0.0, soft_max=0.01, default=TOUCH_TOLERANCE,
        precision=5, description="Overlaps no deeper than this count as touching")
    ignore_collection: PointerProperty(
        name="Ignore", type=bpy.types.Collection,
        description="Collection whose objects are left out (e.g. floors meant to be touched)")
    ignore_pairs: StringProperty(
        name="Ignore Pairs",
        description="Pairs of name patterns not checked against each other, separated by "
                    "commas, e.g. 'Lamp*:Pillar*, Door*:Frame*'")
    rules_file: StringProperty(
        name="Rules File", subtype='FILE_PATH',
        description="Level rules (TOML: groups, pairs, clearances, support and floating); the "
                    "command line uses it too when --rules is not given")
    rules_text: PointerProperty(
        name="Rules Text", type=bpy.types.Text,
        description="Level rules kept in the file as a Text datablock (used when no rules "
                    "file is set)")
    findings: CollectionProperty(type=ConvexLevelFinding)
    active_index: IntProperty(name="Finding", default=-1, update=_on_active_finding)
    summary: StringProperty(name="Summary")
    complete: BoolProperty(
        name="Complete", default=True,
        description="Whether the stored findings come from a check that ran to the end "
                    "(a cancelled check keeps what it found so far)")
    show_labels: BoolProperty(name="Labels", default=True, update=_on_show_labels,
                              description="Label each finding in the viewport")
    # Collision naming rules (proxies.py, docs/engines.md).
    engine: EnumProperty(
        name="Engine", default='BOTH',
        items=[('UNREAL', "Unreal", "Unreal Engine 5's collision prefixes (UCX_, UBX_, USP_, UCP_)"),
               ('GODOT', "Godot", "Godot 4.3+'s import suffixes (-colonly, -col, -noimp, ...)"),
               ('BOTH', "Both", "Both engines' rules; a name read by both is read the Unreal way "
                                "and warned about")],
        description="Which engine's collision naming rules the Level Check reads")
    one_hull_per_ucx: BoolProperty(
        name="One Convex Hull Per UCX", default=True,
        description="Unreal's import option (on by default in Unreal): each UCX_ proxy is one "
                    "convex hull; off: one hull per loose part of it")


# Where the property groups hang: (type, attribute, group). Deleted in reverse on detach.
_POINTERS = ((bpy.types.Object, "convex_tools", ConvexShapeSettings),
             (bpy.types.Scene, "convex_tools", ConvexSceneSettings),
             (bpy.types.Scene, "convex_level", ConvexLevelSettings))


def attach():
    """Hang the property groups on Object and Scene (their classes are registered already)."""
    for owner, name, group in _POINTERS:
        setattr(owner, name, PointerProperty(type=group))


def detach():
    for owner, name, _ in reversed(_POINTERS):
        if hasattr(owner, name):
            delattr(owner, name)
