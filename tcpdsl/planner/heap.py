"""The spreads waiting to be visited, each written as one int that sorts in visiting order.

The search holds every spread it has found until it visits it: up to millions on an einsum with
many kept axes. A spread object with its tuple of axes is work for Python's cycle collector, whose
full passes walk every tracked object, and costs a step per axis to free. A plain int is neither:
the collector ignores it and it is freed in one step, so the pauses within the search and the
release at its end grow neither with the spreads found nor with their axes (docs/search.md §4).

A key packs, most significant first: the spread's bound, its slices (more first), its weight cells
(fewer first), the index of its problem among those searched together, and the index of its
per-slice sizes among all the enumeration could choose (in enumeration order). Every field but the
first has a fixed width wide enough for any value it can take, so integer order is the order of
the fields, and the index is enough to rebuild the spread.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Sequence
from math import prod

from tcpdsl.planner.grid import Machine, Spread, divisors, kept_axes
from tcpdsl.planner.problem import Problem


class SpreadHeap:
    """Spreads of ``problems`` (searched together), popped in visiting order: by
    :attr:`Spread.order`, then by problem, then in the order the enumeration found them."""

    def __init__(self, problems: Sequence[Problem], machine: Machine) -> None:
        self.axes = [kept_axes(p) for p in problems]
        self.choices = [[divisors(p.sizes[a]) for a in axes] for p, axes in zip(problems, self.axes)]
        self.most = machine.chips * machine.slices  # no spread has more slices
        self.widths = (
            self.most.bit_length(),
            max(prod(p.sizes[a] for a in p.weight_axes) for p in problems).bit_length(),
            len(problems).bit_length(),
            max(prod(len(c) for c in choices) for choices in self.choices).bit_length(),
        )
        self.keys: list[int] = []

    def __len__(self) -> int:
        return len(self.keys)

    def push(self, tag: int, spread: Spread) -> None:
        """Add ``spread`` of problem ``tag``."""
        index = 0
        for (_, local), options in zip(spread.local, self.choices[tag]):
            index = index * len(options) + bisect_left(options, local)
        key = spread.bound
        for field, width in zip((self.most - spread.slices, spread.weight_cells, tag, index), self.widths):
            key = key << width | field
        heapq.heappush(self.keys, key)

    def pop(self) -> tuple[int, dict[str, int]]:
        """The problem index and the per-slice sizes of the next spread in visiting order."""
        key = heapq.heappop(self.keys)
        index = key & ((1 << self.widths[3]) - 1)
        tag = key >> self.widths[3] & ((1 << self.widths[2]) - 1)
        local: dict[str, int] = {}
        for axis, options in zip(reversed(self.axes[tag]), reversed(self.choices[tag])):
            index, choice = divmod(index, len(options))
            local[axis] = options[choice]
        return tag, {a: local[a] for a in self.axes[tag]}
