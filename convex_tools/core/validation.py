"""Argument checks shared by the shapes and queries: every rejection is a ValueError naming the
argument, raised at the boundary so that nothing fails later from deep inside numpy.

**The supported range.** Every coordinate of every shape (its sizes and its position together)
lies within ``MAX_COORDINATE`` of the origin, and every non-zero size (a length, radius, half
extent, a matrix's scale, a shape's largest dimension) is at least ``MIN_SIZE``. Inside that
range every query works to its stated, size-relative tolerances; outside it the constructors
(of primitives and composites) and the queries (for a ``Hull``, which ``convex_hull`` builds at
any scale) raise a ValueError that names the argument and the range. The limits come from the
algorithms' own arithmetic: GJK's and EPA's flatness tests form products of up to six lengths
(a tetrahedron's squared volume against its squared edge lengths), which leave the normal range
of doubles beyond about 1e±51; the range keeps a factor 1e10 of headroom on both sides, since
support points of curved shapes cluster within about 1e-8 of the shapes' size near convergence.
Ray directions and sweep translations are scaled internally (by a power of two, exactly), so
only their length's range, ``MIN_DIRECTION`` to ``MAX_DIRECTION``, is limited: it keeps the
ray parameter t (distance / length) a normal double for every distance inside the range.
"""

from __future__ import annotations

import math

import numpy as np

# Largest |coordinate| of a point of a shape, a ray origin or a translation of a shape.
MAX_COORDINATE = 1e40
# Smallest non-zero size: a length, radius or half extent, the scale of a matrix (its largest
# entry), or a transformed shape's largest dimension. Zero sizes (flat shapes, points) are valid.
MIN_SIZE = 1e-40
# Range of the length of a ray direction or of a sweep's relative translation.
MAX_DIRECTION = 1e200
MIN_DIRECTION = 1e-200

# The last row of an affine matrix must be (0, 0, 0, 1) to within this.
AFFINE_ROW_TOLERANCE = 1e-12
# A matrix is singular when |det| <= this, its 3x3 part scaled to a largest entry of 1 (so that
# the test neither overflows nor underflows, and does not depend on the matrix's scale).
SINGULAR_DETERMINANT = 1e-12

_RANGE = f"the supported range is {MIN_SIZE:g} to {MAX_COORDINATE:g}"


def shape(name: str, value):
    """A convex_tools shape: a ``Shape``, or any object with a ``support_xyz`` mapping, which is
    given the defaults of a sharp shape for what it does not define (``shapes.Custom``).

    Primitives and composites check the supported range when they are made; a shape that did
    not (a ``Hull``, which is built at any scale, or a ``Shape`` subclass of the user's) is
    checked here the first time, from its bounding box (``Shape.extent``, kept)."""
    if isinstance(value, _shapes.Shape):
        if getattr(value, "_extent", None) is None:
            _shapes.check_extent(name, value)
        return value
    if not callable(getattr(value, "support_xyz", None)):
        raise ValueError(f"{name} must be a convex_tools shape (anything with support_xyz), "
                         f"got {type(value).__name__}")
    return _shapes.Custom(value, name)


def finite_scalar(name: str, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


def size(name: str, value) -> float:
    """A length: zero (a degenerate, valid size) or between MIN_SIZE and MAX_COORDINATE."""
    x = finite_scalar(name, value)
    if x < 0.0:
        raise ValueError(f"{name} must not be negative, got {x}")
    if x != 0.0 and not MIN_SIZE <= x <= MAX_COORDINATE:
        raise ValueError(f"{name} must be 0 or between {MIN_SIZE:g} and {MAX_COORDINATE:g} "
                         f"(the supported range), got {x:g}")
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


def xyz(name: str, value) -> tuple:
    """A finite 3-vector as three floats: the plain-float fast path of ``vector`` for the
    queries whose arguments are checked per call (a ray cast, a sweep), where numpy's per-call
    overhead would dominate."""
    if isinstance(value, (tuple, list)) or (isinstance(value, np.ndarray) and value.shape == (3,)):
        try:
            x, y, z = (float(c) for c in value)
        except (TypeError, ValueError):
            x = y = z = math.nan
        if math.isfinite(x) and math.isfinite(y) and math.isfinite(z):
            return x, y, z
    v = vector(name, value)  # raises a ValueError naming the problem
    return float(v[0]), float(v[1]), float(v[2])


def max_t(value) -> float:
    """A ray's length limit: a number >= 0, inf for an unbounded ray."""
    try:
        t = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"max_t must be a number, got {value!r}") from None
    if math.isnan(t) or t < 0.0:
        raise ValueError(f"max_t must be >= 0 (inf for an unbounded ray), got {t}")
    return t


