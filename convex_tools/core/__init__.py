"""convex_tools.core: collision queries on support-mapped convex shapes and on concave shapes made
of them (``Compound``, ``TriangleMesh``); numpy only, never bpy."""

from .results import (Contact, DistanceResult, Manifold, RayHit, SeparationCache, Status,
                      SweepHit)
from .shapes import (Box, Capsule, Cone, ConvexHullOf, Cylinder, Disc, Ellipsoid, MinkowskiSum,
                     Point, Rectangle, RoundBox, Segment, Shape, Sphere, Transformed, posed,
                     translated)
from .hull import Hull
from .bvh import AABBTree
from .compound import Compound
from .trimesh import Triangle, TriangleMesh
from .broadphase import candidate_pairs, check_pairs, query_all, shape_aabbs
from .quickhull import HullData, QuickhullError, convex_hull
from .queries import (contact_manifold, distance, intersect, penetration, ray_cast,
                      signed_distance, sweep, sweep_rotating)
from .intrusion import Intrusion, mesh_intrusion
