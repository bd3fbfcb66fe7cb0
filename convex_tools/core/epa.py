"""Expanding Polytope Algorithm: penetration depth of overlapping shapes (seed 000 §4, 001 §2.5).

The penetration depth of A and B is the distance from the origin to the boundary of the
configuration space obstacle C = A − B. EPA keeps a convex polytope P ⊂ C that contains the
origin, its vertices support points of C, and repeatedly

    1. takes the face of P nearest the origin (a binary heap keyed on the face's plane distance d),
    2. asks C for its support point w along the face's outward normal n,
    3. stops when the support plane is within tolerance of the face: w·n − d is small, else
    4. removes every face w can see (a flood fill over face adjacency, seed 001 Alg. 10) and
       closes the hole with a fan of triangles from the silhouette (horizon) edges to w.

Throughout, d of the nearest face is a lower bound on the depth (P ⊂ C is convex and contains
the origin) and w·n an upper bound. The answer is a depth, a unit normal n (from A toward B)
and, from the barycentric coordinates of the contact on the final triangle, a point on A and a
point on B with point_a − point_b = depth·n (seed 000 §4).

How it ends (see the tolerances below):
- exact: the support plane meets the face. Every polytope pair ends here; the contact comes from
  the triangle of that face of C that holds the origin's projection.
- certified: the gap w·n − d is within CERTIFY_TOLERANCE of the depth, so no direction is
  shallower by more than that. EPA converges only linearly on curvature (about 6 support calls per
  factor 100), so the rest is done locally (``depth_polish``): Newton's method on the support
  function where C is smooth, or on a straight fold of C (a box edge swept over an ellipsoid, a
  cylinder's side) in the one curved direction across it. Both land on a boundary point of C
  whose support plane squarely faces the origin, exact to ``depth_polish.POLISH_TOLERANCE``.
  Where neither applies, EPA goes on to UNPOLISHED_TOLERANCE and the ray along the face normal
  is pushed to the boundary with MPR's portal refinement. Every answer is a boundary point of
  C: translating A by it leaves the shapes touching.

GJK hands over a simplex of one to four points that contains the origin. A point, segment or
triangle is grown into a tetrahedron that contains it (seed 001 §2.5, made rigorous here): a
triangle with the support points on both sides of its plane, a segment with a triangle pierced by
its line (found by a small GJK in the plane across the segment), a single point with the support
points along the axes. Whenever C has no point beyond the origin along some direction tried on the
way, the shapes merely touch, and that direction is the normal of a zero-depth contact.

Nothing here trusts rounding to keep the polytope consistent: a degenerate new face, a face that
would come nearer the origin than the one it replaces, or a silhouette that is not one simple loop
ends the expansion; the answer is then finished from the best face verified so far, with status
CONVERGED if that face was already within UNPOLISHED_TOLERANCE, FAILED otherwise. The iteration
cap ends it the same way with ITERATION_LIMIT. The caller (``penetration``) then compares the
answer with MPR's estimate and keeps the shallower verified one.

Layering (docs/ARCHITECTURE.md): EPA uses MPR's portal refinement (``mpr.refine``) to finish
along a ray and ``depth_polish`` to finish on curved C; neither imports it back.
"""

from __future__ import annotations

import enum
import heapq
import math
from dataclasses import dataclass
from typing import NamedTuple

from . import mpr, simplex
from .depth_polish import (POLISH_FLOOR, Surface, polish, polish_tolerance, polished_points,
                           probe_shape)
from .geometry import (COORDINATE_ROUNDING, LENGTH_FLOOR, cross, dot, norm2, perpendicular,
                       sliver_cross, split_residual, sub, support_of_difference,
                       triangle_coordinates, triple)
from .results import Status
from .simplex import closest_to_origin, combine, refined_coordinates

# Support calls EPA may make (initial polytope and polish included). Polytope pairs converge in
# under 30, curved ones in under 60 (seed 001 §4.1.3 reports up to 98 for GJK + EPA together);
# (nearly) coaxial cylinders, whose every direction across the axis is (nearly) minimal, reach it.
MAX_ITERATIONS = 100

# Faces the polytope may grow to (each iteration adds about two net faces; this is only reached
# when something is wrong).
MAX_FACES = 1024

# Stopping rules. With d the face's distance and h = w·n its support plane (d <= depth <= h):
#  - exact: h − d at rounding level (ROUNDING_GAP below);
#  - certified: h − d <= CERTIFY_TOLERANCE · h; the answer is then polished locally, where C is
#    smooth or folded there (``depth_polish``), to its POLISH_TOLERANCE;
#  - otherwise EPA goes on to h − d <= UNPOLISHED_TOLERANCE · h and finishes along the ray.
CERTIFY_TOLERANCE = 1e-3
UNPOLISHED_TOLERANCE = 1e-6

# The answer's face is pushed along its normal to the boundary of C within this fraction of the
# size of C (MPR's portal refinement), so that translating A by the answer leaves the shapes
# touching to that even when the certified gap is larger.
RAY_TOLERANCE = 1e-9

# Contact points are exact to within ``geometry.COORDINATE_ROUNDING`` of their own coordinates'
# magnitude besides (shapes far from the origin relative to their size round there first).

# The polish starts only if its quadratic model puts the minimum within this many times EPA's
# certified gap below the start (a smooth minimum near EPA's answer cannot lie deeper).
POLISH_BUDGET = 10.0

# "Exact": the gap h − d is at the rounding noise of w·n (about 1e-16 times the size of C per
# term, with room for the sums; for shapes of unit size this is the 1e-12 in model units it
# replaced): scale-free for shapes far from the origin, 1e4 times larger than each other, or
# 1e-13 across (there is no tolerance in model units).
ROUNDING_GAP = 5e-13

# C counts as reaching no further than the origin along a direction (the shapes touch, depth 0)
# when its support value there is at most this fraction of the size of C.
TOUCHING_TOLERANCE = 1e-12

