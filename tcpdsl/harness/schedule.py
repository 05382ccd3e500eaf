"""The schedule of a kernel: every stream and move its result was built from, in the order they were
recorded, each engine busy for the cycles of the cost model (docs/trace.md).

A stream is a flow's steps, after the contraction or the vector pass it starts from: the pipelined
stages start one after another's latency and no stage ends before the slowest one up to it has
streamed; the engines after them start together once the pipeline has drained (``cost.combine``,
``cost.stream_cost``). Streams run one after another, so the kernel's cycles are the sum of its
streams' cycles. A contraction whose TRF was not loaded by a recorded stream pays the whole kernel's
weight DMA and TRF load first (docs/cost-model.md, "The whole kernel"); one whose result is the
kernel's commits it beside the Lane Folder.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from tcpdsl.cost import StageCost, chain_cost, chain_weight_load, result_commit_cycles, stream_stage_cost
from tcpdsl.harness.stages import vector_stages
from tcpdsl.numerics.chain import Chain
from tcpdsl.numerics.flow import Flow, Scattered, Step, Window, Written
from tcpdsl.numerics.vector_chain import VectorChain, VrfValues
from tcpdsl.verify.dma import DmaParams
from tcpdsl.verify.stage import Stage

DMA: Final = "dma"  # the unit of the DMA engines; the others are the tensor unit's contexts, "main" and "sub"
WEIGHT_DMA: Final = "weight DMA"
TRF_LOAD: Final = "TRF load"
# A result that is a contraction is the last thing its kernel does: it sorts after every recorded flow.
LAST: Final = 1 << 62


@dataclass(frozen=True)
class Busy:
    """One engine's busy span in its stream: ``start`` cycles after the stream starts, ``length`` long.

    ``track`` is the engine (a stage's name); ``name`` says what it does there, the stage's name or
    the whole kernel's ``weight DMA`` (on ``to_dm``) or ``TRF load`` (on the sub context's ``fetch``).
    """

    name: str
    unit: str
    track: str
    start: int
    length: int
    cost: StageCost

    @property
    def label(self) -> str:
        """The engine as a breakdown names it: the sub context's engines are prefixed ``sub``."""
        if self.name != self.track:
            return self.name
        return f"sub {self.track}" if self.unit == "sub" else self.track


@dataclass(frozen=True)
class Span:
    """One stream of a kernel (or a move): its unit, its engines, its cycles and the engine that bounds it."""

    unit: str
    name: str
    cycles: int
    busy: tuple[Busy, ...]

    @property
    def bound(self) -> Busy:
        """The engine streaming the most cycles (the first of a tie): the others overlap with it."""
        return max(self.busy, key=lambda b: b.cost.cycles)


@dataclass(frozen=True)
class Schedule:
    """A kernel's streams in the order they ran; its cycles are theirs summed."""

    streams: tuple[Span, ...]

    @property
    def total_cycles(self) -> int:
        return sum(s.cycles for s in self.streams)

    @property
    def breakdown(self) -> tuple[tuple[str, int], ...]:
        """Each engine's busy cycles (its streaming cycles and latency), summed over the streams."""
        return _summed((b.label, b.cost.cycles + b.cost.latency) for s in self.streams for b in s.busy)

    @property
    def bound_by(self) -> tuple[str, int] | None:
        """The engine that bounds the kernel, and the cycles it does: each stream's cycles are charged to
        the engine that bounds that stream."""
        return bounding(self.streams)


