"""Rendering normalized slots back to a mapping tree, and the canonical text of a mapping.

Every rendered factor must normalize back to exactly its slot, so that ``normalize`` is
idempotent and ``str(m)`` parses back equal. Plain digits have one obvious spelling; ragged
digits and composites may need a detour (``R # 8 / 4 # 4``, ``(B, A # 9) / 4``), so candidate
spellings are checked against ``norm`` and the first that reproduces the slot wins.

The rendered tree must also hold the same cells (docs/mapping-language.md §1.7). A ragged digit
reads as padding once the digits of its axis that it pools with
(:func:`tcpdsl.algebra.slots.decode`) sum past its limit; under the ideal semantics positions
only pool inside one shared operand. So every digit of such a pool is spelled on one padded
operand (``S #{0} 4 / 2`` ... ``S #{0} 4 % 2``), never as a free-standing cut (``S = 2``) whose
coordinate would overshoot instead of reading as padding.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from tcpdsl.algebra.cells import PaddingKind
from tcpdsl.algebra.nodes import IDENTITY, MAX_SIZE, Broadcast, Mapping, Modulo, Padding, Pair, Resize, Stride, Symbol
from tcpdsl.algebra.slots import Bcast, Composite, Digit, Rag, Slot, Slots, norm, size_of
from tcpdsl.errors import LayoutError

_CUT_SEARCH: Final = 64  # how many cut lengths to try when spelling a composite
_PAD_SEARCH: Final = 8  # how many pad lengths to try when spelling a composite


@dataclass(frozen=True, slots=True)
class Shared:
    """The padded operand ``T #{kind} extent`` that every digit of one rag pool is cut from.

    ``T`` spells the digit of ``sym`` at stride ``rag.base`` with ``rag.limit`` values, so a pooled
    position at or past the limit lands in the padding, as :func:`~tcpdsl.algebra.slots.decode` reads it.
    """

    sym: str
    n: int
    rag: Rag
    extent: int


def render(slots: Slots) -> Mapping:
    """``Pair(outermost, Pair(..., innermost))``; the empty slot list is the identity."""
    out: Mapping | None = None
    for slot, shared in zip(slots, _shared_operands(slots)):
        factor = render_slot(slot, shared)
        out = factor if out is None else Pair(factor, out)
    return IDENTITY if out is None else out


def _shared_operands(slots: Slots) -> list[Shared | None]:
    """For each slot, the operand its digit must share with a ragged digit of its axis, if any."""
    out: list[Shared | None] = [None] * len(slots)
    for slot in slots:
        ragged = slot.live
        if not (isinstance(ragged, Digit) and ragged.rag is not None):
            continue
        rag = ragged.rag
        spans: dict[int, int] = {}  # pooled slot -> cells of the shared operand its digit spans
        for index, other in enumerate(slots):
            d = other.live
            if isinstance(d, Digit) and _pools_with(d, ragged.sym, rag):
                spans[index] = d.stride // rag.base * _kept(other, rag)
        if len(spans) == 1:
            continue  # nothing pools with it: the digit's own operand will do
        # A multiple of every span, so each digit is a whole ``/ r % c`` of the operand and no
        # pooled sum (always below the outermost span) runs past its end.
        shared = Shared(ragged.sym, ragged.n, rag, math.lcm(*spans.values()))
        for index in spans:
            out[index] = shared
    return out


def _pools_with(d: Digit, sym: str, rag: Rag) -> bool:
    """Whether ``d`` adds into the padded extent of ``rag`` (the pooling rule of ``decode``)."""
    return d.sym == sym and rag.base <= d.stride < rag.base * rag.limit and d.stride % rag.base == 0


def _kept(slot: Slot, rag: Rag) -> int:
    """How many digit values a pooled slot cuts from the shared operand.

    The ragged digit's own padding, when it is of the rag's kind, is cut from the operand too: its
    values past the live count then reach the operand's padding and rank with the whole pool, as
    the one padded operand the digits came from did. Any other padding stays outside the cut.
    """
    live = slot.live
    return slot.extent if isinstance(live, Digit) and live.rag == rag and slot.kind == rag.kind else slot.count


@lru_cache(maxsize=16384)
def render_slot(slot: Slot, shared: Shared | None = None) -> Mapping:
    """One slot as a mapping: its term, padded to the extent when it has padding.

    With ``shared`` the digit is cut from that operand first, so that it pools with its rag.
    """
    first: Mapping | None = None
    for candidate in _candidates(slot, shared):
        if first is None:
            first = candidate
        try:
            if norm(candidate) == (slot,):
                return candidate
        except LayoutError:
            continue
    # No spelling reproduces the slot exactly (none is known; the property tests search for
    # one): fall back to the first, which still denotes the same cells.
    assert first is not None
    return first


def clear_render_caches() -> None:
    """Forget every rendered slot and shared operand (for cold-start measurements)."""
    render_slot.cache_clear()
    _shared_operand.cache_clear()


def canonical_text(m: Mapping) -> str:
    """The text of the normalized form, top-level pair without outer parentheses."""
    from tcpdsl.algebra.ops import normalize

    return normalize(m).text


def _padded(term: Mapping, slot: Slot) -> Mapping:
    return Padding(term, slot.extent, slot.kind) if slot.extent > slot.count else term


def _candidates(slot: Slot, shared: Shared | None) -> Iterator[Mapping]:
    live = slot.live
    if live is None:
        yield Padding(IDENTITY, slot.extent, slot.kind)
    elif isinstance(live, Bcast):
        yield _padded(Broadcast(live.c), slot)
    elif isinstance(live, Digit):
        if shared is not None:
            yield from _shared_terms(slot, live, shared)
        for term in _digit_terms(live):
            yield _padded(term, slot)
    else:
        for term in _composite_terms(live, slot):
            yield _padded(term, slot)


def _keep(term: Mapping, count: int, cut_by_modulo: bool) -> Mapping:
    """The first ``count`` cells of ``term``: ``% c`` when it divides, else ``= c``."""
    if count == term.size:
        return term
    if cut_by_modulo and term.size % count == 0:
        return Modulo(term, count)
    return Resize(term, count)


def _digit_terms(d: Digit) -> Iterator[Mapping]:
    if d.rag is not None:
        rag = d.rag
        r = d.stride // rag.base
        if d.count * r > MAX_SIZE:  # no text can write that padding
            return
        for base in _plain_digit_terms(d.sym, d.n, rag.base, rag.limit):
            yield Stride(Padding(base, d.count * r, rag.kind), r)
        return
    yield from _plain_digit_terms(d.sym, d.n, d.stride, d.count)


def _shared_terms(slot: Slot, d: Digit, shared: Shared) -> Iterator[Mapping]:
    """The digit as ``operand / r`` cut to its values, padded outside the cut if need be."""
    operand = _shared_operand(shared)
    if operand is None:
        return
    r = d.stride // shared.rag.base
    kept = _kept(slot, shared.rag)
    term = _keep(Stride(operand, r) if r > 1 else operand, kept, True)
    yield term if kept == slot.extent else Padding(term, slot.extent, slot.kind)


@lru_cache(maxsize=4096)
def _shared_operand(shared: Shared) -> Mapping | None:
    """``T #{kind} extent`` for the first spelling ``T`` of the rag's base digit that normalizes to it."""
    rag = shared.rag
    want = (Slot(Digit(shared.sym, shared.n, rag.base, rag.limit), rag.limit),)
    for term in _plain_digit_terms(shared.sym, shared.n, rag.base, rag.limit):
        try:
            if norm(term) == want:
                return Padding(term, shared.extent, rag.kind)
        except LayoutError:
            continue
    return None


