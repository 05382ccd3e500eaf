"""``commit_trim``, ``commit_cast`` and ``commit`` / ``commit_view``: write a stream into DM
(docs/stage-rules.md §4.8).

The commit walks ``[Time, Packet]`` against the DM Element with the sequencer (docs/stage-rules.md
§4.2). Stream padding is a dummy write: it must land in Top padding of Element, where several may
overlap. Every live cell of Element (and Zero padding) must be written, and nothing may be written
into Bottom padding (the holes of a write tile).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd
from typing import Final

from tcpdsl.algebra import Mapping, PaddingKind, Resize, normalize
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.memory import materializable_bits
from tcpdsl.verify.sequencer import (
    BITS_PER_BYTE,
    Entry,
    MemorySlot,
    Piece,
    Unmatched,
    access_elements,
    access_size,
    check_table,
    memory_slots,
    merge,
    pieces,
    reach,
)
from tcpdsl.verify.stage import Stage

TRIM_STAGE: Final = Stage.COMMIT_TRIM
COMMIT_PACKET_BYTES: Final = (8, 16, 24, 32)
SUB_WRITE_BYTES: Final = 8
# A narrowing commit writes 8-byte units and reads in_bits / out_bits times as many bytes as it writes.
COMMIT_BASE_BYTES: Final = 8
COMMIT_CASTS: Final = frozenset({("f32", "bf16")})
WORD_BITS: Final = 64
_NO_DUMMY: Final = -1


@dataclass(frozen=True)
class CommitParams:
    """The commit sequencer (``count:stride`` outermost first, strides in Element cells), the packet's
    valid bytes and the write size used, in bytes."""

    time_entries: tuple[Entry, ...]
    packet_entries: tuple[Entry, ...]
    valid_bytes: int
    write_bytes: int
    time_size: int


@memoized
def verify_commit_trim(dtype: str, *, packet: Mapping, out_packet: Mapping) -> int:
    """Check ``commit_trim(out_packet=)``: ``Width`` then ``Resize``; returns the kept bytes."""
    bits = materializable_bits(TRIM_STAGE, dtype)
    kept = out_packet.size * bits
    if kept % BITS_PER_BYTE or kept // BITS_PER_BYTE not in COMMIT_PACKET_BYTES:
        raise LayoutError(
            TRIM_STAGE,
            "Width",
            f"commit_trim: the trimmed packet must be 8, 16, 24 or 32 bytes, got {kept / BITS_PER_BYTE:g} bytes "
            f"(OutPacket {out_packet} of {dtype})",
            hint=f"keep a multiple of 8 bytes of Packet {packet}, padding the live part if needed",
        )
    if out_packet.size > packet.size or normalize(out_packet) != normalize(Resize(packet, out_packet.size)):
        raise LayoutError(
            TRIM_STAGE,
            "Resize",
            f"commit_trim: OutPacket {out_packet} must be Packet {packet} cut to its first {out_packet.size} cells",
            hint="drop trailing padding (`N # 32` to `N` or `N # 16`) or trailing values (`W` to `W = 4`)",
        )
    return kept // BITS_PER_BYTE


@memoized
def verify_commit_cast(
    dtype: str, out_dtype: str, *, packet: Mapping, context: str = "main", relu: bool = False
) -> int:
    """Check ``commit_cast(out_dtype)`` / ``commit_cast_relu``: ``Pair``, ``MainOnly``, ``Width``; returns the
    bytes written per packet."""
    stage = Stage.COMMIT_CAST_RELU if relu else Stage.COMMIT_CAST
    if (dtype, out_dtype) not in COMMIT_CASTS:
        raise DtypeError(
            stage,
            "Pair",
            f"{stage}: the commit adapter casts only f32 to bf16, got {dtype} to {out_dtype}",
            hint="narrow other dtypes on the cast engine before commit_trim: cast(out_dtype, out_packet=...)",
        )
    if context != "main":
        raise DtypeError(
            stage,
            "MainOnly",
            f"{stage}: only the main context casts in the commit adapter, got {context}",
            hint="cast on the cast engine in the sub context, or commit from the main context",
        )
    in_bits, out_bits = materializable_bits(stage, dtype), materializable_bits(stage, out_dtype)
    unit = COMMIT_BASE_BYTES * (in_bits // out_bits)
    width = packet.size * in_bits // BITS_PER_BYTE
    if width % unit:
        legal = " or ".join(str(n) for n in COMMIT_PACKET_BYTES if n % unit == 0)
        raise LayoutError(
            stage,
            "Width",
            f"{stage}: the trimmed packet is {width} bytes of {dtype}, not a multiple of the {unit} bytes one "
            f"narrowing write reads (Packet {packet})",
            hint=f"commit_trim to {legal} bytes of {dtype}",
        )
    return width * out_bits // in_bits


@memoized
def verify_commit(
    dtype: str,
    *,
    time: Mapping,
    packet: Mapping,
    element: Mapping,
    context: str = "main",
    view: bool = False,
) -> CommitParams:
    """Check ``commit(element=)`` (or ``commit_view`` into a view with that Element) and derive its writes.

    Rules in order: ``PacketBytes``, ``Unwritable``, ``Unwritten``, ``TooManyEntries``, ``Iterations``,
    ``StrideAlign``.
    """
    stage = Stage.COMMIT_VIEW if view else Stage.COMMIT
    bits = materializable_bits(stage, dtype)
    valid = packet.size * bits
    if valid % BITS_PER_BYTE or valid // BITS_PER_BYTE not in COMMIT_PACKET_BYTES:
        raise LayoutError(
            stage,
            "PacketBytes",
            f"{stage}: the packet must be 8, 16, 24 or 32 bytes, got {valid / BITS_PER_BYTE:g} bytes "
            f"(Packet {packet} of {dtype})",
            hint="commit_trim the packet to the bytes you write",
        )
    mem = memory_slots(element)
    dummy = _dummy_slot(mem)
    dummy_stride = _NO_DUMMY if dummy is None else dummy.at * dummy.count
    try:
        time_pieces = pieces(element, time, dummy_stride=dummy_stride)
        packet_pieces = pieces(element, packet, dummy_stride=dummy_stride)
    except Unmatched as missing:
        d = missing.digit
        raise LayoutError(
            stage,
            "Unwritable",
            f"{stage}: the stream [{time}][{packet}] holds {d.axis} (digit of stride {d.stride}, {d.count} values), "
            f"which Element {element} cannot take",
            hint="name every stream axis in Element, split the same way as in the stream",
        ) from None
    _check_writes(stage, mem, time_pieces + packet_pieces, time, packet, element)
    time_entries, packet_entries = merge(time_pieces), merge(packet_pieces)
    check_table(stage, time_entries + packet_entries, f"writing [{time}][{packet}] into Element {element}")
    contiguous = packet_entries[-1] if packet_entries and packet_entries[-1].stride == 1 else None
    for e in time_entries + packet_entries:
        if e is not contiguous and e.stride and (e.stride * bits) % WORD_BITS:
            raise LayoutError(
                stage,
                "StrideAlign",
                f"{stage}: writing [{time}][{packet}] into Element {element} strides "
                f"{e.stride * bits / BITS_PER_BYTE:g} bytes per step ({e.count} steps), not a multiple of 8 bytes",
                hint="pad the Element axes inside that step so that every write starts on an 8-byte word",
            )
    access = access_size(access_elements(packet_entries, packet.size), bits) * bits // BITS_PER_BYTE
    valid_bytes = valid // BITS_PER_BYTE
    write = SUB_WRITE_BYTES if context == "sub" else gcd(valid_bytes, access)
    return CommitParams(
        time_entries=time_entries,
        packet_entries=packet_entries,
        valid_bytes=valid_bytes,
        write_bytes=write,
        time_size=time.size,
    )


def _dummy_slot(mem: tuple[MemorySlot, ...]) -> MemorySlot | None:
    """The Top-padded Element slot with the most padding blocks, where dummy writes may land."""
    padded = [s for s in mem if s.kind is PaddingKind.TOP and s.extent > s.count]
    return max(padded, key=lambda s: (s.extent - 1) // s.count, default=None)


def _check_writes(
    stage: str, mem: tuple[MemorySlot, ...], walked: list[Piece], time: Mapping, packet: Mapping, element: Mapping
) -> None:
    if any(p.dummy and p.stride == _NO_DUMMY for p in walked):
        raise LayoutError(
            stage,
            "Unwritable",
            f"{stage}: the stream [{time}][{packet}] has padding, whose dummy writes need Top padding in "
            f"Element {element}, which has none",
            hint="trim the padding from the stream, or declare Top padding in Element for it to land in",
        )
    reached, stray = reach(mem, walked)
    if stray:
        raise LayoutError(
            stage,
            "Unwritable",
            f"{stage}: the stream [{time}][{packet}] steps by {stray[0].stride} cells, across the factors of "
            f"Element {element}",
            hint="write the stream's factors with plain axis digits that Element holds",
        )
    for s in mem:
        r = reached[s.at]
        if r.top > s.extent:
            raise LayoutError(
                stage,
                "Unwritable",
                f"{stage}: the stream [{time}][{packet}] writes past a factor of Element {element} (value "
                f"{r.top - 1} of a factor with {s.extent})",
                hint="pad the Element factor as far as the stream's padding reaches",
            )
        if s.kind is PaddingKind.BOTTOM and r.top > s.count:
            raise LayoutError(
                stage,
                "Unwritable",
                f"{stage}: the stream [{time}][{packet}] writes into Bottom padding of Element {element}, "
                "which is never written",
                hint="trim the stream to the live cells of the write view",
            )
        # Top padding may stay as it is; Zero padding promises zeros, so it is written too.
        needed = s.extent if s.kind is PaddingKind.ZERO else s.count
        if r.covered < needed:
            factor = s.digit.axis if s.digit is not None else "padding"
            raise LayoutError(
                stage,
                "Unwritten",
                f"{stage}: the stream [{time}][{packet}] leaves Element {element} partly unwritten: value "
                f"{r.covered} of its {factor} factor at stride {s.at} ({needed} values to write) is never written",
                hint="write every live Element cell (and any Zero padding) from the stream",
            )