# A face is visible from a new support point w (and replaced) when w lies beyond its plane by
# more than this fraction of the size of C; points within it count as coplanar and are kept out,
# so that rounding noise never carves a concave notch.
VISIBLE_TOLERANCE = 1e-14

# A new face may come nearer the origin than the face it replaces (the polytope only grows) by
# at most this fraction of the size of C (rounding); more means an inverted face, and the
# expansion stops.
ORIGIN_TOLERANCE = 1e-10

# Faces whose unit normals differ by less than this in cosine (about 1e-6 rad) and whose planes
# lie within rounding of each other tile one flat face of C.
COPLANAR_COSINE_GAP = 1e-12

# A triangle is degenerate when |e1 × e2|² <= this · |e1|²·|e2|² (sine of its angle ~1e-10).
DEGENERATE_SIN2 = 1e-20

# A face whose angle at its new vertex has a sine below sqrt(this) is a sliver: its normal is
# taken from its two shorter edges (``geometry.sliver_cross``: from the far vertex the two long
# edges cancel, and the plane of a sliver 1e-6 wide and 2 long was 3e-11 off, enough for EPA on
# A − B and on B − A to take different faces for the nearest).
SLIVER_SIN2 = simplex.SLIVER_SIN2

# A tetrahedron is flat when |volume| <= this · |e1|·|e2|·|e3| (the box its edges span): the
# simplex sub-algorithm's own threshold.
FLAT_TETRAHEDRON_RATIO = simplex.FLAT_TETRAHEDRON_RATIO

# Support calls the in-plane search for a triangle pierced by a segment simplex may make.
MAX_PIERCE_ITERATIONS = 24

# GJK's segment simplex counts as a point when shorter than this fraction of the size of C; the
# in-plane search has found the segment's line once the projected origin is within PIERCED of it.
SHORT_SEGMENT = 1e-12
PIERCED = 1e-13

# A candidate initial tetrahedron holds the origin when its smallest barycentric coordinate is at
# least -this (rounding, for an origin on a face).
HOLDS_ORIGIN_SLACK = 1e-9


@dataclass
class EPAResult:
    """Outcome of EPA on C = A − B; vectors are plain tuples (the caller builds the Contact)."""

    status: Status
    depth: float
    normal: tuple
    point_a: tuple
    point_b: tuple
    iterations: int
    support_calls: int
    gap: float          # w·n − depth along the answer's normal: the depth is exact within it
    lower: float        # lower bound on the depth when EPA stopped
    upper: float        # upper bound on the depth (best support plane seen)
    scale: float        # size of C the tolerances were relative to
    along_ray: bool = False   # the answer is where the ray along ``normal`` leaves C, and
    #                           ``normal`` need not be C's own normal there (RAY finish)


class _Polytope:
    """Vertices of C (with their support points on A and B) and the support mapping of C."""

    __slots__ = ("sa", "sb", "W", "A", "B", "calls", "scale", "fine", "faces", "alive")

    def __init__(self, support_a, support_b, points_a, points_b, fine=None):
        self.sa, self.sb = support_a, support_b
        self.fine = fine          # the smaller shape's size, if known (contact-point tolerance)
        self.faces = self.alive = ()
        self.A = [tuple(p) for p in points_a]
        self.B = [tuple(p) for p in points_b]
        self.W = [(a[0] - b[0], a[1] - b[1], a[2] - b[2]) for a, b in zip(self.A, self.B)]
        self.calls = 0
        self.scale = max([math.sqrt(dot(w, w)) for w in self.W] + [0.0])

    def support(self, nx, ny, nz):
        """Add C's support point along n as a vertex; returns (index, n·w)."""
        w, a, b = support_of_difference(self.sa, self.sb, nx, ny, nz)
        self.calls += 1
        self.W.append(w)
        self.A.append(a)
        self.B.append(b)
        size = math.sqrt(dot(w, w))
        if size > self.scale:
            self.scale = size
        return len(self.W) - 1, nx * w[0] + ny * w[1] + nz * w[2]


def run(support_a, support_b, points_a, points_b, max_iterations: int | None = None,
        max_faces: int | None = None, size: float | None = None,
        scale: float = 0.0) -> EPAResult:
    """EPA on C = A − B from a GJK simplex that contains the origin.

    ``support_a``/``support_b`` are ``support_xyz`` callables; ``points_a``/``points_b`` the
    support points on A and B of GJK's final simplex (1 to 4 of them, the origin in their hull).
    The caps default to MAX_ITERATIONS support calls and MAX_FACES faces. ``size``, the smaller
    shape's size, makes the contact points exact relative to it (``polish_tolerance``); without
    it they are exact relative to the size of C. ``scale``: the size of C as far as the caller
    knows it (GJK's largest support point): the tolerances are relative to the larger of it
    and the simplex's own size (a touching simplex can lie 1e-3 of C's size from the origin,
    and C's rounding would look like depth beside it).
    """
    max_iterations = MAX_ITERATIONS if max_iterations is None else max_iterations
    max_faces = MAX_FACES if max_faces is None else max_faces
    poly = _Polytope(support_a, support_b, points_a, points_b, size)
    if scale > poly.scale:
        poly.scale = scale
    start = _initial_tetrahedron(poly)
    if start.status is Status.TOUCHING:
        return _touching(poly, start.normal, start.weights)
    if start.status is Status.SEPARATED:
        return _separated(poly, start.normal)
    if start.status is Status.FAILED:
        return _failed(poly)
    return _expand(poly, start.tet, max_iterations, max_faces)


# --- the expansion (seed 001 Alg. 12) -------------------------------------------------------

