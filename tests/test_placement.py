"""Vectorised placement: plans agree with the cell semantics everywhere, physical/logical round
trips, row layouts and coverage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl.algebra import Index, Mapping, Pad, PaddingKind, parse
from tcpdsl.errors import LayoutError
from tcpdsl.numerics.placement import CACHED_CELLS, LIVE, plan
from tcpdsl.numerics.transfer import to_logical, to_physical, to_physical_rows

SIZES = {"A": 3, "B": 4, "C": 2, "R": 5, "L1": 90, "K": 100, "D": 61}

CASES = [
    "A, B",
    "B, A # 4",
    "A #{0} 4 # 16",
    "A #{!} 8, C",
    "R # 16 / 4",
    "R # 16 / 4, R # 16 % 4",
    "L1 # 256 / 32 % 4, C",
    "K #{0} 128 / 32, K #{0} 128 % 32",
    "K # 128 / 64, 2, K # 128 % 64",
    "B / 2, C, B % 2",
    "1 # 4, A",
    "3, A, 2",
    "[A, C] # 10",
    "D # 64",
    "C, B = 2 # 4",
]


def parsed(text: str) -> Mapping:
    return parse(text, SIZES)


@pytest.mark.parametrize("text", CASES)
def test_plan_agrees_with_cell_semantics(text: str) -> None:
    m = parsed(text)
    p = plan(m)
    assert p.size == m.size
    for i in range(m.size):
        cell = m.cell(i)
        if isinstance(cell, Index):
            assert p.live[i] and p.kind[i] == LIVE, (text, i)
            got = {name: int(values[i]) for name, values in p.coords.items() if values[i]}
            assert got == cell.coords, (text, i)
        else:
            assert isinstance(cell, Pad)
            assert not p.live[i] and p.kind[i] == int(cell.kind), (text, i)


def test_plan_is_cached_and_read_only() -> None:
    m = parsed("A, B # 8")
    assert plan(m) is plan(parsed("A, B # 8"))
    with pytest.raises(ValueError):
        plan(m).live[0] = False


def test_to_physical_places_values_and_fills_padding() -> None:
    m = parsed("C, A #{0} 4 # 8")
    values = np.arange(6).reshape(2, 3) + 10
    got = to_physical(values, ("C", "A"), m, fill=-1, zero_fill=0)
    assert got.tolist() == [10, 11, 12, 0, -1, -1, -1, -1, 13, 14, 15, 0, -1, -1, -1, -1]


def test_to_physical_replicates_broadcasts_and_reads_missing_axes_at_zero() -> None:
    m = parsed("2, B")
    values = np.arange(12).reshape(3, 4)
    assert to_physical(values, ("A", "B"), m).tolist() == [0, 1, 2, 3, 0, 1, 2, 3]


def test_to_logical_inverts_to_physical() -> None:
    m = parsed("B / 2, C # 3, B % 2")
    values = np.arange(8).reshape(4, 2) * 3 + 1
    physical = to_physical(values, ("B", "C"), m, fill=99)
    assert np.array_equal(to_logical(physical, m, ("B", "C"), (4, 2)), values)
    assert np.array_equal(to_logical(physical, m, ("C", "B"), (2, 4)), values.T)


def test_to_logical_without_axes_reads_the_single_value() -> None:
    m = parsed("1 # 8")
    physical = np.array([7, 0, 0, 0, 0, 0, 0, 0])
    assert int(to_logical(physical, m, (), ())) == 7


def test_shape_mismatch_is_a_layout_error() -> None:
    with pytest.raises(LayoutError, match="axis B has 5 elements but mapping A, B declares B = 4") as info:
        to_physical(np.zeros((3, 5)), ("A", "B"), parsed("A, B"))
    assert (info.value.stage, info.value.rule) == ("layout", "ShapeMismatch")
    with pytest.raises(LayoutError, match="cannot carry the 2 axes A B"):
        to_physical(np.zeros(3), ("A", "B"), parsed("A, B"))
    with pytest.raises(LayoutError, match="a physical buffer of 5 cells cannot be read"):
        to_logical(np.zeros(5), parsed("A, B"), ("A", "B"), (3, 4))


def test_rows_layout_matches_the_full_layout_on_live_prefix_rows() -> None:
    prefix, inner = parsed("C # 4, B / 2"), parsed("A # 4, B % 2")
    values = np.arange(24).reshape(2, 4, 3) + 1
    full = to_physical(values, ("C", "B", "A"), parsed("C # 4, B / 2, A # 4, B % 2"), fill=-1)
    rows_buffer, rows, undefined = to_physical_rows(values, ("C", "B", "A"), prefix, inner, fill=-1)
    assert rows.tolist() == [0, 1, 2, 3]
    assert np.array_equal(rows_buffer, full.reshape(prefix.size, inner.size)[rows])
    assert undefined[0].tolist() == [False, False, False, False, False, False, True, True]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["A", "B", "C", "A # 4", "B #{0} 6", "C # 3", "2", "1 # 2"]),
                min_size=1, max_size=3, unique=True))
def test_plans_of_random_pairs_agree_with_cells(parts: list[str]) -> None:
    names = [p.split()[0] for p in parts if p[0].isalpha()]
    assume(len(names) == len(set(names)))
    m = parsed(", ".join(parts))
    p = plan(m)
    for i in range(m.size):
        cell = m.cell(i)
        assert p.live[i] == isinstance(cell, Index)
        if isinstance(cell, Pad):
            assert p.kind[i] == int(cell.kind)
        else:
            assert isinstance(cell, Index)
            assert {n: int(v[i]) for n, v in p.coords.items() if v[i]} == cell.coords


def test_zero_padding_kind_is_reported() -> None:
    p = plan(parsed("A #{0} 4"))
    assert p.kind.tolist() == [LIVE, LIVE, LIVE, int(PaddingKind.ZERO)]
    assert p.padding(PaddingKind.ZERO).tolist() == [False, False, False, True]


TENSOR_CASES = [
    ("A, B", {"A": 3, "B": 4}),
    ("B / 4, B % 4", {"B": 16}),
    ("B / 8, B % 4, B / 4 % 2", {"B": 16}),
    ("C, D # 8", {"C": 2, "D": 3}),
    ("C, D = 2", {"C": 2, "D": 3}),
    ("A # 4, B # 4", {"A": 2, "B": 2}),
    ("R # 16 / 4", {"R": 5}),
    ("R # 16 / 4, R # 16 % 4", {"R": 14}),
    ("A # 16 / 4, A # 16 % 4", {"A": 10}),
    ("A #{0} 4 # 16", {"A": 3}),
    ("[A, B] # 10", {"A": 2, "B": 3}),
    ("1 # 4, A", {"A": 3}),
    ("L1 # 256 / 32 % 4", {"L1": 90}),
    ("4, A, 2", {"A": 3}),
    ("A % 1, B", {"A": 4, "B": 2}),
    ("[B, A # 9] / 4, [B, A # 9] % 4", {"A": 4, "B": 4}),
    ("1, 1 # 2, A / 16 % 2, 1 # 4, A % 16", {"A": 64}),
    ("M / 16, [M % 16, V % 16], V / 16, K", {"M": 32, "V": 32, "K": 2}),
]


def _agrees(text: str, sizes: dict[str, int]) -> None:
    mapping = tcp.parse(text, sizes)
    p = plan(mapping)
    live = p.live
    coords = {a: p.coords[a] for a in sizes if a in mapping.axes}
    for i in range(mapping.size):
        cell = mapping.cell(i)
        assert bool(live[i]) == isinstance(cell, Index), (text, i, cell)
        if isinstance(cell, Index):
            got = {a: int(c[i]) for a, c in coords.items() if int(c[i]) != 0}
            assert got == cell.coords, (text, i)


@pytest.mark.parametrize(("text", "sizes"), TENSOR_CASES)
def test_plan_matches_cells(text: str, sizes: dict[str, int]) -> None:
    _agrees(text, sizes)


@settings(max_examples=60, deadline=None)
@given(
    order=st.permutations([0, 1, 2]),
    pads=st.lists(st.sampled_from([0, 1, 2]), min_size=3, max_size=3),
    kind=st.sampled_from(["#", "#{0}", "#{!}"]),
)
def test_plan_matches_cells_for_permuted_padded_digits(order: list[int], pads: list[int], kind: str) -> None:
    digits = ["A / 8", "A / 2 % 4", "A % 2"]
    counts = [2, 4, 2]
    parts = []
    for index in order:
        extra = pads[index]
        parts.append(f"[{digits[index]}] {kind} {counts[index] + extra}" if extra else digits[index])
    _agrees(", ".join(parts + ["B"]), {"A": 16, "B": 3})


def test_round_trip_through_a_padded_replicating_layout() -> None:
    mapping = tcp.parse("2, A # 8, B / 2, 1 # 3, B % 2", {"A": 5, "B": 4})
    values = np.arange(20, dtype=np.int32).reshape(5, 4)
    flat = to_physical(values, ("A", "B"), mapping, fill=-1)
    assert flat.shape == (mapping.size,)
    assert int((flat == -1).sum()) == mapping.size - 2 * 5 * 4
    np.testing.assert_array_equal(to_logical(flat, mapping, ("B", "A")), values.T)
    assert plan(mapping).held(("A", "B")).all()
    assert plan(mapping).coverage(("A", "B"))


def test_partial_layout_is_not_coverage() -> None:
    mapping = tcp.parse("A / 2", {"A": 8})
    assert not plan(mapping).coverage(("A",))
    np.testing.assert_array_equal(plan(mapping).held(("A",)), [True, False] * 4)


def test_plans_of_large_mappings_are_not_kept() -> None:
    small = parse("A, B", {"A": 64, "B": 64})
    assert plan(small) is plan(small)
    # One cell past the cache's limit: rebuilt on each request, so no large plan stays in memory.
    large = parse("A # 2, B", {"A": 1, "B": CACHED_CELLS // 2 + 1})
    assert large.size > CACHED_CELLS
    first, second = plan(large), plan(large)
    assert first is not second and np.array_equal(first.live, second.live)
