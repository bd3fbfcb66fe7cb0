"""The peer benchmark's input files: posed convex shapes as plain arrays (no pickles), written by
``describe`` from convex_tools shapes and read back by ``posed_entries`` / ``local_shape`` here
and by ``_peer_coal.py`` (which reads the same arrays without convex_tools).

Arrays, for N objects and H distinct hulls:

    names (N,) str; kind (N,) int, one of KINDS; params (N, 3) float in our conventions
    (box: half extents; sphere: radius; ellipsoid: radii; capsule, cylinder, cone: radius, half
    height); matrix (N, 4, 4) world matrices; hull (N,) index of the object's hull or -1;
    hull_points / hull_faces: every hull's vertices and outward triangles, concatenated, with
    hull_start / hull_face_start (H + 1,) offsets.

Only what coal represents exactly is exported (``coal_exact``); ``describe`` lists the rest.
"""

import numpy as np

KINDS = ("box", "sphere", "ellipsoid", "capsule", "cylinder", "cone", "hull")
BOX, SPHERE, ELLIPSOID, CAPSULE, CYLINDER, CONE, HULL = range(len(KINDS))

# A matrix's columns count as orthogonal, and two scales as equal, to this fraction of the
# largest scale: Blender stores matrices in single precision (relative error ~1e-7), so this
# separates float noise from a real shear or a real non-uniform scale.
MATRIX_TOLERANCE = 1e-5


def _params(shape):
    """(kind, params) of a convex_tools primitive or hull; None for anything else."""
    from convex_tools.core import Box, Capsule, Cone, Cylinder, Ellipsoid, Hull, Sphere

    if type(shape) is Box:
        return BOX, np.asarray(shape.half_extents, dtype=float)
    if type(shape) is Sphere:
        return SPHERE, np.array([shape.radius, 0.0, 0.0])
    if type(shape) is Ellipsoid:
        return ELLIPSOID, np.asarray(shape.radii, dtype=float)
    if type(shape) is Capsule:
        return CAPSULE, np.array([shape.radius, shape.half_height, 0.0])
    if type(shape) is Cylinder:
        return CYLINDER, np.array([shape.radius, shape.half_height, 0.0])
    if type(shape) is Cone:
        return CONE, np.array([shape.radius, shape.half_height, 0.0])
    if type(shape) is Hull:
        return HULL, np.zeros(3)
    return None


def coal_exact(kind, linear):
    """None when coal has a shape equal to a ``kind`` shape under the 3x3 ``linear`` map, else
    why not. A hull is always exact (its vertices are mapped); a primitive needs orthogonal
    columns (a rotation times a scale along its own axes), a sphere or ellipsoid no more, a
    box none, a capsule a uniform scale, a cylinder or cone the same scale across its axis."""
    if kind == HULL:
        return None
    scale = np.linalg.norm(linear, axis=0)
    top = float(scale.max())
    if top <= 0.0:
        return "a zero scale"
    gram = linear.T @ linear
    if np.abs(gram - np.diag(np.diag(gram))).max() > MATRIX_TOLERANCE * top * top:
        return "sheared (no such primitive in coal)"
    if kind == CAPSULE and np.ptp(scale) > MATRIX_TOLERANCE * top:
        return "a capsule under a non-uniform scale"
    if kind in (CYLINDER, CONE) and abs(scale[0] - scale[1]) > MATRIX_TOLERANCE * top:
        return f"a {KINDS[kind]} scaled unevenly across its axis"
    return None


def unwrap(entry):
    """(inner shape, 4x4 matrix) of a level entry: a ``Placed``, a ``Transformed`` (nested
    ones composed) or a bare shape."""
    from convex_tools.core import Transformed

    matrix = np.eye(4)
    inner = entry
    if hasattr(entry, "inner") and hasattr(entry, "make"):          # placement.Placed
        matrix = np.asarray(entry.matrix, dtype=float)
        inner = entry.inner
    while isinstance(inner, Transformed):
        matrix = matrix @ np.asarray(inner.matrix, dtype=float)
        inner = inner.shape
    return inner, matrix


