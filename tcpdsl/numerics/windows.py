"""A window's logical values read straight from its tensor's, when the window is a box of whole slots
(docs/runtime.md §4, "Windows read by slots").

A window (a tile, a padded view) reads cell ``p + offset`` of each slice's Element for its cell ``p``.
When both mappings are regular views over their terms and the window's slots stride like the tensor's,
the offset is a start in each slot; if no digit then runs past the tensor's live count, every live cell
of the window reads a live cell of the tensor slot by slot, and the window's values are a slice of the
tensor's digit array. That costs the window's size, where laying the tensor out costs the tensor's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Bcast, Digit, Mapping, Slots, StructKey, slot_strides
from tcpdsl.numerics.transfer import _view

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class _Box:
    """How a window reads the tensor's digit array: ``index`` per kept slot of the tensor, then ``spread``
    (a new axis per slot that only the window keeps, to ``counts``), then into the window's terms."""

    tensor_digits: tuple[int, ...]
    tensor_inverse: tuple[int, ...]
    index: tuple[slice | int, ...]
    spread: tuple[int, ...]  # where a slot only the window keeps takes a new axis, in the sliced array
    counts: tuple[int, ...]  # the window's kept slots' live counts, outermost first
    window_digits: tuple[int, ...]
    window_inverse: tuple[int, ...]
    shape: tuple[int, ...]  # one dimension per window term


def window_values(values: Array, terms: tuple[Digit, ...], mapping: Mapping, element: int, offset: int,
                  window: Mapping, window_terms: tuple[Digit, ...]) -> Array | None:
    """The logical values over ``window_terms`` of the window over ``window`` whose Element cell ``p`` is cell
    ``p + offset`` of ``mapping``'s (``element`` cells per slice), whose values over ``terms`` are ``values``;
    None when the window is not a box of whole slots (then it is read through the laid-out tensor)."""
    box = _box(StructKey(mapping), terms, element, offset, StructKey(window), window_terms)
    if box is None:
        return None
    digits = values.reshape(box.tensor_digits).transpose(box.tensor_inverse)[box.index]
    if box.spread:
        digits = np.broadcast_to(np.expand_dims(digits, box.spread), box.counts)
    out = np.empty(box.shape, dtype=values.dtype)
    out.reshape(box.window_digits).transpose(box.window_inverse)[...] = digits
    return out


@lru_cache(maxsize=256)
def _box(tensor: StructKey, terms: tuple[Digit, ...], element: int, offset: int, window: StructKey,
         window_terms: tuple[Digit, ...]) -> _Box | None:
    """The box, or None: a mapping that is no view over its terms, a window of another size, slots that do not
    pair up, an offset past the slice, a digit the tensor holds apart from its terms, or a window cell past
    the tensor's live cells."""
    ours, theirs = _view(tensor.node, terms), _view(window.node, window_terms)
    if ours is None or theirs is None or window.node.size != tensor.node.size or not 0 <= offset < element:
        return None
    slots, window_slots = tensor.node.slots(), window.node.slots()  # innermost first
    kept = tuple(isinstance(t, slice) for t in reversed(ours.take))
    if any(not k and not isinstance(s.live, (Bcast, type(None))) for s, k in zip(slots, kept)):
        return None  # a digit beyond the terms: its cells hold what the lay-out makes of it
    # Both cut at every slot boundary of either and at the slice's end, so that slot i of one is slot i of the other.
    bounds = sorted({element, *slot_strides(slots), *slot_strides(window_slots)} - {1, tensor.node.size})
    pieces = _pieces(slots, kept, bounds)
    window_pieces = _pieces(window_slots, tuple(isinstance(t, slice) for t in reversed(theirs.take)), bounds)
    if pieces is None or window_pieces is None or [p[1] for p in pieces] != [p[1] for p in window_pieces]:
        return None
    cut: list[slice | int] = []
    spread: list[int] = []
    counts: list[int] = []
    rest = offset
    starts = []
    for _, extent, _ in pieces:
        starts.append(rest % extent)
        rest //= extent
    for (count, _, ours_kept), (window_count, _, window_kept), start in reversed(
            list(zip(pieces, window_pieces, starts))):
        if start + window_count > count:
            return None
        if ours_kept:
            cut.append(slice(start, start + window_count) if window_kept else start)
        if window_kept:
            if not ours_kept:
                spread.append(len(counts))
            counts.append(window_count)
    return _Box(ours.digit_shape, ours.inverse, tuple(cut), tuple(spread), tuple(counts), theirs.digit_shape,
                theirs.inverse, tuple(t.count for t in window_terms))


def _pieces(slots: Slots, kept: tuple[bool, ...], bounds: list[int]) -> list[tuple[int, int, bool]] | None:
    """The slots (innermost first) cut at ``bounds``, each as its live count, extent and whether the digit array
    keeps it: a slot's live digit stays in its lowest piece, the pieces above it are padding. None when a
    bound does not divide a slot, or its live digit does not fit below the bound."""
    found: list[tuple[int, int, bool]] = []
    below = 1
    for slot, keep in zip(slots, kept):
        top = below * slot.extent
        low, count = below, slot.count
        for bound in [b for b in bounds if below < b < top] + [top]:
            if bound % low or count > bound // low:
                return None
            found.append((count, bound // low, keep))
            low, count, keep = bound, 1, False
        below = top
    return found