def _expand(poly: _Polytope, tet, max_iterations, max_faces) -> EPAResult:
    W, A, B = poly.W, poly.A, poly.B
    sa, sb = poly.sa, poly.sb
    hull = _Faces(W)
    faces = hull.faces
    poly.faces, poly.alive = faces, hull.alive
    floor = -ORIGIN_TOLERANCE * poly.scale
    if not hull.tetrahedron(_tetrahedron_faces(W, tet), floor):
        return _failed(poly)
    best, best_gap, upper = 0, math.inf, math.inf
    lower = faces[0][0]
    local = None        # what the local shape of C allows, decided once at the certificate
    iterations = 0
    scale = poly.scale
    # (Methods and module constants as locals: the loop reads them every iteration.)
    pop_nearest, silhouette, fan = hull.pop_nearest, hull.silhouette, hull.fan
    add_w, add_a, add_b = W.append, A.append, B.append
    exact, certify, unpolished = ROUNDING_GAP, CERTIFY_TOLERANCE, UNPOLISHED_TOLERANCE
    visible, origin = VISIBLE_TOLERANCE, ORIGIN_TOLERANCE
    while True:
        # 1. The face nearest the origin (its plane distance is the lower bound).
        fi = pop_nearest()
        if fi < 0:
            return _answer(poly, faces[best], Status.FAILED, iterations, lower, upper, LOCAL)
        f = faces[fi]
        d, nx, ny, nz = f[0], f[1], f[2], f[3]
        lower = d
        if poly.calls >= max_iterations or len(faces) > max_faces:
            return _answer(poly, faces[best], Status.ITERATION_LIMIT, iterations, lower, upper,
                           LOCAL)
        # 2. Support point w of C along the face normal; its plane is an upper bound.
        iterations += 1
        # (``geometry.support_of_difference``, written out as in GJK's loop)
        pa = sa(nx, ny, nz)
        pb = sb(-nx, -ny, -nz)
        wx, wy, wz = pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]
        w = (wx, wy, wz)
        poly.calls += 1
        wi = len(W)
        add_w(w)
        add_a(pa)
        add_b(pb)
        ww = wx * wx + wy * wy + wz * wz
        if ww > scale * scale:
            scale = poly.scale = math.sqrt(ww)
        h = nx * wx + ny * wy + nz * wz
        gap = h - d
        if h < upper:
            upper = h
        if gap < best_gap:
            best, best_gap = fi, gap
        # 3. Exact when the support plane meets the face (every polytope answer ends here).
        if gap <= exact * scale:
            f = hull.holding_projection(f, scale)
            return _answer(poly, f, Status.CONVERGED, iterations, lower, upper, EXACT, gap)
        # 3'. Certified within CERTIFY_TOLERANCE: where C is curved, finish locally (Newton)
        #     instead of creeping up on the curvature; where that does not apply, go on to
        #     UNPOLISHED_TOLERANCE and finish along the ray. Sharp spots (vertices, edges,
        #     faces of C) go on to exact.
        if gap <= certify * h:
            if local is None:
                local = _polished(poly, f, wi, gap, Status.CONVERGED, iterations, lower, upper)
                if isinstance(local, EPAResult):
                    return local
            if local is RAY and gap <= unpolished * h:
                return _answer(poly, f, Status.CONVERGED, iterations, lower, upper, RAY, gap)
        # 4. Remove the faces w sees, then fan new faces from the silhouette to w.
        horizon = silhouette(fi, w, visible * scale)
        if horizon is None or not fan(horizon, wi, d - origin * scale):
            # Rounding broke the polytope (w nearly coplanar with many faces): stop with the
            # best face, converged if it is within the unpolished tolerance already.
            bf = faces[best]
            ok = best_gap <= UNPOLISHED_TOLERANCE * (bf[0] + best_gap)
            return _answer(poly, bf, Status.CONVERGED if ok else Status.FAILED, iterations,
                           lower, upper, RAY if ok else LOCAL)


