"""Operands the slot surgery cannot cut are written out by their cells (docs/mapping-language.md §1.8)."""

from __future__ import annotations

import random

import pytest

from tcpdsl.algebra import Digit, PaddingKind, Slot, cell_at, parse, slots_of
from tcpdsl.algebra.slots import Composite, Operand, size_of
from tcpdsl.algebra import flat
from tcpdsl.algebra.caches import clear_caches
from tcpdsl.algebra.flat import MAX_CELLS, flat_form, read_form


@pytest.mark.parametrize(("spellings", "sizes", "canonical"), [
    (["(B, 2) #{!} 6 / 3", "(B #{!} 3, 2) / 3", "B"], {"B": 2}, "B"),
    (["(A, 3) #{!} 6 / 3", "(A #{!} 2, 3) / 3"], {"A": 2}, "A"),
    (["(E, A) #{!} 6 # 10 / 5", "(E #{!} 3 # 5, A) / 5"], {"E": 2, "A": 2}, "1 #{!} 2"),
    (["3 #{0} 6 / 2 #{!} 7", "2 #{0} 3 #{!} 7"], {}, "2 #{0} 3 #{!} 7"),
])
def test_spellings_of_the_same_cells_meet(spellings: list[str], sizes: dict[str, int], canonical: str) -> None:
    for text in spellings:
        m = parse(text, sizes)
        assert m.normalize().text == canonical, text
        again = parse(canonical, sizes)
        assert [cell_at(m, i) for i in range(m.size)] == [cell_at(again, i) for i in range(again.size)], text


def test_a_digit_whose_text_pads_keeps_its_kind() -> None:
    # A=5: A / 2 reads 0, 2, 4, no padding; the kind of the padding its text spells is kept.
    bottom, zero = parse("A #{!} 6 / 2", {"A": 5}), parse("A #{0} 6 / 2", {"A": 5})
    assert (bottom.normalize().text, zero.normalize().text) == ("A #{!} 6 / 2", "A #{0} 6 / 2")
    assert read_form(slots_of(parse("A #{!} 6", {"A": 5})), 2, 3) is None


def test_cells_that_are_no_digit_product_stay_opaque() -> None:
    assert parse("[A, B] / 4", {"A": 4, "B": 6}).normalize().text == "(A, B) / 4"
    assert flat_form(slots_of(parse("[A, B] / 4", {"A": 4, "B": 6}))) is None


def test_read_form_reads_the_strided_cells() -> None:
    assert read_form(slots_of(parse("A, B", {"A": 3, "B": 4})), 2, 6) == (
        (Slot(Digit("B", 4, 2, 2), 2), Slot(Digit("A", 3, 1, 3), 3)), 6, PaddingKind.TOP)


def test_read_form_leaves_the_padding_after_the_live_cells_to_the_piece() -> None:
    # Cells 0, 2, 4, 6 of A #{0} 6 # 8 (A=4): A=0, A=2, Zero, Top: no one slot, but A / 2 #{0} 3 then Top.
    assert read_form(slots_of(parse("A #{0} 6 # 8", {"A": 4})), 2, 4) == (
        (Slot(Digit("A", 4, 2, 2), 3, PaddingKind.ZERO),), 3, PaddingKind.TOP)
    # With A=3 the digit A / 2 is ragged: its text pads A with a kind no cell shows, and that kind
    # is the slot's own, apart from its padding, so the cells cannot write it.
    assert read_form(slots_of(parse("A #{0} 5 # 8", {"A": 3})), 2, 4) is None
    assert read_form(slots_of(parse("1 #{0} 2 # 3", {})), 1, 3) == ((Slot(None, 2, PaddingKind.ZERO),), 2, PaddingKind.TOP)


def test_a_form_above_the_limit_keeps_its_operand() -> None:
    b = 2 * MAX_CELLS
    text = f"(B, 2) # {2 * b + 2} / 3"
    assert parse(text, {"B": b}).normalize().text == text
    # The one piece never reads the padding its text adds, whatever kind is spelt.
    assert parse(f"(B, 2) #{{!}} {2 * b + 2} / 3", {"B": b}).normalize().text == text


def test_a_cut_the_piece_never_reaches_is_no_part_of_the_operand() -> None:
    sizes = {"B": 2, "F": 4}
    for text in ("((B, F) = 7, 3) / 7", "(B, F, 3 / 1) = 21 / 7", "[(B, F, 3) = 21] / 7"):
        assert parse(text, sizes).normalize().text == "(B, F, 3) = 21 / 7", text


