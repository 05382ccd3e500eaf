"""Work that cannot fit in memory is refused with its size, never a bare ``MemoryError`` (docs/runtime.md §3.11)."""

from __future__ import annotations

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate import fused, memory, simulate
from tcpdsl.evaluate.fused import FusedEvaluator
from tcpdsl.evaluate.simulate import SimulateEvaluator, macs, trace
from tcpdsl.numerics.chain import Chain
from tests.test_simulate import KERNELS, build, operands

A, B, C = tcp.axis("A", 8), tcp.axis("B", 16), tcp.axis("C", 32)
MATMUL = KERNELS["matmul"]
# One live position x 8 lanes x OutTime 32 x OutPacket 32, in float32: 32 KiB a copy.
CELLS = "the Multiplier's 8192 cells (1 live [Chip, Cluster, Slice] positions x Lane 8 x OutTime 32 x OutPacket 32)"


def _chain() -> Chain:
    return build(MATMUL, *operands(MATMUL, seed=1))


def _free(monkeypatch: pytest.MonkeyPatch, size: int | None) -> None:
    """The machine has ``size`` bytes free, and every estimate is checked, however small."""
    monkeypatch.setattr(memory, "available_bytes", lambda: size)
    monkeypatch.setattr(memory, "CHECKED_FROM", 0)


def test_small_work_does_not_read_the_free_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    def unread() -> int:
        raise AssertionError("the free memory was read")

    monkeypatch.setattr(memory, "available_bytes", unread)
    chain = _chain()
    np.testing.assert_allclose(SimulateEvaluator().logical(chain), FusedEvaluator().logical(chain), rtol=1e-5, atol=1e-5)


def _never_built(monkeypatch: pytest.MonkeyPatch) -> None:
    def built(*_: object) -> None:
        raise AssertionError("the simulator started building its buffers")

    monkeypatch.setattr(simulate, "_stages", built)


def test_the_simulator_refuses_cells_beyond_free_memory_before_building_them(monkeypatch: pytest.MonkeyPatch) -> None:
    chain = _chain()
    assert macs(chain) == 8192
    _free(monkeypatch, 60 * 2**10)
    _never_built(monkeypatch)
    with pytest.raises(LayoutError) as info:
        SimulateEvaluator().run(chain)
    assert (info.value.stage, info.value.rule) == ("contract_outer", "TooLargeToEvaluate")
    assert info.value.detail == (
        f"the simulate evaluator would build {CELLS} in float32, 2 times over: 64.0 KiB, more than the 60.0 KiB free"
    )
    assert info.value.hint == (
        "use the fused evaluator (the default), which never builds the Multiplier's cells, or tile the problem"
    )


def test_a_trace_keeps_twice_the_buffers_and_is_refused_sooner(monkeypatch: pytest.MonkeyPatch) -> None:
    chain = _chain()
    _free(monkeypatch, 100 * 2**10)
    assert SimulateEvaluator().run(chain).shape == (chain.result_mapping().size,)
    with pytest.raises(LayoutError, match=r"in float32, 4 times over: 128\.0 KiB, more than the 100\.0 KiB free"):
        trace(chain)


def test_a_memory_error_while_simulating_is_the_same_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    _free(monkeypatch, None)  # free memory unknown: nothing is refused in advance

    def no_memory(*_: object) -> None:
        raise MemoryError

    monkeypatch.setattr(simulate, "_stages", no_memory)
    with pytest.raises(LayoutError) as info:
        SimulateEvaluator().run(_chain())
    assert info.value.rule == "TooLargeToEvaluate"
    assert info.value.detail.endswith("2 times over: 64.0 KiB, more than this machine could allocate")
    assert info.value.__cause__ is None and info.value.__suppress_context__



