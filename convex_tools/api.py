"""Blender objects in, core results out: the scripting API of the add-on (API.md).

Every function takes objects or object names (as ``check_scene`` does; anything else is a
``ValueError`` naming the argument), converts them with ``shape_from_object`` (world space,
evaluated geometry, rigid-body conventions, collision proxies; a convex shape, a ``Compound`` or a
``TriangleMesh``; see ``objects``) and runs the core query, so a result here equals the core's
result for the same world-space shapes (and names the part of a concave one that realised it).
"""

from __future__ import annotations

import math

from . import core, level_check
from .objects import ConversionError, resolve_object, shape_from_object  # noqa: F401


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


def check_scene(objects=None, clearance=None, **options):
    """Overlaps and clearance violations among ``objects`` (default: the scene's): ``Finding``s.

    See ``level_check.check_scene`` for the options (collection, ignore, ignore_pairs,
    clearances, touch_tolerance, progress).
    """
    return level_check.check_scene(objects, clearance, **options)
