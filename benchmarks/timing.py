"""Timing helpers shared by the benchmarks: interleaved rounds and paired ratios."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def interleaved(candidates: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Seconds of every candidate in each of ``rounds`` rounds, after one warm-up call each. Each
    round runs every candidate once, starting one further along each time, so a shared, noisy
    machine slows all of them alike."""
    for fn in candidates.values():
        fn()
    names = list(candidates)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = candidates[name]
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def paired_ratio(times: dict[str, list[float]], name: str, base: str) -> float:
    """The median over rounds of ``name``'s time over ``base``'s time in the same round."""
    return statistics.median(a / b for a, b in zip(times[name], times[base], strict=True))
