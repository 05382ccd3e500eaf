"""MX quantization: the vectors T13–T21 (docs/block-formats.md §7), ragged blocks, the MXINT8 clamp, errors, error bounds."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.mx import FORMATS, MxArray, dequantize, e8m0_decode, e8m0_encode, element_format, quantize


def _block(head: list[float]) -> npt.NDArray[np.float32]:
    return np.array(head + [0.0] * (32 - len(head)), dtype=np.float32)


def _codes(a: MxArray) -> list[int]:
    raw = a.elements if a.fmt == "int8" else a.elements.view(np.uint8)
    return [int(v) for v in raw[:8]]


VECTORS = [
    # id, fmt, first 8 inputs, scale code, element codes, dequantized
    ("T13", "e2m1", [100, 7, 12, 40, -20, 0.3, 96, -10], 131, [7, 1, 2, 4, 10, 0, 7, 9], [96, 8, 16, 32, -16, 0, 96, -8]),
    ("T14", "e2m1", [6, -3, 1, 0.5, 0.25, 0.75, 1.25, 5], 127, [7, 13, 2, 1, 0, 2, 2, 6], [6, -3, 1, 0.5, 0, 1, 1, 4]),
    (
        "T15",
        "e4m3",
        [1000, 1, 3, 2.0**-7, -500, 920, 0.001, 17],
        128,
        [126, 48, 60, 2, 248, 126, 0, 80],
        [896, 1, 3, 2.0**-7, -512, 896, 0, 16],
    ),
    (
        "T16",
        "e5m2",
        [1, 0.5, 3, 1e-6, -0.75, 0.1, 2.0**-16, 2.0**-17],
        113,
        [116, 112, 122, 36, 242, 102, 52, 48],
        [1, 0.5, 3, 2.0**-20, -0.75, 0.09375, 2.0**-16, 2.0**-17],
    ),
    ("T17", "e2m3", [7.9, 1, 0.1, 2.3, -5.3, 0.06, 0.0625, 0.19], 127, [31, 8, 1, 17, 59, 0, 0, 2], [7.5, 1, 0.125, 2.25, -5.5, 0, 0, 0.25]),
    ("T18", "e3m2", [30, 1, 0.1, 2.3, -5.3, 0.06, 0.03, 13], 127, [31, 12, 2, 17, 53, 1, 0, 26], [28, 1, 0.125, 2.5, -5, 0.0625, 0, 12]),
    (
        "T19",
        "int8",
        [3, -3, 0.01, 1, 0.0234375, -0.0078125, 2.5, 0.75],
        128,
        [96, -96, 0, 32, 1, 0, 80, 24],
        [3, -3, 0, 1, 0.03125, 0, 2.5, 0.75],
    ),
]


@pytest.mark.parametrize(("vid", "fmt", "inputs", "scale", "codes", "values"), VECTORS, ids=[v[0] for v in VECTORS])
def test_spec_vectors(vid: str, fmt: str, inputs: list[float], scale: int, codes: list[int], values: list[float]) -> None:
    a = quantize(_block(inputs), axis=0, fmt=fmt)
    assert a.scales.tolist() == [scale]
    assert _codes(a) == codes
    assert dequantize(a)[:8].tolist() == [np.float32(v) for v in values]
    assert not np.any(dequantize(a)[8:])


def test_int8_ties_round_to_even() -> None:
    # q*64 = 0.5 exactly: RNE gives 0 (the reference emulator's ties-away rounding would give 1)
    a = quantize(_block([3, -3, 0.01, 1, 0.0234375, -0.0078125, 2.5, 0.75, 0.015625]), axis=0, fmt="int8")
    assert a.scales.tolist() == [128]
    assert int(a.elements[8]) == 0


def test_int8_clamp_symmetric_by_default_full_on_request() -> None:
    # amax 1.99609375 keeps the scale at 2**0; -1.99609375 * 64 = -127.75 rounds to -128
    x = _block([-1.99609375, 1.99609375, -1.984375, 0.5])
    symmetric = quantize(x, axis=0, fmt="int8")
    full = quantize(x, axis=0, fmt="int8", int8_clamp="full")
    assert symmetric.scales.tolist() == full.scales.tolist() == [127]
    assert symmetric.elements[:4].tolist() == [-127, 127, -127, 32]
    assert full.elements[:4].tolist() == [-128, 127, -127, 32]
    assert dequantize(full)[:2].tolist() == [-2.0, 127 / 64]
    assert np.array_equal(quantize(x, axis=0, fmt="int8", int8_clamp="symmetric").elements, symmetric.elements)


@settings(max_examples=60, deadline=None)
@given(x=hnp.arrays(np.float32, st.tuples(st.integers(1, 3), st.integers(1, 70)), elements=st.floats(-1e6, 1e6, width=32)))
def test_symmetric_int8_commutes_with_negation(x: npt.NDArray[np.float32]) -> None:
    plus, minus = quantize(x, axis=1, fmt="int8"), quantize(-x, axis=1, fmt="int8")
    assert np.array_equal(plus.scales, minus.scales)
    assert np.array_equal(plus.elements, -minus.elements)
    full = quantize(x, axis=1, fmt="int8", int8_clamp="full")
    assert np.array_equal(full.scales, plus.scales)
    differs = full.elements != plus.elements
    assert np.all(full.elements[differs] == -128) and np.all(plus.elements[differs] == -127)


def test_int8_clamp_leaves_float_formats_alone() -> None:
    x = np.linspace(-3, 3, 40, dtype=np.float32)
    for fmt in ("e4m3", "e2m1"):
        same = quantize(x, 0, fmt, int8_clamp="full")
        assert np.array_equal(same.elements.view(np.uint8), quantize(x, 0, fmt).elements.view(np.uint8))


def test_int8_clamp_names_are_checked() -> None:
    with pytest.raises(DtypeError, match=r"\[mx.quantize\] Int8Clamp: int8_clamp must be 'symmetric' or 'full', got 'asymmetric'\n  hint: 'symmetric' keeps MXINT8 in ±127/64"):
        quantize(np.ones(32), 0, "int8", int8_clamp="asymmetric")  # type: ignore[arg-type]


def test_all_zero_block() -> None:
    a = quantize(np.zeros(32, np.float32), axis=0, fmt="e4m3")
    assert a.scales.tolist() == [0]
    assert not np.any(a.elements.view(np.uint8))


@pytest.mark.parametrize("special", [np.inf, -np.inf, np.nan])
def test_non_finite_block_gets_nan_scale(special: float) -> None:
    x = _block([1.0, 2.0, special])
    a = quantize(np.concatenate([x, _block([1.0])]), axis=0, fmt="e4m3")
    assert a.scales.tolist() == [255, 127 - 8]  # amax 1.0, e4m3 emax 8
    assert not np.any(a.elements[:32].view(np.uint8))
    out = dequantize(a)
    assert np.all(np.isnan(out[:32]))
    assert out[32] == 1.0


def test_tiny_block_clamps_scale() -> None:
    a = quantize(_block([2.0**-140]), axis=0, fmt="e4m3")
    assert a.scales.tolist() == [0]
    assert not np.any(a.elements.view(np.uint8))


def test_huge_fp4_block() -> None:
    a = quantize(_block([1.5 * 2.0**127, 1.0, 1.0]), axis=0, fmt="e2m1")
    assert a.scales.tolist() == [252]
    assert _codes(a)[:3] == [7, 0, 0]


def test_e8m0_decode() -> None:
    out = e8m0_decode(np.array([0, 1, 127, 128, 254, 255], np.uint8))
    assert out[:5].tolist() == [2.0**-127, 2.0**-126, 1.0, 2.0, 2.0**127]
    assert np.isclose(out[0], 5.877e-39, rtol=1e-3) and np.isclose(out[4], 1.7014e38, rtol=1e-4)
    assert np.isnan(out[5])


def test_e8m0_encode_is_exact_not_a_cast() -> None:
    exps = np.arange(-127, 128)
    codes = e8m0_encode(exps)
    assert codes.tolist() == list(range(255))
    assert np.array_equal(e8m0_decode(codes), np.ldexp(1.0, exps))
    with pytest.raises(LayoutError, match=r"\[mx\] ScaleExponentRange: exponent 128 is outside the E8M0 range -127..127"):
        e8m0_encode(np.array([0, 128]))
    with pytest.raises(DtypeError, match="ScaleExponentNotInteger"):
        e8m0_encode(np.array([1.5]))


def test_quantize_along_inner_axis_of_matrix() -> None:
    x = np.arange(2 * 64, dtype=np.float32).reshape(2, 64)
    a = quantize(x, axis=1, fmt="e4m3")
    assert a.elements.shape == (2, 64) and a.scales.shape == (2, 2)
    b = quantize(x.T, axis=0, fmt="e4m3")
    assert b.scales.shape == (2, 2)
    assert np.array_equal(a.scales, b.scales.T)
    assert np.array_equal(dequantize(a), dequantize(b).T)
    assert np.array_equal(quantize(x, axis=-1).scales, a.scales)


def test_element_dtypes_and_aliases() -> None:
    expected = {
        "e4m3": ml_dtypes.float8_e4m3fn,
        "e5m2": ml_dtypes.float8_e5m2,
        "e3m2": ml_dtypes.float6_e3m2fn,
        "e2m3": ml_dtypes.float6_e2m3fn,
        "e2m1": ml_dtypes.float4_e2m1fn,
        "int8": np.int8,
    }
    for name, dtype in expected.items():
        assert quantize(np.ones(32), 0, name).elements.dtype == np.dtype(dtype)
    assert quantize(np.ones(32), 0, "fp4_e2m1").fmt == "e2m1"


def test_bad_format_name() -> None:
    with pytest.raises(DtypeError, match=r"\[mx\] UnknownElementFormat: 'e4m4' is not an MX element format") as info:
        quantize(np.ones(32), 0, "e4m4")
    assert "e2m1, e2m3, e3m2, e4m3, e5m2, int8" in str(info.value)


def test_axis_out_of_range() -> None:
    with pytest.raises(LayoutError, match=r"\[mx.quantize\] AxisRange: axis 2 is out of range for an array of 2 dimension") as info:
        quantize(np.ones((2, 32)), axis=2)
    assert info.value.rule == "AxisRange" and info.value.stage == "mx.quantize"
    with pytest.raises(LayoutError, match="AxisType"):
        quantize(np.ones(32), axis=True)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize(("length", "block"), [(40, 32), (70, 32), (5, 32), (33, 32), (7, 3), (1, 32)])
def test_ragged_last_block_is_zero_padded(fmt: str, length: int, block: int) -> None:
    rng = np.random.default_rng(length * 100 + block)
    x = (rng.standard_normal((3, length)) * np.exp2(rng.integers(-8, 9, size=(3, 1)))).astype(np.float32)
    a = quantize(x, axis=1, fmt=fmt, block=block)
    count = -(-length // block)
    assert a.shape == (3, length) and a.scales.shape == (3, count)
    # the same as quantizing the explicitly zero-padded rows and dropping the padding
    padded = np.zeros((3, count * block), np.float32)
    padded[:, :length] = x
    full = quantize(padded, axis=1, fmt=fmt, block=block)
    assert np.array_equal(a.scales, full.scales)
    assert np.array_equal(a.elements.view(np.uint8), full.elements[:, :length].view(np.uint8))
    assert np.array_equal(dequantize(a), dequantize(full)[:, :length])
    along_rows = quantize(x.T, axis=0, fmt=fmt, block=block)
    assert np.array_equal(along_rows.scales, a.scales.T)


def test_ragged_three_by_forty() -> None:
    x = np.arange(120, dtype=np.float32).reshape(3, 40)
    a = quantize(x, axis=1, block=32)
    assert a.scales.shape == (3, 2)
    assert dequantize(a).shape == (3, 40)
    # the short block holds 32..39 of row 0: amax 39 -> floor(log2) 5, e4m3 emax 8 -> code 124
    assert a.scales[0].tolist() == [127 + 4 - 8, 127 + 5 - 8]


@pytest.mark.parametrize(("shape", "axis", "scales"), [((2, 0), 1, (2, 0)), ((0, 0), 1, (0, 0)), ((0, 40), 1, (0, 2)), ((3, 0, 5), 2, (3, 0, 1))])
def test_empty_arrays(shape: tuple[int, ...], axis: int, scales: tuple[int, ...]) -> None:
    a = quantize(np.zeros(shape, np.float32), axis=axis)
    assert a.scales.shape == scales and dequantize(a).shape == shape


def test_block_size_must_be_positive() -> None:
    with pytest.raises(LayoutError, match=r"BlockSize: block must be a positive integer, got 0\n  hint: MX uses 32"):
        quantize(np.ones(32), axis=0, block=0)
    with pytest.raises(LayoutError, match="BlockSize: block must be a positive integer, got -32"):
        quantize(np.ones(32), axis=0, block=-32)


def test_block_longer_than_the_axis_is_one_short_block() -> None:
    a = quantize(np.ones(5, np.float32), axis=0, block=2**40)
    assert a.scales.shape == (1,) and dequantize(a).tolist() == [1.0] * 5


def test_bad_inputs() -> None:
    with pytest.raises(LayoutError, match="InputRank: cannot quantize a scalar"):
        quantize(np.float32(1.0), axis=0)
    with pytest.raises(DtypeError, match="InputDtype: MX quantization takes real numbers, got dtype complex128"):
        quantize(np.ones(32, complex), axis=0)
    with pytest.raises(DtypeError, match="InputDtype"):
        quantize(np.array(["a"] * 32), axis=0)


def test_mxarray_validates_its_parts() -> None:
    good = quantize(np.ones((2, 64)), axis=1)
    with pytest.raises(LayoutError, match=r"ScaleShape: elements of shape \(2, 64\) with block 32 on axis 1 need scales of shape \(2, 2\), got \(2, 3\)"):
        MxArray(good.elements, np.zeros((2, 3), np.uint8), "e4m3", 1)
    ragged = quantize(np.ones((2, 40)), axis=1)
    with pytest.raises(LayoutError, match=r"need scales of shape \(2, 2\), got \(2, 1\)\n  hint: one scale code per block, counting a short last block"):
        MxArray(ragged.elements, np.zeros((2, 1), np.uint8), "e4m3", 1)
    assert MxArray(ragged.elements, ragged.scales, "e4m3", -1).axis == 1
    with pytest.raises(DtypeError, match="ElementDtype: e2m1 elements must be float4_e2m1fn, got float8_e4m3fn"):
        MxArray(good.elements, good.scales, "e2m1", 1)
    with pytest.raises(DtypeError, match="ScaleDtype"):
        MxArray(good.elements, good.scales.astype(np.int32), "e4m3", 1)


def test_quantize_accepts_bfloat16_and_int_inputs() -> None:
    x = np.linspace(-4, 4, 32)
    ref = quantize(x.astype(np.float32), 0, "e2m1")
    for dtype in (ml_dtypes.bfloat16, np.float64):
        assert np.array_equal(dequantize(quantize(x.astype(dtype), 0, "e2m1")), dequantize(ref))
    ints = dequantize(quantize(np.arange(32), 0, "e4m3"))
    assert ints[31] == 28.0  # amax 31 sets 2**-4; 31 * 16 = 496 saturates to 448
    assert np.array_equal(ints, dequantize(quantize(np.arange(32, dtype=np.float32), 0, "e4m3")))


def _error_bound(x: npt.NDArray[np.float32], a: MxArray) -> npt.NDArray[np.float64]:
    """Per element: half an element ulp at |q| below saturation, the clipped excess above it."""
    spec = element_format(a.fmt)
    scale = np.repeat(e8m0_decode(a.scales), a.block, axis=a.axis)[:, : x.shape[1]]
    q = np.abs(x.astype(np.float64)) / scale
    half_ulp = spec.ulp(np.minimum(q, spec.max_normal)) / 2
    return scale * np.maximum(half_ulp, q - spec.max_normal)


finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
moderate32 = st.floats(-1e4, 1e4, width=32)


@settings(max_examples=150, deadline=None)
@given(
    fmt=st.sampled_from(sorted(FORMATS)),
    x=st.one_of(
        hnp.arrays(np.float32, st.tuples(st.integers(1, 3), st.integers(1, 70)), elements=finite32),
        hnp.arrays(np.float32, st.tuples(st.integers(1, 3), st.integers(1, 70)), elements=moderate32),
    ),
)
def test_round_trip_within_format_bound(fmt: str, x: npt.NDArray[np.float32]) -> None:
    a = quantize(x, axis=1, fmt=fmt)
    back = dequantize(a, np.float64)
    assert np.all(np.abs(back - x) <= _error_bound(x, a))
    # FLOOR rule: unless clamped, amax lies in [2**emax, 2**(emax+1)) element units
    spec = element_format(fmt)
    rows, count = a.scales.shape
    padded = np.zeros((rows, count * 32))
    padded[:, : x.shape[1]] = np.abs(x)
    amax = padded.reshape(rows, count, 32).max(axis=2)
    shared = a.scales.astype(np.int64) - 127
    live = (amax > 0) & (shared > -127)
    ratio = amax[live] / np.ldexp(1.0, shared[live])
    assert np.all((ratio >= 2.0**spec.emax) & (ratio < 2.0 ** (spec.emax + 1)))


@settings(max_examples=60, deadline=None)
@given(fmt=st.sampled_from(sorted(FORMATS)), x=hnp.arrays(np.float32, st.tuples(st.just(2), st.integers(1, 70)), elements=moderate32))
def test_quantize_is_idempotent_on_its_own_values(fmt: str, x: npt.NDArray[Any]) -> None:
    once = dequantize(quantize(x, axis=1, fmt=fmt))
    twice = quantize(once, axis=1, fmt=fmt)
    assert np.array_equal(dequantize(twice), once)
