"""Refusing an evaluation that cannot fit in memory before building its arrays (docs/runtime.md §3.11).

An evaluator estimates the bytes of the arrays it would build from the chain's mapping sizes and its
working dtype, and compares them with the memory the machine has free now. Work that does not fit
is a ``LayoutError`` naming the stage, the GiB it needs and the fix, instead of numpy's
``MemoryError`` (which :func:`Refusing` also turns into that error, for an estimate that fell short).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import TracebackType

from tcpdsl.errors import LayoutError

TOO_LARGE = "TooLargeToEvaluate"
# Below this the free memory is not read (it costs a system call per evaluation); a MemoryError
# there is still the refusal.
CHECKED_FROM = 64 * 2**20


def available_bytes() -> int | None:
    """The memory the machine can give now: ``MemAvailable`` where the system reports it, else the
    free physical pages; None when neither is known (then nothing is refused in advance)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def amount(size: int) -> str:
    """``12.5 GiB``, ``3.0 MiB`` or ``64.0 KiB``: in the largest unit it fills."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size / 2**10:.1f} KiB"


# What an evaluator would build, said only when it is refused (the text renders mappings).
What = Callable[[], str]


def too_large(stage: str, what: What, needed: int, evaluator: str, free: int | None) -> LayoutError:
    """The refusal: ``what`` the evaluator would build, its size, and how to avoid building it."""
    have = "more than this machine could allocate" if free is None else f"more than the {amount(free)} free"
    fix = ("use the fused evaluator (the default), which never builds the Multiplier's cells, or tile the problem"
           if evaluator == "simulate" else "tile the problem (tcp.search one tile of it) and run it once per tile")
    return LayoutError(stage, TOO_LARGE, f"the {evaluator} evaluator would build {what()}: {amount(needed)}, {have}",
                       hint=fix)


def check_fits(stage: str, what: What, needed: int, evaluator: str) -> None:
    """Refuse ``needed`` bytes when the machine does not have them free."""
    if needed < CHECKED_FROM:
        return
    free = available_bytes()
    if free is not None and needed > free:
        raise too_large(stage, what, needed, evaluator, free)


class Refusing:
    """Check ``needed`` first, then turn a ``MemoryError`` inside the block into the same refusal.

    A class rather than a generator: it wraps every fused contraction, so its entry must cost little.
    """

    def __init__(self, stage: str, what: What, needed: int, evaluator: str) -> None:
        check_fits(stage, what, needed, evaluator)
        self.stage, self.what, self.needed, self.evaluator = stage, what, needed, evaluator

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if kind is not None and issubclass(kind, MemoryError):
            raise too_large(self.stage, self.what, self.needed, self.evaluator, None) from None
