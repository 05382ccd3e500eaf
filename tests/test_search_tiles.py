"""Weights beyond the TRF: the plan is one kernel and its tile loop, costed per tile and run whole."""

from __future__ import annotations

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl.planner.problem import Problem, make_problem
from tcpdsl.planner.tiling import Tiling, tile_problems


def _ints(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-3, 4, shape).astype(np.float64)


def test_weights_beyond_a_small_device_are_tiled_and_run() -> None:
    # 8 MiB of weights; one PE holds 64 x 64 KiB = 4 MiB, so two tiles of W = 2048
    plans = tcp.search("h,wh->w", {"H": 1024, "W": 4096}, topology=tcp.Topology(pes=1), top=2)
    best = plans[0]
    assert best.tiling == Tiling("W", 2, 2048) and best.tiles == 2
    assert best.cycles == 2 * best.whole.total_cycles
    assert best.breakdown["weight DMA"] == 2 * (2048 * 1024 * 2 // 256 + 500)  # one PE's engine, per tile
    source = best.source()
    assert "def plan_1_tiles(device: tcp.Device, x: tcp.Tensor, w: tcp.Tensor) -> tcp.Tensor:" in source
    assert '        part = plan_1(Stream(device.main, x), Weights(device.sub, w.tile(m["W / 2048"], i)))' in source
    assert 'W = tcp.axis("W", 4096)' in source
    x, w = _ints((1024,), 1), _ints((4096, 1024), 2)
    assert np.array_equal(best.run(x, w), w @ x)
    assert best.summary()["tiles"] == 2


def test_the_full_lm_head_is_tiled_as_the_reference_tiles_it() -> None:
    # The reference pads the vocabulary to 155648 = 19 x 8192 and loops over 19 tiles. 16 tiles of
    # 9728 would fit too, but 19 of 8192 keep all 8 lanes busy: 19 x 21051 against 16 x 25452.
    plans = tcp.search("h,wh->w", {"H": 1024, "W": 155648}, top=1)
    best = plans[0]
    assert best.tiling == Tiling("W", 19, 8192)
    # each tile is the hand-written lm_head tile's whole kernel (docs/cost-model.md)
    assert best.whole.total_cycles == 21051 and best.cycles == 19 * 21051
    assert '    for i in range(19):' in best.source()


def test_gemm_8192_cubed_is_four_tiles_of_its_weights() -> None:
    # 128 MiB of weights: a slice holds at most 4 rows of K = 8192 (16 KiB each), so 512 slices hold
    # 2048 rows of N. Every slice streams all of x (8192 x 512 flits) against its 4 rows.
    plans = tcp.search("mk,nk->mn", {"M": 8192, "N": 8192, "K": 8192}, top=1)
    best = plans[0]
    assert best.tiling == Tiling("N", 4, 2048) and plans.exhausted
    assert best.breakdown["TRF load"] == 4 * (4 * 8192 * 2 // 8)
    assert best.cost.total_cycles == 8192 * 512 + 5 + 1
    assert best.cycles == 4 * best.whole.total_cycles


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
def test_a_tiled_gemm_runs_tile_by_tile(evaluator: str) -> None:
    # the GEMM's shape on one PE (4 MiB of TRF): 8 MiB of weights in two tiles of N = 256
    plans = tcp.search("mk,nk->mn", {"M": 16, "N": 512, "K": 8192}, topology=tcp.Topology(pes=1), top=1)
    best = plans[0]
    assert best.tiling == Tiling("N", 2, 256)
    x, w = _ints((16, 8192), 5), _ints((512, 8192), 6)
    with tcp.evaluator(evaluator):
        assert np.array_equal(best.run(x, w), x @ w.T)


def test_a_gemm_whose_operands_both_exceed_the_trf_runs() -> None:
    # 5 MiB of stream and 5 MiB of weights against 4 MiB of TRF: N = 160 = 2^5 x 5 is padded to 3
    # tiles of 64 (a slice holds two rows of K = 16384); the last tile holds 32 rows. The simulator
    # takes some 40 s on this shape, so only the fused evaluator runs it here.
    plans = tcp.search("mk,nk->mn", {"M": 160, "N": 160, "K": 16384}, topology=tcp.Topology(pes=1), top=1)
    best = plans[0]
    assert best.tiling == Tiling("N", 3, 64, 160)
    x, w = _ints((160, 16384), 7), _ints((160, 16384), 8)
    assert np.array_equal(best.run(x, w), x @ w.T)


def test_the_real_vocabulary_is_padded_to_whole_tiles() -> None:
    # 151936 = 2^7 x 1187 rows spread over at most 128 slices, so no tile that divides it fills the
    # device; the search pads it with zeros to 19 tiles of 8192 (155648, the reference's own
    # padding), whose kernel is the hand-written tile's: 19 x 21051 cycles, the last tile partial.
    plans = tcp.search("h,wh->w", {"H": 1024, "W": 151936}, top=1)
    best = plans[0]
    assert best.tiling == Tiling("W", 19, 8192, 151936) and best.tiling.digit == "W #{0} 155648 / 8192"
    assert best.whole.total_cycles == 21051 and best.cycles == 19 * 21051
    assert best.layouts.lane == "W #{0} 155648 % 8"
    source = best.source()
    assert 'W = tcp.axis("W", 151936)' in source
    assert '(H=1024, W=8192 of 151936 padded to 155648)' in source
    assert '        part = plan_1(Stream(device.main, x), Weights(device.sub, w.tile(m["W #{0} 155648 / 8192"], i)))' in source
    assert '    out = tcp.Tensor(np.zeros((151936,), np.float32), "W")' in source


def test_padded_tilings_are_smooth_tiles_up_to_twice_the_fewest() -> None:
    # 4748 = 2^2 x 1187 on one PE (64 slices, 8 lanes: spread 512): one tile holds 2048 rows
    def overflows(tile: Problem) -> bool:
        return tile.sizes["W"] > 2048

    problem = make_problem("h,wh->w", {"H": 1024, "W": 4748}, "bf16", "bf16")
    found = [t for _, t in tile_problems(problem, overflows, 512)]
    assert found == [Tiling("W", 3, 2048, 4748), Tiling("W", 4, 1187), Tiling("W", 4, 1536, 4748), Tiling("W", 5, 1024, 4748)]
    tile, tiling = tile_problems(problem, overflows, 512)[3]
    assert (tile.sizes["W"], tile.declared["W"], tile.zero_padded["W"]) == (1024, 5120, 4748)
    # an axis with enough factors of two is only cut exactly
    smooth = make_problem("h,wh->w", {"H": 1024, "W": 4096}, "bf16", "bf16")
    assert [t for _, t in tile_problems(smooth, overflows, 512)] == [Tiling("W", 2, 2048), Tiling("W", 4, 1024)]


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
def test_a_padded_vocabulary_runs_with_a_partial_last_tile(evaluator: str) -> None:
    # 4748 rows on one PE: 5 tiles of 1024, the last holding 652 live rows and 372 zeros
    plans = tcp.search("h,wh->w", {"H": 1024, "W": 4748}, topology=tcp.Topology(pes=1), top=1)
    best = plans[0]
    assert best.tiling == Tiling("W", 5, 1024, 4748)
    assert best.cycles == 5 * best.whole.total_cycles
    x, w = _ints((1024,), 3), _ints((4748, 1024), 4)
    with tcp.evaluator(evaluator):
        y = best.run(x, w)
    assert y.shape == (4748,) and np.array_equal(y, w @ x)
