"""Shape kinds: one table entry per shape type, the one place a primitive is defined for every
path that treats shapes by what they are rather than only through ``support_xyz``.

An entry (``Kind``) says, for one shape type:

- ``support``: its single support mapping, the class's own ``support_xyz`` (every query calls
  it; the table names it, it does not wrap it);
- ``batch(shape)``: its batched description, ``(family, params, margin)``, or None (the shape is
  not batched: family OTHER). ``family`` is one of the vectorised support mappings of
  ``placement`` (POLY, ROUND, CONE, HULL), ``params`` a dict {row of ``PoseTable.params``:
  value} of that family's parameters, ``margin`` the radius the shape keeps under a similarity
  map (then ``family`` and ``params`` are its core's; under any other map ``placement`` makes
  the whole shape ROUND);
- ``ray(shape)``: its closed-form ray cast, ``(form, *sizes)`` with ``form`` one of the RAY_*
  forms ``ray_closed_forms`` solves exactly, or None (the GJK ray cast);
- ``feature(shape)``: the form of its support feature, ``(form, *sizes)`` with ``form`` one of
  the FEATURE_* forms ``manifold.support_feature`` finds (a box's face, a cylinder's cap or
  side line, a hull's face, ...).

So a new primitive whose batch family, ray form and feature form exist already (a slab is a box
to all three; a rounded one is its core plus a margin) is added by one ``register`` call beside
its class; a primitive that needs a new vectorised mapping, ray solution or feature adds that
form to its module and names it here.

Look-up is by ``type(shape)``: ``kind_of`` walks the MRO for a subclass (it inherits its base's
batch description and feature, as the ``isinstance`` tests these replaced did) and caches the
answer per type; ``own_kind`` is the entry of exactly that type, which is what the closed-form
ray cast reads (a subclass may change the support mapping, and a wrong exact hit is silent,
so a subclass keeps the GJK ray cast unless it registers its own entry). A type with no entry
of its own or of a base (a ``Shape`` subclass of the user's) gets ``UNKNOWN``: not batched, no
closed form, a hull's feature if its shapes have ``vertices``, else the sampled feature; that is
also the entry of ``Custom``, the adapter of a user's support mapping.

Register a kind where its class is defined, at import: worker processes that unpickle its
shapes import that module and so register it too.

Layering (docs/ARCHITECTURE.md): a shapes-layer module, on ``shapes`` and ``hull`` only;
``ray_closed_forms``, ``manifold``, ``placement`` and ``trimesh`` use it.
"""

from __future__ import annotations

from . import shapes as _shapes
from .hull import Hull

# --- batch families and parameter rows (placement.PoseTable) ---------------------------------
POLY, ROUND, CONE, HULL, OTHER = range(5)
FAMILIES = (POLY, ROUND, CONE, HULL)

# Rows of ``PoseTable.params`` (one column per object): the linear part B row-major, the
# translation c, and the family's own parameters.
B00, B01, B02, B10, B11, B12, B20, B21, B22, C0, C1, C2 = range(12)
HX, HY, HZ = 12, 13, 14          # POLY/ROUND: half extents (0 where the shape has none)
RHO = 15                         # ROUND: disc radius
RX, RY, RZ = 16, 17, 18          # ROUND: ellipsoid radii
CONE_R, CONE_H, CONE_SIN = 19, 20, 21   # CONE: radius, half height, sin of the apex half-angle
N_PARAMS = 22

# --- closed-form ray casts (ray_closed_forms), in the shape's own frame -----------------------
RAY_POINT = "point"              # ()
RAY_BOX = "box"                  # (half extents,): slabs; zero extents are thickened
RAY_SPHERE = "sphere"            # (radius,)
RAY_ELLIPSOID = "ellipsoid"      # (radii,): the unit sphere seen through diag(radii)
RAY_CAPSULE = "capsule"          # (radius, half height) of a segment along z swept by a ball
RAY_CYLINDER = "cylinder"        # (radius, half height) about z
RAY_CONE = "cone"                # (radius, half height): base at -h, apex at +h