def describe(entries, names):
    """(arrays for ``np.savez``, kept indices, skipped [(name, reason)]) of level entries."""
    kinds, params, matrices, hull_of, kept, skipped = [], [], [], [], [], []
    hulls = {}
    for k, (entry, name) in enumerate(zip(entries, names)):
        inner, matrix = unwrap(entry)
        found = _params(inner)
        if found is None:
            skipped.append((name, f"not a primitive or hull ({type(inner).__name__})"))
            continue
        kind, p = found
        why = coal_exact(kind, matrix[:3, :3])
        if why is not None:
            skipped.append((name, why))
            continue
        kinds.append(kind)
        params.append(p)
        matrices.append(matrix)
        hull_of.append(hulls.setdefault(id(inner), (len(hulls), inner))[0] if kind == HULL
                       else -1)
        kept.append(k)
    ordered = sorted(hulls.values(), key=lambda e: e[0])
    points = [np.asarray(h.vertices, dtype=float) for _, h in ordered]
    faces = [np.asarray(h.faces, dtype=np.int64) for _, h in ordered]
    arrays = {
        "names": np.array([str(names[k]) for k in kept]),
        "kind": np.array(kinds, dtype=np.int64),
        "params": np.array(params, dtype=float).reshape(-1, 3),
        "matrix": np.array(matrices, dtype=float).reshape(-1, 4, 4),
        "hull": np.array(hull_of, dtype=np.int64),
        "hull_points": np.concatenate(points) if points else np.zeros((0, 3)),
        "hull_start": np.cumsum([0] + [len(p) for p in points]).astype(np.int64),
        "hull_faces": np.concatenate(faces) if faces else np.zeros((0, 3), dtype=np.int64),
        "hull_face_start": np.cumsum([0] + [len(f) for f in faces]).astype(np.int64),
    }
    return arrays, kept, skipped


def _make(kind, params, hull_points=None, package=None):
    """A shape of ``kind`` from its parameters, with ``package``'s classes (convex_tools.core
    by default; ``bench.py ab`` passes an earlier checkout's)."""
    if package is None:
        import convex_tools.core as package

    p = [] if params is None else [float(v) for v in params]
    if kind == BOX:
        return package.Box(p)
    if kind == SPHERE:
        return package.Sphere(p[0])
    if kind == ELLIPSOID:
        return package.Ellipsoid(p)
    if kind == CAPSULE:
        return package.Capsule(p[0], p[1])
    if kind == CYLINDER:
        return package.Cylinder(p[0], p[1])
    if kind == CONE:
        return package.Cone(p[0], p[1])
    if kind == HULL:
        return package.Hull(np.asarray(hull_points, dtype=float))
    raise ValueError(f"unknown shape kind {kind}")


def posed_entries(data):
    """The exported objects as the level check gets them from Blender: a ``LazyShapes`` of
    ``Placed`` entries, objects of one hull sharing one ``Hull``."""
    from convex_tools.core.placement import LazyShapes, Placed

    starts = data["hull_start"]
    hulls = [_make(HULL, None, data["hull_points"][starts[h]:starts[h + 1]])
             for h in range(len(starts) - 1)]
    entries = []
    for kind, p, matrix, h in zip(data["kind"].tolist(), data["params"], data["matrix"],
                                  data["hull"].tolist()):
        inner = hulls[h] if kind == HULL else _make(kind, p)
        entries.append(Placed(inner, np.array(matrix)))
    return LazyShapes(entries)


def local_shape(data, prefix):
    """The single shape stored under ``prefix`` (``single_arrays``), in its own frame."""
    return _make(int(data[prefix + "kind"]), data[prefix + "params"],
                 data[prefix + "hull_points"] if prefix + "hull_points" in data.files else None)


def single_arrays(prefix, shape):
    """Arrays describing one shape in its own frame, keys starting with ``prefix``."""
    kind, p = _params(shape)
    out = {prefix + "kind": np.array(kind), prefix + "params": p}
    if kind == HULL:
        out[prefix + "hull_points"] = np.asarray(shape.vertices, dtype=float)
        out[prefix + "hull_faces"] = np.asarray(shape.faces, dtype=np.int64)
    return out
