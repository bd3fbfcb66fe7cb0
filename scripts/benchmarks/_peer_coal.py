"""coal's side of the peer benchmark (``peers``): run by the peer environment's Python, which has
coal (``pip install coal``) and numpy >= 2, never convex_tools.

    PEER_PYTHON _peer_coal.py level INPUT.npz OUTPUT.json [tight]
    PEER_PYTHON _peer_coal.py single INPUT.npz OUTPUT.json

The inputs are written by ``peers.py`` (``_peer_shapes.describe``): per object a shape kind, up to
three parameters in our conventions (half extents, radius, half height), a 4x4 world matrix and,
for hulls, vertices and outward triangles. Only objects coal represents exactly are exported
(``_peer_shapes.coal_exact``): the linear part of a primitive's matrix is a rotation times a scale
along the shape's axes (uniform across the axis for round shapes), so a shape here is coal's
primitive with scaled sizes; a hull is a ``coal.Convex`` of its vertices under the whole linear
part. Conventions checked against coal 3.0.3: ``Box(x, y, z)`` full sizes, ``Capsule`` and
``Cylinder``/``Cone`` (radius, full length), the cone centred with its apex at +z as ours.

``level``: (i) a ``DynamicAABBTreeCollisionManager`` over all objects, ``collide`` with contacts
and a security margin of the clearance (one margin for all: the largest); (ii) ``coal.collide``
with contacts on each candidate pair, its security margin the clearance the pair needs.
``single``: per pair kind, ``coal.collide`` with a contact (GJK + EPA) on the deep poses and
``coal.distance`` on the apart ones, one timing per query.
"""

import json
import statistics
import sys
import time

import numpy as np

import coal

# Shape kinds of the input files (``_peer_shapes``: numpy only, no convex_tools, so this
# environment imports it too).
from _peer_shapes import BOX, CAPSULE, CONE, CYLINDER, ELLIPSOID, HULL, SPHERE  # noqa: E402
# coal's GJK tolerance for the untimed answers the agreement check reads (its default, 1e-6,
# bounds the timed queries' error; ours stop near 1e-9 relative on curved pairs), and its EPA
# tolerance there (at 1e-10 its EPA fails on one hull-cylinder pair of the 10k level).
TIGHT = 1e-10
TIGHT_EPA = 1e-9
# coal reports a failed EPA as a depth of -DBL_MAX: anything beyond this is no answer.
FAILED = 1e300


def _convex(points, triangles):
    vec = coal.StdVec_Vec3s()
    for p in np.asarray(points, dtype=float):
        vec.append(p)
    tris = coal.StdVec_Triangle()
    for a, b, c in np.asarray(triangles, dtype=int).tolist():
        tris.append(coal.Triangle(a, b, c))
    return coal.Convex(vec, tris)


def geometry(kind, params, matrix, hull=None):
    """(coal geometry, rotation, translation) of one exported object."""
    linear, translation = matrix[:3, :3], matrix[:3, 3].copy()
    if kind == HULL:
        points, triangles = hull
        if np.linalg.det(linear) < 0.0:       # a mirror turns the triangles inside out
            triangles = triangles[:, ::-1]
        return _convex(points @ linear.T, triangles), np.eye(3), translation
    scale = np.linalg.norm(linear, axis=0)
    rotation = linear / scale
    if np.linalg.det(rotation) < 0.0:
        # Every primitive is symmetric under x -> -x: mirror that axis back.
        rotation[:, 0] = -rotation[:, 0]
    p = params
    if kind == BOX:
        shape = coal.Box(*(2.0 * p * scale))
    elif kind == SPHERE:
        shape = coal.Sphere(p[0] * scale[0]) if np.ptp(scale) == 0.0 else \
            coal.Ellipsoid(*(p[0] * scale))
    elif kind == ELLIPSOID:
        shape = coal.Ellipsoid(*(p * scale))
    elif kind == CAPSULE:
        shape = coal.Capsule(p[0] * scale[0], 2.0 * p[1] * scale[2])
    elif kind == CYLINDER:
        shape = coal.Cylinder(p[0] * scale[0], 2.0 * p[1] * scale[2])
    elif kind == CONE:
        shape = coal.Cone(p[0] * scale[0], 2.0 * p[1] * scale[2])
    else:
        raise ValueError(f"unknown shape kind {kind}")
    return shape, rotation, translation


def objects(data):
    """coal geometries and transforms of the exported objects (a hull shared by several
    objects under the same linear part is one geometry)."""
    kinds, params, matrices = data["kind"], data["params"], data["matrix"]
    hull_of, starts, face_starts = data["hull"], data["hull_start"], data["hull_face_start"]
    points, faces = data["hull_points"], data["hull_faces"]
    made = {}
    out = []
    for k in range(len(kinds)):
        hull = None
        h = int(hull_of[k])
        if h >= 0:
            hull = (points[starts[h]:starts[h + 1]], faces[face_starts[h]:face_starts[h + 1]])
            key = (h, matrices[k][:3, :3].tobytes())
            if key not in made:
                made[key] = geometry(HULL, None, matrices[k], hull)[0]
            out.append((made[key], np.eye(3), matrices[k][:3, 3].copy()))
            continue
        out.append(geometry(int(kinds[k]), params[k], matrices[k]))
    return out


def _answer(signed):
    """A contact's signed distance, NaN when coal's EPA failed (``FAILED``)."""
    return float(signed) if abs(signed) < FAILED else float("nan")


def _request(margin, tight=False):
    request = coal.CollisionRequest(coal.CONTACT, 1)
    request.security_margin = float(margin)
    if tight:
        request.gjk_tolerance = TIGHT
        request.epa_tolerance = TIGHT_EPA
    return request


