"""What a kernel body does while ``tcp.replay`` records it (docs/replay.md §2).

A recorded body builds a graph that is evaluated again on every replay, so the recorder must know the
values building itself computed (a collected stream's tensor, which a contraction's operands hold) and
anything that fixes values of the recording call into the graph (a settled write, a value read from
Python). The tensor classes report both here; outside a recording nothing is kept.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

from tcpdsl.numerics.flow import Flow
from tcpdsl.numerics.logical import Tensor


@dataclass
class Log:
    """One recording: each tensor a source tensor computed from a flow while the body ran, and the first
    reason the graph holds values of its own call (None while it holds none)."""

    sources: list[tuple[Tensor, Flow]] = field(default_factory=list)
    baked: str | None = None


ACTIVE: ContextVar[Log | None] = ContextVar("tcpdsl_recording", default=None)


def source_evaluated(tensor: Tensor, flow: Flow) -> None:
    """A source tensor's values were computed from ``flow`` while it was built on (a contraction reads them)."""
    log = ACTIVE.get()
    if log is not None:
        log.sources.append((tensor, flow))


def values_read() -> None:
    """The body read a tensor's values from Python (``to_tensor``, ``physical``): whatever it makes of them is a
    constant of what it builds."""
    baked("the body read values from Python (to_tensor or physical)")


def baked(reason: str) -> None:
    """Values of this call were fixed into what the body built: the body cannot be replayed on other values."""
    log = ACTIVE.get()
    if log is not None and log.baked is None:
        log.baked = reason
