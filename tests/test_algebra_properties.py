"""Algebraic laws of the mapping algebra over generated expression trees (docs/mapping-language.md §1.7-§1.9)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tcpdsl.algebra.cells import PaddingKind
from tcpdsl.algebra.ideal import evaluate
from tcpdsl.algebra.nodes import IDENTITY, Broadcast, Mapping, Modulo, Padding, Pair, Resize, Stride, Symbol, children
from tcpdsl.algebra.ops import equivalent, normalize, padding_per_stride, remove_padding, slots_of, split_at
from tcpdsl.algebra.render import canonical_text
from tcpdsl.algebra.scope import parse
from tcpdsl.algebra.slots import Composite, Digit, decode

NAMES = ("A", "B", "C", "D", "E", "F")
MAX_SIZE = 72

# Raise TCPDSL_LAW_EXAMPLES for a deeper search; the default keeps this file fast.
laws = settings(max_examples=int(os.environ.get("TCPDSL_LAW_EXAMPLES", "200")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def trees(draw: st.DrawFn, depth: int = 3, names: tuple[str, ...] = NAMES) -> Mapping:
    """A valid tree (every size rule holds) in which each axis occurs at most once."""
    pool = list(names)

    def build(level: int, budget: int) -> Mapping:
        choice = draw(st.integers(0, 6 if level > 0 else 1))
        if choice == 0 and pool:
            name = pool.pop(draw(st.integers(0, len(pool) - 1)))
            return Symbol(name, draw(st.integers(1, min(12, budget))))
        if choice <= 1:
            return Broadcast(draw(st.sampled_from([1, 2, 3])))
        if choice == 2:
            left = build(level - 1, max(1, budget // 2))
            right = build(level - 1, max(1, budget // max(1, left.size)))
            return Pair(left, right)
        inner = build(level - 1, budget)
        if choice == 3:
            return Stride(inner, draw(st.sampled_from(divisors(inner.size))))
        if choice == 4:
            return Modulo(inner, draw(st.sampled_from(divisors(inner.size))))
        if choice == 5:
            return Resize(inner, draw(st.integers(1, inner.size)))
        kind = draw(st.sampled_from(list(PaddingKind)))
        return Padding(inner, draw(st.integers(inner.size, max(inner.size, min(budget, 3 * inner.size)))), kind)

    tree = build(depth, MAX_SIZE)
    assume(tree.size <= MAX_SIZE * 2)
    return tree


def distinct_pieces(m: Mapping) -> bool:
    """No composite sub-expression occurs twice (that reuse is degenerate, docs/mapping-language.md §1.7)."""
    seen: set[object] = set()

    def walk(node: Mapping) -> bool:
        if children(node):
            if node.key in seen:
                return False
            seen.add(node.key)
        return all(walk(child) for child in children(node))

    return walk(m)


def same_cells(a: Mapping, b: Mapping) -> bool:
    return a.size == b.size and all(evaluate(a, i) == evaluate(b, i) for i in range(a.size))


def opaque(m: Mapping) -> bool:
    return any(isinstance(slot.live, Composite) for slot in slots_of(m))


def check_same(a: Mapping, b: Mapping) -> None:
    assert equivalent(a, b), (a.text, b.text)
    if not (opaque(a) or opaque(b)):
        # Opaque factors have no unique normal form (docs/mapping-language.md §1.8); plain slots
        # must agree exactly.
        assert normalize(a) == normalize(b), (a.text, b.text, str(a), str(b))


@laws
@given(trees())
def test_normalize_preserves_every_cell(e: Mapping) -> None:
    assume(distinct_pieces(e))
    n = normalize(e)
    slots = slots_of(e)
    for i in range(e.size + 1):
        cell = evaluate(e, i)
        assert decode(slots, i) == cell or decode(slots, i) is cell, (e.text, i)
        assert evaluate(n, i) == cell or evaluate(n, i) is cell, (e.text, n.text, i)


@laws
@given(trees())
def test_normalize_is_idempotent(e: Mapping) -> None:
    n = normalize(e)
    assert normalize(n).same_structure(n), (e.text, n.text, normalize(n).text)


@laws
@given(trees())
def test_canonical_text_parses_back_equal(e: Mapping) -> None:
    text = canonical_text(e)
    again = parse(text, e.axis_sizes())
    assert again.size == e.size
    assert again == e, (e.text, text, str(again))


@laws
@given(trees())
def test_written_text_parses_back_equal(e: Mapping) -> None:
    # ``text`` flattens nested pairs, so the association may change but nothing else does.
    again = parse(e.text, e.axis_sizes())
    assert again == e, e.text
    assert same_cells(again, e), e.text


@laws
@given(trees())
def test_unit_factors(e: Mapping) -> None:
    check_same(Pair(e, IDENTITY), e)
    check_same(Pair(IDENTITY, e), e)
    check_same(Stride(e, 1), e)
    check_same(Padding(e, e.size), e)
    check_same(Resize(e, e.size), e)
    check_same(Modulo(e, 1), IDENTITY)


@laws
@given(st.data())
def test_digit_split_rejoins(data: st.DataObject) -> None:
    e = data.draw(trees())
    n = data.draw(st.sampled_from(divisors(e.size)))
    check_same(Pair(Stride(e, n), Modulo(e, n)), e)


@laws
@given(trees(depth=2, names=("A", "B", "C")), trees(depth=2, names=("D", "E", "F")))
def test_pair_halves(a: Mapping, b: Mapping) -> None:
    check_same(Stride(Pair(a, b), b.size), a)
    check_same(Modulo(Pair(a, b), b.size), b)


@laws
@given(trees(depth=1, names=("A", "B")), trees(depth=1, names=("C", "D")), trees(depth=1, names=("E", "F")))
def test_pair_is_associative(a: Mapping, b: Mapping, c: Mapping) -> None:
    check_same(Pair(Pair(a, b), c), Pair(a, Pair(b, c)))


@laws
@given(st.data())
def test_split_at_halves_rejoin(data: st.DataObject) -> None:
    e = data.draw(trees())
    assume(distinct_pieces(e))
    n = data.draw(st.sampled_from(divisors(e.size)))
    outer, inner = split_at(e, n)
    assert inner.size == n and outer.size == e.size // n
    assert same_cells(inner, Modulo(e, n)), (e.text, inner.text)
    assert same_cells(outer, Stride(e, n)), (e.text, outer.text)
    if not any(isinstance(slot.live, Digit) and slot.live.rag for slot in slots_of(outer)):
        # A ragged outer digit is tied to its padded operand only inside the slot model: once
        # rendered, the halves no longer share that operand, so the ideal map cannot rejoin them.
        assert equivalent(outer.pair(inner), e), (e.text, outer.text, inner.text)
    if not opaque(e):  # see check_same
        assert outer.pair(inner) == e, (e.text, outer.text, inner.text)


@laws
@given(trees())
def test_padding_queries_follow_the_slots(e: Mapping) -> None:
    pps = padding_per_stride(e)
    slots = slots_of(e)
    assert list(pps.values()) == ([s.extent for s in slots] or [1])
    stripped = remove_padding(e)
    assert stripped.size <= normalize(e).size
    assert normalize(stripped).same_structure(stripped)


@st.composite
def interleaved_splits(draw: st.DrawFn) -> Mapping:
    """Two (often padded) operands, each split into ``/ n`` and ``% n`` digits and interleaved like
    the Zz layout, so that ragged digits must pool with their axis's finer digits."""
    sides = []
    for names in (("A", "B", "C"), ("D", "E", "F")):
        e = draw(trees(depth=2, names=names))
        if draw(st.booleans()):
            e = Padding(e, draw(st.integers(e.size, 2 * e.size + 3)), draw(st.sampled_from(list(PaddingKind))))
        # A size-1 major piece still ranks its operand's padding (docs/mapping-language.md §1.7),
        # which no slot keeps.
        n = draw(st.sampled_from(divisors(e.size)[:-1] or [1]))
        sides.append((e, n))
    (a, n), (b, k) = sides
    assume(distinct_pieces(Pair(a, b)) and a.size * b.size <= 4 * MAX_SIZE)
    order = draw(st.sampled_from([(0, 1, 2, 3), (0, 2, 1, 3), (1, 0, 2, 3)]))
    pieces = [Stride(a, n), Stride(b, k), Modulo(a, n), Modulo(b, k)]
    return Pair(pieces[order[0]], Pair(pieces[order[1]], Pair(pieces[order[2]], pieces[order[3]])))


@laws
@given(st.one_of(trees(), interleaved_splits()))
def test_canonical_text_holds_the_same_cells(e: Mapping) -> None:
    slots = slots_of(e)
    assume(all(decode(slots, i) == evaluate(e, i) for i in range(e.size)))  # normalize is faithful here
    again = parse(str(e), e.axis_sizes())
    assert equivalent(again, e), (e.text, str(e))
    assert str(again) == str(e)
