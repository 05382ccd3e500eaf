"""The definitional ("ideal") cell semantics of a mapping (docs/mapping-language.md §1.7), the oracle for normalize.

Every digit that comes from the same sub-expression adds up to one position in that
sub-expression, which is then evaluated once. Sub-expressions are matched by structure (``key``)
and expanded greatest height first, so every contribution has been summed before expansion.

Only the *pieces* of a sub-expression pool: the operand of ``/ % = #`` is keyed by its structure,
so ``[E / n, E % n]`` evaluates ``E`` once at the summed position. A pair's two sides are whole
uses, keyed by structure and rank, so a repeated factor such as ``[1 # 8, 1 # 8]`` (which
``split_at`` produces) or ``[B, B]`` is evaluated per use, as the type-level map does. Leaves
(symbols and broadcasts) are resolved directly: their coordinates simply add.

A position past the end of a sub-expression (only reachable through a growing resize built directly
from the node classes) yields :data:`OUT_OF_BOUNDS` when it is the most major event, exactly as the
type-level ``combine`` propagates an out-of-bounds minor cell.

A summed symbol coordinate at or past the axis size (the *modulo overshoot* of docs/mapping-language.md
§1.6) stays a live :class:`Index` here, on purpose: this is the unfinalized cell, the oracle ``normalize``
and the canonical text are checked against, and docs/mapping-language.md §1.6 leaves its treatment to the
consumers. Keeping it visible lets ``equivalent`` tell an overshoot from padding, and lets the consumers
that finalize cells (placement, ``apply_mapping``) refuse or mask it with their own policy.
"""

from __future__ import annotations

import heapq

from tcpdsl.algebra.cells import OUT_OF_BOUNDS, Cell, Index, Pad
from tcpdsl.algebra.nodes import Broadcast, Mapping, Modulo, Padding, Pair, Resize, Stride, Symbol

Rank = tuple[int, ...]


class _Entry:
    """A pending sub-expression: its summed position and the most major rank reaching it."""

    __slots__ = ("node", "pos", "rank")

    def __init__(self, node: Mapping, pos: int, rank: Rank) -> None:
        self.node = node
        self.pos = pos
        self.rank = rank


def evaluate(m: Mapping, i: int) -> Cell:
    """The cell at position ``i`` of ``m`` under the position-additive semantics."""
    if i < 0 or i >= m.size:
        return OUT_OF_BOUNDS
    coords: dict[str, int] = {}
    # the most major non-live event seen so far: (rank, cell)
    worst: list[tuple[Rank, Cell]] = []
    pending: dict[object, _Entry] = {}
    heap: list[tuple[int, int, object]] = []
    counter = 0

    def push(node: Mapping, pos: int, rank: Rank, whole: bool = False) -> None:
        nonlocal counter
        if isinstance(node, Symbol):
            if pos >= node.n:
                worst.append((rank, OUT_OF_BOUNDS))
            else:
                coords[node.name] = coords.get(node.name, 0) + pos
            return
        if isinstance(node, Broadcast):
            if pos >= node.n:
                worst.append((rank, OUT_OF_BOUNDS))
            return
        key: object = (node.key, rank) if whole else node.key
        entry = pending.get(key)
        if entry is None:
            pending[key] = _Entry(node, pos, rank)
            counter += 1
            heapq.heappush(heap, (-node.height, counter, key))
            return
        entry.pos += pos
        entry.rank = min(entry.rank, rank)

    push(m, i, ())
    while heap:
        _, _, key = heapq.heappop(heap)
        entry = pending.pop(key)
        node, pos, rank = entry.node, entry.pos, entry.rank
        if pos >= node.size:
            worst.append((rank, OUT_OF_BOUNDS))
        elif isinstance(node, Pair):
            inner_size = node.right.size
            push(node.left, pos // inner_size, rank + (0,), whole=True)
            push(node.right, pos % inner_size, rank + (1,), whole=True)
        elif isinstance(node, Stride):
            push(node.inner, pos * node.s, rank)
        elif isinstance(node, (Modulo, Resize)):
            push(node.inner, pos, rank)
        elif isinstance(node, Padding):
            if pos >= node.inner.size:
                worst.append((rank, Pad(node.kind)))
            else:
                push(node.inner, pos, rank)
    if worst:
        return min(worst, key=lambda event: event[0])[1]
    return Index(coords)
