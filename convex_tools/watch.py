"""Watch mode: chosen pairs re-queried live whenever the depsgraph updates (objects move).

Cheap by construction: each object's local shape (its hull, or fitted primitive) is kept until
the depsgraph reports a geometry change for it, so a move only builds a ``Transformed`` with the
new world matrix; each pair keeps a ``SeparationCache`` so GJK starts from the last axis.
"""

from __future__ import annotations

import time

import bpy
from bpy.app.handlers import persistent

from . import core, overlay, result_drawings
from .core import MinkowskiSum, SeparationCache, Sphere, Transformed
from .objects import ConversionError, local_shape, margin_of, resolve_kind, world_matrix

OVERLAY_KEY = "watch"
_local: dict = {}     # object name → ((kind, round radius), local shape)
_caches: dict = {}    # (name a, name b) → SeparationCache
# Seconds the last refresh took (the depsgraph handler's own cost; read by the benchmark).
last_refresh_seconds = 0.0


def world_shape(obj, depsgraph):
    kind = resolve_kind(obj)
    # Settings that change the local shape without a geometry update are part of the key.
    key = (kind, obj.convex_tools.round_radius if kind == "ROUND_BOX" else None)
    entry = _local.get(obj.name)
    if entry is None or entry[0] != key:
        entry = (key, local_shape(obj, kind, depsgraph))
        _local[obj.name] = entry
    shape = Transformed(entry[1], world_matrix(obj))
    margin = margin_of(obj, kind)
    return MinkowskiSum(shape, Sphere(margin)) if margin > 0.0 else shape


def evaluate(pair, depsgraph):
    """Run the pair's query; returns (result text, Drawing)."""
    a, b = pair.object_a, pair.object_b
    sa, sb = world_shape(a, depsgraph), world_shape(b, depsgraph)
    if pair.query == 'DISTANCE':
        cache = _caches.setdefault((a.name, b.name), SeparationCache())
        res = core.distance(sa, sb, cache=cache)
        text = "overlap" if res.intersecting else f"d = {res.distance:.4g}"
        return text, result_drawings.distance_drawing(res)
    if pair.query == 'PENETRATION':
        contact = core.penetration(sa, sb)
        if contact is None:
            return "apart", None
        return f"depth {contact.depth:.4g}", result_drawings.penetration_drawing(contact)
    manifold = core.contact_manifold(sa, sb)
    if manifold is None:
        return "apart", None
    return (f"{len(manifold.points)} contacts",
            result_drawings.manifold_drawing(manifold, 0.2))


def refresh(scene, depsgraph=None) -> float:
    """Re-evaluate every watched pair of ``scene`` and redraw; returns the seconds it took."""
    global last_refresh_seconds
    start = time.perf_counter()
    settings = getattr(scene, "convex_tools", None)
    if settings is None or not settings.watch_enabled:
        overlay.clear(OVERLAY_KEY)
        return 0.0
    depsgraph = depsgraph or bpy.context.evaluated_depsgraph_get()
    combined = overlay.Drawing()
    for pair in settings.watch_pairs:
        if pair.object_a is None or pair.object_b is None:
            text = "choose two objects"
        else:
            try:
                text, drawing = evaluate(pair, depsgraph)
            except (ConversionError, ValueError) as problem:
                text, drawing = str(problem), None
            if drawing is not None:
                combined.lines += drawing.lines
                combined.points += drawing.points
                combined.labels += drawing.labels
        if pair.result != text:
            pair.result = text
    overlay.show(OVERLAY_KEY, combined)
    last_refresh_seconds = time.perf_counter() - start
    return last_refresh_seconds


@persistent
def _on_depsgraph_update(scene, depsgraph):
    for update in depsgraph.updates:
        if update.is_updated_geometry and isinstance(update.id, bpy.types.Object):
            _local.pop(update.id.original.name, None)
    settings = getattr(scene, "convex_tools", None)
    if settings is not None and settings.watch_enabled and len(settings.watch_pairs):
        refresh(scene, depsgraph)


def attach():
    if _on_depsgraph_update not in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.append(_on_depsgraph_update)


def detach():
    while _on_depsgraph_update in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.remove(_on_depsgraph_update)
    _local.clear()
    _caches.clear()
