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


def perpendicular(dx, dy, dz):
    """A unit vector perpendicular to the unit vector d (crossed with its smallest axis)."""
    ax, ay, az = abs(dx), abs(dy), abs(dz)
    if ax <= ay and ax <= az:
        px, py, pz = 0.0, -dz, dy        # d × x̂ (up to sign)
    elif ay <= az:
        px, py, pz = dz, 0.0, -dx
    else:
        px, py, pz = -dy, dx, 0.0
    s = 1.0 / math.sqrt(px * px + py * py + pz * pz)
    return px * s, py * s, pz * s
