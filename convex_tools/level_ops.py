"""Level Check in Blender: the operator, its Sidebar panel and list, and the ``-c`` command.

"Check Level" (``object.convex_check_level``) checks the selection, a collection or the whole
scene (Sidebar > Convex > Level Check). In the viewport it runs as a modal operator: the work
goes in slices on a timer, the progress bar moves, and Esc cancels while keeping what was found.
Findings are drawn in the viewport (overlap depth vectors in the overlap colour, clearance gaps
in the too-close colour, each labelled) and listed in the panel; clicking a row selects and
frames the pair. Scripts and the command line use ``level_check.check_scene`` / ``cli`` instead.

``blender -b LEVEL.blend -c convex_tools check [options]`` is registered here as well.
"""

from __future__ import annotations

import bpy
import numpy as np
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty,
                       FloatVectorProperty, IntProperty, PointerProperty, StringProperty)

from . import level_check
from .core.level import OVERLAP, TOO_CLOSE, TOUCH_TOLERANCE, Finding, report_csv, report_json

# Seconds of work per timer tick of the modal check: the viewport stays responsive.
SLICE_SECONDS = 0.05
TIMER_INTERVAL = 0.01

_KINDS = [(OVERLAP, "Overlap", "The two objects overlap"),
          (TOO_CLOSE, "Too Close", "The two objects are closer than their clearance")]


# --- stored findings ------------------------------------------------------------------------
class ConvexLevelFinding(bpy.types.PropertyGroup):
    """One finding of the last Level Check, as shown in the Sidebar list."""

    object_a: StringProperty(name="Object A")
    object_b: StringProperty(name="Object B")
    kind: EnumProperty(name="Kind", items=_KINDS)
    distance: FloatProperty(name="Distance", unit='LENGTH',
                            description="Gap between the objects; negative: overlap depth")
    clearance: FloatProperty(name="Clearance", unit='LENGTH')
    point_a: FloatVectorProperty(name="Point A", size=3, subtype='XYZ', unit='LENGTH')
    point_b: FloatVectorProperty(name="Point B", size=3, subtype='XYZ', unit='LENGTH')

    def to_finding(self) -> Finding:
        return Finding(self.object_a, self.object_b, self.kind, self.distance,
                       np.array(self.point_a), np.array(self.point_b), self.clearance)


def _on_active_finding(self, context):
    if 0 <= self.active_index < len(self.findings):
        _select_pair(context, self.findings[self.active_index], frame=True)


def _on_show_labels(self, context):
    show_stored_findings(context.scene)


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
        description="Free space every object needs around it; 0 reports overlaps only "
                    f"(an object's custom property {level_check.CLEARANCE_PROPERTY} overrides it)")
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
    findings: CollectionProperty(type=ConvexLevelFinding)
    active_index: IntProperty(name="Finding", default=-1, update=_on_active_finding)
    summary: StringProperty(name="Summary")
    show_labels: BoolProperty(name="Labels", default=True, update=_on_show_labels,
                              description="Label each finding in the viewport")


def _settings(context) -> ConvexLevelSettings:
    return context.scene.convex_level


def store_findings(scene, findings, summary):
    settings = scene.convex_level
    settings.findings.clear()
    for f in findings:
        item = settings.findings.add()
        item.object_a, item.object_b, item.kind = f.object_a, f.object_b, f.kind
        item.distance, item.clearance = f.distance, f.clearance
        item.point_a, item.point_b = tuple(f.point_a), tuple(f.point_b)
    settings["active_index"] = -1  # without the update: storing must not select anything
    settings.summary = summary
    show_stored_findings(scene)


def show_stored_findings(scene):
    settings = scene.convex_level
    findings = [item.to_finding() for item in settings.findings]
    try:
        from . import overlay
        if findings:
            overlay.show(level_check.OVERLAY_KEY,
                         level_check.findings_drawing(findings, labels=settings.show_labels))
        else:
            overlay.clear(level_check.OVERLAY_KEY)
    except Exception as problem:  # drawing is a convenience; the list still holds the findings
        print(f"convex_tools: cannot draw the level findings: {problem}")
    _redraw_views()


