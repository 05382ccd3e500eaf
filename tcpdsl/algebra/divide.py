"""Dividing one mapping by another: where each digit of the divisor sits in the dividend.

``divide_exact`` (docs/mapping-language.md §1.9) needs every live digit of the divisor; the
relaxed division keeps the pieces it finds and skips the rest, as the reference's relaxed variant
does (``[A / 4, B, C]`` relaxed-divided by ``[B, C, D]`` matches B and C). Both look at canonical
slots, ignore padding, and list the terms outermost first (by dividend stride, descending).
"""

from __future__ import annotations

from dataclasses import dataclass

from tcpdsl.algebra.caches import memo
from tcpdsl.algebra.nodes import MAPPING_STAGE, Mapping, StructKey, as_mapping
from tcpdsl.algebra.canonical import slots_of
from tcpdsl.algebra.slots import Composite, Digit, Slots, slot_strides
from tcpdsl.errors import LayoutError


@dataclass(frozen=True, slots=True)
class DivideTerm:
    """One matched factor: its cumulative stride in the dividend and in the divisor, its live
    cell count ``resize``, and the axes it covers."""

    dividend_stride: int
    divisor_stride: int
    resize: int
    idents: tuple[str, ...]


def divide_exact(dividend: Mapping, divisor: Mapping) -> list[DivideTerm]:
    """Every live digit of ``divisor`` inside ``dividend``; a LayoutError ``Indivisible`` if one is missing."""
    result = divide_terms_or_reason(dividend, divisor)
    if isinstance(result, str):
        raise LayoutError(MAPPING_STAGE, "Indivisible", result,
                          hint="every axis digit of the divisor must appear in the dividend")
    return result


def divide_terms_or_reason(dividend: Mapping, divisor: Mapping) -> list[DivideTerm] | str:
    """The terms of ``dividend ÷ divisor``, or the reason the division is not exact."""
    dividend, divisor = as_mapping(dividend, "divide_exact"), as_mapping(divisor, "divide_exact")
    result = _divide(StructKey(dividend), StructKey(divisor), False)
    return result if isinstance(result, str) else list(result)


def divide_relaxed(dividend: Mapping, divisor: Mapping) -> list[DivideTerm]:
    """The terms of every piece of a ``divisor`` digit that ``dividend`` holds; the missing pieces give none."""
    dividend, divisor = as_mapping(dividend, "divide_relaxed"), as_mapping(divisor, "divide_relaxed")
    result = _divide(StructKey(dividend), StructKey(divisor), True)
    assert not isinstance(result, str)
    return list(result)


@memo(maxsize=65536)
def _divide(top: StructKey, bottom: StructKey, relaxed: bool) -> tuple[DivideTerm, ...] | str:
    big, small = slots_of(top.node), slots_of(bottom.node)
    terms: list[DivideTerm] = []
    for slot, cum in zip(small, slot_strides(small)):
        live = slot.live
        if isinstance(live, Composite):
            found = [at for other, at in zip(big, slot_strides(big)) if other.live == live]
            if found:
                terms.append(DivideTerm(found[0], cum, live.count, _axes(live.operand.slots)))
            elif not relaxed:
                return f"{bottom.node}: an opaque factor of the divisor does not occur in {top.node}"
        elif isinstance(live, Digit):
            reason = _cover(live, cum, big, terms, relaxed)
            if reason is not None:
                return reason.format(divisor=bottom.node, dividend=top.node)
    terms.sort(key=lambda t: -t.dividend_stride)
    return tuple(terms)


def _cover(want: Digit, cum: int, big: Slots, terms: list[DivideTerm], relaxed: bool) -> str | None:
    """Cover the coordinate range ``[s, s*c)`` of ``want`` with digits of the dividend.

    Returns the reason (a template) when a piece is missing and the division is exact.
    """
    digits = [(slot.live, at) for slot, at in zip(big, slot_strides(big))
              if isinstance(slot.live, Digit) and slot.live.axis == want.axis]
    cur, end = want.stride, want.stride * want.count
    while cur < end:
        for d, at in digits:
            if d.stride <= cur < d.stride * d.count and cur % d.stride == 0:
                stop = min(end, d.stride * d.count)
                terms.append(DivideTerm(at * (cur // d.stride), cum * (cur // want.stride), -(-stop // cur), (want.axis,)))
                cur = stop
                break
        else:
            if not relaxed:
                if cur != want.stride:
                    return f"digit {want.axis} (stride {cur}) of {{divisor}} is not a digit of {{dividend}}"
                return f"{want.axis} of {{divisor}} does not occur as a digit of {{dividend}}"
            # skip to where a dividend digit of the axis starts again
            starts = [d.stride for d, _ in digits if cur < d.stride < end and d.stride % want.stride == 0]
            if not starts:
                return None
            cur = min(starts)
    return None


def _axes(slots: Slots) -> tuple[str, ...]:
    names: set[str] = set()
    for slot in slots:
        if isinstance(slot.live, Digit):
            names.add(slot.live.axis)
        elif isinstance(slot.live, Composite):
            names.update(_axes(slot.live.operand.slots))
    return tuple(sorted(names))
