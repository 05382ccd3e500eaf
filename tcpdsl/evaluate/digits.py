"""Digit arithmetic shared by the evaluators: restricted reads, digit chains, broadcast matching.

A *restricted read* of a mapping at logical coordinates ``J`` finds the cell whose digits equal
``J``'s digits restricted to the digits that mapping carries (docs/runtime.md §3.4): a digit ``(x, s, c)``
reads ``(J[x] // s)`` modulo the gap to the next digit of ``x`` the mapping carries, and the read is
live only if every digit is below its live count. Digits the mapping lacks are ignored, which is
how an operand is reused (broadcast) along axes it does not carry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Bcast, Composite, Digit, Mapping, PaddingKind, Slot, slot_strides
from tcpdsl.errors import LayoutError
from tcpdsl.numerics.placement import plan

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

EVALUATE_STAGE: Final = "evaluate"


def composite_error(mapping: Mapping) -> LayoutError:
    return LayoutError(EVALUATE_STAGE, "CompositeLayout",
                       f"mapping {mapping} has a composite slot, which no evaluator can address digit by digit",
                       hint="write the padded or strided part per axis, e.g. [A # 4, B] instead of [A, B] # 8")


def _digit_ranges(slots: tuple[Slot, ...]) -> list[int | None]:
    """For each digit slot, how many values it can take before the next digit of its axis (None: unbounded)."""
    out: list[int | None] = []
    for slot in slots:
        live = slot.live
        if not isinstance(live, Digit):
            out.append(None)
            continue
        above = [o.live.stride for o in slots
                 if isinstance(o.live, Digit) and o.live.axis == live.axis and o.live.stride > live.stride]
        out.append(min(above) // live.stride if above else None)
    return out


def read(mapping: Mapping, coords: dict[str, IntArray], count: int,
         broadcast: dict[int, IntArray] | None = None) -> tuple[IntArray, BoolArray]:
    """Restricted read of ``mapping`` at ``count`` coordinate sets: ``(positions, live)``.

    ``broadcast`` gives the digit of chosen broadcast slots (by slot index); other broadcast
    slots read digit 0, since every one of their cells holds the same value.
    """
    position, live, _ = address(mapping, coords, count, broadcast)
    return position, live


def address(mapping: Mapping, coords: dict[str, IntArray], count: int,
            broadcast: dict[int, IntArray] | None = None) -> tuple[IntArray, BoolArray, BoolArray]:
    """Like :func:`read`, plus whether each position exists at all (every digit below its
    extent): a padding digit still addresses a cell, which holds the padding."""
    slots = mapping.slots()
    position = np.zeros(count, dtype=np.int64)
    live = np.ones(count, dtype=np.bool_)
    exists = np.ones(count, dtype=np.bool_)
    zero = np.zeros(count, dtype=np.int64)
    for index, (slot, stride, gap) in enumerate(zip(slots, slot_strides(slots), _digit_ranges(slots), strict=True)):
        item = slot.live
        if isinstance(item, Composite):
            raise composite_error(mapping)
        if isinstance(item, Digit):
            digit = coords.get(item.axis, zero) // item.stride
            if gap is not None:
                digit = digit % gap
        elif isinstance(item, Bcast) and broadcast is not None and index in broadcast:
            digit = broadcast[index]
        else:
            digit = zero
        live &= digit < slot.count
        exists &= digit < slot.extent
        position += np.minimum(digit, slot.extent - 1) * stride
    cells = plan(mapping)
    live &= cells.live[position]
    return position, live, exists


def raw_coordinates(mapping: Mapping) -> tuple[dict[str, IntArray], BoolArray, BoolArray]:
    """Per position, the coordinates its digits spell even where a digit is padding, plus two
    masks: positions inside a padded coordinate-free slot (pure padding or a padded broadcast),
    and of those, the ones whose padding is Zero."""
    slots = mapping.slots()
    size = mapping.size
    position = np.arange(size, dtype=np.int64)
    raw: dict[str, IntArray] = {}
    free_pad = np.zeros(size, dtype=np.bool_)
    zero_pad = np.zeros(size, dtype=np.bool_)
    for slot, stride in zip(slots, slot_strides(slots), strict=True):
        digit = (position // stride) % slot.extent
        live = slot.live
        if isinstance(live, Digit):
            raw[live.axis] = raw.get(live.axis, np.zeros(size, dtype=np.int64)) + digit * live.stride
        elif slot.padded:
            padded = digit >= slot.count
            free_pad |= padded
            if slot.kind == PaddingKind.ZERO:
                zero_pad |= padded
    return raw, free_pad, zero_pad & free_pad


def match_broadcasts(source: tuple[Slot, ...], target: tuple[Slot, ...]) -> dict[int, int]:
    """Pair anonymous broadcast slots of ``target`` with equal-count ones of ``source``, innermost
    first: ``{target slot: source slot}``. A source broadcast left unpaired is summed over."""
    free = [i for i, slot in enumerate(source) if isinstance(slot.live, Bcast)]
    pairs: dict[int, int] = {}
    for j, slot in enumerate(target):
        live = slot.live
        if not isinstance(live, Bcast):
            continue
        for i in free:
            src = source[i].live
            if isinstance(src, Bcast) and src.c == live.c:
                pairs[j] = i
                free.remove(i)
                break
    return pairs


@dataclass(frozen=True)
class DigitChain:
    """Per axis, the digit boundaries every mapping of a fold agrees on (innermost first).

    ``bounds[x] = [1, b1, b2, ..., top]``: chain digit ``j`` of ``x`` is ``(J[x] // b_j) % (b_{j+1} // b_j)``.
    """

    bounds: dict[str, list[int]]

    def radix(self, sym: str, j: int) -> int:
        b = self.bounds[sym]
        return b[j + 1] // b[j]

    def digits(self, sym: str) -> int:
        return len(self.bounds[sym]) - 1

    def cover(self, digit: Digit) -> list[int]:
        """The chain digits one mapping digit spans."""
        b = self.bounds[digit.axis]
        low, high = digit.stride, digit.stride * digit.count
        return [j for j in range(len(b) - 1) if low <= b[j] < high]


def refine(mappings: list[tuple[Slot, ...]]) -> DigitChain | None:
    """The common refinement of every digit boundary, or None when the digits do not nest
    (or a slot is composite or shared), in which case only the generic fold applies."""
    cuts: dict[str, set[int]] = {}
    for slots in mappings:
        for slot in slots:
            live = slot.live
            if isinstance(live, Composite):
                return None
            if isinstance(live, Digit):
                if slot.shared is not None:
                    return None
                cuts.setdefault(live.axis, {1}).update({live.stride, live.stride * live.count})
    bounds: dict[str, list[int]] = {}
    for sym, values in cuts.items():
        ordered = sorted(values)
        if any(high % low for low, high in zip(ordered, ordered[1:], strict=False)):
            return None
        bounds[sym] = ordered
    return DigitChain(bounds)


def covered(chain: DigitChain, slots: tuple[Slot, ...]) -> set[tuple[str, int]] | None:
    """The chain digits a mapping carries, or None if it carries one twice."""
    out: set[tuple[str, int]] = set()
    for slot in slots:
        live = slot.live
        if isinstance(live, Digit):
            for j in chain.cover(live):
                if (live.axis, j) in out:
                    return None
                out.add((live.axis, j))
    return out