def level(data, tight=False):
    """``tight``: GJK and EPA at ``TIGHT`` instead of coal's defaults (for tests of the shapes'
    conventions; the benchmark times the defaults)."""
    clearance = float(data["clearance"])
    made = objects(data)
    posed = [coal.CollisionObject(g, coal.Transform3s(r, t)) for g, r, t in made]
    pairs = data["pairs"].tolist()
    needs = data["pair_need"].tolist()

    manager = coal.DynamicAABBTreeCollisionManager()
    for o in posed:
        manager.registerObject(o)
    manager.setup()
    callback = coal.CollisionCallBackDefault()
    callback.data.request = _request(clearance)
    # The default callback stops once the result holds num_max_contacts: let it run to the end.
    callback.data.request.num_max_contacts = 10 * (len(posed) + len(pairs))
    t0, c0 = time.perf_counter(), time.process_time()
    manager.collide(callback)
    manager_s, manager_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    manager_contacts = callback.data.result.numContacts()

    request = _request(clearance, tight)
    result = coal.CollisionResult()
    hits = 0
    signed = []
    t0, c0 = time.perf_counter(), time.process_time()
    for (i, j), need in zip(pairs, needs):
        # each pair within its own clearance, as the level check measures it
        request.security_margin = need
        result.clear()
        if coal.collide(posed[i], posed[j], request, result):
            hits += 1
    pairs_s, pairs_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    # Signed distances of the pairs coal counts as within the margin (outside the timing): its
    # contact's penetration_depth is the signed distance (negative when overlapping).
    for (i, j), need in zip(pairs, needs):
        request.security_margin = need
        result.clear()
        if coal.collide(posed[i], posed[j], request, result):
            signed.append(_answer(result.getContact(0).penetration_depth))
        else:
            signed.append(None)
    return {"manager_s": manager_s, "manager_cpu_s": manager_cpu_s,
            "manager_contacts": manager_contacts, "pairs_s": pairs_s,
            "pairs_cpu_s": pairs_cpu_s, "pair_hits": hits, "pairs": len(pairs),
            "signed": signed, "objects": len(posed)}


def single(data):
    """Per pair kind k: shapes a_k, b_k and poses; median µs per query, and the answers."""
    out = {}
    for name in [str(n) for n in data["pair_names"]]:
        a = {key[len(name) + 3:]: data[key] for key in data.files if key.startswith(name + "_a_")}
        b = {key[len(name) + 3:]: data[key] for key in data.files if key.startswith(name + "_b_")}
        geom_a = _local(a)
        geom_b = _local(b)
        request = coal.CollisionRequest(coal.CONTACT, 1)
        result = coal.CollisionResult()
        times, depths = [], []
        for ma, mb in zip(data[name + "_deep_a"], data[name + "_deep_b"]):
            ta, tb = _transform(ma), _transform(mb)
            result.clear()
            t0 = time.perf_counter()
            hit = coal.collide(geom_a, ta, geom_b, tb, request, result)
            times.append(time.perf_counter() - t0)
            depths.append(-_answer(result.getContact(0).penetration_depth) if hit else None)
        drequest = coal.DistanceRequest()
        dresult = coal.DistanceResult()
        dtimes, distances = [], []
        for ma, mb in zip(data[name + "_apart_a"], data[name + "_apart_b"]):
            ta, tb = _transform(ma), _transform(mb)
            t0 = time.perf_counter()
            d = coal.distance(geom_a, ta, geom_b, tb, drequest, dresult)
            dtimes.append(time.perf_counter() - t0)
            distances.append(float(d))
        out[name] = {"penetration_us": 1e6 * statistics.median(times),
                     "distance_us": 1e6 * statistics.median(dtimes),
                     "depths": depths, "distances": distances}
        out[name].update(_tight_answers(data, name, a, b, geom_a, geom_b))
    return out


def _tight_answers(data, name, a, b, geom_a, geom_b):
    """Depths and distances again with coal's tolerances at ``TIGHT`` (not timed): the answers
    the agreement check compares with ours, so that it measures conventions, not coal's
    default stopping tolerance (1e-6 absolute)."""
    request = coal.CollisionRequest(coal.CONTACT, 1)
    request.gjk_tolerance = TIGHT
    request.epa_tolerance = TIGHT_EPA
    result = coal.CollisionResult()
    depths, normals = [], []
    for ma, mb in zip(data[name + "_deep_a"], data[name + "_deep_b"]):
        result.clear()
        hit = coal.collide(geom_a, _transform(ma), geom_b, _transform(mb), request, result)
        depths.append(-_answer(result.getContact(0).penetration_depth) if hit else None)
        normals.append([float(v) for v in result.getContact(0).normal] if hit else None)
    drequest = coal.DistanceRequest()
    drequest.gjk_tolerance = TIGHT
    dresult = coal.DistanceResult()
    distances = [float(coal.distance(geom_a, _transform(ma), geom_b, _transform(mb),
                                     drequest, dresult))
                 for ma, mb in zip(data[name + "_apart_a"], data[name + "_apart_b"])]
    return {"tight_depths": depths, "tight_normals": normals, "tight_distances": distances}


def _local(desc):
    """coal geometry of a shape described with an identity matrix (the poses move it)."""
    hull = None
    if int(desc["kind"]) == HULL:
        hull = (desc["hull_points"], desc["hull_faces"])
    return geometry(int(desc["kind"]), desc["params"], np.eye(4), hull)[0]


def _transform(matrix):
    return coal.Transform3s(matrix[:3, :3].copy(), matrix[:3, 3].copy())


def main(argv):
    mode, source, target = argv[:3]
    data = np.load(source)
    if mode == "level":
        result = level(data, tight=argv[3:] == ["tight"])
    else:
        result = single(data)
    result["coal"] = coal.__version__
    with open(target, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1:])
