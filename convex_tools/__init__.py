"""convex_tools: convex collision queries for Blender.

The geometric core (``convex_tools.core``) needs numpy alone, so the Blender layer is imported
only when Blender registers the extension: ``import convex_tools.core`` works anywhere.

Registration is one ``classes`` tuple, then the hooks that are not classes (properties on
Object and Scene, draw and file handlers, menu entries, the ``-c convex_tools`` command), each
attached and detached by its module. Both directions are idempotent: registering twice, or
unregistering what is not registered, changes nothing and raises nothing.
"""


def classes() -> tuple:
    """Every class the add-on registers, in registration order (property groups before the
    classes that point at them; panels in the order the Sidebar shows them)."""
    from . import colliders, fixes, operators, preferences, properties, traversal_check, ui

    return (
        preferences.ConvexToolsPreferences,
        properties.ConvexShapeSettings,
        properties.ConvexWatchPair,
        properties.ConvexSceneSettings,
        properties.ConvexLevelFinding,
        properties.ConvexLevelSettings,
        operators.OBJECT_OT_convex_distance,
        operators.OBJECT_OT_convex_penetration,
        operators.OBJECT_OT_convex_contact,
        operators.OBJECT_OT_convex_ray_cast,
        operators.OBJECT_OT_convex_sweep,
        operators.OBJECT_OT_convex_convert,
        operators.OBJECT_OT_convex_clear,
        operators.OBJECT_OT_convex_watch_add,
        operators.OBJECT_OT_convex_watch_remove,
        operators.OBJECT_OT_convex_check_level,
        operators.OBJECT_OT_convex_select_finding,
        operators.OBJECT_OT_convex_select_offending,
        operators.OBJECT_OT_convex_clear_level,
        operators.OBJECT_OT_convex_export_level_report,
        operators.OBJECT_OT_convex_live_check,
        fixes.OBJECT_OT_convex_resolve,
        fixes.OBJECT_OT_convex_drop_to_support,
        *traversal_check.CLASSES,
        ui.VIEW3D_MT_convex_tools,
        ui.CONVEX_UL_watch_pairs,
        ui.CONVEX_UL_level_findings,
        ui.VIEW3D_PT_convex_tools,
        ui.VIEW3D_PT_convex_level,
        *colliders.CLASSES,
    )


def _hooked_modules() -> tuple:
    """Modules with ``attach()`` / ``detach()`` for what is not a class, in attaching order."""
    from . import (cli, level_check, live, overlay, properties, proxies, traversal_check, ui,
                   watch)

    return (properties, proxies, overlay, watch, level_check, live, traversal_check, ui, cli)


def register():
    import bpy

    for cls in classes():
        if not cls.is_registered:
            bpy.utils.register_class(cls)
    for module in _hooked_modules():
        module.attach()


def unregister():
    import bpy

    for module in reversed(_hooked_modules()):
        module.detach()
    for cls in reversed(classes()):
        if cls.is_registered:
            bpy.utils.unregister_class(cls)
