"""Hull shape (placeholder until Quickhull lands): support by argmax over the points."""

from __future__ import annotations

import numpy as np

from . import validation
from .shapes import Shape


class Hull(Shape):
    __slots__ = ("_vertices", "_vl", "_frozen")
    kind = "hull"

    def __init__(self, points) -> None:
        super().__init__()
        p = validation.points("points", points)
        self._vertices = np.unique(p, axis=0)
        self._vl = [tuple(map(float, v)) for v in self._vertices]
        self._freeze()

    @property
    def vertices(self):
        return self._vertices

    def support_xyz(self, x, y, z):
        best = None
        bd = -float("inf")
        for v in self._vl:
            d = v[0] * x + v[1] * y + v[2] * z
            if d > bd:
                bd, best = d, v
        return best

    def center_xyz(self):
        return tuple(float(c) for c in self._vertices.mean(axis=0))
