"""Operators: one per query, each drawing its result and reporting it in one line; the Level
Check and what acts on its findings.

Every operator behaves like Blender's own: its ``poll`` says, in the tooltip of its greyed-out
button (``poll_message_set``), what to select or which mode to leave; its settings are operator
properties shown in Adjust Last Operation (the redo panel), which default to the Sidebar's
settings; and it reports one line. Reachable from F3 search and from View3D › Object › Convex
Tools.

The queries change no data besides the stored result text: Distance, Contact Manifold and Show
Convex Shapes add nothing to the undo history. Penetration, Ray Cast and Sweep have settings to
adjust after the fact, which Blender allows only for operators that push an undo step (see
``REDO_OPTIONS``). Scripts read the last query's full-precision result with
``api.last_result()``.

"Check Level" (``object.convex_check_level``) checks the selection, a collection or the whole
scene (Sidebar > Convex > Level Check). In the viewport it runs as a modal operator: the work
goes in slices on a timer, the progress bar moves, and Esc cancels while keeping what was found.
Its findings are stored in the scene, drawn and listed (``level_check.store_findings``); clicking
a row selects and frames the pair. Scripts and the command line use ``level_check.check_scene`` /
``cli`` instead.
"""

from __future__ import annotations

import hashlib
import math
import os
import re

import bpy
import numpy as np
from bpy.props import (BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty,
                       IntProperty, StringProperty)

from . import core, files, level_check, overlay, result_drawings
from .objects import ConversionError, GEOMETRY_TYPES, describe, shape_from_object
from .properties import PENETRATION_METHODS, RAY_AXES, SWEEP_MOTIONS
from .proxies import ProxyIndex, options_for

# Adjust Last Operation (the redo panel) offers only operators that are registered *and* push an
# undo step: Blender picks the operator to redo with WM_operator_last_redo, which skips those
# without OPTYPE_UNDO (source/blender/windowmanager/intern/wm_operators.cc), and a redo first
# undoes the operator's own step (ED_undo_operator_repeat). The API documents the flag as "Push
# an undo event (needed for operator redo)" (docs.blender.org/api/current/
# bpy_types_enum_items/operator_type_flag_items.html). So the queries with settings take UNDO,
# though they change nothing but the stored result text; the others stay out of the history.
REDO_OPTIONS = {'REGISTER', 'UNDO'}

# The last query's core result, exactly as the core returned it (the panel shows it rounded):
# {"query": "distance" | "penetration" | "contact" | "ray_cast" | "sweep", "objects": (names...),
#  "result": DistanceResult | Contact | ..., "settings": {what the query used}}.
# Scripts read it through ``api.last_result()``.
last_query: dict = {}


def _remember(query, objects, result, **settings):
    last_query.clear()
    last_query.update(query=query, objects=tuple(o.name for o in objects), result=result,
                      settings=settings)


# --- What each operator needs: the sentences of its greyed-out button -------------------------

def mode_problem(context, purpose: str) -> str | None:
    """Why ``purpose`` cannot be done in the current mode, or None in Object Mode.

    The operators measure and select whole objects; in Edit Mode the mesh being edited is not
    yet the object's mesh, so they wait until one leaves it."""
    mode = context.mode
    if mode == 'OBJECT':
        return None
    if mode.startswith('EDIT'):
        return f"Leave Edit Mode (Tab) to {purpose}"
    item = bpy.types.Context.bl_rna.properties["mode"].enum_items.get(mode)
    return f"Switch from {item.name if item else mode} Mode to Object Mode to {purpose}"


def selected_geometry(context, enough=None):
    """(the selected mesh-like objects, the other selected objects), in selection order;
    with ``enough``, the walk stops at ``enough`` mesh-like objects (a poll runs on every
    redraw: with a whole level selected it looks at a few objects, not all)."""
    geometry, others = [], []
    for obj in getattr(context, "selected_objects", None) or ():
        (geometry if obj.type in GEOMETRY_TYPES else others).append(obj)
        if enough is not None and len(geometry) >= enough:
            break
    return geometry, others


# How many names of selected non-geometry objects a message lists before "…".
NAMED_OTHERS = 2
# Mesh-like objects a poll counts before it says "more than" (see ``selected_geometry``).
COUNTED = 100


