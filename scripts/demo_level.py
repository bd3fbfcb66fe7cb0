#!/usr/bin/env python
"""The main job, end to end: build a demo level, check it, report and picture the findings.

    scripts/run.sh python scripts/demo_level.py [--out DIR] [--no-picture]
    (or: bash scripts/demo.sh [options])

Builds a level of a few hundred props of every shape kind (mesh cubes, UV spheres, cylinders,
cones, ico spheres; non-uniformly scaled and rotated ones; meshes with bevel, subdivision,
taper, solidify and array modifiers; rigid-body boxes, spheres, capsules, cylinders, cones and
convex hulls) standing on a floor, with concave set pieces (a terrain, a room shell, an arch, a
table with UCX proxies, instanced shelves). Most stand alone, resting on what is below them;
some were placed overlapping, closer than the clearance, sunk into the floor or floating above
it. The level is saved as ``out/demo_level.blend`` with its rules (``scripts/demo_rules.toml``,
kept in the file as a Text datablock) and checked the way a user would check it from the
command line:

    scripts/run.sh python scripts/check_level.py out/demo_level.blend --json out/report.json \\
        --csv out/report.csv --picture out/findings.png

The rules make the floor and the set pieces static, let fence posts stand 25 cm into the ground
and rocks sit half buried, ignore the lamps mounted on pillars, and ask every prop to rest on
something; crates carry the custom property ``convex_clearance = 0`` (stacking them is fine),
doors ``convex_clearance = 0.6`` (they need room to open). The demo then compares the findings
with the problems it planted and says whether the check found exactly those.

``build_scattered_level`` (used by ``scripts/benchmarks/level.py``) builds the benchmark levels.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

CELL = 2.5            # grid spacing of the props (m); a lone prop fits in a 1.5 m circle
SET_PIECES = ("a terrain, a room shell, an arch, a table with UCX collision proxies, a shelf "
              "unit instanced 3 times")
SET_PIECES_GAP = 3.5  # from the last row of props to the strip of concave set pieces (m)
SET_PIECES_DEPTH = 12.5  # depth of that strip (m)
GRID = (18, 16)       # cells along x and y
SCENARIO_EVERY = 9    # one cell in 9 holds a planted pair instead of a lone prop
CLEARANCE = 0.05      # the demo's clearance (m; its rules file says so too)
TRAVERSAL_KINDS = ("unreachable", "narrow", "low_headroom", "step")
RULES = os.path.join(HERE, "demo_rules.toml")   # the demo level's rules file
# How far subdivision (level 1) pulls a unit ico sphere's lowest vertex up (share of its size).
BOULDER_SHRINK = 0.02906385
DOOR_CLEARANCE = 0.6  # doors need this much room (custom property convex_clearance)
COURSE_DEPTH = 9.0    # depth of the traversal course's strip, south of the props (m)
# What the traversal check finds there (kind, the object named first): each place the player
# cannot get into and the reason next to it.
TRAVERSAL_PLANTED = sorted([("narrow", "Closet"), ("unreachable", "Floor"),
                            ("step", "Platform"), ("unreachable", "Platform"),
                            ("low_headroom", "Pen"), ("unreachable", "Floor")])


# --- meshes -----------------------------------------------------------------------------------
def _unit_meshes():
    """Unit-size primitive meshes, shared by every prop of that kind (linked duplicates)."""
    import bmesh
    import bpy

    def make(name, build):
        mesh = bpy.data.meshes.get(name)
        if mesh is None:
            mesh = bpy.data.meshes.new(name)
            bm = bmesh.new()
            build(bm)
            bm.to_mesh(mesh)
            bm.free()
        return mesh

    ops = bmesh.ops
    return {
        # Blender's default primitives, at size 1 (radius 0.5, height 1) instead of 2.
        "cube": make("unit_cube", lambda bm: ops.create_cube(bm, size=1.0)),
        "uv_sphere": make("unit_uv_sphere", lambda bm: ops.create_uvsphere(
            bm, u_segments=32, v_segments=16, radius=0.5)),
        "cylinder": make("unit_cylinder", lambda bm: ops.create_cone(
            bm, cap_ends=True, segments=32, radius1=0.5, radius2=0.5, depth=1.0)),
        "cone": make("unit_cone", lambda bm: ops.create_cone(
            bm, cap_ends=True, segments=32, radius1=0.5, radius2=0.0, depth=1.0)),
        "ico_sphere": make("unit_ico_sphere", lambda bm: ops.create_icosphere(
            bm, subdivisions=2, radius=0.5)),
        "plane": make("unit_plane", lambda bm: ops.create_grid(
            bm, x_segments=1, y_segments=1, size=0.5)),
    }


class _Pending:
    """A prop a deferred ``LevelBuilder`` will make: its name, and ``add``'s arguments."""

    __slots__ = ("name", "args")

    def __init__(self, name, args):
        self.name, self.args = name, args


