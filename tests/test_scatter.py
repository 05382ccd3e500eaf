"""``dm.dma_scatter(index, out, key=)`` on both evaluators, against the oracle and under ``tcp.replay()``: the
reference's scatter_minimal, a KV cache row written at a byte offset, and the offsets refused when the scatter
runs (docs/stage-rules.md §4.1, docs/runtime.md §4)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.harness.kernel_spec import describe, random_case

K = tcp.axis("K", 512)
D = tcp.axis("D", 128)
C = tcp.axis("C", 612)
N = tcp.axis("N", 8)
T = tcp.axis("T", 512)

Chip = m["1"]
Table = tcp.HbmTensor[tcp.bf16, Chip, m["K, D"]]
Rows = tcp.DmTensor[tcp.bf16, Chip, m["1 # 2"], m["K / 2"], m["K % 2, D"]]
Index = tcp.HbmTensor[tcp.i32, Chip, m["K"]]
Out = tcp.HbmTensor[tcp.bf16, Chip, m["C, D"]]
Head = tcp.DmTensor[tcp.bf16, Chip, m["1 # 2"], m["N, 1 # 32"], m["D"]]
Offset = tcp.HbmTensor[tcp.i32, Chip, m["1"]]
Cache = tcp.HbmTensor[tcp.bf16, Chip, m["T, N, D"]]


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def _bf16(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """bf16 values (zeros among them, as real data holds), as float32."""
    x = rng.standard_normal(shape).astype(np.float32)
    x[rng.random(shape) < 0.1] = 0
    return x.astype(ml_dtypes.bfloat16).astype(np.float32)


@tcp.kernel
def scatter_minimal(data: Table, index: Annotated[Index, range(0, 612 * 256, 256)], out: Out) -> Out:
    """The reference's scatter_minimal: [K, D] into DM with K over slices, each key's D row to its row of C (a
    runner draws the index's byte offsets from the range its annotation gives)."""
    rows = data.to_dm(cluster=m["1 # 2"], slice=m["K / 2"], element=m["K % 2, D"])
    return rows.dma_scatter(index, out, key=m["K"])


@tcp.kernel
def write_row(head: Head, offset: Offset, cache: Cache) -> Cache:
    """One token's [N, D] into the cache row at ``offset`` bytes: the transformer's KV-cache write."""
    return head.dma_scatter(offset, cache, key=m["1"])


def _minimal(rows: np.ndarray[Any, Any], seed: int = 0) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    data = _bf16(np.random.default_rng(seed), (512, 128))
    out = Out(tcp.Tensor(np.zeros((612, 128), np.float32), "C D"))
    index = Index(tcp.Tensor((rows * 256).astype(np.int32), "K"))
    written = scatter_minimal(Table(tcp.Tensor(data, "K D")), index, out)
    assert written is out
    return data, out.to_tensor().to_numpy("C D")


def test_scatter_minimal_writes_rows_0_to_511_and_leaves_the_rest(evaluator: str) -> None:
    data, got = _minimal(np.arange(512))
    assert np.array_equal(got[:512], data)
    assert not got[512:].any()


def test_each_key_lands_on_the_row_its_offset_names(evaluator: str) -> None:
    rows = np.random.default_rng(1).permutation(612)[:512]
    data, got = _minimal(rows)
    assert np.array_equal(got[rows], data)
    assert not np.delete(got, rows, axis=0).any()


def test_a_row_named_twice_keeps_the_later_key(evaluator: str) -> None:
    rows = np.arange(512)
    rows[7] = rows[300] = 42  # keys 7, 42 and 300 all write row 42: key 300 is written last
    data, got = _minimal(rows)
    assert np.array_equal(got[42], data[300])
    assert np.array_equal(got[100], data[100])


def _head(seed: int) -> tuple[np.ndarray[Any, Any], Any]:
    values = _bf16(np.random.default_rng(seed), (8, 128))
    return values, Head(tcp.Tensor(values, "N D"))


def _offset(row: int) -> Any:
    return Offset(tcp.Tensor(np.array(row * 8 * 128 * 2, dtype=np.int32), ""))


def test_a_kv_cache_row_at_a_byte_offset(evaluator: str) -> None:
    before = _bf16(np.random.default_rng(5), (512, 8, 128))
    cache = Cache(tcp.Tensor(before, "T N D"))
    values, head = _head(6)
    write_row(head, _offset(188), cache)
    got = cache.to_tensor().to_numpy("T N D")
    assert np.array_equal(got[188], values)
    assert np.array_equal(np.delete(got, 188, axis=0), np.delete(before, 188, axis=0))


@pytest.mark.parametrize("offset, words", [
    (2048 * 3 + 2, "offset 6146"),
    (2048 * 512, "offset 1048576"),
    (-2048, "offset -2048"),
])
def test_an_offset_off_the_rows_is_refused_when_the_scatter_runs(evaluator: str, offset: int, words: str) -> None:
    cache = Cache(tcp.Tensor(np.zeros((512, 8, 128), np.float32), "T N D"))
    _, head = _head(0)
    index = Offset(tcp.Tensor(np.array(offset, dtype=np.int32), ""))
    write_row(head, index, cache)  # the call records the scatter; its values are computed when read
    with pytest.raises(tcp.LayoutError) as info:
        cache.to_tensor()
    assert (info.value.stage, info.value.rule) == ("dma_scatter", "Offset")
    assert words in str(info.value)


def test_the_oracle_follows_a_scatter() -> None:
    """`tcpdsl run`'s check: both evaluators' outputs against the oracle's own key-by-key scatter."""
    for evaluator in ("fused", "simulate"):
        result = tcp.try_kernel(scatter_minimal, seed=3, evaluator=evaluator)
        assert result.passed, result


def test_the_trace_draws_the_scatter_on_the_dma_track() -> None:
    cache = Cache(tcp.Tensor(np.zeros((512, 8, 128), np.float32), "T N D"))
    _, head = _head(0)
    out = write_row(head, _offset(3), cache)
    events = tcp.trace(out)["traceEvents"]
    assert any(e.get("name") == "dma_scatter" for e in events), events


def test_a_loop_over_rows_replays_one_recording() -> None:
    """The row is data: every call after the second replays, and each is the bits of the call as written."""
    heads = [_head(seed) for seed in range(6)]
    rows = [5, 9, 9, 400, 0, 511]

    def run() -> np.ndarray[Any, Any]:
        cache = Cache(tcp.Tensor(np.zeros((512, 8, 128), np.float32), "T N D"))
        for (_, head), row in zip(heads, rows):
            write_row(head, _offset(row), cache)
        return cache.to_tensor().to_numpy("T N D")

    expected = np.zeros((512, 8, 128), np.float32)
    for (values, _), row in zip(heads, rows):
        expected[row] = values
    assert np.array_equal(run(), expected)
    with tcp.replay() as log:
        found = run()
    assert (log.recorded["write_row"], log.replayed["write_row"]) == (1, 4), str(log)
    assert np.array_equal(found.astype(np.float32).view(np.uint32), expected.view(np.uint32))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 611), min_size=512, max_size=512))
