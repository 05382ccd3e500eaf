"""``contract_outer``, streaming side: the Stream Adapter (docs/stage-rules.md §2.3)."""

from __future__ import annotations

from typing import Final

from tcpdsl.algebra import Mapping, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.constants import FLIT_BITS
from tcpdsl.verify.dtypes import bytes_text, flit_elements
from tcpdsl.verify.params import StreamAdapterParams
from tcpdsl.verify.lane_size import check_lane_size
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.CONTRACT_OUTER


def check_stream_adapter(
    dtype: str, bits: int, *, time: Mapping, packet: Mapping, lane: Mapping, out_time: Mapping, out_packet: Mapping
) -> StreamAdapterParams:
    """Pack 1 or 2 flits of the stream into OutPacket, then broadcast it over Lane and the tiling axes."""
    check_lane_size(STAGE, lane)

    fe = flit_elements(bits)
    out_bits = out_packet.size * bits
    if out_bits % FLIT_BITS or out_bits // FLIT_BITS not in (1, 2):
        raise LayoutError(
            STAGE,
            "OutPacketFlits",
            f"OutPacket must be 1 or 2 flits (32 bytes each), got {bytes_text(bits, out_packet.size)} bytes",
            hint=f"make OutPacket {fe} or {2 * fe} elements of {dtype} (OutPacket {out_packet} has {out_packet.size})",
        )
    pack = out_bits // FLIT_BITS

    op_packed, op_flit = split_at(out_packet, fe)
    if op_flit != packet:
        raise LayoutError(
            STAGE,
            "FlitMismatch",
            "`contract_outer`: inner flit of OutPacket must equal the input Packet",
            hint=f"make the innermost {fe} elements of OutPacket equal the Packet {packet} "
            f"(OutPacket {out_packet} has {op_flit} there)",
        )

    # The reference splits Time at `pack` unchecked; an odd Time cannot give up 2 packed cells.
    if time.size % pack:
        raise _packed_cells_mismatch(
            pack,
            f"Time {time} has an odd size ({time.size}) and cannot pack 2 flits per packet; "
            f"use a {fe}-element OutPacket or make Time even",
        )
    time_outer, time_packed = split_at(time, pack)
    if op_packed != time_packed:
        raise _packed_cells_mismatch(
            pack,
            f"make the outer {pack} cells of OutPacket {time_packed} (the innermost {pack} cells of Time {time}); "
            f"OutPacket {out_packet} has {op_packed} there",
        )

    if out_time.size % time_outer.size:
        raise LayoutError(
            STAGE,
            "TimeIndivisible",
            "`contract_outer`: Time does not divide OutTime",
            hint=f"OutTime must be [{time_outer}, broadcast axes]: its size {out_time.size} must be a multiple of "
            f"{time_outer.size}",
        )

    tiling = out_time.size // time_outer.size
    ot_outer, broadcast = split_at(out_time, tiling)
    if ot_outer != time_outer:
        raise LayoutError(
            STAGE,
            "OutTimeMismatch",
            "`contract_outer`: OutTime must be the outer Time with broadcast (tiling) axes innermost",
            hint=f"start OutTime with {time_outer} and put the broadcast axes after it; OutTime {out_time} "
            f"starts with {ot_outer}",
        )

    return StreamAdapterParams(
        pack_size=pack, lane_broadcast=lane.size, time_outer=time_outer, time_broadcast=broadcast
    )


def _packed_cells_mismatch(pack: int, hint: str) -> LayoutError:
    """The one packing rule, reached when Time cannot split (odd size) and when it splits differently."""
    return LayoutError(
        STAGE,
        "PackedCellsMismatch",
        f"`contract_outer`: OutPacket's packed cells must equal the innermost {pack} cells of Time",
        hint=hint,
    )
