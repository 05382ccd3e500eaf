"""The schedule of a kernel, or of kernels run back to back, as Chrome trace events (docs/trace.md).

``tcpdsl.harness.schedule`` finds the streams and moves behind each kernel's result and places each
engine's busy span in its stream; here they become events: one track for the kernels, one for the
streams (they run one after another, so their spans sum to the kernels'), and one track per engine
of each unit (the main and sub contexts, the DMA engines), whose events overlap as the engines of a
stream pipeline.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from tcpdsl.errors import LayoutError
from tcpdsl.harness.report import KernelResult, bound_line
from tcpdsl.harness.schedule import DMA, Schedule, Span, bounding, schedule_of

# The processes of the trace: the schedule itself (kernels and streams), then each unit's engines.
PROCESSES: Final = {"schedule": "tcpdsl schedule (cycles per slice)", "main": "main context", "sub": "sub context",
                    DMA: "DMA engines"}
KERNEL_TRACK: Final = "kernel"
STREAM_TRACK: Final = "stream"


def _subject(name: str | None, item: object, seen: set[int]) -> tuple[str, Schedule]:
    """The name and schedule of a run result, or of a kernel's output tensor or tuple of them (named
    ``name``, or by its type); streams in ``seen`` were drawn for an earlier kernel."""
    if isinstance(item, KernelResult):
        if item.whole is None:
            raise LayoutError("trace", "NoCost", f"kernel {item.name} ({item.status}) has no cost to draw",
                              hint="trace the results of kernels that ran (a PASS, or a FAIL past its stages)")
        return name or item.name, item.whole
    parts = item if isinstance(item, tuple) else (item,)
    if not parts or not all(hasattr(p, "chain") or hasattr(p, "flow") for p in parts):
        raise LayoutError("trace", "Subject", f"cannot draw a {type(item).__name__}: it is not a kernel's result",
                          hint="pass what tcp.try_kernel returns, a kernel's output tensor, or a list of them")
    return name or type(parts[0]).__name__, schedule_of(item, seen) or Schedule(())


class _Document:
    """Trace events, and a track id (unique over the processes) for each track as it is first used."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        # The kernels' and the streams' tracks come first.
        self.tracks: dict[tuple[str, str], int] = {("schedule", KERNEL_TRACK): 1, ("schedule", STREAM_TRACK): 2}

    def event(self, unit: str, track: str, name: str, start: int, length: int, args: dict[str, Any]) -> None:
        tid = self.tracks.setdefault((unit, track), len(self.tracks) + 1)
        pid = list(PROCESSES).index(unit) + 1
        self.events.append({"name": name, "ph": "X", "pid": pid, "tid": tid, "ts": start, "dur": length, "args": args})

    def metadata(self) -> list[dict[str, Any]]:
        used = {unit for unit, _ in self.tracks}
        meta: list[dict[str, Any]] = []
        for pid, (unit, title) in enumerate(PROCESSES.items(), 1):
            if unit in used:
                meta += [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": title}},
                         {"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}}]
        for (unit, track), tid in self.tracks.items():
            pid = list(PROCESSES).index(unit) + 1
            meta += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": track}},
                     {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": tid}}]
        return meta


def _draw(document: _Document, kernel: str, streams: Iterable[Span], clock: int, number: int) -> None:
    """``streams`` back to back from ``clock``, numbered from ``number`` in the whole trace."""
    for span in streams:
        document.event("schedule", STREAM_TRACK, f"{span.unit}: {span.name}", clock, span.cycles,
                       {"kernel": kernel, "stream": number, "bound_by": span.bound.label})
        for busy in span.busy:
            document.event(busy.unit, busy.track, busy.name, clock + busy.start, busy.length, {
                "kernel": kernel, "stream": number, "cycles": busy.cost.cycles, "latency": busy.cost.latency,
                "notes": list(busy.cost.notes)})
        clock += span.cycles
        number += 1


def trace(results: object, path: str | Path | None = None) -> dict[str, Any]:
    """The per-engine timeline of one kernel's result, or of a list of them run in order (a dict names
    each by its key), as a Chrome trace-event document (timestamps and durations in cycles per
    slice); written to ``path`` as JSON when given. Perfetto and chrome://tracing open it."""
    items: list[tuple[str | None, object]]
    if isinstance(results, dict):
        items = [(str(name), item) for name, item in results.items()]
    elif isinstance(results, Iterable) and not isinstance(results, (str, bytes, tuple, KernelResult)) \
            and not hasattr(results, "flow"):
        items = [(None, item) for item in results]
    else:
        items = [(None, results)]
    if not items:
        raise LayoutError("trace", "Subject", "nothing to draw: the list of results is empty",
                          hint="pass at least one kernel's result")
    document = _Document()
    seen: set[int] = set()
    clock, every = 0, list[Span]()
    for label, item in items:
        name, schedule = _subject(label, item, seen)
        bound = schedule.bound_by
        document.event("schedule", KERNEL_TRACK, name, clock, schedule.total_cycles, {
            "total_cycles": schedule.total_cycles, "bound_by": bound[0] if bound else None})
        _draw(document, name, schedule.streams, clock, len(every))
        clock += schedule.total_cycles
        every += schedule.streams
    bound = bounding(every)
    out = {"traceEvents": document.metadata() + document.events, "displayTimeUnit": "ns",
           "otherData": {"unit": "cycles per slice", "kernels": len(items), "streams": len(every), "total_cycles": clock,
                         "bound_by": bound[0] if bound else None, "bound_cycles": bound[1] if bound else 0}}
    if path is not None:
        if not isinstance(path, (str, Path)):
            raise LayoutError("trace", "Unwritable", f"cannot write the trace to {path!r}: not a file name",
                              hint="give the file as a str or a pathlib.Path")
        try:
            Path(path).write_text(json.dumps(out, indent=1), encoding="utf-8")
        except OSError as error:
            raise LayoutError("trace", "Unwritable", f"cannot write the trace to {path}: {error.strerror or error}",
                              hint="give a file in a folder that exists and that you may write") from None
    return out


def describe(document: dict[str, Any]) -> str:
    """One line on a trace: its kernels, their cycles and the engine that bounds the sequence."""
    data = document["otherData"]
    kernels, total = data["kernels"], data["total_cycles"]
    bound = (data["bound_by"], data["bound_cycles"]) if data["bound_by"] is not None else None
    return (f"schedule of {kernels} kernel{'' if kernels == 1 else 's'}: {total} cycles per slice, "
            + bound_line(bound, total, data["streams"], "stream"))