def _count_text(geometry, others) -> str:
    """"(1 selected; Empty has no geometry)": what the selection holds, for a message."""
    text = f"{len(geometry)} selected" if geometry else "none selected"
    if len(geometry) >= COUNTED:
        text = f"{COUNTED - 1}+ selected"
    if others:
        names = ", ".join(o.name for o in others[:NAMED_OTHERS])
        names += ", …" if len(others) > NAMED_OTHERS else ""
        text += f"; {names} {'has' if len(others) == 1 else 'have'} no geometry"
    return f"({text})"


def pair_problem(context) -> str | None:
    """Why the selection is not a pair of mesh-like objects, or None."""
    geometry, others = selected_geometry(context, COUNTED)
    if len(geometry) == 2:
        return None
    return f"Select exactly two mesh-like objects {_count_text(geometry, others)}"


def some_problem(context) -> str | None:
    """Why the selection holds no mesh-like object, or None."""
    geometry, others = selected_geometry(context, 1)
    if geometry:
        return None
    return f"Select at least one mesh-like object {_count_text(geometry, others)}"


def mover_problem(context) -> str | None:
    """Why the selection is not an active object to move and others to hit, or None."""
    geometry, others = selected_geometry(context, 2)
    if len(geometry) < 2:
        return ("Select the objects to sweep against, then the one to move (two or more "
                f"mesh-like objects) {_count_text(geometry, others)}")
    active = context.active_object
    if active is None or active.type not in GEOMETRY_TYPES or (
            active not in geometry and active not in context.selected_objects):
        return "Make the object to move the active one (Shift-click it)"
    return None


def passes(operator_class, problem: str | None) -> bool:
    """A poll's answer: True without a problem; else False, with the problem as the message of
    the greyed-out button."""
    if problem:
        operator_class.poll_message_set(problem)
        return False
    return True


class _Query:
    """Shared plumbing: the poll on mode and selection, the settings that default to the
    Sidebar's, conversion errors as reports, storing the result."""

    bl_options = {'REGISTER'}
    overlay_key = ""
    selection_problem = staticmethod(pair_problem)   # what the selection must be
    # Operator property → the Sidebar setting (Scene.convex_tools) it takes unless given.
    scene_defaults: dict = {}
    # Operator property → (another property, the value for which it applies); greyed otherwise.
    applies_only: dict = {}
    _proxies = None      # the file's ProxyIndex, made on the first shape of a run

    @classmethod
    def poll(cls, context):
        return passes(cls, mode_problem(context, "measure objects")
                      or cls.selection_problem(context))

    def draw(self, context):
        """Adjust Last Operation: the settings, each greyed out where it does not apply."""
        layout = self.layout
        layout.use_property_split = True
        for prop in self.scene_defaults:
            row = layout.row()
            if prop in self.applies_only:
                other, value = self.applies_only[prop]
                row.active = getattr(self, other) == value
            row.prop(self, prop)

    def take_scene_defaults(self, context):
        """Fill each setting the caller did not give from the Sidebar. Once filled it counts as
        given, so Adjust Last Operation shows the value used and a redo keeps what is set there;
        the properties are SKIP_SAVE, so the next run starts from the Sidebar again."""
        settings = context.scene.convex_tools
        for prop, setting in self.scene_defaults.items():
            if not self.properties.is_property_set(prop):
                setattr(self, prop, getattr(settings, setting))

    def pair(self, context):
        """(A, B): the selected object that is not active, then the active one."""
        selected = selected_geometry(context)[0]
        active = context.active_object if context.active_object in selected else selected[1]
        other = selected[0] if selected[0] is not active else selected[1]
        return other, active

    def pair_shapes(self, context):
        """((A, B), (shape A, shape B)) for a two-object query, or None after reporting why."""
        pair = self.pair(context)
        shapes = tuple(self.shape(o) for o in pair)
        return None if None in shapes else (pair, shapes)

    def shape(self, obj):
        # One index of proxies per run of the operator (a scan of every object's name).
        if getattr(self, "_proxies", None) is None:
            self._proxies = ProxyIndex(**options_for(bpy.context.scene))
        try:
            return shape_from_object(obj, proxies=self._proxies)
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


def _names(objs, shapes, result):
    """The objects' names, each with the part the result names on it: "Arch (part 2)"."""
    parts = (getattr(result, "part_a", None), getattr(result, "part_b", None))
    return tuple(obj.name + result_drawings.part_text(shape, part)
                 for obj, shape, part in zip(objs, shapes, parts))


