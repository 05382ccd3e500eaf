"""tcp.search keeps its promises on pathological inputs: the budget is wall time, absurd sizes are refused early."""

from __future__ import annotations

import gc
import string
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl.planner import Plans, clock, engine
from tcpdsl.planner.api import make_settings
from tcpdsl.planner.candidates import Candidate
from tcpdsl.planner.grid import Spread, divisors, spreads
from tcpdsl.planner.problem import MAX_CELLS, Problem, make_problem
from tcpdsl.planner.progress import Progress
from tcpdsl.planner.ranking import Rank, branch_rank

# Every search below finishes within its budget plus this much (the first search of a process also
# builds the memos every later one shares, so it is run once up front).
SLACK = 1.5
EIGHT_AXES = "abcdk,efghk->abcdefgh"
LETTERS = string.ascii_lowercase
TWENTY_SIX = f"{LETTERS[:13]},{LETTERS[13:]}->{LETTERS}"  # an outer product of 26 axes of 2
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


_TWENTY_SIX = f"""
import time
import tcpdsl as tcp
tcp.search("th,lh->tl", {{"T": 8, "H": 32, "L": 8}})
sizes = {{a: 2 for a in {LETTERS.upper()!r}}}
started = time.perf_counter()
try:
    tcp.search({TWENTY_SIX!r}, sizes, budget=1, progress=False)
    print("finished", time.perf_counter() - started)
except tcp.LayoutError as error:
    print(f"{{error.stage}}.{{error.rule}}", time.perf_counter() - started)
"""


def test_the_budget_bounds_a_26_letter_einsum() -> None:
    # In its own interpreter, so that the cycle collector's passes over a test worker's heap, which
    # this search cannot shorten, are not charged to it.
    done = subprocess.run([sys.executable, "-c", _TWENTY_SIX], capture_output=True, text=True, timeout=120)
    outcome, seconds = done.stdout.split()
    assert outcome == "search.Budget", done.stdout + done.stderr
    assert float(seconds) < 1 + SLACK


class _Time:
    """Stands in for the time module under the search's clock: it moves only when a test moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


def test_the_search_reads_the_clock_after_every_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    # A chain over many axes takes tens of milliseconds to check: here each takes a second.
    now = _Time()
    monkeypatch.setattr(clock, "time", now)
    check = engine._Search.chain

    def slow(search: engine._Search, problem: Problem, candidate: Candidate) -> bool:
        now.now += 1
        return check(search, problem, candidate)

    monkeypatch.setattr(engine._Search, "chain", slow)
    plans = tcp.search("th,lh->tl", {"T": 256, "H": 1024, "L": 3072}, budget=2.5, progress=False)
    assert not plans.exhausted
    assert (plans.chains, plans.seconds) == (3, 3.0)


def test_the_search_reads_the_clock_while_it_bounds_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    # With 13 weight-only axes a grid has 8192 lane choices, nearly all bounded out unchecked.
    now = _Time()
    monkeypatch.setattr(clock, "time", now)
    bounded = 0

    def slow(*args: Any) -> Rank:
        nonlocal bounded
        bounded += 1
        now.now += 1
        return branch_rank(*args)

    monkeypatch.setattr("tcpdsl.planner.engine.branch_rank", slow)
    problem = make_problem(TWENTY_SIX, {a: 2 for a in LETTERS.upper()}, "bf16", "bf16")
    settings = replace(make_settings(problem, 5, None, None, 2.5), grid_axes=frozenset())  # one grid: no axis spread
    outcome = engine.run([problem], settings, Progress(False))
    assert not outcome.exhausted
    assert 3 <= bounded <= 3 + clock.EVERY  # the clock is read every EVERY ticks


def test_spreads_waiting_to_be_visited_are_no_work_for_the_cycle_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    # The 26-letter einsum has 5658537 spreads over 512 slices, each held until visited. A full pass
    # of the cycle collector walks every object it tracks: stopped once 20000 spreads are found, the
    # search must track no more objects than before, but for the frames of its enumeration.
    found = 0
    grown: list[int] = []
    expired = clock.Clock.expired

    def counted(*args: Any) -> Iterator[Spread]:
        nonlocal found
        for spread in spreads(*args):
            found += 1
            yield spread

    def full(timer: clock.Clock) -> bool:
        if found >= 20000:
            grown.append(len(gc.get_objects()) - before)
            return True
        return expired(timer)

    monkeypatch.setattr("tcpdsl.planner.engine.spreads", counted)
    monkeypatch.setattr(clock.Clock, "expired", full)
    gc.collect()
    before = len(gc.get_objects())
    with pytest.raises(tcp.LayoutError, match="no plan found within the 60 s budget"):
        tcp.search(TWENTY_SIX, {a: 2 for a in LETTERS.upper()}, budget=60, progress=False)
    assert len(grown) == 1 and grown[0] < 1000  # a few frames and dicts of the enumeration


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
