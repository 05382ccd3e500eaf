"""Values derived from a frozen array, computed once and kept while the array lives.

A typed tensor built from a logical tensor holds its own copy of the data, cast to its dtype and
frozen (:func:`freeze`): nothing can write into it afterwards, so anything computed from that copy
alone, such as the weights widened for the Multiplier, stays right for as long as the copy lives.
A kernel called again on the same weights then reuses what the second call derived, as the hardware
reuses weights already in place (docs/runtime.md §3.3). An array seen once (data built for one call)
keeps nothing, so it costs no memory past its call; writeable arrays never do.

A tensor written a few cells at a time (a KV cache, one token a step) is a new frozen array each step.
An element-wise derivation kept for the array before the write is carried to the new one by
:func:`carry`: a copy with only the written cells computed again, the same bits as computing it all.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable, Hashable
from typing import Any, Final

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

# id of a frozen array that owns its memory -> a weak reference that drops the entry when the array
# dies, and what was derived from it (or from a view of it), by key.
_kept: dict[int, tuple[weakref.ref[Array], dict[Hashable, Array]]] = {}
# How each element-wise value of ``_kept`` was computed, by the same keys: what :func:`carry` redoes.
_elementwise: dict[int, dict[tuple[Any, ...], tuple[Callable[..., Array], tuple[Any, ...], dict[str, Any]]]] = {}
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
        _elementwise.pop(owner, None)


def _owner(array: Array) -> Array | None:
    """The frozen array that owns ``array``'s memory, walking out through its bases; None when a
    writeable array is met on the way, or the memory comes from elsewhere."""
    owner: Any = array
    while isinstance(owner, np.ndarray) and not owner.flags.writeable:
        if owner.base is None:
            return owner
        owner = owner.base
    return None


def unwritable(array: Array) -> bool:
    """Whether nothing can write into ``array``'s memory: it and every array it is a view of are frozen."""
    return _owner(array) is not None


def _entry(owner: Array) -> tuple[weakref.ref[Array], dict[Hashable, Array]] | None:
    """What is kept for ``owner``; None, with ``owner`` remembered, the first time it is seen."""
    found = _kept.get(id(owner))
    if found is None:
        ref = weakref.ref(owner, _forget)
        _kept[id(owner)], _owners[id(ref)] = (ref, {}), id(owner)
    return found


def _place(array: Array) -> tuple[Any, ...]:
    """Where a view sits in its owner's memory: part of every key, so two views never share a value."""
    return (array.__array_interface__["data"][0], array.shape, array.strides, array.dtype.str)


def derived(array: Array, key: Hashable, compute: Callable[..., Array], *args: Any, elementwise: bool = False,
            **options: Any) -> Array:
    """``compute(array, *args, **options)``, read-only; from the second call on the same frozen array,
    kept and reused while the array lives.

    ``key`` names the derivation (the same array may be widened from different dtypes); the view's
    place in its owner's memory is part of the key, so two views of one owner never share a value.
    ``compute`` must return a new array. ``elementwise`` says each cell of the result depends on the
    same cell of ``array`` alone (of the same shape): :func:`carry` may then recompute part of it.
    """
    if array.size < _WORTH_KEEPING:
        return compute(array, *args, **options)
    owner = _owner(array)
    found = None if owner is None else _entry(owner)
    if owner is None or found is None:  # writeable, memory from elsewhere, or seen once: keep nothing yet
        return compute(array, *args, **options)
    where = (*_place(array), key)
    value = found[1].get(where)
    if value is None:
        value = found[1][where] = compute(array, *args, **options)
        value.setflags(write=False)
        if elementwise:
            _elementwise.setdefault(id(owner), {})[where] = (compute, args, options)
    return value


def carry(old: Array, new: Array, part: Callable[[Array], Array]) -> None:
    """Keep for ``new`` what was kept element-wise for ``old``: ``new`` is a frozen copy of ``old`` (its
    own memory, of the same shape) with the cells ``part`` picks written.

    Each value kept for the whole of ``old`` is copied and recomputed on those cells only; a value nothing
    but this table holds (no caller kept it, no view of it lives) is moved to ``new`` instead and recomputed in
    place, and ``old`` derives it again if it is ever asked for. ``new`` is remembered as seen, so that its
    first use keeps what it derives: the next write carries it on.
    """
    if new.size < _WORTH_KEEPING or _owner(new) is not new:
        return
    owner = _owner(old)
    found = None if owner is None else _kept.get(id(owner))
    recipes = {} if owner is None else _elementwise.get(id(owner), {})
    into = _entry(new) or _kept[id(new)]
    place, fresh = _place(old), _place(new)
    for where, recipe in list(recipes.items()):
        if found is None or where[:-1] != place:
            continue
        compute, args, options = recipe
        value = found[1][where]
        if _alone(value):
            del found[1][where], recipes[where]  # moved: a KV cache's widened form is not copied every step
            _thaw(value)
        else:
            value = np.array(value)  # a copy of its own, a broadcast one spread out
        part(value)[...] = compute(part(new), *args, **options)
        freeze(value)
        into[1][(*fresh, where[-1])] = value
        _elementwise.setdefault(id(new), {})[(*fresh, where[-1])] = recipe


# The references to a kept value nothing else holds, while _alone looks at it: the table's, carry's name, this
# parameter and sys.getrefcount's argument; to the array whose memory it views: the value's base attribute, the
# local name and the argument. Any other count (a caller holding either, another view) reads as held.
_VALUE_ALONE: Final = 4
_BASE_ALONE: Final = 3


def _alone(value: Array) -> bool:
    """Whether nothing but the table holds ``value`` (no caller's name, no other view of its memory): ``value``
    owns its memory, or is the one view of an array that does. CPython's reference counts say so exactly."""
    if sys.getrefcount(value) != _VALUE_ALONE:
        return False
    base = value.base
    return base is None or (type(base) is np.ndarray and base.base is None and sys.getrefcount(base) == _BASE_ALONE)


def _thaw(value: Array) -> None:
    """Let ``value``, a value :func:`_alone` found, and the array whose memory it views be written (undone by
    :func:`freeze`)."""
    base = value.base
    if isinstance(base, np.ndarray):
        base.setflags(write=True)
    value.setflags(write=True)