def _add(drawing, more):
    drawing.lines += more.lines
    drawing.points += more.points
    drawing.labels += more.labels
    return drawing


def _with_parts(drawing, shapes, result):
    """``drawing`` with the outlines of the parts that realised ``result``."""
    return _add(drawing, result_drawings.parts_drawing(
        shapes[0], getattr(result, "part_a", None), shapes[1], getattr(result, "part_b", None)))


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
        names = _names(pair, (a, b), res)
        text = (f"{names[0]} and {names[1]} overlap" if res.intersecting else
                f"Distance {names[0]} – {names[1]}: {res.distance:.6g}")
        return self.finish(context, text, _with_parts(result_drawings.distance_drawing(res),
                                                      (a, b), res))


class OBJECT_OT_convex_penetration(_Query, bpy.types.Operator):
    """Penetration depth and the vector that separates the two selected objects"""

    bl_idname = "object.convex_penetration"
    bl_label = "Convex Penetration"
    bl_options = REDO_OPTIONS
    overlay_key = "query"
    scene_defaults = {"method": "penetration_method"}

    method: EnumProperty(name="Method", items=PENETRATION_METHODS, options={'SKIP_SAVE'},
                         description="How the depth is measured (default: the Sidebar's)")

    def execute(self, context):
        self.take_scene_defaults(context)
        found = self.pair_shapes(context)
        if found is None:
            return {'CANCELLED'}
        pair, (a, b) = found
        try:
            contact = core.penetration(a, b, self.method.lower())
        except ValueError as problem:   # e.g. two triangle meshes: neither has an inside
            self.report({'ERROR'}, str(problem))
            return {'CANCELLED'}
        _remember("penetration", pair, contact, method=self.method)
        if contact is None:
            overlay.clear(self.overlay_key)
            return self.finish(context, f"{pair[0].name} and {pair[1].name} do not overlap")
        names = _names(pair, (a, b), contact)
        text = f"Penetration {names[0]} – {names[1]}: depth {contact.depth:.6g} ({self.method})"
        return self.finish(context, text, _with_parts(
            result_drawings.penetration_drawing(contact), (a, b), contact))


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
        try:
            manifold = core.contact_manifold(a, b)
        except ValueError as problem:
            self.report({'ERROR'}, str(problem))
            return {'CANCELLED'}
        _remember("contact", pair, manifold)
        if manifold is None:
            overlay.clear(self.overlay_key)
            return self.finish(context, f"{pair[0].name} and {pair[1].name} do not touch")
        names = _names(pair, (a, b), manifold)
        text = (f"Contact {names[0]} – {names[1]}: {len(manifold.points)} points, "
                f"max depth {float(np.max(manifold.depths)):.6g}")
        drawing = result_drawings.manifold_drawing(manifold, 0.1 * _size(a, b))
        for part_a, part_b in (getattr(manifold, "parts", None) or ()):
            _add(drawing, result_drawings.parts_drawing(a, part_a, b, part_b))
        return self.finish(context, text, _with_parts(drawing, (a, b), manifold))


_AXES = {'X': (1, 0, 0), 'Y': (0, 1, 0), 'Z': (0, 0, 1),
         'NEG_X': (-1, 0, 0), 'NEG_Y': (0, -1, 0), 'NEG_Z': (0, 0, -1)}


