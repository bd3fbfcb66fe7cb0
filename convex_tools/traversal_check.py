"""The traversal check on Blender objects: where the player capsule can stand and go.

``run_traversal`` collects the level exactly as the level check does (``level_check.LevelRun``:
the same objects, instances, proxies, exclusions and rules), decides per object whether it is
walkable (static objects — groups with ``static = true``, passive rigid bodies, triangle meshes —
and groups with ``walkable = true``; ``walkable = false`` says otherwise) and whether it blocks
the agent (every object but groups with ``blocks_agent = false``), and runs
``core.traversal.check_traversal``. The agent comes from the rules' ``[traversal]`` table, with
explicit values (the command line, the Sidebar) before it. Starts are object names (their
origins) or points; by default every object named ``PlayerStart*``.

``map_drawing`` makes the top-down map an overlay drawing (reachable green, standable but not
reachable orange, blocked red, starts white, findings labelled): the viewport shows it under
``MAP_KEY`` and the command line pictures it (``map_picture``, a camera looking straight down).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math

import bpy
import numpy as np
from bpy.props import BoolProperty, FloatProperty, PointerProperty, StringProperty

from . import level_check, overlay
from .core import traversal
from .core.level import LOW_HEADROOM, NARROW, STEP, UNREACHABLE

# Key of the traversal map in the viewport overlay.
MAP_KEY = "traversal_map"
# Objects named like this are the default starts.
START_PATTERN = "PlayerStart*"
# The map is drawn this far above each surface (so that it is not hidden in the floor).
MAP_LIFT = 0.02
# Heights of map samples rounded to this for merging a row's cells into one quad.
MAP_HEIGHT_STEP = 0.005
# Agent keys of the rules' [traversal] table, as core.traversal.Agent's fields.
AGENT_KEYS = {"agent_radius": "radius", "agent_height": "height", "max_step": "max_step",
              "max_slope": "max_slope", "cell": "cell"}


@dataclasses.dataclass
class TraversalRun:
    """What a traversal check gives: the core result, its findings (with rule and severity),
    the level run it collected through, and the start names it used."""

    result: traversal.TraversalResult
    findings: list
    level_run: object
    start_names: list
    seconds: float = 0.0       # how long the check took (the command line's phase times)

    def summary(self) -> dict:
        """The report's ``traversal`` record: agent, grid, areas, the starts asked for and
        where they stand."""
        summary = self.result.summary()
        return {**summary, "placed_starts": summary["starts"], "starts": self.start_names}


def agent_of(rules, **given) -> traversal.Agent:
    """The agent: each of ``given`` (radius, height, max_step, max_slope, cell; None: not
    given), else the rules' [traversal] value, else the default."""
    values = {field: rules.traversal[key] for key, field in AGENT_KEYS.items()
              if key in rules.traversal}
    values.update({k: v for k, v in given.items() if v is not None})
    return traversal.Agent(**values)


def resolve_starts(starts, objects, rules=None):
    """(points, names): each start a name (an object's origin; patterns allowed), a point
    (x, y, z) or "X,Y,Z"; None: the rules' [traversal] start, else every ``PlayerStart*``."""
    if not starts:
        starts = list((rules.traversal.get("start") if rules is not None else None) or [])
    default = not starts
    if default:
        starts = [START_PATTERN]
    points, names = [], []
    for start in starts:
        point = _point_of(start)
        if point is not None:
            points.append(point)
            names.append(",".join(f"{v:g}" for v in point))
            continue
        matched = [o for o in objects if fnmatch.fnmatchcase(o.name, str(start))]
        if not matched and not default:
            raise ValueError(f"--start {start!r}: no object of that name (and not a point "
                             f"X,Y,Z)")
        for obj in sorted(matched, key=lambda o: o.name):
            points.append(tuple(obj.matrix_world.translation))
            names.append(obj.name)
    return points, names