class _Faces:
    """EPA's polytope as faces over the vertex list ``W``: ``faces`` ([d, nx, ny, nz, i, j, k,
    f_ij, f_jk, f_ki]: outward unit normal n, plane n·x = d, counter-clockwise i j k, and the
    faces across its edges i→j, j→k, k→i), ``alive`` (a face removed stays in the list, dead)
    and a binary heap of (d, face) for the nearest face (seed 001 Alg. 10, 12). The faces
    across a living face's edges are always living (``fan`` re-points the kept ones)."""

    __slots__ = ("W", "faces", "alive", "heap")

    def __init__(self, W):
        self.W = W
        self.faces = []
        self.alive = []
        self.heap = []

    def pop_nearest(self) -> int:
        """The living face nearest the origin, taken off the heap (-1 when none is left)."""
        heap, alive = self.heap, self.alive
        while heap:
            _, fi = heapq.heappop(heap)
            if alive[fi]:
                return fi
        return -1

    def holding_projection(self, face, scale):
        """The face in ``face``'s plane whose triangle holds the origin's projection.

        A flat face of C ends up tiled by several coplanar triangles at the same distance; the
        heap may hand over any of them, but the contact points need the one the projection
        falls in.
        """
        W, alive = self.W, self.alive
        d, nx, ny, nz = face[0], face[1], face[2], face[3]
        best, best_min = face, min(_projection_coordinates_raw(W, face))
        if best_min >= 0.0:
            return face
        tol = ROUNDING_GAP * scale
        for fi, g in enumerate(self.faces):
            if alive[fi] and abs(g[0] - d) <= tol and \
                    g[1] * nx + g[2] * ny + g[3] * nz >= 1.0 - COPLANAR_COSINE_GAP:
                m = min(_projection_coordinates_raw(W, (d, nx, ny, nz) + tuple(g[4:7])))
                if m > best_min:
                    best, best_min = (d, nx, ny, nz) + tuple(g[4:7]), m
        return list(best)

    def tetrahedron(self, triangles, floor) -> bool:
        """The faces of a closed starting polytope (``triangles``, counter-clockwise from
        outside: the initial tetrahedron's four), linked across their edges; False if one is
        degenerate or inverted."""
        for i, j, k in triangles:
            if not self.fan([(i, j, -1)], k, floor):
                return False
        bounding = {}                             # directed edge -> the face it bounds
        for fi, g in enumerate(self.faces):
            for p, q in ((g[4], g[5]), (g[5], g[6]), (g[6], g[4])):
                bounding[p, q] = fi
        for g in self.faces:
            for e, (p, q) in enumerate(((g[4], g[5]), (g[5], g[6]), (g[6], g[4]))):
                g[7 + e] = bounding[q, p]
        return True

    def silhouette(self, start, w, tolerance):
        """Kill every face visible from w connected to ``start``; return the horizon edges
        (p, q, t), t the living face across p→q, or None.

        A face is visible when w lies beyond its plane (n·w > d). The flood fill crosses only
        edges between visible faces, so the removed region is connected; its boundary edges come
        back in the orientation of the removed face, ready to be fanned to w, in order around
        the loop (each edge starts where the one before it ends). The removed region must be a
        disc, its boundary one simple loop (else None).
        """
        faces, alive = self.faces, self.alive
        wx, wy, wz = w
        alive[start] = False
        stack = [start]
        horizon = []
        spread = False                            # (more faces removed than the start)
        while stack:
            g = faces[stack.pop()]
            i, j, k = g[4], g[5], g[6]
            for p, q, t in ((i, j, g[7]), (j, k, g[8]), (k, i, g[9])):
                if not alive[t]:
                    continue                      # the neighbour is being removed too
                tf = faces[t]
                if tf[1] * wx + tf[2] * wy + tf[3] * wz - tf[0] > tolerance:
                    alive[t] = False
                    stack.append(t)
                    spread = True
                else:
                    horizon.append((p, q, t))
        if not spread:
            return horizon      # the start face's own three edges, in order: a simple loop
        # One loop through every edge: from the first edge's start, the walk comes back there
        # after exactly as many steps as there are edges (two loops, an annulus, never do).
        after = {e[0]: e for e in horizon}
        count = len(horizon)
        if len(after) != count:
            return None
        edge = horizon[0]
        start = edge[0]
        loop = [edge]
        for _ in range(count - 1):
            edge = after.get(edge[1])
            if edge is None or edge[0] == start:
                return None
            loop.append(edge)
        return loop if edge[1] == start else None

    def fan(self, horizon, wi, floor) -> bool:
        """Add the faces (p, q, w) for the horizon edges (p, q, t); False if one would break
        the polytope.

        Faces are counter-clockwise from outside, so n = (p − w) × (q − w) is the outward
        normal. ``floor`` is the least plane distance a new face may have: the polytope only
        grows, so a face nearer the origin than the one replaced (minus rounding) is an inverted
        face. The horizon is one simple loop in order (``silhouette`` gives it so), so the new
        face on (p, q) has the kept face t across p→q, and across q→w the next new face. (A t of
        -1: the faces are linked afterwards, ``tetrahedron``.)
        """
        W, faces, alive, heap = self.W, self.faces, self.alive, self.heap
        wx, wy, wz = W[wi]
        degenerate, sliver = DEGENERATE_SIN2, SLIVER_SIN2
        push, sqrt, add = heapq.heappush, math.sqrt, faces.append
        first = fi = len(faces)
        p0 = horizon[0][0]
        x, y, z = W[p0]
        ax, ay, az = x - wx, y - wy, z - wz
        aa = ax * ax + ay * ay + az * az
        a0 = (ax, ay, az, aa)
        for p, q, t in horizon:
            if q == p0:
                bx, by, bz, bb = a0
            else:
                x, y, z = W[q]
                bx, by, bz = x - wx, y - wy, z - wz
                bb = bx * bx + by * by + bz * bz
            nx = ay * bz - az * by
            ny = az * bx - ax * bz
            nz = ax * by - ay * bx
            nn = nx * nx + ny * ny + nz * nz
            if nn < sliver * aa * bb or nn == 0.0:
                # (Only here can the face be degenerate: DEGENERATE_SIN2 < SLIVER_SIN2.)
                if nn < sliver * aa * bb:
                    P, Q = W[p], W[q]
                    nx, ny, nz = sliver_cross(ax, ay, az, aa, bx, by, bz, bb,
                                              Q[0] - P[0], Q[1] - P[1], Q[2] - P[2])
                    nn = nx * nx + ny * ny + nz * nz
                if nn <= degenerate * aa * bb or nn == 0.0:
                    return False                  # w lies on the line of the edge
            s = 1.0 / sqrt(nn)
            nx, ny, nz = nx * s, ny * s, nz * s
            d = nx * wx + ny * wy + nz * wz
            if d < floor:
                return False                      # inverted: the polytope would not contain 0
            # Across q→w: the next new face; across w→p: the one before (around the loop).
            add([d, nx, ny, nz, p, q, wi, t, fi + 1, fi - 1])
            alive.append(True)
            push(heap, (d, fi))
            if t >= 0:
                tf = faces[t]                     # the kept face across q→p borders it now
                tf[7 if tf[4] == q else 8 if tf[5] == q else 9] = fi
            fi += 1
            ax, ay, az, aa = bx, by, bz, bb
        if horizon[0][2] >= 0:
            faces[first][9] = fi - 1              # (the loop closes)
            faces[fi - 1][8] = first
        return True


def _projection_coordinates_raw(W, face):
    """Unclamped, unnormalised barycentric coordinates of d·n in the face's triangle."""
    d, nx, ny, nz, i, j, k = face[:7]
    return triangle_coordinates(W[i], W[j], W[k], (d * nx, d * ny, d * nz), (nx, ny, nz))


# --- results --------------------------------------------------------------------------------

