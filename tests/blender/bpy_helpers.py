"""Scene-building helpers for the Blender tests."""

import bpy


def add(kind, name, **kwargs):
    """Add a mesh primitive (``bpy.ops.mesh.primitive_<kind>_add``) and name it."""
    getattr(bpy.ops.mesh, f"primitive_{kind}_add")(**kwargs)
    obj = bpy.context.active_object
    obj.name = name
    return obj


def select(*objects, active=None):
    bpy.ops.object.select_all(action='DESELECT')
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = active or (objects[-1] if objects else None)