def _point_of(start):
    if isinstance(start, (list, tuple)) and len(start) == 3:
        values = start
    elif isinstance(start, str) and start.count(",") == 2:
        values = start.split(",")
    else:
        return None
    try:
        point = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError(f"a start point is X,Y,Z, got {start!r}") from None
    if not all(math.isfinite(v) for v in point):
        raise ValueError(f"a start point must be finite, got {start!r}")
    return point


def run_traversal(objects=None, *, collection=None, ignore=(), rules=None, scene=None,
                  context=None, starts=None, min_area=None, jobs=1, progress=None,
                  engine=None, include_hidden=False, include_cutters=False, level_run=None,
                  **agent) -> TraversalRun:
    """The traversal check of the scene's level (see the module doc); ``agent``: radius,
    height, max_step, max_slope, cell (None: the rules', else the default). ``level_run``: a
    ``LevelRun`` whose shapes are made already (the command line's, after the level check):
    its level is used instead of collecting it again."""
    run = level_run
    if run is None:
        run = level_check.LevelRun(objects, None, collection=collection, ignore=ignore,
                                   rules=rules, scene=scene, context=context, engine=engine,
                                   include_hidden=include_hidden,
                                   include_cutters=include_cutters)
    if run.check is None:
        run.step(1e9, shapes_only=True)
    check = run.check
    assign = check.assign
    walkable = [g.walkable if g is not None and g.walkable is not None else bool(static)
                for g, static in zip(assign.group_of, assign.static.tolist())]
    blocks = [g.blocks_agent if g is not None and g.blocks_agent is not None else True
              for g in assign.group_of]
    the_agent = agent_of(run.rules, **agent)
    area = min_area if min_area is not None else run.rules.traversal.get("min_area", 1.0)
    points, names = resolve_starts(starts, list(run.scene.objects), run.rules)
    result = traversal.check_traversal(check.shapes, check.names, walkable, blocks, the_agent,
                                       points, min_area=area, jobs=jobs, progress=progress)
    findings = []
    for f in result.findings:
        severity, decided = run.rules.severity_for(f.kind)
        findings.append(dataclasses.replace(f, rule=f"traversal ({decided})",
                                            severity=severity))
    return TraversalRun(result, findings, run, names)


# --- the map ---------------------------------------------------------------------------------
def map_drawing(result, findings=(), labels=True, units=None):
    """The top-down map of ``result`` as an ``overlay.Drawing``: one quad per run of cells in a
    row with the same state and height, a point per start, a label per finding."""
    drawing = overlay.Drawing()
    c = result.cell
    if len(result.sample_x):
        ix = np.floor((result.sample_x - result.origin[0]) / c).astype(np.int64)
        iy = np.floor((result.sample_y - result.origin[1]) / c).astype(np.int64)
        state = np.where(~result.standable, 2, np.where(result.reachable, 0, 1))
        z = np.round(result.sample_z / MAP_HEIGHT_STEP).astype(np.int64)
        order = np.lexsort((ix, z, state, iy))
        ix, iy, state, z = ix[order], iy[order], state[order], z[order]
        new = np.ones(len(ix), dtype=bool)
        new[1:] = (iy[1:] != iy[:-1]) | (state[1:] != state[:-1]) | (z[1:] != z[:-1]) \
            | (ix[1:] != ix[:-1] + 1)
        first = np.flatnonzero(new)
        last = np.append(first[1:], len(ix)) - 1
        x0 = result.origin[0] + ix[first] * c
        x1 = result.origin[0] + (ix[last] + 1) * c
        y0 = result.origin[1] + iy[first] * c
        y1 = y0 + c
        height = z[first] * MAP_HEIGHT_STEP + MAP_LIFT
        quads = np.stack([np.stack([x0, y0, height], 1), np.stack([x1, y0, height], 1),
                          np.stack([x1, y1, height], 1), np.stack([x0, y1, height], 1)], 1)
        triangles = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
        kinds = np.concatenate([state[first], state[first]])
        for code, role in enumerate(("reachable", "unreachable", "blocked")):
            drawing.fill(triangles[kinds == code], role)
    for k in np.asarray(result.starts, dtype=np.int64).tolist():
        drawing.point((result.sample_x[k], result.sample_y[k], result.sample_z[k] + MAP_LIFT),
                      "start")
    length = units or (lambda v: f"{v:.2f}")
    for f in findings:
        point = f.point if f.point is not None else f.point_a
        if point is None:
            continue
        drawing.point(tuple(point), _role(f.kind))
        if labels:
            where = tuple(point)
            if f.kind == UNREACHABLE and f.bbox is not None:
                # At the region's north edge, clear of the reason labelled at the passage.
                (lx, ly, _), (ux, uy, _) = f.bbox
                where = (0.5 * (lx + ux), uy, float(point[2]))
            drawing.label(where, finding_text(f, length), _role(f.kind))
    return drawing


