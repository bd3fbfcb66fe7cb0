"""Operators: one per query, each drawing its result and reporting it in one line.

All are read-only queries (no UNDO: they change no scene data besides the stored result text),
reachable from F3 search and from View3D › Object › Convex Tools. Wrong selections give a
one-line error report, never a traceback.
"""

from __future__ import annotations

import math

import bpy
import numpy as np
from bpy.props import EnumProperty, FloatVectorProperty

from . import core, overlay, result_drawings
from .objects import ConversionError, GEOMETRY_TYPES, describe, shape_from_object

# The last query's core result, exactly as the core returned it (the panel shows it rounded):
# {"query": "distance" | "penetration" | "contact" | "ray_cast" | "sweep", "objects": (names...), "result": DistanceResult | Contact | ...}.
# Scripts and tests read it to use the full-precision numbers behind the one-line report.
last_query: dict = {}


def _remember(query, objects, result):
    last_query.clear()
    last_query.update(query=query, objects=tuple(o.name for o in objects), result=result)


class _Query:
    """Shared plumbing: selection checks, conversion errors as reports, storing the result."""

    bl_options = {'REGISTER'}
    overlay_key = ""

    @classmethod
    def poll(cls, context):
        return context.mode == 'OBJECT'

    def geometry_objects(self, context, minimum):
        selected = [o for o in context.selected_objects if o.type in GEOMETRY_TYPES]
        if len(selected) < minimum:
            noun = "object" if minimum == 1 else "objects"
            self.report({'ERROR'}, f"Select at least {minimum} mesh-like {noun} "
                                   f"({len(selected)} selected)")
            return None
        return selected

    def pair(self, context):
        """(A, B): the selected object that is not active, then the active one."""
        selected = self.geometry_objects(context, 2)
        if selected is None:
            return None
        if len(selected) != 2:
            self.report({'ERROR'}, f"Select exactly two mesh-like objects ({len(selected)} "
                                   "selected)")
            return None
        active = context.active_object if context.active_object in selected else selected[1]
        other = selected[0] if selected[0] is not active else selected[1]
        return other, active

    def pair_shapes(self, context):
        """((A, B), (shape A, shape B)) for a two-object query, or None after reporting why."""
        pair = self.pair(context)
        if pair is None:
            return None
        shapes = tuple(self.shape(o) for o in pair)
        return None if None in shapes else (pair, shapes)

    def shape(self, obj):
        try:
            return shape_from_object(obj)
        except ConversionError as problem:
            self.report({'ERROR'}, str(problem))
            return None

    def finish(self, context, text, drawing=None):
        settings = context.scene.convex_tools
        settings.last_result = text
        if drawing is not None:
            overlay.show(self.overlay_key, drawing)
        self.report({'INFO'}, text)
        return {'FINISHED'}


def _size(*shapes):
    lower = np.min([s.aabb()[0] for s in shapes], axis=0)
    upper = np.max([s.aabb()[1] for s in shapes], axis=0)
    return float(np.linalg.norm(upper - lower))


class OBJECT_OT_convex_distance(_Query, bpy.types.Operator):
    """Distance and closest points between the two selected objects"""

    bl_idname = "object.convex_distance"
    bl_label = "Convex Distance"
    overlay_key = "query"

    def execute(self, context):
        found = self.pair_shapes(context)
        if found is None:
            return {'CANCELLED'}
        pair, (a, b) = found
        res = core.distance(a, b)
        _remember("distance", pair, res)
        text = (f"{pair[0].name} and {pair[1].name} overlap" if res.intersecting else
                f"Distance {pair[0].name} – {pair[1].name}: {res.distance:.6g}")
        return self.finish(context, text, result_drawings.distance_drawing(res))


class OBJECT_OT_convex_penetration(_Query, bpy.types.Operator):
    """Penetration depth and the vector that separates the two selected objects"""

    bl_idname = "object.convex_penetration"
    bl_label = "Convex Penetration"
    overlay_key = "query"

    method: EnumProperty(name="Method", default='SCENE', items=[
        ('SCENE', "Panel Setting", "Use the method chosen in the Convex panel"),
        ('EPA', "EPA", "Expanding Polytope Algorithm (exact)"),
        ('MPR', "MPR", "Minkowski Portal Refinement depth heuristic (fast estimate)"),
        ('HYBRID', "Hybrid", "Margin GJK, EPA only when the cores overlap")])

    def execute(self, context):
        found = self.pair_shapes(context)
        if found is None:
            return {'CANCELLED'}
        pair, (a, b) = found
        method = context.scene.convex_tools.penetration_method if self.method == 'SCENE' \
            else self.method
        contact = core.penetration(a, b, method.lower())
        _remember("penetration", pair, contact)
        if contact is None:
            overlay.clear(self.overlay_key)
            return self.finish(context, f"{pair[0].name} and {pair[1].name} do not overlap")
        text = (f"Penetration {pair[0].name} – {pair[1].name}: depth {contact.depth:.6g} "
                f"({method})")
        return self.finish(context, text, result_drawings.penetration_drawing(contact))


