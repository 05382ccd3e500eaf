"""One row per stage of a contraction chain or a stream: its output layout, derived parameters and cost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from tcpdsl.cost import KernelCost, StageCost, chain_cost, combine, stream_cost, stream_params, stream_stage_cost
from tcpdsl.numerics.chain import Chain
from tcpdsl.numerics.flow import Flow, Scattered, Window, Written
from tcpdsl.numerics.vector_chain import VectorChain, VrfValues
from tcpdsl.tensors.vector import pass_cost
from tcpdsl.verify.stage import Stage

# The stages whose costs pipeline with latencies (``cost.combine``): a stream's other engines run after them.
PIPELINED: Final = frozenset({Stage.CONTRACT_OUTER, Stage.CONTRACT_PACKET, Stage.CONTRACT_TIME, Stage.CONTRACT_LANE,
                              Stage.VECTOR_FINAL})


@dataclass(frozen=True)
class StageRow:
    """A stage as the report shows it; ``params`` holds JSON-ready values."""

    stage: Stage
    layout: str
    params: dict[str, Any]
    cost: StageCost

    def params_text(self) -> str:
        """``Key value, ...``; a read width follows its ReadSize, and an empty list reads "none"."""
        parts: list[str] = []
        for key, value in self.params.items():
            if key == "WideRead":
                parts[-1] += " (wide)" if value else " (narrow)"
            elif isinstance(value, list):
                parts.append(f"{key} {', '.join(map(str, value)) if value else 'none'}")
            else:
                parts.append(f"{key} {value}")
        return ", ".join(parts)


def chain_stages(chain: Chain) -> tuple[tuple[StageRow, ...], KernelCost]:
    """The rows of every stage present in ``chain``, and the chain's total cost."""
    cost = chain_cost(chain)
    by_stage = {stage.stage: stage for stage in cost.stages}
    rows: list[StageRow] = []

    def add(stage: Stage, layout: str, params: dict[str, Any]) -> None:
        rows.append(StageRow(stage, layout, params, by_stage[stage]))

    outer = chain.outer
    add(
        Stage.CONTRACT_OUTER,
        f"Lane {chain.lane} | Time {chain.outer_time} | Packet {chain.outer_packet}",
        {
            "PackSize": outer.pack_size,
            "LaneBroadcast": outer.lane_broadcast,
            "TimeBroadcast": str(outer.time_broadcast),
            "ReadSize": outer.read_size,
            "WideRead": outer.wide_read,
            "PacketBroadcast": outer.packet_broadcast,
        },
    )
    if chain.packet_params is not None and chain.packet_out is not None:
        p = chain.packet_params
        add(Stage.CONTRACT_PACKET, f"Packet {chain.packet_out}", {"TreeDepth": p.depth, "ReducePacket": str(p.reduce_packet)})
    if chain.time_params is not None and chain.time_out is not None:
        add(Stage.CONTRACT_TIME, f"Time {chain.time_out}", {"Reduced": list(chain.time_params.reduced)})
    if chain.lane_params is not None and chain.lane_time is not None:
        q = chain.lane_params
        add(
            Stage.CONTRACT_LANE,
            f"Time {chain.lane_time} | Packet {chain.lane_packet}",
            {"Mode": q.mode.value, "InnerTime": q.inner_time, "AccumulatorCells": q.cells},
        )
    return tuple(rows), cost


def flow_stages(flow: Flow) -> tuple[tuple[StageRow, ...], KernelCost]:
    """The rows of a stream's engines (after those of the chain it starts from) and its total cost."""
    source = flow.root.source
    chain = chain_stages(source) if isinstance(source, Chain) else vector_stages(source) if isinstance(source, VectorChain) else None
    costs = tuple(stream_stage_cost(Stage(s.stage), s.params, s.packets) for s in flow.steps)
    rows = [StageRow(Stage(s.stage), s.layout, dict(stream_params(s.params)), c) for s, c in zip(flow.steps, costs)]
    total = stream_cost(costs, chain[1] if chain is not None else None)
    return (*(chain[0] if chain is not None else ()), *rows), total


def vector_stages(chain: VectorChain) -> tuple[tuple[StageRow, ...], KernelCost] | None:
    """A finished vector pass as one row, named for its ``vector_final``: its cycles are the pass's
    (docs/cost-model.md, "The vector engine"), its latency the ALUs and reduces before the first output."""
    if not chain.steps:
        return None
    state = chain.steps[-1].step.state
    cost = pass_cost(chain, state)
    stage = StageCost(Stage.VECTOR_FINAL, cost.cycles, cost.latency, None, cost.notes)
    steps = " -> ".join(str(step.stage).removeprefix("vector_") for step in chain.steps)
    row = StageRow(Stage.VECTOR_FINAL, f"pass {steps}", {}, stage)
    return (row,), combine((stage,), 0, None)


def bound_by(cost: KernelCost) -> StageCost | None:
    """The engine that bounds a kernel: the one streaming the most cycles (the first of a tie); the
    others overlap with it (docs/trace.md)."""
    return max(cost.stages, key=lambda stage: stage.cycles, default=None)


@dataclass(frozen=True)
class PassRow:
    """One vector pass a result went through, with its cost on one slice."""

    steps: int
    cycles: int
    latency: int
    in_table: bool = False  # the pass the stage table shows as its vector_final row


def vector_passes(*results: object, shown: object = None) -> tuple[PassRow, ...]:
    """Every vector pass the ``results`` depend on (their own, those their inputs and VRF operands came from),
    in the order they run, each once; the pass ``shown`` is the one the stage table already holds."""
    found: dict[int, VectorChain] = {}

    def visit(node: object) -> None:
        if isinstance(node, Flow):
            visit(node.root.source)
        elif isinstance(node, (Window, Written)):
            visit(node.parent)
            if isinstance(node, Written):
                visit(node.written)
        elif isinstance(node, Scattered):
            for part in (node.parent, node.data, node.index):
                visit(part)
        elif isinstance(node, VectorChain) and id(node) not in found:
            visit(node.source.origin)
            for step in node.steps:
                for operand in step.operands:
                    if isinstance(operand, VrfValues):
                        visit(operand.origin)
            found[id(node)] = node

    for result in results:
        visit(getattr(result, "flow", None))
        visit(getattr(result, "chain", None))
    rows = []
    for chain in found.values():
        cost = pass_cost(chain, chain.steps[-1].step.state)
        rows.append(PassRow(len(chain.steps), cost.cycles, cost.latency, chain is shown))
    return tuple(rows)


def reduced_contraction(flow: Flow) -> Chain | None:
    """The contraction a kernel's result took one vector pass straight after (a split reduction's
    inter-slice reduce, docs/search.md §5); None for any other result."""
    source = flow.root.source
    if not isinstance(source, VectorChain) or not source.steps:
        return None
    origin = source.source.origin
    if not isinstance(origin, Chain) or origin.lane_time is None:
        return None
    return origin
