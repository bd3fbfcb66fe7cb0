"""The Sidebar (N panel) tab "Convex": shape settings, queries, results, overlays, watch list."""

import bpy

from . import operators
from .objects import GEOMETRY_TYPES, describe


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
            box.label(text=describe(obj))
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
        col.operator(operators.OBJECT_OT_convex_sweep.bl_idname, icon='FORWARD')
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


CLASSES = (CONVEX_UL_watch_pairs, VIEW3D_PT_convex_tools)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
