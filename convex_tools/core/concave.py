"""Queries on concave shapes (``Compound``, ``TriangleMesh``) against convex shapes and each other.

Every query here is the convex query over pairs of parts, with the box trees (``bvh``) choosing
the pairs. A convex shape takes part as a set of one part (a tree of one box), so compound–convex,
compound–compound, mesh–convex and mesh–compound all run the same walks:

- ``distance``: branch and bound, best first. Part pairs come in order of their box gap (a lower
  bound on their distance); GJK runs on each until the gap reaches the best distance found (a
  shape above a triangle is often settled by one support call instead, ``_triangle_distance``).
- ``intersect``: any part pair with overlapping boxes that intersects.
- ``penetration``: the deepest contact over the part pairs that overlap. Against a mesh, each
  triangle the shape touches gives a contact out of its front face (``_triangle_contact``:
  one-sided, with active edges), so a box sunk into a floor of many triangles gets the floor's
  depth and normal, never a short push across some triangle's inner edge.
- ``contact_manifold``: the manifolds of the touching part pairs whose normal agrees with the
  deepest contact's, merged and reduced to ``max_points``.
- ``ray_cast``: the nearest hit, parts in order of the ray's entry into their boxes; triangles
  have a closed form.
- ``sweep``: the earliest contact, part pairs in order of the time their boxes first meet
  (swept-box pruning).

Results carry the part(s) that realised them (``part_a``/``part_b``, ``part`` on a ray hit) as the
index ``part_id`` gives: the index in a compound's ``parts``, the row in a mesh's ``triangles``.

Two meshes are surfaces without volume: ``distance``, ``intersect`` and ``sweep`` work on them
(triangle against triangle), ``penetration`` and ``contact_manifold`` refuse them with a
ValueError (neither has an inside to be pushed out of).

This module calls the convex algorithms through their public functions (``gjk.distance``,
``penetration.penetration``, ...); ``queries`` calls it, so the dependency runs one way.
"""

from __future__ import annotations

import math

import numpy as np

from . import bvh, gjk, manifold, planar, raycast, sweep as sweeps, validation
from . import penetration as depths
from .compound import ConcaveShape
from .geometry import LENGTH_FLOOR
from .results import Contact, DistanceResult, Manifold, RayHit, Status
from .shapes import translated

# Contact normals within this angle (radians) of a triangle's face normal are face contacts:
# EPA's normal for a push straight out of the face differs from it only by rounding.
FACE_ANGLE = 1e-6

# Corners of a triangle within this fraction of its size of the highest along a push direction
# lead it together (an edge rather than a vertex): EPA's normal over an edge is perpendicular
# to it only to rounding.
FEATURE_TOLERANCE = 1e-9

# Manifold points of part pairs whose normal is within this angle (radians) of the deepest
# contact's join its manifold: a floor of triangles tilted by a few degrees is one contact.
MERGE_ANGLE = math.radians(10.0)

# Manifold points closer than this fraction of the contact's size are one point (the clipped
# pieces of neighbouring triangles share their edges' points): the convex manifolds' own.
MERGE_TOLERANCE = manifold.MERGE_TOLERANCE

# A point of a triangle's plane counts as inside the triangle when it is within this fraction of
# an edge's length outside it (so that a ray through a shared edge hits one of the two
# triangles, whichever rounding favours); a ray origin this close to the plane (relative to the
# triangle's size) starts on it.
EDGE_TOLERANCE = 1e-12

# The sweep that measures how far a shape must move out of a face (``_face_depth``) starts this
# fraction of the shape's size beyond the face's plane, so that it starts clear of the triangle.
FACE_SWEEP_START = 1e-3

# Cap on the conservative-advancement steps that finish that sweep. Each step closes the gap by
# the factor 1 − cos θ (θ between the face normal and the contact's); the sweep usually leaves
# nothing to close, so one or two steps are the rule (7 the most in 1900 random contacts on
# curved terrain) and the cap only bounds a grazing contact.
MAX_ADVANCE_STEPS = 32


# --- the sets of parts ---------------------------------------------------------------------------

