"""Blender objects in, core results out: the scripting API of the add-on (API.md).

Every function takes objects or object names (as ``check_scene`` does; anything else is a
``ValueError`` naming the argument), converts them with ``shape_from_object`` (world space,
evaluated geometry, rigid-body conventions, collision proxies; a convex shape, a ``Compound`` or a
``TriangleMesh``; see ``objects``) and runs the core query, so a result here equals the core's
result for the same world-space shapes (and names the part of a concave one that realised it).

``last_result()`` is the result of the last query operator run in Blender (Convex Distance,
Penetration, Contact Manifold, Ray Cast, Sweep), at full precision, with the objects it was
about and the settings it used: the one-line report and the Sidebar show it rounded. Import
this module from the package Blender registered: ``convex_tools.api`` with the add-on on the
path, ``bl_ext.user_default.convex_tools.api`` once installed as an extension from the default
user repository (another repository: ``bl_ext.<repository>.convex_tools.api``); a second copy
of the package imported from elsewhere has seen no operator run.

``live_findings()`` is the live check's findings (``live``: Level Check › Live), brought up to
date first.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from . import core, level_check, operators
from .objects import ConversionError, resolve_object, shape_from_object  # noqa: F401


class QueryResult(NamedTuple):
    """The last query operator's result (``last_result()``)."""

    query: str                 # "distance", "penetration", "contact", "ray_cast" or "sweep"
    objects: tuple             # object names: (A, B) for a pair; the object hit by a ray cast;
                               # the mover, then the object it first touches, for a sweep
    result: Any                # DistanceResult, Contact, Manifold, RayHit or SweepHit; None
                               # where there is none (apart, missed, moves freely)
    settings: dict             # what the query used: method; origin, unit direction and
                               # max_distance (inf: no limit); translation


def last_result() -> QueryResult | None:
    """The last query operator's result, or None when no query has run since the add-on was
    registered or since Clear Convex Overlays."""
    last = operators.last_query
    if not last:
        return None
    return QueryResult(last["query"], last["objects"], last["result"], dict(last["settings"]))


def _shape(item, argument):
    """World-space shape of an object or object name; ``ValueError`` naming ``argument``."""
    return shape_from_object(resolve_object(item, argument))


def distance(obj_a, obj_b):
    """``core.distance`` of two objects: ``DistanceResult`` (distance, point_a, point_b, ...)."""
    return core.distance(_shape(obj_a, "obj_a"), _shape(obj_b, "obj_b"))


def penetration(obj_a, obj_b, method: str = "epa"):
    """``core.penetration``: a ``Contact`` (depth, normal A→B, points), or None if apart."""
    return core.penetration(_shape(obj_a, "obj_a"), _shape(obj_b, "obj_b"), method)


def contact_manifold(obj_a, obj_b):
    """``core.contact_manifold``: a ``Manifold`` (normal, points, depths), or None if apart."""
    return core.contact_manifold(_shape(obj_a, "obj_a"), _shape(obj_b, "obj_b"))


def ray_cast(obj, origin, direction, max_t=math.inf):
    """``core.ray_cast`` against one object: a ``RayHit`` (t, point, normal), or None."""
    return core.ray_cast(_shape(obj, "obj"), origin, direction, max_t)


def sweep(obj_a, obj_b, translation_a, translation_b=(0.0, 0.0, 0.0)):
    """``core.sweep``: A moves by ``translation_a``, B by ``translation_b``; a ``SweepHit``."""
    return core.sweep(_shape(obj_a, "obj_a"), _shape(obj_b, "obj_b"), translation_a,
                      translation_b)


def live_findings():
    """The live check's findings (``Finding`` s), current: any update still pending (a timer
    does them in the viewport; headless none runs) is done first. ``ValueError`` when the live
    check is off (turn it on with ``scene.convex_tools.live_check = True``)."""
    from . import live
    return live.finish()


def check_scene(objects=None, clearance=None, **options):
    """Overlaps and clearance violations among ``objects`` (default: the scene's): ``Finding``s.

    See ``level_check.check_scene`` for the options (collection, ignore, ignore_pairs,
    clearances, touch_tolerance, progress).
    """
    return level_check.check_scene(objects, clearance, **options)
