"""Per-object shape settings and per-scene results, overlay toggles and watch list.

Everything here is saved in the .blend: ``Object.convex_tools`` and ``Scene.convex_tools``.
"""

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty,
                       FloatVectorProperty, IntProperty, PointerProperty, StringProperty)

KIND_ITEMS = [
    ('AUTO', "Auto", "Rigid-body collision shape if any, else the convex hull of the mesh"),
    ('HULL', "Convex Hull", "Convex hull of the evaluated mesh (modifiers applied)"),
    ('SPHERE', "Sphere", "Sphere fitted to the bounds (rigid-body convention)"),
    ('CAPSULE', "Capsule", "Capsule along local Z fitted to the bounds"),
    ('BOX', "Box", "Box of the object's bounds"),
    ('ROUND_BOX', "Round Box", "Box of the bounds with rounded edges"),
    ('CYLINDER', "Cylinder", "Cylinder along local Z fitted to the bounds"),
    ('CONE', "Cone", "Cone along local Z (apex at +Z) fitted to the bounds"),
    ('ELLIPSOID', "Ellipsoid", "Ellipsoid of the bounds"),
]

QUERY_ITEMS = [
    ('DISTANCE', "Distance", "Closest points and distance"),
    ('PENETRATION', "Penetration", "Penetration depth and vector when overlapping"),
    ('MANIFOLD', "Contact", "Contact manifold when overlapping"),
]


def _redraw(self, context):
    from . import overlay
    overlay.tag_redraw()


def _watch_changed(self, context):
    from . import watch
    watch.refresh(context.scene)


class ConvexShapeSettings(bpy.types.PropertyGroup):
    kind: EnumProperty(name="Shape", items=KIND_ITEMS, default='AUTO',
                       description="What convex shape this object is for Convex Tools")
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


class ConvexSceneSettings(bpy.types.PropertyGroup):
    last_result: StringProperty(name="Last Result", default="")
    show_overlays: BoolProperty(name="Show Overlays", default=True, update=_redraw)
    show_labels: BoolProperty(name="Show Labels", default=True, update=_redraw)
    penetration_method: EnumProperty(
        name="Method", default='EPA',
        items=[('EPA', "EPA", "Expanding Polytope Algorithm (exact)"),
               ('MPR', "MPR", "Minkowski Portal Refinement depth heuristic (fast estimate)"),
               ('HYBRID', "Hybrid", "Margin GJK, EPA only when the cores overlap")])
    ray_axis: EnumProperty(
        name="Direction", default='VIEW',
        items=[('VIEW', "View", "Along the view direction"),
               ('X', "X", ""), ('Y', "Y", ""), ('Z', "Z", ""),
               ('NEG_X', "-X", ""), ('NEG_Y', "-Y", ""), ('NEG_Z', "-Z", "")])
    sweep_translation: FloatVectorProperty(name="Translation", size=3, unit='LENGTH',
                                           default=(0.0, 0.0, -2.0))
    watch_enabled: BoolProperty(name="Watch", default=False, update=_watch_changed,
                                description="Keep the watched pairs updated while objects move")
    watch_pairs: CollectionProperty(type=ConvexWatchPair)
    watch_index: IntProperty(default=0)


CLASSES = (ConvexShapeSettings, ConvexWatchPair, ConvexSceneSettings)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.convex_tools = PointerProperty(type=ConvexShapeSettings)
    bpy.types.Scene.convex_tools = PointerProperty(type=ConvexSceneSettings)


def unregister():
    del bpy.types.Scene.convex_tools
    del bpy.types.Object.convex_tools
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
