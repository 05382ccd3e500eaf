"""RNGD scalar casts: narrowing, widening and their round trips (docs/runtime.md §3.2, §3.6)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl.errors import DtypeError
from tcpdsl.numerics.scalars import (
    _BLOCK,
    Scalar,
    _extremes,
    bf16,
    cast,
    f8e4m3,
    f8e5m2,
    f32,
    i4,
    i5,
    i8,
    i9,
    i32,
    poison,
    scalar,
    storage_dtype,
    widen,
)
from tcpdsl.verify.dtypes import DTYPES


def bits16(x: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(x).view(np.uint16).ravel()]


@pytest.mark.parametrize(
    ("cls", "name", "bits", "numpy", "is_float"),
    [
        (i4, "i4", 4, ml_dtypes.int4, False),
        (i5, "i5", 4, np.int8, False),
        (i8, "i8", 8, np.int8, False),
        (i9, "i9", 8, np.int16, False),
        (f8e4m3, "f8e4m3", 8, ml_dtypes.float8_e4m3fn, True),
        (f8e5m2, "f8e5m2", 8, ml_dtypes.float8_e5m2, True),
        (bf16, "bf16", 16, ml_dtypes.bfloat16, True),
        (i32, "i32", 32, np.int32, False),
        (f32, "f32", 32, np.float32, True),
    ],
)
def test_scalar_tags(cls: type[Scalar], name: str, bits: int, numpy: type, is_float: bool) -> None:
    assert (cls.name, cls.bits, cls.numpy, cls.is_float) == (name, bits, np.dtype(numpy), is_float)
    assert scalar(name) is cls


def test_unknown_scalar_lists_the_known_ones() -> None:
    with pytest.raises(DtypeError, match="unknown scalar type 'u8'") as info:
        scalar("u8")
    assert info.value.rule == "UnknownDtype"
    assert "bf16" in info.value.hint


def test_scalar_tags_are_not_values() -> None:
    with pytest.raises(TypeError, match="scalar tag"):
        bf16()


def test_i4_product_widens_to_64() -> None:
    a = widen(cast([-8], i4), i4)
    assert a.dtype == np.int32
    assert int((a * a)[0]) == 64


def test_i32_accumulator_is_exactly_32_bits() -> None:
    assert int(cast(np.int64(1 << 16) * (1 << 16), i32)) == 0
    assert int(cast(2**31, i32)) == -(2**31)
    assert int(cast(2**31 - 1 + 2, i32)) == -(2**31) + 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1 + 2**-8, 1.0), (1 + 1.5 * 2**-7, 1 + 2**-6), (1 + 0.75 * 2**-7, 1 + 2**-7)],
)
def test_bf16_narrowing_ties_to_even(value: float, expected: float) -> None:
    got = cast(np.array([value], dtype=np.float32), bf16)
    assert got.dtype == bf16.numpy
    assert float(got[0]) == expected


def test_bf16_flushes_subnormals_to_signed_zero() -> None:
    got = cast(np.array([1e-39, -1e-39, 2.0**-130, -(2.0**-127)], dtype=np.float32), bf16)
    assert bits16(got) == [0x0000, 0x8000, 0x0000, 0x8000]


def test_bf16_nan_is_canonical() -> None:
    nans = np.array([0x7FC00001, 0xFFC00000, 0x7F800001], dtype=np.uint32).view(np.float32)
    assert bits16(cast(nans, bf16)) == [0x7FC0] * 3


def test_bf16_overflow_rounds_to_infinity() -> None:
    got = cast(np.array([3.4e38, -3.4e38], dtype=np.float32), bf16)
    assert [float(v) for v in got] == [np.inf, -np.inf]


def test_bf16_widening_flushes_and_canonicalises() -> None:
    stored = np.array([0x0001, 0x8001, 0x7FC1, 0xFF80, 0x3F80], dtype=np.uint16).view(ml_dtypes.bfloat16)
    got = widen(stored, bf16)
    assert got.dtype == np.float32
    assert [int(v) for v in got.view(np.uint32)] == [0x00000000, 0x80000000, 0x7FC00000, 0xFF800000, 0x3F800000]


@pytest.mark.parametrize("dtype", ["bf16", "f8e4m3", "f32", "i8", "i4"])
def test_widening_keeps_the_shape_of_a_scalar(dtype: str) -> None:
    # A 0-d operand (every axis of size 1) must widen to a 0-d accumulator, not to one element.
    assert widen(cast(np.asarray(1.5), dtype), dtype).shape == ()


def test_f8e4m3_saturates_at_448() -> None:
    got = cast(np.array([448, 460, 500, 1e6, np.inf, -np.inf, -1000], dtype=np.float32), f8e4m3)
    assert [float(v) for v in got] == [448, 448, 448, 448, 448, -448, -448]
    assert np.isnan(float(cast(np.array([np.nan], dtype=np.float32), f8e4m3)[0]))


def test_f8e5m2_overflows_to_infinity() -> None:
    got = cast(np.array([1000, -1e6], dtype=np.float32), f8e5m2)
    assert [float(v) for v in got] == [1024, -np.inf]


@pytest.mark.parametrize(("cls", "values", "expected"), [
    (i4, [7, 8, -9, 100], [7, -8, 7, 4]),
    (i5, [15, 16, -17], [15, -16, 15]),
    (i8, [127, 128, -129, 300], [127, -128, 127, 44]),
    (i9, [255, 256, -257], [255, -256, 255]),
])
def test_integers_wrap_to_their_width(cls: type[Scalar], values: list[int], expected: list[int]) -> None:
    got = cast(np.array(values), cls)
    assert got.dtype == cls.numpy
    assert [int(v) for v in got] == expected


def test_float_to_integer_rounds_to_nearest_even() -> None:
    assert [int(v) for v in cast(np.array([2.5, 3.5, -2.5, np.nan]), i8)] == [2, 4, -2, 0]


def test_widening_sign_extends_the_value_bits() -> None:
    assert [int(v) for v in widen(np.array([31, 16], dtype=np.int8), i5)] == [-1, -16]
    assert [int(v) for v in widen(np.array([511, 255], dtype=np.int16), i9)] == [-1, 255]


@pytest.mark.parametrize("cls", [i4, i5, i8, i9])
def test_integer_narrow_widen_round_trip(cls: type[Scalar]) -> None:
    low = -(1 << (cls.value_bits - 1))
    values = np.arange(low, -low)
    assert np.array_equal(widen(cast(values, cls), cls), values)


@pytest.mark.parametrize("cls", [bf16, f8e4m3, f8e5m2])
def test_float_narrow_widen_round_trip(cls: type[Scalar]) -> None:
    every = np.arange(1 << cls.bits, dtype=np.uint16 if cls.bits == 16 else np.uint8).view(cls.numpy)
    wide = widen(every, cls)
    # Every finite non-zero value survives, except the bf16 subnormals RNGD flushes on the way in.
    keep = np.isfinite(wide) & (wide != 0)
    if cls is bf16:
        keep &= np.abs(wide) >= 2.0**-126
    assert np.array_equal(cast(wide[keep], cls), every[keep])


@given(st.floats(min_value=2.0**-126, max_value=2.0**127, width=32), st.booleans())
def test_bf16_cast_picks_a_nearest_neighbour(magnitude: float, negative: bool) -> None:
    x = np.float32(-magnitude if negative else magnitude)
    got = float(widen(cast(np.array([x]), bf16), bf16)[0])
    bits = int(np.array([x], dtype=np.float32).view(np.uint32)[0])
    toward_zero = np.array([bits & 0xFFFF0000], dtype=np.uint32).view(np.float32)[0]
    away = np.array([(bits & 0xFFFF0000) + 0x10000], dtype=np.uint32).view(np.float32)[0]
    assert got in (float(toward_zero), float(away))
    other = float(away) if got == float(toward_zero) else float(toward_zero)
    assert abs(got - float(x)) <= abs(other - float(x))


@given(st.integers(min_value=-(2**40), max_value=2**40))
def test_i32_cast_is_arithmetic_modulo_2_pow_32(value: int) -> None:
    got = int(cast(np.array([value]), i32)[0])
    assert (got - value) % (1 << 32) == 0
    assert -(2**31) <= got < 2**31


def test_poison_values() -> None:
    assert np.isnan(float(poison(bf16)))
    assert np.isnan(float(poison("f32")))
    assert int(poison(i8)) == -128
    assert int(poison(i4)) == -8
    assert int(poison(i9)) == -256


def test_bf16_narrowing_matches_the_rule_on_random_bit_patterns() -> None:
    bits = np.random.default_rng(1).integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32)
    bits[:4] = [0x00000001, 0x807FFFFF, 0x007FFFFF, 0x7F7FFFFF]  # subnormals and the largest finite
    values = bits.view(np.float32)
    # The rule spelled out: flush subnormal inputs, round to nearest even, canonicalise NaN.
    flushed = np.where(np.abs(values) < 2.0**-126, np.copysign(np.float32(0), values), values)
    with np.errstate(invalid="ignore"):
        expected = flushed.astype(ml_dtypes.bfloat16).view(np.uint16).copy()
    expected[np.isnan(values)] = 0x7FC0
    assert np.array_equal(cast(values, bf16).view(np.uint16), expected)


@pytest.mark.parametrize("cls", [bf16, f32, f8e4m3, f8e5m2])
def test_casts_leave_their_input_alone(cls: type[Scalar]) -> None:
    values = np.array([1e-39, -1e-40, np.nan, 3.0, -np.inf], dtype=np.float32)
    before = values.view(np.uint32).copy()
    cast(values, cls)
    widen(values, f32)
    assert np.array_equal(values.view(np.uint32), before)


def _wrapped(values: np.ndarray, bits: int) -> list[int]:
    """The two's-complement wrap of each value to ``bits`` bits, by the definition."""
    half = 1 << (bits - 1)
    return [((int(v) + half) % (2 * half)) - half for v in values.reshape(-1)]


