"""Fixing what the Level Check found: apply a finding's fix, and drop objects onto what is
below them by their real collision shapes.

``object.convex_resolve`` moves the object a stored finding names (``move``) by its
``translation`` (a collection instance's fix moves its instancing empty; a geometry-nodes or
particle instance has none) and takes the finding off the list. ``object.convex_drop_to_support``
sweeps each selected object straight down until it touches the first object below (every object
of the scene the level check would measure, by the same shapes) and moves it there: a "drop to
floor" that knows proxies, compounds and triangle meshes. Both are undoable.
"""

from __future__ import annotations

import bpy
import numpy as np
from bpy.props import IntProperty

from . import level_check
from .core import classify
from .operators import findings_problem, mode_problem, passes
from .core.placement import world_aabbs
from .objects import GEOMETRY_TYPES, shape_from_object


def _finding_at(context, index):
    settings = context.scene.convex_level
    index = settings.active_index if index < 0 else index
    if 0 <= index < len(settings.findings):
        return index, settings.findings[index]
    return index, None


def move_object(obj, translation):
    """Move ``obj`` by a world-space ``translation`` (parented or not)."""
    matrix = obj.matrix_world.copy()
    matrix.translation = matrix.translation + type(matrix.translation)(translation)
    obj.matrix_world = matrix


class OBJECT_OT_convex_resolve(bpy.types.Operator):
    """Apply the fix of the selected Level Check finding: move the object it names by its translation"""

    bl_idname = "object.convex_resolve"
    bl_label = "Apply Fix"
    bl_options = {'REGISTER', 'UNDO'}

    index: IntProperty(name="Finding", default=-1,
                       description="The finding to fix (-1: the selected one in the list)")

    @classmethod
    def poll(cls, context):
        return passes(cls, mode_problem(context, "move objects") or findings_problem(context))

    def execute(self, context):
        index, item = _finding_at(context, self.index)
        if item is None:
            self.report({'ERROR'}, "Select a finding in the Level Check list first")
            return {'CANCELLED'}
        if not item.move:
            why = (f"it is an instance of {item.instanced_by}: move the points that place it"
                   if item.instanced_by else "both objects are static (level geometry)"
                   if item.kind in ("overlap", "too_close") else "nothing can be moved")
            self.report({'ERROR'}, f"No automatic fix for {level_check.pair_text(item)}: {why}")
            return {'CANCELLED'}
        obj = bpy.data.objects.get(item.move)
        if obj is None:
            self.report({'ERROR'}, f"{item.move} no longer exists")
            return {'CANCELLED'}
        translation = tuple(item.translation)
        move_object(obj, translation)
        settings = context.scene.convex_level
        settings.findings.remove(index)
        settings["active_index"] = min(index, len(settings.findings) - 1)
        level_check.show_stored_findings(context.scene)
        length = float(np.linalg.norm(translation))
        self.report({'INFO'}, f"Moved {obj.name} by {level_check.length_text(context, length)} "
                              f"({item.kind} fixed)")
        return {'FINISHED'}


class OBJECT_OT_convex_drop_to_support(bpy.types.Operator):
    """Drop the selected objects straight down until they rest on what is below, by their collision shapes"""

    bl_idname = "object.convex_drop_to_support"
    bl_label = "Drop to Support"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return passes(cls, mode_problem(context, "move objects") or (
            None if any(o.type in GEOMETRY_TYPES for o in context.selected_objects)
            else "Select the objects to drop"))

    def execute(self, context):
        try:
            dropped, nothing = drop_to_support(context, [o for o in context.selected_objects
                                                         if o.type in GEOMETRY_TYPES])
        except ValueError as problem:
            self.report({'ERROR'}, str(problem))
            return {'CANCELLED'}
        parts = [f"{len(dropped)} object{'s' * (len(dropped) != 1)} dropped"]
        if dropped:
            parts[0] += " (" + ", ".join(f"{name} {level_check.length_text(context, d)}"
                                         for name, d in dropped[:4])
            parts[0] += ", ...)" if len(dropped) > 4 else ")"
        if nothing:
            parts.append(f"nothing below {', '.join(nothing[:4])}")
        self.report({'INFO'}, "; ".join(parts))
        return {'FINISHED'}


def drop_to_support(context, objects):
    """Drop ``objects`` (lowest first, so that a stack lands in order) onto what is below them;
    returns ([(name, drop)], [names with nothing below])."""
    run = level_check.LevelRun(None, context=context)
    run.step(1e9, shapes_only=True)
    shapes = list(run.check.shapes) if run.check is not None else []
    names = list(run.names)
    index = {n: k for k, n in enumerate(names)}
    lower, upper = (np.array(v, dtype=float) for v in (run.check.lower, run.check.upper)) \
        if run.check is not None else (np.zeros((0, 3)), np.zeros((0, 3)))
    depsgraph = context.evaluated_depsgraph_get()
    order = sorted(objects, key=lambda o: o.matrix_world.translation.z)
    dropped, nothing = [], []
    for obj in order:
        shape = shape_from_object(obj, depsgraph=depsgraph)
        k = index.get(obj.name)
        if k is None:                   # not in the level's entries (e.g. excluded): add it
            shapes.append(shape)
            names.append(obj.name)
            k = len(shapes) - 1
            box = world_aabbs([shape])
            lower = np.vstack([lower, box[0]])
            upper = np.vstack([upper, box[1]])
            index[obj.name] = k
        shapes[k] = shape
        drop, below = classify.drop_distance(shapes, k, lower, upper)
        if drop is None:
            nothing.append(obj.name)
            continue
        move_object(obj, (0.0, 0.0, -drop))
        lower[k, 2] -= drop
        upper[k, 2] -= drop
        context.view_layer.update()
        shapes[k] = shape_from_object(obj, depsgraph=context.evaluated_depsgraph_get())
        dropped.append((obj.name, drop))
    return dropped, nothing
