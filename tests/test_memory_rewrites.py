"""A memory tensor written again and again, as a KV cache is once per decode step: each write keeps only
the links of its own step once the values before it were read, so memory and work per step stay bounded
and one step's schedule is the same at every step (docs/runtime.md §4, "Writes read once")."""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.harness.schedule import schedule_of
from tcpdsl.numerics.flow import Flow, Window, Written

T = tcp.axis("T", 512)
D = tcp.axis("D", 64)
Row = tcp.HbmTensor[tcp.bf16, m["1"], m["D"]]
Cache = tcp.HbmTensor[tcp.bf16, m["1"], m["T, D"]]
CACHE_BYTES = T.n * D.n * 2  # one bf16 copy of the cache's values


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def _write(cache: Any, t: int, row: np.ndarray[Any, Any]) -> None:
    """The decode step's cache write: one row into the tile of row ``t``, at a run-time row."""
    source = Row(tcp.Tensor(row, "D"))
    source.view().to_hbm_view(cache.view_mut().tile(t, index=m["T"], len=1, element=m["T = 1 #{!} 512, D"]))


def _links(node: object) -> int:
    """How many writes a flow's value is still built from."""
    count = 0
    while True:
        if isinstance(node, Flow):
            node = node.root.source
        elif isinstance(node, Written):
            count, node = count + 1, node.parent
        elif isinstance(node, Window):
            node = node.parent
        else:
            return count


def _rows(steps: int) -> np.ndarray[Any, Any]:
    return np.random.default_rng(0).standard_normal((steps, D.n)).astype(np.float32)


def test_a_cache_written_and_read_every_step_holds_one_steps_links(evaluator: str) -> None:
    """Every step writes a row and reads the whole cache: the values are the rows written so far (in bf16), and
    the cache is built from its own step's write only, however many steps came before."""
    rows = _rows(12)
    cache = Cache(tcp.Tensor(np.zeros((T.n, D.n), np.float32), "T D"))
    expected = np.zeros((T.n, D.n), np.float32)
    for t, row in enumerate(rows):
        _write(cache, t, row)
        expected[t] = row.astype(tcp.bf16.numpy).astype(np.float32)
        assert np.array_equal(cache.to_tensor().to_numpy("T D").astype(np.float32), expected)
        assert _links(cache.flow) == 1


def test_writes_not_read_in_between_keep_their_links_until_read() -> None:
    """A write whose values nobody read stays a link (its values are not computed early): the chain settles at
    the first write after a read."""
    rows = _rows(4)
    cache = Cache(tcp.Tensor(np.zeros((T.n, D.n), np.float32), "T D"))
    for t, row in enumerate(rows[:3]):
        _write(cache, t, row)
    assert _links(cache.flow) == 3
    values = cache.to_tensor().to_numpy("T D")
    _write(cache, 3, rows[3])
    assert _links(cache.flow) == 1
    assert np.array_equal(cache.to_tensor().to_numpy("T D")[:3], values[:3])


def test_one_steps_schedule_is_the_same_at_every_step() -> None:
    """The schedule of the cache after a step draws that step's move only, at step 1 as at step 12."""
    rows = _rows(12)
    cache = Cache(tcp.Tensor(np.zeros((T.n, D.n), np.float32), "T D"))
    drawn = []
    for t, row in enumerate(rows):
        _write(cache, t, row)
        schedule = schedule_of(cache)
        assert schedule is not None
        drawn.append([(s.unit, s.name, s.cycles) for s in schedule.streams])
        cache.to_tensor()
    assert drawn[0] == [("dma", "to_hbm_view", drawn[0][0][2])]
    assert all(d == drawn[0] for d in drawn)


def test_a_long_decode_runs_in_bounded_memory_and_time_per_step(evaluator: str) -> None:
    """32 steps of a write and a read of a 64 KiB cache, over 8 rows so that every planned move is planned in
    the first 8: from there on the memory held does not grow with the steps (before, each kept its own copy
    of the cache, 1.5 MiB over these 24 steps), nor does a step take longer. The read is a DMA out of the
    cache, as attention's: a flow that continues the cache, whose reading the cache must know of."""
    rows = _rows(32)
    cache = Cache(tcp.Tensor(np.zeros((T.n, D.n), np.float32), "T D"))
    held: list[int] = []
    seconds: list[float] = []
    tracemalloc.start()
    try:
        for t, row in enumerate(rows):
            start = time.perf_counter()
            _write(cache, t % 8, row)
            cache.to_hbm(element=m["D, T"]).to_tensor()
            seconds.append(time.perf_counter() - start)
            if t >= 7:
                gc.collect()
                held.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert max(held) - held[0] < CACHE_BYTES  # not one more copy of the cache over 24 steps
    assert sorted(seconds[-8:])[4] < 3 * sorted(seconds[8:16])[4] + 0.01  # medians: the late steps are no slower
