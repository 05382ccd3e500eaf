"""The heap of spreads waiting to be visited: ints that pop in visiting order and rebuild their spreads."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.planner.api import variants
from tcpdsl.planner.clock import Clock
from tcpdsl.planner.grid import Machine, Spread, spread_of, spreads
from tcpdsl.planner.heap import SpreadHeap
from tcpdsl.planner.problem import make_problem

# Sizes with many divisors, one prime, and the sizes of a transformer projection.
SIZES = [1, 2, 7, 12, 30, 64, 210, 1024, 3072]


def _drained(einsum: str, sizes: dict[str, int], machine: Machine) -> tuple[list[tuple[int, Spread]], list[tuple[int, Spread]]]:
    """The spreads of every orientation and variant as the heap pops them, and as a stable sort of
    them all by (order, orientation) does."""
    problem = make_problem(einsum, sizes, "bf16", "bf16")
    problems = [q for swapped in (False, True) for q in variants(problem.oriented(swapped), machine)]
    heap = SpreadHeap(problems, machine)
    found = []
    for tag, p in enumerate(problems):
        for spread in spreads(p, machine, Clock(math.inf)):
            heap.push(tag, spread)
            found.append((tag, spread))
    popped = []
    while len(heap):
        tag, local = heap.pop()
        popped.append((tag, spread_of(problems[tag], machine, local, True, False)))
    return popped, sorted(found, key=lambda item: (item[1].order, item[0]))


@pytest.mark.parametrize(
    ("einsum", "sizes", "count"),
    [
        ("th,lh->tl", {"T": 256, "H": 1024, "L": 3072}, 656),
        ("abk,ck->abc", {"A": 6, "B": 12, "C": 10, "K": 64}, 544),
        ("k,nk->n", {"K": 8192, "N": 64}, 96),
    ],
)
def test_the_heap_pops_every_spread_in_visiting_order(einsum: str, sizes: dict[str, int], count: int) -> None:
    popped, expected = _drained(einsum, sizes, Machine())
    assert len(popped) == count
    assert popped == expected


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.sampled_from(SIZES), min_size=4, max_size=4),
    chips=st.sampled_from([1, 2, 4]),
)
def test_the_heap_keeps_visiting_order_on_any_device(sizes: list[int], chips: int) -> None:
    popped, expected = _drained("abk,ck->abc", dict(zip("ABCK", sizes)), Machine(chips=chips))
    assert popped == expected
