"""``to_vrf``: store a collected stream into the vector register file (docs/stage-rules.md §4.6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import Bcast, Mapping, Pair, slots_of
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.memory import bytes_of, stream_bits
from tcpdsl.verify.sequencer import Unmatched, pieces
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.TO_VRF
VRF_BYTES: Final = 8192
VECTOR_DTYPES: Final = ("i32", "f32")


@dataclass(frozen=True)
class VrfParams:
    bytes: int


@memoized
def verify_to_vrf(dtype: str, *, time: Mapping, packet: Mapping, element: Mapping) -> VrfParams:
    """Check ``to_vrf(element=)`` from ``[Time, Packet]``: ``Dtype``, ``ExceedsCapacity``, ``NoBroadcast``."""
    if dtype not in VECTOR_DTYPES:
        stream_bits(STAGE, dtype)
        raise DtypeError(
            STAGE,
            "Dtype",
            f"to_vrf: the vector register file holds i32 or f32, got {dtype}",
            hint="fetch_cast the stream to i32 or f32 before collect",
        )
    held = bytes_of(stream_bits(STAGE, dtype), element.size)
    if held > VRF_BYTES:
        raise LayoutError(
            STAGE,
            "ExceedsCapacity",
            f"to_vrf: VRF data of {held} bytes (Element {element} of {dtype}) exceeds the vector register file "
            f"capacity of {VRF_BYTES} bytes per slice",
            hint="store a smaller part of the tensor per slice, e.g. a tile view per pass",
        )
    stream = Pair(time, packet)
    broadcast = any(isinstance(slot.live, Bcast) for slot in slots_of(element))
    try:
        pieces(stream, element, dummy_stride=None)
    except Unmatched:
        broadcast = True
    if broadcast:
        raise LayoutError(
            STAGE,
            "NoBroadcast",
            f"to_vrf: every live cell of Element {element} must come from a cell of the stream [{time}][{packet}]; "
            "a store cannot broadcast",
            hint="name in Element only the axis digits the stream holds; broadcast the VRF operand at its use",
        )
    return VrfParams(bytes=held)