class OBJECT_OT_convex_ray_cast(_Query, bpy.types.Operator):
    """Cast a ray from the 3D cursor against the selected objects"""

    bl_idname = "object.convex_ray_cast"
    bl_label = "Convex Ray Cast"
    bl_options = REDO_OPTIONS
    overlay_key = "query"
    selection_problem = staticmethod(some_problem)
    scene_defaults = {"axis": "ray_axis", "direction": "ray_direction",
                      "max_distance": "ray_max_distance"}
    applies_only = {"direction": ("axis", 'DIRECTION')}

    axis: EnumProperty(name="Direction", items=RAY_AXES, options={'SKIP_SAVE'},
                       description="Where the ray goes from the 3D cursor (default: the "
                                   "Sidebar's)")
    direction: FloatVectorProperty(name="Ray Direction", size=3, subtype='DIRECTION',
                                   options={'SKIP_SAVE'},
                                   description="The ray's direction when Direction is "
                                               "'Direction' (any length)")
    max_distance: FloatProperty(name="Max Distance", unit='LENGTH', min=0.0, soft_max=1000.0,
                                options={'SKIP_SAVE'},
                                description="How far from the 3D cursor to look; 0: without "
                                            "limit")

    def ray_direction(self, context):
        """The unit direction of the ray, or None after reporting why there is none."""
        if self.axis == 'VIEW':
            rv3d = getattr(context, "region_data", None)
            if rv3d is None:
                self.report({'ERROR'}, "No 3D view to take the direction from: choose an axis")
                return None
            # The view looks down its -Z; row 2 of the view matrix is that axis in world space
            # (read in float64: mathutils' own products are float32).
            direction = -np.array(rv3d.view_matrix, dtype=float)[2, :3]
        elif self.axis == 'DIRECTION':
            direction = np.array(self.direction, dtype=float)
            if not np.any(direction):
                self.report({'ERROR'}, "The ray direction is zero: give it a length")
                return None
        else:
            return np.array(_AXES[self.axis], dtype=float)
        # Unit length, so that the hit's t is the distance from the cursor.
        return direction / np.linalg.norm(direction)

    def execute(self, context):
        self.take_scene_defaults(context)
        selected = selected_geometry(context)[0]
        direction = self.ray_direction(context)
        if direction is None:
            return {'CANCELLED'}
        origin = np.array(context.scene.cursor.location, dtype=float)
        max_t = self.max_distance if self.max_distance > 0.0 else math.inf
        best, best_obj, best_shape, shapes = None, None, None, []
        for obj in selected:
            shape = self.shape(obj)
            if shape is None:
                return {'CANCELLED'}
            shapes.append(shape)
            hit = core.ray_cast(shape, origin, direction, max_t)
            if hit is not None and (best is None or hit.t < best.t):
                best, best_obj, best_shape = hit, obj, shape
        _remember("ray_cast", [best_obj] if best_obj is not None else [], best, origin=origin,
                  direction=direction, max_distance=max_t)
        length = min(max(_size(*shapes), 1.0), max_t)
        drawing = result_drawings.ray_drawing(origin, direction, best, length)
        if best is None:
            within = f" within {max_t:.6g}" if math.isfinite(max_t) else ""
            return self.finish(context, f"The ray misses every selected object{within}",
                               drawing)
        part = getattr(best, "part", None)
        _add(drawing, result_drawings.parts_drawing(best_shape, part))
        where = result_drawings.part_text(best_shape, part)
        return self.finish(context, f"Ray hits {best_obj.name}{where} at t = {best.t:.6g}",
                           drawing)


def _origin(context, obj):
    """``obj``'s origin in world space, as evaluated now. (Right after an undo, as when Adjust
    Last Operation redoes an operator, the objects' own matrices are not yet restored.)"""
    evaluated = obj.evaluated_get(context.evaluated_depsgraph_get())
    return np.array(evaluated.matrix_world.translation, dtype=float)


class OBJECT_OT_convex_sweep(_Query, bpy.types.Operator):
    """Move the active object along a translation and find where it first touches the others"""

    bl_idname = "object.convex_sweep"
    bl_label = "Convex Sweep"
    bl_options = REDO_OPTIONS
    overlay_key = "query"
    selection_problem = staticmethod(mover_problem)
    scene_defaults = {"mode": "sweep_mode", "translation": "sweep_translation"}
    applies_only = {"translation": ("mode", 'TRANSLATION')}

    mode: EnumProperty(name="Motion", items=SWEEP_MOTIONS, options={'SKIP_SAVE'},
                       description="How the active object moves (default: the Sidebar's)")
    translation: FloatVectorProperty(name="Translation", size=3, unit='LENGTH',
                                     options={'SKIP_SAVE'},
                                     description="Motion of the active object (default: the "
                                                 "Sidebar's)")

    def execute(self, context):
        self.take_scene_defaults(context)
        mover = context.active_object
        others = [o for o in selected_geometry(context)[0] if o is not mover]
        if self.mode == 'TARGET':
            if len(others) != 1:
                self.report({'ERROR'}, "Sweeping to a target needs exactly one other object "
                                       f"({len(others)} selected)")
                return {'CANCELLED'}
            translation = _origin(context, others[0]) - _origin(context, mover)
        else:
            translation = np.array(self.translation, dtype=float)
        if not np.any(translation):
            self.report({'ERROR'}, "The translation is zero: nothing to sweep")
            return {'CANCELLED'}
        shape_a = self.shape(mover)
        if shape_a is None:
            return {'CANCELLED'}
        best, best_obj, best_shape = None, None, None
        for obj in others:
            shape_b = self.shape(obj)
            if shape_b is None:
                return {'CANCELLED'}
            hit = core.sweep(shape_a, shape_b, translation)
            if hit is not None and (best is None or hit.t < best.t):
                best, best_obj, best_shape = hit, obj, shape_b
        _remember("sweep", [mover] + ([best_obj] if best_obj is not None else []), best,
                  translation=translation)
        start = _origin(context, mover)
        drawing = result_drawings.sweep_drawing(shape_a, start, translation, best)
        if best is None:
            return self.finish(context, f"{mover.name} moves freely", drawing)
        # The mover's part is drawn where it touches: moved by the time of impact.
        moved = result_drawings.moved(shape_a, best.t * translation)
        _add(drawing, result_drawings.parts_drawing(moved, getattr(best, "part_a", None),
                                                    best_shape, getattr(best, "part_b", None)))
        names = _names((mover, best_obj), (shape_a, best_shape), best)
        return self.finish(context, f"{names[0]} first touches {names[1]} at "
                                    f"t = {best.t:.6g}", drawing)


