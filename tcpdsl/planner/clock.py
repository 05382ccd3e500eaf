"""The search's time budget: a deadline that every loop which can run long reads as it goes.

The budget is wall time (docs/search.md §4). Enumerating grids, packets and lanes can itself take
longer than any budget on problems with many axes, so those loops tick the clock too; reading the
time only every few ticks keeps the cost of asking negligible.
"""

from __future__ import annotations

import math
import time
from typing import Final

# Ticks between two readings of the clock.
EVERY: Final = 16


class OutOfTime(Exception):
    """The budget ran out inside an enumeration; the search loop catches it and returns what it has."""


class Clock:
    """Started at construction; ``budget`` seconds later it has expired (an infinite budget never does)."""

    def __init__(self, budget: float) -> None:
        self.started = time.perf_counter()
        self.deadline = self.started + budget if math.isfinite(budget) else math.inf
        self._ticks = 0

    def expired(self) -> bool:
        return time.perf_counter() > self.deadline

    def tick(self) -> None:
        """Count one step of a loop; raise :class:`OutOfTime` once the deadline has passed."""
        self._ticks += 1
        if self._ticks % EVERY == 0 and self.expired():
            raise OutOfTime

    def seconds(self) -> float:
        return time.perf_counter() - self.started
