"""Menus and the Sidebar (N panel) tab "Convex": shape settings, queries, results, overlays,
watch list, and the Level Check with its list of findings.

Each query's settings sit beside its button; they are the defaults of the operator's own
properties, which Adjust Last Operation changes for the last run (``operators``). A button
whose operator cannot run is greyed out, its tooltip saying why (the operator's poll)."""

import bpy

from . import fixes, level_check, operators, proxies
from .core.level import FLOATING, OVERLAP, SUNK, TRAVERSAL_KINDS
from .objects import GEOMETRY_TYPES, describe


class VIEW3D_MT_convex_tools(bpy.types.Menu):
    """View3D › Object › Convex Tools: every operator of the add-on (F3 finds them too)"""

    bl_label = "Convex Tools"

    def draw(self, context):
        layout = self.layout
        for op in operators.QUERY_OPERATORS:
            layout.operator(op.bl_idname)
        layout.separator()
        layout.operator(operators.OBJECT_OT_convex_watch_add.bl_idname)
        layout.operator(operators.OBJECT_OT_convex_clear.bl_idname)
        layout.separator()
        layout.operator(operators.OBJECT_OT_convex_check_level.bl_idname, icon='VIEWZOOM')
        layout.operator(operators.OBJECT_OT_convex_live_check.bl_idname, icon='REC')
        layout.operator(fixes.OBJECT_OT_convex_resolve.bl_idname)
        layout.operator(fixes.OBJECT_OT_convex_drop_to_support.bl_idname)
        layout.operator("object.convex_make_collision", icon='MOD_PHYSICS')


def _object_menu(self, context):
    self.layout.menu(VIEW3D_MT_convex_tools.__name__)


class CONVEX_UL_watch_pairs(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_property, index):
        row = layout.row(align=True)
        row.prop(item, "object_a", text="")
        row.prop(item, "object_b", text="")
        row.prop(item, "query", text="")
        row.label(text=item.result)


class VIEW3D_PT_convex_tools(bpy.types.Panel):
    bl_label = "Convex Tools"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Convex"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.convex_tools
        obj = context.active_object

        box = layout.box()
        if obj is not None and obj.type in GEOMETRY_TYPES:
            box.label(text=obj.name, icon='OBJECT_DATA')
            shape = obj.convex_tools
            box.prop(shape, "kind")
            if shape.kind == 'ROUND_BOX':
                box.prop(shape, "round_radius")
            box.prop(shape, "margin")
            row = box.row(align=True)
            row.prop(shape, "use_clearance", text="")
            sub = row.row()
            sub.active = shape.use_clearance
            sub.prop(shape, "clearance")
            box.label(text=describe(obj, depsgraph=context.evaluated_depsgraph_get(),
                                    proxies=proxies.cached_index()))
        else:
            box.label(text="Select a mesh object for its shape settings")

        col = layout.column(align=True)
        col.operator(operators.OBJECT_OT_convex_distance.bl_idname, icon='DRIVER_DISTANCE')
        row = col.row(align=True)
        row.operator(operators.OBJECT_OT_convex_penetration.bl_idname, icon='MOD_PHYSICS')
        row.prop(settings, "penetration_method", text="")
        col.operator(operators.OBJECT_OT_convex_contact.bl_idname, icon='SNAP_FACE')
        row = col.row(align=True)
        row.operator(operators.OBJECT_OT_convex_ray_cast.bl_idname, icon='LIGHT_SUN')
        row.prop(settings, "ray_axis", text="")
        if settings.ray_axis == 'DIRECTION':
            col.prop(settings, "ray_direction", text="")
        col.prop(settings, "ray_max_distance")
        row = col.row(align=True)
        row.operator(operators.OBJECT_OT_convex_sweep.bl_idname, icon='FORWARD')
        row.prop(settings, "sweep_mode", text="")
        if settings.sweep_mode == 'TRANSLATION':
            col.prop(settings, "sweep_translation", text="")
        col.operator(operators.OBJECT_OT_convex_convert.bl_idname, icon='MESH_ICOSPHERE')

        if settings.last_result:
            layout.label(text=settings.last_result)
        row = layout.row(align=True)
        row.prop(settings, "show_overlays", toggle=True)
        row.prop(settings, "show_labels", toggle=True)
        row.operator(operators.OBJECT_OT_convex_clear.bl_idname, text="", icon='X')

        layout.separator()
        row = layout.row()
        row.prop(settings, "watch_enabled")
        row.operator(operators.OBJECT_OT_convex_watch_add.bl_idname, text="", icon='ADD')
        row.operator(operators.OBJECT_OT_convex_watch_remove.bl_idname, text="", icon='REMOVE')
        layout.template_list("CONVEX_UL_watch_pairs", "", settings, "watch_pairs", settings,
                             "watch_index", rows=2)