@pytest.mark.parametrize("source", [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("cls", [i4, i5, i8, i9, i32])
def test_integer_casts_wrap_from_every_integer_dtype(source: type[np.generic], cls: type[Scalar]) -> None:
    # Extremes of the source dtype and values around every target width: the direct numpy
    # conversions taken for dtypes that need no wrap must agree with the wrap by definition.
    if source is np.bool_:
        values = np.array([False, True])
    else:
        info = np.iinfo(source)
        around = [0, 1, -1, 7, 8, -8, -9, 15, 16, -16, -17, 127, 128, -128, -129, 255, 256, 511, -512, 2**31, -(2**31) - 1]
        values = np.array([v for v in [*around, info.min, info.max] if info.min <= v <= info.max], dtype=source)
    narrowed = cast(values, cls)
    assert narrowed.dtype == cls.numpy
    assert narrowed.astype(np.int64).tolist() == _wrapped(values, cls.value_bits)
    assert widen(values, cls).tolist() == _wrapped(values, cls.value_bits)


@pytest.mark.parametrize("cls", [f8e4m3, f8e5m2])
def test_f8_widening_is_exact_for_every_bit_pattern(cls: type[Scalar]) -> None:
    patterns = np.arange(256, dtype=np.uint8).view(cls.numpy)
    expected = patterns.astype(np.float32)
    got = widen(patterns.reshape(16, 16)[:, ::2], cls)
    assert got.dtype == np.float32 and got.shape == (16, 8)
    np.testing.assert_array_equal(got.view(np.uint32), expected.reshape(16, 16)[:, ::2].view(np.uint32))


@pytest.mark.parametrize("cls", [f8e4m3, f8e5m2])
def test_f8_widening_of_more_than_a_block_looks_up_every_pattern(cls: type[Scalar]) -> None:
    # Longer than a block (the table is read a block at a time), in a 3-D shape and strided: every cell widened
    # exactly, the partial last block included.
    patterns = np.random.default_rng(7).integers(0, 256, size=(2, 3, _BLOCK // 3 + 11), dtype=np.uint8)
    for stored in (patterns.view(cls.numpy), patterns.view(cls.numpy)[:, :, ::2]):
        got = widen(stored, cls)
        assert got.dtype == np.float32 and got.shape == stored.shape
        np.testing.assert_array_equal(got.view(np.uint32), stored.astype(np.float32).view(np.uint32))


def test_widening_cast_values_needs_no_fixing() -> None:
    # Every kind of f32 (subnormals, NaNs with payloads, infinities) narrowed by cast: widening the
    # result by plain conversion gives the same bits as the full widening rule.
    patterns = np.random.default_rng(3).integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32)
    specials = np.array([0x00000001, 0x807FFFFF, 0x00800000, 0x7F800001, 0xFFC12345, 0x7F800000], dtype=np.uint32)
    stored = cast(np.concatenate([patterns, specials]).view(np.float32), bf16)
    plain, full = widen(stored, bf16, canonical=True), widen(stored, bf16)
    np.testing.assert_array_equal(plain.view(np.uint32), full.view(np.uint32))
    assert widen(cast(np.asarray(1.5), bf16), bf16, canonical=True).shape == ()


def test_every_scalar_class_is_a_row_of_the_dtype_table() -> None:
    """The scalar classes hold nothing of their own: each is built from its row of the one table."""
    classes = Scalar.__subclasses__()
    assert [c.__name__ for c in classes] == ["i4", "i5", "i8", "i9", "f8e4m3", "f8e5m2", "bf16", "i32", "f32"]
    for cls in classes:
        row = DTYPES[cls.__name__]
        assert (cls.name, cls.bits, cls.value_bits, cls.is_float) == (row.name, row.wire_bits, row.value_bits, row.is_float)
        assert cls.numpy == storage_dtype(row.storage)
    # Storage names resolve: ml_dtypes' own types first, numpy's names otherwise.
    assert {name: storage_dtype(d.storage) for name, d in DTYPES.items()} == {
        "i4": np.dtype(ml_dtypes.int4), "i5": np.dtype(np.int8), "i8": np.dtype(np.int8), "i9": np.dtype(np.int16),
        "f8e4m3": np.dtype(ml_dtypes.float8_e4m3fn), "f8e5m2": np.dtype(ml_dtypes.float8_e5m2),
        "bf16": np.dtype(ml_dtypes.bfloat16), "i16": np.dtype(np.int16), "i32": np.dtype(np.int32),
        "f32": np.dtype(np.float32), "f4e2m1": np.dtype(ml_dtypes.float4_e2m1fn),
    }


def test_zeros_need_no_fixing_but_their_neighbours_do() -> None:
    # Exact zeros convert exactly: the scan for cells to fix leaves them out (zero-heavy data would
    # otherwise take the slow path), while the subnormals and specials next to them are still found.
    halves = np.array([0x0000, 0x8000, 0x3F80, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F80, 0xFFC0, 0x0000], dtype=np.uint16)
    assert _extremes(halves, 0x7F80, 0x0080).tolist() == [3, 4, 5, 7, 8]
    assert _extremes(np.zeros(1000, np.uint16), 0x7F80, 0x0080).size == 0
    bits32 = np.array([0x00000000, 0x80000000, 0x00000001, 0x3F800000, 0x7F800000], dtype=np.uint32)
    assert _extremes(bits32, 0x7F800000, 0x00800000).tolist() == [2, 4]


@pytest.mark.parametrize("share", [0.0, 0.2, 0.9, 1.0])
def test_bf16_narrowing_of_zero_heavy_data_follows_the_rule(share: float) -> None:
    rng = np.random.default_rng(4)
    bits = rng.integers(0, 2**32, size=300_000, dtype=np.uint64).astype(np.uint32)
    bits[rng.random(bits.size) < share] = 0
    bits[rng.random(bits.size) < share / 4] = 0x80000000
    values = bits.view(np.float32)
    flushed = np.where(np.abs(values) < 2.0**-126, np.copysign(np.float32(0), values), values)
    with np.errstate(invalid="ignore"):
        expected = flushed.astype(ml_dtypes.bfloat16).view(np.uint16).copy()
    expected[np.isnan(values)] = 0x7FC0
    narrowed = cast(values, bf16)
    assert np.array_equal(narrowed.view(np.uint16), expected)
    np.testing.assert_array_equal(widen(narrowed, bf16).view(np.uint32), widen(narrowed, bf16, canonical=True).view(np.uint32))


def test_the_public_casts_are_the_chips() -> None:
    values = np.array([1e-40, -1e-40, 1.0 + 2.0**-8, np.nan, 500.0, 0.0], dtype=np.float32)
    # ml_dtypes keeps bf16 subnormals and NaN payloads; the chip flushes and canonicalises.
    assert tcp.bf16.cast(values).view(np.uint16).tolist() == [0x0000, 0x8000, 0x3F80, 0x7FC0, 0x43FA, 0x0000]
    assert values.astype(ml_dtypes.bfloat16).view(np.uint16)[0] != 0
    assert tcp.f8e4m3.cast(values[4:5]).astype(np.float32).tolist() == [448.0]
    assert tcp.i8.cast([130, -129]).tolist() == [-126, 127]
    assert tcp.i4.widen(np.array([7, -8], dtype=ml_dtypes.int4)).tolist() == [7, -8]
    with pytest.raises(DtypeError) as info:
        tcp.bf16.cast([[1.0], [1.0, 2.0]])
    assert info.value.rule == "NotNumbers" and "bf16.cast cannot read the data as an array" in str(info.value)


def test_casting_bf16_to_bf16_canonicalises_every_block() -> None:
    # Longer than the block the copy is checked in, with subnormals, NaNs and zeros in every block
    # and a strided source: each cell follows the rule (a subnormal flushes to its signed zero, a
    # NaN becomes 0x7fc0, every other pattern is kept) and the caller's array is left alone.
    rng = np.random.default_rng(5)
    patterns = rng.integers(0, 2**16, size=2 * 3 * _BLOCK + 7, dtype=np.uint32).astype(np.uint16)
    patterns[rng.random(patterns.size) < 0.3] = 0
    patterns[-3:] = [0x8001, 0x7F81, 0x007F]  # the last, partial block holds specials too
    for stored in (patterns.view(ml_dtypes.bfloat16), patterns.view(ml_dtypes.bfloat16)[::2]):
        before = stored.view(np.uint16).copy()
        bits = before.copy()
        exponent, mantissa = bits & 0x7F80, bits & 0x007F
        bits[exponent == 0] &= 0x8000
        bits[(exponent == 0x7F80) & (mantissa != 0)] = 0x7FC0
        got = cast(stored, bf16)
        assert got.dtype == bf16.numpy and got.shape == stored.shape
        assert np.array_equal(got.view(np.uint16), bits)
        assert np.array_equal(stored.view(np.uint16), before)
