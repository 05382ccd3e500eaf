"""Reading a cell from a slot form, the slot-level twin of :mod:`tcpdsl.algebra.semantics`.

A position is split into one digit per slot, outermost first. A digit at or past its slot's live
count is padding of the slot's kind; a live digit of an axis adds ``digit * stride`` to it; a piece
(or a shared digit) adds ``digit * stride`` to the position of its operand, which is read once all
its pieces are in, at the rank of its most major piece (docs/mapping-language.md §1.7). Of all the
padding (and positions past an operand's end) met, the most major wins; a slot's own padding
outranks what its operand holds.
"""

from __future__ import annotations

from tcpdsl.algebra.cells import OUT_OF_BOUNDS, Cell, Index, Pad
from tcpdsl.algebra.slots import Composite, Digit, Operand, Slots, size_of

Rank = tuple[int, ...]  # smaller is more major


def decode(slots: Slots, i: int) -> Cell:
    """The cell at position ``i`` of a slot form."""
    if i < 0 or i >= size_of(slots):
        return OUT_OF_BOUNDS
    reader = _Reader()
    reader.read(slots, i, ())
    return reader.result()


class _Reader:
    def __init__(self) -> None:
        self.coords: dict[str, int] = {}
        self.events: list[tuple[Rank, Cell]] = []
        self.pending: dict[Operand, tuple[int, Rank]] = {}

    def read(self, slots: Slots, position: int, rank: Rank) -> None:
        last = len(slots) - 1
        for j, slot in enumerate(slots):
            digit = position % slot.extent
            position //= slot.extent
            here = rank + (last - j,)
            live = slot.live
            if slot.shared is not None:
                self.reach(slot.shared.operand, digit * slot.shared.stride, here)
            elif digit >= slot.count:
                self.events.append((here, Pad(slot.kind)))
            elif isinstance(live, Digit):
                self.coords[live.axis] = self.coords.get(live.axis, 0) + digit * live.stride
            elif isinstance(live, Composite):
                self.reach(live.operand, digit * live.stride, here)

    def reach(self, operand: Operand, position: int, rank: Rank) -> None:
        before = self.pending.get(operand)
        self.pending[operand] = (position, rank) if before is None else (before[0] + position, min(before[1], rank))

    def result(self) -> Cell:
        while self.pending:
            operand = max(self.pending, key=lambda o: o.height)
            position, rank = self.pending.pop(operand)
            if position >= operand.size:
                self.events.append((rank, OUT_OF_BOUNDS))
            else:
                self.read(operand.slots, position, rank)
        if self.events:
            return min(self.events, key=lambda event: event[0])[1]
        return Index(self.coords)
