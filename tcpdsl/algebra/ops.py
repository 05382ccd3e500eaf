"""Public operations of the mapping algebra used by the verifiers (docs/mapping-language.md §1.8, §1.9).

All structural results are cached on the structural key of their operands.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from tcpdsl.algebra.ideal import evaluate
from tcpdsl.algebra.nodes import MAPPING_STAGE, Mapping, as_int, as_mapping
from tcpdsl.algebra.render import clear_render_caches, render
from tcpdsl.algebra.slots import (
    slot_strides,
    Bcast,
    Composite,
    Digit,
    Slot,
    Slots,
    StructKey,
    clear_norm_cache,
    norm,
    prefix,
    simplify,
    stride,
)
from tcpdsl.errors import LayoutError

__all__ = [
    "DivideTerm",
    "Slot",
    "clear_caches",
    "divide_exact",
    "divide_terms_or_reason",
    "equivalent",
    "normalize",
    "padding_per_stride",
    "remove_padding",
    "slots_of",
    "split_at",
]


def slots_of(m: Mapping) -> tuple[Slot, ...]:
    """The normalized slots of ``m``, innermost first."""
    return norm(m)


def normalize(m: Mapping) -> Mapping:
    """The canonical form: ``Pair(outermost, Pair(..., innermost))`` of single-axis factors."""
    return _normalize(StructKey(as_mapping(m, "normalize")))


@lru_cache(maxsize=65536)
def _normalize(ck: StructKey) -> Mapping:
    return render(norm(ck.node))


def split_at(m: Mapping, n: int) -> tuple[Mapping, Mapping]:
    """``(outer, inner)``: ``inner`` keeps the first ``n`` cells, ``outer`` strides past them."""
    m = as_mapping(m, "split_at")
    n = as_int(n, "split point", "split_at")
    if n <= 0 or m.size % n:
        raise LayoutError(MAPPING_STAGE, "SplitIndivisible", f"cannot split {m.text} (size {m.size}) at {n}",
                          hint=f"split at a divisor of {m.size}")
    return _split_at(StructKey(m), n)


@lru_cache(maxsize=65536)
def _split_at(ck: StructKey, n: int) -> tuple[Mapping, Mapping]:
    slots = norm(ck.node)
    return render(stride(slots, n)), render(prefix(slots, n))


def remove_padding(m: Mapping) -> Mapping:
    """Drop outer padding: pure-pad slots at the outer end, then the padding of the first live slot."""
    slots = list(norm(as_mapping(m, "remove_padding")))
    while slots and slots[-1].live is None:
        slots.pop()
    if slots:
        top = slots[-1]
        slots[-1] = Slot(top.live, top.count)
    return render(simplify(tuple(slots)))


def padding_per_stride(m: Mapping) -> dict[int, int]:
    """Cumulative stride -> padded extent of each normalized factor, innermost first."""
    return dict(_padding_per_stride(StructKey(as_mapping(m, "padding_per_stride"))))


@lru_cache(maxsize=65536)
def _padding_per_stride(ck: StructKey) -> tuple[tuple[int, int], ...]:
    slots = norm(ck.node)
    if not slots:
        return ((1, 1),)
    return tuple((stride, slot.extent) for stride, slot in zip(slot_strides(slots), slots))


def equivalent(a: Mapping, b: Mapping) -> bool:
    """Equal size and equal cells at every position under the ideal semantics (docs/mapping-language.md §1.7)."""
    a, b = as_mapping(a, "equivalent"), as_mapping(b, "equivalent")
    return a.size == b.size and all(_same(evaluate(a, i), evaluate(b, i)) for i in range(a.size))


def _same(x: object, y: object) -> bool:
    return x is y or x == y


# -- divide -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DivideTerm:
    """One matched factor: its cumulative stride in the dividend and in the divisor, its live
    cell count ``resize``, and the axes it covers."""

    dividend_stride: int
    divisor_stride: int
    resize: int
    idents: tuple[str, ...]


def divide_exact(dividend: Mapping, divisor: Mapping) -> list[DivideTerm]:
    """Match every live digit of ``divisor`` inside ``dividend`` (docs/mapping-language.md §1.9), outermost first."""
    result = divide_terms_or_reason(dividend, divisor)
    if isinstance(result, str):
        raise LayoutError(MAPPING_STAGE, "Indivisible", result,
                          hint="every axis digit of the divisor must appear in the dividend")
    return result


def divide_terms_or_reason(dividend: Mapping, divisor: Mapping) -> list[DivideTerm] | str:
    """The terms of ``dividend ÷ divisor``, or the reason the division is not exact."""
    dividend, divisor = as_mapping(dividend, "divide_exact"), as_mapping(divisor, "divide_exact")
    result = _divide(StructKey(dividend), StructKey(divisor))
    return result if isinstance(result, str) else list(result)


@lru_cache(maxsize=65536)
def _divide(top: StructKey, bottom: StructKey) -> tuple[DivideTerm, ...] | str:
    big, small = norm(top.node), norm(bottom.node)
    big_at = slot_strides(big)
    terms: list[DivideTerm] = []
    for slot, cum1 in zip(small, slot_strides(small)):
        live = slot.live
        if live is None or isinstance(live, Bcast):
            continue
        if isinstance(live, Composite):
            found = [cum2 for other, cum2 in zip(big, big_at) if other.live == live]
            if not found:
                return f"{bottom.node.text}: an opaque factor of the divisor does not occur in {top.node.text}"
            terms.append(DivideTerm(found[0], cum1, live.count, tuple(sorted(_composite_axes(live.inner)))))
            continue
        reason = _cover(live, cum1, big, big_at, terms, top.node, bottom.node)
        if reason is not None:
            return reason
    terms.sort(key=lambda t: -t.dividend_stride)
    return tuple(terms)


def _cover(want: Digit, cum1: int, big: Slots, big_at: list[int], terms: list[DivideTerm],
           dividend: Mapping, divisor: Mapping) -> str | None:
    """Cover the coordinate range ``[s, s*c)`` of ``want`` with digits of the dividend."""
    cur, end = want.stride, want.stride * want.count
    while cur < end:
        for slot, cum2 in zip(big, big_at):
            d = slot.live
            if (isinstance(d, Digit) and d.sym == want.sym and d.stride <= cur < d.stride * d.count
                    and cur % d.stride == 0):
                stop = min(end, d.stride * d.count)
                resize = -(-stop // cur)
                terms.append(DivideTerm(cum2 * (cur // d.stride), cum1 * (cur // want.stride), resize, (want.sym,)))
                cur = stop
                break
        else:
            return (f"digit {want.sym} (stride {cur}) of {divisor.text} is not a digit of {dividend.text}"
                    if cur != want.stride else f"{want.sym} of {divisor.text} does not occur as a digit of {dividend.text}")
    return None


def _composite_axes(slots: Slots) -> set[str]:
    names: set[str] = set()
    for slot in slots:
        if isinstance(slot.live, Digit):
            names.add(slot.live.sym)
        elif isinstance(slot.live, Composite):
            names |= _composite_axes(slot.live.inner)
    return names


def clear_caches() -> None:
    """Forget every cached normal form and operation result (for cold-start measurements)."""
    clear_norm_cache()
    clear_render_caches()
    for cached in (_normalize, _split_at, _padding_per_stride, _divide):
        cached.cache_clear()
