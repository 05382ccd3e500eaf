"""Slots, the factors of a mapping's slot form, and the surgery that cuts and strides them.

A *form* is a tuple of slots, innermost first (docs/mapping-language.md §1.8). A slot's digit takes
the values ``0 .. extent-1``; values below the live count of its term are live, the rest are
padding of the slot's kind. A term is pure padding (``None``), a broadcast, a digit of an axis, or
a *piece* of an operand (:class:`Composite`): a sub-expression kept whole, every piece of which adds
into one position of it, where it is then read once (docs/mapping-language.md §1.7).

A canonical form may also mark a slot as :class:`Shared`: its term is written out as an axis digit,
but its value is in truth a position of an operand that other slots index too, so the operand, not
the slot, decides whether the cell is padding. :mod:`tcpdsl.algebra.canonical` says when.

The surgery here is exact: it keeps or drops whole digit values and never joins or splits a slot
whose padding would then depend on two digits. Where a cut falls inside the slots, it may keep the
slots it crosses together as a new operand (:func:`group`), which the caller then settles. When
none of that is possible it reports ``None`` and the caller keeps the operand whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Union

from tcpdsl.algebra.cells import PaddingKind

TOP = PaddingKind.TOP


@dataclass(frozen=True, slots=True)
class Bcast:
    """``c`` live cells of a coordinate-free axis."""

    c: int


@dataclass(frozen=True, slots=True)
class Digit:
    """A digit of an axis: value ``d`` in ``[0, count)`` adds ``d * stride`` to axis ``axis`` (declared size ``n``).

    The one class for a digit: a slot's term, a term a layout holds (:mod:`tcpdsl.algebra.terms`,
    which also spells it as text) and a digit the planner lays out. ``A`` is the whole axis,
    ``B / 2`` every even element of B, ``Wp % 8192`` the first 8192 elements of Wp, ``A / 4 % 2``
    the two values 0 and 4.
    """

    axis: str
    n: int
    stride: int
    count: int
    # An axis of ``live`` elements zero-padded to ``n`` cells (a contracted axis the search pads, read
    # ``K #{0} 1008 / 16``); 0 when the axis has ``n`` elements.
    live: int = 0

    @property
    def top(self) -> int:
        """The stride of the next digit up: every coordinate this digit spells is below it."""
        return self.stride * self.count

    @property
    def whole(self) -> bool:
        """Whether the digit spells every coordinate of its axis."""
        return self.stride == 1 and self.count >= self.n

    def within(self, other: Digit) -> bool:
        """Whether every value of this digit is a value of ``other`` (same axis, nested range)."""
        return (self.axis == other.axis and other.stride <= self.stride and self.top <= other.top
                and self.stride % other.stride == 0 and other.top % self.top == 0)


class Operand:
    """A sub-expression kept whole: the slots of its form, and a ``tag`` that tells it apart.

    Pieces of one operand pool their positions; pieces of two operands never do, even when their
    forms are equal. In a form built from a tree the tag is the sub-expression's structure (the
    evaluator pools by structure too); in a canonical form it is an instance number, 0 unless
    several operands share a form.
    """

    __slots__ = ("slots", "tag", "size", "height", "_hash")

    slots: Slots
    tag: object
    size: int
    height: int  # 1 + the height of the operands inside: an operand is read after every one that reaches it

    def __init__(self, slots: Slots, tag: object) -> None:
        self.slots = slots
        self.tag = tag
        self.size = size_of(slots)
        self.height = 1 + max((operand.height for operand in operands_in(slots)), default=0)
        self._hash = hash((slots, tag))

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Operand) and self._hash == other._hash
                                 and self.tag == other.tag and self.slots == other.slots)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Operand({self.slots!r}, tag={self.tag!r})"


@dataclass(frozen=True, slots=True)
class Composite:
    """A piece of ``operand``: digit ``d`` in ``[0, count)`` adds ``d * stride`` to its position."""

    operand: Operand
    stride: int
    count: int


@dataclass(frozen=True, slots=True)
class Shared:
    """The slot's digit ``d`` is position ``d * stride`` of ``operand`` (every value, padding included)."""

    operand: Operand
    stride: int


