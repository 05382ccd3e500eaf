"""``contract_packet``: the Packet Reducer (docs/stage-rules.md §2.5)."""

from __future__ import annotations

from typing import Final

from tcpdsl.algebra import Mapping, normalize, remove_padding, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.constants import BITS_PER_BYTE, TEMPORAL_ACCUMULATOR_COLS
from tcpdsl.verify.dtypes import bits_of, bytes_text
from tcpdsl.verify.params import PacketParams
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.CONTRACT_PACKET


def _trailing_zeros(n: int) -> int:
    return (n & -n).bit_length() - 1


def _reduced(packet: Mapping, depth: int) -> tuple[Mapping, Mapping]:
    """``(Packet / 2**depth, the same without its outermost padding)``."""
    outer = split_at(packet, 1 << depth)[0]
    return outer, remove_padding(normalize(outer))


@memoized
def verify_contract_packet(storage_dtype: str, *, packet: Mapping, out_packet: Mapping) -> PacketParams:
    """Find the adder-tree depth that reduces ``packet`` to ``out_packet``."""
    bits = bits_of(storage_dtype, STAGE)
    packet_bits = packet.size * bits
    if packet_bits not in (32 * BITS_PER_BYTE, 64 * BITS_PER_BYTE):
        raise LayoutError(
            STAGE,
            "InvalidPacketSize",
            f"Packet must be 32 or 64 bytes, got {bytes_text(bits, packet.size)} bytes",
            hint=f"contract_packet takes the 32- or 64-byte OutPacket of contract_outer; Packet {packet} holds "
            f"{packet.size} elements of {storage_dtype}",
        )

    n = out_packet.size
    if n > TEMPORAL_ACCUMULATOR_COLS:
        raise LayoutError(
            STAGE,
            "OutPacketTooWide",
            f"OutPacket::SIZE must be at most 32, got {n}",
            hint=f"reduce deeper: OutPacket {out_packet} must keep at most 32 of the outer cells of Packet {packet}",
        )
    if n & (n - 1):
        raise LayoutError(
            STAGE,
            "OutPacketNotPow2",
            f"OutPacket::SIZE must be a power of two, got {n}",
            hint=f"OutPacket must be Packet {packet} divided by a power of two",
        )

    target = remove_padding(normalize(out_packet))
    candidates = [_reduced(packet, d) for d in range(_trailing_zeros(packet.size) + 1)]
    for depth, (outer, kept) in enumerate(candidates):
        if kept == target:
            return PacketParams(depth=depth, reduce_packet=outer, output=kept)
    valid = ", ".join(str(kept) for _, kept in candidates if kept.size <= TEMPORAL_ACCUMULATOR_COLS)
    raise LayoutError(
        STAGE,
        "NotAContraction",
        f"OutPacket {target} is not a valid contraction of Packet {packet}",
        hint=f"the reducer sums the innermost 2^d cells and keeps the outer ones; choose one of: {valid}",
    )
