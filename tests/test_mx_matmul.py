"""MX matmul and FP4 packing: vectors T22–T23 (docs/block-formats.md §7), ragged K, batch axes, the float64 reference."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.mx import (
    FORMATS,
    MxArray,
    dequantize,
    e8m0_decode,
    matmul,
    nn_layout,
    pack_fp4x2,
    quantize,
    unpack_fp4x2,
    zz_layout,
)

FP4 = ml_dtypes.float4_e2m1fn


def _t22() -> tuple[MxArray, MxArray, npt.NDArray[np.float32]]:
    a = np.ones((2, 64), np.float32)
    a[1, :32] = 0.5
    a[1, 32:] = -2.0
    b = np.ones((64, 2), np.float32)
    b[:, 1] = 3.0
    scale_a = np.array([[127, 128], [129, 126]], np.uint8)
    scale_b = np.array([[127, 125], [128, 130]], np.uint8)
    bias = np.array([0.5, -1.0], np.float32)
    return MxArray(a.astype(FP4), scale_a, "e2m1", 1), MxArray(b.astype(FP4), scale_b, "e2m1", 0), bias


def test_t22_ascend_mx_matmul() -> None:
    a, b, bias = _t22()
    c = matmul(a, b, bias)
    assert c.dtype == np.float32
    assert c.tolist() == [[160.5, 1559.0], [0.5, -721.0]]
    assert matmul(a, b, bias[None, :]).tolist() == c.tolist()
    assert zz_layout(a.scales).ravel().tolist() == [127, 128, 129, 126] + [0] * 28
    assert nn_layout(b.scales).ravel().tolist() == [127, 128, 125, 130] + [0] * 28
    packed = pack_fp4x2(a.elements)
    assert packed.shape == (2, 32)
    assert packed[0].tolist() == [0x22] * 32
    assert packed[1].tolist() == [0x11] * 16 + [0xCC] * 16
    assert np.array_equal(unpack_fp4x2(packed).view(np.uint8), a.elements.view(np.uint8))


def test_t23_fp4_pair_packing() -> None:
    assert pack_fp4x2(np.array([1.0, -0.5], np.float32).astype(FP4)).tolist() == [0x92]


def _blockwise(a: MxArray, b: MxArray) -> npt.NDArray[np.float64]:
    """Σ_blocks X_A X_B Σ_i P_A P_B, written out block by block (docs/block-formats.md §1.4), exact per element."""
    m, k = a.shape
    n = b.shape[1]
    pa = dequantize(MxArray(a.elements, np.full_like(a.scales, 127), a.fmt, 1, a.block), np.float64)
    pb = dequantize(MxArray(b.elements, np.full_like(b.scales, 127), b.fmt, 0, b.block), np.float64)
    xa = e8m0_decode(a.scales)
    xb = e8m0_decode(b.scales)
    out = np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            terms = []
            for start in range(0, k, a.block):
                for kk in range(start, min(start + a.block, k)):
                    terms.append(xa[i, kk // a.block] * xb[kk // b.block, j] * pa[i, kk] * pb[kk, j])
            out[i, j] = math.fsum(terms)
    return out


@settings(max_examples=40, deadline=None)
@given(
    fa=st.sampled_from(sorted(FORMATS)),
    fb=st.sampled_from(sorted(FORMATS)),
    m=st.integers(1, 4),
    n=st.integers(1, 4),
    k=st.integers(1, 100),
    spread=st.integers(0, 12),
    seed=st.integers(0, 2**32 - 1),
)
def test_matmul_equals_float64_reference(fa: str, fb: str, m: int, n: int, k: int, spread: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    # per-row/column magnitudes spread over 2**±spread so that blocks get different scales
    x = (rng.standard_normal((m, k)) * np.exp2(rng.integers(-spread, spread + 1, size=(m, 1)))).astype(np.float32)
    steps = rng.integers(-spread, spread + 1, size=(-(-k // 32), 1, n)).repeat(32, 0).reshape(-1, n)[:k]
    y = (rng.standard_normal((k, n)) * np.exp2(steps)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    a, b = quantize(x, 1, fa), quantize(y, 0, fb)
    c = matmul(a, b, bias)
    exact = _blockwise(a, b) + bias.astype(np.float64)
    da, db = dequantize(a, np.float64), dequantize(b, np.float64)
    magnitude = np.abs(da) @ np.abs(db) + np.abs(bias.astype(np.float64))
    bound = 2.0**-23 * np.abs(exact) + (k + 1) * 2.0**-52 * magnitude + 2.0**-149
    assert np.all(np.abs(c.astype(np.float64) - exact) <= bound)
    assert np.array_equal(matmul(a, b), (da @ db).astype(np.float32))


def test_ragged_k_matmul() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 40)).astype(np.float32)
    y = rng.standard_normal((40, 5)).astype(np.float32)
    a, b = quantize(x, 1, "e4m3"), quantize(y, 0, "e2m1")
    assert a.scales.shape == (3, 2) and b.scales.shape == (2, 5)
    c = matmul(a, b)
    assert c.shape == (3, 5)
    padded = np.zeros((3, 64), np.float32)
    padded[:, :40] = x
    padded_y = np.zeros((64, 5), np.float32)
    padded_y[:40] = y
    assert np.array_equal(c, matmul(quantize(padded, 1, "e4m3"), quantize(padded_y, 0, "e2m1")))


def _slice(a: MxArray, index: tuple[int, ...]) -> MxArray:
    return MxArray(a.elements[index], a.scales[index], a.fmt, a.axis - len(index), a.block)


@pytest.mark.parametrize(
    ("a_batch", "b_batch", "out_batch"),
    [((2,), (2,), (2,)), ((2, 1), (3,), (2, 3)), ((), (4,), (4,)), ((3,), (), (3,)), ((1, 2), (2, 2), (2, 2))],
)
def test_batch_axes_broadcast_like_numpy(a_batch: tuple[int, ...], b_batch: tuple[int, ...], out_batch: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(a_batch) * 10 + len(b_batch))
    x = rng.standard_normal((*a_batch, 3, 70)).astype(np.float32)
    y = rng.standard_normal((*b_batch, 70, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    a, b = quantize(x, -1, "e4m3"), quantize(y, -2, "e5m2")
    c = matmul(a, b, bias)
    assert c.shape == (*out_batch, 3, 4) and c.dtype == np.float32
    for index in np.ndindex(*out_batch):
        ia = tuple(i if d > 1 else 0 for i, d in zip(index[len(out_batch) - len(a_batch):], a_batch))
        ib = tuple(i if d > 1 else 0 for i, d in zip(index[len(out_batch) - len(b_batch):], b_batch))
        assert np.array_equal(c[index], matmul(_slice(a, ia), _slice(b, ib), bias))


def test_batched_bias_rows() -> None:
    a = quantize(np.ones((2, 3, 64), np.float32), 2)
    b = quantize(np.ones((64, 4), np.float32), 0)
    per_batch = np.array([[[1.0, 2, 3, 4]], [[10, 20, 30, 40]]], np.float32)  # (2, 1, 4)
    c = matmul(a, b, per_batch)
    assert c[0, 2].tolist() == [65, 66, 67, 68] and c[1, 0].tolist() == [74, 84, 94, 104]
    assert np.array_equal(matmul(a, b, per_batch[0]), matmul(a, b, per_batch[0, 0]))
    with pytest.raises(LayoutError, match=r"BiasShape: bias must have shape \(4,\) or \(\.\.\., 1, 4\) with batch axes that broadcast to \(2,\), got \(3, 1, 4\)"):
        matmul(a, b, np.zeros((3, 1, 4)))
    with pytest.raises(LayoutError, match=r"BiasShape: .* got \(2, 3, 4\)"):
        matmul(a, b, np.zeros((2, 3, 4)))


def test_matmul_nan_block_propagates() -> None:
    x = np.ones((1, 64), np.float32)
    x[0, 40] = np.inf
    a = quantize(x, 1, "e4m3")
    b = quantize(np.ones((64, 2), np.float32), 0, "e4m3")
    assert np.all(np.isnan(matmul(a, b)))


def test_matmul_errors() -> None:
    a = quantize(np.ones((2, 64)), 1)
    b = quantize(np.ones((64, 3)), 0)
    with pytest.raises(LayoutError, match=r"\[mx.matmul\] ScaleAxis: b must be block-scaled along K \(axis 0\), got axis 1\n  hint: quantize b with axis=0"):
        matmul(a, quantize(np.ones((3, 64)), 1))
    with pytest.raises(LayoutError, match=r"ReductionMismatch: a is \(2, 64\) and b is \(32, 3\): K differs \(64 vs 32\)"):
        matmul(a, quantize(np.ones((32, 3)), 0))
    with pytest.raises(LayoutError, match=r"OperandRank: a must be \[\.\.\., M, K\] with at least 2 axes, got shape \(64,\)"):
        matmul(quantize(np.ones(64), 0), b)
    with pytest.raises(LayoutError, match=r"ScaleAxis: a must be block-scaled along K \(axis 2\), got axis 1\n  hint: quantize a with axis=2"):
        matmul(quantize(np.ones((2, 64, 64)), 1), b)
    with pytest.raises(LayoutError, match=r"BatchMismatch: the batch axes \(2,\) of a and \(3,\) of b do not broadcast"):
        matmul(quantize(np.ones((2, 2, 64)), 2), quantize(np.ones((3, 64, 3)), 1))
    with pytest.raises(DtypeError, match="OperandType: a must be an MxArray, got ndarray"):
        matmul(np.ones((2, 64)), b)  # type: ignore[arg-type]
    with pytest.raises(LayoutError, match=r"BiasShape: bias must have shape \(3,\) or \(1, 3\), got \(2,\)"):
        matmul(a, b, np.zeros(2))
    with pytest.raises(DtypeError, match="BiasDtype"):
        matmul(a, b, np.array(["x", "y", "z"]))


def test_dequantize_errors() -> None:
    a = quantize(np.ones(32), 0)
    with pytest.raises(DtypeError, match="OperandType: dequantize takes an MxArray, got str"):
        dequantize("x")  # type: ignore[arg-type]
    with pytest.raises(DtypeError, match="DequantizeDtype: dequantize produces float32 or float64, not int8"):
        dequantize(a, np.int8)


def test_packing_errors() -> None:
    with pytest.raises(DtypeError, match="Fp4Dtype: expected float4_e2m1fn elements, got float64"):
        pack_fp4x2(np.ones(2))
    with pytest.raises(LayoutError, match=r"Fp4OddLength: the last axis must have even length to pack pairs, got shape \(3,\)"):
        pack_fp4x2(np.ones(3, np.float32).astype(FP4))
    with pytest.raises(DtypeError, match="PackedDtype"):
        unpack_fp4x2(np.ones(2, np.int16))
