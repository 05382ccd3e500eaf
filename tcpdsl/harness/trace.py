"""The schedule of a kernel, or of kernels run back to back, as Chrome trace events (docs/trace.md).

Each engine of the cost model gets a track; its event lasts the cycles the model gives it. The
drawing follows the model's own sum (``cost.combine``, ``cost.stream_cost``): the pipelined stages
(the contraction's, or a vector pass) start one after another's latency and end their own latency
after the slowest stage up to them has streamed; the stream engines after them (cast, transpose,
commit, ...) start together once that pipeline has drained. A kernel's span is its reported total; the next
kernel starts where it ends.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from tcpdsl.cost import KernelCost, StageCost
from tcpdsl.errors import LayoutError
from tcpdsl.harness.report import KernelResult
from tcpdsl.harness.stages import PIPELINED, bound_by, chain_stages, flow_stages
from tcpdsl.numerics.chain import Chain
from tcpdsl.numerics.flow import Flow

PID: Final = 1  # one slice: every figure of the model is per slice
KERNEL_TRACK: Final = "kernel"


def _subject(name: str | None, item: object) -> tuple[str, KernelCost]:
    """The name and cost of a run result, or of a kernel's output tensor (named ``name``, or by its type)."""
    if isinstance(item, KernelResult):
        if item.cost is None:
            raise LayoutError("trace", "NoCost", f"kernel {item.name} ({item.status}) has no cost to draw",
                              hint="trace the results of kernels that ran (a PASS, or a FAIL past its stages)")
        return name or item.name, item.cost
    chain, flow = getattr(item, "chain", None), getattr(item, "flow", None)
    if isinstance(chain, Chain):
        return name or type(item).__name__, chain_stages(chain)[1]
    if isinstance(flow, Flow) and flow.steps:
        return name or type(item).__name__, flow_stages(flow)[1]
    raise LayoutError("trace", "Subject", f"cannot draw a {type(item).__name__}: it is not a kernel's result",
                      hint="pass what tcp.try_kernel returns, a kernel's output tensor, or a list of them")


def schedule(cost: KernelCost) -> tuple[list[tuple[StageCost, int, int]], int]:
    """Each stage of ``cost`` with its start and its duration in cycles, the kernel starting at 0, and
    the kernel's end: the pipelined stages' slowest stream plus all their latencies, then the slowest
    of the engines after them."""
    head = [s for s in cost.stages if s.stage in PIPELINED]
    tail = [s for s in cost.stages if s.stage not in PIPELINED]
    placed: list[tuple[StageCost, int, int]] = []
    offset = slowest = 0
    for stage in head:
        # From its first input to its last output: no stage finishes before the slowest one upstream.
        slowest = max(slowest, stage.cycles)
        placed.append((stage, offset, slowest + stage.latency))
        offset += stage.latency
    drained = max(s.cycles for s in head) + offset if head else 0
    placed += [(s, drained, s.cycles) for s in tail]
    return placed, drained + max((s.cycles for s in tail), default=0)


def _event(name: str, tid: int, start: int, length: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "ph": "X", "pid": PID, "tid": tid, "ts": start, "dur": length, "args": args}


def _meta(name: str, tid: int | None, value: str | int) -> dict[str, Any]:
    event: dict[str, Any] = {"name": name, "ph": "M", "pid": PID, "args": {"name" if isinstance(value, str) else "sort_index": value}}
    if tid is not None:
        event["tid"] = tid
    return event


def trace(results: object, path: str | Path | None = None) -> dict[str, Any]:
    """The per-engine timeline of one kernel's result, or of a list of them run in order (a dict names
    each by its key), as a Chrome trace-event document (timestamps and durations in cycles per
    slice); written to ``path`` as JSON when given. Perfetto and chrome://tracing open it."""
    items: list[tuple[str | None, object]]
    if isinstance(results, dict):
        items = [(str(name), item) for name, item in results.items()]
    elif isinstance(results, Iterable) and not isinstance(results, (str, bytes, KernelResult)) \
            and not hasattr(results, "flow"):
        items = [(None, item) for item in results]
    else:
        items = [(None, results)]
    if not items:
        raise LayoutError("trace", "Subject", "nothing to draw: the list of results is empty",
                          hint="pass at least one kernel's result")
    tracks: dict[str, int] = {KERNEL_TRACK: 0}
    events: list[dict[str, Any]] = []
    clock = 0
    for label, item in items:
        name, cost = _subject(label, item)
        bound = bound_by(cost)
        placed, total = schedule(cost)
        events.append(_event(name, 0, clock, total, {
            "total_cycles": cost.total_cycles, "bound_by": str(bound.stage) if bound else None}))
        for stage, start, length in placed:
            tid = tracks.setdefault(str(stage.stage), len(tracks))
            events.append(_event(str(stage.stage), tid, clock + start, length, {
                "kernel": name, "cycles": stage.cycles, "latency": stage.latency, "notes": list(stage.notes)}))
        clock += total
    meta = [_meta("process_name", None, "tcpdsl schedule (cycles per slice)")]
    for track, tid in tracks.items():
        meta += [_meta("thread_name", tid, track), _meta("thread_sort_index", tid, tid)]
    document = {"traceEvents": meta + events, "displayTimeUnit": "ns", "otherData": {"unit": "cycles per slice"}}
    if path is not None:
        try:
            Path(path).write_text(json.dumps(document, indent=1), encoding="utf-8")
        except OSError as error:
            raise LayoutError("trace", "Unwritable", f"cannot write the trace to {path}: {error.strerror or error}",
                              hint="give a file in a folder that exists and that you may write") from None
    return document
