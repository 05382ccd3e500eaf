"""Arrays whose dimensions are terms (:class:`~tcpdsl.algebra.terms.Digit`): regrouping and coordinates.

A logical tensor stores one array dimension per term it holds. Two term lists that hold the same
digits of every axis describe the same elements in another grouping: :func:`rearrange` moves the
data from one to the other, by reshape and transpose when the digit boundaries nest. The
evaluators index operands by axis coordinate instead: :func:`coordinate_array` gives one dimension
per axis, where the element at coordinate ``c`` sits at index ``c``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import is_
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Digit, runs

Array = npt.NDArray[Any]
IntArray = npt.NDArray[np.int64]

STAGE: Final = "Tensor"  # the stage errors about logical tensors and their tiles name
TERM_HINT: Final = "a dimension is an axis or one digit of it, such as A, B / 2, Wp % 8192 or A / 4 % 2"

Fixed = tuple[Digit, int]  # a digit a tile fixes, and its value


def axes_of(terms: Sequence[Digit]) -> tuple[str, ...]:
    """The axes of ``terms``, in the order they first appear."""
    return tuple(dict.fromkeys(t.axis for t in terms))


def same_digits(a: Sequence[Digit], b: Sequence[Digit]) -> bool:
    """Whether two term lists hold the same digits of every axis."""
    axes = set(axes_of(a)) | set(axes_of(b))
    return all(runs([t for t in a if t.axis == x]) == runs([t for t in b if t.axis == x]) for x in axes)


def _cuts(*lists: Sequence[Digit]) -> dict[str, list[int]] | None:
    """Per axis, every digit boundary of the terms, or None when two boundaries do not nest."""
    found: dict[str, set[int]] = {}
    for terms in lists:
        for t in terms:
            found.setdefault(t.axis, set()).update((t.stride, t.top))
    out: dict[str, list[int]] = {}
    for axis, values in found.items():
        ordered = sorted(values)
        if any(high % low for low, high in zip(ordered, ordered[1:])):
            return None
        out[axis] = ordered
    return out


def _digits(terms: Sequence[Digit], cuts: dict[str, list[int]]) -> list[tuple[str, int, int]]:
    """Each term split at the cuts into ``(axis, stride, count)`` digits, major first within a term."""
    out: list[tuple[str, int, int]] = []
    for t in terms:
        inner = [c for c in cuts[t.axis] if t.stride <= c <= t.top]
        out.extend((t.axis, low, high // low) for low, high in reversed(list(zip(inner, inner[1:]))))
    return out


def term_coordinates(terms: Sequence[Digit]) -> dict[str, IntArray]:
    """Per axis, the coordinate of every element of an array over ``terms`` (broadcast shapes)."""
    ndim = len(terms)
    out: dict[str, IntArray] = {}
    for k, t in enumerate(terms):
        shape = [1] * ndim
        shape[k] = t.count
        part = (np.arange(t.count, dtype=np.int64) * t.stride).reshape(shape)
        out[t.axis] = out[t.axis] + part if t.axis in out else part
    return out


def rearrange(values: Array, source: Sequence[Digit], target: Sequence[Digit]) -> Array:
    """``values`` (one dimension per term of ``source``) regrouped as one dimension per term of
    ``target``; both must hold the same digits of every axis. A view where numpy allows."""
    if source is target:
        return values
    if isinstance(source, tuple) and isinstance(target, tuple):
        # planned()'s identity lookup written out: a pass regroups its stream at every way move and reduce.
        key = (_rearranging, id(source), id(target))
        found = _planned.get(key)
        if found is not None and found[0][0] is source and found[0][1] is target:
            _planned.move_to_end(key)
            return found[1].apply(values)  # type: ignore[no-any-return]
        return planned(_rearranging, source, target).apply(values)
    return _rearranging(tuple(source), tuple(target)).apply(values)


def regrouping(source: tuple[Digit, ...], target: tuple[Digit, ...]) -> Callable[[Array], Array]:
    """What :func:`rearrange` does to an array over ``source``, as a function its caller keeps."""
    return planned(_rearranging, source, target).apply


_T = TypeVar("_T")
_PLANNED_LIMIT: Final = 2048
# (builder, ids of its arguments) -> the arguments and what the builder made of them, least recently used
# first. Each entry keeps its arguments, so while it is remembered no other object takes their ids.
_planned: OrderedDict[tuple[object, ...], tuple[tuple[object, ...], Any]] = OrderedDict()


def planned(build: Callable[..., _T], *keys: object) -> _T:
    """``build(*keys)``, found first by the identity of ``keys``: a kernel called again hands its
    evaluation the very same term tuples, and hashing their terms costs more than what most plans
    save. ``build`` is itself cached by value (``lru_cache``), for equal keys met as other objects;
    keys built afresh on every call never match by identity, and are the first to be forgotten."""
    ident = (build, *map(id, keys))
    found = _planned.get(ident)
    if found is not None and all(map(is_, found[0], keys)):
        _planned.move_to_end(ident)
        return found[1]  # type: ignore[no-any-return]
    value = build(*keys)
    if len(_planned) >= _PLANNED_LIMIT:
        _planned.popitem(last=False)
    _planned[ident] = (keys, value)
    return value


@dataclass(frozen=True)
class _Regrouping:
    """A regrouping of :func:`rearrange`: ``values`` itself, a transpose, or a reshape, transpose and
    reshape (when the digit boundaries nest), else a gather by coordinates (``index``)."""

    split: tuple[int, ...] | None = None
    order: tuple[int, ...] | None = None
    shape: tuple[int, ...] | None = None
    index: tuple[IntArray, ...] | None = None

    def apply(self, values: Array) -> Array:
        if self.index is not None:
            return values[self.index]
        moved = values if self.split is None else values.reshape(self.split)
        moved = moved if self.order is None else moved.transpose(self.order)
        return moved if self.shape is None else moved.reshape(self.shape)


@lru_cache(maxsize=1024)
def _rearranging(source: tuple[Digit, ...], target: tuple[Digit, ...]) -> _Regrouping:
    if source == target:
        return _Regrouping()
    if sorted(source, key=_order) == sorted(target, key=_order):
        return _Regrouping(order=tuple(source.index(t) for t in target))
    cuts = _cuts(source, target)
    if cuts is None:
        coords = term_coordinates(target)
        index = tuple((coords[t.axis] // t.stride) % t.count for t in source)
        for part in index:
            part.setflags(write=False)
        return _Regrouping(index=index)
    src = _digits(source, cuts)
    dst = _digits(target, cuts)
    return _Regrouping(tuple(count for _, _, count in src), tuple(src.index(d) for d in dst),
                       tuple(t.count for t in target))


def _order(t: Digit) -> tuple[str, int]:
    return t.axis, t.stride


def distinct(values: Array) -> Array:
    """``values`` cut to length 1 along every dimension it repeats one value along (a broadcast, of
    stride 0): all an element-wise computation needs, broadcast back to the shape afterwards."""
    if 0 not in values.strides:
        return values
    return values[tuple(slice(0, 1) if s == 0 else slice(None) for s in values.strides)]


def coordinate_array(values: Array, terms: Sequence[Digit]) -> tuple[Array, tuple[str, ...]]:
    """``(array, axes)``: one dimension per axis of ``terms``, the element at coordinate ``c`` at
    index ``c`` (each axis as long as its top held coordinate needs).

    Coordinates no term spells (such as the odd ones of ``B / 2``) hold 0; the evaluators never
    read them, since a layout reads the digits it lacks at 0 (docs/runtime.md §3.4). When every
    axis is one term from stride 1 the array is ``values`` itself.
    """
    axes = axes_of(terms)
    if len(axes) == len(terms) and all(t.stride == 1 for t in terms):
        return values, axes
    coords = term_coordinates(terms)
    out = np.zeros(coordinate_extents(terms), dtype=values.dtype)
    out[tuple(coords[a] for a in axes)] = values
    return out, axes


def coordinate_extents(terms: Sequence[Digit]) -> tuple[int, ...]:
    """The shape of :func:`coordinate_array`'s array over ``terms``, without building it."""
    return tuple(min(max(t.top for t in terms if t.axis == a), terms_n(terms, a)) for a in axes_of(terms))


def terms_n(terms: Sequence[Digit], axis: str) -> int:
    """The declared size of ``axis`` among ``terms``."""
    return next(t.n for t in terms if t.axis == axis)
