"""Agreement with an independent OCP MX implementation, block by block, ragged blocks included.

The reference is gfloat (Graphcore's generic float library): its ``compute_scale_amax`` gives the
shared scale and its round-to-nearest-even, saturating ``round_ndarray`` the elements. The reference
side pads a ragged last block with zeros explicitly, as the format says, and drops the padding
afterwards; tcpdsl never materialises it. Non-finite blocks are left out: gfloat has no NaN-scale
rule (they are pinned in test_mx_quantize.py).
"""

from __future__ import annotations

from typing import Any

import gfloat
import numpy as np
import numpy.typing as npt
import pytest
from gfloat import formats as gf
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tcpdsl.mx import FORMATS, MxArray, dequantize, quantize

# MXINT8 with the symmetric clamp is a sign-magnitude grid k/64, k in 0..127: one exponent bit
# (bias 1) and six fraction bits give 0.m (subnormal) and 1.m, i.e. exactly that grid.
SYMMETRIC_INT8 = gfloat.FormatInfo(
    name="mxint8_symmetric",
    k=8,
    precision=7,
    bias=1,
    has_nz=True,
    domain=gfloat.Domain.Finite,
    num_high_nans=0,
    has_subnormals=True,
    is_signed=True,
    is_twos_complement=False,
)
# (tcpdsl format, int8_clamp) -> gfloat element format
ELEMENT_TYPES: dict[tuple[str, str], gfloat.FormatInfo] = {
    ("e4m3", "symmetric"): gf.format_info_ocp_e4m3,
    ("e5m2", "symmetric"): gf.format_info_ocp_e5m2,
    ("e3m2", "symmetric"): gf.format_info_ocp_e3m2,
    ("e2m3", "symmetric"): gf.format_info_ocp_e2m3,
    ("e2m1", "symmetric"): gf.format_info_ocp_e2m1,
    ("int8", "symmetric"): SYMMETRIC_INT8,
    ("int8", "full"): gf.format_info_ocp_int8,
}
# Codes are compared where both sides use the same encoding; the symmetric int8 grid is
# sign-magnitude in gfloat and two's complement in tcpdsl, so there only values are compared.
SAME_CODES = {key for key in ELEMENT_TYPES if key != ("int8", "symmetric")}
BLOCKS_PER_CASE = 1200


def _reference(x: npt.NDArray[np.float32], fmt: str, clamp: str, block: int) -> tuple[npt.NDArray[Any], ...]:
    """gfloat's ``(scale codes, element codes, element values)`` of the rows of ``x``."""
    etype = ELEMENT_TYPES[fmt, clamp]
    rows, length = x.shape
    count = -(-length // block)
    padded = np.zeros((rows, count * block))
    padded[:, :length] = x
    blocks = padded.reshape(rows * count, block)
    scales = np.array([gfloat.compute_scale_amax(etype.emax, b) for b in blocks])
    scale_codes = np.array([gfloat.encode_float(gf.format_info_ocp_e8m0, s) for s in scales])
    rounded = gfloat.round_ndarray(etype, blocks / scales[:, None], gfloat.RoundMode.TiesToEven, sat=True)
    codes = gfloat.encode_ndarray(etype, rounded)
    values = gfloat.decode_ndarray(etype, codes)

    def logical(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return a.reshape(rows, count * block)[:, :length]

    return scale_codes.reshape(rows, count), logical(codes), logical(values)


def _ours(a: MxArray) -> tuple[npt.NDArray[Any], ...]:
    codes = a.elements.view(np.uint8)
    values = a.elements.astype(np.float64) / (64.0 if a.fmt == "int8" else 1.0)
    return a.scales, codes, values


def _compare(x: npt.NDArray[np.float32], fmt: str, clamp: str, block: int) -> int:
    """Assert agreement on every block of ``x`` (quantized along axis 1); return the block count."""
    a = quantize(x, axis=1, fmt=fmt, block=block, int8_clamp=clamp)  # type: ignore[arg-type]
    scales, codes, values = _ours(a)
    ref_scales, ref_codes, ref_values = _reference(x, fmt, clamp, block)
    assert np.array_equal(scales, ref_scales)
    assert np.array_equal(values, ref_values)
    if (fmt, clamp) in SAME_CODES:
        assert np.array_equal(codes, ref_codes.astype(np.uint8))
    assert np.array_equal(dequantize(a, np.float64), ref_values * np.repeat(np.ldexp(1.0, ref_scales - 127), block, axis=1)[:, : x.shape[1]])
    return int(scales.size)


def _hard_inputs(rng: np.random.Generator, rows: int, length: int) -> npt.NDArray[np.float32]:
    """Rows of mixed difficulty: wide magnitudes, exact ties, near-powers of two, zeros, subnormals."""
    base = rng.standard_normal((rows, length))
    exponent = rng.integers(-140, 121, size=(rows, 1))  # up to 2**124: finite in float32
    x = base * np.exp2(exponent)
    kind = rng.integers(0, 5, size=(rows, length))
    grid = rng.integers(-4096, 4097, size=(rows, length)) * np.exp2(exponent - 8.0)  # many exact ties
    x = np.where(kind == 1, grid, x)
    x = np.where(kind == 2, np.exp2(exponent) * (2 - 2.0**-20) * np.sign(base), x)  # amax just below 2**(e+1)
    x = np.where(kind == 3, 0.0, x)
    x = np.where((kind == 4) & (rng.random((rows, length)) < 0.2), 1e-42 * base, x)
    return x.astype(np.float32)


@pytest.mark.parametrize(("fmt", "clamp"), sorted(ELEMENT_TYPES))
def test_agrees_with_independent_implementation_on_ragged_rows(fmt: str, clamp: str) -> None:
    rng = np.random.default_rng(sorted(ELEMENT_TYPES).index((fmt, clamp)))
    compared = 0
    for length in (40, 70, 96, 5):  # ragged (40, 70, 5) and whole (96) blocks of 32
        rows = BLOCKS_PER_CASE // (4 * -(-length // 32)) + 1
        compared += _compare(_hard_inputs(rng, rows, length), fmt, clamp, 32)
    compared += _compare(_hard_inputs(rng, 8, 21), fmt, clamp, 8)  # another block size, ragged
    assert compared >= BLOCKS_PER_CASE


def test_every_format_is_compared() -> None:
    assert {fmt for fmt, _ in ELEMENT_TYPES} == set(FORMATS)


finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=80, deadline=None)
@given(
    key=st.sampled_from(sorted(ELEMENT_TYPES)),
    block=st.sampled_from([1, 3, 32]),
    x=hnp.arrays(np.float32, st.tuples(st.integers(1, 3), st.integers(1, 70)), elements=finite32),
)
def test_agrees_with_independent_implementation_on_any_finite_input(key: tuple[str, str], block: int, x: npt.NDArray[np.float32]) -> None:
    _compare(x, *key, block)