def test_any_rows_match_a_plain_numpy_scatter(rows: list[int]) -> None:
    data, got = _minimal(np.array(rows), seed=len(set(rows)))
    expected = np.zeros((612, 128), np.float32)
    for k, row in enumerate(rows):
        expected[row] = data[k]
    assert np.array_equal(got, expected)


def test_index_and_out_are_hbm_tensors() -> None:
    cache = Cache(tcp.Tensor(np.zeros((512, 8, 128), np.float32), "T N D"))
    _, head = _head(0)
    for index, out, words in (
        (_offset(1), cache.view_mut(), "dma_scatter: out is an HBM tensor, got a HbmViewMut"),
        (np.int32(2048), cache, "dma_scatter: index is an HBM tensor, got a int32"),
    ):
        with pytest.raises(tcp.LayoutError) as info:
            head.dma_scatter(index, out, key=m["1"])  # type: ignore[arg-type]
        assert (info.value.stage, info.value.rule) == ("dma_scatter", "NotAnHbmTensor")
        assert str(info.value).splitlines()[0] == f"[dma_scatter] NotAnHbmTensor: {words}"


@tcp.kernel
def ranged_floats(data: Annotated[Table, range(4)], index: Index, out: Out) -> Out:
    return scatter_minimal(data, index, out)


@tcp.kernel
def ranged_past_i8(x: Annotated[tcp.HbmTensor[tcp.i8, Chip, m["K"]], range(0, 100000, 1000)]) -> Any:
    return x


