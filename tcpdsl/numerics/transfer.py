"""Moving data between logical arrays and physical buffers: the layout of a source, the read of a result.

A regular mapping is a transposed, padded view of an array over its terms, so data moves by a
reshape and a transpose; any other mapping moves along routes (each live position and its index
in the logical array) built from its :mod:`~tcpdsl.numerics.placement` plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Composite, Digit, Mapping, PaddingKind, pairs
from tcpdsl.errors import LayoutError
from tcpdsl.numerics.placement import (
    CACHED_CELLS,
    LAYOUT_STAGE,
    Array,
    BoolArray,
    IntArray,
    check_extents,
    check_shape,
    frozen,
    logical_index,
    plan,
)

def _whole(axes: tuple[str, ...], shape: tuple[int, ...]) -> tuple[Digit, ...]:
    """An array over axis coordinates (index ``c`` holds coordinate ``c``) as terms from stride 1."""
    return tuple(Digit(name, n, 1, n) for name, n in zip(axes, shape, strict=True))


def _routes(mapping: Mapping, terms: tuple[Digit, ...]) -> tuple[IntArray, IntArray]:
    """``(live positions, flat index of each in an array over terms)`` for moving data between the views."""
    if mapping.size > CACHED_CELLS:
        return _build_routes(mapping, terms)
    return _routes_cached(mapping, terms)


@lru_cache(maxsize=64)
def _routes_cached(mapping: Mapping, terms: tuple[Digit, ...]) -> tuple[IntArray, IntArray]:
    return _build_routes(mapping, terms)


def _build_routes(mapping: Mapping, terms: tuple[Digit, ...]) -> tuple[IntArray, IntArray]:
    p = plan(mapping)
    positions = np.flatnonzero(p.live)
    if not terms:
        return frozen(positions), frozen(np.zeros(positions.size, dtype=np.int64))
    coords = logical_index(p, tuple(t.axis for t in terms), p.live)
    index = tuple((c // t.stride) % t.count for c, t in zip(coords, terms, strict=True))
    flat = np.ravel_multi_index(index, tuple(t.count for t in terms)).astype(np.int64)
    return frozen(positions), frozen(flat)


@dataclass(frozen=True)
class _View:
    """How a regular mapping is a transposed, padded view of an array over terms.

    The physical buffer reshaped to ``extents`` (outermost slot first), cut to ``live``, and read
    at ``take`` (digit 0 of slots no term needs) is the array split into its digits, permuted by
    ``perm``.
    """

    extents: tuple[int, ...]
    live: tuple[slice, ...]
    take: tuple[slice | int, ...]
    counts: tuple[int, ...]
    digit_shape: tuple[int, ...]
    perm: tuple[int, ...]
    inverse: tuple[int, ...]
    padded: bool  # some slot has padding: the buffer must be filled before the live cells are written


@lru_cache(maxsize=128)
def _view(mapping: Mapping, terms: tuple[Digit, ...]) -> _View | None:
    """The view of ``mapping`` over an array with one dimension per term, or None when the
    mapping's digits of a term do not chain from its stride to its top (shared or composite
    slots, part of a term)."""
    slots = tuple(reversed(mapping.slots()))
    digits: dict[str, list[tuple[int, int, int]]] = {t.axis: [] for t in terms}
    for index, slot in enumerate(slots):
        live = slot.live
        if isinstance(live, Composite) or slot.shared is not None:
            return None
        if isinstance(live, Digit) and live.axis in digits:
            digits[live.axis].append((live.stride, live.count, index))
    order: list[int] = []
    digit_shape: list[int] = []
    for term in terms:
        chain = sorted(d for d in digits[term.axis] if term.stride <= d[0] < term.top)
        expected = term.stride
        for stride, count, _ in chain:
            if stride != expected:
                return None
            expected *= count
        if expected != term.top:
            return None
        for _, count, index in reversed(chain):
            order.append(index)
            digit_shape.append(count)
    kept = sorted(order)
    perm = tuple(kept.index(i) for i in order)
    return _View(
        extents=tuple(slot.extent for slot in slots),
        live=tuple(slice(0, slot.count) for slot in slots),
        take=tuple(slice(None) if i in kept else 0 for i in range(len(slots))),
        counts=tuple(slot.count for slot in slots),
        digit_shape=tuple(digit_shape),
        perm=perm,
        inverse=tuple(int(i) for i in np.argsort(perm)),
        padded=any(slot.padded for slot in slots),
    )


def to_physical(values: npt.ArrayLike, axes: tuple[str, ...], mapping: Mapping, fill: Any = 0,
                zero_fill: Any | None = None) -> Array:
    """``values`` (logical, one dimension per name in ``axes``) laid out through ``mapping``.

    The result is 1-D over ``mapping.size`` cells in the dtype of ``values``: live cells take the
    logical value (axes the mapping does not name are read at 0, axes only the mapping names
    replicate), padding takes ``fill``, or ``zero_fill`` on Zero padding when it is given.
    """
    array = np.asarray(values)
    check_shape(array, axes, mapping)
    return _lay(array, _whole(axes, array.shape), mapping, fill, zero_fill)


def holds_only(mapping: Mapping, terms: tuple[Digit, ...]) -> bool:
    """Whether ``mapping`` is a view over ``terms`` whose every digit of their axes is one of theirs: then
    :func:`terms_to_physical` lays the array out by slots, and no live cell holds an element beyond them."""
    if _view(mapping, terms) is None:
        return False
    axes = {t.axis for t in terms}
    for slot in mapping.slots():
        live = slot.live
        if isinstance(live, Digit) and live.axis in axes and not any(
                t.axis == live.axis and t.stride <= live.stride < t.top for t in terms):
            return False
    return True


def terms_to_physical(values: npt.ArrayLike, terms: tuple[Digit, ...], mapping: Mapping, fill: Any = 0,
                      zero_fill: Any | None = None) -> Array:
    """Like :func:`to_physical`, for an array with one dimension per term (``holds_only(mapping, terms)``)."""
    return _lay(np.asarray(values), terms, mapping, fill, zero_fill)


def _lay(array: Array, terms: tuple[Digit, ...], mapping: Mapping, fill: Any, zero_fill: Any | None) -> Array:
    out = np.empty(mapping.size, dtype=array.dtype)
    view = _view(mapping, terms)
    if view is None or view.padded:
        out[...] = fill
        if zero_fill is not None:
            out[plan(mapping).kind == int(PaddingKind.ZERO)] = zero_fill
    if view is None:
        positions, flat = _routes(mapping, terms)
        out[positions] = array.reshape(-1)[flat]
        return out
    block = array.reshape(view.digit_shape).transpose(view.inverse)
    block = block.reshape([c if isinstance(t, slice) else 1 for c, t in zip(view.counts, view.take, strict=True)])
    out.reshape(view.extents)[view.live] = np.broadcast_to(block, view.counts)
    return out


def to_terms(physical: npt.ArrayLike, mapping: Mapping, terms: tuple[Digit, ...]) -> Array:
    """The array over ``terms`` (one dimension per term) read back from the live cells of ``physical``.

    Elements no live cell holds read 0; where several live cells hold one element (a broadcast),
    the last one wins.
    """
    flat_physical = np.asarray(physical).reshape(-1)
    if flat_physical.size != mapping.size:
        raise LayoutError(LAYOUT_STAGE, "ShapeMismatch",
                          f"a physical buffer of {flat_physical.size} cells cannot be read through {mapping} "
                          f"({mapping.size} cells)")
    out = np.empty(tuple(t.count for t in terms), dtype=flat_physical.dtype)
    view = _view(mapping, terms)
    if view is None:
        out[...] = 0
        positions, flat = _routes(mapping, terms)
        out.reshape(-1)[flat] = flat_physical[positions]
        return out
    # A view covers every element, so nothing is left unwritten.
    block = flat_physical.reshape(view.extents)[view.live][view.take]
    # Assigning into a transposed view of the destination walks it in memory order, which is
    # about twice as fast as materialising the transposed source.
    out.reshape(view.digit_shape).transpose(view.inverse)[...] = block
    return out


def to_logical(physical: npt.ArrayLike, mapping: Mapping, axes: tuple[str, ...],
               shape: tuple[int, ...] | None = None) -> Array:
    """The logical array over ``axes`` (of ``shape``, by default the sizes ``mapping`` declares)
    read back from the live cells of ``physical`` (see :func:`to_terms`)."""
    if shape is None:
        sizes = mapping.axis_sizes()
        shape = tuple(sizes[a] for a in axes)
    check_extents(tuple(shape), axes, mapping)
    return to_terms(physical, mapping, _whole(axes, tuple(shape)))


def to_physical_rows(values: npt.ArrayLike, axes: tuple[str, ...], prefix: Mapping, inner: Mapping,
                     fill: Any = 0, zero_fill: Any | None = None) -> tuple[Array, IntArray, BoolArray]:
    """``values`` laid out through ``[prefix, inner]``, only over the live positions of ``prefix``.

    Returns ``(buffer, rows, undefined)``: ``buffer[r]`` is the ``inner`` part at prefix position
    ``rows[r]`` and ``undefined`` marks its Top and Bottom padding. The coordinates of the two
    factors add (an axis may be split across them); a cell is live when it is live in ``inner``.
    """
    array = np.asarray(values)
    check_shape(array, axes, pairs([prefix, inner]))
    head, body = plan(prefix), plan(inner)
    rows = np.flatnonzero(head.live)
    out = np.empty((rows.size, body.size), dtype=array.dtype)
    live = body.live
    everywhere = bool(live.all())
    if not everywhere:
        out[...] = fill
        if zero_fill is not None:
            out[:, body.kind == int(PaddingKind.ZERO)] = zero_fill
    # One flat index into the array per cell: the flat offsets of the two factors add, since
    # their coordinates do (the array is C-ordered over ``axes``).
    head_flat = np.zeros(rows.size, dtype=np.int64)
    body_flat = np.zeros(int(np.count_nonzero(live)), dtype=np.int64)
    stride = 1
    for name, extent in reversed(list(zip(axes, array.shape, strict=True))):
        low = body.coords[name][live] if name in body.coords else None
        high = head.coords[name][rows] if name in head.coords else None
        top = (0 if low is None else int(low.max(initial=0))) + (0 if high is None else int(high.max(initial=0)))
        if top >= extent:
            raise LayoutError(LAYOUT_STAGE, "ShapeMismatch",
                              f"axis {name} has {extent} elements but the layout reaches coordinate {top}")
        if low is not None:
            body_flat += low * stride
        if high is not None:
            head_flat += high * stride
        stride *= extent
    gathered = np.take(np.ascontiguousarray(array).reshape(-1), head_flat[:, None] + body_flat[None, :])
    if everywhere:
        out[...] = gathered
    else:
        out[:, live] = gathered
    undefined = body.padding(PaddingKind.TOP, PaddingKind.BOTTOM)
    return out, rows, np.broadcast_to(undefined, out.shape)
