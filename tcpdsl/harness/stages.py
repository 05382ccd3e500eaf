"""One row per stage of a contraction chain: its output layout, derived parameters and cost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tcpdsl.cost import KernelCost, StageCost, chain_cost
from tcpdsl.numerics.chain import Chain
from tcpdsl.verify.stage import Stage


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