class LevelBuilder:
    """Adds named props to the scene; keeps the planted problems the check should find."""

    def __init__(self, seed=2024, deferred=False):
        import bpy
        import numpy as np

        self.bpy = bpy
        # Deferred: ``add`` only records each prop, and ``finish`` makes them all in the order
        # of their names. Blender keeps its objects sorted by name, and makes room for a new
        # one by walking the list from its end: props of several kinds made one by one each
        # walked past most of the level (100k props took 15 minutes to build).
        self.deferred = deferred
        self.pending = []
        self.rng = np.random.default_rng(seed)
        self.meshes = _unit_meshes()
        self.scene = bpy.context.scene
        self.props = self._collection("Props")
        self.counts = {}
        self.expected = []        # (kind, name_a, name_b) sorted as the report sorts them
        self.rigid_bodies = []
        self.modifiers = []       # (object, name, type, settings), added by ``finish``

    def _collection(self, name):
        bpy = self.bpy
        coll = bpy.data.collections.get(name) or bpy.data.collections.new(name)
        if coll.name not in self.scene.collection.children:
            self.scene.collection.children.link(coll)
        return coll

    def name(self, base):
        k = self.counts.get(base, 0) + 1
        self.counts[base] = k
        return f"{base}.{k:03d}"

    def add(self, base, mesh, location, rotation=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0),
            collection=None, rigid_body=None, clearance=None):
        if self.deferred:
            prop = _Pending(self.name(base), (mesh, location, rotation, scale, collection,
                                              rigid_body, clearance))
            self.pending.append(prop)
            return prop
        return self._make(self.name(base), mesh, location, rotation, scale, collection,
                          rigid_body, clearance)

    def _make(self, name, mesh, location, rotation, scale, collection, rigid_body, clearance):
        obj = self.bpy.data.objects.new(name, self.meshes[mesh])
        obj.location = location
        obj.rotation_euler = rotation
        obj.scale = scale
        (collection or self.props).objects.link(obj)
        if rigid_body:
            self.rigid_bodies.append((obj, rigid_body))
        if clearance is not None:
            obj["convex_clearance"] = float(clearance)
        return obj

    def expect(self, kind, a, b):
        pair = tuple(sorted((a.name, b.name)))
        self.expected.append((kind, *pair))

    def expect_resting(self, kind, obj, below):
        """A ``sunk`` or ``floating`` problem: the report names the object that sinks or floats
        first."""
        self.expected.append((kind, obj.name, below if isinstance(below, str) else below.name))

    def modifier(self, obj, name, kind, **settings):
        """Give ``obj`` a modifier once the level is built (``finish``), where a deferred
        builder makes its objects. Returns ``obj``."""
        self.modifiers.append((obj, name, kind, settings))
        return obj

    def finish(self):
        """Add the modifiers, and give the rigid bodies their collision shapes (one operator
        call for all of them)."""
        bpy = self.bpy
        made = {}
        for prop in sorted(self.pending, key=lambda p: p.name):
            made[prop.name] = self._make(prop.name, *prop.args)
        self.pending = []
        for obj, name, kind, settings in self.modifiers:
            if isinstance(obj, _Pending):
                obj = made[obj.name]
            mod = obj.modifiers.new(name, kind)
            for key, value in settings.items():
                setattr(mod, key, value)
        self.modifiers = []
        if self.rigid_bodies:
            objs = [o for o, _ in self.rigid_bodies]
            with bpy.context.temp_override(active_object=objs[0], object=objs[0],
                                           selected_objects=objs,
                                           selected_editable_objects=objs):
                # Active: props a game moves (a passive body is level geometry: static).
                bpy.ops.rigidbody.objects_add(type='ACTIVE')
            for obj, shape in self.rigid_bodies:
                obj.rigid_body.collision_shape = shape
        self.expected.sort()

    # --- props ------------------------------------------------------------------------------
    def crate(self, x, y, size=1.0, z=None, yaw=0.0, **kw):
        z = size / 2 if z is None else z
        return self.add("Crate", "cube", (x, y, z), (0, 0, yaw), (size,) * 3, clearance=0.0,
                        **kw)

    def bevel_crate(self, x, y, size=1.0, yaw=0.0):
        obj = self.add("BevelCrate", "cube", (x, y, size / 2), (0, 0, yaw), (size,) * 3)
        return self.modifier(obj, "Bevel", 'BEVEL', width=0.08, segments=3)

    def ball(self, x, y, radius=0.5, z=None):
        z = radius if z is None else z
        return self.add("Ball", "uv_sphere", (x, y, z), scale=(2 * radius,) * 3)

    def barrel(self, x, y, radius=0.5, height=1.0, z=None):
        z = height / 2 if z is None else z
        return self.add("Barrel", "cylinder", (x, y, z), scale=(2 * radius, 2 * radius, height))

    def cone(self, x, y, radius=0.5, height=1.0):
        return self.add("Cone", "cone", (x, y, height / 2), scale=(2 * radius, 2 * radius, height))

    def rock(self, x, y, size=1.0):
        # A scaled, rotated ico sphere resting on its lowest vertex.
        rng = self.rng
        scale = size * rng.uniform(0.6, 1.1, 3)
        rot = rng.uniform(0, 2 * math.pi, 3)
        return self.add("Rock", "ico_sphere", (x, y, -self._lowest("ico_sphere", rot, scale)),
                        rot, scale)

    def _lowest(self, mesh, rotation, scale):
        """The lowest z of ``mesh`` rotated (Euler XYZ) and scaled about its origin."""
        from mathutils import Euler, Vector

        turn = Euler(rotation, 'XYZ').to_matrix()
        return min((turn @ Vector([c * s for c, s in zip(v.co, scale)])).z
                   for v in self.meshes[mesh].vertices)

    def plank(self, x, y, yaw=0.0, tilt=0.25):
        # A non-uniformly scaled box, rotated about z and tilted about its long axis: a plank
        # lying on one edge (its lowest edge on the floor).
        z = 0.5 * (0.3 * math.sin(tilt) + 0.12 * math.cos(tilt))
        return self.add("Plank", "cube", (x, y, z), (tilt, 0.0, yaw), (1.3, 0.3, 0.12))

    def boulder(self, x, y, size=1.0):
        # Subdivision pulls the ico sphere's lowest vertex up by this share of its size: the
        # boulder is lowered by as much, so that it rests on the floor.
        obj = self.add("Boulder", "ico_sphere", (x, y, size * (0.5 - BOULDER_SHRINK)),
                       scale=(size,) * 3)
        return self.modifier(obj, "Subdivision", 'SUBSURF', levels=1)

    def post(self, x, y, radius=0.35, height=1.6):
        obj = self.add("Post", "cylinder", (x, y, height / 2),
                       scale=(2 * radius, 2 * radius, height))
        return self.modifier(obj, "Taper", 'SIMPLE_DEFORM', deform_method='TAPER', factor=0.6)

    def panel(self, x, y, yaw=0.0):
        # A plane made solid by a modifier, standing up: a thin wall panel.
        obj = self.add("Panel", "plane", (x, y, 0.6), (math.pi / 2, 0.0, yaw), (1.2, 1.2, 1.0))
        return self.modifier(obj, "Solidify", 'SOLIDIFY', thickness=0.1, offset=0.0)

    def rail(self, x, y, yaw=0.0):
        # Three small cubes in a row by an array modifier (the hull is the whole bar).
        obj = self.add("Rail", "cube", (x - 0.4, y, 0.15), (0, 0, yaw), (0.4, 0.2, 0.3))
        return self.modifier(obj, "Array", 'ARRAY', count=3)

    def door(self, x, y, yaw=0.0):
        return self.add("Door", "cube", (x, y, 1.0), (0, 0, yaw), (0.9, 0.1, 2.0),
                        clearance=DOOR_CLEARANCE)

    def rigid(self, shape, x, y, size=0.8):
        mesh = {"BOX": "cube", "SPHERE": "uv_sphere", "CAPSULE": "cylinder",
                "CYLINDER": "cylinder", "CONE": "cone", "CONVEX_HULL": "ico_sphere"}[shape]
        scale = (size, size, 1.6 * size) if shape == "CAPSULE" else (size,) * 3
        base = "RB_" + shape.title().replace("_", "")
        return self.add(base, mesh, (x, y, scale[2] / 2), scale=scale, rigid_body=shape)

    def lone_prop(self, k, x, y):
        """One prop alone in its cell, at least 0.9 m from anything in the next cells."""
        rng = self.rng
        yaw = float(rng.uniform(0, 2 * math.pi))
        makers = [
            lambda: self.crate(x, y, float(rng.uniform(0.6, 1.0)), yaw=yaw),
            lambda: self.ball(x, y, float(rng.uniform(0.3, 0.6))),
            lambda: self.barrel(x, y, float(rng.uniform(0.3, 0.55)), float(rng.uniform(0.8, 1.4))),
            lambda: self.cone(x, y, float(rng.uniform(0.3, 0.6)), float(rng.uniform(0.6, 1.4))),
            lambda: self.rock(x, y, float(rng.uniform(0.7, 1.2))),
            lambda: self.plank(x, y, yaw),
            lambda: self.bevel_crate(x, y, float(rng.uniform(0.6, 1.0)), yaw),
            lambda: self.boulder(x, y, float(rng.uniform(0.7, 1.2))),
            lambda: self.post(x, y),
            lambda: self.panel(x, y, yaw),
            lambda: self.rail(x, y),
            lambda: self.door(x, y, yaw),
            lambda: self.rigid("BOX", x, y),
            lambda: self.rigid("SPHERE", x, y),
            lambda: self.rigid("CAPSULE", x, y),
            lambda: self.rigid("CYLINDER", x, y),
            lambda: self.rigid("CONE", x, y),
            lambda: self.rigid("CONVEX_HULL", x, y),
        ]
        return makers[k % len(makers)]()

    # --- planted pairs --------------------------------------------------------------------------
    def scenario(self, k, x, y):
        """Two props placed to overlap, to be too close, or to touch (see the comments)."""
        s = k % 20
        if s == 0:    # barrel pushed 0.2 into a crate's side
            a = self.crate(x - 0.5, y)
            b = self.barrel(x + 0.3, y)
            self.expect("overlap", a, b)
        elif s == 1:  # ball sunk 0.15 into the top of a bevelled crate
            a = self.bevel_crate(x, y)
            b = self.ball(x, y, 0.5, z=1.0 + 0.5 - 0.15)
            self.expect("overlap", a, b)
        elif s == 2:  # rotated, non-uniformly scaled plank through a cone
            a = self.plank(x - 0.3, y, yaw=0.5, tilt=0.0)
            b = self.cone(x + 0.3, y + 0.2, 0.4, 1.0)
            self.expect("overlap", a, b)
        elif s == 3:  # rigid-body capsule into a rigid-body box
            a = self.rigid("BOX", x - 0.45, y, 1.0)
            b = self.rigid("CAPSULE", x + 0.2, y, 0.6)
            self.expect("overlap", a, b)
        elif s == 4:  # two rigid-body spheres 0.4 into each other
            a = self.rigid("SPHERE", x - 0.3, y, 1.0)
            b = self.rigid("SPHERE", x + 0.3, y, 1.0)
            self.expect("overlap", a, b)
        elif s == 5:  # barrel 0.02 from a crate: a crate needs no clearance, a barrel 0.05
            a = self.crate(x - 0.5, y)
            b = self.barrel(x + 0.52, y)
            self.expect("too_close", a, b)
        elif s == 6:  # two balls 0.03 apart (their equators have vertices on the x axis)
            a = self.ball(x - 0.515, y)
            b = self.ball(x + 0.515, y)
            self.expect("too_close", a, b)
        elif s == 7:  # a crate 0.35 from a door that needs 0.6
            a = self.door(x, y - 0.3)
            b = self.crate(x, y - 0.3 + 0.05 + 0.35 + 0.5)
            self.expect("too_close", a, b)
        elif s == 8:  # crate stacked on a crate: touching, and crates may touch: not a finding
            self.crate(x, y, 1.0)
            self.crate(x, y, 1.0, z=1.5)
        elif s == 9:  # crates side by side sunk 0.05 mm: under the touch tolerance, no finding
            self.crate(x - 0.5, y)
            self.crate(x + 0.5 - 0.00005, y)
        elif s == 10:  # a lamp on a pillar: overlapping on purpose, ignored by pattern
            self.add("Pillar", "cylinder", (x, y, 1.0), scale=(0.5, 0.5, 2.0))
            self.add("Lamp", "ico_sphere", (x, y, 2.1), scale=(0.4, 0.4, 0.4))
        elif s == 11:  # a rock (scaled, rotated ico sphere) into a tapered post
            a = self.post(x + 0.25, y)
            b = self.add("Rock", "ico_sphere", (x - 0.2, y, 0.4), (0.3, 0.7, 1.1),
                         (0.9, 0.7, 0.8))
            self.expect("overlap", a, b)
        elif s == 12:  # solidified panel cutting into a barrel
            a = self.panel(x - 0.2, y, yaw=math.pi / 2)
            b = self.barrel(x + 0.2, y)
            self.expect("overlap", a, b)
        elif s == 13:  # an array-modifier rail with its side 0.1 into a rigid-body cylinder
            a = self.rigid("CYLINDER", x, y, 0.9)
            b = self.rail(x, y - 0.45)
            self.expect("overlap", a, b)
        elif s == 14:  # a rigid-body cone leaning into a rigid-body convex hull
            a = self.rigid("CONE", x - 0.25, y, 0.9)
            b = self.rigid("CONVEX_HULL", x + 0.25, y, 0.9)
            self.expect("overlap", a, b)
        elif s == 15:  # a crate sunk 0.12 into the floor (crates may not sink at all)
            a = self.crate(x, y, 0.8, z=0.4 - 0.12)
            self.expect_resting("sunk", a, "Floor")
        elif s == 16:  # a crate floating 0.3 above the floor
            a = self.crate(x, y, 0.8, z=0.4 + 0.3)
            self.expect_resting("floating", a, "Floor")
        elif s == 17:  # a ball hovering 0.08 above the crate it should sit on
            b = self.crate(x, y, 0.8)
            a = self.ball(x, y, 0.3, z=0.8 + 0.08 + 0.3)
            self.expect_resting("floating", a, b)
        elif s == 18:  # a crate stacked 0.1 into the crate under it: two movable props overlap
            a = self.crate(x, y, 0.8)
            b = self.crate(x, y, 0.8, z=1.2 - 0.1)
            self.expect("overlap", a, b)
        else:          # a barrel sunk 0.2 into the floor
            a = self.barrel(x, y, 0.4, 1.0, z=0.5 - 0.2)
            self.expect_resting("sunk", a, "Floor")

    # --- concave set pieces (issue 11) -------------------------------------------------------
    def mesh_of_boxes(self, name, extents):
        """A mesh of axis-aligned boxes ((x0, y0, z0), (x1, y1, z1)), each a loose part."""
        bpy = self.bpy
        vertices, faces = [], []
        for lower, upper in extents:
            base = len(vertices)
            vertices += [((upper if k & 4 else lower)[0], (upper if k & 2 else lower)[1],
                          (upper if k & 1 else lower)[2]) for k in range(8)]
            faces += [tuple(base + i for i in face) for face in _BOX_FACES]
        mesh = bpy.data.meshes.new(name)
        mesh.from_pydata(vertices, [], faces)
        mesh.update()
        self.meshes[name] = mesh
        return name

    def set_piece(self, name, mesh, location=(0.0, 0.0, 0.0), kind=None, clearance=None,
                  collection=None):
        """An object with a fixed name (set pieces are referred to by name)."""
        obj = self.bpy.data.objects.new(name, self.meshes[mesh])
        obj.location = location
        (collection or self.pieces).objects.link(obj)
        if kind is not None:
            obj.convex_tools.kind = kind
        if clearance is not None:
            obj["convex_clearance"] = float(clearance)
        return obj

    def terrain(self, x0, y0, size=(14.0, 12.0), cell=0.25):
        """Rolling terrain (a triangle mesh) with three crates resting on it and one sunk 0.1
        into it. Each crate stands on a pad: the heights of the vertices around it are levelled,
        so that the ground under it is flat and its resting height exact."""
        import numpy as np

        nx, ny = int(round(size[0] / cell)), int(round(size[1] / cell))
        gx, gy = np.meshgrid(np.arange(nx + 1) * cell, np.arange(ny + 1) * cell)
        height = 0.3 + 0.25 * np.sin(0.9 * gx) * np.cos(0.7 * gy)
        crate = 0.8
        pads = [(2.0, 3.0, 0.0), (6.0, 8.0, 0.0), (10.0, 4.0, 0.0), (11.0, 9.5, 0.1)]
        reach = crate / 2 + 0.35          # levelled half width: the crate's and a margin
        for px, py, _ in pads:
            around = (np.abs(gx - px) <= reach + 1e-9) & (np.abs(gy - py) <= reach + 1e-9)
            height[around] = height[int(round(py / cell)), int(round(px / cell))]
        vertices = np.stack([gx.ravel(), gy.ravel(), height.ravel()], axis=1)
        n = nx + 1
        faces = [(j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i)
                 for j in range(ny) for i in range(nx)]
        mesh = self.bpy.data.meshes.new("terrain")
        mesh.from_pydata([tuple(v) for v in vertices.tolist()], [], faces)
        mesh.update()
        self.meshes["terrain"] = mesh
        ground = self.set_piece("Terrain", "terrain", (x0, y0, 0.0), kind='MESH', clearance=0.0)
        for px, py, sunk in pads:
            top = float(height[int(round(py / cell)), int(round(px / cell))])
            obj = self.crate(x0 + px, y0 + py, crate, z=top + crate / 2 - sunk)
            if sunk:
                self.expect_resting("sunk", obj, ground)
        return ground

    def room(self, x0, y0, size=(8.0, 8.0), wall=0.2, height=2.4, door=1.2):
        """A room shell (a floor slab and four walls, a ``door`` wide opening in the south
        one, no ceiling; its Shape a triangle mesh: surfaces with no inside) with two crates on
        its floor and a barrel pushed 0.15 into its east wall."""
        sx, sy = size
        slab, top = wall, wall + height
        left, right = (sx - door) / 2, (sx + door) / 2
        self.mesh_of_boxes("room", [
            ((0.0, 0.0, 0.0), (sx, sy, slab)),                       # the floor slab
            ((0.0, 0.0, slab), (wall, sy, top)),                     # west wall
            ((sx - wall, 0.0, slab), (sx, sy, top)),                 # east wall
            ((wall, sy - wall, slab), (sx - wall, sy, top)),         # north wall
            ((wall, 0.0, slab), (left, wall, top)),                  # south wall, west of
            ((right, 0.0, slab), (sx - wall, wall, top))])           # and east of the door
        shell = self.set_piece("Room", "room", (x0, y0, 0.0), kind='MESH', clearance=0.0)
        self.crate(x0 + 2.0, y0 + 2.0, 1.0, z=slab + 0.5)
        self.crate(x0 + 2.0, y0 + 3.0, 1.0, z=slab + 0.5)    # side by side with the first
        barrel = self.barrel(x0 + sx - wall - 0.4 + 0.15, y0 + 5.0, 0.4, 1.0, z=slab + 0.5)
        self.expect("overlap", barrel, shell)
        return shell

    def arch(self, x0, y0):
        """An arch (three loose boxes: one hull each, its Shape set to Convex Parts) with a
        column standing in its opening, 0.8 from the legs and 0.4 under the lintel."""
        legs_and_lintel = [((0.0, -0.3, 0.0), (0.6, 0.3, 2.4)), ((3.0, -0.3, 0.0), (3.6, 0.3, 2.4)),
                           ((0.0, -0.3, 2.4), (3.6, 0.3, 3.0))]
        self.mesh_of_boxes("arch", legs_and_lintel)
        self.set_piece("Arch", "arch", (x0, y0, 0.0), kind='CONVEX_PARTS')
        column = self.add("Column", "cylinder", (x0 + 1.8, y0, 1.0), scale=(0.8, 0.8, 2.0))
        return column

    def proxied_table(self, x, y):
        """A table whose Unreal collision is five UCX proxies (its top, and each leg: with
        Unreal's One Convex Hull Per UCX on, as by default, one proxy of four legs would be one
        hull around them), with a crate under it: the table's convex hull would swallow the
        crate, its collision does not."""
        top = ((-1.0, -0.5, 0.9), (1.0, 0.5, 1.0))
        legs = [((lx, ly, 0.0), (lx + 0.1, ly + 0.1, 0.9)) for lx in (-1.0, 0.9)
                for ly in (-0.5, 0.4)]
        self.mesh_of_boxes("table", [top] + legs)
        self.mesh_of_boxes("table_top", [top])
        proxies = [("UCX_Table_01", "table_top")]
        for k, leg in enumerate(legs):
            self.mesh_of_boxes(f"table_leg_{k}", [leg])
            proxies.append((f"UCX_Table_{k + 2:02d}", f"table_leg_{k}"))
        table = self.set_piece("Table", "table", (x, y, 0.0))
        for name, mesh in proxies:
            proxy = self.set_piece(name, mesh, collection=self.pieces)
            proxy.parent = table
            proxy.display_type = 'WIRE'
        self.crate(x, y, 0.6)
        return table

    def shelves(self, x0, y0):
        """A shelf unit (a collection excluded from the view layer: a shelf of loose boards and
        two crates on it) instanced three times; a barrel cuts 0.1 into the last instance's side
        board."""
        bpy = self.bpy
        unit = bpy.data.collections.new("ShelfUnit")
        self.scene.collection.children.link(unit)
        boards = [((-0.8, -0.25, 0.0), (-0.75, 0.25, 1.8)), ((0.75, -0.25, 0.0), (0.8, 0.25, 1.8)),
                  ((-0.75, -0.25, 0.0), (0.75, 0.25, 0.05)),
                  ((-0.75, -0.25, 0.6), (0.75, 0.25, 0.65)),
                  ((-0.75, -0.25, 1.2), (0.75, 0.25, 1.25))]
        self.mesh_of_boxes("shelf", boards)
        self.set_piece("Shelf", "shelf", kind='CONVEX_PARTS', clearance=0.0, collection=unit)
        for name, (cx, cz) in (("ShelfCrate.001", (-0.4, 0.05)), ("ShelfCrate.002", (0.3, 0.65))):
            crate = bpy.data.objects.new(name, self.meshes["cube"])
            crate.location, crate.scale = (cx, 0.0, cz + 0.2), (0.4, 0.4, 0.4)
            crate["convex_clearance"] = 0.0
            unit.objects.link(crate)
        layer = bpy.context.view_layer.layer_collection.children[unit.name]
        layer.exclude = True
        placed = {}
        for name, (x, y, yaw) in (("Shelf_A", (x0, y0, 0.0)), ("Shelf_B", (x0, y0 + 3.0, 0.0)),
                                  ("Shelf_C", (x0 + 3.5, y0 + 7.0, math.pi / 2))):
            empty = bpy.data.objects.new(name, None)
            empty.instance_type = 'COLLECTION'
            empty.instance_collection = unit
            empty.location, empty.rotation_euler = (x, y, 0.0), (0.0, 0.0, yaw)
            self.pieces.objects.link(empty)
            placed[name] = (x, y)
        # Shelf_C's side board at local x 0.75..0.8 runs along world y after the quarter turn.
        x, y = placed["Shelf_C"]
        barrel = self.barrel(x, y + 0.8 + 0.4 - 0.1, 0.4, 1.0)
        self.expected.append(("overlap", *sorted((barrel.name, "Shelf_C/Shelf"))))

    def set_pieces(self, y0):
        """The concave set pieces, in a strip north of the props starting at ``y0``."""
        self.pieces = self._collection("SetPieces")
        self.terrain(0.0, y0)
        self.room(16.0, y0 + 1.0)
        self.arch(26.0, y0 + 5.0)
        self.proxied_table(33.0, y0 + 5.0)
        self.shelves(37.5, y0 + 2.0)

    def traversal_course(self, y0):
        """South of the props, in a strip from ``y0`` down: the player's start and three
        places it cannot get into, each for one reason (the traversal check's planted
        problems): a closet behind a 0.6 m door (the agent is 0.7 m wide), a platform 0.6 m up
        (it climbs 0.45) and a pen whose only way in is under a beam 1.5 m up (it is 1.8 m
        tall). Walls are 0.2 thick and 2.4 high, each its own Convex Parts set piece."""
        bpy = self.bpy
        start = bpy.data.objects.new("PlayerStart", None)
        start.empty_display_type = 'SINGLE_ARROW'
        start.location = (2.0, y0 - 6.0, 0.0)
        self.pieces.objects.link(start)
        wall, high = 0.2, 2.4

        def walls(name, x0, boxes):
            self.mesh_of_boxes(name, [((x0 + a, y0 - 8 + b, c), (x0 + d, y0 - 8 + e, f))
                                      for (a, b, c), (d, e, f) in boxes])
            self.set_piece(name, name, kind='CONVEX_PARTS')

        # The closet (x 5..9): a west door 0.6 wide at the middle of its west wall.
        walls("Closet", 5.0, [((0, 0, 0), (4, wall, high)), ((0, 4 - wall, 0), (4, 4, high)),
                              ((4 - wall, 0, 0), (4, 4, high)),
                              ((0, 0, 0), (wall, 1.7, high)), ((0, 2.3, 0), (wall, 4, high))])
        # The platform (x 17..21): a block 0.6 high, nothing to climb it by.
        walls("Platform", 17.0, [((0, 0, 0), (4, 4, 0.6))])
        # The pen (x 29..33): three walls, and on its west side only a beam from 1.5 up.
        walls("Pen", 29.0, [((0, 0, 0), (4, wall, high)), ((0, 4 - wall, 0), (4, 4, high)),
                            ((4 - wall, 0, 0), (4, 4, high)), ((0, 0, 1.5), (wall, 4, high))])

    def floor(self, size_x, size_y, center):
        ground = self._collection("Ground")
        self.meshes.setdefault("cube", self.meshes["cube"])
        obj = self.bpy.data.objects.new("Floor", self.meshes["cube"])
        obj.location = (center[0], center[1], -0.1)
        obj.scale = (size_x, size_y, 0.2)
        ground.objects.link(obj)
        return obj


