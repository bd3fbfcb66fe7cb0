"""The public queries: one entry point per question, dispatching to the algorithm that answers it.

This is the layer ``convex_tools.core`` exports and everything above the core (the Blender layer,
the level check, user scripts) calls. It chooses *how* a question is answered — which method a
``method=`` argument names — and leaves each algorithm module (``gjk``, ``mpr``, ``epa``,
``penetration``, ``manifold``, ``raycast``, ``sweep``) to answer it for a pair of convex shapes.
The algorithm modules never import this one, so the dependency runs one way: queries → algorithms
→ shapes (docs/ARCHITECTURE.md). It is also the one place that picks an algorithm for a
``method=``: ``intersect`` chooses GJK or MPR here, and asks GJK when MPR cannot decide
(``penetration`` keeps its own choice of depth method, EPA, MPR or the hybrid, with their
fallbacks).

Concave shapes (``Compound``, ``TriangleMesh``) have no support mapping; each query sends a pair
with one of them to ``concave``, which answers part by part (one ``isinstance`` test per shape on
the convex path: nothing measurable). A ``cache`` belongs to one convex pair and is not used
there.
"""

from __future__ import annotations

import math

from . import concave, gjk, manifold, mpr, penetration as depth, raycast, sweep as sweeps
from . import validation
from .compound import ConcaveShape
from .results import SeparationCache

INTERSECT_METHODS = ("gjk", "mpr")


def distance(a, b, cache: SeparationCache | None = None,
             rel_tolerance: float = gjk.REL_TOLERANCE):
    """Distance and closest points of ``a`` and ``b`` (one common frame): a ``DistanceResult``.

    ``cache`` (a ``SeparationCache``) warm-starts the search from the last ``v`` of this pair;
    ``rel_tolerance`` bounds the relative error of the distance on curved shapes. With a
    ``Compound`` or ``TriangleMesh``, ``part_a``/``part_b`` name the closest parts.
    """
    if isinstance(a, ConcaveShape) or isinstance(b, ConcaveShape):
        return concave.distance(a, b)
    return gjk.distance(a, b, cache, rel_tolerance)


def signed_distance(a, b) -> float:
    """Distance between ``a`` and ``b`` when apart, minus the penetration depth when overlapping."""
    if isinstance(a, ConcaveShape) or isinstance(b, ConcaveShape):
        return concave.signed_distance(a, b)
    return depth.signed_distance(a, b)


def intersect(a, b, method: str = "gjk", cache: SeparationCache | None = None) -> bool:
    """True when ``a`` and ``b`` overlap or touch.

    ``method="gjk"`` is separating-axis GJK with its early out, warm-started by ``cache``;
    ``method="mpr"`` is Minkowski Portal Refinement.
    """
    if method not in INTERSECT_METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, INTERSECT_METHODS))}, "
                         f"got {method!r}")
    if isinstance(a, ConcaveShape) or isinstance(b, ConcaveShape):
        return concave.intersect(a, b, lambda p, q: _intersect_convex(p, q, method))
    # (The adapted shapes: a user's plain class is wrapped once here, not again below.)
    a = validation.shape("a", a)
    b = validation.shape("b", b)
    return _intersect_convex(a, b, method, cache)


def _intersect_convex(a, b, method, cache=None) -> bool:
    """``intersect`` on two convex shapes: the one place that chooses between GJK and MPR."""
    if method == "mpr":
        answer = mpr.intersect(a, b)
        if answer is not None:
            return answer
        cache = None    # MPR could not decide: GJK does, from a cold start as before
    return gjk.intersect(a, b, cache=cache)


def penetration(a, b, method: str = "epa"):
    """Penetration of ``a`` and ``b`` as a ``Contact`` (depth, unit normal A→B, witness points);
    None if they are apart. ``method`` is ``"epa"``, ``"mpr"`` or ``"hybrid"``. With a
    ``Compound`` or ``TriangleMesh``: the deepest over the parts that overlap (out of a mesh's
    front faces), naming them in ``part_a``/``part_b``."""
    if isinstance(a, ConcaveShape) or isinstance(b, ConcaveShape):
        return concave.penetration(a, b, method)
    return depth.penetration(a, b, method)


def contact_manifold(a, b, max_points: int = manifold.MAX_POINTS):
    """Contact region of ``a`` and ``b`` as a ``Manifold``; None if they are apart. With a
    ``Compound`` or ``TriangleMesh``: merged over the touching parts."""
    if isinstance(a, ConcaveShape) or isinstance(b, ConcaveShape):
        return concave.contact_manifold(a, b, max_points)
    return manifold.contact_manifold(a, b, max_points)


def ray_cast(shape, origin, direction, max_t=math.inf, cache=None, method="auto"):
    """First point of ``shape`` on the ray ``origin + t * direction``, t in [0, max_t]: a
    ``RayHit`` or None (see ``raycast.ray_cast``). With a ``Compound`` or ``TriangleMesh``: the
    nearest hit over its parts, naming it in ``part``."""
    if isinstance(shape, ConcaveShape):
        return concave.ray_cast(shape, origin, direction, max_t, method)
    return raycast.ray_cast(shape, origin, direction, max_t, cache, method)


def sweep(a, b, translation_a, translation_b=(0.0, 0.0, 0.0), cache=None):
    """First contact of ``a`` moving by ``translation_a`` and ``b`` by ``translation_b``: a
    ``SweepHit`` (t in [0, 1]) or None (see ``sweep.sweep``). With a ``Compound`` or
    ``TriangleMesh``: the earliest over the part pairs, naming them in ``part_a``/``part_b``."""
    if isinstance(a, ConcaveShape) or isinstance(b, ConcaveShape):
        return concave.sweep(a, b, translation_a, translation_b)
    return sweeps.sweep(a, b, translation_a, translation_b, cache)


def sweep_rotating(a, start_a, end_a, b, start_b=None, end_b=None, cache=None):
    """First contact of ``a`` and ``b`` moving between rigid poses (see ``sweep.sweep_rotating``).
    Convex shapes only."""
    for name, shape in (("a", a), ("b", b)):
        if isinstance(shape, ConcaveShape):
            raise ValueError(f"{name} is a {type(shape).__name__}: sweep_rotating takes convex "
                             f"shapes (sweep a Compound's parts one by one)")
    return sweeps.sweep_rotating(a, start_a, end_a, b, start_b, end_b, cache)
