"""Argument checks shared by the shapes and queries: every rejection is a ValueError naming the
argument, raised at the boundary so that nothing fails later from deep inside numpy."""

from __future__ import annotations

import math

import numpy as np


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
    """A 4x4 invertible affine matrix (last row 0 0 0 1); a 3x3 matrix is taken as linear."""
    try:
        m = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 4x4 matrix of numbers") from None
    if m.shape == (3, 3):
        m4 = np.eye(4)
        m4[:3, :3] = m
        m = m4
    if m.shape != (4, 4):
        raise ValueError(f"{name} must be a 4x4 affine matrix, got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    if not np.allclose(m[3], (0.0, 0.0, 0.0, 1.0), rtol=0.0, atol=1e-12):
        raise ValueError(f"{name} must be affine (last row 0 0 0 1), got {m[3].tolist()}")
    linear = m[:3, :3]
    scale = float(np.max(np.abs(linear)))
    # Relative singularity test: |det| against the cube of the matrix's scale, so that a
    # uniformly tiny (1e-6) but invertible matrix is accepted and a rank-deficient one is not.
    if scale == 0.0 or abs(float(np.linalg.det(linear))) <= 1e-12 * scale ** 3:
        raise ValueError(f"{name} is singular (its 3x3 part cannot be inverted)")
    return m
