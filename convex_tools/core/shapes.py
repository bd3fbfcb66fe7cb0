"""Convex shapes as support mappings (seed 000 §2, seed 001 Table 1).

A shape is anything with ``support_xyz(x, y, z) -> (x, y, z)``: the point of the shape farthest
along the direction, in plain Python floats. That is the hot path of every query, and per-call
numpy overhead (about 1 µs per tiny array operation) would dominate it, so the algorithms call it
directly; ``support(d)`` is the public numpy face of the same mapping.

Every shape also carries a *margin*: the radius of a sphere that is Minkowski-added to a smaller
``core`` shape (a sphere is a point with a margin, a capsule a segment, a round box a box).
GJK runs on the cores, which are polytopes or at least sharper, and adds the margins analytically
(seed 001 §2.3.4) — exact for rounded shapes instead of converging slowly on their curvature.

Primitives are defined in their own local frame with +Z as the axis of axial shapes, as in
Blender. Parameters stay readable (``half_extents``, ``radius``, ``matrix``) so that a batched
engine can stack many shapes of one kind into arrays.
"""

from __future__ import annotations

import math

import numpy as np

from . import validation

_sqrt = math.sqrt
_copysign = math.copysign


class Shape:
    """Base of all shapes. Subclasses implement ``support_xyz`` and set ``margin``/``core``.

    Every shape lies in the supported range (``validation``: coordinates within 1e40 of the
    origin, non-zero sizes at least 1e-40); the constructors check it.
    """

    __slots__ = ("_margin", "_core", "_extent", "__weakref__")
    kind = "shape"
    # A polytope (finitely many vertices): its support mapping only ever returns vertices, so
    # there is no curvature to polish and portal refinement ends exactly on a face.
    polytope = False
    # Smooth and strictly convex (or a point): the support point moves continuously with the
    # direction, so A − B of two such shapes is smooth and Newton's method lands on its depth.
    smooth = False

    def __init__(self) -> None:
        self._margin = 0.0
        self._core = self
        self._extent = None

    # --- the support mapping -------------------------------------------------------------
    def support_xyz(self, x: float, y: float, z: float) -> tuple:
        raise NotImplementedError

    def support(self, direction) -> np.ndarray:
        """The point of the shape farthest along ``direction`` (any point of it for zero)."""
        d = validation.vector("direction", direction)
        x, y, z = float(d[0]), float(d[1]), float(d[2])
        big = max(abs(x), abs(y), abs(z))
        if big > 0.0:
            # Scaled by a power of two to a largest component in [0.5, 1): exact, and the
            # mappings' squares of it stay finite for any finite direction.
            e = -math.frexp(big)[1]
            x, y, z = math.ldexp(x, e), math.ldexp(y, e), math.ldexp(z, e)
        return np.array(self.support_xyz(x, y, z))

    def _posed_support(self, m) -> "callable":
        """``support_xyz`` of the image of this shape under x ↦ B x + c, ``m`` = B (row-major)
        then c: s(v) = B s_shape(Bᵀ v) + c (seed 000 §2). Primitives inline their own mapping.

        The primitives' copies are kept on purpose: this one generic closure in their place
        costs 0.06-0.4 µs more per support call of a rotated primitive, 10-100% (sphere 0.69 →
        0.72-0.82 µs, box 0.61 → 0.69-0.75, cylinder 0.66 → 0.74-0.82, cone 0.37 → 0.66-0.78:
        min of 7 × 200,000 calls, two runs back to back), on the path every query runs most."""
        return _affine_support(self.support_xyz, m)

    # --- derived ------------------------------------------------------------------------
    def aabb(self) -> tuple:
        """Axis-aligned bounding box ``(lower, upper)`` from six support calls (seed 000 §2)."""
        s = self.support_xyz
        return (
            np.array((s(-1.0, 0.0, 0.0)[0], s(0.0, -1.0, 0.0)[1], s(0.0, 0.0, -1.0)[2])),
            np.array((s(1.0, 0.0, 0.0)[0], s(0.0, 1.0, 0.0)[1], s(0.0, 0.0, 1.0)[2])),
        )

    def center_xyz(self) -> tuple:
        """A point in the interior (relative interior for flat shapes); MPR starts its portal here."""
        return (0.0, 0.0, 0.0)

    @property
    def margin(self) -> float:
        """Radius of the sphere swept around ``core`` to make this shape (0 for sharp shapes)."""
        try:
            return self._margin
        except AttributeError:      # a subclass of the user's that skipped Shape.__init__
            return 0.0

    @property
    def core(self) -> "Shape":
        """This shape without its margin: ``self == core ⊕ Sphere(margin)``."""
        try:
            return self._core
        except AttributeError:
            return self

    def extent(self) -> tuple:
        """``(size, reach)``: the shape's largest dimension and the largest |coordinate| of its
        points, each to within a small factor (what the range checks of composites need).
        Primitives know theirs from their parameters; others take their bounding box once."""
        try:
            extent = self._extent
        except AttributeError:
            extent = None
        if extent is None:
            lower, upper = self.aabb()
            extent = (float(np.max(upper - lower)),
                      float(max(np.max(np.abs(lower)), np.max(np.abs(upper)))))
            try:
                object.__setattr__(self, "_extent", extent)
            except AttributeError:  # a subclass of the user's without the slot: recompute
                pass
        return extent

    def __reduce_ex__(self, protocol):
        # Pickled as the constructor's arguments (spawn-based multiprocessing sends shapes so):
        # the slots hold closures (``Transformed``'s support mapping, a hull's tables) and the
        # immutability guard refuses their being set one by one. A user's subclass that does
        # not say its arguments pickles as Python would otherwise.
        args = self._init_args()
        if args is None:
            return super().__reduce_ex__(protocol)
        return (type(self), args)

    def _init_args(self):
        """The arguments that rebuild this shape (``type(self)(*args)``), None if unknown."""
        return None

    def __setattr__(self, name, value):
        # Shapes are immutable: queries cache results keyed on them and composites share them.
        if hasattr(self, "_frozen"):
            raise AttributeError(f"{type(self).__name__} is immutable")
        object.__setattr__(self, name, value)

    def _freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._params_repr()})"

    def _params_repr(self) -> str:
        return ""


