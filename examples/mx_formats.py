"""Block-scaled formats end to end.

Quantizes an activation and a weight matrix to MXFP8 (and the weight to MXFP4), multiplies them,
lays the scales out in the Ascend Zz / Nn orders (by index formula and through the equivalent
mapping expression), densifies a 2:4-sparse int8 matrix, and reports every error against float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl import mx

SEED = 2026
M, K, N = 48, 128, 40


def _relative_error(approx: npt.NDArray[Any], exact: npt.NDArray[Any]) -> float:
    diff = np.linalg.norm(approx.astype(np.float64) - exact.astype(np.float64))
    return float(diff / np.linalg.norm(exact.astype(np.float64)))


def _quantization_report(weight: npt.NDArray[np.float32], activation: npt.NDArray[np.float32]) -> tuple[mx.MxArray, mx.MxArray]:
    reference = activation @ weight
    x = mx.quantize(activation, axis=1, fmt="e4m3")
    print(f"float32 reference: activation {activation.shape} @ weight {weight.shape}; activation as MXFP8 e4m3")
    print(f"  activation rel. error {_relative_error(mx.dequantize(x), activation):.2e}")
    for label, fmt in (("MXFP8 e4m3", "e4m3"), ("MXFP8 e5m2", "e5m2"), ("MXFP4 e2m1", "e2m1")):
        w = mx.quantize(weight, axis=0, fmt=fmt)
        w_err = _relative_error(mx.dequantize(w), weight)
        c_err = _relative_error(mx.matmul(x, w), reference)
        print(f"  weight {label}, scales {w.scales.shape}: weight rel. error {w_err:.2e}, matmul rel. error {c_err:.2e}")
    return x, mx.quantize(weight, axis=0, fmt="e4m3")


def _layout_report(x: mx.MxArray, w: mx.MxArray) -> None:
    zz = mx.zz_layout(x.scales)
    nn = mx.nn_layout(w.scales)
    print(f"scaleA {x.scales.shape} -> Zz {zz.shape} ({zz.nbytes} bytes); scaleB {w.scales.shape} -> Nn {nn.shape} ({nn.nbytes} bytes)")
    for name, lm, scales, buf in (("Zz", mx.zz_mapping(x.scales.shape), x.scales, zz), ("Nn", mx.nn_mapping(w.scales.shape), w.scales, nn)):
        same = np.array_equal(lm.apply(scales), buf.ravel())
        print(f"  {name} as a mapping: {lm.text}  (walk equals formula: {same})")


def _sparse_report(rng: np.random.Generator) -> None:
    b = rng.integers(-128, 128, size=(K, N)).astype(np.int8)
    groups = b.reshape(K // 4, 4, N)
    for g in range(K // 4):
        for col in range(N):
            groups[g, rng.choice(4, size=2, replace=False), col] = 0
    a = rng.integers(-128, 128, size=(M, K)).astype(np.int8)
    dense, index = mx.densify_2of4(b)
    sparse = mx.sparse_matmul(a, dense, index)
    exact = a.astype(np.int32) @ b.astype(np.int32)
    zn = mx.zn_layout(index)
    print(f"2:4 sparse B {b.shape} -> dense {dense.shape} + index bytes {index.shape} (Zn {zn.nbytes} bytes)")
    print(f"  sparse matmul max |error| against dense int32: {int(np.max(np.abs(sparse - exact)))}")
    a32 = a.astype(np.float32)
    b32 = b.astype(np.float32)
    print(f"  against float32 matmul: {float(np.max(np.abs(sparse.astype(np.float32) - a32 @ b32))):.1f}")


def main() -> None:
    rng = np.random.default_rng(SEED)
    weight = (rng.standard_normal((K, N)) * np.exp2(rng.integers(-6, 7, size=(1, N)))).astype(np.float32)
    activation = rng.standard_normal((M, K)).astype(np.float32)
    x, w = _quantization_report(weight, activation)
    _layout_report(x, w)
    _sparse_report(rng)


if __name__ == "__main__":
    main()
