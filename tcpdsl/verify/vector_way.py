"""Narrow and widen: the vector engine's moves between Way8 and Way4 (docs/stage-rules.md §6.2).

A Way8 packet is one flit of eight 32-bit elements; the Fp cluster and the reduces work on its
front four (Way4). ``vector_narrow_split`` folds the back four onto Time, ``vector_narrow_trim``
drops them when they are padding; ``vector_widen_concat`` and ``vector_widen_pad`` undo each.
Rules run in the order written in each function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import IDENTITY, Mapping, PaddingKind, Pair, normalize, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.stage import Stage

ONE_FLIT: Final = 8
HALF_FLIT: Final = 4
# A concat folds this many inner Time cells into the packet.
CONCAT_TIME: Final = 2
_BACK_HALF_DUMMY: Final = IDENTITY.padding(ONE_FLIT // HALF_FLIT, PaddingKind.TOP)


@dataclass(frozen=True)
class WayParams:
    """The stream after the move, and whether the hardware runs an op for it (trim and pad are bookkeeping)."""

    out_time: Mapping
    out_packet: Mapping
    way: int
    emits_op: bool


@memoized
def verify_vector_narrow_split(*, time: Mapping, packet: Mapping, out_time: Mapping, out_packet: Mapping) -> WayParams:
    """``[Time, Packet(8)] -> [[Time, back 4 of Packet], front 4 of Packet]``."""
    stage = Stage.VECTOR_NARROW_SPLIT
    if packet.size != ONE_FLIT:
        raise LayoutError(
            stage,
            "SplitRequiresOneFlit",
            f"{stage}: the input Packet must hold 8 elements (one flit), got {packet.size} in {packet}",
            hint="narrow a Way8 stream; a Way4 stream is already narrow",
        )
    back, front = split_at(packet, HALF_FLIT)
    expected_time = normalize(Pair(time, back))
    if out_time != expected_time:
        raise LayoutError(
            stage,
            "SplitTimeMismatch",
            f"{stage}: OutTime must be Time followed by the back half of Packet: expected {expected_time}, "
            f"got {out_time}",
            hint=f"declare out_time as {expected_time}",
        )
    if out_packet.size != HALF_FLIT:
        raise LayoutError(
            stage,
            "SplitOutputSize",
            f"{stage}: OutPacket must hold 4 elements (the front half of the flit), got {out_packet.size} in "
            f"{out_packet}",
            hint="declare a 4-element out_packet",
        )
    if out_packet != front:
        raise LayoutError(
            stage,
            "SplitPacketMismatch",
            f"{stage}: OutPacket must be the front half of Packet: expected {front}, got {out_packet}",
            hint=f"declare out_packet as {front}",
        )
    return WayParams(out_time=expected_time, out_packet=front, way=HALF_FLIT, emits_op=True)


@memoized
def verify_vector_narrow_trim(*, time: Mapping, packet: Mapping, out_packet: Mapping) -> WayParams:
    """``Packet(8) -> front 4 of Packet`` when the back four are padding; Time is unchanged."""
    stage = Stage.VECTOR_NARROW_TRIM
    if packet.size != ONE_FLIT:
        raise LayoutError(
            stage,
            "TrimInputSize",
            f"{stage}: the input Packet must hold 8 elements (one flit), got {packet.size} in {packet}",
            hint="trim a Way8 stream only; a Way4 stream needs no trim",
        )
    back, front = split_at(packet, HALF_FLIT)
    if back != _BACK_HALF_DUMMY:
        raise LayoutError(
            stage,
            "TrimBackNotDummy",
            f"{stage}: the back half of Packet must be pure padding (1 # 2) to be dropped, but it holds {back}",
            hint="use vector_narrow_split, which moves the back half onto Time",
        )
    if out_packet.size != HALF_FLIT:
        raise LayoutError(
            stage,
            "TrimOutputSize",
            f"{stage}: OutPacket must hold 4 elements (the front half of the flit), got {out_packet.size} in "
            f"{out_packet}",
            hint="declare a 4-element out_packet",
        )
    if out_packet != front:
        raise LayoutError(
            stage,
            "TrimPacketMismatch",
            f"{stage}: OutPacket must be the front half of Packet: expected {front}, got {out_packet}",
            hint=f"declare out_packet as {front}",
        )
    return WayParams(out_time=time, out_packet=front, way=HALF_FLIT, emits_op=False)


@memoized
def verify_vector_widen_concat(*, time: Mapping, packet: Mapping, out_time: Mapping,
                               out_packet: Mapping) -> WayParams:
    """``[[Time, t2], Packet(4)] -> [Time, [t2, Packet]]``: the inner 2 Time cells join the packet."""
    stage = Stage.VECTOR_WIDEN_CONCAT
    if packet.size != HALF_FLIT:
        raise LayoutError(
            stage,
            "ConcatRequiresWay4",
            f"{stage}: the input Packet must hold 4 elements (Way4), got {packet.size} in {packet}",
            hint="concat a Way4 stream, after a narrow",
        )
    if out_packet.size != ONE_FLIT:
        raise LayoutError(
            stage,
            "ConcatOutputSize",
            f"{stage}: OutPacket must hold 8 elements (one flit), got {out_packet.size} in {out_packet}",
            hint="declare an 8-element out_packet: the inner 2 Time cells then Packet",
        )
    if time.size % CONCAT_TIME:
        raise LayoutError(
            stage,
            "ConcatTimeMismatch",
            f"{stage}: Time must have an even size to give its inner 2 cells to the packet, got {time.size} in "
            f"{time}",
            hint="narrow with vector_narrow_split (which doubles Time) or pad Time to an even size",
        )
    outer, inner = split_at(time, CONCAT_TIME)
    if out_time != outer:
        raise LayoutError(
            stage,
            "ConcatTimeMismatch",
            f"{stage}: OutTime must be Time without its inner 2 cells: expected {outer}, got {out_time}",
            hint=f"declare out_time as {outer}",
        )
    expected = normalize(Pair(inner, packet))
    if out_packet != expected:
        raise LayoutError(
            stage,
            "ConcatPacketMismatch",
            f"{stage}: OutPacket must be the inner 2 Time cells followed by Packet: expected {expected}, "
            f"got {out_packet}",
            hint=f"declare out_packet as {expected}",
        )
    return WayParams(out_time=outer, out_packet=expected, way=ONE_FLIT, emits_op=True)


@memoized
def verify_vector_widen_pad(*, time: Mapping, packet: Mapping, out_packet: Mapping) -> WayParams:
    """``Packet(4) -> Packet # 8``: the back four come back as padding; Time is unchanged."""
    stage = Stage.VECTOR_WIDEN_PAD
    if packet.size != HALF_FLIT:
        raise LayoutError(
            stage,
            "PadInputSize",
            f"{stage}: the input Packet must hold 4 elements (Way4), got {packet.size} in {packet}",
            hint="pad a Way4 stream, after vector_narrow_trim",
        )
    if out_packet.size != ONE_FLIT:
        raise LayoutError(
            stage,
            "PadOutputSize",
            f"{stage}: OutPacket must hold 8 elements (one flit), got {out_packet.size} in {out_packet}",
            hint="declare out_packet as Packet padded with `# 8`",
        )
    expected = normalize(packet.padding(ONE_FLIT, PaddingKind.TOP))
    if out_packet != expected:
        raise LayoutError(
            stage,
            "PadPacketMismatch",
            f"{stage}: OutPacket must be Packet padded to 8: expected {expected}, got {out_packet}",
            hint=f"declare out_packet as {expected}",
        )
    return WayParams(out_time=time, out_packet=expected, way=ONE_FLIT, emits_op=False)