def _unit_or_up(x: float, y: float, z: float) -> tuple:
    """(x, y, z) made unit, or +z for the zero vector: the sphere's part of a rounded shape's
    support (Capsule, RoundBox), where along a zero direction any point is a support. Not
    ``geometry.unit``, which gives the zero vector for it; kept here, on the primitives' hot
    path, with the module's ``_sqrt``."""
    n = _sqrt(x * x + y * y + z * z)
    if n == 0.0:
        return (0.0, 0.0, 1.0)
    return (x / n, y / n, z / n)


class Point(Shape):
    """The origin (place it with ``Transformed``)."""

    __slots__ = ("_frozen",)
    kind = "point"
    smooth = True
    polytope = True

    def __init__(self) -> None:
        super().__init__()
        self._extent = (0.0, 0.0)
        self._freeze()

    def support_xyz(self, x, y, z):
        return (0.0, 0.0, 0.0)

    def aabb(self):
        return np.zeros(3), np.zeros(3)

    def _init_args(self):
        return ()


class Segment(Shape):
    """The segment from (0, 0, -h) to (0, 0, +h)."""

    __slots__ = ("_h", "_frozen")
    kind = "segment"
    polytope = True

    def __init__(self, half_length) -> None:
        super().__init__()
        self._h = validation.size("half_length", half_length)
        self._extent = (self._h, self._h)
        self._freeze()

    @property
    def half_length(self) -> float:
        return self._h

    def support_xyz(self, x, y, z):
        return (0.0, 0.0, _copysign(self._h, z))

    def _init_args(self):
        return (self._h,)

    def _params_repr(self):
        return f"{self._h!r}"


class Sphere(Shape):
    """Ball of ``radius`` about the origin; its core is a point and its margin the radius."""

    __slots__ = ("_r", "_frozen")
    kind = "sphere"
    smooth = True

    def __init__(self, radius) -> None:
        super().__init__()
        self._r = validation.size("radius", radius)
        self._margin = self._r
        self._core = Point()
        self._extent = (self._r, self._r)
        self._freeze()

    @property
    def radius(self) -> float:
        return self._r

    def support_xyz(self, x, y, z):
        n = _sqrt(x * x + y * y + z * z)
        if n == 0.0:
            return (0.0, 0.0, self._r)
        s = self._r / n
        return (x * s, y * s, z * s)

    def _posed_support(self, m):
        b00, b01, b02, b10, b11, b12, b20, b21, b22, c0, c1, c2 = m
        r, sqrt = self._r, _sqrt

        def support(x, y, z):
            dx, dy, dz = b00 * x + b10 * y + b20 * z, b01 * x + b11 * y + b21 * z, \
                b02 * x + b12 * y + b22 * z
            n = sqrt(dx * dx + dy * dy + dz * dz)
            if n == 0.0:
                return (b02 * r + c0, b12 * r + c1, b22 * r + c2)
            s = r / n
            px, py, pz = dx * s, dy * s, dz * s
            return (b00 * px + b01 * py + b02 * pz + c0,
                    b10 * px + b11 * py + b12 * pz + c1,
                    b20 * px + b21 * py + b22 * pz + c2)
        return support

    def _init_args(self):
        return (self._r,)

    def _params_repr(self):
        return f"{self._r!r}"


