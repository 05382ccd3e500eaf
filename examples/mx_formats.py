"""Block-scaled formats end to end, through the public API only.

Quantizes an activation and a weight matrix to MXFP8 (and the weight to MXFP4) along a K of 100,
so the last block of 32 is ragged; multiplies them, also with a leading batch axis; shows the two
MXINT8 clamp conventions; lays the scales out in the Ascend Zz / Nn orders (by index formula and
through the equivalent mapping expression); densifies a 2:4-sparse int8 matrix; and reports every
error against float32. docs/block-formats.md explains each step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

import tcpdsl as tcp

SEED = 2026
M, K, N, BATCH = 48, 100, 40, 3


def _relative_error(approx: npt.NDArray[Any], exact: npt.NDArray[Any]) -> float:
    diff = np.linalg.norm(approx.astype(np.float64) - exact.astype(np.float64))
    return float(diff / np.linalg.norm(exact.astype(np.float64)))


def _quantization_report(weight: npt.NDArray[np.float32], activation: npt.NDArray[np.float32]) -> tuple[tcp.mx.MxArray, tcp.mx.MxArray]:
    reference = activation @ weight
    x = tcp.mx.quantize(activation, axis=1, fmt="e4m3")
    print(f"float32 reference: activation {activation.shape} @ weight {weight.shape}; activation as MXFP8 e4m3")
    print(f"  K = {K} in blocks of {x.block}: {x.scales.shape[1]} scale codes per row, the last block holds {K % x.block}")
    print(f"  activation rel. error {_relative_error(tcp.mx.dequantize(x), activation):.2e}")
    for label, fmt in (("MXFP8 e4m3", "e4m3"), ("MXFP8 e5m2", "e5m2"), ("MXFP4 e2m1", "e2m1")):
        w = tcp.mx.quantize(weight, axis=0, fmt=fmt)
        w_err = _relative_error(tcp.mx.dequantize(w), weight)
        c_err = _relative_error(tcp.mx.matmul(x, w), reference)
        print(f"  weight {label}, scales {w.scales.shape}: weight rel. error {w_err:.2e}, matmul rel. error {c_err:.2e}")
    return x, tcp.mx.quantize(weight, axis=0, fmt="e4m3")


def _batch_report(rng: np.random.Generator, w: tcp.mx.MxArray, weight: npt.NDArray[np.float32]) -> None:
    activations = rng.standard_normal((BATCH, M, K)).astype(np.float32)
    bias = rng.standard_normal(N).astype(np.float32)
    c = tcp.mx.matmul(tcp.mx.quantize(activations, axis=-1), w, bias)
    print(f"batched: activations {activations.shape} @ weight {weight.shape} + bias -> {c.shape}")
    print(f"  rel. error against float32 {_relative_error(c, activations @ weight + bias):.2e}")


def _int8_clamp_report() -> None:
    block = np.zeros(32, np.float32)
    block[:2] = [-1.99609375, 1.5]  # the scale stays 2**0 and -1.99609375 * 64 rounds to -128
    for clamp in ("symmetric", "full"):
        q = tcp.mx.quantize(block, axis=0, fmt="int8", int8_clamp=clamp)
        print(f"MXINT8 clamp {clamp!r}: -1.99609375 -> code {int(q.elements[0])}, value {float(tcp.mx.dequantize(q)[0])}")


def _layout_report(x: tcp.mx.MxArray, w: tcp.mx.MxArray) -> None:
    zz = tcp.mx.zz_layout(x.scales)
    nn = tcp.mx.nn_layout(w.scales)
    print(f"scaleA {x.scales.shape} -> Zz {zz.shape} ({zz.nbytes} bytes); scaleB {w.scales.shape} -> Nn {nn.shape} ({nn.nbytes} bytes)")
    layouts = (("Zz", tcp.mx.zz_mapping(x.scales.shape), x.scales, zz), ("Nn", tcp.mx.nn_mapping(w.scales.shape), w.scales, nn))
    for name, lm, scales, buf in layouts:
        same = np.array_equal(lm.apply(scales), buf.ravel())
        print(f"  {name} as a mapping: {lm.text}  (walk equals formula: {same})")


def _sparse_report(rng: np.random.Generator) -> None:
    k = 128
    b = rng.integers(-128, 128, size=(k, N)).astype(np.int8)
    groups = b.reshape(k // 4, 4, N)
    for g in range(k // 4):
        for col in range(N):
            groups[g, rng.choice(4, size=2, replace=False), col] = 0
    a = rng.integers(-128, 128, size=(M, k)).astype(np.int8)
    dense, index = tcp.mx.densify_2of4(b)
    sparse = tcp.mx.sparse_matmul(a, dense, index)
    exact = a.astype(np.int32) @ b.astype(np.int32)
    zn = tcp.mx.zn_layout(index)
    print(f"2:4 sparse B {b.shape} -> dense {dense.shape} + index bytes {index.shape} (Zn {zn.nbytes} bytes)")
    print(f"  sparse matmul max |error| against dense int32: {int(np.max(np.abs(sparse - exact)))}")


def main() -> None:
    rng = np.random.default_rng(SEED)
    weight = (rng.standard_normal((K, N)) * np.exp2(rng.integers(-6, 7, size=(1, N)))).astype(np.float32)
    activation = rng.standard_normal((M, K)).astype(np.float32)
    x, w = _quantization_report(weight, activation)
    _batch_report(rng, w, weight)
    _int8_clamp_report()
    _layout_report(x, w)
    _sparse_report(rng)


if __name__ == "__main__":
    main()
