"""The tensor layer's vectorised placement agrees with the algebra's cell semantics everywhere."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl.algebra.cells import Index
from tcpdsl.tensors.placement import held, plan, to_logical, to_physical

CASES = [
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
    live = np.ones(mapping.size, dtype=np.bool_) if p.live is None else p.live
    coords = {a: p.coordinate(a) for a in sizes if a in mapping.axes}
    for i in range(mapping.size):
        cell = mapping.cell(i)
        assert bool(live[i]) == isinstance(cell, Index), (text, i, cell)
        if isinstance(cell, Index):
            got = {a: int(c[i]) for a, c in coords.items() if int(c[i]) != 0}
            assert got == cell.coords, (text, i)


@pytest.mark.parametrize(("text", "sizes"), CASES)
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
    assert held(mapping, ("A", "B")).all()
    assert plan(mapping).coverage(("A", "B"))


def test_partial_layout_is_not_coverage() -> None:
    mapping = tcp.parse("A / 2", {"A": 8})
    assert not plan(mapping).coverage(("A",))
    np.testing.assert_array_equal(held(mapping, ("A",)), [True, False] * 4)
