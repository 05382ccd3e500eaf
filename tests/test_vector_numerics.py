"""The vector engine's numerics (docs/runtime.md §3.9): the reference's kernels' expected values
computed through the ops, the RNGD f32 rules, and laws of the integer and reduce ops."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcpdsl.errors import LayoutError
from tcpdsl.numerics.vector_ops import (
    binary,
    f32,
    fma,
    fp_div,
    fp_ternary,
    fp_to_fxp,
    fp_unary,
    fxp_to_fp,
    identity,
    mul_fxp,
    reduce_fold,
    reduce_tree4,
    reinterpret,
)
from tcpdsl.verify.vector_ops import (
    I32_MAX,
    I32_MIN,
    BinaryArgMode,
    ClipBinaryOpF32,
    ClipBinaryOpI32,
    FpBinaryOp,
    FpMulAlu,
    FpTernaryOp,
    FpUnaryOp,
    FxpBinaryOp,
    InterSliceReduceOpF32,
    InterSliceReduceOpI32,
    IntraSliceReduceOpF32,
    IntraSliceReduceOpI32,
    LogicBinaryOpF32,
    LogicBinaryOpI32,
    ReduceOp,
    TernaryArgMode,
    op_dtype,
)

A = 512
RNG = np.random.default_rng(42)
CORNERS_I32 = np.array([0, 1, -1, 7, -100, -101, 299, 300, 301, 1000, I32_MAX, I32_MIN, I32_MAX - 99], dtype=np.int32)
X_I32 = np.concatenate([RNG.integers(I32_MIN, I32_MAX, A, endpoint=True).astype(np.int32), CORNERS_I32])
SMALL_I32 = np.concatenate([RNG.integers(-2000, 2000, A).astype(np.int32), CORNERS_I32[:10]])
X_F32 = RNG.uniform(-100, 100, A).astype(np.float32)
MUL0 = FpBinaryOp.MUL_F(FpMulAlu.MUL0)


def bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


# -- the reference's single-stream kernels -----------------------------------------------------


def _round_half_away(v: float) -> int:
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def test_full_pipeline() -> None:
    # AddFxp 100 -> fxp_to_fp(31) -> MulF 2.5 -> fp_to_fxp(31) -> Clip Max 0 -> Clip Min 1000.
    s = binary(FxpBinaryOp.ADD_FXP, X_I32, 100)
    s = binary(MUL0, fxp_to_fp(s, 31), 2.5)
    s = fp_to_fxp(s, 31)
    s = binary(ClipBinaryOpI32.MIN, binary(ClipBinaryOpI32.MAX, s, 0), 1000)
    expected = []
    for x in X_I32.tolist():
        wrapped = (x + 100 + 2**31) % 2**32 - 2**31
        scaled = float(np.float32(wrapped) * np.float32(2.5))
        expected.append(min(max(_round_half_away(scaled), 0), 1000))
    assert s.tolist() == expected
    assert s[-13:].tolist() == [250, 253, 248, 268, 0, 0, 998, 1000, 1000, 1000, 0, 0, 0]


def test_neg_offset_and_the_stash_chains_f32() -> None:
    x = X_F32
    assert np.array_equal(binary(FpBinaryOp.ADD_F, x, -100.0), x - np.float32(100))
    doubled = binary(MUL0, x, 2.0)
    assert np.array_equal(binary(ClipBinaryOpF32.MAX, doubled, x), np.maximum(x * 2, x))
    stashed = binary(ClipBinaryOpF32.MAX, doubled, 0.0)
    assert np.array_equal(binary(ClipBinaryOpF32.ADD, stashed, stashed), 2 * np.maximum(2 * x, 0))


def test_the_stash_and_logic_chains_i32() -> None:
    x = X_I32
    doubled = binary(FxpBinaryOp.MUL_INT, x, 2)
    wrapped = ((x.astype(np.int64) * 2 + 2**31) % 2**32 - 2**31).astype(np.int32)
    assert np.array_equal(binary(ClipBinaryOpI32.MAX, doubled, x), np.maximum(wrapped, x))
    logic = binary(LogicBinaryOpI32.BIT_OR, binary(LogicBinaryOpI32.BIT_AND, x, 0xFF), 0x100)
    assert np.array_equal(logic, (x & 0xFF) | 0x100)
    assert np.array_equal(binary(FxpBinaryOp.ADD_FXP, x, 100), (x.astype(np.int64) + 100).astype(np.int32))


def test_the_argument_modes() -> None:
    x = X_F32
    assert np.array_equal(binary(FpBinaryOp.SUB_F, x, 2.0, BinaryArgMode.MODE10), np.float32(2) - x)
    assert np.array_equal(fp_div(x, 2.0, BinaryArgMode.MODE10), np.float32(2) / x)
    assert np.array_equal(fp_div(x, 2.0), x / np.float32(2))
    assert np.array_equal(fp_ternary(FpTernaryOp.FMA_F, x, 2.0, 1.0, TernaryArgMode.MODE120), np.float32(2) + x)
    assert np.array_equal(binary(LogicBinaryOpI32.BIT_XOR, X_I32, 0xFF, BinaryArgMode.MODE11), np.zeros_like(X_I32))
    assert np.array_equal(binary(FxpBinaryOp.SUB_FXP, SMALL_I32, 7, BinaryArgMode.MODE10), 7 - SMALL_I32)
    assert np.array_equal(binary(ClipBinaryOpI32.ADD_FXP, X_I32, 3, BinaryArgMode.MODE11), np.full(X_I32.shape, 6))
    assert np.array_equal(binary(FxpBinaryOp.MUL_INT, SMALL_I32, 3, BinaryArgMode.MODE00), SMALL_I32 * SMALL_I32)


def test_exp_the_ternaries_and_multi_vrf() -> None:
    x = X_F32 / np.float32(10)
    assert np.array_equal(fp_unary(FpUnaryOp.EXP, x), f32(np.exp(x)))
    assert np.array_equal(fp_unary(FpUnaryOp.NEG_EXP, x), f32(np.exp(-x)))
    assert np.array_equal(fp_ternary(FpTernaryOp.FMA_F, x, 2.0, 3.0), x * np.float32(2) + np.float32(3))
    assert np.array_equal(fp_ternary(FpTernaryOp.FMA_F, x, x, 1.0), f32(x.astype(np.float64) ** 2 + 1))
    v1, v2 = SMALL_I32[::-1], SMALL_I32 % 7
    s = binary(ClipBinaryOpI32.ADD_FXP, binary(FxpBinaryOp.MUL_INT, binary(FxpBinaryOp.ADD_FXP, SMALL_I32, v1), v2), v1)
    assert np.array_equal(s, (SMALL_I32 + v1) * v2 + v1)


CORNERS_F32 = np.array([0.0, -0.0, -1.0, 1.0, -0.5, 3.25, -80.0, 120.0, np.finfo(np.float32).tiny], dtype=np.float32)


def test_reinterpret_abs_and_chain_bitwise() -> None:
    masked = binary(LogicBinaryOpI32.BIT_AND, reinterpret(CORNERS_F32, "i32"), 0x7FFFFFFF)
    assert np.array_equal(bits(reinterpret(masked, "f32")), bits(np.abs(CORNERS_F32)))
    bumped = reinterpret(binary(FxpBinaryOp.ADD_FXP, masked, 1 << 23), "f32")
    chain = binary(ClipBinaryOpF32.MIN, bumped, 100.0)
    tiny = np.finfo(np.float32).tiny
    expected = np.array([tiny, tiny, 2.0, 2.0, 1.0, 6.5, 100.0, 100.0, 2 * tiny], dtype=np.float32)
    assert np.array_equal(bits(chain), bits(expected))
    # Bit operations on f32 keep the bits, a subnormal included; arithmetic flushes it.
    sub = np.array([1e-40], dtype=np.float32)
    assert bits(binary(LogicBinaryOpF32.BIT_OR, sub, 0.0)).tolist() == bits(sub).tolist()
    assert bits(binary(FpBinaryOp.ADD_F, sub, 0.0)).tolist() == [0]


# -- RNGD f32 rules ----------------------------------------------------------------------------


def test_subnormals_flush_to_signed_zero_and_nan_is_canonical() -> None:
    x = np.array([1e-40, -1e-40, np.nan, -np.nan, 1.0], dtype=np.float32)
    assert bits(f32(x)).tolist() == [0, 0x80000000, 0x7FC00000, 0x7FC00000, 0x3F800000]
    # A result that would be subnormal flushes too: 2^-126 / 4.
    tiny = np.finfo(np.float32).tiny
    assert bits(fp_div(np.array([tiny, -tiny], dtype=np.float32), 4.0)).tolist() == [0, 0x80000000]
    assert bits(fp_unary(FpUnaryOp.SQRT, np.array([-1.0], dtype=np.float32))).tolist() == [0x7FC00000]
    # f32 Min/Max give the other operand when one is NaN.
    assert binary(ClipBinaryOpF32.MAX, np.array([np.nan], dtype=np.float32), 3.0).tolist() == [3.0]


def test_conversions() -> None:
    assert fxp_to_fp(np.array([2**30, I32_MIN, 3], dtype=np.int32), 0).tolist() == [0.5, -1.0, 3 / 2**31]
    assert fxp_to_fp(np.array([16777217, 16777219], dtype=np.int32), 31).tolist() == [16777216.0, 16777220.0]
    values = np.array([np.nan, -np.nan, 2.5, -2.5, 0.5, -0.5, 1e20, -1e20, np.inf], dtype=np.float32)
    assert fp_to_fxp(values, 31).tolist() == [I32_MAX, I32_MIN, 3, -3, 1, -1, I32_MAX, I32_MIN, I32_MAX]
    assert fp_to_fxp(np.array([0.25, -1.0], dtype=np.float32), 0).tolist() == [2**29, I32_MIN]


def test_shifts_read_the_count_unsigned() -> None:
    assert binary(LogicBinaryOpI32.LEFT_SHIFT, [1, 1, 3, 1], [31, 32, 1, -1]).tolist() == [I32_MIN, 0, 6, 0]
    assert binary(LogicBinaryOpI32.LOGIC_RIGHT_SHIFT, [-1, -8], [28, -1]).tolist() == [15, 0]
    assert binary(FxpBinaryOp.ARITH_RIGHT_SHIFT, [-8, -8, 8], [1, 40, 40]).tolist() == [-4, -1, 0]
    assert binary(FxpBinaryOp.LEFT_SHIFT_SAT, [3, -3, 0, 1], [30, 30, 40, 40]).tolist() == [I32_MAX, I32_MIN, 0, I32_MAX]


def test_saturation_and_abs_picks() -> None:
    assert binary(FxpBinaryOp.ADD_FXP_SAT, [I32_MAX, I32_MIN], [1, -1]).tolist() == [I32_MAX, I32_MIN]
    assert binary(FxpBinaryOp.SUB_FXP_SAT, [I32_MIN], [1]).tolist() == [I32_MIN]
    assert binary(FxpBinaryOp.ADD_FXP, [I32_MAX], [1]).tolist() == [I32_MIN]
    assert binary(ClipBinaryOpI32.ABS_MIN, [-3, 5, I32_MIN, 2], [2, -5, I32_MAX, -2]).tolist() == [2, -5, I32_MAX, -2]
    assert binary(ClipBinaryOpI32.ABS_MAX, [-3, I32_MIN], [2, I32_MAX]).tolist() == [-3, I32_MIN]
    assert binary(ClipBinaryOpF32.ABS_MAX, [-3.0, 1.0], [2.0, -1.5]).tolist() == [-3.0, -1.5]


def test_a_bare_mul_f_is_refused_by_name() -> None:
    with pytest.raises(LayoutError) as info:
        binary(FpBinaryOp.MUL_F, [1.0], [2.0])
    assert (info.value.stage, info.value.rule) == ("vector_fp_binary", "MulAlu")
    assert binary(FpBinaryOp.MUL_F(FpMulAlu.MUL1), [1.5], [2.0]).tolist() == [3.0]


def test_q31_multiply() -> None:
    assert mul_fxp([I32_MIN, 2**30, I32_MIN, 3, I32_MAX], [I32_MIN, 2**30, I32_MAX, -5, I32_MAX]).tolist() == [
        I32_MAX, 2**29, -I32_MAX, 0, I32_MAX - 1]


# -- reduces -----------------------------------------------------------------------------------


def _saturating_sum(column: list[int]) -> int:
    acc = 0
    for v in column:
        acc = min(max(acc + v, I32_MIN), I32_MAX)
    return acc


def test_the_six_intra_reduce_kernels() -> None:
    # [A=512, R=4]: each column of A reduced over R in Time (the accumulator's fold).
    xi = X_I32[: 4 * A].reshape(-1)
    data_i = np.resize(xi, (4, A)).astype(np.int32)
    data_f = np.resize(X_F32, (4, A)).astype(np.float32)
    assert reduce_fold(IntraSliceReduceOpI32.ADD_SAT, data_i, 0).tolist() == [
        _saturating_sum(col) for col in data_i.T.tolist()]
    assert np.array_equal(reduce_fold(IntraSliceReduceOpI32.MAX, data_i, 0), data_i.max(axis=0))
    assert np.array_equal(reduce_fold(IntraSliceReduceOpI32.MIN, data_i, 0), data_i.min(axis=0))
    expected = ((data_f[0] + data_f[1]) + data_f[2]) + data_f[3]
    assert np.array_equal(reduce_fold(IntraSliceReduceOpF32.ADD, data_f, 0), expected)
    assert np.array_equal(reduce_fold(IntraSliceReduceOpF32.MAX, data_f, 0), data_f.max(axis=0))
    assert np.array_equal(reduce_fold(IntraSliceReduceOpF32.MIN, data_f, 0), data_f.min(axis=0))


def test_reduce_over_time_and_packet() -> None:
    # R16 = 16 as [R16 / 4] in Time and [R16 % 4] in Packet: a tree per step, folded over Time.
    data = RNG.integers(-1000, 1000, (A, 4, 4)).astype(np.float32)
    out = reduce_fold(IntraSliceReduceOpF32.ADD, reduce_tree4(IntraSliceReduceOpF32.ADD, data, 2), 1)
    assert np.array_equal(out, data.reshape(A, 16).sum(axis=1))
    # The book's reduce_time: R = 16 in Time, AddSat.
    column = list(range(-8, 8))
    assert reduce_fold(IntraSliceReduceOpI32.ADD_SAT, np.array(column, dtype=np.int32), 0).tolist() == sum(column)


def test_the_inter_reduce_kernels() -> None:
    # [R=4, A=512] over Slice [A / 8, R]: each group of 4 slices reduced.
    data = np.resize(X_I32, (A // 8, 4, 8)).astype(np.int32)
    out = reduce_fold(InterSliceReduceOpI32.ADD_SAT, data, 1)
    assert out.tolist() == [[_saturating_sum(col) for col in group.T.tolist()] for group in data]
    assert np.array_equal(reduce_fold(InterSliceReduceOpI32.MAX, data, 1), data.max(axis=1))
    wrapped = reduce_fold(InterSliceReduceOpI32.ADD, data, 1)
    assert np.array_equal(wrapped, data.astype(np.int64).sum(axis=1).astype(np.int32))
    floats = RNG.integers(-100, 100, (64, 4, 8)).astype(np.float32)
    assert np.array_equal(reduce_fold(InterSliceReduceOpF32.ADD, floats, 1), floats.sum(axis=1))
    assert np.array_equal(reduce_fold(InterSliceReduceOpF32.MUL, floats[:, :2], 1), floats[:, 0] * floats[:, 1])


# -- laws --------------------------------------------------------------------------------------

I32S = st.integers(I32_MIN, I32_MAX)
FINITE = st.floats(-(2.0**100), 2.0**100, width=32, allow_subnormal=False)
REDUCES: list[ReduceOp] = list(IntraSliceReduceOpI32) + list(IntraSliceReduceOpF32) + list(InterSliceReduceOpI32) + list(
    InterSliceReduceOpF32)


@given(I32S, I32S)
def test_q31_multiply_is_symmetric_and_close_to_the_real_product(a: int, b: int) -> None:
    ab, ba = mul_fxp([a], [b])[0], mul_fxp([b], [a])[0]
    assert ab == ba
    exact = Fraction(a * b, 2**31)
    assert abs(exact - int(ab)) <= Fraction(1, 2) or (a == b == I32_MIN and ab == I32_MAX)


@given(st.sampled_from(REDUCES), st.lists(I32S, min_size=1, max_size=6))
def test_a_reduce_ignores_its_identity(op: ReduceOp, values: list[int]) -> None:
    dtype = np.int32 if op_dtype(op) == "i32" else np.float32
    data = np.array(values, dtype=np.float64).astype(dtype)
    padded = np.concatenate([data, np.full(3, identity(op), dtype=dtype)])
    assert np.array_equal(reduce_fold(op, padded, 0), reduce_fold(op, data, 0), equal_nan=True)


def _nearest_f32(value: Fraction) -> float:
    """``value`` rounded to the nearest f32, ties to even, by comparing the neighbours exactly."""
    guess = np.float32(float(value))
    best = None
    for candidate in (np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf))):
        distance = abs(Fraction(float(candidate)) - value)
        even = int(np.array(candidate, dtype=np.float32).view(np.uint32)) % 2 == 0
        key = (distance, not even)
        if best is None or key < best[0]:
            best = (key, float(candidate))
    assert best is not None
    return best[1]


@given(FINITE, FINITE, FINITE)
def test_fma_rounds_once(a: float, b: float, c: float) -> None:
    got = float(fma(np.float32(a), np.float32(b), np.float32(c)))
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if abs(exact) >= 2**-126 and abs(exact) < Fraction(float(np.finfo(np.float32).max)):
        assert got == _nearest_f32(exact)


@given(st.integers(-(2**24), 2**24), st.integers(0, 31))
def test_small_integers_survive_both_conversions(n: int, width: int) -> None:
    fixed = fp_to_fxp(np.array([n], dtype=np.float32), width)
    back = fxp_to_fp(fixed, width)
    if abs(n) < 2**width:
        assert back.tolist() == [float(n)]


ZEROS = np.array([0.0, -0.0], dtype=np.float32)


def _zero_bits(x: object) -> list[int]:
    return np.asarray(x, dtype=np.float32).view(np.uint32).tolist()  # type: ignore[no-any-return]


@pytest.mark.parametrize("op, positive", [(ClipBinaryOpF32.MAX, True), (ClipBinaryOpF32.MIN, False)])
def test_f32_max_and_min_order_minus_zero_below_plus_zero_in_every_shape(op: ClipBinaryOpF32, positive: bool) -> None:
    # numpy's fmax breaks a +0/-0 tie one way for a broadcast operand and another for an array: the op may not.
    winner = 0 if positive else 0x80000000
    for a, b in ((0.0, -0.0), (-0.0, 0.0)):
        column = np.full(5, a, dtype=np.float32)
        for operand in (np.float32(b), np.full(5, b, dtype=np.float32), np.full((1,), b, dtype=np.float32)):
            for mode in (BinaryArgMode.MODE01, BinaryArgMode.MODE10):
                assert _zero_bits(binary(op, column, operand, mode)) == [winner] * 5
    # Two zeros of one sign keep it; a NaN yields to a zero of either sign.
    assert _zero_bits(binary(op, -ZEROS, -ZEROS)) == _zero_bits(-ZEROS)
    nan = np.full(2, np.nan, dtype=np.float32)
    assert _zero_bits(binary(op, nan, ZEROS)) == _zero_bits(ZEROS)


@given(st.lists(st.sampled_from([0.0, -0.0, -1.0, 2.0, math.nan]), min_size=1, max_size=9), st.randoms())
def test_max_and_min_folds_find_the_same_zero_in_every_order(values: list[float], shuffle: object) -> None:
    for op in (IntraSliceReduceOpF32.MAX, IntraSliceReduceOpF32.MIN):
        data = np.array(values, dtype=np.float32)
        folded = _zero_bits(reduce_fold(op, data, 0))
        shuffled = list(values)
        shuffle.shuffle(shuffled)  # type: ignore[attr-defined]
        assert _zero_bits(reduce_fold(op, np.array(shuffled, dtype=np.float32), 0)) == folded
        step = identity(op)
        for v in shuffled:  # the step-by-step fold, in the shuffled order
            step = binary(ClipBinaryOpF32.MAX if op is IntraSliceReduceOpF32.MAX else ClipBinaryOpF32.MIN,
                          step, np.float32(v))
        assert _zero_bits(step) == folded
        if len(values) == 4 and not all(map(math.isnan, values)):  # the packet's tree (no identity) agrees too
            assert _zero_bits(reduce_tree4(op, np.array(shuffled, dtype=np.float32), 0)) == folded
