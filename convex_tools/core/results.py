"""Result records returned by the queries, and the status that says why an algorithm stopped.

Results are small slotted dataclasses of numpy vectors (the public contract in API.md); the
algorithms compute in plain floats and build these only once, on the way out (not frozen:
frozen dataclasses pay an ``object.__setattr__`` per field, a measurable cost per query).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np


class Status(enum.Enum):
    """Why an iterative algorithm stopped (what a caller may trust about the answer)."""

    CONVERGED = "converged"                # upper and lower bounds met within tolerance
    SEPARATED = "separated"                # a separating axis was found (early out)
    INTERSECTING = "intersecting"          # the origin is in the simplex / polytope
    TOUCHING = "touching"                  # distance within the absolute tolerance of zero
    REPEATED_SUPPORT = "repeated_support"  # the new support point was already in the simplex
    NO_PROGRESS = "no_progress"            # the bound stopped improving (numerical floor)
    DEGENERATE = "degenerate"              # input was degenerate; a fallback gave the answer
    ITERATION_LIMIT = "iteration_limit"    # the named iteration cap was reached
    FAILED = "failed"                      # no trustworthy answer (never silently wrong)


class Code(enum.IntEnum):
    """The batched engines' stops (``batch``, ``batch_epa``), as small integers in their state
    arrays: a pair still RUNNING, one of the ``Status`` values it ends with (``STATUS_OF``),
    CLEAR (``batch.screen``: certified at least its required clearance apart, its distance not
    measured), or FALLBACK (no answer: the caller asks the single query)."""

    RUNNING = 0
    CONVERGED = 1
    REPEATED = 2
    INTERSECTING = 3
    TOUCHING = 4
    CLEAR = 5
    FALLBACK = 6


# The ``Status`` each batched stop reports (RUNNING and FALLBACK report none).
STATUS_OF = {Code.CONVERGED: Status.CONVERGED, Code.REPEATED: Status.REPEATED_SUPPORT,
             Code.INTERSECTING: Status.INTERSECTING, Code.TOUCHING: Status.TOUCHING,
             Code.CLEAR: Status.SEPARATED}


@dataclass(slots=True)
class DistanceResult:
    """Closest points of two convex shapes.

    ``point_a`` lies on A and ``point_b`` on B with ``|point_a - point_b| == distance``; when the
    shapes overlap ``distance == 0.0`` and ``intersecting`` is True (the points are then a common
    point, not a penetration witness: use ``penetration`` for that).

    ``part_a``/``part_b``: on a ``Compound`` or ``TriangleMesh``, the index of the part (of A, of
    B) that realised the result; None on a convex shape.

    ``engine``: "batch" when the batched engine (``batch``) answered, "single" when it handed
    the pair to the single query; empty from a single query called directly. (``method`` is
    its former name, kept as an alias: ``Contact.method`` names the depth method instead.)
    """

    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    intersecting: bool
    iterations: int
    support_calls: int = 0
    status: Status = Status.CONVERGED
    part_a: int | None = None
    part_b: int | None = None
    engine: str = ""

    @property
    def method(self) -> str:
        """``engine`` (its former name)."""
        return self.engine

    @method.setter
    def method(self, value: str) -> None:
        self.engine = value

    @property
    def normal(self) -> np.ndarray:
        """Unit vector from A toward B (zero when touching or overlapping)."""
        d = self.point_b - self.point_a
        n = float(np.linalg.norm(d))
        return d / n if n > 0.0 else np.zeros(3)


@dataclass(slots=True)
class Contact:
    """Penetration of two overlapping shapes: ``point_a - point_b == depth * normal``.

    ``normal`` points from A toward B; translating A by ``-depth * normal`` leaves the shapes
    touching.

    ``part_a``/``part_b``: on a ``Compound`` or ``TriangleMesh``, the index of the part (of A, of
    B) that realised the result; None on a convex shape.
    """

    depth: float
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    iterations: int = 0
    support_calls: int = 0
    status: Status = Status.CONVERGED
    method: str = ""
    part_a: int | None = None
    part_b: int | None = None


@dataclass(slots=True)
class Manifold:
    """Contact region: ``points`` (K,3) on the mid-plane and their ``depths`` (K,) along ``normal``.

    ``status`` is that of the penetration the normal comes from (``Contact.status``: CONVERGED,
    TOUCHING for a zero-depth contact, or what says it is not exact).

    On a ``Compound`` or ``TriangleMesh``: ``part_a``/``part_b`` name the parts of the deepest
    contact (the one ``normal`` and ``status`` come from) and ``parts`` the (part of A, part of
    B) each point came from (None for a convex shape's side); all None for two convex shapes.
    """

    normal: np.ndarray
    points: np.ndarray
    depths: np.ndarray
    support_calls: int = 0
    status: Status = Status.CONVERGED
    part_a: int | None = None
    part_b: int | None = None
    parts: list | None = None

    def __len__(self) -> int:
        return len(self.points)


@dataclass(slots=True)
class RayHit:
    """``point == origin + t * direction``; ``normal`` is the outward unit normal (zero if inside).

    ``part``: on a ``Compound`` or ``TriangleMesh``, the index of the part hit; else None.
    """

    t: float
    point: np.ndarray
    normal: np.ndarray
    iterations: int = 0
    support_calls: int = 0
    status: Status = Status.CONVERGED
    part: int | None = None


@dataclass(slots=True)
class SweepHit:
    """First time of contact ``t`` in [0, 1], the contact ``point`` and ``normal`` (A toward B).

    ``part_a``/``part_b``: on a ``Compound`` or ``TriangleMesh``, the index of the part (of A, of
    B) that realised the result; None on a convex shape.
    """

    t: float
    point: np.ndarray
    normal: np.ndarray
    iterations: int = 0
    support_calls: int = 0
    status: Status = Status.CONVERGED
    part_a: int | None = None
    part_b: int | None = None


@dataclass
class SeparationCache:
    """Warm start carried between calls on one pair (ISA-GJK, seed 000 §3).

    ``axis`` is the last separating axis (or last GJK ``v``) in the pair's common frame; None
    until the first query, which then starts from the shapes' centre difference. A query on a
    slowly moving pair starts from it and usually ends after one support call.
    """

    axis: tuple | None = None
    calls: int = 0               # queries made with this cache
    hits: int = 0                # queries that ended on their first support call
    last_support_calls: int = 0  # support calls of the latest query

    def record(self, v: tuple, support_calls: int) -> None:
        self.calls += 1
        self.hits += support_calls == 1
        self.last_support_calls = support_calls
        if v != (0.0, 0.0, 0.0):
            self.axis = v