def _answer(poly, face, status, iterations, lower, upper, finish, gap=None) -> EPAResult:
    """Depth, normal and contact points from ``face`` (barycentric coordinates, seed 000 §4).

    ``finish`` says how to complete it: EXACT (the face lies on the boundary of C: polytopes),
    RAY (push the ray from the origin along the face normal to the boundary with MPR's portal
    refinement), or LOCAL (EPA stopped early: try the Newton polish first, then the ray). The
    answer is always a boundary point of C, so translating A by it leaves the shapes touching,
    and it is no deeper than EPA's upper bound.
    """
    d, nx, ny, nz, i, j, k = face[:7]
    W, A, B = poly.W, poly.A, poly.B
    n = (nx, ny, nz)
    if gap is None:
        w, a, b = support_of_difference(poly.sa, poly.sb, nx, ny, nz)
        poly.calls += 1
        gap = nx * w[0] + ny * w[1] + nz * w[2] - d
        wi = len(W)
        W.append(w)
        A.append(a)
        B.append(b)
        if finish is LOCAL:
            done = _polished(poly, face, wi, gap, status, iterations, lower, upper, math.inf)
            if isinstance(done, EPAResult):
                return done
    gap = max(gap, 0.0)
    portal = [(W[i], A[i], B[i]), (W[j], A[j], B[j]), (W[k], A[k], B[k])]
    if finish is EXACT and min(_projection_coordinates_raw(W, face)) < 0.0:
        finish = RAY        # rounding left the projection just outside: take it along the ray
    if finish is not EXACT and d > 0.0:
        # The ray along n starts in this face's triangle when the face is the nearest one and P
        # is convex. Rounding can leave P convex only to ~1e-14 of its size, and then between
        # two nearly coplanar faces (a large curved shape against a small one) the nearest
        # face's projection can land far outside it; a face kept from earlier need not hold it
        # either. The portal is then the face of P the ray actually leaves through.
        if not mpr.crosses(portal, n):
            exit_face = _exit_face(poly, n)
            if exit_face is not None:
                i, j, k = exit_face
                portal = [(W[i], A[i], B[i]), (W[j], A[j], B[j]), (W[k], A[k], B[k])]
        tolerance = mpr.fine_fraction(RAY_TOLERANCE, poly.scale, poly.fine)
        if mpr.crosses(portal, n):
            ray = mpr.refine(poly.sa, poly.sb, (0.0, 0.0, 0.0), n, portal, tolerance=tolerance)
        else:
            ray = mpr.ray_pass(poly.sa, poly.sb, n, tolerance)
        poly.calls += ray.calls
        if ray.status is Status.CONVERGED and len(ray.portal) == 3 and mpr.crosses(ray.portal, n):
            portal = ray.portal
    crossing = mpr.ray_crossing(portal, n)
    if crossing is None:
        depth = d if d > 0.0 else 0.0
        lam = _projection_coordinates(W[i], W[j], W[k], n, d)
        portal = [(W[i], A[i], B[i]), (W[j], A[j], B[j]), (W[k], A[k], B[k])]
    else:
        depth, lam = crossing
        depth = depth if depth > 0.0 else 0.0
    pa = combine([v[1] for v in portal], lam)
    pb = combine([v[2] for v in portal], lam)
    depth, pa, pb, off = place_on_features(pa, pb, depth, n, [v[1] for v in portal],
                                           [v[2] for v in portal], POLISH_FLOOR * poly.scale)
    rounding = COORDINATE_ROUNDING * max(abs(c) for c in pa + pb)
    if off > polish_tolerance(poly.scale, poly.fine) + rounding and status is Status.CONVERGED:
        # The points do not realise the depth along n, and closing the gap moves them off
        # their shapes: not to be trusted (``penetration`` falls back on MPR's estimate).
        status = Status.FAILED
    return EPAResult(status, depth, n, pa, pb, iterations, poly.calls, gap, max(lower, 0.0),
                     upper, poly.scale, finish is not EXACT)


def _exit_face(poly, n):
    """The face of the polytope through which the ray t·n from the origin leaves it: the one
    whose triangle the ray crosses (of those facing along n, the one holding the crossing most
    squarely: largest smallest barycentric coordinate, so that rounding on an edge still picks
    one). Not the face whose plane the ray meets first: P is convex only to rounding, and
    nearly coplanar faces can fold in by that much. Its vertices, or None."""
    W = poly.W
    best, best_min = None, -math.inf
    nx, ny, nz = n
    for f, alive in zip(poly.faces, poly.alive):
        if not alive or f[1] * nx + f[2] * ny + f[3] * nz <= 0.0:
            continue
        w1, w2, w3 = W[f[4]], W[f[5]], W[f[6]]
        l1, l2, l3 = triple(n, w2, w3), triple(w1, n, w3), triple(w1, w2, n)
        total = l1 + l2 + l3
        if total > 0.0:
            m = min(l1, l2, l3) / total
            if m > best_min:
                best, best_min = f, m
    return None if best is None else (best[4], best[5], best[6])


def _polished(poly, face, wi, gap, status, iterations, lower, upper, budget=None):
    """Newton polish of ``face``'s direction (``depth_polish.polish``) where C is smooth or
    folded there.

    Returns the answer, or what to do instead: RAY (C is curved but no clean minimum is near:
    finish along the ray once EPA has UNPOLISHED_TOLERANCE) or EXACT (C is sharp there: EPA goes on
    to an exact face). ``budget`` bounds how much lower the minimum may lie (EPA's certified
    gap by default): a polish whose model predicts more is not started.
    """
    n = (face[1], face[2], face[3])
    shape = _local_shape(poly, n, wi)
    if shape.kind is Surface.SHARP:
        return EXACT
    if budget is None:
        budget = POLISH_BUDGET * gap + ROUNDING_GAP * poly.scale
    ok, depth, n, pa, pb, calls = polish(poly.sa, poly.sb, n, poly.scale, shape, budget=budget,
                                         fine=poly.fine)
    poly.calls += calls
    if not ok:
        return RAY
    depth, pa, pb = polished_points(pa, pb, depth, n, shape, poly.scale)
    return EPAResult(status, depth, n, pa, pb, iterations, poly.calls, max(gap, 0.0),
                     max(lower, 0.0), upper, poly.scale)