# --- support features (manifold.support_feature) ----------------------------------------------
FEATURE_POINT = "point"          # (): the origin
FEATURE_BOX = "box"              # (half extents,): a face, edge or corner of the box
FEATURE_CYLINDER = "cylinder"    # (radius, half height): a cap (sampled), a side line, a point
FEATURE_CONE = "cone"            # (radius, half height): the base (sampled), a side line, a point
FEATURE_CURVED = "curved"        # (): one point, the support (curved everywhere)
FEATURE_HULL = "hull"            # (): the face, edge or vertex of ``vertices`` (``faces``)
FEATURE_SUM = "sum"              # (): sums of the parts' features (``a``, ``b``)
FEATURE_HULL_OF = "hull_of"      # (): the parts' features within the feature angle (``a``, ``b``)
FEATURE_TRANSFORMED = "transformed"   # (): the inner shape's feature, mapped
FEATURE_SAMPLED = "sampled"      # (): the support along tilted directions (any support mapping)


def _unknown_feature(shape):
    # A hull of the user's (anything with vertices) has faces; else sample the support mapping.
    if getattr(shape, "vertices", None) is not None:
        return (FEATURE_HULL,)
    return (FEATURE_SAMPLED,)


class Kind:
    """One shape type's entry (see the module doc). ``batch`` and ``ray`` None: not batched, no
    closed form; ``feature`` by default that of a type without an entry (a hull's feature if
    the shape has ``vertices``, else the sampled one)."""

    __slots__ = ("shape_type", "batch", "ray", "feature")

    def __init__(self, shape_type, *, batch=None, ray=None, feature=_unknown_feature) -> None:
        if not (isinstance(shape_type, type) and issubclass(shape_type, _shapes.Shape)):
            raise ValueError(f"a kind is the entry of a Shape subclass, got {shape_type!r}")
        for name, value in (("batch", batch), ("ray", ray), ("feature", feature)):
            if value is not None and not callable(value):
                raise ValueError(f"{name} must be a function of the shape, got {value!r}")
        if feature is None:
            raise ValueError("feature must be a function of the shape (FEATURE_SAMPLED fits "
                             "any support mapping)")
        self.shape_type = shape_type
        self.batch = batch
        self.ray = ray
        self.feature = feature

    @property
    def support(self):
        """The single support mapping: the class's own ``support_xyz`` (for ``Transformed`` and
        ``Custom`` the slot where each shape keeps the closure it builds)."""
        return self.shape_type.support_xyz

    def __repr__(self) -> str:
        return f"Kind({self.shape_type.__name__})"


# The entry of a type nobody registered: not batched, no closed form, a hull's or a sampled
# feature.
UNKNOWN = Kind(_shapes.Shape)

_TABLE: dict = {}       # type → its own Kind
_RESOLVED: dict = {}    # type → the Kind it uses (its own, a base's through the MRO, UNKNOWN)


def register(kind: Kind) -> Kind:
    """Add ``kind`` to the table; ValueError if its type has an entry already."""
    if not isinstance(kind, Kind):
        raise ValueError(f"register takes a Kind, got {kind!r}")
    if kind.shape_type in _TABLE:
        raise ValueError(f"{kind.shape_type.__name__} has a kind already")
    _TABLE[kind.shape_type] = kind
    _RESOLVED.clear()
    return kind


def unregister(shape_type) -> None:
    """Remove the entry of ``shape_type`` (its shapes then take a base's entry, or UNKNOWN)."""
    if _TABLE.pop(shape_type, None) is None:
        raise ValueError(f"{getattr(shape_type, '__name__', shape_type)!r} has no kind")
    _RESOLVED.clear()


def kind_of(shape_type) -> Kind:
    """The entry shapes of ``shape_type`` use: their own, the nearest base's, or UNKNOWN."""
    try:
        return _RESOLVED[shape_type]
    except KeyError:
        kind = _RESOLVED[shape_type] = next(
            (_TABLE[t] for t in shape_type.__mro__ if t in _TABLE), UNKNOWN)
        return kind


def own_kind(shape_type) -> Kind | None:
    """The entry registered for exactly ``shape_type``, else None."""
    return _TABLE.get(shape_type)


# --- the primitives ---------------------------------------------------------------------------

def _half3(shape) -> tuple:
    return tuple(shape.half_extents.tolist())


def _box_batch(shape):
    hx, hy, hz = shape.half_extents.tolist()
    return POLY, {HX: hx, HY: hy, HZ: hz}, 0.0