class OBJECT_OT_convex_contact(_Query, bpy.types.Operator):
    """Contact points and normal of the two selected objects where they overlap"""

    bl_idname = "object.convex_contact"
    bl_label = "Convex Contact Manifold"
    overlay_key = "query"

    def execute(self, context):
        found = self.pair_shapes(context)
        if found is None:
            return {'CANCELLED'}
        pair, (a, b) = found
        manifold = core.contact_manifold(a, b)
        _remember("contact", pair, manifold)
        if manifold is None:
            overlay.clear(self.overlay_key)
            return self.finish(context, f"{pair[0].name} and {pair[1].name} do not touch")
        text = (f"Contact {pair[0].name} – {pair[1].name}: {len(manifold.points)} points, "
                f"max depth {float(np.max(manifold.depths)):.6g}")
        drawing = result_drawings.manifold_drawing(manifold, 0.1 * _size(a, b))
        return self.finish(context, text, drawing)


_AXES = {'X': (1, 0, 0), 'Y': (0, 1, 0), 'Z': (0, 0, 1),
         'NEG_X': (-1, 0, 0), 'NEG_Y': (0, -1, 0), 'NEG_Z': (0, 0, -1)}


class OBJECT_OT_convex_ray_cast(_Query, bpy.types.Operator):
    """Cast a ray from the 3D cursor against the selected objects"""

    bl_idname = "object.convex_ray_cast"
    bl_label = "Convex Ray Cast"
    overlay_key = "query"

    axis: EnumProperty(name="Direction", default='SCENE', items=[
        ('SCENE', "Panel Setting", "Use the direction chosen in the Convex panel"),
        ('VIEW', "View", "Along the view direction"),
        ('X', "X", ""), ('Y', "Y", ""), ('Z', "Z", ""),
        ('NEG_X', "-X", ""), ('NEG_Y', "-Y", ""), ('NEG_Z', "-Z", "")])

    def execute(self, context):
        selected = self.geometry_objects(context, 1)
        if selected is None:
            return {'CANCELLED'}
        axis = context.scene.convex_tools.ray_axis if self.axis == 'SCENE' else self.axis
        if axis == 'VIEW':
            rv3d = getattr(context, "region_data", None)
            if rv3d is None:
                self.report({'ERROR'}, "No 3D view to take the direction from: choose an axis")
                return {'CANCELLED'}
            # The view looks down its -Z; row 2 of the view matrix is that axis in world space
            # (read in float64: mathutils' own products are float32).
            direction = -np.array(rv3d.view_matrix, dtype=float)[2, :3]
            direction /= np.linalg.norm(direction)
        else:
            direction = np.array(_AXES[axis], dtype=float)
        origin = np.array(context.scene.cursor.location, dtype=float)
        best, best_obj, shapes = None, None, []
        for obj in selected:
            shape = self.shape(obj)
            if shape is None:
                return {'CANCELLED'}
            shapes.append(shape)
            hit = core.ray_cast(shape, origin, direction)
            if hit is not None and (best is None or hit.t < best.t):
                best, best_obj = hit, obj
        _remember("ray_cast", [best_obj] if best_obj is not None else [], best)
        length = max(_size(*shapes), 1.0)
        drawing = result_drawings.ray_drawing(origin, direction, best, length)
        if best is None:
            return self.finish(context, "The ray misses every selected object", drawing)
        return self.finish(context, f"Ray hits {best_obj.name} at t = {best.t:.6g}", drawing)


