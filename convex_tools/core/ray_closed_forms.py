"""Closed-form ray casts against the primitives (``raycast`` dispatches to them).

The ray is ``x(λ) = s + λ r``; the answer is the smallest λ in [0, max_t] with x(λ) in the shape.

**Closed forms.** λ does not change under an affine map, so a ray against ``Transformed(A, M)``
is the ray M⁻¹(s - c) + λ M⁻¹ r against A, and normals map back by M⁻ᵀ. In their own frame the
primitives have exact intersections, as production engines use them. Each shape kind's entry
(``kinds``) names its ray form and sizes, and this module solves the forms: slabs for a box
(``Box``, and ``Rectangle`` as a box of zero height); the sphere quadratic for a sphere and an
ellipsoid (a unit sphere seen through diag(radii)); the infinite cylinder's quadratic cut by the
slab |z| <= h for a cylinder (``Cylinder``, ``Disc``), or by the cap spheres for a capsule
(``Capsule``, and ``Segment`` as one of zero radius); the double cone's quadratic cut by the slab
-h <= z <= h for a cone (the slab's top plane z = h keeps the lower nappe, its base plane is the
base disc). Quadratic roots use the form without cancellation (q = -(b + sign(b)√disc), roots
q/a and c/q) and a discriminant written as a difference of squares of small quantities
(Lagrange's identity), so they are exact to a few ulps except on grazing rays, whose hit is
ill-conditioned in itself. Shapes of zero thickness (a rectangle, a disc, a segment, a point, a
primitive with a zero size) are thickened by ``DEGENERATE_THICKNESS``: exactly the rays passing
that close to them hit, as on the GJK path. Dispatch is on the exact type's own entry
(``kinds.own_kind``), so subclasses and composites keep the GJK ray cast.

Normals of the closed forms are exact unit outward normals. Where the surface has an edge, the
normal is that of the part entered last (ties: the lower axis of a box, the side of a cylinder
or cone rather than its cap), always a member of the edge's normal cone; a cone hit at its apex
(within DEGENERATE_THICKNESS of the axis, where the side's direction is rounding noise) gets
+z, the axis of the apex's normal cone.
"""

from __future__ import annotations

import math

import numpy as np

from . import kinds
from .geometry import apply, apply_transpose, unit
from .results import RayHit, Status

# Closed forms: shapes of zero thickness along some direction are thickened to this fraction of
# their largest size (for a point, of the ray origin's distance from it). It bounds how far a ray
# may pass from such a shape and still hit it: the GJK path's termination test declares a hit
# at the same relative distance (``gjk_raycast.RELATIVE_TOLERANCE``, the same number by
# design), and it is far below a 1e-9 near miss.
DEGENERATE_THICKNESS = 1e-12

# --- closed forms ------------------------------------------------------------------------------
# Each ``_cast_<kind>(params, ox, oy, oz, dx, dy, dz, max_t)`` works in the shape's own frame and
# returns None (a miss, or a first hit beyond max_t) or (t, unit outward normal); a ray starting
# inside or on the surface gives (0.0, zero normal).

_INSIDE = (0.0, (0.0, 0.0, 0.0))
_INF = math.inf


def closed_form_hit(exact, origin, direction, max_t, cache):
    cast, params, frame = exact
    sx, sy, sz = origin
    rx, ry, rz = direction
    if frame is None:
        hit = cast(params, sx, sy, sz, rx, ry, rz, max_t)
    else:
        inv, offset = frame
        ox, oy, oz = apply(inv, (sx - offset[0], sy - offset[1], sz - offset[2]))
        dx, dy, dz = apply(inv, direction)
        hit = cast(params, ox, oy, oz, dx, dy, dz, max_t)
    if hit is None:
        if cache is not None:
            cache.record((0.0, 0.0, 0.0), 0)
        return None
    t, normal = hit
    if t == 0.0:
        if cache is not None:
            cache.record((0.0, 0.0, 0.0), 0)
        return RayHit(t=0.0, point=np.array(origin), normal=np.zeros(3), iterations=0,
                      support_calls=0, status=Status.INTERSECTING)
    if frame is not None:
        normal = unit(apply_transpose(frame[0], normal))  # M⁻ᵀ n
    if cache is not None:
        cache.record(normal, 0)
    return RayHit(t=t, point=np.array((sx + t * rx, sy + t * ry, sz + t * rz)),
                  normal=np.array(normal), iterations=0, support_calls=0,
                  status=Status.CONVERGED)


