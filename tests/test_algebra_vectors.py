"""Mapping-algebra vectors: cells (docs/mapping-language.md §1.5, §1.7), the canonical form (§1.8), split and
divide (§1.9), corner cases (§1.10), and the reference's own algebra tests."""

from __future__ import annotations

from typing import Any

import pytest

from tcpdsl.algebra import (
    Broadcast,
    Cell,
    Digit,
    DivideTerm,
    IDENTITY,
    Index,
    Mapping,
    Modulo,
    OUT_OF_BOUNDS,
    Pad,
    Padding,
    PaddingKind,
    Pair,
    Resize,
    Slot,
    Stride,
    Symbol,
    cell_at,
    decode,
    divide_exact,
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
from tcpdsl.errors import LayoutError

TOP, ZERO, BOTTOM = PaddingKind.TOP, PaddingKind.ZERO, PaddingKind.BOTTOM


def P(text: str, **sizes: int) -> Mapping:
    return parse(text, sizes)


def idx(**coords: int) -> Index:
    return Index(coords)


def cells(m: Mapping) -> list[Cell]:
    return [cell_at(m, i) for i in range(m.size)]


# -- the reference's doc examples: cells ----------------------------------------------------------------------


def test_single_axis_cells() -> None:
    a = P("A", A=8)
    assert a.size == 8
    assert cells(a) == [idx(A=i) for i in range(8)]
    assert cell_at(a, 8) is OUT_OF_BOUNDS
    assert cell_at(P("A", A=4), 4) is OUT_OF_BOUNDS


def test_pair_cells_are_row_major() -> None:
    m = P("A, B", A=8, B=512)
    assert m.size == 4096
    assert cell_at(m, 0) == idx()
    assert cell_at(m, 511) == idx(B=511)
    assert cell_at(m, 512) == idx(A=1)
    assert cell_at(m, 519) == idx(A=1, B=7)
    assert all(cell_at(m, i) == idx(A=i // 512, B=i % 512) for i in range(0, 4096, 37))
    assert cell_at(m, 4096) is OUT_OF_BOUNDS


def test_identity_broadcast_has_one_live_cell() -> None:
    assert cell_at(P("1"), 0) == idx()
    assert cell_at(P("1"), 1) is OUT_OF_BOUNDS


def test_padded_inner_axis_cells() -> None:
    m = P("C, D # 64", C=13, D=61)
    assert cell_at(m, 0) == idx()
    assert cell_at(m, 60) == idx(D=60)
    assert [cell_at(m, i) for i in (61, 62, 63)] == [Pad(TOP)] * 3
    assert cell_at(m, 64) == idx(C=1)


def test_resized_inner_axis_cells() -> None:
    m = P("C, D = 2", C=2, D=3)
    assert cells(m) == [idx(), idx(D=1), idx(C=1), idx(C=1, D=1)]
    assert cell_at(m, 4) is OUT_OF_BOUNDS


def test_digits_of_one_axis_add() -> None:
    sizes = {"A": 8, "B": 512}
    assert [cell_at(parse("B / 64", sizes), i) for i in range(8)] == [idx(B=64 * i) for i in range(8)]
    assert cell_at(parse("B / 64", sizes), 8) is OUT_OF_BOUNDS
    assert [cell_at(parse("B % 64", sizes), j) for j in range(64)] == [idx(B=j) for j in range(64)]
    assert cell_at(parse("B % 64", sizes), 64) is OUT_OF_BOUNDS
    split = parse("B / 64, B % 64", sizes)
    assert cell_at(split, 130) == idx(B=130)
    assert cells(split) == cells(parse("B", sizes))
    assert cell_at(split, 512) is OUT_OF_BOUNDS


def test_interleaved_digits() -> None:
    m = P("B / 64, B % 32, B / 32 % 2", B=512)
    assert cell_at(m, 67) == idx(B=97)
    assert all(cell_at(m, 64 * i + 2 * j + k) == idx(B=64 * i + j + 32 * k)
               for i in range(8) for j in range(32) for k in range(2))
    assert cell_at(m, 512) is OUT_OF_BOUNDS


def test_table_rows_and_columns() -> None:
    m = P("B / 4, B % 4", B=16)
    assert all(cell_at(m, 4 * r + c) == idx(B=4 * r + c) for r in range(4) for c in range(4))


def test_escaped_splices_are_the_written_pair() -> None:
    sizes = {"A": 8, "B": 512}
    spliced = parse("{L}, {R}", sizes, {"L": parse("A", sizes), "R": parse("B", sizes)})
    assert equivalent(spliced, parse("A, B", sizes))
    assert spliced == parse("A, B", sizes)


def test_tiling_view_shapes_normalize() -> None:
    assert P("A, B = 2 # 512", A=8, B=512) == P("A, B % 2 # 512", A=8, B=512)
    assert str(P("A, B / 32 = 2 # 16, B % 32", A=8, B=512)) == "A, B % 64 # 512"


def test_modulo_overshoot_is_padding_when_the_pieces_pool() -> None:
    split = P("A # 16 / 4, A # 16 % 4", A=10)
    assert cell_at(split, 10) == Pad(TOP)
    assert cells(split) == cells(P("A # 16", A=10))
    assert split == P("A # 16", A=10)


def test_repeated_axis_keeps_type_level_sum() -> None:
    # The same axis used twice is degenerate; its coordinates add like the type-level map.
    assert cell_at(P("B, B", B=4), 7) == idx(B=4)
    assert decode(slots_of(P("B, B", B=4)), 7) == idx(B=4)


# -- §1.8 normalization table ----------------------------------------------------------------------

NORMALIZATION = [
    ("A # 4, B # 4", {"A": 2, "B": 2}, "A # 4, B # 4"),
    ("R # 64 / 8", {"R": 3}, "1 # 8"),
    ("R # 16 / 4, A", {"R": 3, "A": 5}, "A # 20"),
    ("R # 64 / 8, A", {"R": 3, "A": 5}, "A # 40"),
    ("R # 16 / 4, R # 16 % 4", {"R": 14}, "R # 16"),
    ("A % 1", {"A": 4}, "1"),
    ("A, 1 # 4, B", {"A": 2, "B": 3}, "A, B # 12"),
    ("1 # 4, A", {"A": 3}, "A # 12"),
    ("[A / 16] % 2", {"A": 64}, "A / 16 % 2"),
    ("[A % 32] / 16", {"A": 64}, "A / 16 % 2"),
    ("B / 2048 = 1 # 2, B % 2048", {"B": 4096}, "B % 2048 # 4096"),
    ("A, B = 2 # 512", {"A": 4, "B": 512}, "A, B % 2 # 512"),
    ("L1 # 256 / 32 % 4", {"L1": 192}, "L1 / 32 = 4"),
    ("L1 # 256 / 8 % 4", {"L1": 192}, "L1 / 8 % 4"),
    ("L1 # 256 % 8", {"L1": 192}, "L1 % 8"),
    ("A # 4 # 16", {"A": 3}, "A # 16"),
    ("A #{0} 4 # 16", {"A": 3}, "1 # 4, A #{0} 4"),
    ("R # 16 / 4", {"R": 5}, "R # 8 / 4 # 4"),
    ("[R # 16 / 4, A]", {"R": 5, "A": 5}, "R # 8 / 4 # 4, A"),
    ("[A # 16 / 4] / 2", {"A": 5}, "1 # 2"),
    ("X", {"X": 1}, "1"),
    ("[1 # 2, A, B]", {"A": 3, "B": 2}, "A # 6, B"),
    ("B / 32 = 2 # 16", {"B": 512}, "B / 32 % 2 # 16"),
    ("B / 2048 = 1 # 2", {"B": 4096}, "1 # 2"),
]


@pytest.mark.parametrize(("text", "sizes", "expected"), NORMALIZATION)
def test_normalization_table(text: str, sizes: dict[str, int], expected: str) -> None:
    m = parse(text, sizes)
    assert str(m) == expected
    again = parse(expected, sizes)
    assert again == m
    assert normalize(again).same_structure(normalize(m))
    assert equivalent(again, m)


def test_ragged_digit_slot_and_cells() -> None:
    m = P("R # 16 / 4", R=5)
    assert slots_of(m) == (Slot(Digit("R", 5, 4, 2), 4, TOP),)
    assert cells(m) == [idx(), idx(R=4), Pad(TOP), Pad(TOP)]
    assert m == P("[1 # 2, [R # 8] / 4]", R=5)


def test_ragged_smaller_axis_keeps_three_live_digits() -> None:
    m = P("L1 # 256 / 32 % 4", L1=90)
    assert cells(m) == [idx(), idx(L1=32), idx(L1=64), Pad(TOP)]
    assert [s.count for s in slots_of(m)] == [3]
    wide = P("L1 # 256 / 32 % 4", L1=100)
    assert cells(wide) == [idx(L1=32 * i) for i in range(4)]
    assert slots_of(wide) == (Slot(Digit("L1", 100, 32, 4), 4),)
    # With a finer piece of the same padded operand the sum reaches the padding at 100: the pieces
    # rejoin into the operand itself.
    rejoined = P("L1 # 256 / 32 % 4, L1 # 256 % 32", L1=100)
    assert rejoined == P("L1 # 128", L1=100)
    assert cell_at(rejoined, 100) == Pad(TOP)


def test_composite_fallback_for_indivisible_pad() -> None:
    m = P("[A, B] # 10", A=2, B=3)
    assert str(m) == "(A, B) # 10"
    assert cells(m)[6:] == [Pad(TOP)] * 4
    assert normalize(normalize(m)).same_structure(normalize(m))


def test_broadcast_is_not_padding() -> None:
    assert P("4") != P("1 # 4")
    assert cells(P("4")) == [idx()] * 4
    assert cells(P("1 # 4")) == [idx(), Pad(TOP), Pad(TOP), Pad(TOP)]


def test_padding_kinds_are_significant() -> None:
    a8, z8, b8 = P("A # 8", A=4), P("A #{0} 8", A=4), P("A #{!} 8", A=4)
    assert a8 != z8 and z8 != b8 and a8 != b8
    assert cell_at(z8, 5) == Pad(ZERO) and cell_at(b8, 5) == Pad(BOTTOM)


def test_padding_kind_nesting() -> None:
    bottom4 = Padding(IDENTITY, 4, BOTTOM)
    assert Padding(bottom4, 8, BOTTOM).normalize().same_structure(Padding(IDENTITY, 8, BOTTOM))
    top4 = Padding(IDENTITY, 4, TOP)
    assert Padding(top4, 8, TOP).normalize().same_structure(Padding(IDENTITY, 8, TOP))
    mixed = Padding(bottom4, 8, TOP)
    assert [s.kind for s in slots_of(mixed)] == [BOTTOM, TOP]
    assert str(mixed) == "1 # 2, 1 #{!} 4"


def test_major_padding_wins() -> None:
    m = P("1 # 4, A #{0} 4", A=3)
    assert cell_at(m, 3) == Pad(ZERO)
    assert cell_at(m, 4) == Pad(TOP)
    assert cell_at(m, 7) == Pad(TOP)


@pytest.mark.parametrize(("text", "sizes"), [
    ("A, B", {"A": 2, "B": 3}),
    ("A # 4, B # 4", {"A": 2, "B": 2}),
    ("A # 16", {"A": 8}),
    ("B, A # 9", {"A": 4, "B": 4}),
    ("A # 4, B # 4, C # 16, D # 4", {"A": 2, "B": 2, "C": 2, "D": 2}),
    ("A, B # 4, [C, D] # 8", {"A": 2, "B": 2, "C": 2, "D": 2}),
    ("A % 4", {"A": 16}),
    ("A / 4 % 2", {"A": 16}),
    ("1 #{!} 16", {}),
])
def test_round_trips(text: str, sizes: dict[str, int]) -> None:
    m = parse(text, sizes)
    n = normalize(m)
    assert normalize(n).same_structure(n)
    assert parse(str(m), sizes) == m
    assert equivalent(n, m)


def test_normalized_tree_is_a_right_spine() -> None:
    n = normalize(P("A, B, C", A=2, B=3, C=5))
    assert isinstance(n, Pair) and n.left.same_structure(Symbol("A", 2))
    assert isinstance(n.right, Pair) and n.right.right.same_structure(Symbol("C", 5))
    assert normalize(IDENTITY).same_structure(IDENTITY)


# -- §1.9 split_at ---------------------------------------------------------------------------------

SPLITS = [
    ("A # 4, B # 4", {"A": 2, "B": 2}, 8, "A, B # 4", "1 # 2"),
    ("A # 4, B, C", {"A": 2, "B": 2, "C": 2}, 8, "A, B, C", "1 # 2"),
    ("A # 4, B # 4, C # 16, D # 4", {"A": 2, "B": 2, "C": 2, "D": 2}, 16, "C # 4, D # 4", "A # 4, B # 4, 1 # 4"),
    ("B, A # 9", {"A": 4, "B": 4}, 4, "[B, A # 9] % 4", "[B, A # 9] / 4"),
    ("A # 16", {"A": 8}, 4, "A % 4", "1 # 2, A / 4 % 2"),
    ("A, B # 4, [C, D] # 8", {"A": 2, "B": 2, "C": 2, "D": 2}, 16, "B, 1 # 2, C, D", "A, 1 # 2"),
    ("A # 16", {"A": 3}, 4, "A # 4", "1 # 4"),
    ("1 # 64", {}, 8, "1 # 8", "1 # 8"),
]


@pytest.mark.parametrize(("text", "sizes", "n", "inner", "outer"), SPLITS)
def test_split_table(text: str, sizes: dict[str, int], n: int, inner: str, outer: str) -> None:
    m = parse(text, sizes)
    got_outer, got_inner = split_at(m, n)
    assert got_inner == parse(inner, sizes)
    assert got_outer == parse(outer, sizes)
    assert equivalent(got_outer.pair(got_inner), m)
    assert got_outer.pair(got_inner) == m


def test_split_pins_structure() -> None:
    outer, inner = split_at(P("A # 16", A=8), 4)
    assert str(inner) == "A % 4" and str(outer) == "A / 4 # 4"
    m = P("B, A # 9", A=4, B=4)
    outer, inner = split_at(m, 4)
    # v0.2 pins the outer half as an opaque cut; the inner one is a plain digit of A.
    assert str(outer) == "(B, A # 9) / 4" and str(inner) == "A"
    # The halves are cut from one copy of the canonical form, so that they rejoin.
    assert (outer.text, inner.text) == ("(B, A # 9) / 4", "(B, A # 9) % 4")
    assert outer.pair(inner).normalize().same_structure(m.normalize())
    assert equivalent(outer.pair(inner), m)


@pytest.mark.parametrize(("text", "sizes", "n", "outer"), [
    ("R % 7 #{0} 8", {"R": 7}, 4, "R #{0} 8 / 4"),
    ("R % 7 #{!} 8", {"R": 7}, 4, "R #{!} 8 / 4"),
    ("R % 7 # 8", {"R": 7}, 4, "R # 8 / 4"),
    ("C # 24 / 4", {"C": 12}, 2, "C # 16 / 8 # 3"),
    ("[K # 33 / 3, K # 33 % 3] # 64", {"K": 32}, 8, "K / 8 # 8"),
])
def test_split_agrees_with_writing_the_split_out(text: str, sizes: dict[str, int], n: int, outer: str) -> None:
    # A ragged stride of a one-slot operand is cut from that slot: the same text either way.
    got_outer, got_inner = split_at(parse(text, sizes), n)
    written_outer, written_inner = parse(f"[{text}] / {n}", sizes), parse(f"[{text}] % {n}", sizes)
    assert str(got_outer) == str(written_outer) == outer
    assert got_outer == written_outer and got_inner == written_inner


# Splits that cross slots a stride or a cut cannot line up with: the slots it crosses are kept
# together as an operand of their own (docs/mapping-language.md §1.8), whichever way it is written.
CROSSING_SPLITS = [
    ("3 #{0} 7 % 1, 1 #{!} 3, A = 2 = 2 # 6 = 1, A = 2 = 2 # 6 / 3, A = 2 = 2 # 6 % 3 = 1, 3 #{0} 7 / 1",
     {"A": 5}, 21, "1 #{!} 2", "3 #{0} 7 / 7, 1 # 2 #{!} 3, 3 #{0} 7 % 7"),
    ("D / 1 / 5 #{!} 2 % 1, (C, 3, A # 2) / 1, D / 1 / 5 #{!} 2 / 1, (C, 3, A # 2) % 1",
     {"D": 5, "C": 1, "A": 1}, 6, "1 # 2", "1 #{!} 2 / 2, (2, 1 # 2) = 3, 1 #{!} 2 % 2"),
    ("C # 9 % 9 = 3, C # 9 / 9, C # 9 / 9, 1 # 2, (D # 3, E) #{0} 11 / 11, (D # 3, E) #{0} 11 % 11",
     {"C": 4, "D": 3, "E": 2}, 2, "C = 3, D #{0} 6 # 11", "E"),
    ("F #{!} 6 % 3 / 3, F #{!} 6 / 3, D # 14 / 14 #{0} 3, D # 14 % 14 % 14",
     {"F": 5, "D": 6}, 3, "F #{!} 6 / 3, D / 3 # 5 #{0} 14", "D % 3"),
    ("F #{0} 9 % 3, 1 # 2, B / 4 #{!} 2 % 2, F #{0} 9 / 3, B / 4 #{!} 2 / 2",
     {"F": 4, "B": 4}, 9, "1 # 3 #{!} 4", "F #{0} 9 / 9, 1 #{!} 2 # 3, F #{0} 9 / 3"),
]


@pytest.mark.parametrize(("text", "sizes", "n", "outer", "inner"), CROSSING_SPLITS)
def test_a_split_across_slots_is_the_split_written_out(text: str, sizes: dict[str, int], n: int, outer: str,
                                                       inner: str) -> None:
    m = parse(text, sizes)
    got_outer, got_inner = split_at(m, n)
    written_outer, written_inner = parse(f"[{text}] / {n}", sizes), parse(f"[{text}] % {n}", sizes)
    assert (str(got_outer), str(got_inner)) == (outer, inner)
    assert (str(written_outer), str(written_inner)) == (outer, inner)
    assert got_outer == written_outer and got_inner == written_inner
    assert equivalent(got_outer, parse(outer, sizes)) and equivalent(got_inner, parse(inner, sizes))
    assert got_outer.pair(got_inner) == m


@pytest.mark.parametrize(("text", "sizes", "expected"), [
    ("[C, 1 # 2, (D, E) #{0} 11] / 2", {"C": 3, "D": 3, "E": 2}, "C, D #{0} 6 # 11"),
    ("[C, 1 #{0} 3, D # 14] / 3", {"C": 2, "D": 6}, "C, D / 3 # 5 #{0} 14"),
    ("[C, 1 #{!} 3, 1 # 2, (A, B) #{0} 7] % 21", {"A": 2, "B": 2, "C": 2}, "1 # 2 #{!} 3, (A, B) #{0} 7"),
    # Slots with axes are kept apart: the stride lines up with no slot, and the operand stays whole.
    ("[D, C, B, A] / 2", {"A": 3, "B": 2, "C": 5, "D": 2}, "(D, C, B, A) / 2"),
])
def test_a_cut_across_slots_keeps_them_together(text: str, sizes: dict[str, int], expected: str) -> None:
    m = parse(text, sizes)
    assert str(m) == expected
    assert parse(expected, sizes) == m and equivalent(parse(expected, sizes), m)


@pytest.mark.parametrize(("spellings", "sizes", "canonical"), [
    (["T = 2 # 4 #{!} 6", "1 # 2 #{!} 3, T = 2", "(1 # 2 #{!} 3, T = 2) % 6"], {"T": 5}, "1 # 2 #{!} 3, T = 2"),
    (["A #{0} 4 # 10, 1 #{0} 2, D # 6", "1 #{0} 2 # 5, A, 1 #{0} 2, D # 6"], {"A": 2, "D": 4},
     "1 #{0} 2 # 5, A, 1 #{0} 2, D # 6"),
])
def test_the_live_values_of_a_padded_innermost_slot_leave_the_operand(spellings: list[str], sizes: dict[str, int],
                                                                      canonical: str) -> None:
    # A piece reading every value of its operand's innermost slot, whose padding the live values
    # divide, reads those values as a slot of its own (docs/mapping-language.md §1.8).
    for text in spellings:
        m = parse(text, sizes)
        assert str(m) == canonical, text
        assert equivalent(m, parse(canonical, sizes)), text


def test_split_halves_of_a_ragged_digit_rejoin() -> None:
    m = P("R # 16", R=14)
    outer, inner = split_at(m, 4)
    assert (str(outer), str(inner)) == ("R # 16 / 4", "R = 4")
    assert outer.pair(inner) == m and equivalent(outer.pair(inner), m)
    # Canonical halves written separately do not share the padded operand: 14 and 15 overshoot.
    apart = P("R # 16 / 4, R = 4", R=14)
    assert apart != m and cell_at(apart, 14) == idx(R=14) and cell_at(m, 14) == Pad(TOP)


def test_split_requires_a_divisor() -> None:
    with pytest.raises(LayoutError) as caught:
        split_at(P("A", A=6), 4)
    assert caught.value.stage == "mapping" and caught.value.rule == "SplitIndivisible"
    assert str(caught.value) == "[mapping] SplitIndivisible: cannot split A (size 6) at 4\n  hint: split at a divisor of 6"


# -- remove_padding and padding_per_stride ---------------------------------------------------------


def test_remove_padding() -> None:
    assert remove_padding(P("B # 8, N", B=2, N=8)).same_structure(P("B, N", B=2, N=8).normalize())
    assert remove_padding(P("1 # 16")).same_structure(IDENTITY)
    assert remove_padding(P("1 # 2, A # 4, B # 4", A=3, B=3)).text == "A, B # 4"
    assert remove_padding(P("A # 16", A=8)).text == "A"


def test_padding_per_stride() -> None:
    assert padding_per_stride(P("A # 8, B", A=4, B=2)) == {1: 2, 2: 8}
    assert padding_per_stride(IDENTITY) == {1: 1}
    assert P("A, B # 4", A=2, B=3).padding_per_stride() == {1: 4, 4: 2}


# -- §1.9 divide_exact ------------------------------------------------------------------------------


def test_divide_digit_orders_must_match() -> None:
    with pytest.raises(LayoutError) as caught:
        divide_exact(P("A / 4", A=16), P("A % 4", A=16))
    assert caught.value.rule == "Indivisible" and caught.value.stage == "mapping"
    assert caught.value.detail == "A of A % 4 does not occur as a digit of A / 4"


def test_divide_split_digits_on_both_axes() -> None:
    sizes = {"A": 512, "R": 15}
    terms = divide_exact(parse("[1 # 2, A / 8, R # 16 / 4, A % 8, R # 16 % 4]", sizes), parse("[A, R # 16]", sizes))
    assert terms == [
        DivideTerm(128, 128, 64, ("A",)),
        DivideTerm(32, 4, 4, ("R",)),
        DivideTerm(4, 16, 8, ("A",)),
        DivideTerm(1, 1, 4, ("R",)),
    ]


def test_divide_single_axis() -> None:
    assert divide_exact(P("A, B", A=8, B=4), P("B", B=4)) == [DivideTerm(1, 1, 4, ("B",))]


def test_divide_missing_axis() -> None:
    reason = divide_terms_or_reason(P("A, B", A=8, B=4), P("C", C=2))
    assert reason == "C of C does not occur as a digit of A, B"
    assert isinstance(divide_terms_or_reason(P("A / 8, B", A=64, B=4), P("B, C", B=4, C=2)), str)


def test_divide_partial_divisor_is_not_exact() -> None:
    sizes = {"A": 16, "B": 2, "C": 3, "D": 5}
    assert isinstance(divide_terms_or_reason(parse("A / 4, B, C", sizes), parse("B, C, D", sizes)), str)


def test_relaxed_divide_keeps_the_digits_it_finds() -> None:
    # v0.2: [A / 4, B, C] relaxed-divided by [B, C, D] matches 2 terms, B and C.
    sizes = {"A": 16, "B": 2, "C": 3, "D": 5}
    dividend, divisor = parse("A / 4, B, C", sizes), parse("B, C, D", sizes)
    assert divide_relaxed(dividend, divisor) == [DivideTerm(3, 15, 2, ("B",)), DivideTerm(1, 5, 3, ("C",))]
    # A digit the dividend holds only part of gives the part it holds: A from 4 on is A / 4.
    assert divide_relaxed(P("A / 4, B", A=16, B=2), P("A", A=16)) == [DivideTerm(2, 4, 4, ("A",))]
    assert isinstance(divide_terms_or_reason(P("A / 4, B", A=16, B=2), P("A", A=16)), str)


def test_relaxed_divide_is_exact_divide_when_that_succeeds() -> None:
    sizes = {"A": 512, "R": 15}
    dividend = parse("[1 # 2, A / 8, R # 16 / 4, A % 8, R # 16 % 4]", sizes)
    divisor = parse("[A, R # 16]", sizes)
    assert divide_relaxed(dividend, divisor) == divide_exact(dividend, divisor)
    assert divide_relaxed(P("A, B", A=4, B=8), P("C", C=2)) == []


def test_divide_padded() -> None:
    assert len(divide_exact(P("A # 16", A=3), P("A # 16", A=3))) == 1
    assert divide_exact(P("A # 16", A=3), P("A", A=3)) == [DivideTerm(1, 1, 3, ("A",))]
    assert divide_exact(P("A # 16", A=4), P("A", A=4)) == [DivideTerm(1, 1, 4, ("A",))]


def test_divide_strides() -> None:
    assert divide_exact(P("A, B", A=4, B=8), P("A, B", A=4, B=8)) == [
        DivideTerm(8, 8, 4, ("A",)), DivideTerm(1, 1, 8, ("B",))]
    assert divide_exact(P("C, A", C=5, A=4), P("A", A=4)) == [DivideTerm(1, 1, 4, ("A",))]
    terms = divide_exact(P("A # 4, B, C # 8", A=3, B=2, C=3), P("A, C", A=3, C=3))
    assert terms == [DivideTerm(16, 3, 3, ("A",)), DivideTerm(1, 1, 3, ("C",))]


def test_divide_is_sorted_outermost_first() -> None:
    sizes = {"A": 2, "B": 3, "C": 5}
    terms = divide_exact(parse("A, B, C", sizes), parse("C, B, A", sizes))
    assert [t.dividend_stride for t in terms] == [15, 5, 1]


# -- node-level errors of norm -------------------------------------------------------------------


def test_raw_growing_resize_is_refused() -> None:
    with pytest.raises(LayoutError) as caught:
        normalize(Resize(Symbol("A", 4), 8))
    assert caught.value.rule == "ResizeGrows"
    assert cell_at(Resize(Symbol("A", 4), 8), 5) is OUT_OF_BOUNDS


def test_raw_indivisible_stride_is_refused() -> None:
    with pytest.raises(LayoutError) as caught:
        normalize(Stride(Symbol("A", 6), 4))
    assert caught.value.rule == "StrideIndivisible"


def test_raw_shrinking_pad_acts_as_resize() -> None:
    assert normalize(Padding(Symbol("A", 8), 4)).same_structure(Modulo(Symbol("A", 8), 4))
    assert normalize(Pair(Broadcast(2), Broadcast(3))).same_structure(Broadcast(6))


# -- the cell semantics itself (§1.7) -----------------------------------------------------


def test_cells_pools_pieces_of_one_operand() -> None:
    # Both digits address ``A # 16``: 8*1 + 3 = 11 >= 10 is the padding of that one operand.
    m = Pair(Stride(Padding(Symbol("A", 10), 16), 8), Modulo(Padding(Symbol("A", 10), 16), 8))
    assert cell_at(m, 11) == Pad(TOP)
    assert cell_at(m, 9) == idx(A=9)


def test_cells_whole_factors_are_not_pooled() -> None:
    pad8 = Padding(IDENTITY, 8)
    m = Pair(pad8, pad8)
    assert m.size == 64 and cell_at(m, 63) == Pad(TOP)
    assert equivalent(m, Padding(IDENTITY, 64))


def test_cells_most_major_padding_wins() -> None:
    m = Pair(Padding(Symbol("A", 1), 2, ZERO), Padding(Symbol("B", 1), 2, BOTTOM))
    assert [cell_at(m, i) for i in range(4)] == [idx(), Pad(BOTTOM), Pad(ZERO), Pad(ZERO)]


def test_cells_growing_resize_reads_out_of_bounds() -> None:
    m = Pair(Symbol("B", 2), Resize(Symbol("A", 2), 3))
    assert [cell_at(m, i) for i in range(6)] == [idx(), idx(A=1), OUT_OF_BOUNDS, idx(B=1), idx(A=1, B=1), OUT_OF_BOUNDS]
    assert cell_at(m, -1) is OUT_OF_BOUNDS


def test_equivalent_needs_equal_sizes() -> None:
    assert not equivalent(P("A", A=4), P("A # 8", A=4))
    assert not equivalent(P("A # 8", A=4), P("A #{0} 8", A=4))
    assert equivalent(P("A / 2, A % 2", A=4), P("A", A=4))


# -- canonical text is cell-faithful: ragged digits pool on one shared padded operand -------------

ZZ_17x3 = "M #{0} 32 / 16, S #{0} 4 / 2, M #{0} 32 % 16, S #{0} 4 % 2"

RAGGED_TEXTS = [
    # the Ascend Zz layout of a 17x3 scale matrix: both digits of each axis on its padded operand
    (ZZ_17x3, {"M": 17, "S": 3}, ZZ_17x3),
    # reversed digit order: the ragged digit's own padding joins the operand (R # 16, not R # 8 # 4)
    ("A # 16 % 4, B, A # 16 / 4", {"A": 5, "B": 2}, "A # 16 % 4, B, A # 16 / 4"),
    # three digits of one axis, interleaved with two others
    ("A # 32 / 8, B, A # 32 / 2 % 4, C, A # 32 % 2", {"A": 21, "B": 2, "C": 3},
     "A # 32 / 8, B, A # 32 / 2 % 4, C, A # 32 % 2"),
    # a Zz layout with a one-cell outer N digit: it still ranks the padding of N #{0} 16 above S
    ("Batch0, N #{0} 16 / 16, S #{0} 6 / 2, N #{0} 16 % 16, S #{0} 6 % 2", {"Batch0": 2, "N": 9, "S": 5},
     "Batch0, N #{0} 16 / 16, S #{0} 6 / 2, N #{0} 16 % 16, S #{0} 6 % 2"),
    # the same with the one-cell digit innermost: it ranks nothing and goes
    ("Batch0, S #{0} 6 / 2, N #{0} 16 % 16, S #{0} 6 % 2, N #{0} 16 / 16", {"Batch0": 2, "N": 9, "S": 5},
     "Batch0, S #{0} 6 / 2, N #{0} 16, S #{0} 6 % 2"),
    # a ragged digit with nothing to pool with keeps its own minimal operand
    ("R # 16 / 4, A", {"R": 5, "A": 3}, "R # 8 / 4 # 4, A"),
]


@pytest.mark.parametrize(("text", "sizes", "expected"), RAGGED_TEXTS)
def test_canonical_text_of_ragged_digits_holds_the_same_cells(text: str, sizes: dict[str, int],
                                                               expected: str) -> None:
    m = parse(text, sizes)
    assert str(m) == expected
    again = parse(expected, sizes)
    assert again == m and equivalent(again, m)
    assert normalize(again).same_structure(normalize(m))


def test_zz_canonical_text_pads_instead_of_overshooting() -> None:
    sizes = {"M": 17, "S": 3}
    again = parse(str(parse(ZZ_17x3, sizes)), sizes)
    assert cell_at(again, 33) == Pad(ZERO)  # S = 2 + 1: past the axis, inside S #{0} 4
    assert cell_at(again, 66) == Pad(ZERO)  # M = 17: past the axis, inside M #{0} 32
    # A free-standing cut does not share the operand: the two S digits add up past the axis.
    split = P("M #{0} 32 / 16, S #{0} 4 / 2, M #{0} 32 % 16, S = 2", M=17, S=3)
    assert split != again and not equivalent(split, again)
    assert cell_at(split, 33) == idx(S=3)


def test_pieces_of_an_operand_rank_at_its_most_major_piece() -> None:
    # The pieces of `3 = 1 #{0} 3 #{!} 6` sit outside and inside the A operand; its Zero padding,
    # reached by the inner piece, still outranks the Bottom padding of A #{!} 4 between them.
    m = P("3 = 1 #{0} 3 #{!} 6 / 3, A #{!} 4 = 4 #{0} 7 / 1, A #{!} 4 = 4 #{0} 7 % 1, 3 = 1 #{0} 3 #{!} 6 % 3", A=3)
    assert cell_at(m, 10) == Pad(ZERO)
    again = P(str(m), A=3)
    assert cells(again) == cells(m) and again == m
    assert decode(slots_of(m), 10) == Pad(ZERO)


def test_overshoot_stays_a_live_cell() -> None:
    # Cells are not finalized (docs/mapping-language.md §1.6): an overshooting coordinate is a live
    # index past the axis, distinct from padding, and left to the consumer to refuse or mask.
    m = P("S # 4 / 2, S = 2", S=3)
    assert cell_at(m, 3) == idx(S=3)
    assert cell_at(P("S # 4", S=3), 3) == Pad(TOP)
    # The canonical form keeps the two digits apart, so == agrees with the cells.
    assert str(m) == "S # 4 / 2, S = 2"
    assert m != P("S # 4", S=3) and not equivalent(m, P("S # 4", S=3))


@pytest.mark.parametrize("i", [-1, 10**30])
def test_a_cell_outside_every_mapping_is_refused(i: int) -> None:
    m = P("A", A=4)
    with pytest.raises(LayoutError) as caught:
        m.cell(i)
    assert (caught.value.stage, caught.value.rule) == ("mapping", "CellPosition")
    assert str(caught.value) == (f"[mapping] CellPosition: cell {i} of A is no position: positions run from 0 to "
                                 f"999999999999999999\n  hint: ask for a position in 0..3")
    assert m.cell(4) is OUT_OF_BOUNDS and m.cell(999999999999999999) is OUT_OF_BOUNDS


def test_operations_on_a_deep_expression_do_not_recurse_per_level() -> None:
    deep = parse("A" + " / 1" * 255, {"A": 4})
    assert str(deep) == "A" and deep == P("A", A=4)
    assert [str(half) for half in deep.split_at(2)] == ["A / 2", "A % 2"]
    chain: Mapping = P("B, A # 9", A=4, B=3)
    for level in range(250):
        chain = Stride(chain, 2) if level % 2 and chain.size % 2 == 0 else Padding(chain, chain.size + 1)
    assert str(chain) == "(B, A # 9) # 28 / 2 # 262"
    assert parse(str(chain), chain.axis_sizes()) == chain
    assert equivalent(chain, chain.normalize())


def test_equivalent_of_large_mappings_reads_the_slots() -> None:
    sizes = {"A": 2**20, "B": 2**20}
    assert equivalent(parse("[A / 1024, A % 1024], B", sizes), parse("A, B", sizes))
    assert not equivalent(parse("A, B", sizes), parse("B, A", sizes))
    # Cells name coordinates, not axis sizes: an overshooting digit holds what a longer axis holds.
    assert equivalent(P("A # 4 / 2, A = 2", A=3), P("A", A=4))
    assert P("A # 4 / 2, A = 2", A=3) != P("A", A=4)


def test_a_stride_of_a_padded_axis_keeps_the_padding_its_text_pads_with() -> None:
    # No cell of K #{0} 1008 / 16 (K=999) is padding, but its text pools with K #{0} 1008 % 16:
    # the canonical text pads K as written, so that the pieces still sum to Zero padding.
    zero, top = P("K #{0} 1008 / 16", K=999), P("K # 1008 / 16", K=999)
    assert (str(zero), str(top)) == ("K #{0} 1008 / 16", "K # 1008 / 16")
    assert zero != top and equivalent(zero, top)
    assert cell_at(parse(f"{zero}, {P('K #{0} 1008 % 16', K=999).text}", {"K": 999}), 999) == Pad(PaddingKind.ZERO)
    outer, inner = split_at(P("K #{0} 1008", K=999), 16)
    assert (str(outer), str(inner)) == ("K #{0} 1008 / 16", "K = 16")


@pytest.mark.parametrize(("texts", "sizes", "canonical"), [
    (["(C, F) % 6 / 2", "[(C, F) / 2] % 3"], {"C": 4, "F": 3}, "(C % 2, F) / 2"),
    (["[(A, D, E) #{0} 18] / 3", "(A, E) / 3 #{0} 6", "(A #{0} 9, E) / 3"], {"A": 6, "D": 1, "E": 2},
     "(A, E) / 3 #{0} 6"),
    (["[1 = 1 #{!} 2 # 6] / 3", "(1 # 3, 1 #{!} 2) / 3"], {}, "1 # 2"),
    (["[(A # 11, 2) = 12] / 6", "A = 6 / 3"], {"A": 7}, "A = 6 / 3"),
])
def test_one_piece_reads_one_operand_whatever_the_spelling(texts: list[str], sizes: dict[str, int],
                                                            canonical: str) -> None:
    found = [parse(text, sizes) for text in texts]
    assert [str(m) for m in found] == [canonical] * len(texts)
    assert all(equivalent(m, found[0]) for m in found)


def test_clear_caches_forgets_every_memo_of_the_algebra() -> None:
    from tcpdsl.algebra import clear_caches, held
    from tcpdsl.algebra.divide import _divide
    from tcpdsl.algebra.terms import _held_cached

    m = P("A / 4, B", A=16, B=2)
    before = (str(m), held(m).terms, divide_exact(m, P("B", B=2)))
    assert _held_cached.cache_info().currsize > 0 and _divide.cache_info().currsize > 0
    clear_caches()
    assert _held_cached.cache_info().currsize == 0 and _divide.cache_info().currsize == 0
    assert (str(m), held(m).terms, divide_exact(m, P("B", B=2))) == before


@pytest.mark.parametrize(("op", "n", "call"), [
    ("=", 0, lambda a: a.resize(0)),
    ("/", 3, lambda a: a.stride(3)),
    ("%", 5, lambda a: a.modulo(5)),
    ("=", 40, lambda a: a.resize(40)),
    ("#", 16, lambda a: a.padding(16)),
])
def test_each_size_rule_reads_the_same_written_or_called(op: str, n: int, call: Any) -> None:
    a = P("A", A=32)
    with pytest.raises(LayoutError) as written:
        parse(f"A {op} {n}", {"A": 32})
    with pytest.raises(LayoutError) as called:
        call(a)
    assert (called.value.rule, called.value.hint) == (written.value.rule, written.value.hint)
    assert written.value.detail == f'{called.value.detail} (in m["A {op} {n}"])'
    if op != "#":  # a raw shrinking padding acts as a resize
        with pytest.raises(LayoutError) as raw:
            normalize({"/": Stride, "%": Modulo, "=": Resize}[op](a, n))
        assert (raw.value.rule, raw.value.detail, raw.value.hint) == (called.value.rule, called.value.detail,
                                                                       called.value.hint)


def test_a_stride_that_does_not_divide_says_how_to_pad() -> None:
    with pytest.raises(LayoutError) as caught:
        P("A", A=32).stride(3)
    assert str(caught.value) == ("[mapping] StrideIndivisible: stride 3 does not divide size 32 of A\n"
                                 "  hint: divisors of 32: 1, 2, 4, 8, 16, 32; or pad first: A # 33 / 3")
    with pytest.raises(LayoutError) as empty:
        P("A", A=32).resize(0)
    assert (empty.value.rule, empty.value.detail) == ("EmptyMapping", "resize to 0 leaves no cells of A")