def _facing(vertices, quad, normal):
    """``quad`` (vertex indices) wound counter-clockwise seen from the side ``normal`` points
    to (so that its front face looks that way)."""
    import numpy as np

    a, b, c = (np.array(vertices[i], dtype=float) for i in quad[:3])
    return tuple(quad) if np.dot(np.cross(b - a, c - a), normal) > 0.0 else tuple(quad[::-1])


# The six faces of a box with corners numbered x*4 + y*2 + z, counter-clockwise from outside.
_BOX_FACES = ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3))


def build_demo_level(seed=2024):
    """Build the demo level in a fresh scene; returns the list of planted (kind, a, b). The
    add-on is registered (the set pieces carry Shape settings)."""
    import bpy

    import convex_tools

    bpy.ops.wm.read_factory_settings(use_empty=True)
    convex_tools.register()
    builder = LevelBuilder(seed)
    nx, ny = GRID
    k = planted = 0
    for j in range(ny):
        for i in range(nx):
            x, y = i * CELL, j * CELL
            # A diagonal lattice of planted cells, spread evenly over the floor.
            if (i + 4 * j) % SCENARIO_EVERY == SCENARIO_EVERY // 2:
                builder.scenario(planted, x, y)
                planted += 1
            else:
                jitter = builder.rng.uniform(-0.1, 0.1, 2)
                builder.lone_prop(k, x + jitter[0], y + jitter[1])
            k += 1
    strip = (ny - 1) * CELL + SET_PIECES_GAP
    builder.set_pieces(strip)
    builder.traversal_course(-CELL / 2 - 0.5)
    # One floor under the course, the props and the set pieces.
    size_x, size_y = nx * CELL, COURSE_DEPTH + strip + SET_PIECES_DEPTH + CELL / 2
    center = ((nx - 1) * CELL / 2, size_y / 2 - CELL / 2 - COURSE_DEPTH)
    builder.floor(size_x, size_y, center)
    builder.finish()
    _add_camera_and_light(size_x, size_y, center)
    _add_rules(bpy.context.scene)
    return builder.expected