def _slab(o, d, h):
    """Parameters (enter, leave) of the line o + t d in the slab |x| <= h, or None."""
    if d == 0.0:
        return (-_INF, _INF) if -h <= o <= h else None
    if d > 0.0:
        return (-h - o) / d, (h - o) / d
    return (h - o) / d, (-h - o) / d


def _circle_span(ox, oy, dx, dy, r):
    """Parameters (enter, leave) of the line in the infinite cylinder x² + y² <= r², or None.

    Roots of a t² + 2 b t + c: the discriminant b² - a c equals a r² - (o × d)_z² (Lagrange's
    identity), which does not cancel |o|²|d|² against itself; the roots are q / a and c / q with
    q = -(b + sign(b) √disc), neither of which subtracts nearly equal numbers.
    """
    a = dx * dx + dy * dy
    c = ox * ox + oy * oy - r * r
    if a == 0.0:  # parallel to the axis
        return (-_INF, _INF) if c <= 0.0 else None
    cross = ox * dy - oy * dx
    disc = a * r * r - cross * cross
    if disc < 0.0:
        return None
    b = ox * dx + oy * dy
    q = -(b + math.copysign(math.sqrt(disc), b))
    if q == 0.0:  # b = 0 and a tangent line: a double root at the origin's parameter
        return 0.0, 0.0
    t1, t2 = q / a, c / q
    return (t1, t2) if t1 <= t2 else (t2, t1)


def _cast_sphere(r, ox, oy, oz, dx, dy, dz, max_t):
    c = ox * ox + oy * oy + oz * oz - r * r
    if c <= 0.0:
        return _INSIDE
    b = ox * dx + oy * dy + oz * dz
    if b >= 0.0:
        return None  # outside and not approaching the centre
    # b² - a c = a r² - |o × d|² (Lagrange's identity), without the cancellation of b² - a|o|².
    ux, uy, uz = oy * dz - oz * dy, oz * dx - ox * dz, ox * dy - oy * dx
    disc = (dx * dx + dy * dy + dz * dz) * r * r - (ux * ux + uy * uy + uz * uz)
    if disc < 0.0:
        return None
    t = c / (math.sqrt(disc) - b)  # the near root (-b - √disc) / a, without cancellation
    if t > max_t:
        return None
    return t, unit((ox + t * dx, oy + t * dy, oz + t * dz))


def _cast_point(_, ox, oy, oz, dx, dy, dz, max_t):
    # A point is hit by rays passing within DEGENERATE_THICKNESS of it, relative to the origin's
    # distance (a point has no size of its own); the normal then opposes the ray.
    radius = DEGENERATE_THICKNESS * math.sqrt(ox * ox + oy * oy + oz * oz)
    return _cast_sphere(radius, ox, oy, oz, dx, dy, dz, max_t)


def _cast_box(half, ox, oy, oz, dx, dy, dz, max_t):
    hx, hy, hz = half
    if -hx <= ox <= hx and -hy <= oy <= hy and -hz <= oz <= hz:
        return _INSIDE
    enter, leave, face = -_INF, _INF, -1
    for axis, o, d, h in ((0, ox, dx, hx), (1, oy, dy, hy), (2, oz, dz, hz)):
        span = _slab(o, d, h)
        if span is None:
            return None
        if span[0] > enter:  # ties keep the lower axis: a face normal of the edge
            enter, face = span[0], axis
        if span[1] < leave:
            leave = span[1]
    # The origin is outside, so a ray that meets the box enters it at enter > 0.
    if enter > leave or leave < 0.0 or enter > max_t:
        return None
    normal = [0.0, 0.0, 0.0]
    normal[face] = -1.0 if (dx, dy, dz)[face] > 0.0 else 1.0
    return enter, tuple(normal)