def _touching(poly, normal, weights) -> EPAResult:
    """Zero-depth contact: the common point of the simplex, and a normal C does not reach past."""
    pa = combine(poly.A[:len(weights)], weights)
    pb = combine(poly.B[:len(weights)], weights)
    p = tuple(0.5 * (x + y) for x, y in zip(pa, pb))
    return EPAResult(Status.TOUCHING, 0.0, normal, p, p, 0, poly.calls, 0.0, 0.0, 0.0, poly.scale)


def _separated(poly, normal) -> EPAResult:
    """The shapes are apart: C lies short of the plane through the origin across ``normal``
    (no depth, no contact; ``penetration`` answers None)."""
    nan = float("nan")
    return EPAResult(Status.SEPARATED, 0.0, normal, (nan, nan, nan), (nan, nan, nan), 0,
                     poly.calls, 0.0, 0.0, 0.0, poly.scale)


def _failed(poly) -> EPAResult:
    nan = float("nan")
    return EPAResult(Status.FAILED, nan, (nan, nan, nan), (nan, nan, nan), (nan, nan, nan), 0,
                     poly.calls, math.inf, 0.0, math.inf, poly.scale)


def _projection_coordinates(p0, p1, p2, n, d):
    """Barycentric coordinates of d·n (the origin projected on the plane) in triangle p0 p1 p2."""
    q = (d * n[0], d * n[1], d * n[2])
    lam = triangle_coordinates(p0, p1, p2, q, n)
    total = lam[0] + lam[1] + lam[2]
    if not total > 0.0:
        return (1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0)
    # Rounding can leave a coordinate slightly negative for a projection on an edge: clamp it.
    lam = [l if l > 0.0 else 0.0 for l in lam]
    total = lam[0] + lam[1] + lam[2]
    return refined_coordinates(p0, p1, p2, q, (lam[0] / total, lam[1] / total, lam[2] / total))


def place_on_features(pa, pb, depth, n, feature_a, feature_b, negligible):
    """Depth and contact points with pa − pb == depth · n exactly, the points moved as little
    off their shapes as the residual r = pa − pb − depth · n allows.

    pa and pb are convex combinations of support points (``feature_a``, ``feature_b``: a face,
    an edge or a patch of each shape around the contact), and r comes from rounding, amplified
    on sliver triangles (a face of A − B spanning a long straight edge or ruling): in the
    barycentric weights, which moves the combination sideways, and in the plane's normal, which
    tilts the plane the ray's crossing (the depth) was taken on. The part of r along n is the
    latter: the combination's own height pa − pb along n is the better depth. Sideways,
    splitting r evenly would move a vertex off its shape, while moving a point within the span
    of its feature keeps it on the shape to first order: the shape whose feature is the longer
    (the larger radius, where a curved one leaves its shape least) takes the part of r in the
    span of its feature, the other the part of the rest in the span of its own, and only what
    neither can take is split between them. Returns (depth, pa, pb, off): off is how far that
    last part moves each point off its feature. A residual up to ``negligible`` is simply
    split.
    """
    rx = pa[0] - pb[0] - depth * n[0]
    ry = pa[1] - pb[1] - depth * n[1]
    rz = pa[2] - pb[2] - depth * n[2]
    if rx * rx + ry * ry + rz * rz <= negligible * negligible:
        return (depth, *split_residual(pa, pb, depth, n), 0.0)
    along = rx * n[0] + ry * n[1] + rz * n[2]
    if depth + along >= 0.0:
        depth += along
        r = (rx - along * n[0], ry - along * n[1], rz - along * n[2])
    else:
        r = (rx, ry, rz)
    if _extent2(feature_a) > _extent2(feature_b):
        # A's feature is the longer: on a curved patch a point slid in the plane of its feature
        # leaves the shape by ~|r|²/2R, so the larger feature takes first (a 1 m segment
        # through an ellipsoid 1e-6 across: the ellipsoid's point, slid first, lay 8e-11 off).
        take_a = _in_span(r, feature_a)
        take_b = _in_span(sub(r, take_a), feature_b)
    else:
        take_b = _in_span(r, feature_b)
        take_a = _in_span(sub(r, take_b), feature_a)
    left = sub(sub(r, take_a), take_b)
    hx, hy, hz = 0.5 * left[0], 0.5 * left[1], 0.5 * left[2]
    pa = (pa[0] - take_a[0] - hx, pa[1] - take_a[1] - hy, pa[2] - take_a[2] - hz)
    pb = (pb[0] + take_b[0] + hx, pb[1] + take_b[1] + hy, pb[2] + take_b[2] + hz)
    return depth, pa, pb, math.sqrt(hx * hx + hy * hy + hz * hz)


def _extent2(points):
    """The largest squared distance between two of ``points``."""
    return max([norm2(sub(p, q)) for i, p in enumerate(points) for q in points[:i]] + [0.0])


def _in_span(r, points):
    """The part of r in the span of the differences of three ``points``: the plane of their
    triangle, the line of a degenerate one (its longest edge), nothing for one point.
    (Written out: every EPA answer from a portal may pay it.)"""
    (px, py, pz), q1, q2 = points
    ax, ay, az = q1[0] - px, q1[1] - py, q1[2] - pz
    bx, by, bz = q2[0] - px, q2[1] - py, q2[2] - pz
    aa, bb = ax * ax + ay * ay + az * az, bx * bx + by * by + bz * bz
    if aa < bb:
        ax, ay, az, aa, bx, by, bz, bb = bx, by, bz, bb, ax, ay, az, aa
    if aa == 0.0:
        return (0.0, 0.0, 0.0)
    rx, ry, rz = r
    nx, ny, nz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    nn = nx * nx + ny * ny + nz * nz
    if nn > DEGENERATE_SIN2 * aa * bb and nn > 0.0:
        c = (rx * nx + ry * ny + rz * nz) / nn          # the plane: r less its normal part
        return (rx - c * nx, ry - c * ny, rz - c * nz)
    c = (rx * ax + ry * ay + rz * az) / aa              # the line of the longest edge
    return (c * ax, c * ay, c * az)


