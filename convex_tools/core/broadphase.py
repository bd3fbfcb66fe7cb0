"""Broad phase: which axis-aligned bounding boxes overlap (sort and sweep on a column grid).

The narrow phase (GJK, EPA, ray casts) costs microseconds per pair; a scene of n objects has
n(n-1)/2 pairs but usually only O(n) of them are near each other. The broad phase finds those
pairs from bounding boxes alone, in numpy, so that the narrow phase runs only where it matters.

``candidate_pairs(lower, upper)`` — every pair i < j whose closed boxes overlap (touching boxes
count), each exactly once, rows sorted. The method is *sort and sweep*: sort the boxes by their
lower bound on the axis along which the box centres spread most, and each box's candidates are
the boxes whose lower bound falls inside its own interval on that axis (a ``searchsorted`` gives
that window for all boxes at once). On its own, one sweep axis lets every box see all boxes in a
slab through the scene, which grows like n^(5/3) for objects scattered through a volume; so the
sweep runs independently in the *columns* of a coarse grid over the two other axes (the column
size about twice the typical box extent). A pair that shares several columns is reported only in
the column holding the lower corner of their overlap, so no deduplication pass is needed. Boxes
that would cover too many columns (a floor, a wall) are swept once against everything instead.
For scattered objects the cost is a sort, O(n log n), plus the candidates, O(n).

``shape_aabbs(shapes, margin, sweeps)`` builds the boxes from support mappings; ``query_all``
and ``check_pairs`` run a narrow-phase callable on the candidates.
"""

from __future__ import annotations

import math

import numpy as np

from . import batch, queries, validation
from .placement import PoseTable

# Column size on each grid axis, as a multiple of the median box extent on that axis: a typical
# box then covers 1 to 4 columns, and a column holds a few boxes' worth of space.
COLUMN_SIZE_FACTOR = 2.0
# A box covering more columns than this is swept against all boxes on the sweep axis instead of
# being copied into each column (bounds the copies per box, hence memory, to this factor).
MAX_COLUMNS_PER_BOX = 16
# Candidate pairs expanded per numpy batch: bounds the temporary memory (~100 bytes per pair).
EXPAND_CHUNK = 1 << 20
# query_all reports progress at most this often (in pairs) besides the final call.
PROGRESS_EVERY = 256