def _add_rules(scene):
    """The demo's rules file (``RULES``) kept in the level as a Text datablock, which the
    command line and the Sidebar check with when no rules file is named."""
    import bpy

    with open(RULES, encoding="utf-8") as handle:
        text = bpy.data.texts.new(os.path.basename(RULES))
        text.write(handle.read())
    scene.convex_level.rules_text = text


def _add_camera_and_light(size_x, size_y, center):
    """The review camera (framing the whole floor, looking north and down) and a sun."""
    import bpy

    from convex_tools.cli import DEFAULT_PICTURE_SIZE, LEGEND_ROWS, framing_camera
    from convex_tools.picture import legend_height

    scene = bpy.context.scene
    half = (size_x / 2, size_y / 2)
    lower = (center[0] - half[0], center[1] - half[1], 0.0)
    upper = (center[0] + half[0], center[1] + half[1], 3.0)
    width, height = DEFAULT_PICTURE_SIZE
    # The picture's legend sits above the floor, not on it.
    scene.camera = framing_camera(scene, lower, upper, width / height, pitch_degrees=58.0,
                                  name="ReviewCamera",
                                  top_reserve=legend_height(LEGEND_ROWS) / height)
    sun_data = bpy.data.lights.new("Sun", 'SUN')
    sun_data.energy = 3.0
    sun = bpy.data.objects.new("Sun", sun_data)
    sun.rotation_euler = (math.radians(40), math.radians(15), math.radians(30))
    scene.collection.objects.link(sun)