def _plain_digit_terms(sym: str, n: int, stride: int, count: int) -> Iterator[Mapping]:
    axis = Symbol(sym, n)
    if n % stride == 0:
        strided: Mapping = axis if stride == 1 else Stride(axis, stride)
        yield _keep(strided, count, True)
    if stride * count <= n:
        yield Stride(Resize(axis, stride * count), stride)
    if n < stride * count <= MAX_SIZE:
        yield Stride(Padding(axis, stride * count), stride)


def _composite_terms(c: Composite, slot: Slot) -> Iterator[Mapping]:
    """Spellings of a composite digit, simplest first.

    A composite arises when slot surgery fails, so its spelling must make surgery fail the same
    way: the operand may have to be cut (``= K``), padded (``# P``) or strided in two steps first.
    """
    inner = render(c.inner)
    total = size_of(c.inner)
    span = c.stride * c.count
    bases: list[Mapping] = [inner]
    if total < c.stride * slot.extent <= MAX_SIZE:
        bases.append(Padding(inner, c.stride * slot.extent, slot.kind))
    if c.stride == 1 and total < c.count <= MAX_SIZE:
        bases.append(Padding(inner, c.count))
    cuts = sorted(range(span, min(total, span + _CUT_SEARCH * c.stride), c.stride), key=lambda k: (k % span != 0, k))
    bases.extend(Resize(inner, cut) for cut in cuts)
    # last resort: the cut of a composite made by padding the operand with a kind it cannot absorb
    pads = range(total + 1, min(total + _PAD_SEARCH, MAX_SIZE + 1))  # past MAX_SIZE no text can write them
    bases.extend(Padding(inner, p, kind) for p in pads for kind in PaddingKind)
    chains = [(c.stride,)] + [(d, c.stride // d) for d in range(2, c.stride) if c.stride % d == 0]
    for base in bases:
        for chain in chains:
            strided = base
            for step in chain:
                strided = strided if step == 1 else Stride(strided, step)
            yield _keep(strided, c.count, True)
            yield _keep(strided, c.count, False)
