"""MX quantisation, dequantisation and matmul through tcp.mx, against the numpy work they build on.

Quantises a 1024 x 4096 float32 array to MXFP8 e4m3 in blocks of 32 along its rows, once with
whole blocks and once with a ragged last block (K = 4100), and multiplies a 256 x 4096 by a
4096 x 1024 MX pair. The numpy baselines: a plain ml_dtypes cast of the same array to e4m3 (no
scales) for quantize, the cast back to float32 for dequantize, and np.matmul in float64 (the
golden's accumulation precision) and in float32 for matmul.

Printed: medians of interleaved rounds and the median of per-round ratios against each baseline.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import ml_dtypes
import numpy as np
from timing import interleaved, paired_ratio

import tcpdsl as tcp

ROWS, K, RAGGED_K = 1024, 4096, 4100
M, N = 256, 1024
ROUNDS = 15


def _report(title: str, candidates: dict[str, Callable[[], object]], bases: tuple[str, ...]) -> None:
    times = interleaved(candidates, ROUNDS)
    print(title)
    print(f"  {'':34s} {'median':>10s}" + "".join(f"  / {b:>26s}" for b in bases))
    for name, seconds in times.items():
        ratios = "".join(f"  {paired_ratio(times, name, b):28.2f}x" for b in bases)
        print(f"  {name:34s} {statistics.median(seconds) * 1e3:7.2f} ms{ratios}")


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, K)).astype(np.float32)
    ragged = rng.standard_normal((ROWS, RAGGED_K)).astype(np.float32)
    whole = tcp.mx.quantize(x, axis=1)
    cast = x.astype(ml_dtypes.float8_e4m3fn)
    print(f"MXFP8 e4m3, blocks of 32; medians of {ROUNDS} interleaved rounds, ratios are medians of per-round ratios.")
    _report(
        f"quantize ({ROWS} x {K} and {ROWS} x {RAGGED_K}) and dequantize ({ROWS} x {K})",
        {
            "tcp.mx.quantize, whole blocks": lambda: tcp.mx.quantize(x, axis=1),
            "tcp.mx.quantize, ragged last block": lambda: tcp.mx.quantize(ragged, axis=1),
            "tcp.mx.dequantize": lambda: tcp.mx.dequantize(whole),
            "x.astype(e4m3)": lambda: x.astype(ml_dtypes.float8_e4m3fn),
            "e4m3.astype(float32)": lambda: cast.astype(np.float32),
        },
        ("x.astype(e4m3)", "e4m3.astype(float32)"),
    )
    a32 = rng.standard_normal((M, K)).astype(np.float32)
    b32 = rng.standard_normal((K, N)).astype(np.float32)
    a, b = tcp.mx.quantize(a32, axis=1), tcp.mx.quantize(b32, axis=0)
    a64, b64 = a32.astype(np.float64), b32.astype(np.float64)
    batched = tcp.mx.quantize(a32.reshape(4, M // 4, K), axis=2)
    _report(
        f"matmul {M} x {K} @ {K} x {N}",
        {
            "tcp.mx.matmul": lambda: tcp.mx.matmul(a, b),
            "tcp.mx.matmul, batch 4 x 64 rows": lambda: tcp.mx.matmul(batched, b),
            "np.matmul float64": lambda: a64 @ b64,
            "np.matmul float32": lambda: a32 @ b32,
        },
        ("np.matmul float64", "np.matmul float32"),
    )


if __name__ == "__main__":
    main()