class _Single:
    """A convex shape seen as a set of one part, so that every pairing runs the same walks."""

    __slots__ = ("shape", "tree")
    is_mesh = False

    def __init__(self, shape) -> None:
        self.shape = shape
        lower, upper = shape.aabb()
        self.tree = bvh.AABBTree.single(lower, upper)

    def part(self, i):
        return self.shape

    def part_id(self, i):
        return None


def _view(name, shape):
    if isinstance(shape, ConcaveShape):
        return shape
    # The adapted shape: a user's plain class gets its box (and range check) here, once.
    return _Single(validation.shape(name, shape))


def _count(stats):
    if stats is not None:
        stats.tests += 1


# --- distance, intersection ----------------------------------------------------------------------

def distance(a, b, stats: bvh.TraversalStats | None = None, max_distance: float = math.inf):
    """Smallest distance over the part pairs of ``a`` and ``b``, with the pair in ``part_a``/
    ``part_b``; ``support_calls`` sums every test.

    ``max_distance``: only part pairs that may be that close are examined, and None is the
    answer when none is (the level check asks only about pairs within a clearance).
    """
    va, vb = _view("a", a), _view("b", b)
    found = _closest(va, vb, stats, max_distance)
    if found is None:
        return None
    best, i, j = found
    best.part_a, best.part_b = va.part_id(i), vb.part_id(j)
    return best


def _closest(va, vb, stats, limit=math.inf):
    """Branch and bound over the part pairs: (DistanceResult, i, j) of the closest pair no
    farther than ``limit`` (None if there is none), ``support_calls`` the sum over every test.

    Pairs come in order of their box gap (a lower bound on their distance) and are tested until
    that bound passes the best distance found, or the limit.
    """
    best, best_d, pair, calls = None, math.inf, None, 0
    mesh_a, mesh_b = va.is_mesh, vb.is_mesh and not va.is_mesh
    for gap, i, j in bvh.nearest_pairs(va.tree, vb.tree, stats):
        if gap >= best_d or gap > limit:
            break             # every remaining pair is at least this far apart
        _count(stats)
        bound = min(best_d, limit)
        if mesh_a or mesh_b:
            r = _triangle_distance(va, i, vb.part(j), bound) if mesh_a else \
                _flip_distance(_triangle_distance(vb, j, va.part(i), bound))
        else:
            r = gjk.distance(va.part(i), vb.part(j))
        if r is None:
            calls += 1
            continue
        calls += r.support_calls
        if r.distance < best_d and r.distance <= limit:
            best, best_d, pair = r, r.distance, (i, j)
            if r.intersecting:
                break
    if best is None:
        return None
    best.support_calls = calls
    return best, pair[0], pair[1]


def _triangle_distance(mesh, i, shape, bound):
    """Distance from triangle ``i`` of ``mesh`` to ``shape`` (the triangle as A), or None when
    it is known to exceed ``bound``.

    One support call settles the common case of a shape above a terrain: the shape's point p
    nearest the triangle's plane is at its distance from the plane, −h (h as in
    ``_plane_depth``), which bounds its distance to the triangle from below, and is that
    distance exactly when p's foot q on the plane lies in the triangle (then |p − q| = −h).
    Otherwise, and for shapes reaching the plane, GJK.
    """
    nx, ny, nz = mesh.normal_tuple(i)
    corners = mesh.corners(i)
    ax, ay, az = corners[0]
    px, py, pz = shape.support_xyz(-nx, -ny, -nz)
    h = nx * (ax - px) + ny * (ay - py) + nz * (az - pz)
    if h < 0.0:
        if -h > bound:
            return None
        q = (px + h * nx, py + h * ny, pz + h * nz)
        if _inside_triangle(corners, (nx, ny, nz), q):
            return DistanceResult(-h, np.array(q), np.array((px, py, pz)), False, 0, 1)
    return gjk.distance(mesh.part(i), shape)


def _flip_distance(r):
    if r is None:
        return None
    return DistanceResult(r.distance, r.point_b, r.point_a, r.intersecting, r.iterations,
                          r.support_calls, r.status)


def intersect(a, b, test, stats: bvh.TraversalStats | None = None) -> bool:
    """True when some part of ``a`` overlaps or touches some part of ``b``; ``test(p, q)`` says
    whether two convex parts do (``queries.intersect`` passes the method it was asked for)."""
    va, vb = _view("a", a), _view("b", b)
    for i, j in bvh.overlapping_pairs(va.tree, vb.tree, stats=stats):
        _count(stats)
        if test(va.part(i), vb.part(j)):
            return True
    return False