# --- the benchmark levels ----------------------------------------------------------------------
def build_scattered_level(n, seed=7, spacing=3.0, unique=False):
    """``n`` props scattered uniformly on a square floor at a fixed density (one per
    ``spacing``² m²), a mix of shared primitive meshes, non-uniform scales, rigid bodies and a
    few meshes with modifiers. Neighbours land close by chance, so some pairs overlap.

    With ``unique``, every prop gets its own copy of its mesh with its vertices jittered by up
    to a millimetre: no two objects share geometry (the worst case for shape caches)."""
    import bpy
    import numpy as np

    bpy.ops.wm.read_factory_settings(use_empty=True)
    builder = LevelBuilder(seed, deferred=True)
    rng = builder.rng
    side = spacing * math.sqrt(n)
    xy = rng.uniform(0.0, side, (n, 2))
    kinds = rng.integers(0, 100, n)
    yaw = rng.uniform(0, 2 * math.pi, n)
    size = rng.uniform(0.5, 1.0, n)
    for k in range(n):
        _scattered_prop(builder, int(kinds[k]), float(xy[k, 0]), float(xy[k, 1]),
                        float(size[k]), float(yaw[k]))
    builder.finish()
    if unique:
        for obj in list(bpy.data.objects):
            if obj.type == 'MESH':
                mesh = obj.data.copy()
                coords = np.empty(len(mesh.vertices) * 3)
                mesh.vertices.foreach_get("co", coords)
                coords += rng.uniform(-1e-3, 1e-3, coords.shape)
                mesh.vertices.foreach_set("co", coords)
                mesh.update()
                obj.data = mesh
    return side


