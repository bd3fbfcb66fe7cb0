"""Every object of the file read at once: names, types and world matrices as arrays.

A level check reads a few things of every object. Read one object at a time, each read is a
Python attribute access through RNA (``np.array(obj.matrix_world)`` costs ~1.3 µs, a name
~0.2 µs); ``bpy_prop_collection.foreach_get`` reads one property of every object of a
collection into a buffer in one call (the world matrices of 100,000 objects in ~8 ms, as the
float32 Blender stores them). ``ObjectTable`` holds those reads for one check; the collect
stage, the proxy index and the shape cache look objects up in it by name.

Values are the ones the one-object reads give: a world matrix is Blender's float32 matrix
widened to float64 (``np.array(obj.matrix_world, dtype=float)`` gives the same numbers), and
``foreach_get`` of an enum gives its items' values, mapped back to their identifiers here.
"""

from __future__ import annotations

from collections import Counter

import bpy
import numpy as np

__all__ = ["ObjectTable", "enum_identifiers", "matrix_bytes", "matrices_of_bytes"]


def enum_identifiers(struct, prop) -> dict:
    """Value -> identifier of the items of the enum property ``prop`` of RNA type ``struct``."""
    return {item.value: item.identifier
            for item in struct.bl_rna.properties[prop].enum_items}


def session_uids(objects) -> np.ndarray:
    """The ``session_uid`` of every object of ``objects`` (a ``bpy_prop_collection`` of
    objects), read in bulk."""
    uids = np.empty(len(objects), dtype=np.int64)
    objects.foreach_get("session_uid", uids)
    return uids


class ObjectTable:
    """The objects of ``bpy.data.objects``, read in bulk.

    ``objects``, ``names`` and ``types`` (identifiers such as 'MESH') are lists in the
    collection's order; ``row`` maps a name to its position (names two objects share, as a
    library's object may share a local one's, are left out); ``hide_viewport`` is a bool array,
    ``instance_type`` the values of the objects' Instancing enum; ``matrices`` the (N, 4, 4)
    world matrices (made after the depsgraph is evaluated, they are the evaluated ones), all as
    they were when the table was made."""

    def __init__(self):
        self.collection = bpy.data.objects
        self.objects = list(self.collection)
        self.names = self.collection.keys()
        self.row = {name: k for k, name in enumerate(self.names)}
        if len(self.row) < len(self.names):
            # Two objects of one name (one linked from a library): neither is looked up by
            # name; callers read such objects one at a time.
            for name in [n for n, c in Counter(self.names).items() if c > 1]:
                del self.row[name]
        n = len(self.objects)
        codes = np.empty(n, dtype=np.int32)
        self.collection.foreach_get("type", codes)
        lookup = enum_identifiers(bpy.types.Object, "type")
        self.types = [lookup[c] for c in codes.tolist()]
        self.hide_viewport = np.empty(n, dtype=bool)
        self.collection.foreach_get("hide_viewport", self.hide_viewport)
        # Instancing as its enum's values (``instance_code`` gives an identifier's).
        self.instance_type = np.empty(n, dtype=np.int32)
        self.collection.foreach_get("instance_type", self.instance_type)
        self._type_codes = codes
        # Read now, with the rest: a check may run in steps while objects are added or
        # deleted (the collection's length changes), and the rows must stay these objects'.
        buffer = np.empty(n * 16, dtype=np.float32)
        self.collection.foreach_get("matrix_world", buffer)
        # (Blender's matrices are column-major: element [i, j] is at 4 j + i.)
        self.matrices = buffer.reshape(-1, 4, 4).transpose(0, 2, 1).astype(float)
        uids = session_uids(self.collection)
        self._uid_order = np.argsort(uids, kind="stable")
        self._uids = uids[self._uid_order]      # sorted (``rows_of``)

    def of_types(self, identifiers) -> np.ndarray:
        """Bool array: whether each object's type is one of ``identifiers``."""
        values = [v for v, i in enum_identifiers(bpy.types.Object, "type").items()
                  if i in identifiers]
        return np.isin(self._type_codes, values)

    @staticmethod
    def instance_code(identifier) -> int:
        """The value of ``Object.instance_type``'s item ``identifier`` (as in
        ``instance_type``)."""
        return next(v for v, i in enum_identifiers(bpy.types.Object, "instance_type").items()
                    if i == identifier)

    def __len__(self) -> int:
        return len(self.objects)

    def rows_of(self, members) -> np.ndarray:
        """Positions in the table of the objects of ``members`` (a ``bpy_prop_collection`` of
        objects, e.g. a collection's ``objects``), read in bulk by their ``session_uid``;
        those not in the table are left out."""
        wanted = session_uids(members)
        at = np.minimum(np.searchsorted(self._uids, wanted), max(len(self._uids) - 1, 0))
        found = self._uids[at] == wanted if len(self._uids) else np.zeros(len(wanted), bool)
        return self._uid_order[at[found]]

    def matrix(self, name):
        """The world matrix of the object called ``name`` (None when it is not in the table)."""
        k = self.row.get(name)
        return None if k is None else self.matrices[k]


def matrix_bytes(matrix) -> bytes:
    """A ``mathutils.Matrix`` 4×4 as its float32 bytes, row by row (through its buffer: ~0.2 µs,
    where ``np.array(matrix)`` takes ~0.7 µs); for matrices that live only a moment, such as a
    depsgraph instance's. ``matrices_of_bytes`` makes them an array."""
    return memoryview(matrix).tobytes()


def matrices_of_bytes(chunks) -> np.ndarray:
    """(N, 4, 4) float64 matrices of N ``matrix_bytes`` (the values ``np.array(matrix,
    dtype=float)`` gives)."""
    return np.frombuffer(b"".join(chunks), dtype=np.float32).reshape(-1, 4, 4).astype(float)
