"""``contract_lane``: the Lane Folder and the accumulator capacity (docs/stage-rules.md §2.7)."""

from __future__ import annotations

from typing import Final

from tcpdsl.algebra import Mapping, PaddingKind, Pair, divide_exact, normalize, padding_per_stride, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.constants import (
    ACCUMULATOR_CAPACITY_ELEMENTS,
    CONTRACT_LANE_OUT_PACKET_ELEMENTS,
    MAX_LANES,
    SEQUENTIAL_PACKET_ALIGN,
    TEMPORAL_ACCUMULATOR_COLS,
    align_up,
)
from tcpdsl.verify.lane_mode import LaneMode
from tcpdsl.verify.params import LaneParams
from tcpdsl.verify.lane_size import check_lane_size
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.CONTRACT_LANE
_OUT: Final = CONTRACT_LANE_OUT_PACKET_ELEMENTS


@memoized
def verify_contract_lane(
    *,
    lane: Mapping,
    time: Mapping,
    packet: Mapping,
    out_time: Mapping,
    out_packet: Mapping,
    pre_reduce_time: Mapping,
    mode: LaneMode,
) -> LaneParams:
    """Check the lane relayout into ``[OutTime, OutPacket]`` and that ``[Lane, Packet]`` slots fit the buffer."""
    if packet.size > TEMPORAL_ACCUMULATOR_COLS:
        raise LayoutError(
            STAGE,
            "PacketTooWide",
            f"contract_lane: Packet::SIZE must be at most 32, got {packet.size}",
            hint=f"reduce Packet {packet} to at most 32 cells in contract_packet",
        )
    if out_packet.size != _OUT:
        raise LayoutError(
            STAGE,
            "OutPacketSize",
            f"contract_lane: OutPacket::SIZE must be 8, got {out_packet.size}",
            hint=f"OutPacket is one flit of 8 accumulators; pad OutPacket {out_packet} with `# 8`",
        )

    if mode is LaneMode.INTERLEAVED:
        # The value-level `padding` refuses a Lane wider than 8; report that as the Lane rule.
        if lane.size > MAX_LANES:
            check_lane_size(STAGE, lane)
        expected = normalize(lane.padding(_OUT, PaddingKind.TOP))
        if out_packet != expected:
            raise _out_packet_mismatch(mode, expected, out_packet, "Interleaved puts [Lane # 8] in OutPacket")
        outer_time = _split_inner_time(mode, out_time, packet)
    else:
        padded = packet.padding(align_up(packet.size, _OUT), PaddingKind.TOP)
        packet_outer, packet_inner = split_at(padded, _OUT)
        if packet_inner != out_packet:
            why = "Sequential puts the innermost 8 Packet cells in OutPacket"
            raise _out_packet_mismatch(mode, packet_inner, out_packet, why)
        outer_time = _split_inner_time(mode, out_time, Pair(lane, packet_outer))

    if outer_time != time:
        raise LayoutError(
            STAGE,
            "OuterTimeMismatch",
            f"contract_lane ({mode}): OutTime mismatch. Outer portion of OutTime must equal Time: expected {time}, "
            f"got {outer_time}",
            hint=f"start OutTime with the reduced Time {time}",
        )

    inner_time = _inner_time(mode, pre_reduce_time, time)
    if mode is LaneMode.INTERLEAVED:
        padded_lane, padded_packet = align_up(lane.size, _OUT), packet.size
    else:
        padded_lane, padded_packet = lane.size, align_up(packet.size, SEQUENTIAL_PACKET_ALIGN)
    cells = padded_lane * inner_time * padded_packet
    if cells > ACCUMULATOR_CAPACITY_ELEMENTS:
        raise LayoutError(
            STAGE,
            "BufferExceeded",
            f"contract_lane ({mode}): the [Lane, Packet] accumulator buffer overflows: padded Lane {padded_lane} * "
            f"InnerTime {inner_time} * padded Packet {padded_packet} = {cells} exceeds the "
            f"{ACCUMULATOR_CAPACITY_ELEMENTS}-cell accumulator",
            hint="reduce the outermost Time axes instead of inner ones (so fewer kept axes sit inside a reduced one), "
            "use fewer lanes, or a narrower packet",
        )
    return LaneParams(
        mode=mode, inner_time=inner_time, padded_lane=padded_lane, padded_packet=padded_packet, cells=cells
    )


def _out_packet_mismatch(mode: LaneMode, expected: Mapping, got: Mapping, why: str) -> LayoutError:
    return LayoutError(
        STAGE,
        "OutPacketMismatch",
        f"contract_lane ({mode}): OutPacket mismatch. Expected: {expected}, got: {got}",
        hint=f"declare OutPacket as {expected}: {why}",
    )


def _split_inner_time(mode: LaneMode, out_time: Mapping, inner: Mapping) -> Mapping:
    """OutTime without its innermost ``inner`` cells, which must be exactly ``inner``."""
    if out_time.size % inner.size:
        got = out_time
    else:
        outer, got = split_at(out_time, inner.size)
        if got == inner:
            return outer
    raise LayoutError(
        STAGE,
        "OutTimeMismatch",
        f"contract_lane ({mode}): OutTime mismatch. Expected {inner}, got {got}",
        hint=f"end OutTime with {inner}",
    )


def _inner_time(mode: LaneMode, pre_reduce_time: Mapping, time: Mapping) -> int:
    """How many kept Time cells sit inside the outermost reduced axis (each needs its own slot)."""
    try:
        terms = divide_exact(pre_reduce_time, time)
    except LayoutError:
        raise LayoutError(
            STAGE,
            "InconsistentReduceTime",
            f"contract_lane ({mode}): inconsistent pre/post reduce Time: {pre_reduce_time}, {time}",
            hint="pass the OutTime of contract_outer and the OutTime of contract_time",
        ) from None
    extents = padding_per_stride(pre_reduce_time)
    bounds = [
        (t.dividend_stride, t.divisor_stride, extents[t.dividend_stride]) for t in terms if t.dividend_stride in extents
    ]
    if not bounds:
        return 1
    start, _, extent = bounds[0]
    if start * extent < pre_reduce_time.size:
        return time.size
    for (outer_start, outer_divisor, _), (inner_start, _, inner_extent) in zip(bounds, bounds[1:]):
        if inner_start * inner_extent != outer_start:
            return outer_divisor
    return 1
