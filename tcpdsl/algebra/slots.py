"""The normalized slot model (docs/mapping-language.md §1.8) and its construction ``norm``.

A normalized mapping is a tuple of slots, innermost first. Each slot is ``(live, extent, kind)``:
digit values ``[0, live count)`` are live, ``[live count, extent)`` are padding of ``kind``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Union

from tcpdsl.algebra.cells import OUT_OF_BOUNDS, Cell, Index, Pad, PaddingKind
from tcpdsl.algebra.nodes import MAPPING_STAGE, Broadcast, Mapping, Modulo, Padding, Pair, Resize, Stride, Symbol
from tcpdsl.errors import LayoutError

TOP = PaddingKind.TOP


@dataclass(frozen=True, slots=True)
class Bcast:
    """``c`` live cells of a coordinate-free axis."""

    c: int


@dataclass(frozen=True, slots=True)
class Rag:
    """Why a strided digit of a padded axis is ragged.

    Digits of the axis whose strides lie in ``[base, base * limit)`` address one padded extent;
    their summed value (in units of ``base``) reads as padding of ``kind`` once it reaches ``limit``.
    """

    base: int
    limit: int
    kind: PaddingKind


@dataclass(frozen=True, slots=True)
class Digit:
    """Digit ``d`` in ``[0, count)`` adds ``d * stride`` to axis ``sym`` (declared size ``n``)."""

    sym: str
    n: int
    stride: int
    count: int
    rag: Rag | None = None


@dataclass(frozen=True, slots=True)
class Composite:
    """Digit ``d`` in ``[0, count)`` adds ``d * stride`` to a position of the opaque mapping ``inner``."""

    inner: tuple[Slot, ...]
    stride: int
    count: int


Live = Union[Bcast, Digit, Composite, None]


@dataclass(frozen=True, slots=True)
class Slot:
    """One normalized factor: ``live`` (``None`` is pure padding), its padded ``extent`` and pad ``kind``."""

    live: Live
    extent: int
    kind: PaddingKind = TOP

    @property
    def count(self) -> int:
        """How many digit values are live."""
        return live_count(self.live)

    @property
    def padded(self) -> bool:
        return self.extent > self.count


Slots = tuple[Slot, ...]


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


def _make(live: Live, extent: int, kind: PaddingKind) -> Slot:
    """A slot with the kind made irrelevant (Top) when nothing is padded."""
    return Slot(live, extent, kind if extent > live_count(live) else TOP)


def _cut(slot: Slot, q: int) -> Slot:
    """The first ``q`` digit values of ``slot``."""
    live, count = slot.live, min(slot.count, q)
    if live is None:
        return _make(None, q, slot.kind)
    if isinstance(live, Bcast):
        return _make(Bcast(count), q, slot.kind)
    if isinstance(live, Composite):
        return _make(Composite(live.inner, live.stride, count), q, slot.kind)
    return _make(_digit(live.sym, live.n, live.stride, count, live.rag), q, slot.kind)


def _digit(sym: str, n: int, stride: int, count: int, rag: Rag | None) -> Digit:
    if rag is not None and count * (stride // rag.base) <= rag.limit:
        rag = None  # even with every finer digit at its maximum the limit is never reached
    return Digit(sym, n, stride, count, rag)


# -- construction ------------------------------------------------------------------------------


class StructKey:
    """Hashes a node by its precomputed structural hash and compares structure, never normal forms."""

    __slots__ = ("node", "_hash")

    def __init__(self, node: Mapping) -> None:
        self.node = node
        self._hash = node._hash

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructKey) and (self.node is other.node or self.node.key == other.node.key)


def norm(m: Mapping) -> Slots:
    """The normalized slots of ``m``, innermost first (cached on structure)."""
    return _norm_cached(StructKey(m))


@lru_cache(maxsize=65536)
def _norm_cached(ck: StructKey) -> Slots:
    return _norm(ck.node)


def clear_norm_cache() -> None:
    _norm_cached.cache_clear()


def _norm(m: Mapping) -> Slots:
    if isinstance(m, Symbol):
        return () if m.n == 1 else (Slot(Digit(m.name, m.n, 1, m.n), m.n),)
    if isinstance(m, Broadcast):
        return () if m.n == 1 else (Slot(Bcast(m.n), m.n),)
    if isinstance(m, Pair):
        return simplify(norm(m.right) + norm(m.left))
    if isinstance(m, Padding):
        inner = norm(m.inner)
        if m.p < size_of(inner):
            return prefix(inner, m.p)  # a shrinking pad behaves as a resize (docs/mapping-language.md §1.4)
        return pad(inner, m.p, m.kind)
    if isinstance(m, (Modulo, Resize)):
        inner = norm(m.inner)
        k = m.m if isinstance(m, Modulo) else m.r
        if k > size_of(inner) or k <= 0:
            raise LayoutError(MAPPING_STAGE, "ResizeGrows", f"{m.text} keeps {k} cells of a mapping of size {size_of(inner)}",
                              hint="a resize or modulo may only shrink")
        return prefix(inner, k)
    if isinstance(m, Stride):
        inner = norm(m.inner)
        if m.s <= 0 or size_of(inner) % m.s:
            raise LayoutError(MAPPING_STAGE, "StrideIndivisible",
                              f"stride {m.s} does not divide size {size_of(inner)} of {m.inner.text}",
                              hint="pad the operand to a multiple of the stride first")
        return stride(inner, m.s)
    raise LayoutError(MAPPING_STAGE, "UnknownNode", f"cannot normalize a {type(m).__name__}")


def pad(slots: Slots, p: int, kind: PaddingKind) -> Slots:
    """``slots`` extended to ``p`` cells, the new ones padding of ``kind``."""
    total = size_of(slots)
    if p == total:
        return slots
    if not slots:
        return (Slot(None, p, kind),)
    top = slots[-1]
    below = total // top.extent
    if p % below == 0 and (not top.padded or top.kind == kind):
        return simplify(slots[:-1] + (Slot(top.live, p // below, kind),))
    if p % total == 0:
        return simplify(slots + (Slot(None, p // total, kind),))
    return (Slot(Composite(slots, 1, total), p, kind),)


def prefix(slots: Slots, k: int) -> Slots:
    """The first ``k`` cells of ``slots``."""
    total = size_of(slots)
    if k == total:
        return slots
    if total % k == 0 and _stride_surgery(slots, k) is None:
        # Keep the cut opaque when the matching ``/ k`` is: the two halves then share one
        # composite atom and ``[E / k, E % k]`` rejoins to ``E``.
        return (Slot(Composite(slots, 1, k), k),)
    below = 1
    for index, slot in enumerate(slots):
        if below * slot.extent >= k:
            if k % below:
                break
            q = k // below
            if q == 1:
                return simplify(slots[:index])
            return simplify(slots[:index] + (_cut(slot, q),))
        below *= slot.extent
    return (Slot(Composite(slots, 1, k), k),)


def stride(slots: Slots, s: int) -> Slots:
    """Every ``s``-th cell of ``slots`` (``s`` divides the size)."""
    if s == 1:
        return slots
    done = _stride_surgery(slots, s)
    if done is not None:
        return simplify(done)
    count = size_of(slots) // s
    return (Slot(Composite(slots, s, count), count),)


def _stride_surgery(slots: Slots, s: int) -> Slots | None:
    while s > 1:
        if not slots:
            return None
        slot = slots[0]
        e = slot.extent
        if s % e == 0:
            slots, s = slots[1:], s // e
            continue
        if e % s == 0:
            scaled = _scale(slot, s)
            return None if scaled is None else (scaled,) + slots[1:]
        g = math.gcd(e, s)
        if g == 1:
            return None
        parts = _split(slot, g)
        if parts is None:
            return None
        slots = parts + slots[1:]
    return slots


def _scale(slot: Slot, s: int) -> Slot | None:
    """The slot of digit values ``0, s, 2s, ...`` of ``slot`` (``s`` divides its extent)."""
    live, live_n = slot.live, slot.count
    kept = -(-live_n // s)
    ragged = live_n % s != 0 and slot.padded
    extent = slot.extent // s
    if live is None:
        return Slot(None, extent, slot.kind)
    if isinstance(live, Digit):
        rag = live.rag
        if ragged and rag is None:
            rag = Rag(live.stride, live_n, slot.kind)
        return _make(_digit(live.sym, live.n, live.stride * s, kept, rag), extent, slot.kind)
    if ragged and kept > 1:
        return None  # a ragged broadcast or composite has no digit form
    if kept == 1:
        return Slot(None, extent, slot.kind)
    if isinstance(live, Bcast):
        return _make(Bcast(kept), extent, slot.kind)
    return _make(Composite(live.inner, live.stride * s, kept), extent, slot.kind)


def _split(slot: Slot, g: int) -> Slots | None:
    """``slot`` as an inner factor of extent ``g`` below an outer one of extent ``extent / g``."""
    live, live_n = slot.live, slot.count
    outer_n = -(-live_n // g)
    inner_n = min(live_n, g)
    outer_extent = slot.extent // g
    if live is None:
        return (Slot(None, g, slot.kind), Slot(None, outer_extent, slot.kind))
    if isinstance(live, Digit):
        rag = live.rag
        if live_n % g and slot.padded and rag is None:
            rag = Rag(live.stride, live_n, slot.kind)
        inner_digit = _digit(live.sym, live.n, live.stride, inner_n, live.rag)
        outer = _digit(live.sym, live.n, live.stride * g, outer_n, rag)
        return (_make(inner_digit, g, slot.kind), _make(outer, outer_extent, slot.kind))
    if live_n % g and live_n > g:
        return None  # the outer part would be ragged
    if isinstance(live, Bcast):
        return (_make(Bcast(inner_n), g, slot.kind), _make(Bcast(outer_n), outer_extent, slot.kind))
    return (_make(Composite(live.inner, live.stride, inner_n), g, slot.kind),
            _make(Composite(live.inner, live.stride * g, outer_n), outer_extent, slot.kind))


# -- simplify ----------------------------------------------------------------------------------


def simplify(slots: Slots) -> Slots:
    """Apply the rewrite rules of docs/mapping-language.md §1.8 until nothing changes."""
    out = list(slots)
    changed = True
    while changed:
        changed = False
        for index, slot in enumerate(out):
            if slot.live is not None and slot.count == 1:
                out[index] = Slot(None, slot.extent, slot.kind if slot.extent > 1 else TOP)
                changed = True
            if out[index].live is None and out[index].extent == 1:
                del out[index]
                changed = True
                break
        if changed:
            continue
        for index in range(len(out) - 1):
            merged = _merge(out[index], out[index + 1])
            if merged is not None:
                out[index:index + 2] = list(merged)
                changed = True
                break
        if changed:
            continue
        for index, slot in enumerate(out):
            whole = _unwrap(slot)
            if whole is not None:
                out[index:index + 1] = list(whole)
                changed = True
                break
    return tuple(out)


def _unwrap(slot: Slot) -> Slots | None:
    """A composite covering all of its operand, as the operand's own slots when they can hold the padding."""
    live = slot.live
    if not isinstance(live, Composite) or live.stride != 1 or live.count != size_of(live.inner):
        return None
    expanded = pad(live.inner, slot.extent, slot.kind)
    return None if expanded == (slot,) else expanded


