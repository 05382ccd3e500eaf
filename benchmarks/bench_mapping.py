"""Parse and normalize timings for the mapping expressions of the contraction-engine tests.

Prints, per expression, the median time to parse and to normalize, cold (algebra caches
cleared before every call) and cached, and whether the targets are met:
cached calls under 5 us, and a cold normalize of the longest Time expression under 1 ms.

Run: python benchmarks/bench_mapping.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from tcpdsl.algebra import Mapping, clear_caches, normalize, parse, scope
from tcpdsl.syntax.parser import parse_expression

# Axes of the time and lane unit tests (docs/stage-rules.md §2.5-§2.7).
SIZES = {"A": 4, "B": 2, "C": 4, "D": 32, "K": 64, "M": 4, "N": 8, "O": 2, "P": 8, "L1": 192, "Bat": 4096, "W": 12}

LONG_TIME = "L1 # 256 / 32 % 4, Bat / 32 % 2, Bat / 64 % 2, W % 6, W / 6, L1 # 256 / 8 % 4"
LONG_OUT_TIME = "L1 # 256 / 32 % 4, Bat / 32 % 2, Bat / 64 % 2, L1 # 256 / 8 % 4"

EXPRESSIONS: list[tuple[str, str]] = [
    ("Time", "A, B"), ("Time", "A"), ("Time", "B"), ("Time", "B # 4"), ("Time", "A # 8, B"), ("Time", "C, B"),
    ("Time", "1"), ("Time", "M"), ("Time", "N, B"), ("Time", "A, N, B"), ("Time", "A, M"), ("Time", LONG_TIME),
    ("Time", LONG_OUT_TIME),
    ("OutTime", "A # 8, B, D"), ("OutTime", "B, N"), ("OutTime", "B, N # 8"), ("OutTime", "A # 8, B, N"),
    ("OutTime", "M, N"), ("OutTime", "N, D / 8"), ("OutTime", "N, B, D / 8"), ("OutTime", "M, N, D / 8"),
    ("OutTime", LONG_OUT_TIME + ", Bat % 32"),
    ("Lane", "N"), ("Lane", "M"), ("Lane", "L1 # 256 % 8"),
    ("Packet", "D"), ("Packet", "Bat % 32"), ("Packet", "B"), ("Packet", "1 # 8"), ("Packet", "M # 8"), ("Packet", "D % 8"),
]

CACHED_TARGET_US = 5.0
COLD_LONG_TARGET_US = 1000.0


def clear_parse_caches() -> None:
    """Forget parsed texts and built mappings, so the next parse starts from the characters."""
    parse_expression.cache_clear()
    built = getattr(scope, "_built", None)  # the scope's private memo of built mappings
    if isinstance(built, dict):
        built.clear()


def median_us(fn: Callable[[], object], repeat: int, before: Callable[[], None] | None = None) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    repeat: int = args.repeat

    print(f"{'role':8} {'expression':86} {'parse cold':>10} {'parse hot':>9} {'norm cold':>10} {'norm hot':>9}"
          "  (median us)")
    worst_cached = 0.0
    worst_parse = 0.0
    long_cold = 0.0
    for role, text in EXPRESSIONS:
        parse_cold_us = median_us(lambda: parse(text, SIZES), repeat, before=clear_parse_caches)
        parse(text, SIZES)
        parse_us = median_us(lambda: parse(text, SIZES), repeat * 10)
        worst_parse = max(worst_parse, parse_us)
        m: Mapping = parse(text, SIZES)
        cold_us = median_us(lambda: normalize(m), repeat, before=clear_caches)
        normalize(m)
        hot_us = median_us(lambda: normalize(m), repeat * 10)
        worst_cached = max(worst_cached, hot_us)
        if text == LONG_TIME:
            long_cold = cold_us
        print(f"{role:8} {text:86} {parse_cold_us:10.2f} {parse_us:9.2f} {cold_us:10.2f} {hot_us:9.2f}")

    print()
    for label, worst in (("parse", worst_parse), ("normalize", worst_cached)):
        print(f"worst cached {label}: {worst:.2f} us (target < {CACHED_TARGET_US} us): "
              f"{'met' if worst < CACHED_TARGET_US else 'NOT met'}")
    print(f"longest Time expression, cold normalize: {long_cold:.1f} us (target < {COLD_LONG_TARGET_US:.0f} us): "
          f"{'met' if long_cold < COLD_LONG_TARGET_US else 'NOT met'}")


if __name__ == "__main__":
    main()