def candidate_pairs(lower, upper) -> np.ndarray:
    """All pairs ``i < j`` of boxes that overlap, as an ``(P, 2)`` int64 array sorted by row.

    ``lower`` and ``upper`` are ``(N, 3)`` arrays of box corners (``lower <= upper``). Boxes are
    closed: boxes that only touch (share a face, an edge or a corner) are reported.
    """
    lower, upper = _boxes(lower, upper)
    n = len(lower)
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)

    sweep_axis = int(np.argmax(np.var(lower + upper, axis=0)))
    grid_axes = [k for k in range(3) if k != sweep_axis]
    # Reorder the columns so that the sweep axis comes first: column 0 = sweep, 1 and 2 = grid.
    lo = np.ascontiguousarray(lower[:, [sweep_axis] + grid_axes])
    hi = np.ascontiguousarray(upper[:, [sweep_axis] + grid_axes])
    # Integer codes of the sweep-axis bounds: exact order and ties, usable in composite keys.
    values = np.unique(np.concatenate((lo[:, 0], hi[:, 0])))
    lo_code = np.searchsorted(values, lo[:, 0])
    hi_code = np.searchsorted(values, hi[:, 0])

    cells_lo, cells_hi = _grid_cells(lo[:, 1:], hi[:, 1:])
    span = cells_hi - cells_lo + 1
    large = span[:, 0] * span[:, 1] > MAX_COLUMNS_PER_BOX

    found = [_sweep_columns(np.flatnonzero(~large), lo, hi, lo_code, hi_code,
                            cells_lo, cells_hi, len(values))]
    if np.any(large):
        found.append(_sweep_large(large, lo, hi, lo_code, hi_code))
    pairs = np.concatenate(found)
    # Canonical order: (min, max) per row, rows sorted, via one int64 key per pair.
    a = np.minimum(pairs[:, 0], pairs[:, 1])
    b = np.maximum(pairs[:, 0], pairs[:, 1])
    key = np.sort(a * n + b)
    return np.stack((key // n, key % n), axis=1).astype(np.int64, copy=False)


def _boxes(lower, upper):
    lower = _box_corners("lower", lower)
    upper = _box_corners("upper", upper)
    if lower.shape != upper.shape:
        raise ValueError(f"lower and upper must have the same shape, got {lower.shape} and "
                         f"{upper.shape}")
    bad = np.flatnonzero(np.any(lower > upper, axis=1))
    if len(bad):
        raise ValueError(f"lower must not exceed upper (box {int(bad[0])} is inverted)")
    return lower, upper


def _box_corners(name, value) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an (N, 3) array of numbers") from None
    if a.ndim != 2 or a.shape[1] != 3:
        if a.size == 0:
            return np.empty((0, 3))
        raise ValueError(f"{name} must be an (N, 3) array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return a


def _grid_cells(lo, hi):
    """Integer column ranges ``[cells_lo, cells_hi]`` (N, 2) of each box on the two grid axes."""
    n = len(lo)
    extent = np.median(hi - lo, axis=0)
    spread = hi.max(axis=0) - lo.min(axis=0)
    # At most about sqrt(n) columns per axis, so that point-like boxes do not make n² columns.
    size = np.maximum(COLUMN_SIZE_FACTOR * extent, spread / math.ceil(math.sqrt(n)))
    size[size <= 0.0] = 1.0  # all boxes flat at one coordinate: one column on this axis
    origin = lo.min(axis=0)
    # floor is monotone, so the cell of max(lo_i, lo_j) is max(cell of lo_i, cell of lo_j):
    # the reference column of a pair can be computed from these integers exactly.
    cells_lo = np.floor((lo - origin) / size).astype(np.int64)
    cells_hi = np.floor((hi - origin) / size).astype(np.int64)
    return cells_lo, cells_hi


def _sweep_columns(boxes, lo, hi, lo_code, hi_code, cells_lo, cells_hi, n_codes):
    """Overlapping pairs among ``boxes`` (indices), swept within each grid column."""
    if len(boxes) < 2:
        return np.empty((0, 2), dtype=np.int64)
    # One entry per (box, column) it covers.
    span = cells_hi[boxes] - cells_lo[boxes] + 1
    copies = span[:, 0] * span[:, 1]
    box = np.repeat(boxes, copies)
    k = np.arange(len(box)) - np.repeat(np.cumsum(copies) - copies, copies)
    row = np.repeat(span[:, 1], copies)
    c1 = cells_lo[box, 0] + k // row
    c2 = cells_lo[box, 1] + k % row
    # One int64 key (column, sweep-axis code) per bound. Cells number at most about sqrt(n)
    # per axis (see _grid_cells), so the key stays below ~2 n² (no overflow below n ~ 1e9).
    column = c1 * (int(c2.max()) + 1) + c2
    key_lo = column * n_codes + lo_code[box]
    key_hi = column * n_codes + hi_code[box]
    order = np.argsort(key_lo, kind="stable")
    box, c1, c2 = box[order], c1[order], c2[order]
    key_lo, key_hi = key_lo[order], key_hi[order]
    # Window of entry p: the later entries of its column whose lower bound is <= its upper bound.
    stop = np.searchsorted(key_lo, key_hi, side="right")
    start = np.arange(len(box)) + 1
    out = []
    for p, q in _expand(start, stop):
        i, j = box[p], box[q]
        keep = _overlap_grid_axes(lo, hi, i, j)
        # Report the pair only in the column holding the lower corner of the overlap.
        keep &= (c1[p] == np.maximum(cells_lo[i, 0], cells_lo[j, 0]))
        keep &= (c2[p] == np.maximum(cells_lo[i, 1], cells_lo[j, 1]))
        out.append(np.stack((i[keep], j[keep]), axis=1))
    return np.concatenate(out) if out else np.empty((0, 2), dtype=np.int64)


def _sweep_large(large, lo, hi, lo_code, hi_code):
    """Pairs with at least one large box: one sweep on the sweep axis, without columns."""
    order = np.lexsort((np.arange(len(lo)), lo_code))
    codes_lo, codes_hi = lo_code[order], hi_code[order]
    stop = np.searchsorted(codes_lo, codes_hi, side="right")
    position = np.arange(len(order))
    is_large = large[order]
    out = []
    # Large box first in sweep order: its window runs over every later box.
    first = position[is_large]
    for p, q in _expand(first + 1, stop[first]):
        out.append(_keep_overlapping(lo, hi, order[first[p]], order[q]))
    # Small box first: its window runs over the later large boxes only (large-large pairs were
    # all found above, from whichever large box comes first).
    small = position[~is_large]
    large_positions = first  # sorted ascending
    begin = np.searchsorted(large_positions, small, side="right")
    end = np.searchsorted(large_positions, stop[small], side="left")
    for p, q in _expand(begin, end):
        out.append(_keep_overlapping(lo, hi, order[small[p]], order[large_positions[q]]))
    return np.concatenate(out) if out else np.empty((0, 2), dtype=np.int64)


def _keep_overlapping(lo, hi, i, j):
    keep = _overlap_grid_axes(lo, hi, i, j)
    return np.stack((i[keep], j[keep]), axis=1)


def _overlap_grid_axes(lo, hi, i, j):
    return ((lo[i, 1] <= hi[j, 1]) & (lo[j, 1] <= hi[i, 1])
            & (lo[i, 2] <= hi[j, 2]) & (lo[j, 2] <= hi[i, 2]))


def _expand(start, stop):
    """Yield ``(rows, values)`` covering ``values in range(start[r], stop[r])`` for every row r,
    in batches of about ``EXPAND_CHUNK`` pairs (``rows`` index into ``start``)."""
    counts = np.maximum(stop - start, 0)
    total = np.cumsum(counts)
    if len(total) == 0 or total[-1] == 0:
        return
    row0 = 0
    while row0 < len(counts):
        # Rows [row0, row1) hold about EXPAND_CHUNK pairs (at least one row per batch).
        done = total[row0 - 1] if row0 else 0
        row1 = int(np.searchsorted(total, done + EXPAND_CHUNK, side="right"))
        row1 = max(row1, row0 + 1)
        c = counts[row0:row1]
        rows = np.repeat(np.arange(row0, row1), c)
        offsets = np.cumsum(c) - c
        values = np.arange(len(rows)) - np.repeat(offsets, c) + np.repeat(start[row0:row1], c)
        if len(rows):
            yield rows, values
        row0 = row1


def shape_aabbs(shapes, margin=0.0, sweeps=None):
    """Bounding boxes ``(lower, upper)`` (N, 3) of ``shapes`` from their support mappings.

    Each box is grown by ``margin`` on every side (pairs whose boxes are then found overlapping
    are within ``2 * margin`` of each other on every axis: use ``margin = clearance / 2`` to find
    pairs closer than a clearance). With ``sweeps`` (N, 3 translations), each box also covers
    the shape's whole straight motion from its pose to the pose moved by ``sweeps[i]``.
    """
    shapes = shape_list(shapes)
    margin = validation.size("margin", margin)
    n = len(shapes)
    lower, upper = np.empty((n, 3)), np.empty((n, 3))
    for i, shape in enumerate(shapes):
        lower[i], upper[i] = shape.aabb()
    lower -= margin
    upper += margin
    if sweeps is not None:
        moves = np.asarray(sweeps, dtype=float) if _is_numeric(sweeps) else None
        if moves is None or moves.shape != (n, 3):
            raise ValueError(f"sweeps must be an ({n}, 3) array of translations")
        if not np.all(np.isfinite(moves)):
            raise ValueError("sweeps must be finite (found NaN or inf)")
        lower += np.minimum(moves, 0.0)
        upper += np.maximum(moves, 0.0)
    return lower, upper


def shape_list(shapes) -> list:
    """``shapes`` as a list of shapes: concave and convex_tools shapes as they are, a user's
    own (anything with ``support_xyz``) wrapped as the queries wrap it; anything else is a
    ValueError naming it."""
    if isinstance(shapes, (str, bytes)) or not hasattr(shapes, "__iter__"):
        raise ValueError(f"shapes must be a sequence of convex_tools shapes, got "
                         f"{type(shapes).__name__}")
    return [s if callable(getattr(s, "aabb", None)) else validation.shape(f"shapes[{i}]", s)
            for i, s in enumerate(shapes)]


def _is_numeric(value) -> bool:
    try:
        np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return False
    return True


def query_all(shapes, query, margin=0.0, progress=None, sweeps=None):
    """Run ``query(shapes[i], shapes[j])`` on every broad-phase candidate pair, lazily.

    Returns an iterator of ``(i, j, result)``, ``i < j``, in the order of ``candidate_pairs``,
    for each pair whose result is not ``None`` (the queries return ``None`` for "nothing found":
    ``penetration`` when apart, ``sweep`` when the motions never touch; ``distance`` always
    yields). The boxes are built and bad arguments rejected at the call; each query runs as the
    iterator is consumed. ``margin``
    and ``sweeps`` grow the boxes as in ``shape_aabbs``: to catch pairs closer than a clearance
    ``c``, pass ``margin=c / 2``. ``progress(done, total)`` is called every ``PROGRESS_EVERY``
    pairs and once at the end (``total`` = number of candidate pairs); if it returns ``False``
    the scan stops there (a way to cancel a long check).

    With the core's own ``distance`` as the query, the pairs are measured by the batched
    engine (``batch``), thousands at a time: the same answers (to 1e-9 of the shapes' size)
    at a few microseconds a pair; a pair it cannot decide is measured by ``distance`` itself.
    Each result's ``engine`` says which ("batch" or "single").
    """
    if not callable(query):
        raise ValueError("query must be a callable taking two shapes")
    if progress is not None and not callable(progress):
        raise ValueError("progress must be a callable progress(done, total) or None")
    shapes = shape_list(shapes)
    pairs = candidate_pairs(*shape_aabbs(shapes, margin, sweeps))
    # Bad arguments raise here, at the call; the narrow phase runs as the caller iterates.
    if query is queries.distance:
        return _run_batched(shapes, pairs, progress)
    return _run_pairs(shapes, query, pairs, progress)


def _run_batched(shapes, pairs, progress):
    """``_run_pairs`` for ``distance``: a chunk of pairs at a time through the batch."""
    table = PoseTable.from_shapes(shapes)
    total = len(pairs)
    for start in range(0, total, batch.CHUNK_PAIRS):
        chunk = pairs[start:start + batch.CHUNK_PAIRS]
        results = batch.distances(shapes, chunk, queries.distance, table)
        for (i, j), result in zip(chunk.tolist(), results):
            yield i, j, result
        if progress is not None and progress(start + len(chunk), total) is False:
            return
    if total == 0 and progress is not None:
        progress(0, 0)


def _run_pairs(shapes, query, pairs, progress):
    total = len(pairs)
    for done, (i, j) in enumerate(pairs.tolist(), 1):
        result = query(shapes[i], shapes[j])
        if result is not None:
            yield i, j, result
        if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
            if progress(done, total) is False:
                return
    if total == 0 and progress is not None:
        progress(0, 0)


def check_pairs(shapes, query, margin=0.0, progress=None, sweeps=None) -> list:
    """``list(query_all(...))``: the ``(i, j, result)`` of every pair the query reports."""
    return list(query_all(shapes, query, margin=margin, progress=progress, sweeps=sweeps))