@pytest.mark.parametrize("method", ["run", "logical"])
def test_a_memory_error_while_folding_is_the_fused_refusal(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _free(monkeypatch, None)  # free memory unknown: nothing is refused in advance

    def no_memory(*_: object) -> None:
        raise MemoryError

    monkeypatch.setattr(fused, "_fold", no_memory)
    with pytest.raises(LayoutError) as info:
        getattr(FusedEvaluator(), method)(_chain())
    assert (info.value.stage, info.value.rule) == ("contract_lane", "TooLargeToEvaluate")
    assert info.value.detail.startswith("the fused evaluator would build a result of ")
    assert info.value.detail.endswith("in f32: 512.0 KiB, more than this machine could allocate" if method == "run"
                                      else "over its logical terms in f32: 1.0 KiB, more than this machine could allocate")
    assert info.value.__cause__ is None and info.value.__suppress_context__

def test_the_fused_evaluator_refuses_a_result_beyond_free_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    chain = _chain()
    expected = FusedEvaluator().logical(chain)
    size = chain.result_mapping().size
    assert size == 512 * 32 * 8  # every position of [1, 1 # 2, 1 # 256], padding included
    _free(monkeypatch, 2 * size)
    with pytest.raises(LayoutError) as info:
        FusedEvaluator().run(chain)
    assert (info.value.stage, info.value.rule) == ("contract_lane", "TooLargeToEvaluate")
    assert info.value.detail == (
        f"the fused evaluator would build a result of {size} cells over {chain.result_mapping()} in f32: "
        "512.0 KiB, more than the 256.0 KiB free"
    )
    assert "tile the problem" in info.value.hint
    # The logical result is only the 32 x 8 cells its terms hold: it still fits.
    assert np.array_equal(FusedEvaluator().logical(chain), expected)
    _free(monkeypatch, 4 * expected.size - 1)
    with pytest.raises(LayoutError, match=rf"a result of {expected.size} cells over its logical terms in f32"):
        FusedEvaluator().logical(chain)


def test_a_plan_too_large_to_simulate_is_refused_and_runs_fused(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = tcp.search("th,lh->tl", {"T": 64, "H": 256, "L": 16}, top=1)[0]
    x = np.ones((64, 256), dtype=np.float32)
    w = np.ones((16, 256), dtype=np.float32)
    _free(monkeypatch, 2**20)
    with tcp.evaluator("simulate"), pytest.raises(tcp.TcpError, match=r"\[contract_outer\] TooLargeToEvaluate: .* MiB"):
        plan.run(x, w)
    assert np.array_equal(plan.run(x, w), np.full((64, 16), 256, dtype=np.float32))


def test_a_stream_moved_through_memory_is_refused_at_its_largest_step(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.arange(8 * 16 * 32, dtype=np.float32).reshape(8, 16, 32)
    hbm = tcp.HbmTensor[tcp.f32, m["1"], m["A, B, C"]](tcp.Tensor(x, "A B C"))
    moved = hbm.to_hbm(element=m["A, C, B"]).to_dm(cluster=m["1 # 2"], slice=m["C # 64"], element=m["A, B"])
    _free(monkeypatch, 2**10)
    with tcp.evaluator("fused"):
        assert np.array_equal(moved.to_tensor().to_numpy("A B C"), x)
    with tcp.evaluator("simulate"), pytest.raises(LayoutError) as info:
        moved.physical()
    assert (info.value.stage, info.value.rule) == ("to_dm", "TooLargeToEvaluate")
    assert info.value.detail == (
        "the simulate evaluator would build buffers of 16384 cells over C # 128, A, B with their poison masks: "
        "288.0 KiB, more than the 1.0 KiB free"
    )


def test_a_vector_pass_is_refused_at_its_largest_step(monkeypatch: pytest.MonkeyPatch) -> None:
    P = tcp.axis("P", 512)
    Stream = tcp.CollectTensor[tcp.f32, m["1"], m["1"], m["P / 2"], m["1"], m["P % 2 # 8"]]
    x = np.arange(512, dtype=np.float32) - 256
    stream = Stream(tcp.Device().main, tcp.Tensor(x, [P]))
    relu = stream.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO).vector_clip(
        tcp.ClipBinaryOpF32.MAX, 0.0).vector_final()
    _free(monkeypatch, 2**10)
    with tcp.evaluator("fused"):
        assert np.array_equal(relu.to_tensor().to_numpy("P"), np.maximum(x, 0))
    with tcp.evaluator("simulate"), pytest.raises(LayoutError) as info:
        relu.physical()
    # Every step keeps the layout: the first of them is named.
    assert (info.value.stage, info.value.rule) == ("vector_init", "TooLargeToEvaluate")
    assert info.value.detail.startswith("the simulate evaluator would build buffers of 2048 cells over ")
    assert info.value.detail.endswith(", four at a time: 64.0 KiB, more than the 1.0 KiB free")
