"""Values derived from a frozen array, computed once and kept while the array lives.

A typed tensor built from a logical tensor holds its own copy of the data, cast to its dtype and
frozen (:func:`freeze`): nothing can write into it afterwards, so anything computed from that copy
alone, such as the weights widened for the Multiplier, stays right for as long as the copy lives.
A kernel called again on the same weights then reuses what the second call derived, as the hardware
reuses weights already in place (docs/runtime.md §3.3). An array seen once (data built for one call)
keeps nothing, so it costs no memory past its call; writeable arrays never do.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any, Final

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

# id of a frozen array that owns its memory -> a weak reference that drops the entry when the array
# dies, and what was derived from it (or from a view of it), by key.
_kept: dict[int, tuple[weakref.ref[Array], dict[Hashable, Array]]] = {}
_owners: dict[int, int] = {}  # id of each reference -> the id of the array it was made for
# Smaller arrays are derived on every call: that costs less than the bookkeeping.
_WORTH_KEEPING: Final = 1 << 14


def freeze(array: Array) -> Array:
    """``array`` made read-only, with every array it is a view of (they must all be the caller's own)."""
    part: object = array
    while isinstance(part, np.ndarray):
        part.setflags(write=False)
        part = part.base
    return array


def _forget(ref: weakref.ref[Array]) -> None:
    """Drop what was kept for an array that died (found by its reference: its id may be reused)."""
    owner = _owners.pop(id(ref), None)
    if owner is not None and _kept.get(owner, (None,))[0] is ref:
        del _kept[owner]


def derived(array: Array, key: Hashable, compute: Callable[..., Array], *args: Any, **options: Any) -> Array:
    """``compute(array, *args, **options)``, read-only; from the second call on the same frozen array,
    kept and reused while the array lives.

    ``key`` names the derivation (the same array may be widened from different dtypes); the view's
    place in its owner's memory is part of the key, so two views of one owner never share a value.
    ``compute`` must return a new array.
    """
    if array.size < _WORTH_KEEPING:
        return compute(array, *args, **options)
    owner: Any = array
    while isinstance(owner, np.ndarray) and not owner.flags.writeable:  # walk out to the memory's owner
        if owner.base is None:
            break
        owner = owner.base
    if not isinstance(owner, np.ndarray) or owner.flags.writeable:  # writeable, or memory from elsewhere
        return compute(array, *args, **options)
    found = _kept.get(id(owner))
    if found is None:  # seen once: remember the array, keep nothing yet
        ref = weakref.ref(owner, _forget)
        _kept[id(owner)], _owners[id(ref)] = (ref, {}), id(owner)
        return compute(array, *args, **options)
    where = (array.__array_interface__["data"][0], array.shape, array.strides, array.dtype.str, key)
    value = found[1].get(where)
    if value is None:
        value = found[1][where] = compute(array, *args, **options)
        value.setflags(write=False)
    return value