# --- how an answer is finished ---------------------------------------------------------------

class Finish(enum.Enum):
    """How ``_answer`` completes an answer from a face."""

    EXACT = "exact"      # the face is on the boundary of C
    RAY = "ray"          # no local polish applies: finish along the ray
    LOCAL = "local"      # EPA stopped early: polish if possible, else the ray


EXACT, RAY, LOCAL = Finish.EXACT, Finish.RAY, Finish.LOCAL


class _Start(NamedTuple):
    """How the initial polytope came out (``_initial_tetrahedron``): ``status`` INTERSECTING
    with the ``tet`` (four vertex indices) that holds the origin, TOUCHING with the ``normal``
    of a zero-depth contact and GJK's ``weights``, SEPARATED with the ``normal`` of a plane
    that C lies short of (``_not_beyond``), or FAILED."""

    status: Status
    tet: tuple = ()
    normal: tuple = ()
    weights: list = ()


_NO_START = _Start(Status.FAILED)


def _local_shape(poly, n, wi):
    kind = probe_shape(poly.sa, poly.sb, n, poly.W[wi], poly.A[wi], poly.B[wi], poly.scale)
    poly.calls += 2
    return kind


# --- the initial polytope (seed 000 §4, seed 001 §2.5) ----------------------------------------

def _initial_tetrahedron(poly: _Polytope):
    """Grow GJK's simplex into a tetrahedron containing the origin.

    Returns a ``_Start``.
    """
    n = len(poly.W)
    if n == 0:
        return _NO_START
    weights = list(closest_to_origin(poly.W)[1])
    if n == 4:
        if not _is_flat(poly.W):
            return _Start(Status.INTERSECTING, (0, 1, 2, 3))
        start = _from_triangle(poly, _best_face_of_flat(poly.W), weights)
    elif n == 3:
        start = _from_triangle(poly, (0, 1, 2), weights)
    elif n == 2:
        start = _from_segment(poly, 0, 1, weights)
    else:
        start = _from_point(poly, 0, weights)
    if start.status is Status.FAILED:
        # Every tetrahedron tried was flat: C is flat here (a point in a disc), and the planes
        # tried were tilted by the rounding of triangles much smaller than C (GJK's simplex
        # 1e-5 of its size). The widest triangle of the points found gives C's plane to C's
        # own rounding; the shapes touch if C reaches no further than the origin across it.
        return _across_widest(poly, weights)
    return start


def _touch_limit(poly):
    return max(TOUCHING_TOLERANCE * poly.scale, LENGTH_FLOOR)


def _not_beyond(poly, normal, h, weights):
    """The start when C reaches no further than the origin along ``normal`` (its support value
    ``h`` at most ``_touch_limit``): TOUCHING, or SEPARATED where h is below minus that limit.
    C then lies wholly short of a plane through the origin, and the shapes are apart: GJK's
    simplex need not hold the origin when GJK stalled without showing them apart either (two
    segments 1e6 times different in length, 4e-9 apart: C a sliver parallelogram that no
    tetrahedron of MPR's holds), and EPA is the one to find that plane."""
    if h < -_touch_limit(poly):
        return _Start(Status.SEPARATED, normal=normal, weights=weights)
    return _Start(Status.TOUCHING, normal=normal, weights=weights)


def _from_triangle(poly, tri, weights):
    i, j, k = tri
    W = poly.W
    ux, uy, uz = sub(W[j], W[i])
    vx, vy, vz = sub(W[k], W[i])
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    nn = nx * nx + ny * ny + nz * nz
    if nn <= DEGENERATE_SIN2 * (ux * ux + uy * uy + uz * uz) * (vx * vx + vy * vy + vz * vz) \
            or nn == 0.0:
        # A sliver: the origin lies on one of its edges; grow from the nearest edge instead.
        best = min(((i, j), (j, k), (i, k)),
                   key=lambda e: norm2(closest_to_origin([W[e[0]], W[e[1]]])[0]))
        return _from_segment(poly, best[0], best[1], weights)
    s = 1.0 / math.sqrt(nn)
    nx, ny, nz = nx * s, ny * s, nz * s
    x, hx = poly.support(nx, ny, nz)
    if hx <= _touch_limit(poly):
        return _not_beyond(poly, (nx, ny, nz), hx, weights)
    y, hy = poly.support(-nx, -ny, -nz)
    if hy <= _touch_limit(poly):
        return _not_beyond(poly, (-nx, -ny, -nz), hy, weights)
    # x and y lie on opposite sides of the triangle's plane, so segment xy crosses it at some q;
    # the triangle (which holds the origin) is covered by the three triangles q + edge, hence
    # one of the tetrahedra edge + x + y holds the origin.
    return _best_tetrahedron(poly, [(j, k, x, y), (i, k, x, y), (i, j, x, y)])


def _across_widest(poly, weights):
    """TOUCHING across the plane of the widest triangle of the polytope's points if C reaches
    no further than the origin on one side of it, else FAILED."""
    W = poly.W
    best, best_nn = None, 0.0
    for i in range(len(W)):
        for j in range(i + 1, len(W)):
            for k in range(j + 1, len(W)):
                n = cross(sub(W[j], W[i]), sub(W[k], W[i]))
                nn = dot(n, n)
                if nn > best_nn:
                    best, best_nn = n, nn
    if best is None:
        return _NO_START
    s = 1.0 / math.sqrt(best_nn)
    n = (best[0] * s, best[1] * s, best[2] * s)
    for sign in (1.0, -1.0):
        m = (sign * n[0], sign * n[1], sign * n[2])
        h = poly.support(*m)[1]
        if h <= _touch_limit(poly):
            return _not_beyond(poly, m, h, weights)
    return _NO_START


