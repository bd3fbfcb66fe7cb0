"""convex_tools.core: convex collision queries on support-mapped shapes (numpy only, never bpy)."""

from .results import (Contact, DistanceResult, Manifold, RayHit, SeparationCache, Status,
                      SweepHit)
from .shapes import (Box, Capsule, Cone, ConvexHullOf, Cylinder, Disc, Ellipsoid, MinkowskiSum,
                     Point, Rectangle, RoundBox, Segment, Shape, Sphere, Transformed, posed,
                     translated)
from .hull import Hull
from .gjk import distance, intersect
from .raycast import ray_cast
from .sweep import sweep, sweep_rotating
from .broadphase import candidate_pairs, check_pairs, query_all, shape_aabbs
from .quickhull import HullData, QuickhullError, convex_hull
from .penetration import penetration, signed_distance
from .manifold import contact_manifold
