"""What a mapping holds of each axis, read from its normalized slots (docs/mapping-language.md §1.8).

A *term* is a digit of one axis (:class:`~tcpdsl.algebra.slots.Digit`) that a mapping holds:
it spells the coordinates ``index * stride`` for ``index`` in ``[0, count)``. :func:`digit_text`
spells it as mapping text.

:func:`held` says which coordinates a mapping's live cells reach, per axis, as terms. The slots of
a mapping in digit form make its live coordinates a product over axes, and per axis a product of
digit ranges: so the terms come from the slots alone, in time linear in the number of slots,
whatever the number of cells. An axis whose live coordinates are no product of digits (digits
that overlap, digits shared with a padded operand whose padding cuts across two terms, a composite
slot) is listed as *irregular* instead. Tensors use this to check that a layout holds exactly what a logical tensor
holds, and to shape the logical view of a stage result.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcpdsl.algebra.caches import memo
from tcpdsl.algebra.canonical import slots_of
from tcpdsl.algebra.nodes import Mapping, Pair, StructKey, Symbol
from tcpdsl.algebra.cells import PaddingKind
from tcpdsl.algebra.render import render_slot
from tcpdsl.algebra.slots import Composite, Digit, Operand, Slot, Slots, joined_count, slot_strides




def digit_mapping(digit: Digit) -> Mapping:
    """The digit as a one-digit mapping (``m["B / 2"]``, or ``m["K #{0} 1008 / 16"]`` for a digit of a
    zero-padded axis)."""
    if digit.live:
        return Symbol(digit.axis, digit.live).padding(digit.n, PaddingKind.ZERO).stride(digit.stride).modulo(digit.count)
    return render_slot(Slot(digit, digit.count))


@memo(maxsize=4096)
def digit_text(digit: Digit) -> str:
    """Mapping text of the digit: ``A``, ``B / 2``, ``Wp % 8192``, ``A / 4 % 2``."""
    return digit_mapping(digit).text


def runs(terms: tuple[Digit, ...] | list[Digit]) -> tuple[Digit, ...] | None:
    """The terms of one axis merged where one ends at the stride the next starts, major first;
    None when two of them overlap."""
    ordered = sorted(terms, key=lambda t: t.stride)
    merged: list[Digit] = []
    for term in ordered:
        if merged and term.stride < merged[-1].top:
            return None
        last = merged[-1] if merged else None
        count = None if last is None else joined_count(last.stride, last.count, term.stride, term.count)
        if last is not None and count is not None:
            merged[-1] = Digit(last.axis, last.n, last.stride, count)
        else:
            merged.append(term)
    return tuple(reversed(merged))


def text_of(terms: tuple[Digit, ...] | list[Digit]) -> str:
    """``"A, B / 2"``: terms as the text of a mapping with one part per term."""
    return ", ".join(digit_text(t) for t in terms)


@dataclass(frozen=True)
class Held:
    """What a mapping holds, per axis.

    ``terms`` lists every held term in the canonical order: axes in the order the mapping names
    them (first encounter, left before right, as :attr:`Mapping.axes`), and for each axis its
    terms from the most major (largest stride) to the most minor. Adjacent digits of an axis are
    one term: ``[Wp / 16 % 256, Wp % 16]`` holds the single term ``Wp % 4096``. An axis of size 1
    that the mapping names is held whole; any other axis without a live digit holds no term.
    ``sizes`` has the declared size of every axis the mapping names; ``irregular`` the axes
    whose live coordinates are no product of terms (they have no entry in ``terms``).
    """

    terms: tuple[Digit, ...]
    sizes: dict[str, int]
    irregular: tuple[str, ...]
    composite: bool  # a composite slot hides coordinates from the digit form

    def of(self, axis: str) -> tuple[Digit, ...]:
        """The terms of ``axis``, major first."""
        return tuple(t for t in self.terms if t.axis == axis)

    def whole(self, axis: str) -> bool:
        """Whether every coordinate of ``axis`` is held."""
        found = self.of(axis)
        return len(found) == 1 and found[0].whole


def held(mapping: Mapping) -> Held:
    """The terms ``mapping`` holds (cached on the mapping's structure, since the order is the written one)."""
    return _held_cached(StructKey(mapping))


@memo(maxsize=4096)
def _held_cached(key: StructKey) -> Held:
    mapping = key.node
    sizes = mapping.axis_sizes()
    slots = slots_of(mapping)
    digits: dict[str, list[Digit]] = {}
    hidden: set[str] = set()
    for slot in slots:
        live = slot.live
        if isinstance(live, Digit):
            digits.setdefault(live.axis, []).append(live)
        elif isinstance(live, Composite):
            hidden |= _axes_of(live.operand.slots)
    terms: list[Digit] = []
    irregular: list[str] = []
    for axis in mapping.axes:
        if axis in hidden:
            irregular.append(axis)
            continue
        if sizes[axis] == 1:
            terms.append(Digit(axis, 1, 1, 1))
            continue
        found = _axis_terms(axis, sizes[axis], digits.get(axis, []), shared_limits(slots, axis))
        if found is None:
            irregular.append(axis)
        else:
            terms.extend(found)
    return Held(tuple(terms), sizes, tuple(irregular), bool(hidden))


def logical_terms(mapping: Mapping) -> tuple[Digit, ...]:
    """The dimensions of the logical view of data laid out through ``mapping``, in order.

    This is what a stage result's ``to_tensor()`` holds, one array dimension per term:

    * axes in the order ``mapping.axes`` gives (first encounter in the text as written, left
      before right), skipping an axis of size above 1 that no live slot holds;
    * per axis, its held terms from the most major (largest stride) to the most minor, adjacent
      digits merged into one term (:attr:`Held.terms`);
    * along the dimension of term ``t``, index ``j`` holds coordinate ``j * t.stride`` of
      ``t.axis`` (plus what the axis's other terms add), so the element at logical coordinates
      ``X`` sits at index ``(X[t.axis] // t.stride) % t.count`` of each dimension;
    * an axis of size 1 is one dimension of length 1;
    * an *irregular* axis (live coordinates that are no product of digits, a rare layout) is one
      whole-axis dimension, where coordinates the layout does not hold read 0.

    Padding never becomes an element: a result over ``[K / 16 # 256]`` with K = 32 is 2 long.
    """
    found = held(mapping)
    if not found.irregular:
        return found.terms
    sizes = found.sizes
    out: list[Digit] = []
    for axis in mapping.axes:
        if axis in found.irregular:
            out.append(Digit(axis, sizes[axis], 1, sizes[axis]))
        else:
            out.extend(found.of(axis))
    return tuple(out)


def _axes_of(slots: Slots) -> set[str]:
    out: set[str] = set()
    for slot in slots:
        live = slot.live
        if isinstance(live, Digit):
            out.add(live.axis)
        elif isinstance(live, Composite):
            out |= _axes_of(live.operand.slots)
    return out


def shared_limits(slots: Slots, axis: str) -> list[tuple[int, int, list[Digit]]]:
    """For each padded operand digit of ``axis`` that digits of ``slots`` are shared with: its
    stride, its live count, and those digits. Their values, added up in units of the stride, read
    as padding once they reach the live count (docs/mapping-language.md §1.8)."""
    found: dict[tuple[Operand, int], list[Digit]] = {}
    for slot in slots:
        live = slot.live
        if slot.shared is None or not isinstance(live, Digit) or live.axis != axis:
            continue
        operand, position = slot.shared.operand, slot.shared.stride
        for index, (below, part) in enumerate(zip(slot_strides(operand.slots), operand.slots)):
            if below <= position < below * part.extent and isinstance(part.live, Digit) and part.padded:
                found.setdefault((operand, index), []).append(live)
    out: list[tuple[int, int, list[Digit]]] = []
    for (operand, index), pool in found.items():
        digit = operand.slots[index].live
        assert isinstance(digit, Digit)
        out.append((digit.stride, digit.count, pool))
    return out


def _axis_terms(axis: str, n: int, digits: list[Digit],
                limits: list[tuple[int, int, list[Digit]]]) -> tuple[Digit, ...] | None:
    """The terms of one axis's digits, or None when its live coordinates are no product of terms."""
    merged = runs([Digit(axis, n, d.stride, d.count) for d in digits])
    if merged is None:
        return None
    found = list(merged)
    for base, limit, pool in limits:
        limited = _apply_limit(found, digits, pool, base, limit)
        if limited is None:
            return None
        found = limited
    # A coordinate at or past the axis size reads as padding: the top term keeps what stays below.
    if found:
        top = found[0]
        found[0] = Digit(axis, n, top.stride, min(top.count, -(-n // top.stride)))
    if sum((t.count - 1) * t.stride for t in found) >= n:
        return None
    return tuple(t for t in found if t.count > 1)


def _apply_limit(found: list[Digit], digits: list[Digit], pool: list[Digit], base: int,
                 limit: int) -> list[Digit] | None:
    """``found`` with the padding of a shared operand digit taken out, or None when it is no cut of one term.

    The digits ``pool`` cut from that operand digit (docs/mapping-language.md §1.8) read as padding
    once their value, in units of its stride ``base``, reaches its live count ``limit``. When they
    are the top digits of one term, that keeps a prefix of the term's values.
    """
    if sum((d.count - 1) * (d.stride // base) for d in pool) < limit:
        return found  # the limit is never reached
    owners = {i for i, t in enumerate(found) for d in pool if t.stride <= d.stride < t.top}
    if len(owners) != 1:
        return None
    index = owners.pop()
    term = found[index]
    low = min(d.stride for d in pool)
    above = [d for d in digits if low <= d.stride < term.top]
    if low % term.stride or any(all(d is not p for p in pool) for d in above):
        return None
    keep = low // term.stride * -(-limit * base // low)
    out = list(found)
    out[index] = Digit(term.axis, term.n, term.stride, min(term.count, keep))
    return out


class NotATerm(ValueError):
    """A mapping part that is no single digit of one axis (the caller turns it into its own error)."""


def term_of(part: Mapping) -> Digit:
    """The one digit ``part`` spells (``B / 2``, ``Wp % 8192``), or :class:`NotATerm`."""
    if isinstance(part, Symbol) and part.n == 1:
        return Digit(part.name, 1, 1, 1)
    slots = slots_of(part)
    if len(slots) != 1:
        raise NotATerm(part.text)
    slot = slots[0]
    live = slot.live
    if not isinstance(live, Digit) or slot.padded:
        raise NotATerm(part.text)
    found = _axis_terms(live.axis, live.n, [live], [])
    if found is None or len(found) != 1 or found[0].count != live.count:
        raise NotATerm(part.text)
    return found[0]


def parts_of(mapping: Mapping) -> list[Mapping]:
    """The top-level comma-separated parts of ``mapping`` as written, outermost first."""
    if isinstance(mapping, Pair):
        return parts_of(mapping.left) + parts_of(mapping.right)
    return [mapping]
