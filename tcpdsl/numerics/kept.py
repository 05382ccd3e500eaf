"""Values derived from a frozen array, computed once and kept while the array lives.

A typed tensor built from a logical tensor holds its own copy of the data, cast to its dtype and
frozen (:func:`freeze`): nothing can write into it afterwards, so anything computed from that copy
alone, such as the weights widened for the Multiplier, stays right for as long as the copy lives.
A kernel called again on the same weights then reuses what the first call derived, as the hardware
reuses weights already in place (docs/runtime.md §3.3). Writeable arrays are never kept: their
values are derived on every call.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

# id of an array that owns its memory -> what was derived from it (or from a view of it), by key.
_kept: dict[int, dict[Hashable, Array]] = {}


def freeze(array: Array) -> Array:
    """``array`` made read-only, with every array it is a view of (they must all be the caller's own)."""
    part: object = array
    while isinstance(part, np.ndarray):
        part.setflags(write=False)
        part = part.base
    return array


def _owner(array: Array) -> Array | None:
    """The array owning ``array``'s memory, when it and every view between them are read-only."""
    part = array
    while True:
        if part.flags.writeable:
            return None
        base = part.base
        if base is None:
            return part
        if not isinstance(base, np.ndarray):
            return None  # memory from elsewhere (a buffer, a memory map): it may change behind our back
        part = base


def derived(array: Array, key: Hashable, compute: Callable[[Array], Array]) -> Array:
    """``compute(array)``, frozen; kept and reused while ``array`` is frozen and alive.

    ``key`` names the derivation (the same array may be widened from different dtypes); the view's
    place in its owner's memory is part of the key, so two views of one owner never share a value.
    """
    owner = _owner(array) if isinstance(array, np.ndarray) else None  # a numpy scalar holds no memory of ours
    if owner is None:
        return compute(array)
    found = _kept.get(id(owner))
    where = (array.__array_interface__["data"][0], array.shape, array.strides, array.dtype.str, key)
    if found is None:
        found = _kept[id(owner)] = {}
        weakref.finalize(owner, _kept.pop, id(owner), None)
    value = found.get(where)
    if value is None:
        value = found[where] = freeze(compute(array))
    return value