def signed_distance(a, b) -> float:
    """Distance when apart, minus the depth of ``penetration`` when overlapping."""
    r = distance(a, b)
    if not r.intersecting:
        return r.distance
    contact = penetration(a, b)
    return -contact.depth if contact is not None and contact.depth > 0.0 else 0.0


# --- penetration ---------------------------------------------------------------------------------

def penetration(a, b, method: str = "epa", stats: bvh.TraversalStats | None = None):
    """The deepest contact over the part pairs that overlap (a ``Contact`` naming them), or None.

    With a mesh on either side, each triangle's contact pushes out of its front face (see the
    module and ``_triangle_contact``); two meshes are refused.
    """
    if method not in depths.METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, depths.METHODS))}, "
                         f"got {method!r}")
    va, vb = _view("a", a), _view("b", b)
    if va.is_mesh and vb.is_mesh:
        raise ValueError("penetration of two TriangleMesh surfaces is not defined (neither has "
                         "an inside); use distance or intersect")
    flip = vb.is_mesh
    if flip:
        va, vb = vb, va
    found = _contacts(va, vb, method, stats, deepest_only=True)
    if not found:
        return None
    best = max(found, key=lambda c: c[0].depth)
    contact, i, j, _ = best
    contact.part_a, contact.part_b = va.part_id(i), vb.part_id(j)
    contact.support_calls = sum(c[0].support_calls for c in found)
    return _flip_contact(contact) if flip else contact


def _contacts(va, vb, method, stats, deepest_only=False):
    """(Contact, i, j, face) for the part pairs that overlap; A is the mesh if there is one, and
    ``face`` says the contact is out of a triangle's front face.

    ``deepest_only``: against a mesh, only what the deepest contact needs. A triangle's contact
    is never deeper than the shape's reach behind its plane (one support call), so triangles go
    in order of that bound and stop once it falls to the deepest contact found (branch and
    bound: on a floor the first triangle usually settles it).
    """
    pairs = bvh.overlapping_pairs(va.tree, vb.tree, stats=stats)
    out = []
    if not va.is_mesh:
        for i, j in pairs:
            _count(stats)
            c = depths.penetration(va.part(i), vb.part(j), method)
            if c is not None:
                out.append((c, i, j, False))
        return out
    touched = []
    for i, j in pairs:
        _count(stats)
        shape = vb.part(j)
        tri = va.part(i)
        if gjk.intersect(tri, shape):
            touched.append((_plane_depth(va, i, shape), i, j, tri, shape))
    touched.sort(key=lambda t: -t[0])
    deepest = -1.0
    for bound, i, j, tri, shape in touched:
        if deepest_only and bound <= deepest:
            break
        c, face = _triangle_contact(va, i, tri, shape, method)
        out.append((c, i, j, face))
        deepest = max(deepest, c.depth)
    return out


def _plane_depth(mesh, i, shape):
    """The shape's reach behind triangle ``i``'s plane: n·a − min over the shape of n·x."""
    nx, ny, nz = mesh.normal_tuple(i)
    ax, ay, az = mesh.corners(i)[0]
    px, py, pz = shape.support_xyz(-nx, -ny, -nz)
    return nx * (ax - px) + ny * (ay - py) + nz * (az - pz)


def _triangle_contact(mesh, i, tri, shape, method):
    """Contact of ``shape`` with triangle ``i`` (``tri``) of ``mesh``, which it touches (normal
    from the mesh toward the shape), and whether it is out of the front face.

    The triangle is one-sided: what lies behind its plane is inside, and the contact is the
    push out of the front face (``_face_depth``). A shorter push (EPA on the triangle alone) is
    taken instead only when it leaves toward the front over an *active* edge or vertex of the
    mesh (the triangle's feature farthest along the push; ``TriangleMesh.active_edges``): across
    an inner edge the neighbour goes on, and the short push would only sink the shape into it.
    """
    face = _face_depth(mesh, i, tri, shape, method)
    if not mesh.has_active_feature(i) or face.depth == 0.0:
        return face, True
    edge = depths.penetration(tri, shape, method)
    if edge is None or edge.depth >= face.depth:
        return face, True
    m = edge.normal
    along = float(np.dot(m, face.normal))
    if along < 0.0 or along >= math.cos(FACE_ANGLE):
        return face, True     # toward the back (never out of a one-sided face), or the face
    if not mesh.feature_is_active(i, _leading_corners(mesh.corners(i), m)):
        return face, True
    edge.support_calls += face.support_calls
    return edge, False