def _rectangle_batch(shape):
    hx, hy = shape.half_extents.tolist()
    return POLY, {HX: hx, HY: hy}, 0.0


def _ellipsoid_batch(shape):
    rx, ry, rz = shape.radii.tolist()
    return ROUND, {RX: rx, RY: ry, RZ: rz}, 0.0


def _round_box_batch(shape):
    hx, hy, hz = shape.half_extents.tolist()
    return POLY, {HX: hx, HY: hy, HZ: hz}, shape.radius


def _flat3(shape) -> tuple:
    """A rectangle's half extents as a box's of zero height."""
    return tuple(shape.half_extents.tolist()) + (0.0,)


def _curved(shape):
    return (FEATURE_CURVED,)


def _primitives() -> tuple:
    s = _shapes
    return (
        Kind(s.Point,
             batch=lambda p: (POLY, {}, 0.0),
             ray=lambda p: (RAY_POINT,),
             feature=lambda p: (FEATURE_POINT,)),
        Kind(s.Segment,
             batch=lambda g: (POLY, {HZ: g.half_length}, 0.0),
             ray=lambda g: (RAY_CAPSULE, 0.0, g.half_length),
             feature=lambda g: (FEATURE_BOX, (0.0, 0.0, g.half_length))),
        Kind(s.Box,
             batch=_box_batch,
             ray=lambda b: (RAY_BOX, _half3(b)),
             feature=lambda b: (FEATURE_BOX, b.half_extents)),
        Kind(s.Rectangle,
             batch=_rectangle_batch,
             ray=lambda r: (RAY_BOX, _flat3(r)),
             feature=lambda r: (FEATURE_BOX, _flat3(r))),
        Kind(s.Disc,
             batch=lambda c: (ROUND, {RHO: c.radius}, 0.0),
             ray=lambda c: (RAY_CYLINDER, c.radius, 0.0),
             feature=lambda c: (FEATURE_CYLINDER, c.radius, 0.0)),
        Kind(s.Cylinder,
             batch=lambda c: (ROUND, {RHO: c.radius, HZ: c.half_height}, 0.0),
             ray=lambda c: (RAY_CYLINDER, c.radius, c.half_height),
             feature=lambda c: (FEATURE_CYLINDER, c.radius, c.half_height)),
        Kind(s.Ellipsoid,
             batch=_ellipsoid_batch,
             ray=lambda e: (RAY_ELLIPSOID, e.radii.tolist()),
             feature=_curved),
        Kind(s.Cone,
             batch=lambda c: (CONE, {CONE_R: c.radius, CONE_H: c.half_height,
                                     CONE_SIN: c.apex_sine}, 0.0),
             ray=lambda c: (RAY_CONE, c.radius, c.half_height),
             feature=lambda c: (FEATURE_CONE, c.radius, c.half_height)),
        # Rounded primitives: batched as their core plus the margin. Their feature is curved:
        # ``support_feature`` splits the margin off first, so only a zero radius reaches it.
        Kind(s.Sphere,
             batch=lambda b: (POLY, {}, b.radius),
             ray=lambda b: (RAY_SPHERE, b.radius),
             feature=_curved),
        Kind(s.Capsule,
             batch=lambda c: (POLY, {HZ: c.half_height}, c.radius),
             ray=lambda c: (RAY_CAPSULE, c.radius, c.half_height),
             feature=_curved),
        Kind(s.RoundBox, batch=_round_box_batch, feature=_curved),
        Kind(Hull, batch=lambda h: (HULL, {}, 0.0), feature=lambda h: (FEATURE_HULL,)),
        # Composites and wrappers: features from their parts. ``placement`` splits a
        # ``Transformed`` into its shape and matrix before it asks for a description.
        Kind(s.MinkowskiSum, feature=lambda m: (FEATURE_SUM,)),
        Kind(s.ConvexHullOf, feature=lambda m: (FEATURE_HULL_OF,)),
        Kind(s.Transformed, feature=lambda t: (FEATURE_TRANSFORMED,)),
        # A user's support mapping: nothing known beyond it.
        Kind(s.Custom),
    )


for _kind in _primitives():
    register(_kind)
del _kind