def _role(kind):
    return "unreachable" if kind == UNREACHABLE else "blocked"


def finding_text(f, length) -> str:
    """A traversal finding in one line, lengths by ``length``."""
    extra = f.extra or {}
    if f.kind == UNREACHABLE:
        return f"unreachable: {f.area:.1f} m²"
    if f.kind == NARROW:
        return f"narrow: {length(extra.get('width', 0.0))}"
    if f.kind == LOW_HEADROOM:
        return f"low headroom: {length(extra.get('clearance', 0.0))}"
    if f.kind == STEP:
        return f"step: {length(extra.get('height', 0.0))}"
    return f.kind


MAP_LEGEND = [("reachable", "reachable: the player can get there from a start"),
              ("unreachable", "standable but not reachable (labelled: why, where known)"),
              ("blocked", "walkable surface with no room to stand"),
              ("start", "player start")]


def show_map(scene, run, labels=True):
    """Draw the map of ``run`` in the viewport."""
    overlay.show(MAP_KEY, map_drawing(run.result, run.findings, labels,
                                      level_check.scene_units(scene).format))


def clear_map():
    overlay.clear(MAP_KEY)


def map_picture(path, run, scene, width=1600, height=1000):
    """A picture of the map seen straight down (an orthographic camera framing the grid),
    with the findings labelled and a legend."""
    from . import picture

    result = run.result
    nx, ny = result.shape
    c = result.cell
    x0, y0 = result.origin
    x1, y1 = x0 + nx * c, y0 + ny * c
    top = float(result.sample_z.max()) if len(result.sample_z) else 0.0
    data = bpy.data.cameras.new("ConvexMapCamera")
    data.type = 'ORTHO'
    aspect = width / height
    # The map fills the picture below the legend's band, with a margin.
    reserve = picture.legend_height(len(MAP_LEGEND)) / height
    need_w, need_h = (x1 - x0) * 1.06, (y1 - y0) * 1.06 / (1.0 - reserve)
    if aspect >= 1.0:               # ortho_scale spans the picture's longer side
        view_w = data.ortho_scale = max(need_w, need_h * aspect)
        view_h = view_w / aspect
    else:
        view_h = data.ortho_scale = max(need_h, need_w / aspect)
    data.clip_start, data.clip_end = 0.01, 10.0 * (top + 100.0)
    camera = bpy.data.objects.new("ConvexMapCamera", data)
    camera.location = (0.5 * (x0 + x1), 0.5 * (y0 + y1) + 0.5 * reserve * view_h, top + 50.0)
    scene.collection.objects.link(camera)
    try:
        show_map(scene, run)
        picture.render_picture(path, scene=scene, camera=camera, width=width, height=height,
                               keys=[MAP_KEY], legend=MAP_LEGEND)
    finally:
        bpy.data.objects.remove(camera)
        bpy.data.cameras.remove(data)


# --- Sidebar: settings, operator, panel -------------------------------------------------------
_last_run = None


def _map_toggled(settings, context):
    if settings.show_map and _last_run is not None:
        show_map(context.scene, _last_run)
    else:
        clear_map()


