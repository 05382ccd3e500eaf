"""``collect``: any packet becomes exactly one 32-byte flit (docs/stage-rules.md §4.5).

The packet is Top-padded up to a whole number of flits; its innermost flit is the new packet and
the flit count moves to the inner end of Time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import Mapping, PaddingKind, Pair, normalize, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.memory import check_grid, stream_bits
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.COLLECT
FLIT_BITS: Final = 256


@dataclass(frozen=True)
class CollectParams:
    """``flits`` flits per input packet; the outer ``flits`` cells join Time."""

    flits: int
    flit_elements: int


def flit_elements(stage: str, dtype: str) -> int:
    return FLIT_BITS // stream_bits(stage, dtype)


@memoized
def verify_collect(
    dtype: str,
    *,
    cluster: Mapping,
    slice_: Mapping,
    time: Mapping,
    packet: Mapping,
    out_time: Mapping,
    out_packet: Mapping,
) -> CollectParams:
    """Check ``collect(out_time=, out_packet=)``: ``ClusterSize``, ``SliceSize``, ``OutputNotOneFlit``,
    ``PacketMismatch``, ``TimeMismatch``."""
    per_flit = flit_elements(STAGE, dtype)
    check_grid(STAGE, cluster, slice_)
    if out_packet.size != per_flit:
        raise LayoutError(
            STAGE,
            "OutputNotOneFlit",
            f"collect: the output packet must be exactly one flit (32 bytes, {per_flit} elements of {dtype}), "
            f"got {out_packet.size} elements (OutPacket {out_packet})",
            hint=f"declare an OutPacket of {per_flit} elements, padding with `# {per_flit}` if needed",
        )
    flits = -(-packet.size // per_flit)
    outer, flit = split_at(packet.padding(flits * per_flit, PaddingKind.TOP), per_flit)
    if normalize(out_packet) != normalize(flit):
        raise LayoutError(
            STAGE,
            "PacketMismatch",
            f"collect: packet mismatch: Packet {packet} padded to whole flits gives the flit {normalize(flit)}, "
            f"got OutPacket {out_packet}",
            hint=f"declare out_packet={normalize(flit)}",
        )
    expected = normalize(Pair(time, outer))
    if normalize(out_time) != expected:
        raise LayoutError(
            STAGE,
            "TimeMismatch",
            f"collect: time mismatch: Time {time} followed by the packet's outer flits gives {expected}, "
            f"got OutTime {out_time}",
            hint=f"declare out_time={expected}",
        )
    return CollectParams(flits=flits, flit_elements=per_flit)
