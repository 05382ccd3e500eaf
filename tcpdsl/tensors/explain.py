"""Plain-text explanations of pipeline tensors: their layouts and each stage's derived parameters."""

from __future__ import annotations

import numpy as np

from tcpdsl.algebra import pairs
from tcpdsl.cost import chain_cost, describe
from tcpdsl.numerics.chain import Chain
from tcpdsl.tensors.subscription import Spec
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.placement import plan
from tcpdsl.verify import TrfParams


def _layouts(spec: Spec) -> str:
    return " | ".join(f"{name} {m}" for name, m in zip(spec.family.layouts, spec.layouts))


def describe_source(spec: Spec, tensor: Tensor, trf: TrfParams | None) -> str:
    """A collected stream or TRF: its layouts, the logical tensor, and how full the buffer is."""
    full = pairs(list(spec.layouts))
    live = int(np.count_nonzero(plan(full).live))
    dims = " ".join(f"{a}={tensor.sizes[a]}" for a in tensor.axes)
    lines = [
        f"{spec.family.name}[{spec.dtypes[0].name}]  {_layouts(spec)}",
        f"  logical tensor {dims or '(scalar)'}; {full.size} physical cells, {live} live",
    ]
    if trf is not None:
        lines.append(f"  to_trf: {trf.bytes_per_lane} bytes per lane, {trf.total_bytes} bytes in total")
    return "\n".join(lines)


def describe_chain(spec: Spec, chain: Chain) -> str:
    """Every stage present in ``chain`` with the parameters its verifier derived, then the cost estimate."""
    outer = chain.outer
    read = "wide" if outer.wide_read else "narrow"
    lines = [
        f"{spec.family.name}[{spec.dtypes[0].name}]  {_layouts(spec)}",
        f"  stream {chain.stream.dtype} [Time {chain.time} | Packet {chain.packet}]"
        f" x TRF {chain.weight.dtype} [Lane {chain.lane} | Element {chain.element}], accumulating in {chain.acc}",
        f"  contract_outer -> Time {chain.outer_time} | Packet {chain.outer_packet}: PackSize {outer.pack_size},"
        f" LaneBroadcast {outer.lane_broadcast}, TimeBroadcast {outer.time_broadcast},"
        f" ReadSize {outer.read_size} ({read} read), PacketBroadcast {outer.packet_broadcast}",
    ]
    if chain.packet_params is not None:
        p = chain.packet_params
        lines.append(
            f"  contract_packet -> Packet {chain.packet_out}: tree depth {p.depth} (sums {2 ** p.depth} cells),"
            f" ReducePacket {p.reduce_packet}"
        )
    if chain.time_params is not None:
        t = chain.time_params
        reduced = ", ".join(t.reduced) if t.reduced else "nothing"
        lines.append(f"  contract_time -> Time {chain.time_out}: reduces {reduced}")
    if chain.lane_params is not None:
        q = chain.lane_params
        lines.append(
            f"  contract_lane ({q.mode}) -> Time {chain.lane_time} | Packet {chain.lane_packet}: InnerTime {q.inner_time},"
            f" accumulator padded Lane {q.padded_lane} x InnerTime {q.inner_time} x padded Packet {q.padded_packet}"
            f" = {q.cells} of 1024 cells"
        )
    lines.append("  estimate (per slice):")
    lines += ["    " + line for line in describe(chain_cost(chain)).splitlines()]
    return "\n".join(lines)
