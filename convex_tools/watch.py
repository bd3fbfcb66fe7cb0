"""Watch mode: chosen pairs re-queried live whenever the depsgraph updates (objects move).

Cheap by construction: what each object is (its ``objects.Representation``) and its local
shape (its hull, or fitted primitive) are kept until the depsgraph reports a geometry change
for it or its Convex settings change, so a move only builds a ``Transformed`` with the new world
matrix; each pair keeps a ``SeparationCache`` so GJK starts from the last axis. A compound or
triangle mesh (convex parts, a triangle mesh, proxies) is assembled again on each update from
the hulls and meshes ``objects`` caches.
"""

from __future__ import annotations

import time

import bpy
from bpy.app.handlers import persistent

from . import core, overlay, proxies, result_drawings
from .core import MinkowskiSum, SeparationCache, Sphere, Transformed
from .objects import (CONVEX_KINDS, ConversionError, is_concave, local_shape, margin_of,
                      representation, shape_of, world_matrix)

OVERLAY_KEY = "watch"
_local: dict = {}     # object name → (settings key, representation, local convex shape or None)
_caches: dict = {}    # (name a, name b) → SeparationCache
# Seconds the last refresh took (the depsgraph handler's own cost; read by the benchmark).
last_refresh_seconds = 0.0


def _settings_key(obj):
    """Settings that change the shape without a geometry update."""
    settings = obj.convex_tools
    rigid = obj.rigid_body
    return (settings.kind, settings.round_radius, rigid.collision_shape if rigid else None)


def world_shape(obj, depsgraph):
    key = _settings_key(obj)
    entry = _local.get(obj.name)
    if entry is None or entry[0] != key:
        rep = representation(obj, proxies=proxies.cached_index())
        simple = rep.kind in CONVEX_KINDS and not rep.parts
        entry = (key, rep, local_shape(obj, rep.kind, depsgraph) if simple else None)
        _local[obj.name] = entry
    _, rep, local = entry
    if local is None:
        return shape_of(obj, rep, depsgraph)
    shape = Transformed(local, world_matrix(obj))
    margin = margin_of(obj, rep.kind)
    return MinkowskiSum(shape, Sphere(margin)) if margin > 0.0 else shape


def evaluate(pair, depsgraph):
    """Run the pair's query; returns (result text, Drawing)."""
    a, b = pair.object_a, pair.object_b
    sa, sb = world_shape(a, depsgraph), world_shape(b, depsgraph)
    if pair.query == 'DISTANCE':
        if is_concave(sa) or is_concave(sb):
            res = core.distance(sa, sb)    # part by part: no single separating axis to keep
        else:
            cache = _caches.setdefault((a.name, b.name), SeparationCache())
            res = core.distance(sa, sb, cache=cache)
        text = "overlap" if res.intersecting else f"d = {res.distance:.4g}"
        return text + _parts(sa, sb, res), _with_parts(result_drawings.distance_drawing(res),
                                                       sa, sb, res)
    if pair.query == 'PENETRATION':
        contact = core.penetration(sa, sb)
        if contact is None:
            return "apart", None
        return (f"depth {contact.depth:.4g}" + _parts(sa, sb, contact),
                _with_parts(result_drawings.penetration_drawing(contact), sa, sb, contact))
    manifold = core.contact_manifold(sa, sb)
    if manifold is None:
        return "apart", None
    return (f"{len(manifold.points)} contacts" + _parts(sa, sb, manifold),
            _with_parts(result_drawings.manifold_drawing(manifold, 0.2), sa, sb, manifold))


def _parts(sa, sb, result) -> str:
    """" (part 2 / triangle 17)": the parts a result on concave shapes is about."""
    a = result_drawings.part_text(sa, getattr(result, "part_a", None)).strip(" ()")
    b = result_drawings.part_text(sb, getattr(result, "part_b", None)).strip(" ()")
    return f" ({a or '-'} / {b or '-'})" if a or b else ""


def _with_parts(drawing, sa, sb, result):
    more = result_drawings.parts_drawing(sa, getattr(result, "part_a", None),
                                         sb, getattr(result, "part_b", None))
    drawing.lines += more.lines
    return drawing


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
