"""The reference transformer's lm_head at its real size, 19 tiles through one kernel, against numpy.

``examples/lm_head.py`` computes ``logits[w] = sum_h hidden[h] * weight[w, h]`` for H = 1024 and
Wp = 155648: the hidden state laid out once, then for each of the 19 tiles ``Wp / 8192 = i`` the
weight tile laid out (cast to bf16), the kernel run, and the result written back with
``out.assign(part)``, all through the public API. The baseline is numpy's quantize-then-matmul of
the whole weight: both operands rounded to bf16, then one f32 matrix-vector product.

Two cases: the weight handed over as float32 (both sides round all of it to bf16), and stored as
bf16 already, as a model holds it (the kernel's cast is then a copy, numpy's quantize a widening).

Printed: medians of interleaved rounds, and the median of the per-round ratios tiled / numpy.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
from timing import interleaved, paired_ratio

ROUNDS = 5
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "lm_head.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lm_head_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def quantized_matvec(hidden: npt.NDArray[Any], weight: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Round both operands to bf16, then multiply in f32."""
    w = weight.astype(ml_dtypes.bfloat16).astype(np.float32)
    x = hidden.astype(ml_dtypes.bfloat16).astype(np.float32)
    return w @ x


def main() -> None:
    example = load_example()
    rows, width = example.Wp.n, example.H.n
    rng = np.random.default_rng(0)
    hidden = rng.standard_normal(width).astype(np.float32)
    weight = (rng.standard_normal((rows, width)) / 32).astype(np.float32)
    weight16 = weight.astype(ml_dtypes.bfloat16)

    reference = quantized_matvec(hidden, weight)
    scale = np.abs(weight16.astype(np.float32)) @ np.abs(hidden.astype(ml_dtypes.bfloat16).astype(np.float32))
    for tiled in (example.logits(hidden, weight), example.logits(hidden, weight16)):
        assert np.all(np.abs(tiled - reference) <= 1e-5 * scale), "the tiled lm_head differs from numpy"

    print(f"lm_head, Wp = {rows} (19 tiles of 8192) x H = {width}, bf16 -> f32; "
          f"medians of {ROUNDS} interleaved rounds, ratios are medians of per-round ratios")
    times = interleaved(
        {
            "tiled, f32 weight": lambda: example.logits(hidden, weight),
            "numpy, f32 weight": lambda: quantized_matvec(hidden, weight),
            "tiled, bf16 weight": lambda: example.logits(hidden, weight16),
            "numpy, bf16 weight": lambda: quantized_matvec(hidden, weight16),
        },
        ROUNDS,
    )
    for kind in ("f32", "bf16"):
        tiled, numpy = f"tiled, {kind} weight", f"numpy, {kind} weight"
        print(f"  {tiled:20s} {statistics.median(times[tiled]) * 1e3:8.1f} ms"
              f"   {numpy:20s} {statistics.median(times[numpy]) * 1e3:8.1f} ms"
              f"   ratio {paired_ratio(times, tiled, numpy):5.2f}x")


if __name__ == "__main__":
    main()