def coordinates(name: str, value, n: int = 3) -> np.ndarray:
    """A point or offset: finite, every component within MAX_COORDINATE."""
    v = vector(name, value, n)
    if np.any(np.abs(v) > MAX_COORDINATE):
        raise ValueError(f"{name} must have every coordinate within ±{MAX_COORDINATE:g} "
                         f"(the supported range), got {v.tolist()}")
    return v


def sizes(name: str, value, n: int = 3) -> tuple:
    v = vector(name, value, n)
    if np.any(v < 0.0):
        raise ValueError(f"{name} must not be negative, got {v.tolist()}")
    out = tuple(float(x) for x in v)
    if any(x != 0.0 and not MIN_SIZE <= x <= MAX_COORDINATE for x in out):
        raise ValueError(f"{name} must each be 0 or between {MIN_SIZE:g} and "
                         f"{MAX_COORDINATE:g} (the supported range), got {list(out)}")
    return out


def direction(name: str, value) -> np.ndarray:
    v = vector(name, value)
    if not np.any(v):
        raise ValueError(f"{name} must be a non-zero vector")
    return v


def direction_scale(name: str, x: float, y: float, z: float) -> int:
    """The power of two e with max |component| · 2^-e in [0.5, 1), for a ray direction or a
    relative translation (x, y, z) of finite floats: dividing by 2^e is exact, and it keeps the
    squares formed from the direction finite. ValueError if it is zero or its length is out of
    the range MIN_DIRECTION to MAX_DIRECTION."""
    big = max(abs(x), abs(y), abs(z))
    if big == 0.0:
        raise ValueError(f"{name} must be a non-zero vector")
    # The length itself, not the largest component (which is up to √3 shorter): hypot scales,
    # so it neither overflows nor underflows at the ends of the range.
    length = math.hypot(x, y, z)
    if not MIN_DIRECTION <= length <= MAX_DIRECTION:
        raise ValueError(f"{name} must have a length between {MIN_DIRECTION:g} and "
                         f"{MAX_DIRECTION:g} (the supported range), got {[x, y, z]} "
                         f"(length {length:g})")
    return math.frexp(big)[1]


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

    Its scale (largest entry of the 3x3 part) must lie in MIN_SIZE to MAX_COORDINATE and its
    translation within MAX_COORDINATE. Returns a new array (never the caller's). Checked in
    plain floats: this runs for every ``Transformed`` and numpy's per-call overhead on a 4x4
    would dominate it.
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
    tol = AFFINE_ROW_TOLERANCE
    if abs(last[0]) > tol or abs(last[1]) > tol or abs(last[2]) > tol or abs(last[3] - 1.0) > tol:
        raise ValueError(f"{name} must be affine (last row 0 0 0 1), got {last}")
    (a, b, c, tx), (d, e, f, ty), (g, h, i, tz) = rows[:3]
    scale = max(abs(a), abs(b), abs(c), abs(d), abs(e), abs(f), abs(g), abs(h), abs(i))
    if scale == 0.0:
        raise ValueError(f"{name} is singular (its 3x3 part is zero)")
    if not MIN_SIZE <= scale <= MAX_COORDINATE:
        raise ValueError(f"{name} must have a scale (largest entry of its 3x3 part) between "
                         f"{MIN_SIZE:g} and {MAX_COORDINATE:g} (the supported range), got "
                         f"{scale:g}")
    if max(abs(tx), abs(ty), abs(tz)) > MAX_COORDINATE:
        raise ValueError(f"{name} must have a translation with every coordinate within "
                         f"±{MAX_COORDINATE:g} (the supported range), got {[tx, ty, tz]}")
    # Relative singularity test on the 3x3 part scaled to a largest entry of 1: a uniformly
    # tiny (1e-30) but invertible matrix is accepted and a rank-deficient one is not.
    s = 1.0 / scale
    a, b, c, d, e, f, g, h, i = a * s, b * s, c * s, d * s, e * s, f * s, g * s, h * s, i * s
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    if abs(det) <= SINGULAR_DETERMINANT:
        raise ValueError(f"{name} is singular (its 3x3 part cannot be inverted)")
    return m


# Imported last: shapes imports this module, and ``shape`` needs its classes only at call time.
from . import shapes as _shapes  # noqa: E402
