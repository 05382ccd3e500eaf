"""Where each logical element sits in a physical buffer: one vectorised plan per mapping.

A mapping's canonical slots are the digits of a position: the buffer reshaped to one dimension per
slot (outermost first) is its *slot grid*. A digit at or past its slot's live count is padding (the
most major padded slot decides the kind), digits shared with an operand read as padding where the
operand holds padding at their summed position, and live digits add ``digit * stride`` to their
axis. Every rule involves a few grid dimensions only, so it is computed on those and broadcast: a
plan of a large mapping costs a few byte-wide passes, and full coordinate arrays are only built
when asked for. A mapping with a composite slot has no digit form; its plan falls back to
``Mapping.cell``.

The tensor classes lay logical tensors out and read results back through this module, and the
evaluators decode positions with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Composite, Digit, Index, Mapping, Operand, Pad, PaddingKind, Slot, StructKey, Term, pairs
from tcpdsl.errors import LayoutError

Array = npt.NDArray[Any]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

LAYOUT_STAGE: Final = "layout"
LIVE: Final = -1  # the ``kind`` entry of a live position

# Per axis, what each grid dimension adds to its coordinate: ``(dimension, values)`` pairs.
Terms = dict[str, tuple[tuple[int, IntArray], ...]]


def _frozen(array: Array) -> Array:
    array.setflags(write=False)
    return array


def _along(values: Array, dim: int, ndim: int) -> Array:
    """``values`` as a broadcastable array varying along grid dimension ``dim`` only."""
    shape = [1] * ndim
    shape[dim] = values.size
    return values.reshape(shape)


def _coordinate(parts: tuple[tuple[int, IntArray], ...], ndim: int) -> IntArray:
    """An axis coordinate over the grid, broadcast only along the dimensions that add to it."""
    total: IntArray = np.zeros([1] * ndim, dtype=np.int64)
    for dim, values in parts:
        total = total + _along(values, dim, ndim)
    return total


@dataclass(frozen=True, eq=False)
class Plan:
    """Every position of a mapping, decoded.

    ``live[i]`` says whether position ``i`` holds a logical element; ``kind[i]`` is its padding
    kind (``LIVE`` when live); ``coords[axis][i]`` is its coordinate (0 on padding), built on first
    use from ``terms``: what each dimension of the slot ``grid`` adds to each axis.
    """

    size: int
    sizes: dict[str, int]
    live: BoolArray
    kind: npt.NDArray[np.int8]
    grid: tuple[int, ...]
    terms: Terms

    @cached_property
    def coords(self) -> dict[str, IntArray]:
        out: dict[str, IntArray] = {}
        for name in self.terms:
            full = np.zeros(self.grid, dtype=np.int64)
            full += _coordinate(self.terms[name], len(self.grid))
            flat = full.reshape(-1)
            flat[~self.live] = 0
            out[name] = _frozen(flat)
        return out

    def padding(self, *kinds: PaddingKind) -> BoolArray:
        """The positions padded with one of ``kinds``."""
        out = np.zeros(self.size, dtype=np.bool_)
        for kind in kinds:
            out |= self.kind == int(kind)
        return out

    def held(self, axes: tuple[str, ...]) -> BoolArray:
        """Which logical cells over ``axes`` some live position holds (shape: the axes' sizes).

        Only the grid dimensions carrying ``axes`` decide the index, so liveness is first reduced
        over the others; a large layout never builds a full index array.
        """
        shape = tuple(self.sizes[a] for a in axes)
        used = {dim for a in axes for dim, _ in self.terms.get(a, ())}
        others = tuple(d for d in range(len(self.grid)) if d not in used)
        live = self.live.reshape(self.grid).any(axis=others, keepdims=True)
        index: IntArray = np.zeros(live.shape, dtype=np.int64)
        stride = 1
        for name, n in reversed(list(zip(axes, shape, strict=True))):
            index = index + _coordinate(self.terms.get(name, ()), len(self.grid)) * stride
            stride *= n
        out = np.zeros(stride, dtype=np.bool_)
        out[np.broadcast_to(index, live.shape)[live]] = True
        return out.reshape(shape)

    def coverage(self, axes: tuple[str, ...]) -> bool:
        """Whether every logical index over ``axes`` has at least one live position."""
        return bool(self.held(axes).all())


# Plans and routes of larger mappings are rebuilt when asked for rather than cached: only physical
# views (.physical(), the simulator, pictures, rare irregular layouts) need them, and a cache of
# 128 of them would pin gigabytes.
CACHED_CELLS: Final = 1 << 22


def plan(mapping: Mapping) -> Plan:
    """The decoded positions of ``mapping``, cached by structure: mappings equal in normal form
    may still name different size-1 axes, so normal-form equality is not enough."""
    if mapping.size > CACHED_CELLS:
        return _build_plan(mapping)
    return _plan_cached(StructKey(mapping))


@lru_cache(maxsize=128)
def _plan_cached(key: StructKey) -> Plan:
    return _build_plan(key.node)


def _build_plan(mapping: Mapping) -> Plan:
    slots = mapping.slots()
    if any(isinstance(slot.live, Composite) for slot in slots):
        return _plan_by_cells(mapping)
    return _plan_from_slots(mapping, slots)


def _plan_from_slots(mapping: Mapping, slots: tuple[Slot, ...]) -> Plan:
    grid = tuple(slot.extent for slot in reversed(slots))
    ndim = len(grid)
    dims = [ndim - 1 - i for i in range(len(slots))]  # grid dimension of each slot (innermost first)
    sizes = mapping.axis_sizes()
    terms: dict[str, list[tuple[int, IntArray]]] = {name: [] for name in sizes}
    digits = [np.arange(slot.extent, dtype=np.int64) for slot in slots]
    # Padding events as (rank, mask, kind), applied from the least major so that the winner writes
    # last: a slot's own padding, or for digits shared with an operand, what the operand holds at
    # their summed position, ranked with its most major digit.
    events: list[tuple[tuple[int, int], Array, Array | int]] = []
    shared: dict[Operand, tuple[int, Array]] = {}
    for index, (slot, dim, digit) in enumerate(zip(slots, dims, digits, strict=True)):
        live = slot.live
        if isinstance(live, Digit):
            terms.setdefault(live.sym, []).append((dim, digit * live.stride))
        if slot.shared is not None:
            _, position = shared.get(slot.shared.operand, (index, np.zeros([1] * ndim, dtype=np.int64)))
            shared[slot.shared.operand] = (index, position + _along(digit * slot.shared.stride, dim, ndim))
        elif slot.padded:
            events.append(((index, 1), _along(digit >= slot.count, dim, ndim), int(slot.kind)))
    for operand, (index, position) in shared.items():
        held = _operand_kinds(operand.slots, position)
        events.append(((index, 0), held != LIVE, held))
    kind = np.full(grid, LIVE, dtype=np.int8)
    for _, hit, padding in sorted(events, key=lambda event: event[0]):
        kind = np.where(hit, np.int8(padding) if isinstance(padding, int) else padding, kind)
    frozen_terms: Terms = {name: tuple(parts) for name, parts in terms.items()}
    for name, parts in frozen_terms.items():
        overshoot = _coordinate(parts, ndim) >= sizes.get(name, 1)
        if overshoot.any():
            kind = np.where(overshoot & (kind == LIVE), np.int8(PaddingKind.TOP), kind)
    flat_kind = kind.reshape(-1)
    return Plan(mapping.size, sizes, _frozen(flat_kind == LIVE), _frozen(flat_kind), grid, frozen_terms)


def _operand_kinds(slots: tuple[Slot, ...], position: IntArray) -> npt.NDArray[np.int8]:
    """The padding kind (or ``LIVE``) a flat operand holds at each ``position``: its most major padded slot wins."""
    held = np.full(position.shape, LIVE, dtype=np.int8)
    below = 1
    for slot in slots:
        value = position // below % slot.extent
        held = np.where(value >= slot.count, np.int8(slot.kind), held)
        below *= slot.extent
    return held


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
    terms: Terms = {name: ((0, values),) for name, values in coords.items()}
    return Plan(size, sizes, _frozen(kind == LIVE), _frozen(kind), (size,), terms)


def check_shape(values: Array, axes: tuple[str, ...], mapping: Mapping) -> None:
    """Refuse a logical array whose dimensions do not match ``axes`` and the sizes ``mapping`` declares.

    An axis may be shorter than declared: a tensor holding part of it (an evaluator operand, see
    :class:`~tcpdsl.tensors.chain.Operand`) stops at its top held coordinate.
    """
    _check_extents(tuple(values.shape), axes, mapping)


def _check_extents(shape: tuple[int, ...], axes: tuple[str, ...], mapping: Mapping) -> None:
    if len(shape) != len(axes):
        raise LayoutError(LAYOUT_STAGE, "ShapeMismatch",
                          f"an array of {len(shape)} dimensions cannot carry the {len(axes)} axes {' '.join(axes)}")
    sizes = mapping.axis_sizes()
    for name, extent in zip(axes, shape, strict=True):
        declared = sizes.get(name)
        if declared is not None and extent > declared:
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


def _whole(axes: tuple[str, ...], shape: tuple[int, ...]) -> tuple[Term, ...]:
    """An array over axis coordinates (index ``c`` holds coordinate ``c``) as terms from stride 1."""
    return tuple(Term(name, n, 1, n) for name, n in zip(axes, shape, strict=True))


def _routes(mapping: Mapping, terms: tuple[Term, ...]) -> tuple[IntArray, IntArray]:
    """``(live positions, flat index of each in an array over terms)`` for moving data between the views."""
    if mapping.size > CACHED_CELLS:
        return _build_routes(mapping, terms)
    return _routes_cached(mapping, terms)


@lru_cache(maxsize=64)
def _routes_cached(mapping: Mapping, terms: tuple[Term, ...]) -> tuple[IntArray, IntArray]:
    return _build_routes(mapping, terms)


def _build_routes(mapping: Mapping, terms: tuple[Term, ...]) -> tuple[IntArray, IntArray]:
    p = plan(mapping)
    positions = np.flatnonzero(p.live)
    if not terms:
        return _frozen(positions), _frozen(np.zeros(positions.size, dtype=np.int64))
    coords = logical_index(p, tuple(t.axis for t in terms), p.live)
    index = tuple((c // t.stride) % t.count for c, t in zip(coords, terms, strict=True))
    flat = np.ravel_multi_index(index, tuple(t.count for t in terms)).astype(np.int64)
    return _frozen(positions), _frozen(flat)


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
def _view(mapping: Mapping, terms: tuple[Term, ...]) -> _View | None:
    """The view of ``mapping`` over an array with one dimension per term, or None when the
    mapping's digits of a term do not chain from its stride to its top (shared or composite
    slots, part of a term)."""
    slots = tuple(reversed(mapping.slots()))
    digits: dict[str, list[tuple[int, int, int]]] = {t.axis: [] for t in terms}
    for index, slot in enumerate(slots):
        live = slot.live
        if isinstance(live, Composite) or slot.shared is not None:
            return None
        if isinstance(live, Digit) and live.sym in digits:
            digits[live.sym].append((live.stride, live.count, index))
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
    terms = _whole(axes, array.shape)
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


def to_terms(physical: npt.ArrayLike, mapping: Mapping, terms: tuple[Term, ...]) -> Array:
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
    _check_extents(tuple(shape), axes, mapping)
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
