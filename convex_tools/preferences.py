"""Add-on preferences: overlay colours, line width, point and label sizes."""

import bpy
from bpy.props import FloatProperty, FloatVectorProperty, IntProperty

from .core.traversal import COLOURS as MAP_COLOURS

# Default colours (RGBA, linear) by drawing role; the preferences start from these and the
# overlay falls back to them when the add-on is registered without preferences (scripts, tests).
DEFAULT_COLORS = {
    "closest": (0.10, 0.95, 0.25, 1.0),      # closest-point segment
    "penetration": (1.00, 0.15, 0.10, 1.0),  # penetration vector
    "contact": (1.00, 0.85, 0.00, 1.0),      # contact points
    "normal": (0.20, 0.60, 1.00, 1.0),       # contact and hit normals
    "ray": (0.95, 0.95, 0.95, 1.0),          # rays
    "hit": (1.00, 0.30, 0.90, 1.0),          # ray hit points
    "ghost": (0.55, 0.75, 1.00, 0.6),        # swept object at the time of impact
    "wire": (0.15, 0.85, 0.90, 1.0),         # shape wireframes
    "part": (0.70, 0.45, 1.00, 1.0),         # parts of a compound or mesh a result is about
    "overlap": (0.95, 0.08, 0.05, 1.0),      # level check: overlaps
    "too_close": (1.00, 0.55, 0.00, 1.0),    # level check: clearance violations
    "sunk": (0.75, 0.10, 0.55, 1.0),         # level check: sunk into a static supporter
    "floating": (0.20, 0.75, 1.00, 1.0),     # level check: must rest, nothing supports it
    "fix": (0.30, 1.00, 0.45, 1.0),          # level check: the move that resolves a finding
    # The traversal map (core.traversal.COLOURS, the picture's): reachable, standable but not
    # reachable, walkable surface with no room to stand, the player starts.
    **{role: tuple(c / 255.0 for c in MAP_COLOURS[role]) + (1.0,)
       for role in ("reachable", "unreachable", "blocked", "start")},
}
DEFAULT_LINE_WIDTH = 3.0
DEFAULT_POINT_SIZE = 10.0
DEFAULT_LABEL_SIZE = 14


def _color(role):
    return FloatVectorProperty(name=role.replace("_", " ").title(), subtype='COLOR', size=4,
                               min=0.0, max=1.0, default=DEFAULT_COLORS[role])


class ConvexToolsPreferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    line_width: FloatProperty(name="Line Width", min=1.0, max=10.0, default=DEFAULT_LINE_WIDTH)
    point_size: FloatProperty(name="Point Size", min=2.0, max=30.0, default=DEFAULT_POINT_SIZE)
    label_size: IntProperty(name="Label Size", min=8, max=48, default=DEFAULT_LABEL_SIZE)
    color_closest: _color("closest")
    color_penetration: _color("penetration")
    color_contact: _color("contact")
    color_normal: _color("normal")
    color_ray: _color("ray")
    color_hit: _color("hit")
    color_ghost: _color("ghost")
    color_wire: _color("wire")
    color_part: _color("part")
    color_overlap: _color("overlap")
    color_too_close: _color("too_close")
    color_sunk: _color("sunk")
    color_floating: _color("floating")
    color_fix: _color("fix")
    color_reachable: _color("reachable")
    color_unreachable: _color("unreachable")
    color_blocked: _color("blocked")
    color_start: _color("start")

    def draw(self, context):
        layout = self.layout
        row = layout.row()
        row.prop(self, "line_width")
        row.prop(self, "point_size")
        row.prop(self, "label_size")
        grid = layout.grid_flow(columns=2, even_columns=True)
        for role in DEFAULT_COLORS:
            grid.prop(self, f"color_{role}")


def get():
    """The add-on's preferences, or None when it was registered without being enabled."""
    addon = bpy.context.preferences.addons.get(__package__)
    return addon.preferences if addon is not None else None


def style():
    """(colours by role, line width, point size, label size) from preferences or defaults."""
    prefs = get()
    if prefs is None:
        return dict(DEFAULT_COLORS), DEFAULT_LINE_WIDTH, DEFAULT_POINT_SIZE, DEFAULT_LABEL_SIZE
    colors = {role: tuple(getattr(prefs, f"color_{role}")) for role in DEFAULT_COLORS}
    return colors, prefs.line_width, prefs.point_size, prefs.label_size