def _cast_capsule(params, ox, oy, oz, dx, dy, dz, max_t):
    r, h = params
    ez = oz - min(max(oz, -h), h)  # offset from the segment along z
    if ox * ox + oy * oy + ez * ez <= r * r:
        return _INSIDE
    span = _circle_span(ox, oy, dx, dy, r)
    if span is None or span[1] < 0.0:
        return None  # the capsule lies in the infinite cylinder, which the ray misses
    if span[0] >= 0.0:
        t = span[0]
        z = oz + t * dz
        if -h <= z <= h:  # enters through the side
            if t > max_t:
                return None
            return t, unit((ox + t * dx, oy + t * dy, 0.0))
        cap = math.copysign(h, z)  # enters the cylinder beyond a cap: that sphere or nothing
    else:
        cap = math.copysign(h, oz)  # starts in the cylinder beyond a cap
    return _cast_sphere(r, ox, oy, oz - cap, dx, dy, dz, max_t)


def _cast_cylinder(params, ox, oy, oz, dx, dy, dz, max_t):
    r, h = params
    if ox * ox + oy * oy <= r * r and -h <= oz <= h:
        return _INSIDE
    side = _circle_span(ox, oy, dx, dy, r)
    if side is None:
        return None
    slab = _slab(oz, dz, h)
    if slab is None:
        return None
    enter, leave = max(side[0], slab[0]), min(side[1], slab[1])
    if enter > leave or leave < 0.0 or enter > max_t:
        return None
    t = max(enter, 0.0)
    if side[0] >= slab[0]:  # the side is entered last (at the rim too): the radial normal
        return t, unit((ox + t * dx, oy + t * dy, 0.0))
    return t, (0.0, 0.0, -1.0 if dz > 0.0 else 1.0)


def _cast_cone(params, ox, oy, oz, dx, dy, dz, max_t):
    """The cone is {|xy| <= k w, -h <= z <= h} with w = h - z the depth below the apex and
    k = radius / height: the double cone |xy|² <= k² w² cut by the slab |z| <= h, whose top
    plane z = h (the apex) discards the upper nappe and whose base plane is the base disc."""
    h, k, cos_side, sin_side, apex = params
    w0 = h - oz
    rho = math.sqrt(ox * ox + oy * oy)
    if -h <= oz and rho <= k * w0:
        return _INSIDE
    slab = _slab(oz, dz, h)
    if slab is None:
        return None
    # f(t) = |xy(t)|² - k² w(t)² = A t² + 2 B t + C with w(t) = w0 - dz t; A and C as products
    # of a difference and a sum, and B² - A C = k² |w0 dxy + dz oxy|² - (oxy × dxy)² (expanded
    # and regrouped), so that no term cancels |o|²|d|² against itself.
    sd, kd, kw = math.sqrt(dx * dx + dy * dy), k * abs(dz), k * abs(w0)
    a = (sd - kd) * (sd + kd)
    b = ox * dx + oy * dy + k * k * w0 * dz
    c = (rho - kw) * (rho + kw)
    if a == 0.0:  # parallel to a generator: f is linear
        if b == 0.0:
            pieces = ((-_INF, _INF),) if c <= 0.0 else ()
        else:
            root = -c / (2.0 * b)
            pieces = ((-_INF, root),) if b > 0.0 else ((root, _INF),)
    else:
        gx, gy = w0 * dx + dz * ox, w0 * dy + dz * oy
        cross = ox * dy - oy * dx
        disc = k * k * (gx * gx + gy * gy) - cross * cross
        if disc < 0.0:
            if a > 0.0:
                return None
            disc = 0.0  # a steep line always meets both nappes: rounding
        q = -(b + math.copysign(math.sqrt(disc), b))
        t1, t2 = (q / a, c / q) if q != 0.0 else (0.0, 0.0)
        if t1 > t2:
            t1, t2 = t2, t1
        # Shallow lines (a > 0) are inside the double cone between the roots; steep ones
        # outside them, and the slab keeps the part in the lower nappe.
        pieces = ((t1, t2),) if a > 0.0 else ((-_INF, t1), (t2, _INF))
    best, side = _INF, False
    for lo, hi in pieces:
        enter, leave = max(lo, slab[0]), min(hi, slab[1])
        if enter <= leave and leave >= 0.0 and enter < best:
            best, side = enter, lo >= slab[0]
    if best == _INF or best > max_t:
        return None
    t = max(best, 0.0)
    if not side:  # through the base, or (moving down) the apex plane: only at the apex
        return t, (0.0, 0.0, -1.0 if dz > 0.0 else 1.0)
    px, py = ox + t * dx, oy + t * dy
    radial = math.sqrt(px * px + py * py)
    if radial <= apex:  # at the apex to rounding, where the side's direction is noise
        return t, (0.0, 0.0, 1.0)  # the axis of the apex's normal cone
    s = cos_side / radial
    return t, (px * s, py * s, sin_side)


