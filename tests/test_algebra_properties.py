"""Laws of the mapping algebra over generated expressions (docs/mapping-language.md §1.7-§1.9).

The generators build every shape the canonical form has to get right: nested operators, operands
padded with any kind, interleaved splits whose pieces come in any order, overlapping cuts, ragged
strides, resizes and sub-expressions that occur more than once. Nothing is filtered out: every
generated expression must keep every cell through its canonical form and its canonical text.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcpdsl.algebra import (
    IDENTITY,
    Broadcast,
    Cell,
    Mapping,
    Modulo,
    Padding,
    PaddingKind,
    Pair,
    Resize,
    Stride,
    Symbol,
    cell_at,
    decode,
    divide_relaxed,
    divide_terms_or_reason,
    equivalent,
    normalize,
    padding_per_stride,
    parse,
    remove_padding,
    slots_of,
    split_at,
)

NAMES = ("A", "B", "C", "D", "E", "F")
BUDGET = 48  # cells a generated operand may grow to

# Raise TCPDSL_LAW_EXAMPLES for a deeper search; the default keeps this file fast.
laws = settings(max_examples=int(os.environ.get("TCPDSL_LAW_EXAMPLES", "200")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def trees(draw: st.DrawFn, depth: int = 3, names: tuple[str, ...] = NAMES, budget: int = BUDGET) -> Mapping:
    """A valid tree in which each axis occurs at most once (broadcasts may repeat)."""
    pool = list(names)

    def build(level: int, room: int) -> Mapping:
        choice = draw(st.integers(0, 6 if level > 0 else 1))
        if choice == 0 and pool:
            return Symbol(pool.pop(draw(st.integers(0, len(pool) - 1))), draw(st.integers(1, max(1, min(12, room)))))
        if choice <= 1:
            return Broadcast(draw(st.sampled_from([1, 1, 2, 3])))
        if choice == 2:
            left = build(level - 1, max(1, room // 2))
            return Pair(left, build(level - 1, max(1, room // left.size)))
        return draw(operators(build(level - 1, room), room))

    return build(depth, budget)


@st.composite
def operators(draw: st.DrawFn, inner: Mapping, room: int = BUDGET) -> Mapping:
    """``inner`` under one operator: a stride or modulo that divides, a resize, or a padding of any kind."""
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return Stride(inner, draw(st.sampled_from(divisors(inner.size))))
    if choice == 1:
        return Modulo(inner, draw(st.sampled_from(divisors(inner.size))))
    if choice == 2:
        return Resize(inner, draw(st.integers(1, inner.size)))
    top = max(inner.size, min(room, 3 * inner.size))
    return Padding(inner, draw(st.integers(inner.size, top)), draw(st.sampled_from(list(PaddingKind))))


@st.composite
def interleavings(draw: st.DrawFn) -> Mapping:
    """Pieces of one to three operands (often padded), cut at any divisor, sometimes overlapping or
    cut again, in any order: the pieces of an operand pool their positions (§1.7)."""
    names = list(NAMES)
    pieces: list[Mapping] = []
    for _ in range(draw(st.integers(1, 3))):
        group = tuple(names[:2])
        del names[:2]
        operand = draw(trees(depth=2, names=group, budget=12))
        if draw(st.booleans()):
            operand = Padding(operand, draw(st.integers(operand.size, 2 * operand.size + 3)),
                              draw(st.sampled_from(list(PaddingKind))))
        n = draw(st.sampled_from(divisors(operand.size)))
        cut = [Stride(operand, n), Modulo(operand, n)]
        if draw(st.integers(0, 4)) == 0:  # a third piece, overlapping the others
            k = draw(st.sampled_from(divisors(operand.size)))
            cut.append(draw(st.sampled_from([Stride(operand, k), Modulo(operand, k), Resize(operand, 1 + k // 2)])))
        for piece in cut:
            pieces.append(draw(operators(piece, 24)) if draw(st.integers(0, 5)) == 0 else piece)
    order = draw(st.permutations(pieces))
    out = order[-1]
    for piece in reversed(order[:-1]):
        out = Pair(piece, out)
    return out


expressions = st.one_of(trees(), interleavings())


def cells(m: Mapping) -> list[Cell]:
    return [cell_at(m, i) for i in range(m.size)]


def check_same(a: Mapping, b: Mapping) -> None:
    """A documented identity: the same cells, and therefore the same canonical form."""
    assert equivalent(a, b), (a.text, b.text)
    assert normalize(a) == normalize(b), (a.text, b.text, str(a), str(b))


@laws
@given(expressions)
def test_canonical_form_holds_every_cell(e: Mapping) -> None:
    slots = slots_of(e)
    expected = cells(e)
    assert [decode(slots, i) for i in range(e.size)] == expected, e.text
    assert cells(normalize(e)) == expected, (e.text, str(e))


@laws
@given(expressions)
def test_canonical_text_reads_back(e: Mapping) -> None:
    again = parse(str(e), e.axis_sizes())
    assert again.same_structure(normalize(e)), (e.text, str(e), again.text)
    assert again == e and equivalent(again, e), (e.text, str(e))


@laws
@given(expressions)
def test_normalize_is_idempotent(e: Mapping) -> None:
    n = normalize(e)
    assert normalize(n).same_structure(n), (e.text, n.text, normalize(n).text)


@laws
@given(trees())
def test_written_text_reads_back(e: Mapping) -> None:
    # ``text`` flattens nested pairs, so the association may change but nothing else does.
    again = parse(e.text, e.axis_sizes())
    assert again == e and equivalent(again, e), e.text


@laws
@given(expressions)
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
    e = data.draw(expressions)
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
    e = data.draw(expressions)
    n = data.draw(st.sampled_from(divisors(e.size)))
    outer, inner = split_at(e, n)
    assert inner.size == n and outer.size == e.size // n
    assert cells(inner) == cells(Modulo(e, n)), (e.text, str(inner))
    assert cells(outer) == cells(Stride(e, n)), (e.text, str(outer))
    assert equivalent(outer.pair(inner), e), (e.text, str(outer), str(inner))
    assert outer.pair(inner) == e, (e.text, str(outer), str(inner))


@laws
@given(expressions)
def test_padding_queries_follow_the_slots(e: Mapping) -> None:
    pps = padding_per_stride(e)
    slots = slots_of(e)
    assert list(pps.values()) == ([s.extent for s in slots if s.extent > 1] or [1])
    stripped = remove_padding(e)
    assert stripped.size <= normalize(e).size
    assert normalize(stripped).same_structure(stripped)


@laws
@given(trees(depth=2), trees(depth=2))
def test_relaxed_division_is_exact_division_when_that_succeeds(dividend: Mapping, divisor: Mapping) -> None:
    exact = divide_terms_or_reason(dividend, divisor)
    relaxed = divide_relaxed(dividend, divisor)
    if not isinstance(exact, str):
        assert relaxed == exact
    # Every relaxed term is a piece of the dividend at a slot boundary or inside a slot.
    assert all(term.dividend_stride < dividend.normalize().size for term in relaxed)
    assert all(term.divisor_stride < divisor.normalize().size for term in relaxed)


def test_pair_halves_keep_the_kind_a_ragged_digit_is_spelt_with() -> None:
    # One slot holds both: its own padding is Bottom, the padding its digit's text adds is Zero.
    a, b = parse("A #{!} 2", {"A": 1}), parse("D #{0} 12 / 4", {"D": 9})
    assert str(Pair(a, b)) == "D #{0} 12 / 4 #{!} 6"
    assert str(Modulo(Pair(a, b), 3)) == "D #{0} 12 / 4"
    check_same(Modulo(Pair(a, b), 3), b)
    check_same(Stride(Pair(a, b), 3), a)


@st.composite
def padded_digits(draw: st.DrawFn, name: str) -> Mapping:
    """A digit of ``name``, often ragged (its text pads the axis first), padded with any kind, or
    a pure padding: the terms whose two kinds of padding one slot may hold."""
    kinds = st.sampled_from(list(PaddingKind))
    n = draw(st.integers(1, 9))
    if draw(st.integers(0, 3)) == 0:
        return Padding(Broadcast(1), draw(st.integers(2, 4)), draw(kinds))
    s = draw(st.integers(1, 4))
    axis: Mapping = Symbol(name, n)
    if n % s or draw(st.booleans()):
        axis = Padding(axis, s * (n // s + 1), draw(kinds))
    out: Mapping = Stride(axis, s) if s > 1 else axis
    if draw(st.booleans()):
        out = Padding(out, out.size + draw(st.integers(1, 3)), draw(kinds))
    return out


@laws
@given(padded_digits("A"), padded_digits("D"), st.data())
def test_pairs_of_padded_digits_split_as_written(a: Mapping, b: Mapping, data: st.DataObject) -> None:
    check_same(Stride(Pair(a, b), b.size), a)
    check_same(Modulo(Pair(a, b), b.size), b)
    e = Pair(a, b) if data.draw(st.booleans()) else Pair(b, a)
    n = data.draw(st.sampled_from(divisors(e.size)))
    outer, inner = split_at(e, n)
    assert outer.normalize().same_structure(Stride(e, n).normalize()), (e.text, n, str(outer))
    assert inner.normalize().same_structure(Modulo(e, n).normalize()), (e.text, n, str(inner))
    assert parse(str(e), e.axis_sizes()).same_structure(normalize(e)), (e.text, str(e))