def test_a_runner_draws_an_index_from_its_annotated_range() -> None:
    offsets = np.asarray(random_case(scatter_minimal, seed=4).logical["index"].values)
    assert offsets.shape == (512,) and offsets.min() >= 0 and offsets.max() < 612 * 256
    assert not (offsets % 256).any() and len(np.unique(offsets)) > 300  # drawn cell by cell
    assert describe(ranged_floats, strict=False).skip == (
        "parameter data of ranged_floats: Annotated[..., range(...)] gives the values of an integer tensor, one "
        "non-empty range, got [range(0, 4)] for a bf16 tensor"
    )
    assert describe(ranged_past_i8, strict=False).skip == (
        "parameter x of ranged_past_i8: its range range(0, 100000, 1000) holds values a i8 cannot, which lie in "
        "[-128, 128)"
    )


Row = tcp.HbmTensor[tcp.bf16, Chip, m["D"]]
OneOffset = tcp.HbmTensor[tcp.i32, Chip, m["1 # 8"]]


def test_sides_that_repeat_along_an_axis(evaluator: str) -> None:
    """A tensor filled by a broadcast, data broadcast over the key and one offset for every key: each is read as
    repeating its values along the axis its layout holds."""
    rows = np.arange(512)
    index = Index(tcp.Tensor((rows * 256).astype(np.int32), "K"))
    out = Row(tcp.Tensor(np.ones(128, np.float32), "D")).to_hbm(element=m["C, D"])
    data = _bf16(np.random.default_rng(7), (512, 128))
    Table(tcp.Tensor(data, "K D")).to_dm(cluster=m["1 # 2"], slice=m["K / 2"], element=m["K % 2, D"]).dma_scatter(
        index, out, key=m["K"])
    got = out.to_tensor().to_numpy("C D").astype(np.float32)
    assert np.array_equal(got[:512], data) and (got[512:] == 1).all()

    same = Row(tcp.Tensor(np.full(128, 2, np.float32), "D")).to_dm(cluster=m["1 # 2"], slice=m["K / 2"],
                                                                   element=m["K % 2, D"])
    out = Out(tcp.Tensor(np.zeros((612, 128), np.float32), "C D"))
    one = OneOffset(tcp.Tensor(np.array(256 * 7, np.int32), "")).to_hbm(element=m["K"])
    same.dma_scatter(one, out, key=m["K"])
    got = out.to_tensor().to_numpy("C D").astype(np.float32)
    assert (got[7] == 2).all() and not np.delete(got, 7, axis=0).any()


@tcp.kernel
def scatter_into_filled(data: Table, index: Index, out: Out) -> Table:
    data.to_dm(cluster=m["1 # 2"], slice=m["K / 2"], element=m["K % 2, D"]).dma_scatter(index, out, key=m["K"])
    return data


def test_a_replay_writes_back_a_tensor_that_was_filled_by_a_broadcast() -> None:
    """The tensor scattered into holds its values over C only once rows are written along C: a replayed call hands
    it back over those terms, the values of the call as written."""
    rng = np.random.default_rng(9)

    def call(step: int) -> np.ndarray[Any, Any]:
        out = Row(tcp.Tensor(_bf16(rng, (128,)), "D")).to_hbm(element=m["C, D"])
        rows = (np.arange(512) + step) % 612
        scatter_into_filled(Table(tcp.Tensor(_bf16(rng, (512, 128)), "K D")),
                            Index(tcp.Tensor((rows * 256).astype(np.int32), "K")), out)
        return out.to_tensor().to_numpy("C D").astype(np.float32)

    expected = [call(step) for step in range(3)]
    rng = np.random.default_rng(9)
    with tcp.replay() as log:
        found = [call(step) for step in range(3)]
    assert log.recorded["scatter_into_filled"] + log.replayed["scatter_into_filled"] >= 2, str(log)
    for want, got in zip(expected, found, strict=True):
        assert np.array_equal(want.view(np.uint32), got.view(np.uint32))


@tcp.kernel
def ranged_widely(x: Annotated[Index, range(0, 1 << 40, 256)]) -> Any:
    return x


def test_a_range_past_the_dtype_is_refused_without_walking_it() -> None:
    assert describe(ranged_widely, strict=False).skip == (
        "parameter x of ranged_widely: its range range(0, 1099511627776, 256) holds values a i32 cannot, which lie "
        "in [-2147483648, 2147483648)"
    )
