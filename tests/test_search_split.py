"""Split reductions: a contracted axis cut over the slices, the partial sums added by the vector engine."""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl.cli.main import main
from tcpdsl.cli.run import load
from tcpdsl.harness.kernel_spec import kernels_in
from tcpdsl.harness.run import run_kernel
from tcpdsl.planner.api import make_settings, plan_problem
from tcpdsl.planner.problem import make_problem, split_reductions


def _unsplit(einsum: str, sizes: dict[str, int]) -> tcp.Plan:
    """The best plan of the space without split reductions (each contracted axis whole in a slice)."""
    problem = make_problem(einsum, sizes, "bf16", "bf16")
    return plan_problem([problem], make_settings(problem, 1, None, None, 60))[0]


def _bf16(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(ml_dtypes.bfloat16).astype(np.float64)


def _runs_on_both_evaluators(plan: tcp.Plan, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.py"
    path.write_text(plan.source(name), encoding="utf-8")
    (spec,) = kernels_in(load(path, 0))
    for evaluator in ("fused", "simulate"):
        result = run_kernel(spec, path, seed=4, evaluator=evaluator)
        assert result.passed, result.error
        # tcpdsl run costs the module as the search did: the contraction, then the vector pass
        assert result.whole is not None and result.whole.total_cycles == plan.cycles
        assert dict(result.whole.breakdown) == plan.breakdown


def test_a_gemv_with_a_long_k_and_few_outputs_splits_k(tmp_path: Path) -> None:
    # Eight rows of 32768: kept whole, K fills one slice's TRF (64 KiB) on each of 8 slices, 8192
    # cycles to load and 2048 Outer packets to stream. Split over 64 slices of each cluster (K / 512),
    # each slice holds 1 KiB: the weights' DMA is the HBM floor (512 KiB at 1024 B a cycle, plus
    # 500), the TRF load 128 cycles, the contraction 38 (32 packets, the adder tree, one drain), and
    # the inter-slice reducer adds the 64 partial sums of each row in its ring: 1 packet + 64 cycles.
    sizes = {"K": 32768, "N": 8}
    plans = tcp.search("k,nk->n", sizes, top=1)
    best = plans[0]
    assert plans.exhausted and best.problem.split == {"K": 64}
    assert (best.layouts.cluster, best.layouts.slice, best.layouts.out_slice) == ("N / 4", "N % 4, K / 512", "N % 4, 1 # 64")
    assert best.breakdown == {
        "weight DMA": 8 * 32768 * 2 // 1024 + 500, "TRF load": 512 * 2 // 8, "contract_outer": 32,
        "contract_packet": 21, "contract_time": 16, "contract_lane": 2, "vector_final": 1 + 64,
    }
    assert best.cycles == 1243
    alone = _unsplit("k,nk->n", sizes)
    assert (alone.layouts.slice, alone.cycles) == ("N % 4 # 64", 11770)
    source = best.source()
    assert 'OutSlice = m["N % 4, 1 # 64"]' in source
    assert "Out = tcp.VectorFinalTensor[tcp.f32, Chip, Cluster, OutSlice, " in source
    assert ".vector_inter_slice_reduce(tcp.InterSliceReduceOpF32.ADD, out_slice=OutSlice, " in source
    assert "each of 64 slices sums 512 cells of K" in source
    rng = np.random.default_rng(11)
    x, w = _bf16(rng, 32768), _bf16(rng, 8, 32768)
    expected = w @ x
    for evaluator in ("fused", "simulate"):
        with tcp.evaluator(evaluator):
            got = best.run(x, w)
        assert np.all(np.abs(got - expected) <= 1e-5 * (np.abs(w) @ np.abs(x)) + 1e-30)
    _runs_on_both_evaluators(best, tmp_path, "gemv_split")


def test_the_attention_weighted_sum_written_plainly_splits_its_chunk(tmp_path: Path) -> None:
    # ngt,tnd->ngd sums the 512 keys of a chunk. Kept whole in a slice, the best plan streams all of
    # T (1850 cycles); split over 8 slices (T / 64), each sums 64 keys in 8 Outer packets, and the
    # vector engine adds the 8 partial sums of each head: 1807, the reference's own layout idea
    # (the hand-written kernel splits T over 32 slices, 2074 cycles under the same model).
    sizes = {"N": 8, "G": 2, "T": 512, "D": 128}
    best = tcp.search("ngt,tnd->ngd", sizes, top=1)[0]
    assert best.problem.split == {"T": 8}
    assert (best.layouts.slice, best.layouts.out_slice) == ("N % 4, D / 16, T / 64", "N % 4, D / 16, 1 # 8")
    assert best.cycles == 1807 < _unsplit("ngt,tnd->ngd", sizes).cycles == 1850
    assert best.breakdown["vector_final"] == 4 + 8
    rng = np.random.default_rng(12)
    x, w = _bf16(rng, 8, 2, 512), _bf16(rng, 512, 8, 128)
    expected = np.einsum("ngt,tnd->ngd", x, w)
    scale = np.einsum("ngt,tnd->ngd", np.abs(x), np.abs(w))
    assert np.all(np.abs(best.run(x, w) - expected) <= 1e-5 * scale + 1e-30)
    _runs_on_both_evaluators(best, tmp_path, "weighted_sum_split")


@pytest.mark.parametrize(
    ("einsum", "sizes", "slice_", "out_slice"),
    [
        ("k,nk->n", {"K": 4096, "N": 3}, "N # 4, K / 64", "N # 4, 1 # 64"),  # a padded kept digit above the split
        ("k,k->", {"K": 1024}, "1 # 2, K / 32", "1 # 2, 1 # 32"),  # padding alone above it
    ],
)
def test_padding_sits_above_the_split_digit(einsum: str, sizes: dict[str, int], slice_: str, out_slice: str) -> None:
    plans = tcp.search(einsum, sizes, top=4)
    plan = next(p for p in plans if p.layouts.slice == slice_)
    assert plan.layouts.out_slice == out_slice
    rng = np.random.default_rng(14)
    x, w = (_bf16(rng, *(sizes[a.upper()] for a in part)) for part in einsum.split("->")[0].split(","))
    expected = np.einsum(einsum, x, w)
    scale = np.einsum(einsum, np.abs(x), np.abs(w))
    for evaluator in ("fused", "simulate"):
        with tcp.evaluator(evaluator):
            assert np.all(np.abs(plan.run(x, w) - expected) <= 1e-5 * scale + 1e-30)


def test_the_command_line_shows_a_split_axis_whole(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "k,nk->n", "K=32768", "N=8", "--top", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sizes"] == {"K": 32768, "N": 8}
    assert data["plans"][0]["layouts"]["out_slice"] == "N % 4, 1 # 64"
    assert main(["plan", "k,nk->n", "K=32768", "N=8", "--top", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'plans for "k,nk->n" (K=32768, N=8), bf16 x bf16 -> f32'
    assert "N % 4, K / 512" in out[2]


def test_integer_split_reductions_add_in_i32() -> None:
    sizes = {"K": 4096, "N": 8}
    best = tcp.search("k,nk->n", sizes, stream=tcp.i8, weights=tcp.i8, top=1)[0]
    assert best.problem.split and "tcp.InterSliceReduceOpI32.ADD" in best.source()
    rng = np.random.default_rng(13)
    x, w = rng.integers(-128, 128, 4096), rng.integers(-128, 128, (8, 4096))
    for evaluator in ("fused", "simulate"):
        with tcp.evaluator(evaluator):
            assert np.array_equal(best.run(x, w), w @ x)


@pytest.mark.parametrize(
    ("size", "counts"),
    [
        (32768, [2, 4, 8, 16, 32, 64, 128, 256]),  # every power of two up to a cluster's 256 slices
        (1024, [2, 4, 8, 16, 32, 64]),  # each share at least one 16-cell flit of bf16
        (48, []),  # three flits: no two slices share them in whole flits
        (999, []),  # no whole flit at all: the zero-padded forms are searched instead
    ],
)
def test_split_shares_are_whole_flits_over_powers_of_two(size: int, counts: list[int]) -> None:
    problem = make_problem("k,nk->n", {"K": size, "N": 8}, "bf16", "bf16")
    split = split_reductions(problem, 256)
    assert [p.split["K"] for p in split] == counts
    assert all(p.sizes["K"] * p.split["K"] == size == p.declared["K"] for p in split)
