"""tcp.search keeps its promises on pathological inputs: the budget is wall time, absurd sizes are refused early."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl.planner import Plans
from tcpdsl.planner.grid import divisors
from tcpdsl.planner.problem import MAX_CELLS

# Every search below finishes within its budget plus this much (the first search of a process also
# builds the memos every later one shares, so it is run once up front).
SLACK = 1.5
EIGHT_AXES = "abcdk,efghk->abcdefgh"
PRIME_BELOW_2_40 = 2**40 - 87


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    tcp.search("th,lh->tl", {"T": 8, "H": 32, "L": 8})


def _timed(call: Callable[[], object]) -> tuple[object, float]:
    started = time.perf_counter()
    try:
        result: object = call()
    except tcp.TcpError as error:
        result = error
    return result, time.perf_counter() - started


def _stopped_by_budget(result: object) -> bool:
    if isinstance(result, tcp.LayoutError):
        return (result.stage, result.rule) == ("search", "Budget")
    return isinstance(result, Plans) and not result.exhausted


@pytest.mark.parametrize("budget", [0.5, 2.0])
def test_the_budget_bounds_a_search_over_many_kept_axes(budget: float) -> None:
    sizes = {a: 30 for a in "ABCDEFGH"} | {"K": 32}  # 8 kept axes of 2*3*5: 84494 spreads, each with many grids
    result, seconds = _timed(lambda: tcp.search("abcdefgk,hk->abcdefgh", sizes, budget=budget, progress=False))
    assert _stopped_by_budget(result)
    assert seconds < budget + SLACK


def test_weights_no_device_can_hold_are_refused_before_any_grid_is_tried() -> None:
    # 30**4 * 64 bf16 weights: 198 KiB per slice at best; every kept axis is in both operands, so
    # no tile of the weights alone can be cut from one
    sizes = {a: 30 for a in "ABCD"} | {"K": 64}
    result, seconds = _timed(lambda: tcp.search("abcdk,abcdk->abcd", sizes, budget=30))
    assert seconds < 0.5
    assert isinstance(result, tcp.LayoutError) and (result.stage, result.rule) == ("to_trf", "ExceedsCapacity")
    assert result.detail.startswith(
        "no layout of the TRF holds the weights: 103680000 bytes of bf16 weights cannot be spread over 512 slices"
    )


_TWENTY_SIX = """
import string, time
import tcpdsl as tcp
tcp.search("th,lh->tl", {"T": 8, "H": 32, "L": 8})
letters = string.ascii_lowercase
sizes = {a: 2 for a in letters.upper()}
started = time.perf_counter()
try:
    tcp.search(f"{letters[:13]},{letters[13:]}->{letters}", sizes, budget=1, progress=False)
    print("finished", time.perf_counter() - started)
except tcp.LayoutError as error:
    print(f"{error.stage}.{error.rule}", time.perf_counter() - started)
"""


def test_the_budget_bounds_a_26_letter_einsum() -> None:
    # In its own interpreter: in a test worker that has run much of the suite this search has
    # overshot its budget by about 1.6 s, a stall not yet explained (seen only under pytest-xdist).
    done = subprocess.run([sys.executable, "-c", _TWENTY_SIX], capture_output=True, text=True, timeout=120)
    outcome, seconds = done.stdout.split()
    assert outcome == "search.Budget", done.stdout + done.stderr
    assert float(seconds) < 1 + SLACK


@pytest.mark.parametrize("size", [2**62, 10**30, 10**18 + 9])
def test_absurd_sizes_are_refused_at_once(size: int) -> None:
    result, seconds = _timed(lambda: tcp.search("th,lh->tl", {"T": size, "H": 64, "L": 64}, budget=30))
    assert seconds < 0.5
    assert isinstance(result, tcp.LayoutError)
    assert (result.stage, result.rule) == ("search", "TooLarge")
    assert result.detail == (
        f"operand 1 of 'th,lh->tl' (T, H) holds {size * 64} cells, more than the 1099511627776 (2**40) "
        "any device could hold"
    )
    assert "tile" in (result.hint or "")


def test_eight_kept_axes_of_210_are_refused_at_once() -> None:
    sizes = {a: 2 * 3 * 5 * 7 for a in "ABCDEFGH"} | {"K": 64}
    result, seconds = _timed(lambda: tcp.search(EIGHT_AXES, sizes, budget=0.5))
    assert seconds < 0.5
    assert isinstance(result, tcp.LayoutError) and result.rule == "TooLarge"
    assert f"the result of {EIGHT_AXES!r} (A, B, C, D, E, F, G, H) holds {210**8} cells" in result.detail


def test_the_result_counts_toward_the_limit() -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search("a,b->ab", {"A": 2**21, "B": 2**20})
    assert info.value.rule == "TooLarge" and "the result of 'a,b->ab' (A, B)" in info.value.detail


def test_a_large_prime_within_the_limit_is_searched_quickly() -> None:
    plans, seconds = _timed(lambda: tcp.search("t,->t", {"T": PRIME_BELOW_2_40}, budget=30))
    assert isinstance(plans, Plans) and plans.exhausted
    assert seconds < 2


def test_divisors_come_from_the_prime_factors() -> None:
    assert divisors(1) == (1,)
    assert divisors(360) == tuple(d for d in range(1, 361) if 360 % d == 0)
    assert divisors(PRIME_BELOW_2_40) == (1, PRIME_BELOW_2_40)
    assert divisors(MAX_CELLS) == tuple(2**e for e in range(41))
    assert divisors(6 * PRIME_BELOW_2_40) == tuple(sorted({1, 2, 3, 6} | {k * PRIME_BELOW_2_40 for k in (1, 2, 3, 6)}))


def test_a_budget_too_large_for_a_float_sets_no_limit() -> None:
    plans = tcp.search("th,lh->tl", {"T": 256, "H": 1024, "L": 3072}, budget=10**400)
    assert plans.exhausted and plans[0].cycles == 15104


def test_a_huge_negative_budget_is_refused_briefly() -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search("th,lh->tl", {"T": 256, "H": 1024, "L": 3072}, budget=-(10**400))
    assert info.value.rule == "Option" and "budget= must be a positive number of seconds, got -1000" in info.value.detail
    assert len(info.value.detail) < 100


def test_numpy_numbers_are_accepted_as_sizes_top_and_budget() -> None:
    sizes = {"T": np.int64(256), "H": np.int32(1024), "L": np.uint16(3072)}
    plans = tcp.search("th,lh->tl", sizes, top=np.int64(2), budget=np.float32(5))  # type: ignore[arg-type]
    assert len(plans) == 2 and plans[0].cycles == 15104
    assert all(type(n) is int for n in plans[0].problem.sizes.values())
