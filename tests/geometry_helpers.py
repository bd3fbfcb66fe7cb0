"""Helpers shared by the core tests: rotations, rigid poses and meshes made of grids."""

import math

import numpy as np

from convex_tools.core import TriangleMesh


def random_rotation(rng):
    """A uniformly random rotation matrix (QR of a Gaussian matrix, sign-fixed)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q @ np.diag(np.sign(np.diag(r)))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def rigid(rotation=None, translation=(0, 0, 0)):
    m = np.eye(4)
    if rotation is not None:
        m[:3, :3] = rotation
    m[:3, 3] = translation
    return m


def rotation(axis, angle):
    """Rotation by ``angle`` about ``axis`` (Rodrigues' formula)."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    k = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    return np.eye(3) + s * k + (1 - c) * k @ k


def quad_grid(origin, u, v, nu, nv):
    """A parallelogram origin + s u + t v (s, t in [0, 1]) cut into 2 nu nv triangles whose
    front faces look along u × v."""
    origin, u, v = (np.asarray(x, float) for x in (origin, u, v))
    s, t = np.meshgrid(np.arange(nu + 1) / nu, np.arange(nv + 1) / nv, indexing="ij")
    vertices = origin + s.reshape(-1, 1) * u + t.reshape(-1, 1) * v
    k = np.arange((nu + 1) * (nv + 1)).reshape(nu + 1, nv + 1)
    a, b, c, d = k[:-1, :-1], k[1:, :-1], k[1:, 1:], k[:-1, 1:]
    triangles = np.concatenate((np.stack((a, b, c), -1).reshape(-1, 3),
                                np.stack((a, c, d), -1).reshape(-1, 3)))
    return vertices, triangles


def welded(*grids):
    """One mesh from several grids, equal vertices merged (so that edges are shared)."""
    vertices = np.vstack([g[0] for g in grids])
    offsets = np.cumsum([0] + [len(g[0]) for g in grids[:-1]])
    triangles = np.vstack([g[1] + o for g, o in zip(grids, offsets)])
    unique, inverse = np.unique(vertices, axis=0, return_inverse=True)
    return TriangleMesh(unique, inverse.reshape(-1)[triangles])