@pytest.mark.parametrize(("text", "sizes", "canonical"), [
    ("1, (C, D # 5, 1 # 2) % 25 % 25 / 5", {"C": 5, "D": 2}, "(C = 3, 1 # 2) = 5"),
    ("1, (B # 3, 1, D # 9, 1 #{!} 4) = 108 = 54 / 18", {"B": 3, "D": 4}, "(B = 2, 1 # 2) = 3"),
])
def test_a_piece_that_cuts_the_strided_cells_short_reads_them_whole(
        text: str, sizes: dict[str, int], canonical: str) -> None:
    # The strided cells are plain digits only when read to the operand's end; the piece keeps
    # fewer. Written either way, the canonical text reads back as itself.
    m = parse(text, sizes)
    assert m.normalize().text == canonical
    again = parse(canonical, sizes)
    assert again.normalize().text == canonical
    assert [cell_at(m, i) for i in range(m.size)] == [cell_at(again, i) for i in range(again.size)]


def test_read_form_reads_past_the_piece_when_only_every_cell_is_plain() -> None:
    # Cells 0, 5, ..., 25 of C = 3, D # 5, 1 # 2 (C=5, D=2): C=0, Top, C=1, Top, C=2, Top.
    own = slots_of(parse("C = 3, D # 5, 1 # 2", {"C": 5, "D": 2}))
    assert read_form(own, 5, 5) == ((Slot(None, 2), Slot(Digit("C", 5, 1, 3), 3)), 5, PaddingKind.TOP)


@pytest.mark.parametrize(("text", "sizes", "canonical"), [
    ("(C # 6, 1, A, 1) # 20 / 4, 2", {"C": 3, "A": 3}, "(C, A) # 12 / 4 # 5, 2"),
    ("(C # 4, A) / 4 # 5, 2", {"C": 3, "A": 3}, "(C, A) # 12 / 4 # 5, 2"),
    ("(A, 1 #{!} 2, D #{0} 7, C) % 28 = 25 / 5, 2", {"A": 1, "D": 4, "C": 4}, "(D, C) #{0} 20 / 5 #{0} 5, 2"),
    ("(A #{0} 4, B #{!} 5, D #{!} 2) #{0} 45 / 15", {"A": 2, "B": 3, "D": 2}, "(A, B #{!} 5, D) #{0} 30 / 15 #{0} 3"),
    # The padding a ragged stride's text adds is never read by the one piece: it is Top.
    ("(B, C # 2, D # 1) # 14 #{0} 18 / 9", {"B": 5, "C": 2, "D": 1}, "(B, C) # 18 / 9"),
    ("(B #{0} 7, C) # 18 / 9", {"B": 5, "C": 2}, "(B, C) # 18 / 9"),
    ("(B, C) #{!} 18 / 9", {"B": 5, "C": 2}, "(B, C) # 18 / 9"),
])
def test_operand_padding_the_piece_stops_before_is_dropped(text: str, sizes: dict[str, int], canonical: str) -> None:
    # The padding the text of a ragged stride adds (# 12) is read back as the operand's own top
    # padding, which the piece never reaches: it goes again, whichever spelling came first.
    m = parse(text, sizes)
    assert m.normalize().text == canonical
    again = parse(canonical, sizes)
    assert again.normalize().text == canonical and again == m
    assert [cell_at(m, i) for i in range(m.size)] == [cell_at(again, i) for i in range(again.size)]