class OBJECT_OT_convex_convert(_Query, bpy.types.Operator):
    """Show the shape each selected object becomes (hull, primitive, convex parts, triangle mesh or its proxies), as a wireframe"""

    bl_idname = "object.convex_convert"
    bl_label = "Show Convex Shapes"
    overlay_key = "shapes"
    selection_problem = staticmethod(some_problem)

    def execute(self, context):
        from .overlay import Drawing
        drawing = Drawing()
        lines = []
        for obj in selected_geometry(context)[0]:
            shape = self.shape(obj)
            if shape is None:
                return {'CANCELLED'}
            drawing.wire(result_drawings.shape_wire(shape), "wire")
            lines.append(f"{obj.name}: {describe(obj, proxies=self._proxies)}")
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
        self.report({'INFO'}, "Cleared the Convex Tools overlays and the last result")
        return {'FINISHED'}


class OBJECT_OT_convex_watch_add(_Query, bpy.types.Operator):
    """Watch the two selected objects: their result updates live as they move"""

    bl_idname = "object.convex_watch_add"
    bl_label = "Watch Pair"
    bl_options = {'REGISTER', 'UNDO'}  # adds to the scene's watch list

    def execute(self, context):
        pair = self.pair(context)
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
        return passes(cls, None if len(context.scene.convex_tools.watch_pairs) else
                      "The watch list is empty: add a pair with Watch Pair")

    def execute(self, context):
        settings = context.scene.convex_tools
        index = min(max(settings.watch_index, 0), len(settings.watch_pairs) - 1)
        item = settings.watch_pairs[index]
        names = [o.name if o is not None else "(deleted)" for o in (item.object_a,
                                                                    item.object_b)]
        settings.watch_pairs.remove(index)
        settings.watch_index = max(0, index - 1)
        from . import watch
        watch.refresh(context.scene)
        self.report({'INFO'}, f"Stopped watching {names[0]} – {names[1]}")
        return {'FINISHED'}


QUERY_OPERATORS = (OBJECT_OT_convex_distance, OBJECT_OT_convex_penetration,
                   OBJECT_OT_convex_contact, OBJECT_OT_convex_ray_cast, OBJECT_OT_convex_sweep,
                   OBJECT_OT_convex_convert)

# --- Level Check -----------------------------------------------------------------------------
# Seconds of work per timer tick of the modal check: the viewport stays responsive.
SLICE_SECONDS = 0.05
TIMER_INTERVAL = 0.01


def _level_settings(context):
    return context.scene.convex_level


def scope_problem(context) -> str | None:
    """Why the Level Check panel's scope has nothing to check, or None."""
    settings = _level_settings(context)
    if settings.scope == 'COLLECTION' and settings.collection is None:
        return "Choose the collection to check"
    if settings.scope == 'SELECTED' and len(context.selected_objects) < 2:
        return "Select at least two objects, or check the collection or the scene"
    return None


