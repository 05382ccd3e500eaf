"""Tiled plans at full size, run once through ``Plan.run`` on the fused evaluator against numpy.

Three contractions whose weights exceed the TRF of the default device (one chip, 8 PEs):

* the lm_head over the real vocabulary, ``h,wh->w`` with H = 1024, W = 151936, which the search
  pads with zeros to 19 tiles of 8192 (docs/search.md §4, "Weights beyond the TRF: tiles");
* the same over the padded vocabulary W = 155648, as the reference's own example holds it;
* GEMM 8192^3, ``mk,nk->mn``, 4 tiles of N = 2048 (about 1.1 TFLOP of multiply-adds).

The inputs are float32 holding bf16 values, so the kernel's bf16 operands are exact and both sides
sum the same products in f32; the baseline is numpy's f32 product of the same arrays. Printed per
case: the search's time, the plan's cycles (all tiles), the tile count and size, the wall time of
``Plan.run`` and of numpy, and the largest error, absolute and relative to the largest sum of
absolute products (the f32 rounding scale). ``python benchmarks/bench_tiles_big.py lm_head`` runs
only the cases whose name contains the word.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

import tcpdsl as tcp

CASES: dict[str, tuple[str, dict[str, int]]] = {
    "lm_head W=151936": ("h,wh->w", {"H": 1024, "W": 151936}),
    "lm_head W=155648": ("h,wh->w", {"H": 1024, "W": 155648}),
    "gemm 8192^3": ("mk,nk->mn", {"M": 8192, "N": 8192, "K": 8192}),
}


def bf16_values(shape: tuple[int, ...], seed: int) -> npt.NDArray[np.float32]:
    """Normal floats rounded to bf16, held as float32."""
    values = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    return values.astype(ml_dtypes.bfloat16).astype(np.float32)


def operands(einsum: str, sizes: dict[str, int]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    first, second = einsum.split("->")[0].split(",")
    return (bf16_values(tuple(sizes[c.upper()] for c in first), 0),
            bf16_values(tuple(sizes[c.upper()] for c in second), 1))


def baseline(einsum: str, x: npt.NDArray[Any], w: npt.NDArray[Any]) -> npt.NDArray[Any]:
    product: npt.NDArray[Any] = w @ x if einsum == "h,wh->w" else x @ w.T
    return product


def run_case(name: str, einsum: str, sizes: dict[str, int]) -> None:
    start = time.perf_counter()
    plan = tcp.search(einsum, sizes, top=1)[0]
    searched = time.perf_counter() - start
    tiling = plan.tiling
    assert tiling is not None, "the weights exceed the TRF: the plan is tiled"
    x, w = operands(einsum, sizes)
    start = time.perf_counter()
    expected = baseline(einsum, x, w)
    numpy_seconds = time.perf_counter() - start
    start = time.perf_counter()
    with tcp.evaluator("fused"):
        got = plan.run(x, w)
    run_seconds = time.perf_counter() - start
    scale = float(np.max(baseline(einsum, np.abs(x), np.abs(w))))
    error = float(np.max(np.abs(got.astype(np.float64) - expected)))
    padded = f", padded from {tiling.live}" if tiling.live else ""
    print(f"{name}: {einsum} {sizes}")
    print(f"  plan: {plan.cycles} cycles ({tiling.count} tiles {tiling.digit} of {tiling.size}{padded}, "
          f"{plan.whole.total_cycles} per tile), searched in {searched:.2f} s")
    print(f"  Plan.run (fused) {run_seconds:8.2f} s   numpy {numpy_seconds:8.2f} s   ratio {run_seconds / numpy_seconds:6.1f}x")
    print(f"  max |error| {error:.3g} ({error / scale:.2g} of the largest sum of |products|, {scale:.3g})", flush=True)


def main(words: list[str]) -> None:
    for name, (einsum, sizes) in CASES.items():
        if not words or any(word in name for word in words):
            run_case(name, einsum, sizes)


if __name__ == "__main__":
    main(sys.argv[1:])