class Ellipsoid(Shape):
    """Axis-aligned ellipsoid with ``radii`` (rx, ry, rz)."""

    __slots__ = ("_radii", "_sq", "_frozen")
    kind = "ellipsoid"
    smooth = True

    def __init__(self, radii) -> None:
        super().__init__()
        self._radii = validation.sizes("radii", radii)
        self._sq = tuple(r * r for r in self._radii)
        self._extent = (max(self._radii), max(self._radii))
        self._freeze()

    @property
    def radii(self) -> np.ndarray:
        return np.array(self._radii)

    def support_xyz(self, x, y, z):
        # s(d) = R² d / |R d| for R = diag(radii): the normal of the ellipsoid is R⁻² s.
        ax, ay, az = self._sq
        qx, qy, qz = ax * x, ay * y, az * z
        n = _sqrt(qx * x + qy * y + qz * z)
        if n == 0.0:
            return (0.0, 0.0, self._radii[2])
        return (qx / n, qy / n, qz / n)

    def _posed_support(self, m):
        b00, b01, b02, b10, b11, b12, b20, b21, b22, c0, c1, c2 = m
        (ax, ay, az), rz, sqrt = self._sq, self._radii[2], _sqrt

        def support(x, y, z):
            dx, dy, dz = b00 * x + b10 * y + b20 * z, b01 * x + b11 * y + b21 * z, \
                b02 * x + b12 * y + b22 * z
            qx, qy, qz = ax * dx, ay * dy, az * dz
            n = sqrt(qx * dx + qy * dy + qz * dz)
            if n == 0.0:
                return (b02 * rz + c0, b12 * rz + c1, b22 * rz + c2)
            px, py, pz = qx / n, qy / n, qz / n
            return (b00 * px + b01 * py + b02 * pz + c0,
                    b10 * px + b11 * py + b12 * pz + c1,
                    b20 * px + b21 * py + b22 * pz + c2)
        return support

    def _init_args(self):
        return (self._radii,)

    def _params_repr(self):
        return f"{self._radii!r}"


class Box(Shape):
    """Axis-aligned box with ``half_extents`` (hx, hy, hz)."""

    __slots__ = ("_he", "_frozen")
    kind = "box"
    polytope = True

    def __init__(self, half_extents) -> None:
        super().__init__()
        self._he = validation.sizes("half_extents", half_extents)
        self._extent = (max(self._he), max(self._he))
        self._freeze()

    @property
    def half_extents(self) -> np.ndarray:
        return np.array(self._he)

    def support_xyz(self, x, y, z):
        hx, hy, hz = self._he
        return (_copysign(hx, x), _copysign(hy, y), _copysign(hz, z))

    def aabb(self):
        he = np.array(self._he)
        return -he, he

    def _posed_support(self, m):
        b00, b01, b02, b10, b11, b12, b20, b21, b22, c0, c1, c2 = m
        (hx, hy, hz), copysign = self._he, _copysign

        def support(x, y, z):
            px = copysign(hx, b00 * x + b10 * y + b20 * z)
            py = copysign(hy, b01 * x + b11 * y + b21 * z)
            pz = copysign(hz, b02 * x + b12 * y + b22 * z)
            return (b00 * px + b01 * py + b02 * pz + c0,
                    b10 * px + b11 * py + b12 * pz + c1,
                    b20 * px + b21 * py + b22 * pz + c2)
        return support

    def _init_args(self):
        return (self._he,)

    def _params_repr(self):
        return f"{self._he!r}"


class Rectangle(Shape):
    """Rectangle with ``half_extents`` (hx, hy) in the xy plane."""

    __slots__ = ("_he", "_frozen")
    kind = "rectangle"
    polytope = True

    def __init__(self, half_extents) -> None:
        super().__init__()
        self._he = validation.sizes("half_extents", half_extents, 2)
        self._extent = (max(self._he), max(self._he))
        self._freeze()

    @property
    def half_extents(self) -> np.ndarray:
        return np.array(self._he)

    def support_xyz(self, x, y, z):
        hx, hy = self._he
        return (_copysign(hx, x), _copysign(hy, y), 0.0)

    def _init_args(self):
        return (self._he,)

    def _params_repr(self):
        return f"{self._he!r}"


class Disc(Shape):
    """Disc of ``radius`` in the xy plane."""

    __slots__ = ("_r", "_frozen")
    kind = "disc"

    def __init__(self, radius) -> None:
        super().__init__()
        self._r = validation.size("radius", radius)
        self._extent = (self._r, self._r)
        self._freeze()

    @property
    def radius(self) -> float:
        return self._r

    def support_xyz(self, x, y, z):
        s = _sqrt(x * x + y * y)
        if s == 0.0:
            return (0.0, 0.0, 0.0)
        s = self._r / s
        return (x * s, y * s, 0.0)

    def _init_args(self):
        return (self._r,)

    def _params_repr(self):
        return f"{self._r!r}"