def _redraw_views():
    wm = bpy.context.window_manager
    for window in getattr(wm, "windows", ()):
        for area in window.screen.areas:
            if area.type == 'VIEW_3D':
                area.tag_redraw()


def _summary(findings, objects, cancelled=False) -> str:
    overlaps = sum(f.kind == OVERLAP for f in findings)
    close = len(findings) - overlaps
    text = (f"{objects} object{'s' * (objects != 1)}: {overlaps} overlap{'s' * (overlaps != 1)}, "
            f"{close} too close")
    return ("Cancelled; so far " + text) if cancelled else text


# --- the check ------------------------------------------------------------------------------
def _level_run(context):
    settings = _settings(context)
    objects = None
    collection = None
    if settings.scope == 'SELECTED':
        objects = list(context.selected_objects)
    elif settings.scope == 'COLLECTION':
        collection = settings.collection
    ignore = [settings.ignore_collection] if settings.ignore_collection else []
    pairs = [p.strip() for p in settings.ignore_pairs.split(",") if p.strip()]
    return level_check.LevelRun(objects, settings.clearance, collection=collection,
                                ignore=ignore, ignore_pairs=pairs,
                                touch_tolerance=settings.touch_tolerance, context=context)


class OBJECT_OT_convex_check_level(bpy.types.Operator):
    """Find objects that overlap or are closer than the clearance (the selection, a collection or the scene); Esc cancels"""

    bl_idname = "object.convex_check_level"
    bl_label = "Check Level"
    bl_options = {'REGISTER'}

    _timer = None
    _run = None

    @classmethod
    def poll(cls, context):
        settings = getattr(context.scene, "convex_level", None)
        if settings is None:
            return False
        if settings.scope == 'COLLECTION' and settings.collection is None:
            cls.poll_message_set("Choose the collection to check")
            return False
        if settings.scope == 'SELECTED' and len(context.selected_objects) < 2:
            cls.poll_message_set("Select at least two objects")
            return False
        return True

    def execute(self, context):
        # Scripts and background mode: run to the end, printing progress when headless.
        try:
            level_run = _level_run(context)
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
            findings = level_run.run(progress)
        except ValueError as problem:
            self.report({'ERROR'}, str(problem))
            return {'CANCELLED'}
        finally:
            wm.progress_end()
        return self._finish(context, level_run, findings)

    def invoke(self, context, event):
        if context.window is None or bpy.app.background:  # no event loop to drive a timer
            return self.execute(context)
        try:
            self._run = _level_run(context)
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

    def _finish(self, context, level_run, findings, cancelled=False):
        summary = _summary(findings, len(level_run.shapes), cancelled)
        store_findings(context.scene, findings, summary)
        for name, reason in level_run.skipped:
            self.report({'WARNING'}, f"Skipped {name}: {reason}")
        if cancelled:
            self.report({'WARNING'}, summary)
            return {'CANCELLED'}
        self.report({'WARNING'} if findings else {'INFO'},
                    summary if findings else f"{summary}: the level is clean")
        return {'FINISHED'}


def _pair_objects(item):
    return [o for o in (bpy.data.objects.get(item.object_a), bpy.data.objects.get(item.object_b))
            if o is not None]


def _select_pair(context, item, frame):
    objs = _pair_objects(item)
    if not objs:
        return False
    view_layer = context.view_layer
    for obj in context.selected_objects:
        obj.select_set(False)
    for obj in objs:
        if obj.name in view_layer.objects:
            obj.select_set(True)
    view_layer.objects.active = objs[0]
    if frame:
        _frame_selected(context)
    return True