def _thicken(sizes):
    """Zero sizes raised to DEGENERATE_THICKNESS × the largest; None if all are zero."""
    largest = max(sizes)
    if largest == 0.0:
        return None
    floor = DEGENERATE_THICKNESS * largest
    return tuple(max(s, floor) for s in sizes)


def _capsule_or_degenerate(radius, half_height):
    """The closed form of ``Capsule(radius, half_height)``, zero sizes included."""
    if half_height == 0.0:
        return (_cast_sphere, radius) if radius > 0.0 else (_cast_point, None)
    radius = max(radius, DEGENERATE_THICKNESS * half_height)
    return _cast_capsule, (radius, half_height)


def _cylinder_or_degenerate(radius, half_height):
    """The closed form of ``Cylinder(radius, half_height)``: a thin one for a disc, a thin
    capsule for a segment."""
    if radius == 0.0:
        return _capsule_or_degenerate(0.0, half_height)
    return _cast_cylinder, (radius, max(half_height, DEGENERATE_THICKNESS * radius))


def _box_form(half):
    half = _thicken(half)
    return (_cast_point, None, None) if half is None else (_cast_box, half, None)


def _sphere_form(r):
    return (_cast_sphere, r, None) if r > 0.0 else (_cast_point, None, None)


def _ellipsoid_form(radii):
    radii = _thicken(radii)
    return (_cast_point, None, None) if radii is None else (_cast_sphere, 1.0, radii)


def _cone_form(r, h):
    if r == 0.0 or h == 0.0:  # a segment, or a disc at z = 0
        return (*_cylinder_or_degenerate(r, h), None)
    k = r / (2.0 * h)
    slant = math.sqrt(1.0 + k * k)
    return _cast_cone, (h, k, 1.0 / slant, k / slant, DEGENERATE_THICKNESS * r), None


# Per ray form of the kinds (``kinds.RAY_*``), from its sizes: (cast, params, radii), ``radii``
# None except for an ellipsoid, cast as the unit sphere seen through diag(radii).
_CLOSED_FORMS = {
    kinds.RAY_POINT: lambda: (_cast_point, None, None),
    kinds.RAY_BOX: _box_form,
    kinds.RAY_SPHERE: _sphere_form,
    kinds.RAY_ELLIPSOID: _ellipsoid_form,
    kinds.RAY_CAPSULE: lambda r, h: (*_capsule_or_degenerate(r, h), None),
    kinds.RAY_CYLINDER: lambda r, h: (*_cylinder_or_degenerate(r, h), None),
    kinds.RAY_CONE: _cone_form,
}


def closed_form(shape):
    """(cast, params, radii) for a shape whose own kind (its exact type's entry, ``kinds``) has a
    ray form, else None: subclasses and composites keep the GJK ray cast."""
    kind = kinds.own_kind(type(shape))
    if kind is None or kind.ray is None:
        return None
    form, *sizes = kind.ray(shape)
    return _CLOSED_FORMS[form](*sizes)