@pytest.mark.parametrize(("text", "sizes", "n", "halves"), [
    # The stride steps over the live values of D #{!} 6 whole: its padding stays in the operand.
    ("2, (B, A, C #{0} 2, D #{!} 6) = 81", {"B": 5, "A": 3, "C": 2, "D": 3}, 9,
     ("2, (B = 3, A, C, 1 #{!} 2) / 3 = 9", "(C, 1 #{!} 2) = 3, D")),
    # A strided operand whose inner operand nothing else reads is read whole, as a flat one is.
    ("1, (1 # 5, A, B #{!} 3, D) #{!} 66 # 70", {"A": 2, "B": 1, "D": 2}, 2,
     ("(A # 10 #{!} 11, 1 #{!} 3) # 35", "D")),
    # The operand's innermost digit B # 4 / 2 is read at stride 1, and the piece strides twice as far.
    ("(C #{0} 3, B # 4) / 2, 2", {"C": 3, "B": 3}, 6, ("(C, B # 4) / 6", "(C = 2, B # 4 / 2) = 3, 2")),
    ("(D, C, A) #{0} 66 / 2, 2", {"D": 5, "C": 3, "A": 4}, 6, ("(D, C, A) / 6 #{0} 11", "(C = 2, A / 2) = 3, 2")),
    # A ragged digit's spelt kind (Zero, Bottom) is kept apart from the padding its slot holds.
    ("(B # 6, D #{0} 4, 1 #{!} 2) / 4", {"B": 4, "D": 3}, 3,
     ("(B, D #{0} 4) # 18 / 6 # 4", "(B % 2, D #{0} 4 / 2) = 3")),
    ("(D #{!} 3, 1 #{!} 5, B #{0} 6) #{!} 93 / 3, 2", {"D": 1, "B": 4}, 31, ("1 #{!} 2", "(B #{0} 6 / 3, 2) #{!} 31")),
    ("1 #{!} 2, D #{!} 9 / 3", {"D": 7}, 2, ("D #{!} 12 / 6 #{!} 3", "D = 6 / 3")),
    ("C #{0} 5 #{!} 10 #{!} 18", {"C": 4}, 3, ("C #{0} 6 / 3 #{!} 6", "C = 3")),
    # Cut off, the outer pieces of 1 #{0} 3 and (3, A) leave touches; those of (3, A) rank nothing.
    ("1 #{0} 3 / 3 = 1, (E, 3, A = 2) / 6, 1 #{0} 3 % 3, (E, 3, A = 2) % 6, 1 #{0} 3 / 1, (E, 3, A = 2) % 6 % 3",
     {"E": 1, "A": 2}, 9, ("3 #{0} 9, A", "(2, A) = 3 #{0} 9")),
    # 1 #{!} 6 is 1 #{!} 3 under 1 #{!} 2: a stride of 9 or a cut at 9 reads the one and keeps the other.
    ("3 / 1 % 3, 3 / 1 % 3 / 1, 3 / 1 / 3, E / 1 % 1 #{!} 2 / 2, E / 1 % 1 #{!} 2 % 2, 1 #{!} 3", {"E": 3}, 9,
     ("((3, 1) % 3, (3, 1) % 3, 1 #{!} 2) / 3", "(2, 1 #{!} 2) = 3, 1 #{!} 3")),
    # The touch of (1, C, 2) #{0} 13 under its other piece stays under it when the stride drops it;
    # the Top padding of the strided piece stays a slot of its own above the Bottom it reads.
    ("1 # 3, 1 / 1 % 1 #{!} 4 % 4, (1, C, 2) #{0} 13 % 13 # 13, (1, C, 2) #{0} 13 / 13 / 1, 1 / 1 % 1 #{!} 4 / 4",
     {"C": 3}, 2, ("1 # 3, C #{0} 7 #{!} 26", "2")),
    # A cut inside a broadcast over a digit keeps the two together, as the text holding (2, B) does.
    ("D % 1 % 1 #{0} 4 % 1 % 1, (2, B = 2) / 4 #{!} 3, (2, B = 2) % 4, D % 1 % 1 #{0} 4 / 1", {"D": 1, "B": 2}, 12,
     ("B #{!} 4", "1 #{0} 4 / 4, (2, B) = 3, 1 #{0} 4 % 4")),
    ("(3, A) / 1, (3, A) % 1, 1 #{!} 3 / 3, 1 #{0} 2, 1 #{!} 3 % 3", {"A": 2}, 18,
     ("A", "(2, A) = 3, 1 #{!} 3 / 3, 1 #{0} 2, 1 #{!} 3 % 3")),
    # The span of = 9 ends in the slot 2 whether (2, A) is read as one slot or as two: nothing is cut.
    ("1 #{!} 2 % 1, 1 #{0} 3, (2, A) / 1, 1 #{!} 2 / 1, (2, A) % 1", {"A": 3}, 9,
     ("(1 #{!} 2 / 2, 2 #{0} 6, A, 1 #{!} 2 % 2) / 9", "(1 #{!} 2 / 2, 2, A, 1 #{!} 2 % 2) = 9")),
    # / 4 keeps A with the broadcast 2 above it, as one piece (2, A) / 2, however the text held them.
    ("(3, B) % 3, (2, A) / 1, (3, B) / 3, (2, A) % 1", {"A": 3, "B": 2}, 4, ("(2, B) = 3, (2, A) / 2", "A = 2, B")),
    ("(3, B) % 3, (2, A) / 1, (3, B) / 3, (2, A) % 1", {"A": 5, "B": 2}, 4, ("(2, B) = 3, (2, A) / 2", "A = 2, B")),
    # / 10 keeps A #{0} 3 with the padded piece (D, 1 # 3) # 20 above it, as the text's = 60 holds them.
    ("E, (D # 7, B # 3, A #{0} 3) = 60", {"E": 2, "D": 4, "B": 1, "A": 2}, 10,
     ("E, (D, 1 # 3, A #{0} 3) # 40 / 10 # 6", "(D % 2, 1 # 3, A #{0} 3) = 10")),
])
def test_a_split_of_a_flat_operand_is_the_split_written_out(
        text: str, sizes: dict[str, int], n: int, halves: tuple[str, str]) -> None:
    m = parse(text, sizes)
    outer, inner = m.split_at(n)
    assert (outer.normalize().text, inner.normalize().text) == halves
    assert (parse(f"[{text}] / {n}", sizes).normalize().text, parse(f"[{text}] % {n}", sizes).normalize().text) == halves


