"""Small plain-float geometry shared by the algorithms: 3-vectors as tuples (or any sequence of
three floats) and 3x3 matrices as 9 row-major floats.

Everything here is plain Python arithmetic: the callers run it a few times per support call,
where numpy's per-call overhead (about 1 µs per tiny array operation) would cost more than the
arithmetic itself. This module imports nothing from the package: every layer may use it.
"""

from __future__ import annotations

import math


def unit(v):
    """v / |v|, or the zero vector for a zero v."""
    x, y, z = v
    n = math.sqrt(x * x + y * y + z * z)
    if n == 0.0:
        return (0.0, 0.0, 0.0)
    return (x / n, y / n, z / n)


def norm(v):
    """|v|"""
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def apply(m, v):
    """m v for m a row-major 3x3 matrix as 9 floats."""
    x, y, z = v
    return (m[0] * x + m[1] * y + m[2] * z,
            m[3] * x + m[4] * y + m[5] * z,
            m[6] * x + m[7] * y + m[8] * z)


def apply_transpose(m, v):
    """mᵀ v: normals map between frames by transposes (world = M⁻ᵀ local, local = Mᵀ world)."""
    x, y, z = v
    return (m[0] * x + m[3] * y + m[6] * z,
            m[1] * x + m[4] * y + m[7] * z,
            m[2] * x + m[5] * y + m[8] * z)