class Capsule(Shape):
    """``Segment(half_height)`` swept by a sphere of ``radius``."""

    __slots__ = ("_r", "_h", "_frozen")
    kind = "capsule"

    def __init__(self, radius, half_height) -> None:
        super().__init__()
        self._r = validation.size("radius", radius)
        self._h = validation.size("half_height", half_height)
        self._margin = self._r
        self._core = Segment(self._h)
        self._extent = (self._r + self._h, self._r + self._h)
        self._freeze()

    @property
    def radius(self) -> float:
        return self._r

    @property
    def half_height(self) -> float:
        return self._h

    def support_xyz(self, x, y, z):
        ux, uy, uz = _unit_or_up(x, y, z)
        r = self._r
        return (ux * r, uy * r, uz * r + _copysign(self._h, z))

    def _init_args(self):
        return (self._r, self._h)

    def _params_repr(self):
        return f"{self._r!r}, {self._h!r}"


class Cylinder(Shape):
    """Cylinder of ``radius`` about the z axis from z = -half_height to +half_height."""

    __slots__ = ("_r", "_h", "_frozen")
    kind = "cylinder"

    def __init__(self, radius, half_height) -> None:
        super().__init__()
        self._r = validation.size("radius", radius)
        self._h = validation.size("half_height", half_height)
        self._extent = (max(self._r, self._h), max(self._r, self._h))
        self._freeze()

    @property
    def radius(self) -> float:
        return self._r

    @property
    def half_height(self) -> float:
        return self._h

    def support_xyz(self, x, y, z):
        s = _sqrt(x * x + y * y)
        zz = _copysign(self._h, z)
        if s == 0.0:
            return (0.0, 0.0, zz)
        s = self._r / s
        return (x * s, y * s, zz)

    def _posed_support(self, m):
        b00, b01, b02, b10, b11, b12, b20, b21, b22, c0, c1, c2 = m
        r, h, sqrt, copysign = self._r, self._h, _sqrt, _copysign

        def support(x, y, z):
            dx, dy = b00 * x + b10 * y + b20 * z, b01 * x + b11 * y + b21 * z
            pz = copysign(h, b02 * x + b12 * y + b22 * z)
            s = sqrt(dx * dx + dy * dy)
            if s == 0.0:
                return (b02 * pz + c0, b12 * pz + c1, b22 * pz + c2)
            s = r / s
            px, py = dx * s, dy * s
            return (b00 * px + b01 * py + b02 * pz + c0,
                    b10 * px + b11 * py + b12 * pz + c1,
                    b20 * px + b21 * py + b22 * pz + c2)
        return support

    def _init_args(self):
        return (self._r, self._h)

    def _params_repr(self):
        return f"{self._r!r}, {self._h!r}"


class Cone(Shape):
    """Cone with its base disc of ``radius`` at z = -half_height and its apex at z = +half_height."""

    __slots__ = ("_r", "_h", "_sin", "_frozen")
    kind = "cone"

    def __init__(self, radius, half_height) -> None:
        super().__init__()
        self._r = validation.size("radius", radius)
        self._h = validation.size("half_height", half_height)
        slant = _sqrt(self._r ** 2 + (2.0 * self._h) ** 2)
        # sin of the half-angle at the apex: directions within it of +z are supported by the apex.
        self._sin = self._r / slant if slant > 0.0 else 1.0
        self._extent = (max(self._r, self._h), max(self._r, self._h))
        self._freeze()

    @property
    def radius(self) -> float:
        return self._r

    @property
    def half_height(self) -> float:
        return self._h

    @property
    def apex_sine(self) -> float:
        """sin of the half-angle at the apex: directions within that angle of +z are supported
        by the apex."""
        return self._sin

    def support_xyz(self, x, y, z):
        if z > self._sin * _sqrt(x * x + y * y + z * z):
            return (0.0, 0.0, self._h)
        s = _sqrt(x * x + y * y)
        if s == 0.0:
            return (0.0, 0.0, -self._h)
        s = self._r / s
        return (x * s, y * s, -self._h)

    def center_xyz(self):
        return (0.0, 0.0, -0.5 * self._h)  # the centroid (a quarter of the height above the base)

    def _posed_support(self, m):
        b00, b01, b02, b10, b11, b12, b20, b21, b22, c0, c1, c2 = m
        r, h, sin, sqrt = self._r, self._h, self._sin, _sqrt
        apex = (b02 * h + c0, b12 * h + c1, b22 * h + c2)
        base = (c0 - b02 * h, c1 - b12 * h, c2 - b22 * h)      # the base disc's centre
        zx, zy, zz = -b02 * h, -b12 * h, -b22 * h

        def support(x, y, z):
            dx, dy, dz = b00 * x + b10 * y + b20 * z, b01 * x + b11 * y + b21 * z, \
                b02 * x + b12 * y + b22 * z
            if dz > sin * sqrt(dx * dx + dy * dy + dz * dz):
                return apex
            s = sqrt(dx * dx + dy * dy)
            if s == 0.0:
                return base
            s = r / s
            px, py = dx * s, dy * s
            return (b00 * px + b01 * py + zx + c0, b10 * px + b11 * py + zy + c1,
                    b20 * px + b21 * py + zz + c2)
        return support

    def _init_args(self):
        return (self._r, self._h)

    def _params_repr(self):
        return f"{self._r!r}, {self._h!r}"