def _scattered_prop(builder, c, x, y, s, yaw):
    """Prop number ``c`` (0–99: the mix of ``build_scattered_level``) of size ``s`` at x, y."""
    if c < 25:
        return builder.crate(x, y, s, yaw=yaw)
    if c < 40:
        return builder.ball(x, y, 0.5 * s)
    if c < 52:
        return builder.barrel(x, y, 0.5 * s, s)
    if c < 60:
        return builder.cone(x, y, 0.5 * s, s)
    if c < 72:
        return builder.rock(x, y, s)
    if c < 80:
        return builder.plank(x, y, yaw)
    if c < 95:
        return builder.rigid(("BOX", "SPHERE", "CAPSULE", "CYLINDER", "CONE")[c % 5], x, y, s)
    if c < 98:
        return builder.bevel_crate(x, y, s, yaw)
    return builder.boulder(x, y, s)


def _lifts(rng, n):
    """How far each prop stands above the ground (m): most 6–30 cm clear, a tenth within the
    5 cm clearance, a twentieth sunk up to 5 cm (as a level's props stand)."""
    lift = rng.uniform(0.06, 0.30, n)
    roll = rng.uniform(0.0, 1.0, n)
    lift[roll < 0.15] = rng.uniform(0.0, 0.05, int((roll < 0.15).sum()))
    lift[roll < 0.05] = -rng.uniform(0.0, 0.05, int((roll < 0.05).sum()))
    return lift