def _frame_selected(context):
    """Frame the selection in the 3D view the click came from (or the first one)."""
    screen = context.screen
    if screen is None:
        return
    areas = [context.area] if context.area and context.area.type == 'VIEW_3D' else \
        [a for a in screen.areas if a.type == 'VIEW_3D']
    for area in areas[:1]:
        region = next((r for r in area.regions if r.type == 'WINDOW'), None)
        if region is not None:
            with context.temp_override(area=area, region=region):
                bpy.ops.view3d.view_selected()


class OBJECT_OT_convex_select_finding(bpy.types.Operator):
    """Select the two objects of a Level Check finding and frame them"""

    bl_idname = "object.convex_select_finding"
    bl_label = "Select Finding"
    bl_options = {'REGISTER', 'UNDO'}

    index: IntProperty(name="Index", default=-1, options={'SKIP_SAVE'})
    frame: BoolProperty(name="Frame", default=True)

    @classmethod
    def poll(cls, context):
        settings = getattr(context.scene, "convex_level", None)
        return settings is not None and len(settings.findings) > 0

    def execute(self, context):
        settings = _settings(context)
        index = settings.active_index if self.index < 0 else self.index
        if not 0 <= index < len(settings.findings):
            self.report({'ERROR'}, "There is no such finding; run Check Level again")
            return {'CANCELLED'}
        if not _select_pair(context, settings.findings[index], self.frame):
            self.report({'ERROR'}, "The objects of this finding no longer exist")
            return {'CANCELLED'}
        return {'FINISHED'}


class OBJECT_OT_convex_select_offending(bpy.types.Operator):
    """Select every object that is part of a Level Check finding"""

    bl_idname = "object.convex_select_offending"
    bl_label = "Select All Offending"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        settings = getattr(context.scene, "convex_level", None)
        return settings is not None and len(settings.findings) > 0

    def execute(self, context):
        view_layer = context.view_layer
        for obj in context.selected_objects:
            obj.select_set(False)
        names = sorted({n for item in _settings(context).findings
                        for n in (item.object_a, item.object_b)})
        selected = [bpy.data.objects[n] for n in names
                    if n in bpy.data.objects and n in view_layer.objects]
        for obj in selected:
            obj.select_set(True)
        if selected:
            view_layer.objects.active = selected[0]
        self.report({'INFO'}, f"Selected {len(selected)} objects")
        return {'FINISHED'}


class OBJECT_OT_convex_clear_level(bpy.types.Operator):
    """Clear the Level Check findings from the list and the viewport"""

    bl_idname = "object.convex_clear_level"
    bl_label = "Clear Findings"
    bl_options = {'REGISTER'}

    def execute(self, context):
        store_findings(context.scene, [], "")
        return {'FINISHED'}


class OBJECT_OT_convex_export_level_report(bpy.types.Operator):
    """Save the Level Check findings as a JSON or CSV report"""

    bl_idname = "object.convex_export_level_report"
    bl_label = "Export Report"
    bl_options = {'REGISTER'}

    filepath: StringProperty(subtype='FILE_PATH')
    filter_glob: StringProperty(default="*.json;*.csv", options={'HIDDEN'})

    def invoke(self, context, event):
        if not self.filepath:
            self.filepath = bpy.path.ensure_ext(
                bpy.path.display_name_from_filepath(bpy.data.filepath) or "level", "_report.json")
        context.window_manager.fileselect_add(self)
        return {'RUNNING_MODAL'}

    def execute(self, context):
        settings = _settings(context)
        findings = [item.to_finding() for item in settings.findings]
        path = bpy.path.abspath(self.filepath)
        text = report_csv(findings) if path.lower().endswith(".csv") else \
            report_json(findings, file=bpy.path.basename(bpy.data.filepath),
                        clearance=settings.clearance)
        try:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        except OSError as problem:
            self.report({'ERROR'}, f"Cannot write {path}: {problem.strerror}")
            return {'CANCELLED'}
        self.report({'INFO'}, f"Saved {len(findings)} findings to {path}")
        return {'FINISHED'}