class RoundBox(Shape):
    """``Box(half_extents)`` ⊕ ``Sphere(radius)``."""

    __slots__ = ("_he", "_r", "_frozen")
    kind = "round_box"

    def __init__(self, half_extents, radius) -> None:
        super().__init__()
        self._he = validation.sizes("half_extents", half_extents)
        self._r = validation.size("radius", radius)
        self._margin = self._r
        self._core = Box(self._he)
        self._extent = (max(self._he) + self._r, max(self._he) + self._r)
        self._freeze()

    @property
    def half_extents(self) -> np.ndarray:
        return np.array(self._he)

    @property
    def radius(self) -> float:
        return self._r

    def support_xyz(self, x, y, z):
        hx, hy, hz = self._he
        ux, uy, uz = _unit_or_up(x, y, z)
        r = self._r
        return (_copysign(hx, x) + ux * r, _copysign(hy, y) + uy * r, _copysign(hz, z) + uz * r)

    def _posed_support(self, m):
        b00, b01, b02, b10, b11, b12, b20, b21, b22, c0, c1, c2 = m
        (hx, hy, hz), r, copysign, unit = self._he, self._r, _copysign, _unit_or_up

        def support(x, y, z):
            dx, dy, dz = b00 * x + b10 * y + b20 * z, b01 * x + b11 * y + b21 * z, \
                b02 * x + b12 * y + b22 * z
            ux, uy, uz = unit(dx, dy, dz)
            px = copysign(hx, dx) + ux * r
            py = copysign(hy, dy) + uy * r
            pz = copysign(hz, dz) + uz * r
            return (b00 * px + b01 * py + b02 * pz + c0,
                    b10 * px + b11 * py + b12 * pz + c1,
                    b20 * px + b21 * py + b22 * pz + c2)
        return support

    def _init_args(self):
        return (self._he, self._r)

    def _params_repr(self):
        return f"{self._he!r}, {self._r!r}"


class MinkowskiSum(Shape):
    """``a ⊕ b``: its support is the sum of the supports (seed 000 §2)."""

    __slots__ = ("_a", "_b", "_sa", "_sb", "_frozen")
    kind = "minkowski_sum"

    @property
    def polytope(self) -> bool:
        return self._a.polytope and self._b.polytope

    def __init__(self, a: Shape, b: Shape) -> None:
        super().__init__()
        a = validation.shape("a", a)
        b = validation.shape("b", b)
        self._a, self._b = a, b
        self._sa, self._sb = a.support_xyz, b.support_xyz
        (size_a, reach_a), (size_b, reach_b) = a.extent(), b.extent()
        self._extent = _checked_extent("b", size_a + size_b, reach_a + reach_b)
        self._margin = a.margin + b.margin
        if self._margin > 0.0:
            self._core = _sum_of_cores(a.core, b.core)
        self._freeze()

    @property
    def a(self) -> Shape:
        return self._a

    @property
    def b(self) -> Shape:
        return self._b

    def support_xyz(self, x, y, z):
        ax, ay, az = self._sa(x, y, z)
        bx, by, bz = self._sb(x, y, z)
        return (ax + bx, ay + by, az + bz)

    def center_xyz(self):
        ax, ay, az = self._a.center_xyz()
        bx, by, bz = self._b.center_xyz()
        return (ax + bx, ay + by, az + bz)

    def _init_args(self):
        return (self._a, self._b)

    def _params_repr(self):
        return f"{self._a!r}, {self._b!r}"