def terrain_height(x, y):
    """The benchmark terrain's ground height (m): gentle hills of ±1.8 m."""
    import numpy as np

    return 1.5 * np.sin(0.07 * x) * np.cos(0.05 * y) + 0.3 * np.sin(0.31 * x + 0.2 * y)


def build_terrain_level(n, cells=224, seed=11, spacing=3.0):
    """``n`` props (the mix of ``build_scattered_level``) standing on one terrain object of
    2 × ``cells``² triangles (its Shape set to Triangle Mesh) at a fixed density (one prop per
    ``spacing``² m²); each prop stands at the ground height under its centre plus a lift
    (``_lifts``). The add-on is registered (the terrain carries a Shape setting)."""
    import bpy
    import numpy as np

    import convex_tools

    bpy.ops.wm.read_factory_settings(use_empty=True)
    convex_tools.register()
    builder = LevelBuilder(seed)
    rng = builder.rng
    side = spacing * math.sqrt(n)
    s = np.linspace(0.0, side, cells + 1)
    gx, gy = np.meshgrid(s, s)
    vertices = np.stack([gx.ravel(), gy.ravel(), terrain_height(gx, gy).ravel()], axis=1)
    m = cells + 1
    faces = [(j * m + i, j * m + i + 1, (j + 1) * m + i + 1, (j + 1) * m + i)
             for j in range(cells) for i in range(cells)]
    mesh = bpy.data.meshes.new("terrain")
    mesh.from_pydata(vertices.tolist(), [], faces)
    mesh.update()
    ground = bpy.data.objects.new("Terrain", mesh)
    ground.convex_tools.kind = 'MESH'
    ground["convex_clearance"] = 0.0
    builder.scene.collection.objects.link(ground)
    xy = rng.uniform(0.0, side, (n, 2))
    kinds = rng.integers(0, 100, n)
    yaw = rng.uniform(0, 2 * math.pi, n)
    size = rng.uniform(0.5, 1.0, n)
    lift = _lifts(rng, n)
    for k in range(n):
        obj = _scattered_prop(builder, int(kinds[k]), float(xy[k, 0]), float(xy[k, 1]),
                              float(size[k]), float(yaw[k]))
        obj.location.z += float(terrain_height(xy[k, 0], xy[k, 1]) + lift[k])
    builder.finish()
    return side