# --- Sidebar --------------------------------------------------------------------------------
class CONVEX_UL_level_findings(bpy.types.UIList):
    """Level Check findings: kind, pair, size."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname,
                  index=0):
        overlap = item.kind == OVERLAP
        icon = 'ERROR' if overlap else 'INFO'
        size = f"{-item.distance:.3f} deep" if overlap else \
            f"{max(item.distance, 0.0):.3f} < {item.clearance:.3f}"
        row = layout.row(align=True)
        row.label(text=f"{item.object_a} / {item.object_b}", icon=icon)
        row.label(text=size)
        op = row.operator(OBJECT_OT_convex_select_finding.bl_idname, text="", icon='ZOOM_SELECTED',
                          emboss=False)
        op.index = index

    def filter_items(self, context, data, propname):
        items = getattr(data, propname)
        flags = [self.bitflag_filter_item] * len(items)
        if self.filter_name:
            pattern = self.filter_name.lower()
            flags = [self.bitflag_filter_item if pattern in
                     f"{i.object_a} {i.object_b}".lower() else 0 for i in items]
        return flags, []


class VIEW3D_PT_convex_level(bpy.types.Panel):
    bl_label = "Level Check"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Convex"

    def draw(self, context):
        settings = _settings(context)
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        col = layout.column()
        col.prop(settings, "scope", expand=True)
        if settings.scope == 'COLLECTION':
            col.prop(settings, "collection")
        col.prop(settings, "clearance")
        col.prop(settings, "touch_tolerance")
        col.prop(settings, "ignore_collection")
        col.prop(settings, "ignore_pairs")
        layout.operator(OBJECT_OT_convex_check_level.bl_idname, icon='VIEWZOOM')
        if not settings.summary:
            return
        layout.label(text=settings.summary)
        if settings.findings:
            layout.template_list("CONVEX_UL_level_findings", "", settings, "findings",
                                 settings, "active_index", rows=6)
            row = layout.row(align=True)
            row.operator(OBJECT_OT_convex_select_offending.bl_idname, icon='RESTRICT_SELECT_OFF')
            row.prop(settings, "show_labels", toggle=True)
            row = layout.row(align=True)
            row.operator(OBJECT_OT_convex_export_level_report.bl_idname, icon='EXPORT')
            row.operator(OBJECT_OT_convex_clear_level.bl_idname, icon='X')


def _menu(self, context):
    self.layout.separator()
    self.layout.operator(OBJECT_OT_convex_check_level.bl_idname, icon='VIEWZOOM')


@bpy.app.handlers.persistent
def _show_findings_on_load(_dummy=None):
    # Drawings belong to the file that was open: show the findings the new file has stored.
    try:
        show_stored_findings(bpy.context.scene)
    except Exception as problem:
        print(f"convex_tools: cannot show the stored level findings: {problem}")


classes = (
    ConvexLevelFinding,
    ConvexLevelSettings,
    OBJECT_OT_convex_check_level,
    OBJECT_OT_convex_select_finding,
    OBJECT_OT_convex_select_offending,
    OBJECT_OT_convex_clear_level,
    OBJECT_OT_convex_export_level_report,
    CONVEX_UL_level_findings,
    VIEW3D_PT_convex_level,
)

_cli_handle = None


def register():
    global _cli_handle
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Scene.convex_level = PointerProperty(type=ConvexLevelSettings)
    bpy.types.VIEW3D_MT_object.append(_menu)
    bpy.app.handlers.load_post.append(_show_findings_on_load)
    from . import cli
    _cli_handle = bpy.utils.register_cli_command("convex_tools", cli.blender_command)


def unregister():
    global _cli_handle
    if _cli_handle is not None:
        bpy.utils.unregister_cli_command(_cli_handle)
        _cli_handle = None
    if _show_findings_on_load in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(_show_findings_on_load)
    try:
        from . import overlay
        overlay.clear(level_check.OVERLAY_KEY)
    except Exception:
        pass
    bpy.types.VIEW3D_MT_object.remove(_menu)
    del bpy.types.Scene.convex_level
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