def level_run(context):
    """A ``level_check.LevelRun`` with the options of the Level Check panel."""
    settings = _level_settings(context)
    objects = None
    collection = None
    if settings.scope == 'SELECTED':
        # (a timer's context has no selected_objects: the live check starts from one)
        selected = getattr(context, "selected_objects", None)
        objects = list(selected if selected is not None else context.view_layer.objects.selected)
    elif settings.scope == 'COLLECTION':
        collection = settings.collection
    ignore = [settings.ignore_collection] if settings.ignore_collection else []
    pairs = [p.strip() for p in settings.ignore_pairs.split(",") if p.strip()]
    # With a rules file (or text) the rules say the clearance and the touch tolerance.
    ruled = bool(settings.rules_file) or settings.rules_text is not None
    return level_check.LevelRun(objects, None if ruled else settings.clearance,
                                collection=collection, ignore=ignore, ignore_pairs=pairs,
                                touch_tolerance=None if ruled else settings.touch_tolerance,
                                context=context)


class OBJECT_OT_convex_check_level(bpy.types.Operator):
    """Find objects that overlap or are closer than the clearance (the selection, a collection or the scene); Esc cancels"""

    bl_idname = "object.convex_check_level"
    bl_label = "Check Level"
    bl_options = {'REGISTER'}

    _timer = None
    _run = None

    @classmethod
    def poll(cls, context):
        return passes(cls, mode_problem(context, "check the level") or scope_problem(context))

    def execute(self, context):
        # Scripts and background mode: run to the end, printing progress when headless.
        try:
            run = level_run(context)
        except ValueError as problem:
            self.report({'ERROR'}, str(problem))
            return {'CANCELLED'}
        wm = context.window_manager
        wm.progress_begin(0.0, 1.0)
        last = [-1]

        def progress(fraction, phase):
            wm.progress_update(fraction)
            if bpy.app.background and int(fraction * 10) != last[0]:
                last[0] = int(fraction * 10)
                print(f"Check Level: {100 * fraction:.0f}% {phase}")

        try:
            findings = run.run(progress)
        except ValueError as problem:
            self.report({'ERROR'}, str(problem))
            return {'CANCELLED'}
        finally:
            wm.progress_end()
        return self._finish(context, run, findings)

    def invoke(self, context, event):
        if context.window is None or bpy.app.background:  # no event loop to drive a timer
            return self.execute(context)
        try:
            self._run = level_run(context)
        except ValueError as problem:
            self.report({'ERROR'}, str(problem))
            return {'CANCELLED'}
        wm = context.window_manager
        wm.progress_begin(0.0, 1.0)
        self._timer = wm.event_timer_add(TIMER_INTERVAL, window=context.window)
        wm.modal_handler_add(self)
        context.workspace.status_text_set("Checking the level... (Esc to cancel)")
        return {'RUNNING_MODAL'}

    def modal(self, context, event):
        if event.type == 'ESC':
            findings = self._run.findings
            self._stop(context)
            self._finish(context, self._run, findings, cancelled=True)
            return {'CANCELLED'}
        if event.type != 'TIMER':
            return {'PASS_THROUGH'}
        try:
            done = self._run.step(SLICE_SECONDS)
        except ValueError as problem:
            self._stop(context)
            self.report({'ERROR'}, str(problem))
            return {'CANCELLED'}
        context.window_manager.progress_update(self._run.fraction)
        context.workspace.status_text_set(
            f"Checking the level: {100 * self._run.fraction:.0f}%, {self._run.phase} "
            f"(Esc to cancel)")
        if not done:
            return {'RUNNING_MODAL'}
        self._stop(context)
        return self._finish(context, self._run, self._run.findings)

    def _stop(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        context.workspace.status_text_set(None)

    def _finish(self, context, run, findings, cancelled=False):
        summary = level_check.summary_text(findings, len(run.shapes), complete=not cancelled)
        level_check.store_findings(context.scene, findings, summary, complete=not cancelled,
                                   outlines=run.outlines(findings))
        from . import live
        live.list_replaced()
        text = summary if findings or cancelled else f"{summary}: the level is clean"
        self.report({'WARNING'} if findings or cancelled or run.skipped else {'INFO'},
                    text + skipped_text(run.skipped))
        return {'CANCELLED'} if cancelled else {'FINISHED'}


# How many skipped objects the Check Level's one-line report names before "…".
NAMED_SKIPPED = 3


def skipped_text(skipped) -> str:
    """"; skipped 2: Lamp (no geometry), UCX_Gone (names no object)": the skipped objects, for
    the end of the one-line report (the JSON report lists them all)."""
    if not skipped:
        return ""
    named = ", ".join(f"{name} ({reason})" for name, reason in skipped[:NAMED_SKIPPED])
    return f"; skipped {len(skipped)}: {named}" + (", …" if len(skipped) > NAMED_SKIPPED else "")


def findings_problem(context) -> str | None:
    """Why there is no Level Check finding to act on, or None."""
    if len(_level_settings(context).findings) == 0:
        return "No findings: run Check Level first"
    return None


class OBJECT_OT_convex_select_finding(bpy.types.Operator):
    """Select the two objects of a Level Check finding and frame them"""

    bl_idname = "object.convex_select_finding"
    bl_label = "Select Finding"
    bl_options = {'REGISTER', 'UNDO'}

    index: IntProperty(name="Index", default=-1, options={'SKIP_SAVE'})
    frame: BoolProperty(name="Frame", default=True)

    @classmethod
    def poll(cls, context):
        return passes(cls, mode_problem(context, "select objects") or findings_problem(context))

    def execute(self, context):
        settings = _level_settings(context)
        index = settings.active_index if self.index < 0 else self.index
        if not 0 <= index < len(settings.findings):
            self.report({'ERROR'}, "There is no such finding; run Check Level again")
            return {'CANCELLED'}
        if not level_check.select_pair(context, settings.findings[index], self.frame):
            self.report({'ERROR'}, "The objects of this finding no longer exist")
            return {'CANCELLED'}
        self.report({'INFO'}, f"Selected {level_check.pair_text(settings.findings[index])}")
        return {'FINISHED'}


class OBJECT_OT_convex_select_offending(bpy.types.Operator):
    """Select every object that is part of a Level Check finding"""

    bl_idname = "object.convex_select_offending"
    bl_label = "Select All Offending"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return passes(cls, mode_problem(context, "select objects") or findings_problem(context))

    def execute(self, context):
        view_layer = context.view_layer
        for obj in context.selected_objects:
            obj.select_set(False)
        names = sorted({n for item in _level_settings(context).findings
                        for n in (item.object_a, item.object_b)})
        selected = []
        for name in names:
            obj = level_check.object_named(name)
            if obj is not None and obj.name in view_layer.objects and obj not in selected:
                selected.append(obj)
        for obj in selected:
            obj.select_set(True)
        if selected:
            view_layer.objects.active = selected[0]
        self.report({'INFO'}, f"Selected {len(selected)} objects")
        return {'FINISHED'}


class OBJECT_OT_convex_live_check(bpy.types.Operator):
    """Keep the Level Check's findings current while you work (on/off): after each change only the objects that moved or changed are measured again"""

    bl_idname = "object.convex_live_check"
    bl_label = "Live Level Check"
    bl_options = {'REGISTER', 'UNDO'}   # the scene's Live setting

    @classmethod
    def poll(cls, context):
        return passes(cls, mode_problem(context, "check the level") or scope_problem(context))

    def execute(self, context):
        from . import live
        settings = context.scene.convex_tools
        settings.live_check = not settings.live_check      # starts or stops it
        if not settings.live_check:
            self.report({'INFO'}, "Live check off")
            return {'FINISHED'}
        state = live.current()
        if bpy.app.background:      # no timer runs: check now
            findings = state.finish()
            self.report({'INFO'}, f"Live check on: {len(findings)} finding"
                                  f"{'s' * (len(findings) != 1)}")
        else:
            self.report({'INFO'}, "Live check on: checking the level")
        return {'FINISHED'}


class OBJECT_OT_convex_clear_level(bpy.types.Operator):
    """Clear the Level Check findings from the list and the viewport"""

    bl_idname = "object.convex_clear_level"
    bl_label = "Clear Findings"
    bl_options = {'REGISTER'}

    @classmethod
    def poll(cls, context):
        settings = context.scene.convex_level
        return passes(cls, None if settings.summary or len(settings.findings) else
                      "Nothing to clear: Check Level has not run")

    def execute(self, context):
        count = len(context.scene.convex_level.findings)
        level_check.store_findings(context.scene, [], "")
        from . import live
        live.list_replaced()
        self.report({'INFO'}, f"Cleared {count} finding{'s' * (count != 1)}")
        return {'FINISHED'}


class OBJECT_OT_convex_export_level_report(bpy.types.Operator):
    """Save the Level Check findings as a report: JSON, CSV, JUnit XML (.xml) or SARIF (.sarif), as the command line writes them"""

    bl_idname = "object.convex_export_level_report"
    bl_label = "Export Report"
    bl_options = {'REGISTER'}

    # The suffix chooses the format (the command line's --json, --csv, --junit, --sarif).
    FORMATS = {".json": "to_json", ".csv": "to_csv", ".xml": "to_junit", ".sarif": "to_sarif"}

    filepath: StringProperty(subtype='FILE_PATH')
    filter_glob: StringProperty(default="*.json;*.csv;*.xml;*.sarif", options={'HIDDEN'})

    @classmethod
    def poll(cls, context):
        if getattr(context.scene, "convex_level", None) is None:
            cls.poll_message_set("Convex Tools is not set up in this scene")
            return False
        return True

    def invoke(self, context, event):
        if not self.filepath:
            self.filepath = bpy.path.ensure_ext(
                bpy.path.display_name_from_filepath(bpy.data.filepath) or "level", "_report.json")
        context.window_manager.fileselect_add(self)
        return {'RUNNING_MODAL'}

    def execute(self, context):
        from .core import gate
        from .core import report as core_report

        path = bpy.path.abspath(self.filepath)
        suffix = os.path.splitext(path)[1].lower()
        if suffix not in self.FORMATS and not os.path.isdir(path):
            self.report({'ERROR'}, f"Cannot export {os.path.basename(path) or path!r}: the "
                                   f"suffix chooses the format, one of "
                                   f"{', '.join(self.FORMATS)}")
            return {'CANCELLED'}
        report = self.report_model(context)
        gate.apply(report)
        try:
            files.check_writable(path)
            files.write_text_atomically(path, getattr(core_report, self.FORMATS[suffix])(report))
        except OSError as problem:
            self.report({'ERROR'}, f"Cannot write {path}: {problem.strerror or problem}")
            return {'CANCELLED'}
        count = sum(len(s["findings"]) for s in report["files"])
        note = "" if report["complete"] else " (incomplete: the check was cancelled)"
        self.report({'INFO'}, f"Saved {count} finding{'s' * (count != 1)} to {path}{note}")
        return {'FINISHED'}

    @staticmethod
    def report_model(context) -> dict:
        """The stored Level Check findings as the command line's report model (``core.report``):
        ``options`` from the Level Check panel, the scene, its units, and the objects checked."""
        from .core import report as core_report

        settings = _level_settings(context)
        scene = context.scene
        findings = [item.to_finding() for item in settings.findings]
        # The summary begins with the count of objects checked ("12 objects: ...", or "Cancelled;
        # so far 12 objects: ..." for a cancelled check; level_check.summary_text).
        counted = re.search(r"(\d+) objects?:", settings.summary)
        units = scene.unit_settings
        # With a rules file (or text) the rules say the clearance and the touch tolerance
        # (as ``level_run`` checks).
        rules = None
        if settings.rules_file:
            path = bpy.path.abspath(settings.rules_file)
            try:
                rules = {"path": settings.rules_file, "sha256": core_report.file_sha256(path)}
            except OSError:
                rules = {"path": settings.rules_file, "sha256": None}
        elif settings.rules_text is not None:
            text = settings.rules_text.as_string().encode("utf-8")
            rules = {"path": f"Text {settings.rules_text.name}",
                     "sha256": hashlib.sha256(text).hexdigest()}
        options = {
            "clearance": None if rules else settings.clearance,
            "touch_tolerance": None if rules else settings.touch_tolerance,
            "collection": settings.collection.name if settings.scope == 'COLLECTION'
            and settings.collection else None,
            "scene": scene.name,
            "ignore": [settings.ignore_collection.name] if settings.ignore_collection else [],
            "ignore_pairs": [[a.strip(), b.strip()] for a, _, b in
                             (p.partition(":") for p in settings.ignore_pairs.split(",")
                              if p.strip())],
            "object_clearance": {},
            "scope": settings.scope,
        }
        section = core_report.file_section(
            bpy.data.filepath or "untitled.blend", findings=findings,
            status=core_report.CHECKED if settings.complete else core_report.INCOMPLETE,
            scene=scene.name, rules=rules,
            units={"system": units.system, "scale_length": float(units.scale_length),
                   "length_unit": units.length_unit},
            objects_checked=int(counted.group(1)) if counted else 0)
        return core_report.new_report(
            [section], options=options, rules=rules, complete=settings.complete,
            incomplete_reason="the check was cancelled", blender_version=bpy.app.version_string)
