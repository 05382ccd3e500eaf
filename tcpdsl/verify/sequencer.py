"""The address sequencer shared by fetch, commit and the DMA (docs/stage-rules.md §4.2).

A configuration is a nest of loop entries ``count : stride`` (outermost first). Walking a stream
mapping against a memory layout gives one entry per piece of a stream factor: a digit of an axis
strides by the span that digit has in memory, a broadcast or a padding factor by a stride the
caller chooses (0 re-reads one address). Neighbouring entries merge when they are contiguous in
memory. Everything here looks at canonical slots, never at cells, so its cost follows the number
of factors, not the tensor size.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd
from typing import Final

from tcpdsl.algebra import Bcast, Composite, Digit, Mapping, PaddingKind, Slot, render_slot, slot_strides, slots_of
from tcpdsl.errors import LayoutError

MAX_ENTRIES: Final = 8
MAX_ITERATIONS: Final = 65536
# One access moves a power of two of bytes, at most one flit.
ACCESS_BYTES: Final = (32, 16, 8, 4, 2, 1)
BITS_PER_BYTE: Final = 8


@dataclass(frozen=True)
class Entry:
    """One loop of the nest: ``count`` iterations, each advancing ``stride`` memory cells (0: the same cells)."""

    count: int
    stride: int


@dataclass(frozen=True)
class Piece:
    """A factor of the stream before merging: its position stride in the stream, its count, its
    memory stride, and whether its iterations past the first are dummy (padding) accesses."""

    at: int
    count: int
    stride: int
    dummy: bool = False


@dataclass(frozen=True)
class MemorySlot:
    """A canonical slot of the memory layout: its position stride ``at``, live count and extent."""

    at: int
    count: int
    extent: int
    kind: PaddingKind
    digit: Digit | None


def memory_slots(memory: Mapping) -> tuple[MemorySlot, ...]:
    slots = slots_of(memory)
    return tuple(
        MemorySlot(at, slot.count, slot.extent, slot.kind, slot.live if isinstance(slot.live, Digit) else None)
        for at, slot in zip(slot_strides(slots), slots)
    )


class Unmatched(Exception):
    """A stream digit that the memory layout does not hold; ``cut`` tells a decomposition clash apart."""

    def __init__(self, digit: Digit, cut: bool) -> None:
        super().__init__(digit.axis)
        self.digit = digit
        self.cut = cut


def pieces(
    memory: Mapping, stream: Mapping, *, dummy_stride: int | None, absent_is_broadcast: bool = False
) -> list[Piece]:
    """The stream's factors, innermost first, each with the memory stride that walks it.

    A padded stream factor keeps striding past its live values (a read of whatever follows), unless
    ``dummy_stride`` is given and its live count divides its extent: then the padding is a separate
    outer piece at ``dummy_stride``. A pure padding factor is walked at ``dummy_stride`` (or 0). With
    ``absent_is_broadcast`` a digit of an axis the memory lacks is a broadcast (a DMA replicates).
    Raises :class:`Unmatched` for a digit the memory cannot supply.
    """
    mem = memory_slots(memory)
    axes = {s.digit.axis for s in mem if s.digit is not None}
    out: list[Piece] = []
    slots = slots_of(stream)
    for at, slot in zip(slot_strides(slots), slots):
        if slot.extent == 1:
            continue
        live = slot.live
        if isinstance(live, Digit) and (live.axis in axes or not absent_is_broadcast):
            found = _digit_pieces(mem, live, at)
        elif isinstance(live, (Digit, Bcast)):
            found = [Piece(at, slot.count, 0)]
        elif live is None:
            out.append(Piece(at, slot.extent, dummy_stride or 0, dummy=True))
            continue
        else:
            found = [_operand_piece(memory, live, at)]
        padding = _padding_piece(found, slot, at, dummy_stride)
        out.extend(found + padding)
    return out


def _operand_piece(memory: Mapping, live: Composite, at: int) -> Piece:
    """A piece of an operand kept whole (``[A, B, C] # 32``): the memory must hold the operand's
    slots as one contiguous run, which the piece then walks like one digit."""
    raw, run = slots_of(memory), live.operand.slots
    for k in range(len(raw) - len(run) + 1):
        if raw[k:k + len(run)] == run:
            return Piece(at, live.count, slot_strides(raw)[k] * live.stride)
    raise Unmatched(Digit(f"({render_slot(Slot(live, live.count))})", live.count, live.stride, live.count), False)


def _digit_pieces(mem: tuple[MemorySlot, ...], want: Digit, at: int) -> list[Piece]:
    """Cut the coordinate range ``[stride, stride * count)`` of ``want`` along the memory digits of its axis."""
    digits = [s for s in mem if s.digit is not None and s.digit.axis == want.axis]
    if not digits:
        raise Unmatched(want, False)
    found: list[Piece] = []
    cur, end = want.stride, want.stride * want.count
    while cur < end:
        for s in digits:
            d = s.digit
            assert d is not None
            if d.stride <= cur < d.stride * d.count and cur % d.stride == 0:
                stop = min(end, d.stride * d.count)
                # A piece may be ragged only where the axis itself ends.
                if stop % cur and stop != want.n:
                    raise Unmatched(want, True)
                found.append(Piece(at * (cur // want.stride), -(-stop // cur), s.at * (cur // d.stride)))
                cur = stop
                break
        else:
            raise Unmatched(want, True)
    return found


def _padding_piece(found: list[Piece], slot: Slot, at: int, dummy_stride: int | None) -> list[Piece]:
    if slot.extent == slot.count:
        return []
    if dummy_stride is not None and slot.extent % slot.count == 0:
        return [Piece(at * slot.count, slot.extent // slot.count, dummy_stride, dummy=True)]
    # The outermost piece keeps walking past the live values, up to the extent, which its cut must divide.
    last = found[-1]
    if (at * slot.extent) % last.at:
        raise Unmatched(_digit_of(slot), True)
    found[-1] = Piece(last.at, (at * slot.extent) // last.at, last.stride)
    return []


def _digit_of(slot: Slot) -> Digit:
    live = slot.live
    return live if isinstance(live, Digit) else Digit("(padding)", slot.extent, 1, slot.count)


def merge(found: list[Piece]) -> tuple[Entry, ...]:
    """Entries, outermost first: an entry merges into the one inside it when it continues it in memory."""
    merged: list[Entry] = []
    for p in found:
        if p.count == 1:
            continue
        if merged and p.stride == merged[-1].stride * merged[-1].count:
            inner = merged[-1]
            merged[-1] = Entry(inner.count * p.count, inner.stride)
            continue
        merged.append(Entry(p.count, p.stride))
    return tuple(reversed(merged))


@dataclass(frozen=True)
class Reach:
    """What a walk reaches of one memory slot: every value below ``covered``, none at or above ``top``."""

    covered: int
    top: int


def reach(mem: tuple[MemorySlot, ...], found: list[Piece]) -> tuple[dict[int, Reach], list[Piece]]:
    """Per memory slot (by position stride), the values the pieces reach; also the pieces that fit no slot.

    Each piece with a nonzero stride advances one memory slot by a fixed step. The values one slot
    reaches are the sums of its pieces' steps: taken by ascending step, each piece extends the
    gap-free prefix ``[0, covered)`` unless its step skips past it; the largest sum is ``top - 1``.
    """
    steps: dict[int, list[tuple[int, int]]] = {s.at: [] for s in mem}
    stray: list[Piece] = []
    for p in found:
        if p.stride == 0 or p.count == 1:
            continue
        j = next((j for j, s in enumerate(mem) if s.at <= p.stride < s.at * s.extent and p.stride % s.at == 0), None)
        if j is None:
            stray.append(p)
            continue
        step, count = p.stride // mem[j].at, p.count
        # A unit-step piece longer than its slot runs on into the slots above (a contiguous read).
        while step == 1 and count > mem[j].extent and j + 1 < len(mem):
            steps[mem[j].at].append((1, mem[j].extent))
            count = -(-count // mem[j].extent)
            j += 1
        steps[mem[j].at].append((step, count))
    out: dict[int, Reach] = {}
    for at, pairs_ in steps.items():
        top = 1 + sum((count - 1) * step for step, count in pairs_)
        out[at] = Reach(_prefix(sorted(pairs_)), top)
    return out, stray


def _prefix(pairs_: list[tuple[int, int]]) -> int:
    """The gap-free prefix of a sumset of ``{0, step, ..., (count-1)*step}`` sets, steps ascending."""
    covered = 1
    for step, count in pairs_:
        if step > covered:
            break
        covered += (count - 1) * step
    return covered


def access_elements(entries: tuple[Entry, ...], packet: int) -> int:
    """``gcd(packet, contiguous run)``: elements one access may move (the run is the innermost stride-1 loop)."""
    run = entries[-1].count if entries and entries[-1].stride == 1 else 1
    return gcd(packet, run)


def access_size(elements: int, bits: int) -> int:
    """The largest access of 1..32 bytes that divides ``elements`` of ``bits`` width, in elements (0: none)."""
    for size in ACCESS_BYTES:
        per = size * BITS_PER_BYTE
        if per % bits == 0 and elements % (per // bits) == 0:
            return per // bits
    return 0


def check_table(stage: str, entries: tuple[Entry, ...], what: str) -> None:
    """``TooManyEntries`` then ``Iterations``: the table has 8 entries of at most 65 536 iterations."""
    if len(entries) > MAX_ENTRIES:
        walk = ", ".join(f"{e.count}:{e.stride}" for e in entries)
        raise LayoutError(
            stage,
            "TooManyEntries",
            f"{stage}: {what} needs {len(entries)} sequencer entries ({walk}, count:stride outermost first), "
            f"more than the {MAX_ENTRIES} the sequencer has",
            hint="order the stream factors like the memory layout so that neighbouring loops merge, "
            "or merge axes in memory",
        )
    for e in entries:
        if e.count > MAX_ITERATIONS:
            raise LayoutError(
                stage,
                "Iterations",
                f"{stage}: {what} needs a sequencer loop of {e.count} iterations (stride {e.stride}); "
                f"a loop runs at most {MAX_ITERATIONS} times",
                hint="split the axis into two factors, e.g. `X / 256, X % 256`, so that it takes two loops",
            )
