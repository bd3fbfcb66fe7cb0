"""Measured pairs → findings, as a level designer means them (the "classify" stage).

The narrow phase (``level``) measures every pair that may matter: its signed distance s, witness
points, contact normal and parts. This module decides what each measured pair is:

- **support**: B supports A when the contact pushes A out within ``support_angle`` of up (+Z)
  and s <= ``floating`` (overlaps included). A support pair is never ``too_close``; stacks
  support each other.
- **sunk**: A overlaps a *static* supporter deeper than A's allowed ``embed`` plus the touch
  tolerance. Any other overlap deeper than the touch tolerance is an **overlap** (two movable
  crates stacked into each other).
- **too_close**: -touch_tolerance <= s < the pair's clearance, not a support pair.
- **floating**: a must-rest object with no support; its distance is the drop distance, a sweep
  straight down to the first object below (``object_b``; None when nothing is below).

The push direction of a contact (the way A must move to leave B) is minus the contact normal
for an overlap, the direction between the closest points for a gap, and, for two shapes that
touch (where neither says a direction), the change of their distance when A is lifted or
lowered by ``LIFT`` of the floating tolerance: d s / d z is the up component of the push
direction.

Each finding names the object to ``move`` (a movable one; of two, the smaller; none when both
are static or it is an instance a fix cannot move) and the ``translation`` that resolves it: the
depth vector of an overlap, the depth beyond the allowed embed for a sunk object, the missing
gap along the push direction for a pair too close, the drop for a floating object.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import concave
from .queries import distance, penetration, sweep
from .shapes import MinkowskiSum, Sphere, Transformed

OVERLAP, SUNK, TOO_CLOSE, FLOATING = "overlap", "sunk", "too_close", "floating"

# A gap smaller than this share of the pair's size gives no trustworthy direction between its
# closest points (they are rounding apart): the push direction comes from a lift test instead.
DIRECTION_GAP = 1e-9
# The lift test moves A by this share of the floating tolerance (small enough that a curved
# contact's distance changes as its normal says, large against rounding).
LIFT = 0.5
# Lift distance when the floating tolerance is 0, as a share of the pair's size.
LIFT_OF_SIZE = 1e-4
# A contact supports when its push direction's up component is at least cos(support_angle)
# less this (rounding of the normal at exactly the limit angle).
ANGLE_SLACK = 1e-9
# Inflation of A (share of the pair's size, at least the touch tolerance) whose penetration gives
# the normal of two shapes that touch, for a fix's direction.
TOUCH_INFLATION = 1e-6


class Measured(NamedTuple):
    """One measured pair (i, j), row ``row`` of the check's pairs: signed distance, witnesses (on i, on j), the unit contact
    normal from i toward j (None when not known), part labels and mesh contacts."""

    row: int
    i: int
    j: int
    signed: float
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray | None = None
    part_a: str | None = None
    part_b: str | None = None
    contacts: tuple | None = None


class Settings(NamedTuple):
    touch_tolerance: float
    floating: float
    support_angle: float


def push_direction(m: Measured, tolerance: float, scale: float):
    """The unit direction i must move to leave j, or None when the measurement gives none."""
    if m.signed < -tolerance and m.normal is not None:
        return -np.asarray(m.normal, dtype=float)
    if m.signed > 0.0:
        (ax, ay, az), (bx, by, bz) = m.point_a.tolist(), m.point_b.tolist()
        gx, gy, gz = ax - bx, ay - by, az - bz
        length = math.sqrt(gx * gx + gy * gy + gz * gz)
        if length > DIRECTION_GAP * max(scale, 1e-300):
            return np.array([gx / length, gy / length, gz / length])
    if m.normal is not None:
        return -np.asarray(m.normal, dtype=float)
    return None


def lift_slope(a, b, signed, step):
    """Up component of the push direction of i (shape ``a``) from j (``b``) when they touch:
    how fast their distance grows as a rises (positive) or, when that does not grow it, minus
    how fast it grows as a is lowered (b rests on a)."""
    up = distance(_moved(a, (0.0, 0.0, step)), b).distance
    rise = (up - max(signed, 0.0)) / step
    if rise > 0.0:
        return rise
    down = distance(_moved(a, (0.0, 0.0, -step)), b).distance
    return -(down - max(signed, 0.0)) / step


def concave_support(a, b, floating, step, tolerance, scale, cos_up) -> int:
    """Whether a part of ``b`` holds ``a`` up (+1), a part of ``a`` holds ``b`` up (-1), or
    neither (0), for concave shapes (a compound or a triangle mesh on either side): the part
    pairs within ``floating`` of each other, each judged as a convex pair. A triangle entered
    from its front pushes along its normal (the mesh's depth: never through its back)."""
    for part_a, part_b, normal_a, normal_b in concave.part_pairs_within(a, b, floating):
        signed = distance(part_a, part_b)
        if signed.intersecting:
            if normal_b is not None:          # a entered b's triangle: pushed out of its front
                up = normal_b[2]
            elif normal_a is not None:        # b entered a's triangle: a pushed back from it
                up = -normal_a[2]
            else:
                contact = penetration(part_a, part_b)
                if contact is None:
                    up = lift_slope(part_a, part_b, 0.0, step)
                else:
                    up = -float(contact.normal[2])
        elif signed.distance > floating:
            continue
        else:
            # Apart within reach: the direction between the closest points, else (touching)
            # the lift test.
            direction = push_direction(Measured(-1, -1, -1, signed.distance, signed.point_a,
                                                signed.point_b), tolerance, scale)
            up = float(direction[2]) if direction is not None else \
                lift_slope(part_a, part_b, signed.distance, step)
        if up >= cos_up:
            return 1
        if -up >= cos_up:
            return -1
    return 0


def touch_normal(a, b, size, tolerance):
    """Unit normal from a toward b of two shapes that touch (None when none is found): the
    contact normal of a grown by a hair."""
    grow = max(tolerance, TOUCH_INFLATION * size)
    contact = penetration(MinkowskiSum(a, Sphere(grow)), b)
    if contact is None:
        return None
    return np.asarray(contact.normal, dtype=float)


def _moved(shape, offset):
    matrix = np.eye(4)
    matrix[:3, 3] = offset
    return Transformed(shape, matrix)


def drop_distance(shapes, i, lower, upper, static_ok=None):
    """(distance, index) of the first object straight below object i by a sweep, or
    (None, None) when nothing is below. ``lower``/``upper`` are every object's box."""
    below = ((lower[:, 0] <= upper[i, 0]) & (upper[:, 0] >= lower[i, 0])
             & (lower[:, 1] <= upper[i, 1]) & (upper[:, 1] >= lower[i, 1])
             & (lower[:, 2] < upper[i, 2]))
    below[i] = False
    if static_ok is not None:
        below &= static_ok
    candidates = np.flatnonzero(below)
    if not len(candidates):
        return None, None
    reach = float(lower[i, 2] - lower[candidates, 2].min())
    reach = max(reach, 1e-9) * 1.001 + 1e-9
    # The nearest candidates first: once a hit is found, farther boxes cannot be nearer.
    order = candidates[np.argsort(-upper[candidates, 2], kind="stable")]
    best_t, best = None, None
    a = shapes[i]
    for j in order.tolist():
        if best_t is not None and (lower[i, 2] - upper[j, 2]) > best_t * reach:
            break
        hit = sweep(a, shapes[j], (0.0, 0.0, -reach))
        if hit is not None and (best_t is None or hit.t < best_t):
            best_t, best = float(hit.t), j
    if best is None:
        return None, None
    return best_t * reach, best


def cos_limit(settings: Settings) -> float:
    return math.cos(math.radians(settings.support_angle)) - ANGLE_SLACK
