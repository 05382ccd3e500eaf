"""``cast``: the cast engine narrows one flit and pads it back to one flit (docs/stage-rules.md §4.7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import Mapping, PaddingKind, normalize
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.memory import stream_bits
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.CAST
FLIT_BITS: Final = 256
# Input dtype -> the narrower dtypes the cast engine produces from it.
CAST_PAIRS: Final[dict[str, tuple[str, ...]]] = {
    "i32": ("i4", "i8", "i16"),
    "f32": ("f8e5m2", "f8e4m3", "bf16"),
}


@dataclass(frozen=True)
class CastParams:
    """``valid`` live elements of the input flit land in an output flit of ``out_elements``."""

    valid: int
    out_elements: int


@memoized
def verify_cast(dtype: str, out_dtype: str, *, packet: Mapping, out_packet: Mapping) -> CastParams:
    """Check ``cast(out_dtype, out_packet=)``: ``Pair``, ``InputNotOneFlit``, ``OutputNotOneFlit``,
    ``PacketMismatch``."""
    in_bits, out_bits = stream_bits(STAGE, dtype), stream_bits(STAGE, out_dtype)
    targets = CAST_PAIRS.get(dtype, ())
    if out_dtype not in targets:
        why = f"{dtype} casts to {' or '.join(targets)}" if targets else f"its input is i32 or f32, not {dtype}"
        raise DtypeError(
            STAGE,
            "Pair",
            f"cast: the cast engine has no {dtype} to {out_dtype} cast ({why})",
            hint="the cast engine only narrows i32 or f32; widen with fetch_cast, and skip an identity cast",
        )
    if packet.size * in_bits != FLIT_BITS:
        raise LayoutError(
            STAGE,
            "InputNotOneFlit",
            f"cast: the input packet must be exactly one flit (32 bytes), got {packet.size} elements of {dtype} "
            f"(Packet {packet})",
            hint="collect the stream first, so that its packet is one flit",
        )
    per_flit = FLIT_BITS // out_bits
    if out_packet.size != per_flit:
        raise LayoutError(
            STAGE,
            "OutputNotOneFlit",
            f"cast: the output packet must be exactly one flit (32 bytes, {per_flit} elements of {out_dtype}), "
            f"got {out_packet.size} elements (OutPacket {out_packet})",
            hint=f"declare an OutPacket of {per_flit} elements: the input packet padded with `# {per_flit}`",
        )
    expected = normalize(packet.padding(per_flit, PaddingKind.TOP))
    if normalize(out_packet) != expected:
        raise LayoutError(
            STAGE,
            "PacketMismatch",
            f"cast: packet mismatch: Packet {packet} padded to one flit of {out_dtype} is {expected}, "
            f"got OutPacket {out_packet}",
            hint=f"declare out_packet={expected}",
        )
    return CastParams(valid=packet.size, out_elements=per_flit)