def contact_size(a: Shape, b: Shape) -> float | None:
    """The size that contact points are made exact relative to: the smaller of the two shapes'
    sizes (``Shape.extent``), a zero size (a point's) not counting; None if both are zero."""
    # (Every query asks: the extents primitives keep are read without the method call.)
    size_a = (getattr(a, "_extent", None) or a.extent())[0]
    size_b = (getattr(b, "_extent", None) or b.extent())[0]
    if size_a > 0.0 and size_b > 0.0:
        return size_a if size_a < size_b else size_b
    return max(size_a, size_b) or None


def no_larger(a: Shape, b: Shape) -> bool:
    """Whether ``a`` is the smaller of the two (or as large) by size (``Shape.extent``): a point
    common to both within a tolerance relative to the larger goes on the smaller, exactly
    (``gjk.distance``, ``penetration``)."""
    return a.extent()[0] <= b.extent()[0]


def check_extent(name: str, shape: Shape) -> None:
    """ValueError naming ``name`` if ``shape`` (by its bounding box) leaves the supported
    range."""
    size, reach = shape.extent()
    if reach > validation.MAX_COORDINATE:
        raise ValueError(f"{name} has points {reach:.3g} from the origin, beyond "
                         f"{validation.MAX_COORDINATE:g} (the supported range)")
    if 0.0 < size < validation.MIN_SIZE:
        raise ValueError(f"{name} is {size:.3g} across, below {validation.MIN_SIZE:g} "
                         f"(the supported range)")


def _checked_extent(name: str, size: float, reach: float) -> tuple:
    """(size, reach) of a composite, checked against the supported range (``validation``):
    composing shapes in range can leave it (a scale of 1e30 applied to a box of 1e30)."""
    if reach > validation.MAX_COORDINATE:
        raise ValueError(f"{name} would place points of the shape {reach:.3g} from the origin, "
                         f"beyond {validation.MAX_COORDINATE:g} (the supported range)")
    if 0.0 < size < validation.MIN_SIZE:
        raise ValueError(f"{name} would make the shape {size:.3g} across, below "
                         f"{validation.MIN_SIZE:g} (the supported range)")
    return (size, reach)


def _sum_of_cores(a: Shape, b: Shape) -> Shape:
    """Core of a sum: the sum of the cores, with points (the cores of spheres) dropped."""
    if isinstance(a, Point):
        return b
    if isinstance(b, Point):
        return a
    return MinkowskiSum(a, b)


class ConvexHullOf(Shape):
    """Convex hull of the union of ``a`` and ``b``: the support of whichever reaches farther."""

    __slots__ = ("_a", "_b", "_sa", "_sb", "_frozen")
    kind = "convex_hull_of"

    @property
    def polytope(self) -> bool:
        return self._a.polytope and self._b.polytope

    def __init__(self, a: Shape, b: Shape) -> None:
        super().__init__()
        a = validation.shape("a", a)
        b = validation.shape("b", b)
        self._a, self._b = a, b
        self._sa, self._sb = a.support_xyz, b.support_xyz
        (size_a, reach_a), (size_b, reach_b) = a.extent(), b.extent()
        # The hull spans at least the larger part, and at most the distance between them too.
        self._extent = (max(size_a, size_b, min(reach_a + reach_b, size_a + size_b)),
                        max(reach_a, reach_b))
        # hull((A ⊕ S) ∪ (B ⊕ S)) == hull(A ∪ B) ⊕ S, so an equal margin carries over.
        if a.margin > 0.0 and a.margin == b.margin:
            self._margin = a.margin
            self._core = ConvexHullOf(a.core, b.core)
        self._freeze()

    @property
    def a(self) -> Shape:
        return self._a

    @property
    def b(self) -> Shape:
        return self._b

    def support_xyz(self, x, y, z):
        pa = self._sa(x, y, z)
        pb = self._sb(x, y, z)
        if pa[0] * x + pa[1] * y + pa[2] * z >= pb[0] * x + pb[1] * y + pb[2] * z:
            return pa
        return pb

    def center_xyz(self):
        ax, ay, az = self._a.center_xyz()
        bx, by, bz = self._b.center_xyz()
        return (0.5 * (ax + bx), 0.5 * (ay + by), 0.5 * (az + bz))

    def _init_args(self):
        return (self._a, self._b)

    def _params_repr(self):
        return f"{self._a!r}, {self._b!r}"


