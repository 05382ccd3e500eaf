"""Rendering normalized slots back to a mapping tree, and the canonical text of a mapping.

Every rendered factor must normalize back to exactly its slot, so that ``normalize`` is
idempotent and ``str(m)`` parses back equal. Plain digits have one obvious spelling; ragged
digits and composites may need a detour (``R # 8 / 4 # 4``, ``(B, A # 9) / 4``), so candidate
spellings are checked against ``norm`` and the first that reproduces the slot wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Final

from tcpdsl.algebra.cells import PaddingKind
from tcpdsl.algebra.nodes import IDENTITY, Broadcast, Mapping, Modulo, Padding, Pair, Resize, Stride, Symbol
from tcpdsl.algebra.slots import Bcast, Composite, Digit, Slot, Slots, norm, size_of
from tcpdsl.errors import LayoutError

_CUT_SEARCH: Final = 64  # how many cut lengths to try when spelling a composite
_PAD_SEARCH: Final = 8  # how many pad lengths to try when spelling a composite


def render(slots: Slots) -> Mapping:
    """``Pair(outermost, Pair(..., innermost))``; the empty slot list is the identity."""
    out: Mapping | None = None
    for slot in slots:
        factor = render_slot(slot)
        out = factor if out is None else Pair(factor, out)
    return IDENTITY if out is None else out


@lru_cache(maxsize=16384)
def render_slot(slot: Slot) -> Mapping:
    """One slot as a mapping: its term, padded to the extent when it has padding."""
    first: Mapping | None = None
    for candidate in _candidates(slot):
        if first is None:
            first = candidate
        try:
            if norm(candidate) == (slot,):
                return candidate
        except LayoutError:
            continue
    # No spelling reproduces the slot exactly (none is known; the property tests search for
    # one): fall back to the plainest, which still denotes the same cells.
    assert first is not None
    return first


def canonical_text(m: Mapping) -> str:
    """The text of the normalized form, top-level pair without outer parentheses."""
    from tcpdsl.algebra.ops import normalize

    return normalize(m).text


def _padded(term: Mapping, slot: Slot) -> Mapping:
    return Padding(term, slot.extent, slot.kind) if slot.extent > slot.count else term


def _candidates(slot: Slot) -> Iterator[Mapping]:
    live = slot.live
    if live is None:
        yield Padding(IDENTITY, slot.extent, slot.kind)
    elif isinstance(live, Bcast):
        yield _padded(Broadcast(live.c), slot)
    elif isinstance(live, Digit):
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
        for base in _plain_digit_terms(d.sym, d.n, rag.base, rag.limit):
            yield Stride(Padding(base, d.count * r, rag.kind), r)
        return
    yield from _plain_digit_terms(d.sym, d.n, d.stride, d.count)


def _plain_digit_terms(sym: str, n: int, stride: int, count: int) -> Iterator[Mapping]:
    axis = Symbol(sym, n)
    if n % stride == 0:
        strided: Mapping = axis if stride == 1 else Stride(axis, stride)
        yield _keep(strided, count, True)
    if stride * count <= n:
        yield Stride(Resize(axis, stride * count), stride)
    if stride * count > n:
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
    if c.stride * slot.extent > total:
        bases.append(Padding(inner, c.stride * slot.extent, slot.kind))
    if c.stride == 1 and c.count > total:
        bases.append(Padding(inner, c.count))
    cuts = sorted(range(span, min(total, span + _CUT_SEARCH * c.stride), c.stride), key=lambda k: (k % span != 0, k))
    bases.extend(Resize(inner, cut) for cut in cuts)
    # last resort: the cut of a composite made by padding the operand with a kind it cannot absorb
    bases.extend(Padding(inner, p, kind) for p in range(total + 1, total + _PAD_SEARCH) for kind in PaddingKind)
    chains = [(c.stride,)] + [(d, c.stride // d) for d in range(2, c.stride) if c.stride % d == 0]
    for base in bases:
        for chain in chains:
            strided = base
            for step in chain:
                strided = strided if step == 1 else Stride(strided, step)
            yield _keep(strided, c.count, True)
            yield _keep(strided, c.count, False)