def _summed(items: Iterable[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    totals: dict[str, int] = {}
    for label, cycles in items:
        totals[label] = totals.get(label, 0) + cycles
    return tuple(totals.items())


def bounding(streams: Sequence[Span]) -> tuple[str, int] | None:
    """The engine charged the most cycles when each stream's are charged to its bounding engine."""
    charged = _summed((s.bound.label, s.cycles) for s in streams)
    return max(charged, key=lambda item: item[1], default=None)


def place(head: Sequence[StageCost], tail: Sequence[StageCost]) -> tuple[list[tuple[StageCost, int, int]], int]:
    """Each stage with its start and its length, the stream starting at 0, and the stream's end: the
    pipelined ``head``'s slowest stream plus all their latencies, then the slowest of the ``tail``."""
    placed: list[tuple[StageCost, int, int]] = []
    offset = slowest = 0
    for stage in head:
        # From its first input to its last output: no stage finishes before the slowest one upstream.
        slowest = max(slowest, stage.cycles)
        placed.append((stage, offset, slowest + stage.latency))
        offset += stage.latency
    drained = max((s.cycles for s in head), default=0) + offset
    placed += [(s, drained, s.cycles) for s in tail]
    return placed, drained + max((s.cycles for s in tail), default=0)


def _span(unit: str, head: Sequence[StageCost], tail: Sequence[tuple[StageCost, str]]) -> Span:
    placed, cycles = place(head, [cost for cost, _ in tail])
    units = [unit] * len(head) + [u for _, u in tail]
    busy = tuple(Busy(str(c.stage), u, str(c.stage), start, length, c) for (c, start, length), u in zip(placed, units))
    names = [b.name for b in busy]
    ends = names[0] if len(names) == 1 else f"{names[0]} -> {names[-1]}"
    return Span(DMA if all(u == DMA for u in units) else unit, ends, cycles, busy)


def _implied(name: str, unit: str, track: str, stage: Stage, cycles: int, note: str) -> Span:
    cost = StageCost(stage, cycles, 0, None, (note,))
    return Span(unit, name, cycles, (Busy(name, unit, track, 0, cycles, cost),))


# The stages that leave their stream's data in memory: what follows them reads it as a new stream.
_STORES: Final = frozenset({Stage.COMMIT, Stage.COMMIT_VIEW, Stage.TO_VRF, Stage.TO_TRF})


def _is_dma(step: Step) -> bool:
    return isinstance(step.params, DmaParams)


def _streams(steps: Sequence[Step]) -> list[tuple[Step, ...]]:
    """A flow's steps cut into streams: each ends with a store to memory, and a DMA move is one of its own
    (a move waits for the memory it reads to be written, and a stream for the move it reads)."""
    found: list[tuple[Step, ...]] = []
    current: list[Step] = []
    for step in steps:
        if _is_dma(step):
            found += [tuple(current), (step,)] if current else [(step,)]
            current = []
            continue
        current.append(step)
        if Stage(step.stage) in _STORES:
            found.append(tuple(current))
            current = []
    return found + [tuple(current)] if current else found


class _Walk:
    """Finds the streams behind a result, each once (``seen`` holds what an earlier kernel drew)."""

    def __init__(self, seen: set[int]) -> None:
        self.seen = seen
        self.found: list[tuple[int, int, Span]] = []

    def add(self, serial: int, span: Span) -> None:
        self.found.append((serial, len(self.found), span))

    def value(self, node: object) -> None:
        """A dependency: a flow, or a window, write or reshape of one."""
        if isinstance(node, Flow):
            self.flow(node)
        elif isinstance(node, Window):
            self.value(node.parent)
        elif isinstance(node, Written):
            self.value(node.parent)
            self.value(node.written)
        elif isinstance(node, Scattered):  # the data's flow with the scatter's DMA step, after what it writes into
            for part in (node.parent, node.index, node.moved):
                self.value(part)

    def flow(self, flow: Flow) -> None:
        """A flow's streams not drawn yet: a flow that continues a memory tensor shares its earlier steps."""
        if id(flow) in self.seen:
            return
        self.seen.add(id(flow))
        source = flow.root.source
        pipelined = isinstance(source, (Chain, VectorChain))
        if not pipelined:
            self.value(source)
        parts = _streams(flow.steps)
        if pipelined and (not parts or _is_dma(parts[0][0])):
            parts.insert(0, ())
        done = 0  # the steps up to this part: the context a stream runs in is the last one they began
        for number, part in enumerate(parts):
            done += len(part)
            head = pipelined and number == 0 and id(source) not in self.seen
            if (part and id(part[0]) in self.seen) or not (part or head):
                continue
            self.seen.update(id(step) for step in part)
            stages: tuple[StageCost, ...] = ()
            fed = None
            if head:
                self.seen.add(id(source))
                stages, fed = self.head(source, part[0].serial if part else flow.serial) or ((), None)
            began = (s.context for s in reversed(flow.steps[:done]) if s.context is not None)
            context = next(began, fed or "main")
            tail = []
            for step in part:
                cost = stream_stage_cost(Stage(step.stage), step.params, step.packets)
                tail.append((cost, DMA if _is_dma(step) else context))
            self.add(part[0].serial if part else flow.serial, _span(context, stages, tail))

    def feed(self, origin: object) -> str | None:
        """The stream a pipeline reads: its steps are the pipeline's own (their pace is the pipeline's first
        stage's), so only what it reads from is drawn. Returns its context."""
        if not isinstance(origin, Flow):
            return None
        if isinstance(origin.root.source, (Chain, VectorChain)):
            self.flow(origin)  # a pipeline's output read by another: drawn as a stream before it
        else:
            self.value(origin.root.source)
        return origin.context

    def head(self, source: object, serial: int) -> tuple[tuple[StageCost, ...], str | None] | None:
        """The pipelined stages a flow starts from (a contraction, a vector pass) and the context they read
        in, after drawing what they depend on; None for a flow that starts from memory."""
        if isinstance(source, Chain):
            return chain_cost(source).stages, self.chain(source, serial)
        if not isinstance(source, VectorChain):
            return None
        origin = source.source.origin
        if isinstance(origin, Chain):
            # A pass on a contraction's result starts once the contraction has drained (cost.stream_cost).
            context = self.chain(origin, serial)
            self.add(serial, _span(context or "main", chain_cost(origin).stages, ()))
            before: tuple[StageCost, ...] = ()
        else:
            before, context = self.head(origin, serial) or ((), self.feed(origin))
        for step in source.steps:
            for operand in step.operands:
                if isinstance(operand, VrfValues):
                    self.value(operand.origin)
        found = vector_stages(source)
        return (*before, *(found[1].stages if found is not None else ())), context

    def chain(self, chain: Chain, serial: int) -> str | None:
        """A contraction's dependencies: what its stream reads, and the stream that loaded its TRF or, with
        none recorded, the whole kernel's weight DMA and TRF load."""
        context = self.feed(chain.stream.origin)
        load = chain.weight.origin
        if isinstance(load, Flow):
            self.flow(load)
        elif id(chain.weight) not in self.seen:
            self.seen.add(id(chain.weight))
            dma, fetch = chain_weight_load(chain)
            self.add(serial, _implied(WEIGHT_DMA, DMA, str(Stage.TO_DM), Stage.TO_DM, dma,
                                      "the weights from HBM to DM (the whole kernel's assumption)"))
            self.add(serial, _implied(TRF_LOAD, "sub", str(Stage.FETCH), Stage.FETCH, fetch,
                                      "DM to TRF on the sub context (the whole kernel's assumption)"))
        return context

    def result(self, chain: Chain) -> None:
        """A contraction that is the kernel's result, committed beside its Lane Folder."""
        if id(chain) in self.seen:
            return
        self.seen.add(id(chain))
        stages = chain_cost(chain).stages
        context = self.chain(chain, LAST) or "main"
        if chain.lane_time is not None:
            commit = result_commit_cycles(chain.lane_time.size)
            stages += (StageCost(Stage.COMMIT, commit, 0, None, ("one write per result packet, beside the Lane Folder",)),)
        self.add(LAST, _span(context, stages, ()))


def schedule_of(result: object, seen: set[int] | None = None) -> Schedule | None:
    """The streams behind ``result`` (a kernel's output tensor, or a tuple of them) in the order they were
    recorded, leaving out those in ``seen`` (and adding those drawn); None when it was built from none."""
    walk = _Walk(set() if seen is None else seen)
    for part in result if isinstance(result, tuple) else (result,):
        chain, flow = getattr(part, "chain", None), getattr(part, "flow", None)
        if isinstance(chain, Chain):
            walk.result(chain)
        elif isinstance(flow, Flow):
            walk.flow(flow)
    if not walk.found:
        return None
    return Schedule(tuple(span for _, _, span in sorted(walk.found, key=lambda found: found[:2])))