class Transformed(Shape):
    """Image of ``shape`` under the affine map x ↦ B x + c given as a 4×4 ``matrix``.

    The support of T(A) along v is T(s_A(Bᵀ v)) (seed 000 §2); rotation, translation,
    non-uniform scale and shear are all allowed, a singular matrix is not. Nested transforms are
    folded into one so that a support call costs one matrix product each way.
    """

    # ``support_xyz`` is an instance slot, not a method: each transform holds a closure built
    # for its shape and matrix (``_posed_support``), with the twelve matrix entries bound as
    # closure constants and, for the common primitives, the primitive's mapping inlined. That
    # saves the attribute look-ups, the unpacking of the matrix and one Python call per
    # support call: about 0.5 µs of 1.1 µs, on the path every query runs most often.
    __slots__ = ("_shape", "_m", "_matrix", "_inner", "support_xyz", "_frozen")
    kind = "transformed"

    def __init__(self, shape: Shape, matrix) -> None:
        super().__init__()
        shape = validation.shape("shape", shape)
        m = validation.affine_matrix("matrix", matrix)
        if isinstance(shape, Transformed):
            m = m @ shape._matrix
            shape = shape._shape
        # The image's size and reach (see ``Shape.extent``), from the matrix's scale: its
        # largest entry, which bounds the stretch of the 3x3 part to within a factor 3.
        size, reach = shape.extent()
        rows = m[:3].tolist()
        scale = max(abs(x) for row in rows for x in row[:3])
        offset = max(abs(rows[0][3]), abs(rows[1][3]), abs(rows[2][3]))
        self._extent = _checked_extent("matrix", scale * size, scale * reach + offset)
        self._shape = shape
        self._matrix = m
        self._matrix.setflags(write=False)
        self._m = tuple(rows[0][:3] + rows[1][:3] + rows[2][:3]) \
            + (rows[0][3], rows[1][3], rows[2][3])
        self._inner = shape.support_xyz
        if [list(self._m[0:3]), list(self._m[3:6]), list(self._m[6:9])] == _IDENTITY_ROWS:
            # A pure translation (the common case for placed primitives) skips both products.
            self.support_xyz = _translated_support(self._inner, self._m[9:])
        else:
            self.support_xyz = shape._posed_support(self._m)
        if shape.margin > 0.0:
            # A similarity map (BᵀB = s² I) takes core ⊕ S(r) to T(core) ⊕ S(s r).
            s2 = _similarity_scale2(self._m)
            if s2 is not None:
                self._margin = shape.margin * math.sqrt(s2)
                self._core = Transformed(shape.core, m)
        self._freeze()

    @property
    def shape(self) -> Shape:
        return self._shape

    @property
    def polytope(self) -> bool:
        return self._shape.polytope

    @property
    def smooth(self) -> bool:
        return self._shape.smooth

    @property
    def matrix(self) -> np.ndarray:
        return self._matrix

    def aabb(self):
        # Row i of B is Bᵀ e_i, so the extreme along axis i is row_i · s(±row_i) + c_i.
        s = self._inner
        m = self._m
        lower, upper = np.empty(3), np.empty(3)
        for i in range(3):
            r0, r1, r2 = m[3 * i], m[3 * i + 1], m[3 * i + 2]
            hx, hy, hz = s(r0, r1, r2)
            lx, ly, lz = s(-r0, -r1, -r2)
            upper[i] = r0 * hx + r1 * hy + r2 * hz + m[9 + i]
            lower[i] = r0 * lx + r1 * ly + r2 * lz + m[9 + i]
        return lower, upper

    def center_xyz(self):
        b00, b01, b02, b10, b11, b12, b20, b21, b22, c0, c1, c2 = self._m
        px, py, pz = self._shape.center_xyz()
        return (b00 * px + b01 * py + b02 * pz + c0,
                b10 * px + b11 * py + b12 * pz + c1,
                b20 * px + b21 * py + b22 * pz + c2)

    def _init_args(self):
        return (self._shape, self._matrix)

    def _params_repr(self):
        return f"{self._shape!r}, matrix={self._matrix.tolist()!r}"


_IDENTITY_ROWS = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]

# A linear map is a similarity (BᵀB = s² I: a margin carries over) when BᵀB differs from s² I
# by at most this fraction of s² in every entry (rounding of a rotation times a scale).
SIMILARITY_TOLERANCE = 1e-12


def _affine_support(inner, m):
    b00, b01, b02, b10, b11, b12, b20, b21, b22, c0, c1, c2 = m

    def support(x, y, z):
        px, py, pz = inner(b00 * x + b10 * y + b20 * z,
                           b01 * x + b11 * y + b21 * z,
                           b02 * x + b12 * y + b22 * z)
        return (b00 * px + b01 * py + b02 * pz + c0,
                b10 * px + b11 * py + b12 * pz + c1,
                b20 * px + b21 * py + b22 * pz + c2)
    return support


def _translated_support(inner, c):
    c0, c1, c2 = c

    def support(x, y, z):
        px, py, pz = inner(x, y, z)
        return (px + c0, py + c1, pz + c2)
    return support