Live = Union[Bcast, Digit, Composite, None]


@dataclass(frozen=True, slots=True)
class Slot:
    """One factor: its term ``live`` (``None`` is pure padding), padded ``extent`` and padding ``kind``.

    ``count`` is how many digit values are live (read often, so kept). The kind of a slot without
    padding is Top. A term cut from a padded axis or operand that its stride does not divide is
    spelt by padding that axis or operand first; ``spelt`` says with what kind, since that text
    pools with other pieces of it (docs/mapping-language.md §1.8). It is Top for any other term.
    The two kinds are apart because a slot's own padding may be of another kind than its term's
    text: ``1 #{!} 2, D #{0} 12 / 4`` is one slot, and cutting it must give ``D #{0} 12 / 4`` back.
    """

    live: Live
    extent: int
    kind: PaddingKind = TOP
    shared: Shared | None = None
    spelt: PaddingKind = TOP
    count: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", live_count(self.live))
        if self.kind is not TOP and self.extent <= self.count:
            object.__setattr__(self, "kind", TOP)
        if self.spelt is not TOP and not spelt_padded(self.live):
            object.__setattr__(self, "spelt", TOP)

    @property
    def padded(self) -> bool:
        return self.extent > self.count


Slots = tuple[Slot, ...]


def spelt_padded(live: Live) -> bool:
    """Whether the text of ``live`` pads its axis or operand to a multiple of its stride first."""
    if isinstance(live, Digit):
        return live.n % live.stride != 0 and live.stride * live.count > live.n
    if isinstance(live, Composite):
        return live.operand.size % live.stride != 0 and live.stride * live.count > live.operand.size
    return False


def joined_count(low_stride: int, low_count: int, high_stride: int, high_count: int) -> int | None:
    """The count of one digit equal to a digit of an axis and the digit right above it, or None.

    The one test for merging digits whose strides touch: the higher digit starts where the lower
    one ends. Slots, held terms and the planner's layouts all merge by it.
    """
    return low_count * high_count if high_stride == low_stride * low_count else None


def live_count(live: Live) -> int:
    if live is None:
        return 1
    if isinstance(live, Bcast):
        return live.c
    return live.count


def slot_strides(slots: Slots) -> list[int]:
    """The position stride of each slot, innermost first: the product of the extents below it."""
    out: list[int] = []
    below = 1
    for slot in slots:
        out.append(below)
        below *= slot.extent
    return out


def size_of(slots: Slots) -> int:
    return math.prod(slot.extent for slot in slots)


def operands_in(slots: Slots) -> list[Operand]:
    """The operands the slots index directly, as pieces or shared digits."""
    out: list[Operand] = []
    for slot in slots:
        if isinstance(slot.live, Composite):
            out.append(slot.live.operand)
        if slot.shared is not None:
            out.append(slot.shared.operand)
    return out


def make(live: Live, extent: int, kind: PaddingKind, shared: Shared | None = None,
         spelt: PaddingKind = TOP) -> Slot:
    """A slot; :class:`Slot` makes its kinds Top where they cannot matter."""
    return Slot(live, extent, kind, shared, spelt)


def touch(operand: Operand) -> Slot:
    """A piece that always adds 0: it cannot move the position, only rank the operand (§1.7)."""
    return Slot(piece(operand, 1, 1), 1)


def is_touch(slot: Slot) -> bool:
    return isinstance(slot.live, Composite) and slot.live.count == 1 and slot.extent == 1


def _touches(dropped: list[Slot]) -> Slots:
    # A dropped digit is always 0, but a dropped piece still reaches its operand, which then ranks
    # at this place (docs/mapping-language.md §1.7): keep it as a touch.
    return tuple(touch(slot.live.operand) for slot in dropped if isinstance(slot.live, Composite))