class CONVEX_UL_level_findings(bpy.types.UIList):
    """Level Check findings: kind, pair, size."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname,
                  index=0):
        length = level_check.scene_units(context.scene).format
        icon = 'ERROR' if item.severity == 'error' else 'INFO'
        if item.kind in (OVERLAP, SUNK):
            size = f"{length(-item.distance)} deep"
        elif item.kind == FLOATING:
            size = f"{length(item.distance)} up" if item.has_distance else "nothing below"
        elif item.kind in TRAVERSAL_KINDS:
            size = ""
        else:
            size = f"{length(max(item.distance, 0.0))} < {length(item.clearance)}"
        row = layout.row(align=True)
        row.label(text=f"{item.kind.replace('_', ' ')}: {level_check.pair_text(item)}",
                  icon=icon)
        row.label(text=size)
        op = row.operator(operators.OBJECT_OT_convex_select_finding.bl_idname, text="",
                          icon='ZOOM_SELECTED', emboss=False)
        op.index = index
        fix = row.row(align=True)
        fix.enabled = bool(item.move)
        op = fix.operator(fixes.OBJECT_OT_convex_resolve.bl_idname, text="", icon='CHECKMARK',
                          emboss=False)
        op.index = index

    def filter_items(self, context, data, propname):
        items = getattr(data, propname)
        flags = [self.bitflag_filter_item] * len(items)
        if self.filter_name:
            pattern = self.filter_name.lower()
            flags = [self.bitflag_filter_item if pattern in
                     level_check.pair_text(i).lower() else 0 for i in items]
        return flags, []


class VIEW3D_PT_convex_level(bpy.types.Panel):
    bl_label = "Level Check"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Convex"

    def draw(self, context):
        settings = context.scene.convex_level
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        col = layout.column()
        col.prop(settings, "scope", expand=True)
        if settings.scope == 'COLLECTION':
            col.prop(settings, "collection")
        col.prop(settings, "rules_file")
        if not settings.rules_file:
            col.prop(settings, "rules_text")
        ruled = bool(settings.rules_file) or settings.rules_text is not None
        sub = col.column()
        sub.active = not ruled          # the rules say these when there are rules
        sub.prop(settings, "clearance")
        sub.prop(settings, "touch_tolerance")
        col.prop(settings, "ignore_collection")
        col.prop(settings, "ignore_pairs")
        row = layout.row(align=True)
        row.operator(operators.OBJECT_OT_convex_check_level.bl_idname, icon='VIEWZOOM')
        # Live: the findings follow each change (``live``); the list below shows them.
        row.prop(context.scene.convex_tools, "live_check", toggle=True, icon='REC')
        if not settings.summary:
            return
        layout.label(text=settings.summary, icon='NONE' if settings.complete else 'ERROR')
        if settings.findings:
            layout.template_list("CONVEX_UL_level_findings", "", settings, "findings",
                                 settings, "active_index", rows=6)
            row = layout.row(align=True)
            row.operator(operators.OBJECT_OT_convex_select_offending.bl_idname,
                         icon='RESTRICT_SELECT_OFF')
            row.prop(settings, "show_labels", toggle=True)
            row = layout.row(align=True)
            row.operator(fixes.OBJECT_OT_convex_resolve.bl_idname, icon='CHECKMARK')
            row.operator(fixes.OBJECT_OT_convex_drop_to_support.bl_idname, icon='TRIA_DOWN_BAR')
            row = layout.row(align=True)
            row.operator(operators.OBJECT_OT_convex_export_level_report.bl_idname, icon='EXPORT')
            row.operator(operators.OBJECT_OT_convex_clear_level.bl_idname, icon='X')


def attach():
    """The Convex Tools submenu in View3D › Object (once, however often this is called)."""
    bpy.types.VIEW3D_MT_object.remove(_object_menu)
    bpy.types.VIEW3D_MT_object.append(_object_menu)


def detach():
    bpy.types.VIEW3D_MT_object.remove(_object_menu)
