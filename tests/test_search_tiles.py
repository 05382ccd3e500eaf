"""Weights beyond the TRF: the plan is one kernel and its tile loop, costed per tile and run whole."""

from __future__ import annotations

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl.planner.tiling import Tiling


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


def test_a_tiled_gemm_runs_tile_by_tile() -> None:
    # the GEMM's shape on one PE (4 MiB of TRF): 8 MiB of weights in two tiles of N = 256
    plans = tcp.search("mk,nk->mn", {"M": 16, "N": 512, "K": 8192}, topology=tcp.Topology(pes=1), top=1)
    best = plans[0]
    assert best.tiling == Tiling("N", 2, 256)
    x, w = _ints((16, 8192), 5), _ints((512, 8192), 6)
    assert np.array_equal(best.run(x, w), x @ w.T)


def test_weights_no_tiling_can_hold_are_refused() -> None:
    # 151936 = 2^7 x 1187 rows spread over at most 128 slices, 2.3 MiB each; the search tiles only
    # weights that no spread of the device could hold, so this reports the overflow (pad to 155648)
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search("h,wh->w", {"H": 1024, "W": 151936})
    assert (info.value.stage, info.value.rule) == ("to_trf", "ExceedsCapacity")
