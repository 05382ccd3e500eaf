"""A window's logical values read straight from its tensor's, and a write into it set straight into them, when
the window is a box of whole slots (docs/runtime.md §4, "Windows read by slots").

A window (a tile, a padded view) reads cell ``p + offset`` of each slice's Element for its cell ``p``.
When both mappings are regular views over their terms, of one size, both are cut into the same pieces
(at every slot boundary of either and at the slice's end: a live digit cut into digits of its axis, or
into itself and padding above it). The offset is then a start in each piece; if no digit runs past the
tensor's live count, every live cell of the window reads a live cell of the tensor piece by piece, and
the window's values are a slice of the tensor's digit array; a write into it sets that slice of a copy,
and what was kept widened from the tensor before is carried to the copy with that slice widened again.
That costs the window's size (and a write the tensor's copy), where laying the tensor out costs the
tensor's several times over.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Bcast, Digit, Mapping, Slots, StructKey, slot_strides
from tcpdsl.numerics.kept import carry, freeze
from tcpdsl.numerics.transfer import _view

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class _Box:
    """How a window reads the tensor's digit array: ``index`` per kept piece of the tensor, then ``spread``
    (a new axis per piece that only the window keeps, to ``counts``), then into the window's terms."""

    tensor_digits: tuple[int, ...]
    tensor_inverse: tuple[int, ...]
    index: tuple[slice | int, ...]
    spread: tuple[int, ...]  # where a piece only the window keeps takes a new axis, in the sliced array
    counts: tuple[int, ...]  # the window's kept pieces' live counts, outermost first
    window_digits: tuple[int, ...]
    window_inverse: tuple[int, ...]
    shape: tuple[int, ...]  # one dimension per window term
    # Each live cell of the window is one of the tensor's, and each element of the tensor it covers is held
    # by that cell alone (no replicas on either side): a write is then a slice assignment.
    one_to_one: bool


def box_values(values: Array, terms: tuple[Digit, ...], mapping: Mapping, element: int, offset: int,
               window: Mapping, window_terms: tuple[Digit, ...]) -> Array | None:
    """The logical values over ``window_terms`` of the window over ``window`` whose Element cell ``p`` is cell
    ``p + offset`` of ``mapping``'s (``element`` cells per slice), whose values over ``terms`` are ``values``;
    None when the window is not a box of whole slots (then it is read through the laid-out tensor)."""
    box = _found_box(mapping, terms, element, offset, window, window_terms)
    if box is None:
        return None
    digits = values.reshape(box.tensor_digits).transpose(box.tensor_inverse)[box.index]
    if box.spread:
        digits = np.broadcast_to(np.expand_dims(digits, box.spread), box.counts)
    out = np.empty(box.shape, dtype=values.dtype)
    out.reshape(box.window_digits).transpose(box.window_inverse)[...] = digits
    return out


def box_written(values: Array, terms: tuple[Digit, ...], mapping: Mapping, new: Array, new_terms: tuple[Digit, ...],
                window: Mapping, element: int, offset: int) -> Array | None:
    """The values over ``terms`` of the tensor (``values`` laid out on ``mapping``) after ``new`` (over
    ``new_terms``, laid out on ``window``) is written into its window ``offset`` cells in: a copy of
    ``values`` with the box's slice set. None when the window is no box, or a cell of either side has
    replicas (then the write is the planned scatter)."""
    box = _found_box(mapping, terms, element, offset, window, new_terms)
    if box is None or not box.one_to_one:
        return None

    def part(array: Array) -> Array:
        # On a contiguous array the reshape only splits dimensions: a view that writes into it.
        return array.reshape(box.tensor_digits).transpose(box.tensor_inverse)[box.index]

    # One to one, a window as large as the tensor writes every cell: nothing of the old values is read.
    whole = new.size == values.size
    out = np.empty(values.shape, values.dtype) if whole else np.array(values, copy=True)
    part(out)[...] = new.astype(out.dtype, copy=False).reshape(box.window_digits).transpose(box.window_inverse)
    # Frozen: the written tensor's values are kept as they are, and what a contraction widened from the values
    # before the write is carried over with the box's cells redone (a KV cache widened a row per step).
    freeze(out)
    if not whole:
        carry(values, out, part)
    return out


_BOXES_LIMIT: Final = 256
# (ids of the two mappings, element, offset) -> the mappings, both term tuples, and their box.
_boxes_by_identity: dict[tuple[int, int, int, int], tuple[Mapping, Mapping, tuple[Digit, ...], tuple[Digit, ...],
                                                          _Box | None]] = {}


def _found_box(mapping: Mapping, terms: tuple[Digit, ...], element: int, offset: int, window: Mapping,
               window_terms: tuple[Digit, ...]) -> _Box | None:
    """:func:`_box`, found first by the identity of the mappings: a kernel called again reads and writes its
    windows through the very same mapping objects, and structural keys cost more than the slice itself. The
    terms are compared by value, since a stream computed afresh holds equal terms in a tuple of its own."""
    ident = (id(mapping), id(window), element, offset)
    seen = _boxes_by_identity.get(ident)
    # The entry keeps its mappings, so no other mapping takes their ids while it is remembered.
    if seen is not None and seen[0] is mapping and seen[1] is window and seen[2] == terms and seen[3] == window_terms:
        return seen[4]
    box = _box(StructKey(mapping), terms, element, offset, StructKey(window), window_terms)
    if len(_boxes_by_identity) >= _BOXES_LIMIT:
        _boxes_by_identity.clear()
    _boxes_by_identity[ident] = (mapping, window, terms, window_terms, box)
    return box


