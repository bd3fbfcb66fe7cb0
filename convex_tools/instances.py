"""Collection instances: an empty instancing a collection puts a copy of every object of that
collection in the level, moved by the empty.

Each copy is checked like an object of its own, with its own world matrix

    instancer.matrix_world @ translation(-collection.instance_offset) @ obj.matrix_world

(behind the outer instancers' for a collection instanced inside an instanced collection), and is
reported as the path of names that leads to it, e.g. ``Shelf_Empty/Crate.003`` or
``Room/Shelf_Empty/Crate.003``. As in Blender's viewport, objects and child collections hidden
in viewports (the monitor icon) are not instanced, while objects hidden in the view layer (the
eye icon) are; the instanced collection may itself be excluded from the view layer, as asset
collections usually are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# How deep collection instances nest before the rest is left out: Blender's own limit on nested
# instancing (``MAX_DUPLI_RECUR`` in the depsgraph), which also ends a collection that instances
# itself through another.
MAX_INSTANCE_DEPTH = 8
# Between the names of a path.
SEPARATOR = "/"
_IDENTITY = np.eye(4)
_IDENTITY.flags.writeable = False


@dataclass(frozen=True)
class Instance:
    """One instanced object: ``name`` (its path), the instanced ``obj`` (whose data, settings and
    proxies it has), the ``placement`` in front of ``obj.matrix_world``, and ``instancers`` (the
    empties leading to it, outermost first)."""

    name: str
    obj: object
    placement: np.ndarray
    instancers: tuple


def is_instancer(obj) -> bool:
    """True for an object that instances a collection."""
    return obj.instance_type == 'COLLECTION' and obj.instance_collection is not None


def instanced_objects(collection) -> list:
    """Objects a collection instance shows: the collection's and its child collections' (each
    once, in outliner order), minus those hidden in viewports."""
    out, seen = [], set()

    def visit(coll):
        for obj in coll.objects:
            if obj.name not in seen and not obj.hide_viewport:
                seen.add(obj.name)
                out.append(obj)
        for child in coll.children:
            if not child.hide_viewport:
                visit(child)

    visit(collection)
    return out


def expand(instancer, placement=None, outer=(), cache=None) -> list:
    """Every object ``instancer`` puts in the level, nested instances followed (see the module
    docstring), as ``Instance``s. ``cache``: a dict kept across calls (one per check), where
    what each collection instances is remembered (a level places one kit many times)."""
    out = []
    _expand(instancer, None if placement is None else np.asarray(placement, dtype=float),
            tuple(outer), out, {} if cache is None else cache)
    return out


def _expand(instancer, placement, outer, out, cache):
    instancers = outer + (instancer,)
    if len(instancers) > MAX_INSTANCE_DEPTH:
        return
    collection = instancer.instance_collection
    kit = cache.get(collection.as_pointer())
    if kit is None:
        offset = np.eye(4)
        offset[:3, 3] = -np.array(collection.instance_offset, dtype=float)
        members = [(obj, obj.name, is_instancer(obj)) for obj in instanced_objects(collection)]
        kit = cache[collection.as_pointer()] = (offset, members)
    offset, members = kit
    # (as placement @ matrix_world @ offset always was, the identity in front at the top)
    placed = (_IDENTITY if placement is None else placement) \
        @ np.array(instancer.matrix_world, dtype=float) @ offset
    prefix = SEPARATOR.join(o.name for o in instancers) + SEPARATOR
    for obj, name, nested in members:
        if nested:
            _expand(obj, placed, instancers, out, cache)
        else:
            out.append(Instance(prefix + name, obj, placed, instancers))