def build_compound_level(n, seed=13, spacing=3.0, compound_share=0.2):
    """``n`` objects at the density of ``build_scattered_level``, ``compound_share`` of them
    concave kit pieces with their Shape set to Convex Parts (arches of 3 loose boxes, tables of
    5, L-shaped walls of 2; each kind one shared mesh), the rest its convex props. The add-on is
    registered."""
    import bpy
    import numpy as np

    import convex_tools

    bpy.ops.wm.read_factory_settings(use_empty=True)
    convex_tools.register()
    builder = LevelBuilder(seed)
    rng = builder.rng
    builder.pieces = builder._collection("SetPieces")
    kits = {
        "Arch": builder.mesh_of_boxes("kit_arch", [
            ((-1.5, -0.3, 0.0), (-0.9, 0.3, 2.4)), ((0.9, -0.3, 0.0), (1.5, 0.3, 2.4)),
            ((-1.5, -0.3, 2.4), (1.5, 0.3, 3.0))]),
        "Table": builder.mesh_of_boxes("kit_table", [((-1.0, -0.5, 0.9), (1.0, 0.5, 1.0))] + [
            ((lx, ly, 0.0), (lx + 0.1, ly + 0.1, 0.9)) for lx in (-1.0, 0.9) for ly in (-0.5, 0.4)]),
        "LWall": builder.mesh_of_boxes("kit_lwall", [((-1.5, -0.1, 0.0), (1.5, 0.1, 2.5)),
                                                     ((-1.5, 0.1, 0.0), (-1.3, 2.0, 2.5))]),
    }
    side = spacing * math.sqrt(n)
    xy = rng.uniform(0.0, side, (n, 2))
    kinds = rng.integers(0, 100, n)
    yaw = rng.uniform(0, 2 * math.pi, n)
    size = rng.uniform(0.5, 1.0, n)
    piece = rng.uniform(0.0, 1.0, n) < compound_share
    for k in range(n):
        x, y = float(xy[k, 0]), float(xy[k, 1])
        if piece[k]:
            base = ("Arch", "Table", "LWall")[int(kinds[k]) % 3]
            obj = builder.set_piece(builder.name(base), kits[base], (x, y, 0.0),
                                    kind='CONVEX_PARTS')
            obj.rotation_euler = (0.0, 0.0, float(yaw[k]))
        else:
            _scattered_prop(builder, int(kinds[k]), x, y, float(size[k]), float(yaw[k]))
    builder.finish()
    return side


# --- the demo ---------------------------------------------------------------------------------
def _shown(path):
    """``path`` relative to the working folder when inside it, as a user would type it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _counted(expected) -> str:
    """"17 overlaps, 6 too close, ..." of the planted problems."""
    names = {"overlap": "overlaps", "too_close": "too close", "sunk": "sunk",
             "floating": "floating"}
    return ", ".join(f"{sum(k == kind for k, *_ in expected)} {label}"
                     for kind, label in names.items())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "out"),
                        help="output folder (default: out/)")
    parser.add_argument("--no-picture", action="store_true", help="skip out/findings.png")
    args = parser.parse_args(argv)

    from convex_tools import cli

    os.makedirs(args.out, exist_ok=True)
    blend = os.path.join(args.out, "demo_level.blend")
    start = time.perf_counter()
    expected = build_demo_level()
    import bpy

    from convex_tools.console import SAVED_AS, filtered_output
    with filtered_output(SAVED_AS):   # the next line says where it was saved
        bpy.ops.wm.save_as_mainfile(filepath=blend)
    n_props = len(bpy.data.collections["Props"].objects)
    n_objects = len(bpy.data.objects)
    print(f"Built the demo level: {n_props} props and concave set pieces ({SET_PIECES}) on a "
          f"floor, {n_objects} objects in all; {len(expected)} planted problems, saved to "
          f"{_shown(blend)} ({time.perf_counter() - start:.1f} s)\n", flush=True)

    check_args = [_shown(blend), "--traversal",
                  "--json", _shown(os.path.join(args.out, "report.json")),
                  "--csv", _shown(os.path.join(args.out, "report.csv"))]
    if not args.no_picture:
        check_args += ["--picture", _shown(os.path.join(args.out, "findings.png")),
                       "--map", _shown(os.path.join(args.out, "map.png"))]
    print("$ scripts/run.sh python scripts/check_level.py " + " ".join(
        f"'{a}'" if "*" in a else a for a in check_args), flush=True)
    result = cli.run(check_args)
    if result.code == 2:
        return 2

    traversal = sorted((f.kind, f.object_a) for f in result.findings
                       if f.kind in TRAVERSAL_KINDS)
    found = sorted((f.kind, f.object_a, f.object_b) for f in result.findings
                   if f.kind not in TRAVERSAL_KINDS)
    missed = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    print()
    if not missed and not extra and traversal == TRAVERSAL_PLANTED:
        print(f"Demo OK: the check found exactly the {len(expected)} planted problems "
              f"({_counted(expected)}); nothing resting on the floor, the terrain, each other "
              f"or the shelves, the posts set into the ground, the half-buried rocks, the "
              f"lamps on pillars, the column under the arch and the crate under the table "
              f"was reported. The traversal check found the three places the player cannot "
              f"get into, each with its reason (a narrow door, a high step, a low beam), and "
              f"nothing else.")
        print(f"Total {time.perf_counter() - start:.1f} s")
        return 0
    for kind, a, b in missed:
        print(f"MISSED planted {kind}: {a} / {b}")
    for kind, a, b in extra:
        print(f"UNEXPECTED {kind}: {a} / {b}")
    if traversal != TRAVERSAL_PLANTED:
        print(f"TRAVERSAL: expected {TRAVERSAL_PLANTED}, found {traversal}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
