"""Arrays whose dimensions are terms (:class:`~tcpdsl.algebra.terms.Digit`): regrouping and coordinates.

A logical tensor stores one array dimension per term it holds. Two term lists that hold the same
digits of every axis describe the same elements in another grouping: :func:`rearrange` moves the
data from one to the other, by reshape and transpose when the digit boundaries nest. The
evaluators index operands by axis coordinate instead: :func:`coordinate_array` gives one dimension
per axis, where the element at coordinate ``c`` sits at index ``c``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

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
    if list(source) == list(target):
        return values
    if sorted(source, key=_order) == sorted(target, key=_order):
        return values.transpose([list(source).index(t) for t in target])
    cuts = _cuts(source, target)
    if cuts is None:
        coords = term_coordinates(target)
        index = tuple((coords[t.axis] // t.stride) % t.count for t in source)
        return values[index]
    src = _digits(source, cuts)
    dst = _digits(target, cuts)
    split = values.reshape([count for _, _, count in src])
    moved = split.transpose([src.index(d) for d in dst])
    return moved.reshape([t.count for t in target])


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