def _face_depth(mesh, i, tri, shape, method):
    """How far ``shape`` must move along triangle ``i``'s front normal n to stop overlapping it,
    as a ``Contact`` with exact witness points.

    The shape's reach behind the plane, h = n·a − min over the shape of n·x (one support
    call), is enough, and exact when the deepest point p lies over the triangle: p + h·n is
    then on the triangle. When p lies beyond it (the shape overhangs the triangle's edge, on a
    surface that curves away), less may do: the shape is placed just clear in front of the
    plane and swept back along −n to its first contact with the triangle, and the depth is the
    distance left to go. Measuring against the plane alone would report a prop resting on a
    smooth hilltop as sunk by its overhang times the slope.
    """
    nx, ny, nz = mesh.normal_tuple(i)
    corners = mesh.corners(i)
    ax, ay, az = corners[0]
    px, py, pz = shape.support_xyz(-nx, -ny, -nz)
    h = nx * (ax - px) + ny * (ay - py) + nz * (az - pz)
    n = np.array((nx, ny, nz))
    q = (px + h * nx, py + h * ny, pz + h * nz)
    if h <= 0.0 or _inside_triangle(corners, (nx, ny, nz), q):
        h = max(h, 0.0)
        return Contact(h, n, np.array(q), np.array(q) - h * n, 0, 1, Status.CONVERGED, method)
    lower, upper = shape.aabb()
    size = float(np.max(upper - lower))
    start = h + FACE_SWEEP_START * size
    hit = sweeps.sweep(translated(shape, start * n), tri, -start * n)
    calls = 1 + (hit.support_calls if hit is not None else 0)
    # The sweep's time is checked against GJK distance, and finished by conservative advancement
    # where it stopped short: a sweep that touches only at its very end (a box resting exactly
    # on the face, ~5e-3 of the size to go) can miss by rounding, and a curved shape's polished
    # time leaves GJK a gap of up to ~4e-9 of the size (a stalled cast ~1e-8). At a clear pose
    # s, moving back by the distance d cannot make the two overlap (a move of d along a unit
    # vector closes a gap by at most d), so s − d is still at or beyond the exit and the gap
    # shrinks from there.
    s = start if hit is None else start * (1.0 - hit.t)
    touching = gjk.touching_tolerance(max(size, float(np.max(np.abs(upper))), LENGTH_FLOOR))
    status = Status.ITERATION_LIMIT
    for step in range(MAX_ADVANCE_STEPS):
        r = gjk.distance(tri, translated(shape, s * n))
        calls += r.support_calls
        if r.intersecting or r.distance <= touching:
            status = Status.CONVERGED
            break
        if step + 1 < MAX_ADVANCE_STEPS:
            s -= r.distance   # (the last pose stays the one r was measured at)
    s = max(s, 0.0)
    point_a = np.asarray(r.point_a, float)
    return Contact(s, n, point_a, point_a - s * n, 0, calls, status, method)


def _inside_triangle(corners, n, q):
    """Whether q (in the triangle's plane) lies in the triangle, edges included."""
    qx, qy, qz = q
    nx, ny, nz = n
    for k in range(3):
        x0, y0, z0 = corners[k]
        x1, y1, z1 = corners[(k + 1) % 3]
        ex, ey, ez = x1 - x0, y1 - y0, z1 - z0
        wx, wy, wz = qx - x0, qy - y0, qz - z0
        # (e × w)·n: q's signed distance inside this edge, times the edge's length.
        if (ey * wz - ez * wy) * nx + (ez * wx - ex * wz) * ny + (ex * wy - ey * wx) * nz \
                < -EDGE_TOLERANCE * (ex * ex + ey * ey + ez * ez):
            return False
    return True


