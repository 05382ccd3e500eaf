"""The operations on mappings that the stage rules and the runtime use (docs/mapping-language.md §1.7-§1.9).

Every structural result is cached on the structure of its operands, so a repeated check costs a
dictionary lookup.
"""

from __future__ import annotations

from tcpdsl.algebra.caches import memo
from tcpdsl.algebra.canonical import as_pieces, canonical, slots_of
from tcpdsl.algebra.cells import Cell
from tcpdsl.algebra.nodes import MAPPING_STAGE, Mapping, Modulo, Stride, StructKey, as_int, as_mapping
from tcpdsl.algebra.render import render
from tcpdsl.algebra.semantics import cell_at
from tcpdsl.algebra.slots import Digit, Slot, Slots, operands_in, simplify, slot_strides
from tcpdsl.errors import LayoutError

__all__ = [
    "cell_at",
    "equivalent",
    "normalize",
    "padding_per_stride",
    "remove_padding",
    "slots_of",
    "split_at",
]


def normalize(m: Mapping) -> Mapping:
    """The canonical form as a mapping: ``Pair(outermost, Pair(..., innermost))`` of one-slot factors."""
    return _normalize(StructKey(as_mapping(m, "normalize")))


@memo(maxsize=65536)
def _normalize(key: StructKey) -> Mapping:
    return render(slots_of(key.node))


def split_at(m: Mapping, n: int) -> tuple[Mapping, Mapping]:
    """``(outer, inner)``: ``inner`` keeps the first ``n`` cells, ``outer`` strides past them.

    Both are cut from one copy of the canonical form, ``N / n`` and ``N % n``: their own canonical
    forms are the slots stride and prefix surgery cut (docs/mapping-language.md §1.9), and
    ``outer.pair(inner)`` pools the two back into ``N``, so it holds the same cells as ``m``.
    """
    m = as_mapping(m, "split_at")
    n = as_int(n, "split point", "split_at")
    if n <= 0 or m.size % n:
        raise LayoutError(MAPPING_STAGE, "SplitIndivisible", f"cannot split {m.text} (size {m.size}) at {n}",
                          hint=f"split at a divisor of {m.size}")
    return _split_at(StructKey(m), n)


@memo(maxsize=65536)
def _split_at(key: StructKey, n: int) -> tuple[Mapping, Mapping]:
    whole = _normalize(key)
    return Stride(whole, n), Modulo(whole, n)


def remove_padding(m: Mapping) -> Mapping:
    """Drop outer padding: pure-padding slots at the outer end, then the padding of the first live slot."""
    slots = list(as_pieces(slots_of(as_mapping(m, "remove_padding"))))
    while slots and slots[-1].live is None:
        slots.pop()
    if slots:
        top = slots[-1]
        slots[-1] = Slot(top.live, top.count, spelt=top.spelt)
    return render(canonical(tuple(slots)))


def padding_per_stride(m: Mapping) -> dict[int, int]:
    """Cumulative stride -> padded extent of each canonical slot, innermost first."""
    return dict(_padding_per_stride(StructKey(as_mapping(m, "padding_per_stride"))))


@memo(maxsize=65536)
def _padding_per_stride(key: StructKey) -> tuple[tuple[int, int], ...]:
    slots = slots_of(key.node)
    # A one-cell slot (a piece that only ranks its operand) starts no extent of its own.
    found = tuple((below, slot.extent) for below, slot in zip(slot_strides(slots), slots) if slot.extent > 1)
    return found or ((1, 1),)


def equivalent(a: Mapping, b: Mapping) -> bool:
    """Equal size and equal cells at every position (docs/mapping-language.md §1.7).

    The slots decide it wherever they can, so that large mappings compare fast: equal canonical
    forms hold equal cells, and two forms without operands hold equal cells exactly when they are
    equal once no digit is held back by its axis size (§1.9). Only forms with operands are compared
    cell by cell.
    """
    a, b = as_mapping(a, "equivalent"), as_mapping(b, "equivalent")
    if a.size != b.size:
        return False
    x, y = slots_of(a), slots_of(b)
    if x == y:
        return True
    if not (operands_in(x) or operands_in(y)):
        return _unbounded(x) == _unbounded(y)
    return all(_same(cell_at(a, i), cell_at(b, i)) for i in range(a.size))


def _unbounded(slots: Slots) -> Slots:
    """``slots`` as if every axis were long enough for any digit to merge: cells name coordinates,
    not the axis sizes that keep an overshooting digit apart (§1.8, rule 3)."""
    tops: dict[str, int] = {}
    for slot in slots:
        if isinstance(slot.live, Digit):
            tops[slot.live.axis] = max(tops.get(slot.live.axis, 0), slot.live.stride * slot.live.count)
    return simplify(tuple(Slot(Digit(live.axis, tops[live.axis], live.stride, live.count), slot.extent, slot.kind)
                          if isinstance(live := slot.live, Digit) else slot for slot in slots))


def _same(x: Cell, y: Cell) -> bool:
    return x is y or x == y