def _box(tensor: StructKey, terms: tuple[Digit, ...], element: int, offset: int, window: StructKey,
         window_terms: tuple[Digit, ...]) -> _Box | None:
    """The box, or None: a mapping that is no view over its terms, a window of another size, slots that do not
    pair up, an offset past the slice, a digit the tensor holds apart from its terms, or a window cell past
    the tensor's live cells."""
    sides = _sides(tensor, terms, element, window, window_terms) if 0 <= offset < element else None
    if sides is None:
        return None
    ours, theirs = sides
    starts, rest = [], offset
    for _, extent, _ in ours.pieces:
        starts.append(rest % extent)
        rest //= extent
    cut: list[slice | int] = []
    spread: list[int] = []
    counts: list[int] = []
    one_to_one = True
    for (count, _, kept), (window_count, _, window_kept), start in reversed(
            list(zip(ours.pieces, theirs.pieces, starts))):
        if start + window_count > count:
            return None
        one_to_one &= (kept or count == 1) and (window_kept or window_count == 1)
        if kept:
            cut.append(slice(start, start + window_count) if window_kept else start)
        if window_kept:
            if not kept:
                spread.append(len(counts))
            counts.append(window_count)
    return _Box(ours.digits, ours.inverse, tuple(cut), tuple(spread), tuple(counts), theirs.digits, theirs.inverse,
                tuple(t.count for t in window_terms), one_to_one and not spread)


@lru_cache(maxsize=256)
def _sides(tensor: StructKey, terms: tuple[Digit, ...], element: int, window: StructKey,
           window_terms: tuple[Digit, ...]) -> tuple[_Side, _Side] | None:
    """The tensor and the window cut into pieces that pair up, or None (see :func:`_box`): all of a box but
    where it starts, which a loop writing a KV cache row by row changes on every call."""
    if window.node.size != tensor.node.size:
        return None
    slots, window_slots = tensor.node.slots(), window.node.slots()  # innermost first
    # Both cut at every slot boundary of either and at the slice's end, so that piece i of one is piece i of
    # the other.
    bounds = sorted({element, *slot_strides(slots), *slot_strides(window_slots)} - {1, tensor.node.size})
    ours, theirs = _side(tensor.node, terms, bounds), _side(window.node, window_terms, bounds)
    if ours is None or theirs is None or [p[1] for p in ours.pieces] != [p[1] for p in theirs.pieces]:
        return None
    if any(not kept and not isinstance(slot.live, (Bcast, type(None))) for slot, kept in zip(slots, ours.kept)):
        return None  # a digit beyond the terms: its cells hold what the lay-out makes of it
    return ours, theirs


@dataclass(frozen=True)
class _Side:
    """A mapping cut into pieces (innermost first: live count, extent, whether the digit array keeps it),
    and how an array over its terms reshapes and transposes into that digit array, one dimension per kept
    piece, outermost first."""

    pieces: tuple[tuple[int, int, bool], ...]
    kept: tuple[bool, ...]  # per slot, innermost first
    digits: tuple[int, ...]
    inverse: tuple[int, ...]


def _side(mapping: Mapping, terms: tuple[Digit, ...], bounds: list[int]) -> _Side | None:
    """The slots of ``mapping`` cut at ``bounds``: a live digit split into digits of the same axis where a
    bound falls inside it, padding above the live count. None when ``mapping`` is no view over ``terms``,
    or a bound does not divide a slot or its live count."""
    view = _view(mapping, terms)
    if view is None:
        return None
    slots = mapping.slots()
    kept = tuple(isinstance(t, slice) for t in reversed(view.take))
    pieces: list[tuple[int, int, bool]] = []
    split: list[list[int]] = []  # per kept slot, innermost first: its pieces' counts
    below = 1
    for slot, keep in zip(slots, kept):
        top = below * slot.extent
        low, rest = below, slot.count
        counts: list[int] = []
        for bound in [b for b in bounds if below < b < top] + [top]:
            size = bound // low
            if bound % low or (rest > size and rest % size):
                return None
            count = min(rest, size)
            pieces.append((count, size, keep))
            counts.append(count)
            low, rest = bound, rest // count
        if keep:
            split.append(counts)
        below = top
    # The view's digit array has one dimension per kept slot, outermost first (dimension ``inverse[j]`` of
    # the reshaped terms); each becomes its pieces, outermost first.
    kept_slots = list(reversed(split))
    first: list[int] = []
    shape: list[int] = []
    for dim in range(len(view.digit_shape)):
        first.append(len(shape))
        shape.extend(reversed(kept_slots[view.inverse.index(dim)]))
    inverse = [first[dim] + i for dim in view.inverse for i in range(len(kept_slots[view.inverse.index(dim)]))]
    return _Side(tuple(pieces), kept, tuple(shape), tuple(inverse))