def _leading_corners(corners, m):
    """Which corners of a triangle lead along direction m (one: a vertex, two: an edge)."""
    heights = [c[0] * m[0] + c[1] * m[1] + c[2] * m[2] for c in corners]
    top = max(heights)
    size = max(abs(x) for c in corners for x in c) or 1.0
    return [k for k in range(3) if heights[k] >= top - FEATURE_TOLERANCE * size]


def _flip_contact(c: Contact) -> Contact:
    return Contact(c.depth, -c.normal, c.point_b, c.point_a, c.iterations, c.support_calls,
                   c.status, c.method, c.part_b, c.part_a)


# --- contact manifolds ---------------------------------------------------------------------------

def contact_manifold(a, b, max_points: int = manifold.MAX_POINTS,
                     stats: bvh.TraversalStats | None = None):
    """Contact region over the touching part pairs, as one ``Manifold``; None if apart.

    The normal is the deepest contact's (``penetration``); the manifolds of the part pairs whose
    normal lies within MERGE_ANGLE of it are merged and reduced to ``max_points`` (the deepest
    point, the one farthest from it, then those adding the most area). Against a mesh, each
    triangle's face contact gives the shape's deepest feature clipped to the triangle.
    """
    if not isinstance(max_points, (int, np.integer)) or max_points < 1:
        raise ValueError(f"max_points must be a positive integer, got {max_points!r}")
    va, vb = _view("a", a), _view("b", b)
    if va.is_mesh and vb.is_mesh:
        raise ValueError("contact_manifold of two TriangleMesh surfaces is not defined "
                         "(neither has an inside); use distance or intersect")
    flip = vb.is_mesh
    if flip:
        va, vb = vb, va
    found = _contacts(va, vb, "epa", stats)
    if not found:
        return None
    deepest, di, dj, _ = max(found, key=lambda c: c[0].depth)
    n = deepest.normal
    cos_merge = math.cos(MERGE_ANGLE)
    points, depths_, owners = [], [], []
    calls = sum(c[0].support_calls for c in found)
    for c, i, j, face in found:
        if float(np.dot(c.normal, n)) < cos_merge:
            continue
        if face:
            region = _face_region(va, i, vb.part(j), c.depth)
        elif va.is_mesh:
            region = [(0.5 * (c.point_a + c.point_b), c.depth)]
        else:
            m = manifold.contact_manifold(va.part(i), vb.part(j), max_points)
            if m is None:
                continue
            calls += m.support_calls
            region = list(zip(m.points, m.depths))
        for p, d in region:
            points.append(np.asarray(p, float))
            depths_.append(max(float(d), 0.0))
            owners.append((va.part_id(i), vb.part_id(j)))
    if not points:
        mid = 0.5 * (deepest.point_a + deepest.point_b)
        points, depths_, owners = [mid], [deepest.depth], [(va.part_id(di), vb.part_id(dj))]
    keep = _reduce(np.array(points), np.array(depths_), n, max_points)
    out = Manifold(np.array(n, float), np.array([points[k] for k in keep]),
                   np.array([depths_[k] for k in keep]), calls, deepest.status,
                   part_a=va.part_id(di), part_b=vb.part_id(dj),
                   parts=[owners[k] for k in keep])
    if flip:
        out = Manifold(-out.normal, out.points, out.depths, out.support_calls, out.status,
                       part_a=out.part_b, part_b=out.part_a,
                       parts=[(q, p) for p, q in out.parts])
    return out




def _face_region(mesh, i, shape, depth):
    """(point, depth) corners where ``shape``'s deepest feature along −n overlaps triangle
    ``i``, each point midway between the triangle's plane and the shape's feature."""
    n = mesh.normals[i]
    u, v = manifold.plane_basis(n)
    corners = np.array(mesh.corners(i))
    offset = float(np.dot(corners[0], n))
    feature = np.array(manifold.support_feature(shape, -n))
    tri2 = [(float(p @ u), float(p @ v)) for p in corners]          # counter-clockwise
    feat2 = feature @ np.stack((u, v), axis=1)
    heights = feature @ n
    size = max(float(np.max(np.abs(corners))), float(np.max(np.abs(feature))), LENGTH_FLOOR)
    tol = MERGE_TOLERANCE * size
    region = _clip_to_triangle([tuple(p) for p in feat2.tolist()], tri2, tol)
    height_at = _height_function(feat2, heights, tol)
    out = []
    for x, y in region:
        f = height_at(x, y)
        d = offset - f
        if d < -tol:
            continue          # the shape's feature is in front of the face here
        mid = 0.5 * (offset + f)
        out.append((x * u + y * v + mid * n, max(d, 0.0)))
    return out


