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

from tcpdsl.algebra import Composite, Digit, Index, Mapping, Operand, Pad, PaddingKind, Slot, StructKey
from tcpdsl.errors import LayoutError

Array = npt.NDArray[Any]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

LAYOUT_STAGE: Final = "layout"
LIVE: Final = -1  # the ``kind`` entry of a live position

# Per axis, what each grid dimension adds to its coordinate: ``(dimension, values)`` pairs.
Terms = dict[str, tuple[tuple[int, IntArray], ...]]


def frozen(array: Array) -> Array:
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
            out[name] = frozen(flat)
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
            terms.setdefault(live.axis, []).append((dim, digit * live.stride))
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
    return Plan(mapping.size, sizes, frozen(flat_kind == LIVE), frozen(flat_kind), grid, frozen_terms)


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
    return Plan(size, sizes, frozen(kind == LIVE), frozen(kind), (size,), terms)


def check_shape(values: Array, axes: tuple[str, ...], mapping: Mapping) -> None:
    """Refuse a logical array whose dimensions do not match ``axes`` and the sizes ``mapping`` declares.

    An axis may be shorter than declared: a tensor holding part of it (an evaluator operand, see
    :class:`~tcpdsl.numerics.chain.Operand`) stops at its top held coordinate.
    """
    check_extents(tuple(values.shape), axes, mapping)


def check_extents(shape: tuple[int, ...], axes: tuple[str, ...], mapping: Mapping) -> None:
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