class OBJECT_OT_convex_sweep(_Query, bpy.types.Operator):
    """Move the active object along a translation and find where it first touches the others"""

    bl_idname = "object.convex_sweep"
    bl_label = "Convex Sweep"
    overlay_key = "query"

    mode: EnumProperty(name="Motion", default='TRANSLATION', items=[
        ('TRANSLATION', "Translation", "Along the translation set in the Convex panel"),
        ('TARGET', "To Target", "Toward the other selected object's origin (one other object)")])
    translation: FloatVectorProperty(name="Translation", size=3, unit='LENGTH',
                                     default=(math.nan, math.nan, math.nan),
                                     description="Motion of the active object (default: panel)")

    def execute(self, context):
        selected = self.geometry_objects(context, 2)
        if selected is None:
            return {'CANCELLED'}
        mover = context.active_object
        if mover not in selected:
            self.report({'ERROR'}, "Make the object to move the active one")
            return {'CANCELLED'}
        others = [o for o in selected if o is not mover]
        if self.mode == 'TARGET':
            if len(others) != 1:
                self.report({'ERROR'}, "Sweeping to a target needs exactly one other object")
                return {'CANCELLED'}
            translation = np.array(others[0].matrix_world.translation) \
                - np.array(mover.matrix_world.translation)
        elif all(math.isfinite(c) for c in self.translation):
            translation = np.array(self.translation, dtype=float)
        else:
            translation = np.array(context.scene.convex_tools.sweep_translation, dtype=float)
        if not np.any(translation):
            self.report({'ERROR'}, "The translation is zero: nothing to sweep")
            return {'CANCELLED'}
        shape_a = self.shape(mover)
        if shape_a is None:
            return {'CANCELLED'}
        best, best_obj = None, None
        for obj in others:
            shape_b = self.shape(obj)
            if shape_b is None:
                return {'CANCELLED'}
            hit = core.sweep(shape_a, shape_b, translation)
            if hit is not None and (best is None or hit.t < best.t):
                best, best_obj = hit, obj
        _remember("sweep", [mover] + ([best_obj] if best_obj is not None else []), best)
        start = np.array(mover.matrix_world.translation)
        drawing = result_drawings.sweep_drawing(shape_a, start, translation, best)
        if best is None:
            return self.finish(context, f"{mover.name} moves freely", drawing)
        return self.finish(context, f"{mover.name} first touches {best_obj.name} at "
                                    f"t = {best.t:.6g}", drawing)


class OBJECT_OT_convex_convert(_Query, bpy.types.Operator):
    """Show the convex shape each selected object becomes, as a wireframe"""

    bl_idname = "object.convex_convert"
    bl_label = "Show Convex Shapes"
    overlay_key = "shapes"

    def execute(self, context):
        selected = self.geometry_objects(context, 1)
        if selected is None:
            return {'CANCELLED'}
        from .overlay import Drawing
        drawing = Drawing()
        lines = []
        for obj in selected:
            shape = self.shape(obj)
            if shape is None:
                return {'CANCELLED'}
            drawing.wire(result_drawings.shape_wire(shape), "wire")
            lines.append(f"{obj.name}: {describe(obj)}")
        return self.finish(context, "; ".join(lines), drawing)


class OBJECT_OT_convex_clear(bpy.types.Operator):
    """Remove every Convex Tools overlay from the viewport"""

    bl_idname = "object.convex_clear"
    bl_label = "Clear Convex Overlays"
    bl_options = {'REGISTER'}

    def execute(self, context):
        overlay.clear()
        last_query.clear()
        context.scene.convex_tools.last_result = ""
        return {'FINISHED'}


class OBJECT_OT_convex_watch_add(_Query, bpy.types.Operator):
    """Watch the two selected objects: their result updates live as they move"""

    bl_idname = "object.convex_watch_add"
    bl_label = "Watch Pair"
    bl_options = {'REGISTER', 'UNDO'}  # adds to the scene's watch list

    def execute(self, context):
        pair = self.pair(context)
        if pair is None:
            return {'CANCELLED'}
        settings = context.scene.convex_tools
        item = settings.watch_pairs.add()
        item.object_a, item.object_b = pair
        settings.watch_enabled = True
        from . import watch
        watch.refresh(context.scene)
        return self.finish(context, f"Watching {pair[0].name} – {pair[1].name}")


class OBJECT_OT_convex_watch_remove(bpy.types.Operator):
    """Stop watching the selected pair of the watch list"""

    bl_idname = "object.convex_watch_remove"
    bl_label = "Remove Watched Pair"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return len(context.scene.convex_tools.watch_pairs) > 0

    def execute(self, context):
        settings = context.scene.convex_tools
        settings.watch_pairs.remove(min(settings.watch_index, len(settings.watch_pairs) - 1))
        settings.watch_index = max(0, settings.watch_index - 1)
        from . import watch
        watch.refresh(context.scene)
        return {'FINISHED'}


class VIEW3D_MT_convex_tools(bpy.types.Menu):
    bl_label = "Convex Tools"

    def draw(self, context):
        layout = self.layout
        for op in QUERY_OPERATORS:
            layout.operator(op.bl_idname)
        layout.separator()
        layout.operator(OBJECT_OT_convex_watch_add.bl_idname)
        layout.operator(OBJECT_OT_convex_clear.bl_idname)


def _menu(self, context):
    self.layout.menu(VIEW3D_MT_convex_tools.__name__)


QUERY_OPERATORS = (OBJECT_OT_convex_distance, OBJECT_OT_convex_penetration,
                   OBJECT_OT_convex_contact, OBJECT_OT_convex_ray_cast, OBJECT_OT_convex_sweep,
                   OBJECT_OT_convex_convert)
CLASSES = QUERY_OPERATORS + (OBJECT_OT_convex_clear, OBJECT_OT_convex_watch_add,
                             OBJECT_OT_convex_watch_remove, VIEW3D_MT_convex_tools)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.VIEW3D_MT_object.append(_menu)


def unregister():
    bpy.types.VIEW3D_MT_object.remove(_menu)
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