class ConvexTraversalSettings(bpy.types.PropertyGroup):
    """The Traversal panel's agent and starts (Scene > convex_traversal); 0 for a length means
    the rules' value, else the default."""

    agent_radius: FloatProperty(name="Radius", unit='LENGTH', min=0.0, default=0.0,
                                description="Agent radius (0: the rules', else 0.35)")
    agent_height: FloatProperty(name="Height", unit='LENGTH', min=0.0, default=0.0,
                                description="Agent height (0: the rules', else 1.8)")
    max_step: FloatProperty(name="Max Step", unit='LENGTH', min=0.0, default=0.0,
                            description="Highest step the agent climbs (0: the rules', else "
                                        "0.45)")
    max_slope: FloatProperty(name="Max Slope", min=0.0, max=89.9, default=0.0,
                             description="Steepest walkable slope in degrees (0: the rules', "
                                         "else 45)")
    cell: FloatProperty(name="Cell", unit='LENGTH', min=0.0, default=0.0,
                        description="Grid cell size (0: the rules', else radius / 3)")
    min_area: FloatProperty(name="Min Area", min=0.0, default=1.0,
                            description="Smallest unreachable region reported (m²)")
    starts: StringProperty(name="Starts", default="",
                           description="Start objects or points X,Y,Z, separated by ';' "
                                       "(empty: the rules', else every PlayerStart* object)")
    show_map: BoolProperty(name="Show Map", default=True,
                           update=_map_toggled,
                           description="Draw the traversal map in the viewport")
    summary: StringProperty(name="Summary", default="")


def settings_agent(settings) -> dict:
    """The agent values the panel gives (None where it says 0: not given)."""
    return {field: (getattr(settings, key) or None) for key, field in AGENT_KEYS.items()}


class OBJECT_OT_convex_check_traversal(bpy.types.Operator):
    """Find where the player capsule can stand and go from its starts: unreachable areas, and the narrow passages, low beams and high steps that cut them off"""

    bl_idname = "object.convex_check_traversal"
    bl_label = "Check Traversal"
    bl_options = {'REGISTER'}

    @classmethod
    def poll(cls, context):
        from .operators import mode_problem, passes

        return passes(cls, mode_problem(context, "check the level"))

    def execute(self, context):
        global _last_run
        settings = context.scene.convex_traversal
        starts = [s.strip() for s in settings.starts.split(";") if s.strip()] or None
        try:
            run = run_traversal(context=context, starts=starts, min_area=settings.min_area,
                                **settings_agent(settings))
        except ValueError as problem:
            self.report({'ERROR'}, str(problem))
            return {'CANCELLED'}
        _last_run = run
        level_check.store_traversal_findings(context.scene, run.findings)
        length = level_check.scene_units(context.scene).format
        result = run.result
        text = (f"Traversal: {result.reachable_area:.1f} m² reachable from "
                f"{len(result.starts)} start{'s' * (len(result.starts) != 1)}, "
                f"{sum(f.kind == UNREACHABLE for f in run.findings)} unreachable area(s), "
                f"{len(run.findings)} finding(s)")
        if not run.start_names:
            text += "; no start (add a PlayerStart object or set Starts)"
        settings.summary = text
        if settings.show_map:
            show_map(context.scene, run)
        self.report({'WARNING'} if run.findings else {'INFO'},
                    text + f" (cell {length(result.cell)})")
        return {'FINISHED'}


class VIEW3D_PT_convex_traversal(bpy.types.Panel):
    bl_label = "Traversal"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Convex"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        settings = context.scene.convex_traversal
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        col = layout.column()
        for name in ("agent_radius", "agent_height", "max_step", "max_slope", "cell",
                     "min_area", "starts"):
            col.prop(settings, name)
        layout.operator(OBJECT_OT_convex_check_traversal.bl_idname, icon='MOD_OCEAN')
        if settings.summary:
            layout.label(text=settings.summary)
            layout.prop(settings, "show_map", toggle=True)


CLASSES = (ConvexTraversalSettings, OBJECT_OT_convex_check_traversal,
           VIEW3D_PT_convex_traversal)


def attach():
    bpy.types.Scene.convex_traversal = PointerProperty(type=ConvexTraversalSettings)


def detach():
    global _last_run
    _last_run = None
    clear_map()
    if hasattr(bpy.types.Scene, "convex_traversal"):
        del bpy.types.Scene.convex_traversal
