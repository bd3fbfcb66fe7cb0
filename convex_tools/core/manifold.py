"""Contact manifolds: the corners of the contact region of two overlapping shapes.

``contact_manifold(a, b, max_points=4)`` returns a ``Manifold(normal, points (K,3), depths (K,))``
(API.md): ``normal`` is the penetration normal (EPA, unit, from A toward B), ``points`` the
corners of the contact region on the plane midway between the two surfaces, ``depths`` the
penetration at each of them along the normal.

The steps:

1. **Penetration**: EPA's depth and normal n (``penetration``).
2. **Support features**: the part of A that is deepest along +n and of B along −n: a face
   (polygon), an edge (segment) or a vertex, counting a face or edge as facing n when its normal
   is within FEATURE_ANGLE of it. Boxes, rectangles and segments have them in closed form (axes
   of the direction within the angle of zero are "free"), cylinders, discs and cones have flat
   caps and straight side lines, hulls their supporting face most aligned with the normal (from
   their triangles), rounded shapes the feature of their core pushed out by the margin, sums and
   hulls of shapes combine their parts' features (each shape type's entry in ``kinds`` names
   which of these forms its feature takes). Caps of round shapes, and shapes of any other
   kind, are sampled with the Perturbed Sampling Manifold (seed 001 §2.6, Alg. 13): the support
   along n tilted by a small angle and turned around n. Its known trouble (seed 001 §2.6) —
   curved surfaces and large shapes spreading the samples, cylinders' and cones' sides — is kept
   out by using it only for flat caps and by dropping samples that fall below the support plane.
3. **Clipping** on the contact plane: the two features projected on it are intersected (polygon
   with polygon by Sutherland–Hodgman, a segment against a polygon or segment, a vertex alone).
4. **Depths**: at each corner, the height of A's feature minus B's along n (the feature's plane,
   line or point); corners where the surfaces part are dropped, the others placed midway.
5. **Reduction** to ``max_points``: the deepest corner, the one farthest from it, then the
   corners that add the most area: stable under small motions (a box resting on a box keeps its
   four corners when nudged).

Curved contacts (a vertex or a single support point on either side) give one point, from the
penetration's contact points.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from . import kinds
from . import validation
from . import planar
from .geometry import LENGTH_FLOOR, tangent_basis
from .penetration import penetration
from .results import Manifold
from .shapes import Shape

# A face (or edge) of a shape counts as facing the normal when its own normal is within this
# angle (radians) of it: slightly tilted resting contacts still get all their corners.
FEATURE_ANGLE = 0.02

# Perturbed Sampling Manifold (seed 001 Alg. 13): samples around the normal, each tilted by
# PSM_ANGLE (radians) from it. A disc or other round flat cap comes out as a PSM_SAMPLES-gon.
PSM_SAMPLES = 16
PSM_ANGLE = 0.1
# A sample is kept when it lies below the support plane by at most this slope times its
# distance across from the top sample: half the slope of a face tilted by FEATURE_ANGLE. A
# curved surface falls away at about PSM_ANGLE / 2 = 0.05 at the samples, five times more.
PSM_KEEP_SLOPE = 0.5 * math.sin(FEATURE_ANGLE)

# Hulls without a face list: at most this many vertices near the support plane are tried as
# corners of the supporting face.
HULL_CANDIDATES = 8

# Feature points within this fraction of the shapes' size of each other are one point.
MERGE_TOLERANCE = 1e-9

# Corners whose overlap depth is below −this fraction of the shapes' size are not in contact.
DEPTH_TOLERANCE = 1e-9

# Segments (and a feature's spanning edges) count as parallel when the sine of their angle is
# below this (the plane geometry's own).
PARALLEL_SIN = planar.PARALLEL_SIN

# Both tolerances also allow this fraction of the contact's distance from the origin: the
# rounding of world coordinates there, with room for the transforms that placed the features.
COORDINATE_ROUNDING = 1e-14

# Points count as level with the top of a feature within this fraction of their coordinates'
# magnitude (rounding; there is no tolerance in model units, so tiny shapes keep their features).
BAND_ROUNDING = 1e-12

# Default and largest number of manifold points.
MAX_POINTS = 4


def contact_manifold(a, b, max_points: int = MAX_POINTS):
    """Contact region of ``a`` and ``b`` as a ``Manifold``; None if they are apart. Tolerances
    are relative to the smaller contact feature at any scale of the supported range
    (``validation``)."""
    if not isinstance(max_points, (int, np.integer)) or max_points < 1:
        raise ValueError(f"max_points must be a positive integer, got {max_points!r}")
    a = validation.shape("a", a)
    b = validation.shape("b", b)
    # 1. Penetration: depth and normal.
    contact = penetration(a, b)
    if contact is None:
        return None
    n = np.asarray(contact.normal, float)
    # 2. Support features, in contact-plane coordinates (x, y, height along n) about the
    #    midpoint of the contact points.
    origin = 0.5 * (contact.point_a + contact.point_b)
    u, v = plane_basis(n)
    frame = np.array((u, v, n))
    fa = [tuple(map(float, row)) for row in (np.array(support_feature(a, n)) - origin) @ frame.T]
    fb = [tuple(map(float, row)) for row in (np.array(support_feature(b, -n)) - origin) @ frame.T]
    # Tolerances relative to the smaller feature's extent across the contact plane (a corner
    # allowed outside the smaller one by a fraction of the larger would be off its shape),
    # plus the rounding of their coordinates (world points, far from the origin, round there).
    extent_a, extent_b = _spread(fa), _spread(fb)
    size = max(min(extent_a, extent_b) or max(extent_a, extent_b), LENGTH_FLOOR)
    rounding = COORDINATE_ROUNDING * float(np.max(np.abs(origin)))
    tol = MERGE_TOLERANCE * size + rounding
    fa, fb = planar.unique(fa, tol), planar.unique(fb, tol)
    if len(fa) == 1 or len(fb) == 1:
        return _single(contact)
    # 3. Clipping on the contact plane.
    region = planar.clip(planar.hull([p[:2] for p in fa], tol),
                         planar.hull([p[:2] for p in fb], tol), tol)
    # 4. Depths: A's surface above B's at each corner; the corner goes midway between them.
    surface_a, surface_b = _surface(fa), _surface(fb)
    corners, depths = [], []
    for x, y in region:
        ha, hb = surface_a(x, y), surface_b(x, y)
        depth = ha - hb
        if depth < -(DEPTH_TOLERANCE * size + rounding):
            continue                          # the surfaces part here: not in contact
        corners.append((x, y, 0.5 * (ha + hb)))
        depths.append(depth if depth > 0.0 else 0.0)
    if not corners:
        return _single(contact)
    # 5. Reduction to max_points.
    keep = planar.reduce([c[:2] for c in corners], depths, max_points)
    points = origin + np.array([corners[i] for i in keep]) @ frame
    return Manifold(n, points, np.array([depths[i] for i in keep]), contact.support_calls,
                    contact.status)


def _spread(feature):
    """A feature's extent across the contact plane (its points' x and y ranges)."""
    xs, ys = [p[0] for p in feature], [p[1] for p in feature]
    return max(max(xs) - min(xs), max(ys) - min(ys))


def _single(contact):
    mid = 0.5 * (contact.point_a + contact.point_b)
    return Manifold(np.asarray(contact.normal, float), mid.reshape(1, 3),
                    np.array([contact.depth]), contact.support_calls, contact.status)


# --- support features -------------------------------------------------------------------------

def support_feature(shape: Shape, direction) -> list:
    """Points (ndarrays) spanning the feature of ``shape`` farthest along ``direction``.

    A face gives its corners (a polygon, in no particular order), an edge its two ends, a vertex
    or a curved surface one point. A rounded shape's is its core's pushed out by the margin;
    otherwise the shape's kind (``kinds``) names the form of its feature.
    """
    d = np.asarray(direction, float)
    d = d / math.sqrt(d.dot(d))          # np.linalg.norm's value, without its 1.5 µs of checks
    if shape.margin > 0.0 and shape.core is not shape:
        return [p + shape.margin * d for p in support_feature(shape.core, d)]
    form, *sizes = kinds.kind_of(type(shape)).feature(shape)
    return _FEATURES[form](shape, d, *sizes)


def _transformed_feature(shape, d):
    m = shape.matrix
    local = support_feature(shape.shape, m[:3, :3].T @ d)
    return list(np.asarray(local) @ m[:3, :3].T + m[:3, 3])


def _sum_feature(shape, d):
    fa, fb = support_feature(shape.a, d), support_feature(shape.b, d)
    return [p + q for p in fa for q in fb]


def _hull_of_feature(shape, d):
    return _band(support_feature(shape.a, d) + support_feature(shape.b, d), d)


def _box_feature(_, d, half):
    """Corners of the box face/edge/vertex along d: axes with |d_i| <= sin(angle) are free."""
    free = np.abs(d) <= math.sin(FEATURE_ANGLE)
    signs = [(-1.0, 1.0) if free[i] else (math.copysign(1.0, d[i]),) for i in range(3)]
    return [np.array((sx * half[0], sy * half[1], sz * half[2]))
            for sx in signs[0] for sy in signs[1] for sz in signs[2]]


def _cylinder_feature(shape, d, r, h):
    across = math.hypot(d[0], d[1])
    sin_a = math.sin(FEATURE_ANGLE)
    if across <= sin_a:
        return sample_feature(shape, d)      # a flat cap: the PSM samples its rim
    if abs(d[2]) <= sin_a and h > 0.0:       # the side: a straight line along the axis
        x, y = r * d[0] / across, r * d[1] / across
        return [np.array((x, y, -h)), np.array((x, y, h))]
    return [shape.support(d)]


def _cone_feature(shape, d, r, h):
    across = math.hypot(d[0], d[1])
    sin_a = math.sin(FEATURE_ANGLE)
    if across <= sin_a and d[2] < 0.0:
        return sample_feature(shape, d)      # the base disc
    if across > 0.0:
        # The side line from the apex to the rim at d's azimuth has outward normal
        # (2h cos φ, 2h sin φ, r) / |·|: d within the angle of it means that line.
        c, s = d[0] / across, d[1] / across
        m = np.array((2.0 * h * c, 2.0 * h * s, r))
        m /= np.linalg.norm(m)
        if float(np.dot(m, d)) >= math.cos(FEATURE_ANGLE):
            return [np.array((0.0, 0.0, h)), np.array((r * c, r * s, -h))]
    return [shape.support(d)]


def _band(points, d):
    """The points (of two shapes' features, for a hull of shapes) within FEATURE_ANGLE below the
    support plane as seen from the topmost point: a face tilted by less than that angle keeps all
    its corners."""
    heights = [float(np.dot(p, d)) for p in points]
    i = max(range(len(points)), key=heights.__getitem__)
    top, height = points[i], heights[i]
    slope = math.tan(FEATURE_ANGLE)
    rounding = BAND_ROUNDING * max(float(np.max(np.abs(p))) for p in points)
    out = []
    for p, y in zip(points, heights):
        lateral = p - top
        lateral = float(np.linalg.norm(lateral - np.dot(lateral, d) * d))
        if height - y <= slope * lateral + rounding:
            out.append(p)
    return out


def _hull_feature(shape, d):
    """The face, edge or vertex of a hull along d: the supporting face most aligned with d if
    within the feature angle (its vertices), else the most level edge from the top vertex if
    within it, else the top vertex. Faces come from the hull's triangles when it has them, else
    from the few vertices near the support plane (a triple spans a face when all vertices lie
    below its plane)."""
    vertices = np.asarray(shape.vertices, float)
    faces = getattr(shape, "faces", None)
    heights = vertices @ d
    top = int(np.argmax(heights))
    size = float(np.max(np.abs(vertices))) or 1.0
    tol = MERGE_TOLERANCE * size
    cos_a = math.cos(FEATURE_ANGLE)
    normal = None
    if faces is not None and len(faces):
        normals = _face_normals(shape, vertices, faces)
        cosines = normals @ d
        best = int(np.argmax(cosines))
        if cosines[best] >= cos_a:
            normal = normals[best]
    else:
        candidates = _band_indices(vertices, heights, top, d)[:HULL_CANDIDATES]
        best_cos = cos_a
        for i, j, k in _triples(candidates):
            m = np.cross(vertices[j] - vertices[i], vertices[k] - vertices[i])
            length = float(np.linalg.norm(m))
            if length <= tol * size:
                continue
            m /= length
            c = float(m @ d)
            if c < 0.0:
                m, c = -m, -c
            if c >= best_cos and float(np.max(vertices @ m)) <= float(m @ vertices[i]) + tol:
                normal, best_cos = m, c
    if normal is not None:
        on_plane = np.abs(vertices @ normal - float(normal @ vertices[top])) <= tol
        return list(vertices[on_plane])
    # No face: the most level edge from the top vertex, if it is within the angle.
    slope = math.tan(FEATURE_ANGLE)
    best, best_ratio = None, slope
    for i in _band_indices(vertices, heights, top, d):
        if i == top:
            continue
        lateral = vertices[i] - vertices[top]
        lateral = float(np.linalg.norm(lateral - np.dot(lateral, d) * d))
        ratio = (heights[top] - heights[i]) / lateral if lateral > 0.0 else math.inf
        if ratio <= best_ratio:
            best, best_ratio = i, ratio
    return [vertices[top]] if best is None else [vertices[top], vertices[best]]


_NORMALS = weakref.WeakKeyDictionary()     # Hull → its faces' unit normals (shapes are immutable)


def _face_normals(shape, vertices, faces):
    """Unit outward normals of the hull's triangles (zero rows for degenerate ones), cached."""
    try:
        return _NORMALS[shape]
    except (KeyError, TypeError):
        pass
    tri = vertices[np.asarray(faces)]
    normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    lengths = np.linalg.norm(normals, axis=1)
    ok = lengths > 0.0
    normals[ok] /= lengths[ok][:, None]
    normals[~ok] = 0.0
    try:
        _NORMALS[shape] = normals
    except TypeError:                         # not weak-referenceable: no cache
        pass
    return normals


def _band_indices(vertices, heights, top, d):
    """Vertices within FEATURE_ANGLE below the support plane as seen from the top vertex, the
    nearest to the plane first."""
    offsets = vertices - vertices[top]
    offsets -= np.outer(offsets @ d, d)
    lateral = np.linalg.norm(offsets, axis=1)
    drop = heights[top] - heights
    inside = drop <= math.tan(FEATURE_ANGLE) * lateral \
        + BAND_ROUNDING * float(np.max(np.abs(vertices)))
    indices = np.nonzero(inside)[0]
    return [int(i) for i in indices[np.argsort(drop[indices])]]


def _triples(indices):
    n = len(indices)
    for a in range(n):
        for b in range(a + 1, n):
            for c in range(b + 1, n):
                yield indices[a], indices[b], indices[c]


def sample_feature(shape, d, samples: int = PSM_SAMPLES, angle: float = PSM_ANGLE) -> list:
    """Perturbed Sampling Manifold (seed 001 Alg. 13): supports along d tilted by ``angle`` and
    turned around d in ``samples`` steps, plus the support along d; samples that fall below the
    support plane by more than a flat face tilted by the feature angle would are dropped (they
    come from a curved surface, the method's known trouble spot)."""
    d = np.asarray(d, float)
    u, v = plane_basis(d)
    top = shape.support(d)
    height = float(np.dot(top, d))
    tilt = math.tan(angle)
    out = [top]
    for k in range(samples):
        phi = 2.0 * math.pi * k / samples
        p = shape.support(d + tilt * (math.cos(phi) * u + math.sin(phi) * v))
        lateral = float(np.linalg.norm(p - top - np.dot(p - top, d) * d))
        if height - float(np.dot(p, d)) <= PSM_KEEP_SLOPE * lateral + \
                BAND_ROUNDING * max(lateral, float(np.max(np.abs(top)))):
            out.append(p)
    return out


# Per feature form of the kinds (``kinds.FEATURE_*``): its points from (shape, unit d, *sizes).
_FEATURES = {
    kinds.FEATURE_POINT: lambda shape, d: [np.zeros(3)],
    kinds.FEATURE_BOX: _box_feature,
    kinds.FEATURE_CYLINDER: _cylinder_feature,
    kinds.FEATURE_CONE: _cone_feature,
    kinds.FEATURE_CURVED: lambda shape, d: [shape.support(d)],
    kinds.FEATURE_HULL: _hull_feature,
    kinds.FEATURE_SUM: _sum_feature,
    kinds.FEATURE_HULL_OF: _hull_of_feature,
    kinds.FEATURE_TRANSFORMED: _transformed_feature,
    kinds.FEATURE_SAMPLED: sample_feature,
}


# --- the contact plane ------------------------------------------------------------------------

def plane_basis(n):
    """Unit u, v with (u, v, n) right-handed and orthonormal, as arrays: the contact plane's axes
    (``geometry.tangent_basis``; the concave manifolds use it too)."""
    u, v = tangent_basis((float(n[0]), float(n[1]), float(n[2])))
    return np.array(u), np.array(v)


def _surface(feature):
    """Height of the feature's surface above a contact-plane point (x, y): the feature's plane
    through three well-spread corners, or its line for an edge, or its height for a vertex."""
    if len(feature) == 1:
        h = feature[0][2]
        return lambda x, y: h
    flat = [p[:2] for p in feature]
    i, j = _farthest_pair(flat)
    (ax, ay, ah), (bx, by, bh) = feature[i], feature[j]
    dx, dy = bx - ax, by - ay
    dd = dx * dx + dy * dy
    k = max(range(len(feature)), key=lambda m: abs(planar.area(flat[i], flat[j], flat[m])))
    cx, cy, ch = feature[k]
    det = dx * (cy - ay) - dy * (cx - ax)
    if len(feature) == 2 or abs(det) <= PARALLEL_SIN * dd:
        # An edge: interpolate along it by the projection of the point.
        def along(x, y):
            t = 0.0 if dd == 0.0 else ((x - ax) * dx + (y - ay) * dy) / dd
            t = 0.0 if t < 0.0 else 1.0 if t > 1.0 else t
            return ah + t * (bh - ah)
        return along
    # A face: h = ah + g·(p − a), the gradient g solving the two edges a→b and a→c.
    ex, ey, eh = cx - ax, cy - ay, ch - ah
    gx = ((bh - ah) * ey - eh * dy) / det
    gy = (dx * eh - ex * (bh - ah)) / det
    return lambda x, y: ah + gx * (x - ax) + gy * (y - ay)


def _farthest_pair(projected):
    best, pair = -1.0, (0, 0)
    for i in range(len(projected)):
        for j in range(i + 1, len(projected)):
            d = planar.dist(projected[i], projected[j])
            if d > best:
                best, pair = d, (i, j)
    return pair
