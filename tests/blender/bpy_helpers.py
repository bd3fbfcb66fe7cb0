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


def mesh_object(name, vertices, faces, location=(0.0, 0.0, 0.0), collection=None):
    """A mesh object from vertex coordinates and faces (vertex index lists), linked to
    ``collection`` (default: the scene's)."""
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(map(float, v)) for v in vertices], [], [list(f) for f in faces])
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    obj.location = location
    (collection or bpy.context.scene.collection).objects.link(obj)
    return obj


# The six faces of a box with corners numbered x*4 + y*2 + z, wound counter-clockwise seen from
# outside (outward normals).
BOX_FACES = ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3))


def boxes(name, extents, location=(0.0, 0.0, 0.0), collection=None):
    """One mesh object made of axis-aligned boxes ((x0, y0, z0), (x1, y1, z1)) in local
    coordinates, each its own loose part, in the order given."""
    vertices, faces = [], []
    for lower, upper in extents:
        base = len(vertices)
        vertices += [((upper if k & 4 else lower)[0], (upper if k & 2 else lower)[1],
                      (upper if k & 1 else lower)[2]) for k in range(8)]
        faces += [tuple(base + i for i in face) for face in BOX_FACES]
    return mesh_object(name, vertices, faces, location, collection)


def grid_surface(name, half_size, cells, height=lambda x, y: 0.0, location=(0.0, 0.0, 0.0),
                 collection=None):
    """A height field over [-half_size, half_size]² in ``cells`` × ``cells`` quads (two
    triangles each once triangulated), faces up."""
    n = cells + 1
    step = 2.0 * half_size / cells
    vertices = [(-half_size + i * step, -half_size + j * step,
                 height(-half_size + i * step, -half_size + j * step))
                for j in range(n) for i in range(n)]
    faces = [(j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i)
             for j in range(cells) for i in range(cells)]
    return mesh_object(name, vertices, faces, location, collection)


def rigid(obj, shape, body_type='PASSIVE'):
    """Give ``obj`` a rigid body with collision shape ``shape``."""
    with bpy.context.temp_override(object=obj, active_object=obj, selected_objects=[obj]):
        bpy.ops.rigidbody.object_add(type=body_type)
    obj.rigid_body.collision_shape = shape
    return obj


def _unit_cube_mesh():
    import bmesh

    mesh = bpy.data.meshes.get("level_test_cube")
    if mesh is None:
        mesh = bpy.data.meshes.new("level_test_cube")
        bm = bmesh.new()
        bmesh.ops.create_cube(bm, size=1.0)
        bm.to_mesh(mesh)
        bm.free()
    return mesh


def cube(name, location, scale=(1.0, 1.0, 1.0), rotation=(0.0, 0.0, 0.0), collection=None):
    """A unit cube (half extent 0.5) object; shares one mesh like linked duplicates do."""
    obj = bpy.data.objects.new(name, _unit_cube_mesh())
    obj.location = location
    obj.scale = scale
    obj.rotation_euler = rotation
    (collection or bpy.context.scene.collection).objects.link(obj)
    return obj