def _similarity_scale2(m):
    """s² if the linear part B (first 9 of ``m``, row-major) has BᵀB = s² I, else None."""
    columns = ((m[0], m[3], m[6]), (m[1], m[4], m[7]), (m[2], m[5], m[8]))
    gram = [[sum(p * q for p, q in zip(u, v)) for v in columns] for u in columns]
    s2 = (gram[0][0] + gram[1][1] + gram[2][2]) / 3.0
    tolerance = SIMILARITY_TOLERANCE * s2
    for i in range(3):
        for j in range(3):
            if abs(gram[i][j] - (s2 if i == j else 0.0)) > tolerance:
                return None
    return s2


def translated(shape: Shape, offset) -> Transformed:
    """``shape`` moved by ``offset`` (a convenience for tests and scripts)."""
    m = np.eye(4)
    m[:3, 3] = validation.coordinates("offset", offset)
    return Transformed(shape, m)


def posed(shape: Shape, rotation=None, translation=(0.0, 0.0, 0.0), scale=None) -> Transformed:
    """``shape`` scaled (per axis), then rotated by a 3×3 matrix, then translated."""
    m = np.eye(4)
    linear = np.eye(3) if rotation is None else np.asarray(rotation, dtype=float)
    if scale is not None:
        linear = linear @ np.diag(np.broadcast_to(np.asarray(scale, dtype=float), 3))
    m[:3, :3] = linear
    m[:3, 3] = validation.coordinates("translation", translation)
    return Transformed(shape, m)


class Custom(Shape):
    """A shape of the user's own: any object with ``support_xyz(x, y, z) -> (x, y, z)``, the
    point of the shape farthest along a direction (any point of it for a zero direction).

    The queries wrap such an object in this adapter, which gives it the defaults of a sharp
    shape for whatever it does not define itself: ``margin`` 0 (with a margin it needs a
    ``core`` too), ``polytope`` and ``smooth`` False (nothing is assumed about its surface), and
    ``center_xyz`` (a point inside, where MPR starts) the mean of the six axis support points,
    a point of the shape by convexity. Those six points are taken once per adapter, that is
    once per query: they give its bounding box and check it against the supported range.
    Support points are converted to float tuples, and a non-finite one raises a ValueError
    naming the shape.
    """

    __slots__ = ("_user", "support_xyz", "_center", "_box", "_polytope", "_smooth", "_frozen")
    kind = "custom"

    def __init__(self, user, name: str = "shape") -> None:
        super().__init__()
        self._user = user
        self.support_xyz = s = _checked_support(user.support_xyz, name)
        margin = validation.size(f"{name}.margin", getattr(user, "margin", 0.0))
        if margin > 0.0:
            core = getattr(user, "core", None)
            if core is None or core is user:
                raise ValueError(f"{name} has a margin, so it needs a core (the shape without "
                                 f"its margin) too")
            self._margin = margin
            self._core = validation.shape(f"{name}.core", core)
        self._polytope = bool(getattr(user, "polytope", False))
        self._smooth = bool(getattr(user, "smooth", False))
        hx, hy, hz = s(1.0, 0.0, 0.0), s(0.0, 1.0, 0.0), s(0.0, 0.0, 1.0)
        lx, ly, lz = s(-1.0, 0.0, 0.0), s(0.0, -1.0, 0.0), s(0.0, 0.0, -1.0)
        lower, upper = (lx[0], ly[1], lz[2]), (hx[0], hy[1], hz[2])
        self._box = (lower, upper)
        center = getattr(user, "center_xyz", None)
        if callable(center):
            self._center = tuple(float(c) for c in center())
        else:
            self._center = tuple(sum(p[i] for p in (hx, hy, hz, lx, ly, lz)) / 6.0
                                 for i in range(3))
        reach = max(abs(c) for c in lower + upper)
        size = max(u - lo for u, lo in zip(upper, lower))
        self._extent = _checked_extent(name, size, reach)
        self._freeze()

    @property
    def user(self):
        """The object this adapter wraps."""
        return self._user

    @property
    def polytope(self) -> bool:
        return self._polytope

    @property
    def smooth(self) -> bool:
        return self._smooth

    def aabb(self):
        lower, upper = self._box
        return np.array(lower), np.array(upper)

    def center_xyz(self):
        return self._center

    def _init_args(self):
        return (self._user,)

    def _params_repr(self):
        return f"{self._user!r}"


def _checked_support(support, name):
    """The user's support mapping, returning float tuples and refusing non-finite points."""
    isfinite = math.isfinite

    def checked(x, y, z):
        p = support(x, y, z)
        px, py, pz = float(p[0]), float(p[1]), float(p[2])
        if not (isfinite(px) and isfinite(py) and isfinite(pz)):
            raise ValueError(f"{name}.support_xyz returned a non-finite point {(px, py, pz)} "
                             f"for the direction {(x, y, z)}")
        return (px, py, pz)
    return checked
