"""What a mapping holds, per axis, read from its slots: checked against the cells it reaches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import tcpdsl as tcp

from tcpdsl.algebra import Digit, Index, Mapping, digit_text, held, logical_terms, parse, term_of
from tcpdsl.numerics.fit import check_fit
from test_algebra_properties import interleavings, laws, trees


def reached(mapping: Mapping) -> dict[str, set[int]]:
    """Per axis, every coordinate some live cell holds (by walking every cell). A coordinate past
    its axis (overlapping digits that add up past it) is no element: the tensors treat it as padding."""
    out: dict[str, set[int]] = {a: set() for a in mapping.axes}
    sizes = mapping.axis_sizes()
    for i in range(mapping.size):
        cell = mapping.cell(i)
        if isinstance(cell, Index) and all(cell.coords.get(a, 0) < sizes[a] for a in mapping.axes):
            for a in mapping.axes:
                out[a].add(cell.coords.get(a, 0))
    return out


def spelled(terms: tuple[Digit, ...]) -> set[int]:
    out = {0}
    for t in terms:
        out = {v + k * t.stride for v in out for k in range(t.count)}
    return out


@laws
@given(st.one_of(trees(), interleavings()))
def test_held_terms_spell_exactly_the_coordinates_the_cells_reach(e: Mapping) -> None:
    found = held(e)
    cells = reached(e)
    if not any(cells.values()):
        return  # no live cell at all
    for axis in e.axes:
        if axis not in found.irregular:
            assert spelled(found.of(axis)) == cells[axis], (e.text, axis)


@pytest.mark.parametrize(
    ("text", "sizes", "terms"),
    [
        ("A, B / 16, B % 16", {"A": 32, "B": 32}, ["A", "B"]),
        ("Wp / 4096 % 2, Wp / 16 % 256, Wp / 8 % 2, Wp % 8", {"Wp": 155648}, ["Wp % 8192"]),
        ("K / 16 # 256", {"K": 32}, ["K / 16"]),
        ("B / 2", {"B": 64}, ["B / 2"]),
        ("A # 48 / 16, A # 48 % 16", {"A": 40}, ["A"]),
        ("A # 48 / 16, A = 4", {"A": 36}, ["A # 48 / 16", "A % 4"]),
        ("C, A = 1, B", {"A": 8, "B": 4, "C": 1}, ["C", "B"]),
        ("1 # 2, R # 8", {"R": 5}, ["R"]),
    ],
)
def test_held_terms_of_layouts(text: str, sizes: dict[str, int], terms: list[str]) -> None:
    assert [digit_text(t) for t in logical_terms(parse(text, sizes))] == terms


def test_irregular_axes_are_whole_in_the_logical_view() -> None:
    mapping = parse("A, A", {"A": 4})  # every coordinate twice: no product of digits
    assert held(mapping).irregular == ("A",)
    assert logical_terms(mapping) == (Digit("A", 4, 1, 4),)


def test_a_composite_hides_its_axes() -> None:
    found = held(parse("[A, B] = 20", {"A": 4, "B": 8}))
    assert found.composite and found.irregular == ("A", "B") and found.terms == ()


def test_held_is_cached_per_layout() -> None:
    mapping = parse("T / 64, H", {"T": 256, "H": 1024})
    assert held(mapping) is held(mapping)


@pytest.mark.parametrize("text", ["A", "B / 2", "A / 4 % 2", "Wp % 8192", "Wp / 8192"])
def test_a_term_reads_back_from_its_text(text: str) -> None:
    term = term_of(parse(text, {"A": 32, "B": 64, "Wp": 155648}))
    assert digit_text(term) == text


@laws
@given(st.one_of(trees(), interleavings()))
def test_whole_tensors_fit_where_the_cells_cover_their_axes(e: Mapping) -> None:
    """The slot-based check accepts a whole-axis tensor exactly where the cells reach every element."""
    cells = reached(e)
    assume(not held(e).composite and any(cells.values()))
    sizes = e.axis_sizes()
    for axis in e.axes:
        tensor = tcp.Tensor(np.zeros(sizes[axis]), axis, sizes=sizes)
        covered = cells[axis] == set(range(sizes[axis]))
        try:
            check_fit(tensor, e, "test")
        except tcp.LayoutError as error:
            assert not covered and error.rule == "AxisNotCovered", (e.text, axis)
        else:
            assert covered, (e.text, axis)
