"""``begin`` and ``fetch``: each slice reads its own DM partition into a stream (docs/stage-rules.md §4.3).

The DM form that a fetch reads is the Begin tensor's ``[Time, Packet]`` (Time is ``1``, or the
interleave axis of ``begin_interleaved``). The requested ``[OutTime, OutPacket]`` is walked against
it by the sequencer (docs/stage-rules.md §4.2); OutTime and OutPacket get their own descriptors,
which share one table of 8 entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import Digit, Mapping, Pair
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.memory import check_grid, materializable_bits
from tcpdsl.verify.sequencer import (
    BITS_PER_BYTE,
    Entry,
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

STAGE: Final = Stage.FETCH
FLIT_BITS: Final = 256
SUB_READ_BYTES: Final = 8
INTERLEAVE_SIZE: Final = 2


@dataclass(frozen=True)
class FetchParams:
    """The fetch sequencer: the time and packet descriptors (``count:stride`` outermost first, strides
    in DM elements), the widest access the layout allows and the read size used, in elements."""

    time_entries: tuple[Entry, ...]
    packet_entries: tuple[Entry, ...]
    max_access: int
    read_size: int
    read_bytes: float
    time_size: int
    packet_size: int


@memoized
def verify_begin(dtype: str, *, chip: Mapping, cluster: Mapping, slice_: Mapping, element: Mapping) -> None:
    """``ctx.begin(view)``: the view's dtype must be one memory can hold; its grid as for a DM tensor."""
    materializable_bits(Stage.BEGIN, dtype)
    check_grid(Stage.BEGIN, cluster, slice_)


@memoized
def verify_begin_interleaved(lhs: Mapping, rhs: Mapping, *, interleave: Mapping) -> None:
    """``ctx.begin_interleaved(lhs, rhs, interleave=)``: two views of one layout, alternated by a 2-cell axis."""
    if lhs != rhs:
        raise LayoutError(
            Stage.BEGIN,
            "InterleaveMismatch",
            f"begin: interleaved views must have one Element layout, got {lhs} and {rhs}",
            hint="relayout one view so both hold the same Element",
        )
    if interleave.size != INTERLEAVE_SIZE:
        raise LayoutError(
            Stage.BEGIN,
            "InterleaveSize",
            f"begin: the interleave axis alternates two views, so it has 2 cells, got {interleave.size} "
            f"({interleave})",
            hint="declare the interleave axis with size 2",
        )


@memoized
def verify_fetch(
    dtype: str,
    *,
    cluster: Mapping,
    slice_: Mapping,
    time: Mapping,
    packet: Mapping,
    out_time: Mapping,
    out_packet: Mapping,
    context: str = "main",
    cast_to_bits: int | None = None,
) -> FetchParams:
    """Check ``fetch(out_time=, out_packet=)`` and derive its read size.

    Rules in order: ``ClusterSize``, ``SliceSize``, ``Unreadable`` / ``Decomposition``, ``Unread``,
    ``TooManyEntries``, ``Iterations``, ``AccessBytes``. ``cast_to_bits`` is the output width of a
    ``fetch_cast`` that follows: one read must then cast into at most one flit.
    """
    bits = materializable_bits(STAGE, dtype)
    check_grid(STAGE, cluster, slice_)
    dm = Pair(time, packet)
    try:
        time_pieces = pieces(dm, out_time, dummy_stride=None)
        packet_pieces = pieces(dm, out_packet, dummy_stride=None)
    except Unmatched as missing:
        raise _unreadable(missing, dm, out_time, out_packet) from None
    _check_read(dm, time_pieces + packet_pieces, out_time, out_packet)
    time_entries, packet_entries = merge(time_pieces), merge(packet_pieces)
    check_table(STAGE, time_entries + packet_entries, f"reading DM {dm} as [{out_time}][{out_packet}]")
    widest = access_elements(packet_entries, out_packet.size)
    largest = access_size(widest, bits)
    if largest == 0:
        raise LayoutError(
            STAGE,
            "AccessBytes",
            f"fetch: an access moves 1, 2, 4, 8, 16 or 32 bytes, but OutPacket {out_packet} reads runs of "
            f"{widest} elements of {dtype} from DM {dm}",
            hint="make the innermost OutPacket factor the innermost DM factor, with an even number of 4-bit "
            "elements",
        )
    read = SUB_READ_BYTES * BITS_PER_BYTE // bits if context == "sub" else largest
    if cast_to_bits is not None:
        # docs/stage-rules.md §4.4: the fetch adapter casts one read into at most one flit.
        while read * cast_to_bits > FLIT_BITS and read % 2 == 0:
            read //= 2
    return FetchParams(
        time_entries=time_entries,
        packet_entries=packet_entries,
        max_access=widest,
        read_size=read,
        read_bytes=read * bits / BITS_PER_BYTE,
        time_size=out_time.size,
        packet_size=out_packet.size,
    )


def _unreadable(missing: Unmatched, dm: Mapping, out_time: Mapping, out_packet: Mapping) -> LayoutError:
    d = missing.digit
    if missing.cut:
        return LayoutError(
            STAGE,
            "Decomposition",
            f"fetch: axis {d.axis} is split one way in DM {dm} and another way in [{out_time}][{out_packet}] "
            f"(the digit of stride {d.stride}, {d.count} values); neither split refines the other",
            hint=f"split {d.axis} in the stream at the points where DM splits it, or at points that divide them",
        )
    return LayoutError(
        STAGE,
        "Unreadable",
        f"fetch: the stream [{out_time}][{out_packet}] holds {d.axis}, which DM {dm} does not hold; a stream "
        "term must be a digit of a DM axis or a fresh broadcast",
        hint=f"drop {d.axis} from the stream, or write a broadcast as a number (e.g. `4`)",
    )


def _check_read(dm: Mapping, walked: list[Piece], out_time: Mapping, out_packet: Mapping) -> None:
    """``Unread``: every live DM cell is read, so each live DM digit is walked over all its values."""
    mem = memory_slots(dm)
    reached, _ = reach(mem, walked)
    live = {s.at: s.count for s in mem if s.digit is not None}
    for at, count in live.items():
        if reached[at].covered < count:
            digit = next(s.digit for s in mem if s.at == at)
            assert isinstance(digit, Digit)
            raise LayoutError(
                STAGE,
                "Unread",
                f"fetch: the stream [{out_time}][{out_packet}] leaves value {reached[at].covered} of the {count} "
                f"values of {digit.axis} (stride {digit.stride}) in DM {dm} unread; a fetch cannot drop data",
                hint="read every DM axis in full, or fetch from a tile view of the part you need",
            )
