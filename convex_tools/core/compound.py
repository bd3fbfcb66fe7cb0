"""Compound shapes: a concave object as a list of convex parts under one box tree.

``Compound(parts, names=None)`` is how engines (Jolt's compound shapes, Bullet's
``btCompoundShape``, rapier's compounds) and the game artists who author collision for them
describe an arch, an L-shaped wall or a modular kit piece: a few convex pieces, each placed by its
own matrix (``Transformed``). Queries on a compound are the convex queries over pairs of parts,
with an ``AABBTree`` (``bvh``) choosing which pairs can matter (``concave`` has the queries).

A compound is *not* a convex shape and does not pose as one: it has no support mapping, so a
convex algorithm given one directly (``gjk.distance``, ``Transformed``, ``MinkowskiSum``) rejects
it with a ValueError instead of silently answering for its convex hull. The public queries
(``convex_tools.core.distance`` and the rest) recognise it and answer part by part.
"""

from __future__ import annotations

import numpy as np

from . import validation
from .bvh import AABBTree
from .shapes import Transformed


class ConcaveShape:
    """Base of the shapes made of convex parts (``Compound``, ``TriangleMesh``).

    A concave shape has ``tree`` (an ``AABBTree`` whose item ``i`` is part ``i``), ``part(i)``
    (that part as a convex shape in the common frame), ``part_id(i)`` (the index results give
    for it), ``part_label(part_id)`` (how reports name it) and ``aabb()``. It has no
    ``support_xyz``: that is what keeps it out of the convex algorithms.
    """

    __slots__ = ()
    kind = "concave"
    is_mesh = False

    def part_id(self, i: int) -> int:
        """The index results report for part ``i`` (``part_a``, ``part_b``, ``part``)."""
        return i

    def __setattr__(self, name, value):
        # Immutable like the convex shapes: queries share parts and trees between calls.
        if hasattr(self, "_frozen"):
            raise AttributeError(f"{type(self).__name__} is immutable")
        object.__setattr__(self, name, value)

    def _freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)

    def __reduce__(self):
        # Pickled as the constructor's arguments, as the convex shapes are (``Shape``).
        return (type(self), self._init_args())

    def _init_args(self):
        raise NotImplementedError


def convex_part(name: str, value):
    """``value`` as a convex shape with a box: a ``Shape`` as it is, a user's plain class with
    ``support_xyz`` wrapped as every query wraps it (``validation.shape``); a concave one is
    refused with a message that says what to do instead."""
    if isinstance(value, ConcaveShape):
        raise ValueError(f"{name} is a {type(value).__name__}, not a convex shape "
                         f"(a Compound's parts are convex: list their parts instead)")
    return validation.shape(name, value)


class Compound(ConcaveShape):
    """A concave shape made of convex ``parts`` (each a shape, usually a ``Transformed`` one; a
    user's plain class with ``support_xyz`` is kept wrapped, as the queries wrap it).

    ``names`` (optional, one string per part) label the parts in level reports, e.g. the
    collision-proxy objects they came from; without them a part is labelled ``"part 3"``.
    Results of queries name the part(s) that realised them by index into ``parts``.
    """

    __slots__ = ("_parts", "_names", "_tree", "_lower", "_upper", "_frozen", "__weakref__")
    kind = "compound"

    def __init__(self, parts, names=None) -> None:
        if isinstance(parts, (str, bytes)) or not hasattr(parts, "__iter__"):
            raise ValueError(f"parts must be a sequence of convex shapes, got "
                             f"{type(parts).__name__}")
        parts = tuple(parts)
        if not parts:
            raise ValueError("parts must not be empty (a Compound needs at least one part)")
        parts = tuple(convex_part(f"parts[{i}]", p) for i, p in enumerate(parts))
        if names is not None:
            names = tuple(str(n) for n in names)
            if len(names) != len(parts):
                raise ValueError(f"names has {len(names)} entries for {len(parts)} parts")
        boxes = [p.aabb() for p in parts]
        lower = np.array([b[0] for b in boxes], dtype=float)
        upper = np.array([b[1] for b in boxes], dtype=float)
        if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
            bad = int(np.flatnonzero(~np.all(np.isfinite(lower) & np.isfinite(upper),
                                             axis=1))[0])
            raise ValueError(f"parts[{bad}] has a non-finite bounding box")
        self._parts = parts
        self._names = names
        self._tree = AABBTree(lower, upper)
        self._lower, self._upper = lower.min(axis=0), upper.max(axis=0)
        self._lower.setflags(write=False)
        self._upper.setflags(write=False)
        self._freeze()

    def _init_args(self):
        return (self._parts, self._names)

    @property
    def parts(self) -> tuple:
        return self._parts

    @property
    def names(self):
        """The part names given at construction, or None."""
        return self._names

    @property
    def tree(self) -> AABBTree:
        return self._tree

    def __len__(self) -> int:
        return len(self._parts)

    def part(self, i: int):
        return self._parts[i]

    def part_label(self, part_id: int) -> str:
        """How a report names the part results call ``part_id``: its name, else "part 3"."""
        return self._names[part_id] if self._names is not None else f"part {part_id}"

    def aabb(self) -> tuple:
        """The box around all parts ``(lower, upper)``."""
        return self._lower.copy(), self._upper.copy()

    def transformed(self, matrix) -> "Compound":
        """This compound under a 4×4 affine ``matrix`` (each part wrapped in ``Transformed``;
        nested transforms fold into one): e.g. an object's local parts placed by its world
        matrix."""
        return Compound([Transformed(p, matrix) for p in self._parts], self._names)

    def __repr__(self) -> str:
        return f"Compound(<{len(self._parts)} parts>)"