def _clip_to_triangle(points, tri, tol):
    """The part of the convex hull of ``points`` inside the counter-clockwise triangle ``tri``
    (a segment or a point clips the same way)."""
    return planar.clip(planar.hull(points, tol), list(tri), tol)


def _height_function(xy, heights, tol):
    """Height of the feature (a plane through its points, a line, or a point) at (x, y)."""
    if len(xy) >= 3:
        a = np.column_stack((xy, np.ones(len(xy))))
        coef, _, rank, _ = np.linalg.lstsq(a, heights, rcond=None)
        if rank == 3:
            cx, cy, c0 = (float(c) for c in coef)
            return lambda x, y: cx * x + cy * y + c0
    if len(xy) >= 2:
        far = int(np.argmax(np.linalg.norm(xy - xy[0], axis=1)))
        (px, py), (qx, qy) = xy[0], xy[far]
        hp, hq = float(heights[0]), float(heights[far])
        ex, ey = qx - px, qy - py
        span = ex * ex + ey * ey
        if span > tol * tol:
            return lambda x, y: hp + (hq - hp) * ((x - px) * ex + (y - py) * ey) / span
    h = float(heights[0])
    return lambda x, y: h


def _reduce(points, depths_, n, max_points):
    """Indices of at most ``max_points`` points: duplicates merged (in the contact plane), the
    deepest first (among equally deep ones — a face resting flat, cut into pieces by the
    triangles under it — the one farthest out, a corner of the region), then the corners
    ``planar.reduce`` picks, as for a convex pair."""
    u, v = manifold.plane_basis(n)
    xy = np.stack((points @ u, points @ v), axis=1)
    size = max(float(np.max(np.abs(points))), LENGTH_FLOOR)
    order = np.argsort(-depths_, kind="stable")
    unique = []
    for k in order.tolist():
        if all(float(np.max(np.abs(xy[k] - xy[q]))) > MERGE_TOLERANCE * size for q in unique):
            unique.append(k)
    if len(unique) <= max_points:
        return unique
    top = depths_[unique[0]]
    level = [k for k in unique if depths_[k] >= top - MERGE_TOLERANCE * max(size, top)]
    centre = xy[unique].mean(axis=0)
    first = max(level, key=lambda k: float(np.sum((xy[k] - centre) ** 2)))
    unique.remove(first)
    unique.insert(0, first)
    # (That one counts as the deepest: equally deep within the merge tolerance.)
    depth = [float(depths_[k]) for k in unique]
    depth[0] = max(depth)
    picked = planar.reduce([tuple(p) for p in xy[unique].tolist()], depth, max_points)
    return [unique[i] for i in picked]


# --- ray casts -----------------------------------------------------------------------------------

def ray_cast(shape, origin, direction, max_t=math.inf, method: str = "auto",
             stats: bvh.TraversalStats | None = None):
    """Nearest hit of the ray over the parts of ``shape``, a ``RayHit`` naming the ``part``, or
    None. A mesh's triangles are hit from either side; the normal faces the ray."""
    o = validation.vector("origin", origin)
    d = validation.direction("direction", direction)
    max_t = validation.max_t(max_t)
    if method not in ("auto", "gjk"):
        raise ValueError(f"method must be 'auto' or 'gjk', got {method!r}")
    best, best_part = None, None
    limit = max_t
    for t_enter, j in bvh.ray(shape.tree, o, d, max_t, stats):
        if t_enter > limit:
            break
        _count(stats)
        if shape.is_mesh:
            hit = _ray_triangle(shape, j, o, d, limit)
        else:
            hit = raycast.ray_cast(shape.part(j), o, d, limit, None, method)
        if hit is not None and (best is None or hit.t < best.t):
            best, best_part, limit = hit, j, hit.t
            if hit.t == 0.0:
                break
    if best is None:
        return None
    best.part = shape.part_id(best_part)
    return best