def test_a_touch_of_an_operand_whose_pieces_never_reach_its_padding_goes() -> None:
    # (3, A) / 6 always reads position 0; with (3, A) % 3 the operand is read at 0, 1, 2 only.
    assert parse("(3, A) / 6, B, (3, A) % 3", {"A": 2, "B": 2}).normalize().text == "B, (2, A) = 3"
    # With (3, A) % 2 as well, the positions add up to 3 and carry: the touch still ranks the operand.
    text = "(3, A) / 6, B, (3, A) % 3, (3, A) % 2"
    assert parse(text, {"A": 2, "B": 2}).normalize().text == text


def test_a_strided_group_under_a_stride_is_read_whole() -> None:
    # The group (2, B) / 2 that the stride kept together gives way to its slots under a second stride.
    for text in ("(A, (2, B) / 2) / 2", "(A, 2, B) / 4", "[A, 2, B] / 4"):
        assert parse(text, {"A": 2, "B": 3}).normalize().text == "(A, 2, B) / 4", text


def test_a_strided_innermost_digit_of_an_opaque_operand_is_read_at_stride_1() -> None:
    sizes = {"C": 3, "B": 3}
    for text in ("(C, B # 4 / 2) / 3", "(C, B # 4) / 6", "[(C, B # 4) / 2] / 3"):
        assert parse(text, sizes).normalize().text == "(C, B # 4) / 6", text
    # A stride that lines up with the slots still cuts them.
    assert parse("[A, B] / 4", {"A": 4, "B": 6}).normalize().text == "(A, B) / 4"


@pytest.mark.parametrize(("texts", "canonical"), [
    (["(A #{!} 8, 6) / 4", "(A #{!} 8, 3) / 2"], "(A, 3) / 2 #{!} 12"),
    (["(A, 6) # 27 / 9", "(A, 2) # 9 / 3"], "(A, 2) # 9 / 3"),
])
def test_a_piece_striding_an_innermost_broadcast_reads_the_fewest_of_its_values(
        texts: list[str], canonical: str) -> None:
    # A broadcast's values hold no coordinate: a stride sharing a factor g with it reads every
    # g-th value, which is a broadcast g times smaller read g times less far.
    for text in texts:
        m = parse(text, {"A": 4})
        assert m.normalize().text == canonical, text
        again = parse(canonical, {"A": 4})
        assert [cell_at(m, i) for i in range(m.size)] == [cell_at(again, i) for i in range(again.size)], text


def test_pieces_of_one_digit_operands_read_as_digits_give_the_form_their_cells_give(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The generated expressions of the algebra sweep, normalised with pieces of one-digit operands written as
    # digits and again with every form read off its cells: the same canonical structure, so spellings meet alike.
    from test_algebra_sweep import expression, flat_expression

    rng = random.Random(23)
    mappings = [expression(rng) for _ in range(1500)] + [flat_expression(rng) for _ in range(1500)]
    mappings += [parse(text, {"L": 3072, "H": 1024, "T": 8}) for text in ("L / 8 % 3, H", "T, L / 8 % 3", "L % 8, L / 24")]
    taken = []
    original = flat._pieces_as_digits

    def counted(slots: flat.Slots) -> flat.Slots | None:
        found = original(slots)
        taken.append(found is not None)
        return found

    clear_caches()
    monkeypatch.setattr(flat, "_pieces_as_digits", counted)
    fast = [m.normalize() for m in mappings]
    clear_caches()
    monkeypatch.setattr(flat, "_pieces_as_digits", lambda slots: None)
    by_cells = [m.normalize() for m in mappings]
    clear_caches()
    assert sum(taken) >= 50  # the pieces' digits were read without their cells that often
    assert [f for f, c in zip(fast, by_cells) if not f.same_structure(c)] == []


def test_a_piece_of_one_value_over_padding_is_left_to_the_cells() -> None:
    # Value 0 of B, then Zero padding: the cells merge it into the digit of A below it, as A #{0} 12; the piece
    # written as a digit of one value would stay a slot of its own.
    operand = Operand((Slot(Digit("B", 3, 1, 3), 3),), 0)
    slots = (Slot(Digit("A", 6, 1, 6), 6), Slot(Composite(operand, 1, 1), 2, PaddingKind.ZERO))
    assert flat._pieces_as_digits(slots) is None
    clear_caches()
    assert flat_form(slots) == flat._from_cells(flat._Cells(slots, 1), size_of(slots)) == (
        Slot(Digit("A", 6, 1, 6), 12, PaddingKind.ZERO),)
