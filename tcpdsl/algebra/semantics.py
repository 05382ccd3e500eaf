"""What each cell of a mapping holds: the position-additive meaning (docs/mapping-language.md §1.7).

This is the definition the canonical form is checked against.

Every digit that comes from the same sub-expression adds up to one position in that
sub-expression, which is then evaluated once. Only the *pieces* of a sub-expression pool: the
operands of ``/ % = #`` are matched by structure, so ``[E / n, E % n]`` evaluates ``E`` once at
the summed position; they are expanded greatest height first, so every piece is in before its
operand is expanded. A pair's two sides are uses of their own, evaluated where they are met, so a
repeated factor such as ``[1 # 8, 1 # 8]`` or ``[B, B]`` is evaluated per use, as the type-level
map does. Leaves (symbols and broadcasts) are resolved directly: their coordinates simply add.

A position past the end of a sub-expression (pieces that overlap, such as ``E / 4, E % 8``, can add
up past it, and so can a growing resize built directly from the node classes) yields
:data:`OUT_OF_BOUNDS` when it is the most major event, as the type-level ``combine`` propagates an
out-of-bounds minor cell.

A summed symbol coordinate at or past the axis size (an *overshoot*, docs/mapping-language.md §1.6)
stays a live :class:`Index` here, on purpose: this is the unfinalized cell, the one the canonical form
and the canonical text are checked against, and the reference leaves the kind of an overshoot unknown.
Keeping it visible lets ``equivalent`` tell an overshoot from padding, and lets the consumers that
finalize cells (placement, ``apply_mapping``) refuse or mask it with their own policy.
"""

from __future__ import annotations

import heapq

from tcpdsl.algebra.cells import OUT_OF_BOUNDS, Cell, Index, Pad
from tcpdsl.algebra.nodes import Broadcast, Mapping, Modulo, Padding, Pair, Resize, Stride, StructKey, Symbol

Rank = tuple[int, ...]


class _Pending:
    """An operand read so far: its summed position and the most major rank that reads it."""

    __slots__ = ("node", "pos", "rank")

    def __init__(self, node: Mapping, pos: int, rank: Rank) -> None:
        self.node = node
        self.pos = pos
        self.rank = rank


class _Reading:
    """One evaluation: the coordinates so far, the non-live events met, and the operands pending."""

    __slots__ = ("coords", "events", "pending", "heap", "met")

    def __init__(self) -> None:
        self.coords: dict[str, int] = {}
        self.events: list[tuple[Rank, Cell]] = []  # in the order met: among equal ranks the first wins
        self.pending: dict[StructKey, _Pending] = {}
        self.heap: list[tuple[int, int, StructKey]] = []
        self.met = 0  # operands met so far: ties in height go in the order met

    def use(self, node: Mapping, pos: int, rank: Rank) -> None:
        """``node`` at ``pos`` as a use of its own (the whole mapping, or a side of a pair)."""
        if isinstance(node, Symbol):
            self.coords[node.name] = self.coords.get(node.name, 0) + pos
        elif isinstance(node, Pair):
            inner_size = node.right.size
            self.use(node.left, pos // inner_size, rank + (0,))
            self.use(node.right, pos % inner_size, rank + (1,))
        elif isinstance(node, Stride):
            self.read(node.inner, pos * node.s, rank)
        elif isinstance(node, (Modulo, Resize)):
            self.read(node.inner, pos, rank)
        elif isinstance(node, Padding):
            if pos >= node.inner.size:
                self.events.append((rank, Pad(node.kind)))
            else:
                self.read(node.inner, pos, rank)

    def read(self, node: Mapping, pos: int, rank: Rank) -> None:
        """``node`` read by an operator: reads of one sub-expression add up to one position of it."""
        if isinstance(node, (Symbol, Broadcast)):
            if pos >= node.size:
                self.events.append((rank, OUT_OF_BOUNDS))
            elif isinstance(node, Symbol):
                self.coords[node.name] = self.coords.get(node.name, 0) + pos
            return
        key = StructKey(node)
        entry = self.pending.get(key)
        if entry is None:
            self.pending[key] = _Pending(node, pos, rank)
            self.met += 1
            heapq.heappush(self.heap, (-node.height, self.met, key))
            return
        entry.pos += pos
        entry.rank = min(entry.rank, rank)

    def finish(self) -> Cell:
        # Greatest height first, so that every read of an operand is in before it is expanded.
        while self.heap:
            _, _, key = heapq.heappop(self.heap)
            entry = self.pending.pop(key)
            node, pos, rank = entry.node, entry.pos, entry.rank
            if pos >= node.size:
                self.events.append((rank, OUT_OF_BOUNDS))
            else:
                self.use(node, pos, rank)
        if self.events:
            return min(self.events, key=lambda event: event[0])[1]
        return Index(self.coords)


def cell_at(m: Mapping, i: int) -> Cell:
    """The cell at position ``i`` of ``m`` under the position-additive semantics."""
    if i < 0 or i >= m.size:
        return OUT_OF_BOUNDS
    reading = _Reading()
    reading.use(m, i, ())
    return reading.finish()
