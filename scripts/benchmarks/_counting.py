"""Benchmark instrumentation for ``Hull``: a hull that counts the vertices its climb reads.

Kept out of the core (which carries no benchmark code): ``CountingHull`` runs the very same
``Hull.support_xyz``, only over vertex and neighbour lists that count their reads, so the shape
itself pays nothing for being measurable. Used by ``benchmarks/hull.py`` and ``tests/test_hull.py``.
"""

from __future__ import annotations

from convex_tools.core.hull import Hull


class _CountingList(list):
    """The vertex list of a ``CountingHull``: counts every vertex the shared climb reads."""

    __slots__ = ("reads",)

    def __getitem__(self, i):
        self.reads += 1
        return list.__getitem__(self, i)


class _CountingNeighbours(list):
    """The neighbour lists of a ``CountingHull``: each list read counts its vertices as read."""

    __slots__ = ("counter",)

    def __getitem__(self, i):
        item = list.__getitem__(self, i)
        self.counter.reads += len(item)
        return item


class CountingHull(Hull):
    """A ``Hull`` that always climbs and counts the vertices its support calls evaluate (for
    benchmarks and tests).

    It runs the very same ``Hull.support_xyz``, reading vertices through a list that counts the
    reads, so ``Hull`` itself pays nothing for the instrumentation. ``visits`` is
    ``(vertices evaluated, calls, most in one call)``; ``reset_visits`` starts over.
    """

    __slots__ = ("_counts",)

    def __init__(self, points) -> None:
        super().__init__(points, "climb")
        counted = _CountingList(self._vl)
        counted.reads = 0
        object.__setattr__(self, "_vl", counted)
        neighbours = _CountingNeighbours(self._nbrs)
        neighbours.counter = counted
        object.__setattr__(self, "_nbrs", neighbours)
        object.__setattr__(self, "_counts", [0, 0])  # calls, most in one call

    @property
    def visits(self) -> tuple:
        # every call reads its result vertex once more on return
        calls, most = self._counts
        return (self._vl.reads - calls, calls, most)

    def reset_visits(self) -> None:
        self._vl.reads = 0
        self._counts[:] = [0, 0]

    def support_xyz(self, x, y, z):
        before = self._vl.reads
        result = Hull.support_xyz(self, x, y, z)
        counts = self._counts
        counts[0] += 1
        counts[1] = max(counts[1], self._vl.reads - before - 1)
        return result