def _ray_triangle(mesh, i, o, d, max_t):
    """Closed-form hit of the ray on triangle ``i`` (either side), or None.

    A ray that starts on the triangle's plane but outside the triangle meets it, if at all,
    only while running in the plane (along a flat floor, along a shared edge): that grazing
    case is the convex ray cast's, which hits the triangle's rim as it hits a box's face.
    """
    (ax, ay, az), (bx, by, bz), (cx, cy, cz) = mesh.corners(i)
    nx, ny, nz = mesh.normal_tuple(i)
    ox, oy, oz = (float(c) for c in o)
    dx, dy, dz = (float(c) for c in d)
    height = nx * (ox - ax) + ny * (oy - ay) + nz * (oz - az)        # origin above the plane
    speed = nx * dx + ny * dy + nz * dz
    size = max(abs(bx - ax) + abs(by - ay) + abs(bz - az),
               abs(cx - ax) + abs(cy - ay) + abs(cz - az))
    if abs(height) <= EDGE_TOLERANCE * size:
        t = 0.0
    elif speed == 0.0 or height * speed > 0.0:
        return None           # parallel to the plane, or moving away from it
    else:
        t = -height / speed
        if t > max_t:
            return None
    px, py, pz = ox + t * dx, oy + t * dy, oz + t * dz
    for (x0, y0, z0), (x1, y1, z1) in (((ax, ay, az), (bx, by, bz)),
                                       ((bx, by, bz), (cx, cy, cz)),
                                       ((cx, cy, cz), (ax, ay, az))):
        ex, ey, ez = x1 - x0, y1 - y0, z1 - z0
        qx, qy, qz = px - x0, py - y0, pz - z0
        # (e × q)·n: the hit's signed distance inside this edge, times the edge's length.
        inside = (ey * qz - ez * qy) * nx + (ez * qx - ex * qz) * ny + (ex * qy - ey * qx) * nz
        if inside < -EDGE_TOLERANCE * (ex * ex + ey * ey + ez * ez):
            return raycast.ray_cast(mesh.part(i), o, d, max_t) if t == 0.0 else None
    if t == 0.0:
        normal = (0.0, 0.0, 0.0)
    else:
        s = -1.0 if speed > 0.0 else 1.0                              # facing the ray
        normal = (s * nx, s * ny, s * nz)
    return RayHit(t, np.array((px, py, pz)), np.array(normal))


# --- sweeps --------------------------------------------------------------------------------------

def sweep(a, b, translation_a, translation_b=(0.0, 0.0, 0.0),
          stats: bvh.TraversalStats | None = None):
    """Earliest contact over the part pairs of ``a`` moving by ``translation_a`` and ``b`` by
    ``translation_b`` (a ``SweepHit`` naming the parts), or None."""
    va, vb = _view("a", a), _view("b", b)
    ta = validation.vector("translation_a", translation_a)
    tb = validation.vector("translation_b", translation_b)
    best, pair = None, None
    for t_enter, i, j in bvh.swept_pairs(va.tree, vb.tree, ta - tb, 1.0, stats):
        if best is not None and t_enter > best.t:
            break
        _count(stats)
        hit = sweeps.sweep(va.part(i), vb.part(j), ta, tb)
        if hit is not None and (best is None or hit.t < best.t):
            best, pair = hit, (i, j)
            if hit.t == 0.0:
                break
    if best is None:
        return None
    best.part_a, best.part_b = va.part_id(pair[0]), vb.part_id(pair[1])
    return best


# --- part pairs near each other (the level check's support test) -------------------------------

def part_pairs_within(a, b, reach: float):
    """(part of a, part of b, normal of a's triangle or None, normal of b's triangle or None)
    for every part pair whose boxes are within ``reach`` of each other, nearest first (a convex
    shape is its own one part). The level check asks which of them holds an object up."""
    va, vb = _view("a", a), _view("b", b)
    for gap, i, j in bvh.nearest_pairs(va.tree, vb.tree):
        if gap > reach:
            break
        yield (va.part(i), vb.part(j),
               va.normal_tuple(i) if va.is_mesh else None,
               vb.normal_tuple(j) if vb.is_mesh else None)
