"""Argument checks shared by the shapes and queries: every rejection is a ValueError naming the
argument, raised at the boundary so that nothing fails later from deep inside numpy."""

from __future__ import annotations

import math

import numpy as np


def shape(name: str, value):
    """A convex_tools shape: anything with a ``support_xyz`` mapping."""
    if not callable(getattr(value, "support_xyz", None)):
        raise ValueError(f"{name} must be a convex_tools shape, got {type(value).__name__}")
    return value


def finite_scalar(name: str, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


def size(name: str, value) -> float:
    """A non-negative finite length (zero is a valid, degenerate size)."""
    x = finite_scalar(name, value)
    if x < 0.0:
        raise ValueError(f"{name} must not be negative, got {x}")
    return x


def vector(name: str, value, n: int = 3) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {n} numbers, got {value!r}") from None
    if v.shape != (n,):
        raise ValueError(f"{name} must be {n} numbers, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite, got {v.tolist()}")
    return v


def sizes(name: str, value, n: int = 3) -> tuple:
    v = vector(name, value, n)
    if np.any(v < 0.0):
        raise ValueError(f"{name} must not be negative, got {v.tolist()}")
    return tuple(float(x) for x in v)


def direction(name: str, value) -> np.ndarray:
    v = vector(name, value)
    if not np.any(v):
        raise ValueError(f"{name} must be a non-zero vector")
    return v


def points(name: str, value) -> np.ndarray:
    try:
        p = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an (N, 3) array of numbers") from None
    if p.ndim == 1 and p.shape == (3,):
        p = p.reshape(1, 3)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"{name} must be an (N, 3) array, got shape {p.shape}")
    if len(p) == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return p


def affine_matrix(name: str, value) -> np.ndarray:
    """A 4x4 invertible affine matrix (last row 0 0 0 1); a 3x3 matrix is taken as linear.

    Returns a new array (never the caller's). Checked in plain floats: this runs for every
    ``Transformed`` and numpy's per-call overhead on a 4x4 would dominate it.
    """
    try:
        m = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 4x4 matrix of numbers") from None
    if m.shape == (3, 3):
        m4 = np.eye(4)
        m4[:3, :3] = m
        m = m4
    if m.shape != (4, 4):
        raise ValueError(f"{name} must be a 4x4 affine matrix, got shape {m.shape}")
    rows = m.tolist()
    if not all(math.isfinite(x) for row in rows for x in row):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    last = rows[3]
    if abs(last[0]) > 1e-12 or abs(last[1]) > 1e-12 or abs(last[2]) > 1e-12 \
            or abs(last[3] - 1.0) > 1e-12:
        raise ValueError(f"{name} must be affine (last row 0 0 0 1), got {last}")
    (a, b, c, _), (d, e, f, _), (g, h, i, _) = rows[:3]
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    scale = max(abs(a), abs(b), abs(c), abs(d), abs(e), abs(f), abs(g), abs(h), abs(i))
    # Relative singularity test: |det| against the cube of the matrix's scale, so that a
    # uniformly tiny (1e-6) but invertible matrix is accepted and a rank-deficient one is not.
    if scale == 0.0 or abs(det) <= 1e-12 * scale ** 3:
        raise ValueError(f"{name} is singular (its 3x3 part cannot be inverted)")
    return m
