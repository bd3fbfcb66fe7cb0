"""The peer benchmark's input files (scripts/benchmarks/_peer_shapes.py): what is exported comes
back as the same shapes, what coal cannot represent exactly is left out with a reason, and (with
the peer environment, else skipped) coal reads the same shapes: its distances equal ours."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from convex_tools.core import (Box, Capsule, Compound, Cone, Cylinder, Ellipsoid, Hull, Sphere,
                               Transformed, signed_distance)
from convex_tools.core.placement import Placed

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "scripts", "benchmarks")
sys.path.insert(0, BENCHMARKS)

import _peer_shapes  # noqa: E402

DIRECTIONS = np.random.default_rng(5).normal(size=(64, 3))


def _matrix(rotation_z=0.0, scale=(1.0, 1.0, 1.0), at=(0.0, 0.0, 0.0), mirror=False,
            tilt=0.0):
    """Translation · rotation about z · rotation about x by ``tilt`` · scale along the shape's
    axes (· a mirror of its x axis)."""
    c, s = math.cos(rotation_z), math.sin(rotation_z)
    ct, st = math.cos(tilt), math.sin(tilt)
    m = np.eye(4)
    m[:3, :3] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ np.array(
        [[1.0, 0.0, 0.0], [0.0, ct, -st], [0.0, st, ct]]) @ np.diag(scale)
    if mirror:
        m[:3, 0] = -m[:3, 0]
    m[:3, 3] = at
    return m


HULL = Hull(np.random.default_rng(3).normal(size=(30, 3)))

# A small level: every kind, rotated, scaled along its own axes, mirrored, a hull shared by two
# objects (one of them sheared: a hull stays exact under any linear map).
LEVEL = [
    ("box", Placed(Box((0.5, 0.3, 0.2)), _matrix(0.3, (2.0, 1.0, 0.5), (0.0, 0.0, 0.0)))),
    ("ball", Placed(Sphere(0.4), _matrix(0.0, (1.5, 1.5, 1.5), (1.6, 0.0, 0.0)))),
    ("egg", Placed(Sphere(0.4), _matrix(1.0, (1.0, 2.0, 1.0), (0.0, 1.7, 0.3)))),
    ("ellipsoid", Placed(Ellipsoid((0.3, 0.4, 0.5)),
                         _matrix(2.0, (1.0, 1.0, 2.0), (-1.5, 0.0, 0.0)))),
    ("capsule", Placed(Capsule(0.2, 0.5), _matrix(0.7, (1.2, 1.2, 1.2), (0.0, -1.4, 0.2)))),
    ("barrel", Placed(Cylinder(0.4, 0.6),
                      _matrix(0.4, (1.0, 1.0, 1.5), (1.4, 1.5, 0.0), tilt=0.5))),
    ("cone", Placed(Cone(0.5, 0.6), _matrix(1.3, (1.2, 1.2, 0.8), (-1.3, 1.4, 0.1), mirror=True,
                                               tilt=-0.8))),
    ("rock", Placed(HULL, _matrix(0.2, (0.5, 0.5, 0.5), (-1.4, -1.3, 0.0)))),
    ("rock.001", Placed(HULL, np.array([[0.5, 0.2, 0.0, 1.4], [0.0, 0.5, 0.1, -1.4],
                                        [0.0, 0.0, 0.4, 0.0], [0.0, 0.0, 0.0, 1.0]]))),
    ("crate", Transformed(Box((0.3, 0.3, 0.3)), _matrix(0.9, (1.0, 1.0, 1.0), (0.0, 0.0, 1.2)))),
]

# Shapes coal has no exact shape for, and why.
UNEXPORTABLE = [
    ("squashed_barrel", Placed(Cylinder(0.4, 0.6), _matrix(0.0, (1.0, 2.0, 1.0))), "unevenly"),
    ("squashed_pill", Placed(Capsule(0.2, 0.5), _matrix(0.0, (1.0, 1.0, 2.0))), "capsule"),
    ("sheared_box", Placed(Box((0.5, 0.5, 0.5)), np.array(
        [[1.0, 0.5, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0, 0, 0, 1.0]])),
     "sheared"),
    ("arch", Compound([Box((0.2, 0.2, 1.0)), Transformed(Box((0.2, 0.2, 1.0)),
                                                           _matrix(at=(2.0, 0.0, 0.0)))]),
     "not a primitive"),
]


def _made(entry):
    return entry.make() if isinstance(entry, Placed) else entry


def _exported(tmp_path, level):
    names = [name for name, _ in level]
    arrays, kept, skipped = _peer_shapes.describe([e for _, e in level], names)
    pairs = np.array([(i, j) for i in range(len(kept)) for j in range(i + 1, len(kept))])
    path = tmp_path / "level.npz"
    np.savez(path, pairs=pairs, clearance=np.array(0.05),
             own_clearance=np.full(len(kept), np.nan), pair_need=np.full(len(pairs), 10.0),
             **arrays)
    return np.load(path), kept, skipped


def test_exported_level_comes_back_as_the_same_shapes(tmp_path):
    data, kept, skipped = _exported(tmp_path, LEVEL)
    assert kept == list(range(len(LEVEL))) and skipped == []
    rebuilt = _peer_shapes.posed_entries(data)
    assert [str(n) for n in data["names"]] == [name for name, _ in LEVEL]
    for k, (name, entry) in enumerate(LEVEL):
        original, copy = _made(entry), rebuilt[k]
        size = np.abs(np.concatenate(original.aabb())).max()
        for d in DIRECTIONS:
            # (the same set: equal support values; a tie may pick another point of a face)
            assert np.dot(copy.support(d), d) == pytest.approx(
                np.dot(original.support(d), d), abs=1e-12 * size), (name, d)


def test_objects_of_one_hull_share_one_hull(tmp_path):
    data, _, _ = _exported(tmp_path, LEVEL)
    rebuilt = _peer_shapes.posed_entries(data)
    rocks = [k for k, (name, _) in enumerate(LEVEL) if name.startswith("rock")]
    assert data["hull"][rocks].tolist() == [0, 0]
    assert rebuilt.raw(rocks[0]).inner is rebuilt.raw(rocks[1]).inner
    assert len(data["hull_start"]) == 2        # one hull stored


@pytest.mark.parametrize("name, entry, reason", UNEXPORTABLE, ids=[u[0] for u in UNEXPORTABLE])
def test_shapes_coal_cannot_represent_are_left_out_with_a_reason(tmp_path, name, entry, reason):
    level = LEVEL[:2] + [(name, entry)]
    data, kept, skipped = _exported(tmp_path, level)
    assert kept == [0, 1]
    assert [n for n, _ in skipped] == [name] and reason in skipped[0][1]
    assert [str(n) for n in data["names"]] == ["box", "ball"]


def test_single_pair_arrays_round_trip():
    for shape in (Cylinder(0.5, 0.75), Cone(0.6, 0.7), HULL, Box((0.6, 0.4, 0.5))):
        arrays = _peer_shapes.single_arrays("p_a_", shape)
        copy = _peer_shapes.local_shape(_Arrays(arrays), "p_a_")
        for d in DIRECTIONS:
            assert np.dot(copy.support(d), d) == pytest.approx(np.dot(shape.support(d), d),
                                                               abs=1e-12)


class _Arrays(dict):
    """What ``np.load`` gives: a mapping with ``files``."""

    @property
    def files(self):
        return list(self)


def _find_peer_python():
    chosen = os.environ.get("CONVEX_PEER_PYTHON") or "/work/peers/venv/bin/python"
    return chosen if os.path.exists(chosen) else None


@pytest.mark.skipif(_find_peer_python() is None,
                    reason="needs the peer environment with coal (docs/peers.md)")
def test_coal_reads_the_exported_shapes_as_ours(tmp_path):
    """coal's signed distances on every pair of the exported level equal ours: its shapes
    (sizes, axes, the cone's apex, mirrors, hull triangles) are ours."""
    data, _, _ = _exported(tmp_path, LEVEL)
    out = tmp_path / "coal.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([_find_peer_python(), os.path.join(BENCHMARKS, "_peer_coal.py"), "level",
                    str(tmp_path / "level.npz"), str(out), "tight"],
                   check=True, env=env, cwd=tmp_path)
    coal = json.loads(out.read_text())["signed"]
    shapes = [_made(e) for _, e in LEVEL]
    for (i, j), theirs in zip(data["pairs"].tolist(), coal):
        # (every pair is within its 10 m margin, so coal reports each one's signed distance;
        # coal's GJK/EPA run at 1e-10 here, ours stop near 1e-9 relative)
        assert theirs == pytest.approx(signed_distance(shapes[i], shapes[j]), abs=1e-7), \
            (LEVEL[i][0], LEVEL[j][0])
