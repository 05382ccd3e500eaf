"""``contract_outer``, weight side: the TRF Sequencer (docs/stage-rules.md §2.4).

The reference leaves this verifier as a TODO; tcpdsl enforces the documented rules. Each cycle
one read of ``ReadSize`` contiguous Element cells fills the innermost OutPacket cells and is
replicated ``PacketBroadcast`` times. Over cycles a nested-loop sequencer walks the remaining
``Element / ReadSize`` factors, each of which must be an OutTime factor; every other OutTime
factor is a broadcast (stride 0). Strides are whole reads, so a wide (64-byte) read is always
64-byte aligned.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd
from typing import Final

from tcpdsl.algebra import DivideTerm, Mapping, divide_exact, normalize, padding_per_stride, remove_padding, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.constants import BITS_PER_BYTE, MAX_SEQUENCER_ENTRIES, OUTER_PACKET_BYTES
from tcpdsl.verify.params import LoopEntry, SequencerParams
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.CONTRACT_OUTER
_READ_BITS: Final = OUTER_PACKET_BYTES * BITS_PER_BYTE


def read_size(bits: int, element: Mapping, out_packet: Mapping) -> int:
    """The widest read ``r`` with ``Element % r == OutPacket % r`` that fits 64 bytes (at least 1)."""
    common = gcd(element.size, out_packet.size)
    for r in range(min(common, _READ_BITS // bits), 0, -1):
        if common % r == 0 and split_at(element, r)[1] == split_at(out_packet, r)[1]:
            return r
    return 1


def check_trf_sequencer(bits: int, *, element: Mapping, out_time: Mapping, out_packet: Mapping) -> SequencerParams:
    """Derive ReadSize, PacketBroadcast and the loop nest that walks Element over OutTime."""
    r = read_size(bits, element, out_packet)
    element_outer = split_at(element, r)[0]
    try:
        terms = divide_exact(out_time, element_outer)
    except LayoutError as error:
        raise LayoutError(
            STAGE,
            "ElementNotSequenced",
            f"`contract_outer`: every factor of TRF Element / ReadSize ({element_outer}; Element {element}, "
            f"ReadSize {r}) must appear in OutTime {out_time}: {error.detail}",
            hint=f"add the factors of {element_outer} to OutTime (in any order), or choose an OutPacket whose "
            f"innermost cells read more of Element {element}",
        ) from None

    entries = _sequencing(out_time, terms, r)
    if len(entries) > MAX_SEQUENCER_ENTRIES:
        walk = ", ".join(f"{e.time} x{e.count}" for e in entries)
        raise LayoutError(
            STAGE,
            "SequencerEntries",
            f"`contract_outer`: walking TRF Element {element} over OutTime {out_time} needs {len(entries)} "
            f"nested loops ({walk}), more than the sequencer's {MAX_SEQUENCER_ENTRIES}",
            hint="order OutTime so that the Element factors it walks are contiguous and in Element order, "
            "which lets neighbouring loops merge",
        )
    return SequencerParams(
        read_size=r,
        packet_broadcast=out_packet.size // r,
        wide_read=r * bits == _READ_BITS,
        element_outer=element_outer,
        sequencing=entries,
    )


def _sequencing(out_time: Mapping, terms: Sequence[DivideTerm], r: int) -> tuple[LoopEntry, ...]:
    """Loop entries, outermost first, each covering a range ``[lo, hi)`` of OutTime positions."""
    pieces: list[tuple[int, int, int]] = []  # (lo, hi, element stride), innermost first
    for start, extent in sorted(padding_per_stride(out_time).items()):
        if extent == 1:
            continue
        pieces.extend(_slot_pieces(out_time, start, extent, terms, r))

    merged: list[tuple[int, int, int]] = []
    for lo, hi, stride in pieces:
        if merged:
            in_lo, in_hi, in_stride = merged[-1]
            # Contiguous in Element (broadcasts: 0 == 0), so one loop walks both.
            if stride == in_stride * (in_hi // in_lo):
                merged[-1] = (in_lo, hi, in_stride)
                continue
        merged.append((lo, hi, stride))
    return tuple(
        LoopEntry(time=_factor(out_time, lo, hi), count=hi // lo, stride=stride) for lo, hi, stride in reversed(merged)
    )


def _slot_pieces(
    out_time: Mapping, start: int, extent: int, terms: Sequence[DivideTerm], r: int
) -> list[tuple[int, int, int]]:
    top = start * extent
    live_top = start * remove_padding(normalize(_factor(out_time, start, top))).size
    pieces: list[tuple[int, int, int]] = []
    cursor = start
    for term in sorted((t for t in terms if start <= t.dividend_stride < top), key=lambda t: t.dividend_stride):
        if term.dividend_stride > cursor:
            pieces.append((cursor, term.dividend_stride, 0))
        cursor = term.dividend_stride * term.resize
        pieces.append((term.dividend_stride, cursor, term.divisor_stride * r))
    if cursor < live_top:
        pieces.append((cursor, live_top, 0))
    if not pieces:
        return [(start, top, 0)]
    # The outermost piece of a padded slot also runs over its padding.
    lo, _, stride = pieces[-1]
    if top % lo:
        raise LayoutError(
            STAGE,
            "RaggedSequencing",
            f"`contract_outer`: OutTime {out_time} pads the factor {_factor(out_time, start, top)} to {extent} "
            f"cells, which no nested loop over its walked pieces covers",
            hint="pad the OutTime axis to a multiple of the Element factor it walks, or walk the whole axis",
        )
    pieces[-1] = (lo, top, stride)
    return pieces


def _factor(out_time: Mapping, lo: int, hi: int) -> Mapping:
    """The OutTime factor spanning positions ``[lo, hi)`` (``lo`` divides ``hi``), as a mapping."""
    return split_at(split_at(out_time, lo)[0], hi // lo)[1]