# -- surgery -----------------------------------------------------------------------------------


def piece(operand: Operand, stride: int, count: int) -> Composite:
    """A piece of ``operand``; one that only reads position 0 gets the one stride every such piece shares."""
    return Composite(operand, operand.size if count == 1 else stride, count)


def _with_count(live: Live, count: int) -> Live:
    if isinstance(live, Bcast):
        return Bcast(count)
    if isinstance(live, Digit):
        return Digit(live.axis, live.n, live.stride, count)
    if isinstance(live, Composite):
        return piece(live.operand, live.stride, count)
    return None


def cut_slot(slot: Slot, q: int) -> Slot:
    """The first ``q`` digit values of ``slot``."""
    return make(_with_count(slot.live, min(slot.count, q)), q, slot.kind, spelt=slot.spelt)


def scale_slot(slot: Slot, s: int) -> Slot:
    """The digit values ``0, s, 2s, ...`` of ``slot`` (``s`` divides its extent).

    Value ``d·s`` is live exactly when ``d < ceil(live / s)``, so the result is exact even when
    ``s`` does not divide the live count (a *ragged* digit). The text of the scaled term pads as
    the slot's term did where that already pads, else with the slot's padding.
    """
    live = slot.live
    kept = -(-slot.count // s)
    if isinstance(live, Digit):
        live = Digit(live.axis, live.n, live.stride * s, kept)
    elif isinstance(live, Composite):
        live = piece(live.operand, live.stride * s, kept)
    elif isinstance(live, Bcast):
        live = Bcast(kept)
    # A spelt kind other than Top means the term already pads; with no padding there is nothing to take.
    keep = slot.spelt is not TOP or slot.kind is TOP or spelt_padded(slot.live)
    return make(live, slot.extent // s, slot.kind, spelt=slot.spelt if keep else slot.kind)


def prefix(slots: Slots, k: int, grouping: bool = False) -> Slots | None:
    """The first ``k`` cells of ``slots``, or ``None`` when ``k`` falls across a slot boundary.

    With ``grouping``, a cut across a boundary below the top slot, inside a run of slots without
    axes (pure padding and broadcasts), keeps that run together instead: from the highest slot
    whose start divides ``k`` up to the cut slot, it becomes one operand (:func:`group`) whose
    first cells are the cut.
    """
    below = 1
    for index, slot in enumerate(slots):
        if below * slot.extent >= k:
            if k % below:
                if not grouping:
                    return None
                starts = slot_strides(slots)
                low = max(i for i in range(index + 1) if k % starts[i] == 0)
                if low == 0 and index == len(slots) - 1:
                    return None  # the group would be the operand again
                if not _axis_free(slot) or not all(_plain(run) for run in slots[low:index]):
                    return None
                return prefix(group(slots, low, index + 1), k)
            q = k // below
            if q == 1:
                return simplify(slots[:index] + _touches(list(slots[index:])))
            return simplify(slots[:index] + (cut_slot(slot, q),) + _touches(list(slots[index + 1:])))
        below *= slot.extent
    return slots if k == below else None


def stride(slots: Slots, s: int, grouping: bool = False) -> Slots | None:
    """Every ``s``-th cell of ``slots``, or ``None`` when ``s`` does not line up with the slots.

    With ``grouping``, a slot ``s`` neither divides nor is divided by is kept together with the
    fewest slots of pure padding, broadcasts or padded pieces right above it whose extents make a
    multiple of ``s``, as one operand (:func:`group`), when a slot stays above them.
    """
    dropped: list[Slot] = []
    while s > 1:
        if not slots:
            return None
        slot = slots[0]
        if s % slot.extent == 0:
            dropped.append(slot)
            slots, s = slots[1:], s // slot.extent
            continue
        if slot.extent % s:
            top = 1
            while grouping and top < len(slots) - 1 and _joins_stride_group(slots[top]) and size_of(slots[:top]) % s:
                top += 1
            if top == 1 or size_of(slots[:top]) % s:
                return None
            slots = group(slots, 0, top)
        slots = (scale_slot(slots[0], s),) + slots[1:]
        break
    return simplify(_touches(dropped) + slots)


def split_slot(slot: Slot, s: int) -> Slots | None:
    """A padded slot as its live values under a slot of pure padding, which hold the same cells,
    when its live count divides both its extent and ``s`` but ``s`` does not divide the extent;
    else None (docs/mapping-language.md §1.8)."""
    c = slot.count
    if slot.shared is not None or not 1 < c < slot.extent or slot.extent % c or s % c or slot.extent % s == 0:
        return None
    return Slot(slot.live, c, spelt=slot.spelt), Slot(None, slot.extent // c, slot.kind)


def _pure(slot: Slot) -> bool:
    return slot.live is None and slot.shared is None


def _joins_stride_group(slot: Slot) -> bool:
    """Pure padding, a broadcast, or a padded piece: slots whose cells a stride's group may hold
    whatever the text's grouping was (docs/mapping-language.md §1.8)."""
    return _axis_free(slot) or slot.shared is None and isinstance(slot.live, Composite) and slot.padded


def _plain(slot: Slot) -> bool:
    return slot.shared is None and not isinstance(slot.live, Composite)


def _axis_free(slot: Slot) -> bool:
    return slot.shared is None and (slot.live is None or isinstance(slot.live, Bcast))


def group(slots: Slots, low: int, high: int) -> Slots:
    """``slots`` with ``slots[low:high]`` made one slot: the whole of an operand of their own.

    The operand is read by that one piece, at the place its slots held, so each cell stays what
    it was and a cut may then fall anywhere inside it (docs/mapping-language.md §1.8). Its tag is
    new: no other piece pools with it.
    """
    operand = Operand(slots[low:high], object())
    return slots[:low] + (Slot(Composite(operand, 1, operand.size), operand.size),) + slots[high:]


def pad(slots: Slots, p: int, kind: PaddingKind) -> Slots | None:
    """``slots`` extended to ``p`` cells, the new ones padding of ``kind`` (``None``: not as slots)."""
    total = size_of(slots)
    if p == total:
        return slots
    if not slots:
        return (Slot(None, p, kind),)
    top = slots[-1]
    below = total // top.extent
    if p % below == 0 and top.shared is None and (not top.padded or top.kind == kind):
        return simplify(slots[:-1] + (make(top.live, p // below, kind, spelt=top.spelt),))
    if p % total == 0:
        return simplify(slots + (Slot(None, p // total, kind),))
    return None


def cut(slots: Slots, piece: Slot) -> Slots | None:
    """The slots ``piece`` reads of the operand whose form is ``slots``: stride, keep, then pad."""
    live = piece.live
    assert isinstance(live, Composite)
    kept = prefix(slots, 1) if live.count == 1 else _within_first(slots, live.stride, live.count, piece.spelt)
    if kept is None:
        strided = stride(slots, live.stride, grouping=True)
        kept = None if strided is None else prefix(strided, live.count, grouping=True)
    return None if kept is None else pad(kept, piece.extent, piece.kind)


def _within_first(slots: Slots, s: int, count: int, kind: PaddingKind) -> Slots | None:
    """The values ``0, s, ..., (count-1)·s`` of ``slots`` when they all fall in one slot.

    Slots whose extent divides ``s`` are always 0 and drop out; when every value then falls in the
    next slot, every slot above it is 0 too, so ``s`` need not divide that slot's extent: value
    ``d·s`` is live exactly when it is below the slot's live count (a ragged cut). Padding the slot
    does not reach, its own or the piece's ``kind``, still spells the cut (:class:`Slot`).
    """
    below = 0
    while below < len(slots) and s % slots[below].extent == 0:
        s //= slots[below].extent
        below += 1
    if below == len(slots) or s == 1 or (count - 1) * s >= slots[below].extent:
        return None
    first = slots[below]
    if first.shared is not None:
        return None
    scaled = scale_slot(Slot(first.live, first.extent * s, first.kind if first.padded else kind, spelt=first.spelt), s)
    # A dropped piece ranks its operand where it stood: inner ones stay under the cut, outer ones above.
    return simplify(_touches(list(slots[:below])) + (cut_slot(scaled, count),) + _touches(list(slots[below + 1:])))


# -- simplify ----------------------------------------------------------------------------------


def simplify(slots: Slots, whole: frozenset[Operand] = frozenset()) -> Slots:
    """Apply the rewrite rules of docs/mapping-language.md §1.8 until nothing changes.

    ``whole`` lists operands all of whose pieces are in ``slots``. Padding above a piece stops that
    piece from reaching its operand only when no piece lies further out, since the operand ranks
    with its most major piece (§1.7); for those operands the rules may move padding onto a piece.
    """
    out = list(slots)
    index = 0
    while index < len(out):
        slot = out[index]
        if slot.shared is None and not isinstance(slot.live, Composite) and slot.count == 1:
            if slot.extent == 1:
                del out[index]
                index = max(0, index - 1)
                continue
            if slot.live is not None:
                slot = out[index] = Slot(None, slot.extent, slot.kind)
        if index + 1 < len(out):
            merged = _merge(slot, out[index + 1], bool(whole) and _leads(out, index, whole))
            if merged is not None:
                out[index:index + 2] = merged
                index = max(0, index - 1)
                continue
        index += 1
    return tuple(out)


def _leads(slots: list[Slot], index: int, whole: frozenset[Operand]) -> bool:
    """Whether no piece of the operand of ``slots[index]`` lies beyond the slot after it."""
    live = slots[index].live
    if not isinstance(live, Composite) or live.operand not in whole:
        return False
    return not any(isinstance(o.live, Composite) and o.live.operand == live.operand for o in slots[index + 2:])


def _merge(inner: Slot, outer: Slot, leads: bool) -> list[Slot] | None:
    """Rules 2-4: the slots equal to ``inner`` directly below ``outer``, or ``None``."""
    if inner.shared is not None or outer.shared is not None:
        return None
    a, b = inner.live, outer.live
    if b is None and (not inner.padded or inner.kind == outer.kind) and (leads or not isinstance(a, Composite)):
        return [Slot(a, inner.extent * outer.extent, outer.kind, spelt=inner.spelt)]
    if inner.padded:
        return None
    extent = a_count = inner.extent
    extent *= outer.extent
    if isinstance(a, Bcast) and isinstance(b, Bcast):
        return [make(Bcast(a.c * b.c), extent, outer.kind)]
    if isinstance(a, Digit) and isinstance(b, Digit):
        count = joined_count(a.stride, a_count, b.stride, b.count) if a.axis == b.axis else None
        if count is None or (count - 1) * a.stride >= a.n:
            return None  # not adjacent digits of one axis, or the joint digit would overshoot it
        return [make(Digit(a.axis, a.n, a.stride, count), extent, outer.kind, spelt=outer.spelt)]
    if isinstance(a, Composite) and isinstance(b, Composite) and a.operand == b.operand:
        if b.count == 1:
            # A piece that only reads position 0 ranks the operand where the inner piece already
            # does; what is left of it is its padding.
            return [inner] + ([Slot(None, outer.extent, outer.kind)] if outer.extent > 1 else [])
        if b.stride != a.stride * a_count or (a_count * b.count - 1) * a.stride >= a.operand.size:
            return None
        if outer.padded and not leads:
            return None  # padding on the outer piece alone would stop the inner one too
        return [make(Composite(a.operand, a.stride, a_count * b.count), extent, outer.kind, spelt=outer.spelt)]
    return None