def _from_segment(poly, i, j, weights):
    W = poly.W
    dx, dy, dz = sub(W[j], W[i])
    dd = dx * dx + dy * dy + dz * dz
    if dd <= (SHORT_SEGMENT * poly.scale) ** 2 or dd == 0.0:
        return _from_point(poly, i if norm2(W[i]) <= norm2(W[j]) else j, weights)
    s = 1.0 / math.sqrt(dd)
    dx, dy, dz = dx * s, dy * s, dz * s
    # Search the plane across the segment for a triangle of C whose projection holds the origin:
    # GJK on C projected along d (support directions stay perpendicular to d).
    mx, my, mz = perpendicular(dx, dy, dz)
    chosen, proj = [], []
    for _ in range(MAX_PIERCE_ITERATIONS):
        vi, h = poly.support(mx, my, mz)
        if h <= _touch_limit(poly):
            return _not_beyond(poly, (mx, my, mz), h, weights)
        w = W[vi]
        t = w[0] * dx + w[1] * dy + w[2] * dz
        chosen.append(vi)
        proj.append((w[0] - t * dx, w[1] - t * dy, w[2] - t * dz))
        v, lam = closest_to_origin(proj)
        keep = [m for m, l in enumerate(lam) if l > 0.0]
        chosen = [chosen[m] for m in keep]
        proj = [proj[m] for m in keep]
        vv = norm2(v)
        if vv <= (PIERCED * poly.scale) ** 2:
            if len(chosen) == 3:
                # The line of the segment pierces triangle `chosen`; the segment holds the
                # origin, so one of the two tetrahedra segment end + triangle holds it too.
                a, b, c = chosen
                return _best_tetrahedron(poly, [(i, a, b, c), (j, a, b, c)])
            if len(chosen) == 2:
                # The line meets segment `chosen`: a triangle with one end holds the origin.
                a, b = chosen
                tri = max(((i, a, b), (j, a, b)), key=lambda t3: _min_coordinate(W, t3))
                return _from_triangle(poly, tri, weights)
            return _NO_START
        s = -1.0 / math.sqrt(vv)
        mx, my, mz = v[0] * s, v[1] * s, v[2] * s
    return _NO_START


_AXES = ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
         (0.0, -1.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, -1.0))


def _from_point(poly, i, weights):
    """The origin is (within rounding) the support point W[i]: a vertex of C, so depth 0 unless C
    reaches past it along every axis, and then any tetrahedron on W[i] holds it."""
    found = []
    for axis in _AXES:
        vi, h = poly.support(*axis)
        if h <= _touch_limit(poly):
            return _not_beyond(poly, axis, h, weights)
        found.append(vi)
    W = poly.W
    best, best_vol = None, 0.0
    for a in range(6):
        for b in range(a + 1, 6):
            for c in range(b + 1, 6):
                tet = (i, found[a], found[b], found[c])
                vol = abs(_volume(W, tet))
                if vol > best_vol:
                    best, best_vol = tet, vol
    if best is None or _is_flat([W[m] for m in best]):
        return _NO_START
    return _Start(Status.INTERSECTING, best)


def _best_tetrahedron(poly, candidates):
    """The candidate tetrahedron holding the origin most deeply (largest smallest coordinate)."""
    W = poly.W
    best, best_min = None, -math.inf
    for tet in candidates:
        pts = [W[m] for m in tet]
        if _is_flat(pts):
            continue
        m = _min_coordinate(W, tet)
        if m > best_min:
            best, best_min = tet, m
    if best is None or best_min < -HOLDS_ORIGIN_SLACK:
        return _NO_START
    return _Start(Status.INTERSECTING, best)


def _min_coordinate(W, indices):
    """Smallest barycentric coordinate of the origin's projection onto the hull of the simplex
    ``W[indices]``."""
    pts = [W[m] for m in indices]
    if len(pts) == 4:
        p0 = pts[0]
        e1, e2, e3 = sub(pts[1], p0), sub(pts[2], p0), sub(pts[3], p0)
        vol = triple(e1, e2, e3)
        if vol == 0.0:
            return -math.inf
        m = (-p0[0], -p0[1], -p0[2])
        l1 = triple(m, e2, e3) / vol
        l2 = triple(e1, m, e3) / vol
        l3 = triple(e1, e2, m) / vol
        return min(1.0 - l1 - l2 - l3, l1, l2, l3)
    p0 = pts[0]
    e1, e2 = sub(pts[1], p0), sub(pts[2], p0)
    n = cross(e1, e2)
    nn = dot(n, n)
    if nn == 0.0:
        return -math.inf
    m = (-p0[0], -p0[1], -p0[2])
    l1 = dot(n, cross(m, e2)) / nn
    l2 = dot(n, cross(e1, m)) / nn
    return min(1.0 - l1 - l2, l1, l2)


def _tetrahedron_faces(W, tet):
    """The four faces of ``tet``, counter-clockwise seen from outside."""
    i, j, k, l = tet
    if _volume(W, tet) < 0.0:
        j, k = k, j
    return ((i, k, j), (i, j, l), (i, l, k), (j, k, l))


def _is_flat(pts):
    p0 = pts[0]
    e1, e2, e3 = sub(pts[1], p0), sub(pts[2], p0), sub(pts[3], p0)
    scale = math.sqrt(dot(e1, e1) * dot(e2, e2) * dot(e3, e3))
    return abs(triple(e1, e2, e3)) <= FLAT_TETRAHEDRON_RATIO * scale


def _best_face_of_flat(W):
    faces = ((1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2))
    return max(faces, key=lambda f: _min_coordinate(W, f))


def _volume(W, tet):
    p0 = W[tet[0]]
    return triple(sub(W[tet[1]], p0), sub(W[tet[2]], p0), sub(W[tet[3]], p0))
