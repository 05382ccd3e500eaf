"""Vectorised physical layout through a mapping.

A :class:`Plan` decodes every position of a mapping at once from its normalized slots: the digit
of each slot is ``(position // cumulative stride) % extent``, a digit at or past the slot's live
count is padding (the most major padded slot decides the kind), ragged digits read as padding once
their summed value reaches the rag limit, and live digits add ``digit * stride`` to their axis.
A mapping with a composite slot has no digit form; its plan falls back to ``Mapping.cell``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra.cells import Index, Pad, PaddingKind
from tcpdsl.algebra.nodes import Mapping, pairs
from tcpdsl.algebra.slots import Composite, Digit, Slot
from tcpdsl.errors import LayoutError

Array = npt.NDArray[Any]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

LAYOUT_STAGE: Final = "layout"
LIVE: Final = -1  # the ``kind`` entry of a live position


@dataclass(frozen=True)
class Plan:
    """Every position of a mapping, decoded.

    ``live[i]`` says whether position ``i`` holds a logical element; ``kind[i]`` is its padding
    kind (``LIVE`` when live); ``coords[axis][i]`` is its coordinate (0 on padding).
    """

    size: int
    live: BoolArray
    kind: npt.NDArray[np.int8]
    coords: dict[str, IntArray]
    sizes: dict[str, int]

    def padding(self, *kinds: PaddingKind) -> BoolArray:
        """The positions padded with one of ``kinds``."""
        out = np.zeros(self.size, dtype=np.bool_)
        for kind in kinds:
            out |= self.kind == int(kind)
        return out


def plan(mapping: Mapping) -> Plan:
    """The decoded positions of ``mapping`` (cached: equal mappings have equal cells)."""
    return _plan_cached(mapping)


@lru_cache(maxsize=128)
def _plan_cached(mapping: Mapping) -> Plan:
    slots = mapping.slots()
    if any(isinstance(slot.live, Composite) for slot in slots):
        return _plan_by_cells(mapping)
    return _plan_from_slots(mapping, slots)


def _frozen(array: Array) -> Array:
    array.setflags(write=False)
    return array


def _plan_from_slots(mapping: Mapping, slots: tuple[Slot, ...]) -> Plan:
    size = mapping.size
    position = np.arange(size, dtype=np.int64)
    digits: list[IntArray] = []
    cumulative = 1
    for slot in slots:
        digits.append((position // cumulative) % slot.extent)
        cumulative *= slot.extent
    kind = np.full(size, LIVE, dtype=np.int8)
    # Walk innermost to outermost so that a more major padded slot overwrites the kind.
    for slot, digit in zip(slots, digits, strict=True):
        if slot.padded:
            kind[digit >= slot.count] = int(slot.kind)
    sizes = mapping.axis_sizes()
    coords: dict[str, IntArray] = {}
    rag_kind = np.full(size, LIVE, dtype=np.int8)
    rag_rank = np.full(size, -1, dtype=np.int64)
    for index, (slot, digit) in enumerate(zip(slots, digits, strict=True)):
        live = slot.live
        if not isinstance(live, Digit):
            continue
        coords[live.sym] = coords.get(live.sym, np.zeros(size, dtype=np.int64)) + digit * live.stride
        if live.rag is None:
            continue
        rag = live.rag
        value = np.zeros(size, dtype=np.int64)
        rank = index
        for other_index, (other, other_digit) in enumerate(zip(slots, digits, strict=True)):
            o = other.live
            if (isinstance(o, Digit) and o.sym == live.sym and rag.base <= o.stride < rag.base * rag.limit
                    and o.stride % rag.base == 0):
                value += other_digit * (o.stride // rag.base)
                rank = max(rank, other_index)
        hit = (value >= rag.limit) & (rank > rag_rank)
        rag_kind[hit] = int(rag.kind)
        rag_rank[hit] = rank
    plain_live = kind == LIVE
    ragged = plain_live & (rag_kind != LIVE)
    kind[ragged] = rag_kind[ragged]
    live_mask = kind == LIVE
    for name, values in coords.items():
        overshoot = live_mask & (values >= sizes.get(name, 1))
        kind[overshoot] = int(PaddingKind.TOP)
        live_mask &= ~overshoot
    for values in coords.values():
        values[~live_mask] = 0
        _frozen(values)
    return Plan(size, _frozen(live_mask), _frozen(kind), coords, sizes)


def _plan_by_cells(mapping: Mapping) -> Plan:
    size = mapping.size
    sizes = mapping.axis_sizes()
    kind = np.full(size, LIVE, dtype=np.int8)
    coords = {name: np.zeros(size, dtype=np.int64) for name in sizes}
    for i in range(size):
        cell = mapping.cell(i)
        if isinstance(cell, Index):
            for name, value in cell.coords.items():
                coords[name][i] = value
        elif isinstance(cell, Pad):
            kind[i] = int(cell.kind)
        else:
            kind[i] = int(PaddingKind.BOTTOM)
    for values in coords.values():
        _frozen(values)
    return Plan(size, _frozen(kind == LIVE), _frozen(kind), coords, sizes)


def check_shape(values: Array, axes: tuple[str, ...], mapping: Mapping) -> None:
    """Refuse a logical array whose dimensions do not match ``axes`` and the sizes ``mapping`` declares."""
    if values.ndim != len(axes):
        raise LayoutError(LAYOUT_STAGE, "ShapeMismatch",
                          f"an array of {values.ndim} dimensions cannot carry the {len(axes)} axes {' '.join(axes)}")
    sizes = mapping.axis_sizes()
    for name, extent in zip(axes, values.shape, strict=True):
        declared = sizes.get(name)
        if declared is not None and declared != extent:
            raise LayoutError(LAYOUT_STAGE, "ShapeMismatch",
                              f"axis {name} has {extent} elements but mapping {mapping} declares {name} = {declared}",
                              hint=f"give the logical array {declared} elements along {name}")


def logical_index(p: Plan, axes: tuple[str, ...], select: BoolArray | None = None) -> tuple[IntArray, ...]:
    """The logical index of every position (or of the ``select``-ed ones); absent axes read 0."""
    count = p.size if select is None else int(np.count_nonzero(select))
    zero = np.zeros(count, dtype=np.int64)
    out: list[IntArray] = []
    for name in axes:
        values = p.coords.get(name)
        if values is None:
            out.append(zero)
        else:
            out.append(values if select is None else values[select])
    return tuple(out)


@lru_cache(maxsize=64)
def _routes(mapping: Mapping, axes: tuple[str, ...], shape: tuple[int, ...]) -> tuple[IntArray, IntArray]:
    """``(live positions, flat logical index of each)`` for moving data between the two views."""
    p = plan(mapping)
    positions = np.flatnonzero(p.live)
    if not axes:
        return _frozen(positions), _frozen(np.zeros(positions.size, dtype=np.int64))
    flat = np.ravel_multi_index(logical_index(p, axes, p.live), shape).astype(np.int64)
    return _frozen(positions), _frozen(flat)


@dataclass(frozen=True)
class _View:
    """How a regular mapping is a transposed, padded view of a logical array.

    The physical buffer reshaped to ``extents`` (outermost slot first), cut to ``live``, and read
    at ``take`` (digit 0 of slots no logical axis needs) is the logical array split into its
    digits, permuted by ``perm``.
    """

    extents: tuple[int, ...]
    live: tuple[slice, ...]
    take: tuple[slice | int, ...]
    counts: tuple[int, ...]
    digit_shape: tuple[int, ...]
    perm: tuple[int, ...]


@lru_cache(maxsize=128)
def _view(mapping: Mapping, axes: tuple[str, ...], shape: tuple[int, ...]) -> _View | None:
    """The view of ``mapping`` over a logical array, or None when the mapping is not a plain
    transpose of whole axes (ragged or composite slots, partial axes, axes it does not name)."""
    slots = tuple(reversed(mapping.slots()))
    digits: dict[str, list[tuple[int, int, int]]] = {name: [] for name in axes}
    for index, slot in enumerate(slots):
        live = slot.live
        if isinstance(live, Composite) or (isinstance(live, Digit) and live.rag is not None):
            return None
        if isinstance(live, Digit) and live.sym in digits:
            digits[live.sym].append((live.stride, live.count, index))
    order: list[int] = []
    digit_shape: list[int] = []
    for name, n in zip(axes, shape, strict=True):
        chain = sorted(digits[name])
        expected = 1
        for stride, count, _ in chain:
            if stride != expected:
                return None
            expected *= count
        if expected != n:
            return None
        for _, count, index in reversed(chain):
            order.append(index)
            digit_shape.append(count)
    kept = sorted(order)
    return _View(
        extents=tuple(slot.extent for slot in slots),
        live=tuple(slice(0, slot.count) for slot in slots),
        take=tuple(slice(None) if i in kept else 0 for i in range(len(slots))),
        counts=tuple(slot.count for slot in slots),
        digit_shape=tuple(digit_shape),
        perm=tuple(kept.index(i) for i in order),
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
    out = np.empty(mapping.size, dtype=array.dtype)
    out[...] = fill
    if zero_fill is not None:
        out[plan(mapping).kind == int(PaddingKind.ZERO)] = zero_fill
    view = _view(mapping, axes, array.shape)
    if view is None:
        positions, flat = _routes(mapping, axes, array.shape)
        out[positions] = array.reshape(-1)[flat]
        return out
    inverse = np.argsort(view.perm)
    block = array.reshape(view.digit_shape).transpose(inverse)
    block = block.reshape([c if isinstance(t, slice) else 1 for c, t in zip(view.counts, view.take, strict=True)])
    out.reshape(view.extents)[view.live] = np.broadcast_to(block, view.counts)
    return out


def to_logical(physical: npt.ArrayLike, mapping: Mapping, axes: tuple[str, ...], shape: tuple[int, ...]) -> Array:
    """The logical array of ``shape`` over ``axes`` read back from live cells of ``physical``.

    Logical elements no live cell holds read 0; where several live cells hold one element (a
    broadcast), the last one wins.
    """
    flat_physical = np.asarray(physical).reshape(-1)
    if flat_physical.size != mapping.size:
        raise LayoutError(LAYOUT_STAGE, "ShapeMismatch",
                          f"a physical buffer of {flat_physical.size} cells cannot be read through {mapping} "
                          f"({mapping.size} cells)")
    out = np.zeros(shape, dtype=flat_physical.dtype)
    check_shape(out, axes, mapping)
    view = _view(mapping, axes, tuple(shape))
    if view is None:
        positions, flat = _routes(mapping, axes, tuple(shape))
        out.reshape(-1)[flat] = flat_physical[positions]
        return out
    block = flat_physical.reshape(view.extents)[view.live][view.take]
    # Assigning into a transposed view of the destination walks it in memory order, which is
    # about twice as fast as materialising the transposed source.
    out.reshape(view.digit_shape).transpose(np.argsort(view.perm))[...] = block
    return out


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
    out[...] = fill
    if zero_fill is not None:
        out[:, body.kind == int(PaddingKind.ZERO)] = zero_fill
    live = body.live
    index = []
    for name in axes:
        coord = np.zeros((rows.size, int(np.count_nonzero(live))), dtype=np.int64)
        if name in body.coords:
            coord += body.coords[name][live][None, :]
        if name in head.coords:
            coord += head.coords[name][rows][:, None]
        index.append(coord)
    out[:, live] = array[tuple(index)] if axes else array
    undefined = body.padding(PaddingKind.TOP, PaddingKind.BOTTOM)
    return out, rows, np.broadcast_to(undefined, out.shape)
