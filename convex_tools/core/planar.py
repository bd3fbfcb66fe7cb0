"""Plane geometry of contact regions: 2-D convex hulls, clipping of convex polygons, segments
and points against each other, near-duplicate points and reduction to a few corners, on points
as plain float tuples (x, y) in a contact plane. ``manifold`` (convex pairs) and ``concave``
(parts of compounds and meshes) build their manifolds with these, one definition each.

Every tolerance comes from the caller (a length in the plane, relative to the shapes' size);
the two constants below are ratios.
"""

from __future__ import annotations

import math

from .geometry import LENGTH_FLOOR

# Segments count as parallel when the sine of their angle is below this.
PARALLEL_SIN = 1e-9

# Parallel segments lie on one line when this fraction of their length apart (or ``tol``).
MERGE_TOLERANCE = 1e-9


def unique(points, tol):
    """The points with near-duplicates (closer than tol) dropped."""
    out = []
    t2 = tol * tol
    for p in points:
        if all((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2 > t2 for q in out):
            out.append(p)
    return out


def hull(points, tol):
    """The projected feature as a counter-clockwise convex polygon, a segment or a point
    (Andrew's monotone chain; corners closer than ``tol`` merged)."""
    pts = sorted(set(points))
    if len(pts) <= 1:
        return pts

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= tol * dist(lower[-2], p):
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= tol * dist(upper[-2], p):
            upper.pop()
        upper.append(p)
    hull = lower[:-1] + upper[:-1]
    # Merge corners closer than the tolerance (a segment collapses to its two ends).
    out = []
    for p in hull:
        if all(dist(p, q) > tol for q in out):
            out.append(p)
    return out


def dist(p, q):
    return math.hypot(p[0] - q[0], p[1] - q[1])


def clip(pa, pb, tol):
    """Intersection of two convex 2D shapes (polygons CCW, segments, points) as corner list;
    ``tol``: how far outside an edge a point still counts as on it."""
    if len(pa) > len(pb):
        pa, pb = pb, pa
    if len(pa) == 1:
        return pa
    if len(pa) == 2 and len(pb) == 2:
        return _clip_segments(pa, pb, tol)
    if len(pa) == 2:
        return _clip_segment_polygon(pa, pb, tol)
    return _clip_polygons(pa, pb, tol)


def _clip_polygons(subject, clipper, tol):
    """Sutherland–Hodgman: ``subject`` cut by each edge of the convex CCW ``clipper``."""
    out = list(subject)
    m = len(clipper)
    for i in range(m):
        if not out:
            break
        a, b = clipper[i], clipper[(i + 1) % m]
        ex, ey = b[0] - a[0], b[1] - a[1]
        length = math.hypot(ex, ey)

        def side(p):
            return (ex * (p[1] - a[1]) - ey * (p[0] - a[0])) / length   # > 0: inside (left)

        src, out = out, []
        for j in range(len(src)):
            p, q = src[j], src[(j + 1) % len(src)]
            sp, sq = side(p), side(q)
            if sp >= -tol:
                out.append(p)
            if (sp >= -tol) != (sq >= -tol) and sp != sq:
                t = sp / (sp - sq)
                out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return hull(out, tol) if len(out) > 2 else out


def _clip_segment_polygon(seg, poly, tol):
    """The part of segment ``seg`` inside the convex CCW polygon (Cyrus–Beck)."""
    (x0, y0), (x1, y1) = seg
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    m = len(poly)
    for i in range(m):
        a, b = poly[i], poly[(i + 1) % m]
        ex, ey = b[0] - a[0], b[1] - a[1]
        length = math.hypot(ex, ey)
        # Inside when e × (p − a) >= −tol·|e|.
        num = ex * (y0 - a[1]) - ey * (x0 - a[0]) + tol * length
        den = ex * dy - ey * dx
        if den == 0.0:
            if num < 0.0:
                return []
            continue
        t = -num / den
        if den > 0.0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return []
    return [(x0 + t0 * dx, y0 + t0 * dy), (x0 + t1 * dx, y0 + t1 * dy)]


def _clip_segments(s, r, tol):
    """Overlap of two segments: a sub-segment when collinear, else their crossing point."""
    (px, py), (qx, qy) = s
    (ax, ay), (bx, by) = r
    dx, dy = qx - px, qy - py
    ex, ey = bx - ax, by - ay
    den = dx * ey - dy * ex
    ld, le = math.hypot(dx, dy), math.hypot(ex, ey)
    if abs(den) <= PARALLEL_SIN * ld * le:
        # Parallel: overlap along the common line if they are on it.
        off = abs(dx * (ay - py) - dy * (ax - px)) / ld
        if off > max(tol, MERGE_TOLERANCE * ld):
            return []
        ta = ((ax - px) * dx + (ay - py) * dy) / (ld * ld)
        tb = ((bx - px) * dx + (by - py) * dy) / (ld * ld)
        lo, hi = max(0.0, min(ta, tb)), min(1.0, max(ta, tb))
        if lo > hi:
            return []
        return [(px + lo * dx, py + lo * dy), (px + hi * dx, py + hi * dy)]
    t = ((ax - px) * ey - (ay - py) * ex) / den
    w = ((ax - px) * dy - (ay - py) * dx) / den
    slack_t, slack_w = tol / max(ld, LENGTH_FLOOR), tol / max(le, LENGTH_FLOOR)
    if -slack_t <= t <= 1.0 + slack_t and -slack_w <= w <= 1.0 + slack_w:
        t = min(max(t, 0.0), 1.0)
        return [(px + t * dx, py + t * dy)]
    return []


def area(a, b, c):
    """Signed area of the triangle a b c (positive counter-clockwise)."""
    return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))


def reduce(points, depths, max_points):
    """Indices of at most ``max_points`` of the contact points (x, y) with ``depths``: the
    deepest (the first of equally deep ones), the farthest from it, then the ones adding the
    most area while one does (a stable choice: small motions keep the same corners; a line
    contact keeps its two ends), and past four corners the rest in order."""
    k = len(points)
    if k <= max_points:
        return list(range(k))
    first = max(range(k), key=lambda i: (depths[i], -i))
    chosen = [first]
    if max_points >= 2:
        chosen.append(max((i for i in range(k) if i != first),
                          key=lambda i: dist(points[i], points[first])))
    if max_points >= 3:
        a, b = points[chosen[0]], points[chosen[1]]
        third = max((i for i in range(k) if i not in chosen),
                    key=lambda i: abs(area(a, b, points[i])))
        if area(a, b, points[third]) == 0.0:
            return chosen                     # all on one line: its two ends
        chosen.append(third)
    if max_points >= 4:
        a, b, c = (points[i] for i in chosen)
        # The fourth on the far side of the triangle's edges: the one adding the most area.
        def added(i):
            p = points[i]
            return max(-area(a, b, p) * math.copysign(1.0, area(a, b, c)),
                       -area(b, c, p) * math.copysign(1.0, area(b, c, a)),
                       -area(c, a, p) * math.copysign(1.0, area(c, a, b)))
        fourth = max((i for i in range(k) if i not in chosen), key=added)
        if added(fourth) <= 0.0:
            return chosen                     # the rest lie within the triangle
        chosen.append(fourth)
    for i in range(k):                       # more than four requested: the rest in order
        if len(chosen) >= max_points:
            break
        if i not in chosen:
            chosen.append(i)
    return chosen