def _merge(inner: Slot, outer: Slot) -> Slots | None:
    """Rules 2-4: one slot equal to ``inner`` directly below ``outer``, or ``None``."""
    if outer.live is None and (not inner.padded or inner.kind == outer.kind):
        return (Slot(inner.live, inner.extent * outer.extent, outer.kind),)
    if inner.padded:
        return None
    a, b = inner.live, outer.live
    if isinstance(a, Bcast) and isinstance(b, Bcast):
        return (_make(Bcast(a.c * b.c), a.c * outer.extent, outer.kind),)
    if isinstance(a, Composite) and isinstance(b, Composite):
        if a.inner != b.inner or b.stride != a.stride * a.count:
            return None
        return (_make(Composite(a.inner, a.stride, a.count * b.count), a.count * outer.extent, outer.kind),)
    if not (isinstance(a, Digit) and isinstance(b, Digit)):
        return None
    if a.sym != b.sym or b.stride != a.stride * a.count:
        return None
    extent = a.count * outer.extent
    count = a.count * b.count
    kind = outer.kind
    rag: Rag | None
    if b.rag is not None and a.stride % b.rag.base == 0 and a.rag in (None, b.rag):
        # Values at or past the limit are padding whatever the finer digits hold; at the base
        # stride the limit is a plain slot boundary again and the rag is spent.
        cap = -(-b.rag.limit * b.rag.base // a.stride)
        if count > cap:
            if outer.padded and outer.kind != b.rag.kind:
                # two pad kinds: the rag's below the outer digit's own, which becomes a pure pad
                if outer.extent % b.count:
                    return None
                rejoined = _make(_digit(a.sym, a.n, a.stride, cap, None if a.stride == b.rag.base else b.rag),
                                 a.count * b.count, b.rag.kind)
                return (rejoined, Slot(None, outer.extent // b.count, outer.kind))
            count, kind = cap, b.rag.kind
        rag = None if a.stride == b.rag.base else b.rag
    elif a.rag is not None and b.rag is not None and a.rag != b.rag:
        return None
    else:
        rag = b.rag or a.rag
    return (_make(_digit(a.sym, a.n, a.stride, count, rag), extent, kind),)


# -- decoding (the slot-level semantics; must agree with the ideal evaluator) ---------------------


def decode(slots: Slots, i: int) -> Cell:
    """The cell at position ``i`` of a slot list, reading outermost first (outer padding wins)."""
    total = size_of(slots)
    if i < 0 or i >= total:
        return OUT_OF_BOUNDS
    digits: list[int] = [0] * len(slots)
    rest = i
    for index, slot in enumerate(slots):
        digits[index] = rest % slot.extent
        rest //= slot.extent
    # Non-live events ranked by the most major slot behind them (higher index = more major); on a
    # tie the slot's own padding wins, as it encloses whatever the slot's digit feeds.
    events: list[tuple[int, int, Cell]] = []
    for index, slot in enumerate(slots):
        if digits[index] >= slot.count:
            events.append((index, 1, Pad(slot.kind)))
    coords: dict[str, int] = {}
    composites: dict[Slots, int] = {}
    composite_rank: dict[Slots, int] = {}
    for index, slot in enumerate(slots):
        live, d = slot.live, digits[index]
        if isinstance(live, Digit):
            coords[live.sym] = coords.get(live.sym, 0) + d * live.stride
        elif isinstance(live, Composite):
            composites[live.inner] = composites.get(live.inner, 0) + d * live.stride
            composite_rank[live.inner] = index
    for index, slot in enumerate(slots):
        live = slot.live
        if isinstance(live, Digit) and live.rag is not None:
            rag = live.rag
            value, rank = 0, index
            for other_index, other in enumerate(slots):
                o = other.live
                if (isinstance(o, Digit) and o.sym == live.sym and rag.base <= o.stride < rag.base * rag.limit
                        and o.stride % rag.base == 0):
                    value += digits[other_index] * o.stride // rag.base
                    rank = max(rank, other_index)
            if value >= rag.limit:
                events.append((rank, 0, Pad(rag.kind)))
    for inner, position in composites.items():
        cell = decode(inner, position)
        if isinstance(cell, Index):
            for name, value in cell.coords.items():
                coords[name] = coords.get(name, 0) + value
        else:
            events.append((composite_rank[inner], 0, cell))
    if events:
        return max(events, key=lambda event: event[:2])[2]
    return Index(coords)

