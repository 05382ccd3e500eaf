"""The vector engine's ops on whole numpy arrays, with the RNGD rules (docs/runtime.md §3.9).

f32 arithmetic flushes subnormal inputs and results to a zero of their own sign and writes every
NaN as 0x7fc00000; the bit operations and ``reinterpret`` leave bits alone. i32 ops wrap or
saturate as their names say. A shift count is the operand read as an unsigned number; a count of 32
or more shifts every bit out (an arithmetic right shift then leaves the sign). Reduces fold in index
order along the axes given, as the accumulator does over Time; ``reduce_tree4`` is the packet's
two-level tree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.numerics.scalars import flush_f32, has_special_f32
from tcpdsl.verify.vector_ops import (
    I32,
    I32_MAX,
    I32_MIN,
    BinaryArgMode,
    BinaryOp,
    ClipBinaryOpF32,
    ClipBinaryOpI32,
    FpBinary,
    FpBinaryOp,
    FpTernaryOp,
    FpUnaryOp,
    FxpBinaryOp,
    LogicBinaryOpF32,
    LogicBinaryOpI32,
    OP_DTYPE,
    MulF,
    ReduceOp,
    TernaryArgMode,
    fp_binary_alu,
    op_dtype,
)

Array = npt.NDArray[Any]

_SIGN: Final = np.uint32(0x80000000)
_LAST_SUBNORMAL: Final = np.uint32(0x007FFFFF)
_NO_CELL: Final = np.uint32(0xFFFFFFFF)  # what an empty array's smallest magnitude reads as
_WORD: Final = 32


def f32(x: object) -> Array:
    """``x`` as an f32 array with the RNGD rules applied (a fresh array)."""
    return flush_f32(np.array(x, dtype=np.float32))  # flushes the copy in place, touching only special cells


def read_f32(x: object) -> Array:
    """``x`` as :func:`f32` gives it, for reading only: ``x`` itself when it is an f32 array with no cell
    the rules change (the stream between two steps always is), else a fixed copy."""
    if isinstance(x, np.ndarray) and x.dtype == np.float32 and not has_special_f32(x):
        return x
    return f32(x)


def i32(x: object) -> Array:
    """``x`` as an i32 array, wrapping (a fresh array)."""
    return np.array(np.asarray(x).astype(np.int64) & 0xFFFFFFFF, dtype=np.uint32).view(np.int32)


def _saturate(x: Array) -> Array:
    return np.clip(x, I32_MIN, I32_MAX).astype(np.int32)


def _count(b: Array) -> Array:
    """A shift count: the operand's bits read unsigned, capped at 32 (every bit shifted out)."""
    return np.minimum(i32(b).view(np.uint32).astype(np.int64), _WORD)


def _shift_left(a: Array, b: Array) -> Array:
    return i32(i32(a).astype(np.int64) << _count(b))


def _logic_right(a: Array, b: Array) -> Array:
    return i32(i32(a).view(np.uint32).astype(np.int64) >> _count(b))


def _arith_right(a: Array, b: Array) -> Array:
    return i32(i32(a).astype(np.int64) >> np.minimum(_count(b), _WORD - 1))


def _bits(a: object) -> Array:
    return np.array(a, dtype=np.float32).view(np.uint32)


def mul_fxp(a: object, b: object) -> Array:
    """Q31 multiply ``((a * b >> 30) + 1) >> 1``, rounding to nearest; ``MIN * MIN`` gives MAX."""
    x, y = i32(a).astype(np.int64), i32(b).astype(np.int64)
    product = ((x * y >> 30) + 1) >> 1
    return _saturate(product)


def _abs_pick(a: Array, b: Array, smaller: bool) -> Array:
    """AbsMin/AbsMax: whichever operand has the smaller (larger) magnitude, ``b`` on a tie or a NaN."""
    wide = (lambda v: np.abs(v.astype(np.int64))) if a.dtype == np.int32 else np.abs
    with np.errstate(invalid="ignore"):
        pick_a = wide(a) < wide(b) if smaller else wide(a) > wide(b)
    return np.where(pick_a, a, b)


_INT_BINARY: Final[dict[object, Any]] = {
    LogicBinaryOpI32.BIT_AND: lambda a, b: a & b,
    LogicBinaryOpI32.BIT_OR: lambda a, b: a | b,
    LogicBinaryOpI32.BIT_XOR: lambda a, b: a ^ b,
    LogicBinaryOpI32.LEFT_SHIFT: _shift_left,
    LogicBinaryOpI32.LOGIC_RIGHT_SHIFT: _logic_right,
    LogicBinaryOpI32.ARITH_RIGHT_SHIFT: _arith_right,
    FxpBinaryOp.ADD_FXP: lambda a, b: i32(a.astype(np.int64) + b),
    FxpBinaryOp.ADD_FXP_SAT: lambda a, b: _saturate(a.astype(np.int64) + b),
    FxpBinaryOp.SUB_FXP: lambda a, b: i32(a.astype(np.int64) - b),
    FxpBinaryOp.SUB_FXP_SAT: lambda a, b: _saturate(a.astype(np.int64) - b),
    FxpBinaryOp.LEFT_SHIFT: _shift_left,
    FxpBinaryOp.LEFT_SHIFT_SAT: lambda a, b: _saturate(a.astype(np.int64) << np.minimum(_count(b), _WORD)),
    FxpBinaryOp.MUL_FXP: mul_fxp,
    FxpBinaryOp.MUL_INT: lambda a, b: i32(a.astype(np.int64) * b),
    FxpBinaryOp.LOGIC_RIGHT_SHIFT: _logic_right,
    FxpBinaryOp.ARITH_RIGHT_SHIFT: _arith_right,
    ClipBinaryOpI32.MIN: np.minimum,
    ClipBinaryOpI32.MAX: np.maximum,
    ClipBinaryOpI32.ABS_MIN: lambda a, b: _abs_pick(a, b, True),
    ClipBinaryOpI32.ABS_MAX: lambda a, b: _abs_pick(a, b, False),
    ClipBinaryOpI32.ADD_FXP: lambda a, b: i32(a.astype(np.int64) + b),
    ClipBinaryOpI32.ADD_FXP_SAT: lambda a, b: _saturate(a.astype(np.int64) + b),
}

_BIT_BINARY: Final[dict[object, Any]] = {
    LogicBinaryOpF32.BIT_AND: np.bitwise_and,
    LogicBinaryOpF32.BIT_OR: np.bitwise_or,
    LogicBinaryOpF32.BIT_XOR: np.bitwise_xor,
}

# The zero that wins a tie between +0 and -0 (as bits), by the op that picks.
_WINNING_ZERO: Final[dict[str, np.uint32]] = {"Max": np.uint32(0), "Min": _SIGN}


def _signed_zeros(picked: Array, pick: str, held: Callable[[], Array]) -> Array:
    """``picked`` (numpy's fmax or fmin, ``pick`` ``"Max"`` or ``"Min"``) with every zero result signed as if
    -0 were below +0: the max of zeros is -0 only when none is +0, the min +0 only when none is -0.
    ``held`` says, broadcastable to ``picked``, where an operand is the winning zero; it is asked only when
    some result is zero.

    numpy leaves a tie between +0 and -0 to its loop, which breaks it one way for a broadcast operand
    and another for a whole array; ordering the zeros makes the result the same in every order and
    shape (docs/runtime.md §3.9)."""
    zero = picked == 0
    if not zero.any():
        return picked
    wins = _WINNING_ZERO[pick]
    out = np.array(picked, dtype=np.float32)
    out.view(np.uint32)[zero] = np.where(np.broadcast_to(held(), out.shape)[zero], wins, wins ^ _SIGN)
    return out


def _ties_ordered(picked: Array, a: Array, b: Array, pick: str) -> Array:
    """``picked`` (numpy's fmax or fmin of the f32 ``a`` and ``b``, ``pick`` ``"Max"`` or ``"Min"``), signed as
    :func:`_signed_zeros` signs it, looking only where both operands are zeros: a zero result with one zero
    operand is that operand, which numpy returns as it is, so only a tie of two zeros needs the order."""
    zero = picked == 0
    if not zero.any():
        return picked
    x, y = np.asarray(a, np.float32), np.asarray(b, np.float32)
    tie = (x == 0) & (y == 0)
    if not tie.any():
        return picked
    # Two zeros differ in the sign bit only: the min is -0 when either is, the max +0 when either is.
    x_bits, y_bits = x.view(np.uint32), y.view(np.uint32)
    signed = (x_bits | y_bits) if pick == "Min" else (x_bits & y_bits)
    out = np.array(picked, dtype=np.float32)
    out.view(np.uint32)[tie] = np.broadcast_to(signed, out.shape)[tie]
    return out


def fmax(a: Array, b: Array) -> Array:
    """The larger of ``a`` and ``b``: the other operand when one is NaN, and -0 below +0."""
    return _ties_ordered(np.fmax(a, b), a, b, "Max")


def fmin(a: Array, b: Array) -> Array:
    """The smaller of ``a`` and ``b``: the other operand when one is NaN, and -0 below +0."""
    return _ties_ordered(np.fmin(a, b), a, b, "Min")


# f32 min/max return the other operand when one is NaN, as the ALUs do.
_FLOAT_BINARY: Final[dict[object, Any]] = {
    FpBinaryOp.ADD_F: np.add,
    FpBinaryOp.SUB_F: np.subtract,
    FpBinaryOp.DIV_F: np.divide,
    ClipBinaryOpF32.ADD: np.add,
    ClipBinaryOpF32.MIN: fmin,
    ClipBinaryOpF32.MAX: fmax,
    ClipBinaryOpF32.ABS_MIN: lambda a, b: _abs_pick(a, b, True),
    ClipBinaryOpF32.ABS_MAX: lambda a, b: _abs_pick(a, b, False),
}

_UNARY: Final[dict[FpUnaryOp, Any]] = {
    FpUnaryOp.EXP: np.exp,
    FpUnaryOp.NEG_EXP: lambda x: np.exp(-x),
    FpUnaryOp.SQRT: np.sqrt,
    FpUnaryOp.TANH: np.tanh,
    FpUnaryOp.SIGMOID: lambda x: np.float32(1) / (np.float32(1) + np.exp(-x)),
    FpUnaryOp.LOG: np.log,
    FpUnaryOp.SIN: np.sin,
    FpUnaryOp.COS: np.cos,
}


# The same tables by the id of each op: an enum member hashes in Python, and the float ops run on every step
# of a pass. A member lives as long as its class, so its id is its own.
_FLOAT_BY_ID: Final[dict[int, Any]] = {id(op): function for op, function in _FLOAT_BINARY.items()}
_UNARY_BY_ID: Final[dict[int, Any]] = {id(op): function for op, function in _UNARY.items()}


# The ops below write what overflow and NaN give by the rules, so their floating-point flags tell the caller
# nothing. As a decorator the state is set and reset by the call itself: two Python calls fewer than a
# ``with`` block, on functions every pass step runs. The bare forms (``f32_unary``, ``f32_binary``,
# ``fold``) leave it to their caller, which sets it once for all the steps of a pass.
QUIET: Final = np.errstate(all="ignore")


def unary_function(op: FpUnaryOp) -> Any:
    """The numpy function :func:`fp_unary` computes ``op`` with, for :func:`f32_unary`."""
    return _UNARY_BY_ID[id(op)]


def f32_unary(function: Any, x: object, clean: bool) -> Array:
    """:func:`fp_unary` of the op whose :func:`unary_function` is ``function``, floating-point flags left to
    the caller (:data:`QUIET`)."""
    # The fresh result gets the rules in place (nothing else holds it; a 0-d one, which numpy returns as a
    # scalar, becomes a 0-d array).
    return flush_f32(function(x if clean else read_f32(x)))


@QUIET
def fp_unary(op: FpUnaryOp, x: object, *, clean: bool = False) -> Array:
    """``op(x)`` on f32. ``clean`` says ``x`` is an f32 array the rules leave alone, as the stream between
    two steps of a pass is when the step before applied them: it is read without a scan."""
    return f32_unary(_UNARY_BY_ID[id(op)], x, clean)


def _arguments(mode: BinaryArgMode, s: Array, o: Array) -> tuple[Array, Array]:
    # Each op is element-wise and broadcasts a pair by itself; only a mode that reads one input twice
    # must broadcast it to the other's shape first, so the result has the stream's shape whatever the mode.
    if mode is BinaryArgMode.MODE01:
        return s, o
    if mode is BinaryArgMode.MODE10:
        return o, s
    stream, operand = np.broadcast_arrays(s, o)
    picks = {"s": stream, "o": operand}
    return picks[mode.value[0]], picks[mode.value[1]]


def float_function(op: BinaryOp | FpBinary) -> Any:
    """The numpy function :func:`binary` computes the f32 arithmetic op ``op`` with (an Fp op, FpDiv's
    ``DIV_F``, an f32 Clip op), for :func:`f32_binary`."""
    if isinstance(op, FpBinaryOp):
        fp_binary_alu(op)  # a bare MUL_F is refused by name, as in the pass
    return np.multiply if isinstance(op, MulF) else _FLOAT_BY_ID[id(op)]


# The f32 ops whose every result cell is a cell of one of their inputs, or a zero: read with the rules
# applied, their inputs hold no subnormal and only the canonical NaN, so their result needs no fixing.
_PICKING: Final = frozenset(id(op) for op in (ClipBinaryOpF32.MIN, ClipBinaryOpF32.MAX, ClipBinaryOpF32.ABS_MIN,
                                              ClipBinaryOpF32.ABS_MAX))


def picks(op: BinaryOp | FpBinary) -> bool:
    """Whether the f32 op ``op`` only picks one of its inputs' cells (a min or a max), for :func:`f32_binary`."""
    return id(op) in _PICKING


def f32_binary(function: Any, stream: object, operand: object, mode: BinaryArgMode, clean: bool,
               operand_clean: bool, picking: bool = False) -> Array:
    """:func:`binary` of the f32 op whose :func:`float_function` is ``function`` (and :func:`picks` is
    ``picking``), floating-point flags left to the caller (:data:`QUIET`)."""
    s: Any = stream if clean else read_f32(stream)  # said clean: an f32 array
    o: Any = operand if operand_clean else read_f32(operand)
    # The usual mode picks the pair as given: no call to pick it.
    a, b = (s, o) if mode is BinaryArgMode.MODE01 else _arguments(mode, s, o)
    result = function(a, b)
    if picking and type(result) is np.ndarray and result.flags.c_contiguous:
        return result  # what flush_f32 returns for it, without the scan: a fresh f32 array, nothing to fix
    return flush_f32(result)  # the fresh result, fixed in place as fp_unary's


@QUIET
def binary(op: BinaryOp | FpBinary, stream: object, operand: object,
           mode: BinaryArgMode = BinaryArgMode.MODE01, *, clean: bool = False, operand_clean: bool = False) -> Array:
    """A binary op of the Logic, Fxp, Fp or Clip cluster, its inputs picked by ``mode``; ``clean`` as for
    :func:`fp_unary`, said of ``stream``, and ``operand_clean`` said of ``operand``."""
    if isinstance(op, LogicBinaryOpF32):
        a, b = _arguments(mode, _bits(stream), _bits(operand))
        return np.asarray(_BIT_BINARY[op](a, b), dtype=np.uint32).view(np.float32)
    if OP_DTYPE[type(op)] == I32:  # op_dtype's table, read without the call: binary runs on every step
        a, b = _arguments(mode, i32(stream), i32(operand))
        return np.asarray(_INT_BINARY[op](a, b), dtype=np.int32)
    return f32_binary(float_function(op), stream, operand, mode, clean, operand_clean, id(op) in _PICKING)


def fp_div(stream: object, operand: object, mode: BinaryArgMode = BinaryArgMode.MODE01, *,
           clean: bool = False, operand_clean: bool = False) -> Array:
    """The FpDiv stage: ``stream / operand`` (by default) on f32."""
    return binary(FpBinaryOp.DIV_F, stream, operand, mode, clean=clean, operand_clean=operand_clean)


def fma(a: object, b: object, c: object) -> Array:
    """``a * b + c`` on f32 with one rounding.

    The product of two f32 is exact in f64; the sum is then rounded to odd in f64 (its error found by
    a two-sum), and rounding that to f32 gives the correctly rounded fused result.
    """
    x, y, z = np.broadcast_arrays(f32(a), f32(b), f32(c))
    with np.errstate(all="ignore"):
        p = x.astype(np.float64) * y.astype(np.float64)
        s = p + z
        back = s - p
        error = (p - (s - back)) + (z - back)
        even = (s.view(np.uint64) & np.uint64(1)) == 0
        inexact = (error != 0) & even & np.isfinite(s)
        s = np.where(inexact, np.nextafter(s, np.where(error > 0, np.inf, -np.inf)), s)
        return f32(s.astype(np.float32))


def fp_ternary(op: FpTernaryOp, stream: object, o0: object, o1: object,
               mode: TernaryArgMode = TernaryArgMode.MODE012) -> Array:
    """``FMA_F`` with its inputs picked by ``mode`` (MODE012 is ``stream * o0 + o1``)."""
    s, x, y = np.broadcast_arrays(f32(stream), f32(o0), f32(o1))
    picks = {"s": s, "0": x, "1": y}
    first, second, third = (picks[c] for c in mode.value)
    return fma(first, second, third)


def fxp_to_fp(x: object, int_width: int) -> Array:
    """An i32 read as fixed point with ``int_width`` integer bits, rounded to the nearest f32 (ties to even)."""
    scaled = i32(x).astype(np.float64) / float(2 ** (31 - int_width))  # exact: a power-of-two scale
    return f32(scaled.astype(np.float32))


def fp_to_fxp(x: object, int_width: int) -> Array:
    """An f32 times ``2**(31 - int_width)``, rounded half away from zero and saturated; NaN goes to MAX or MIN
    by its sign bit."""
    raw = np.array(x, dtype=np.float32)
    negative = (raw.view(np.uint32) & _SIGN) != 0
    value = f32(raw).astype(np.float64) * float(2 ** (31 - int_width))
    with np.errstate(invalid="ignore"):
        rounded = np.where(value >= 0, np.floor(value + 0.5), np.ceil(value - 0.5))
    rounded = np.where(np.isnan(rounded), np.where(negative, I32_MIN, I32_MAX), rounded)
    return np.clip(rounded, I32_MIN, I32_MAX).astype(np.int32)


def reinterpret(x: object, dtype: str) -> Array:
    """The same 32 bits read as ``dtype`` (``"i32"`` or ``"f32"``)."""
    raw = np.ascontiguousarray(x)
    return raw.view(np.int32 if dtype == I32 else np.float32).copy()


def identity(op: ReduceOp) -> Array:
    """The identity of a reduce op as a 0-d array of its dtype."""
    if op_dtype(op) == I32:
        return np.array(op.identity, dtype=np.int32)
    return np.array(op.identity, dtype=np.float32)


_FOLD_STEPS: Final[dict[str, Callable[[Array, Array], Array]]] = {
    "Add": np.add, "Mul": np.multiply, "Max": fmax, "Min": fmin}


def _combine(op: ReduceOp, acc: Array, x: Array) -> Array:
    name = op.reference
    if op_dtype(op) == I32:
        total = acc.astype(np.int64) + x
        if name == "Add":
            return i32(total)
        if name == "AddSat":
            return _saturate(total)
        return np.maximum(acc, x) if name == "Max" else np.minimum(acc, x)
    with np.errstate(all="ignore"):
        combined = _FOLD_STEPS[name](acc, x)
    return f32(combined)


def _converted(op: ReduceOp, x: object) -> Array:
    return i32(x) if op_dtype(op) == I32 else f32(x)


# f32 folds whose every step rounds once: with no subnormal partial result, the per-step flush
# changes nothing but NaN payloads (a NaN stays NaN), so the whole fold is one accumulate.
_ACCUMULATES: Final[dict[str, Any]] = {"Add": np.add, "Mul": np.multiply}
# f32 folds whose every step returns one of its (already flushed) operands: the flush is a no-op.
# fmax and fmin skip NaN, so the fold's value is the largest (smallest) number, if any; its zeros are
# signed as :func:`fmax` and :func:`fmin` sign them.
_PICKS: Final[dict[str, Any]] = {"Max": np.fmax, "Min": np.fmin}


def _least_magnitude(x: Array, *, in_place: bool = False) -> int:
    """The smallest nonzero magnitude (the bits without the sign) among the cells of the f32 array ``x``, less
    one, as an unsigned word: on the magnitude less one a zero wraps round to the top, so two passes and a
    reduce find it (the top for an array of zeros, or none). ``in_place`` lets the passes work in ``x`` itself (a
    buffer of the caller's own, whose values it then no longer needs)."""
    bits = x.view(np.uint32)
    magnitude = np.bitwise_and(bits, ~_SIGN, out=bits if in_place else None)
    np.subtract(magnitude, np.uint32(1), out=magnitude)
    return int(np.minimum.reduce(magnitude, axis=None, initial=_NO_CELL))


def _subnormal(x: Array, *, in_place: bool = False) -> bool:
    """Whether any cell of the f32 array ``x`` is a nonzero with a zero exponent field: the subnormals are
    exactly the magnitudes below the smallest normal's. ``in_place`` as for :func:`_least_magnitude`."""
    return bool(_least_magnitude(x, in_place=in_place) < _LAST_SUBNORMAL)


# Rows of at least this many cells are folded a row at a time: along the first axis of a wide array,
# ufunc.accumulate steps cell by cell at the array's stride, several times slower than a row-wide op.
_WIDE_ROWS: Final = 256

_PLUS_ZERO: Final = np.float32(0.0)  # the Add fold's identity, where every sum starts


def _narrow_rows(values: Array) -> bool:
    """Whether a fold along the first axis of ``values`` may be one add.reduce of its C-ordered copy: more
    than one row, each of more than one cell (numpy sums a single column pairwise, being the axis contiguous
    in memory) and fewer than :data:`_WIDE_ROWS` (which the row by row fold already runs row-wide)."""
    return values.ndim > 1 and values.shape[0] > 1 and values.shape[0] < values.size < values.shape[0] * _WIDE_ROWS


# An addend of a smaller magnitude (but not 0) may make a partial sum subnormal: 2**-102, as f32 bits.
_SMALLEST_ADDEND: Final = np.uint32(0x0C800000)


def _wide_sum_in_order(values: Array) -> bool:
    """Whether ``values`` folds along its first axis in rows of at least :data:`_WIDE_ROWS` cells (which the fold
    otherwise runs a row at a time), more than one of them, no axis repeats its cells (stride 0), and another axis
    lies closer together in memory than the first: numpy's reduce then runs its inner loop along that axis and adds
    whole rows in index order, where along the innermost axis it would sum pairwise. A repeating axis is left out
    of that order, which would then run along the rows again."""
    if values.ndim < 2 or values.shape[0] < 2 or values.size < values.shape[0] * _WIDE_ROWS or 0 in values.strides:
        return False
    first = abs(values.strides[0])
    return any(abs(stride) < first for n, stride in zip(values.shape[1:], values.strides[1:]) if n > 1)


def _no_small_addend(values: Array) -> bool:
    """Whether every cell of the f32 ``values`` is a zero, at least 2**-102 in magnitude, an infinity or NaN."""
    return bool(_least_magnitude(values) >= _SMALLEST_ADDEND - 1)


def _partials(function: Any, start: Array, values: Array) -> Array:
    """``start`` then each partial result of folding ``values`` along its first axis in index order, as
    ``function.accumulate`` gives them (each row one rounded op on the row before)."""
    if start.size < _WIDE_ROWS:
        return np.asarray(function.accumulate(np.concatenate([start[None], values]), axis=0))
    out = np.empty((values.shape[0] + 1, *start.shape), dtype=np.float32)
    out[0] = start
    for i, row in enumerate(values):
        function(out[i], row, out=out[i + 1])
    return out


@QUIET
def reduce_fold(op: ReduceOp, x: object, axis: int, *, clean: bool = False) -> Array:
    """Fold ``op`` along ``axis`` in index order, starting from its identity (a Time accumulation);
    ``clean`` as for :func:`fp_unary`.

    Each step is ``_combine``; the f32 folds take whole-array shortcuts that give the same bits
    (every f32 operation here is correctly rounded, so only the order of the steps matters).
    """
    return fold(op, x, axis, clean)


def fold(op: ReduceOp, x: object, axis: int, clean: bool) -> Array:
    """:func:`reduce_fold`, floating-point flags left to the caller (:data:`QUIET`)."""
    f32_fold = OP_DTYPE[type(op)] != I32
    read = (np.asarray(x) if clean else read_f32(x)) if f32_fold else i32(x)  # only read: no copy needed
    values = read if axis == 0 else np.moveaxis(read, axis, 0)
    name = op.reference
    if values.shape[0] and f32_fold and name in _PICKS:
        # Any order finds the same largest (smallest) value, and with -0 below +0 the same zero: the
        # identity (an infinity, which wins only over NaN) is taken last, not copied in front.
        pick = _PICKS[name]
        rows, along = values, 0
        if values.ndim > 1 and values.size < values.shape[0] * _WIDE_ROWS:
            # Rows of few cells: numpy's reduce pays per row along the first axis and sweeps along a contiguous
            # last one, so a copy with the fold's axis last costs a fraction of the reduce it saves.
            rows, along = np.ascontiguousarray(np.moveaxis(values, 0, -1)), -1
        picked = _signed_zeros(pick(pick.reduce(rows, axis=along), identity(op)), name,
                               lambda: np.any(rows.view(np.uint32) == _WINNING_ZERO[name], axis=along))
        # Each cell is one of the read values' (no subnormal, only the canonical NaN), the identity or a
        # zero: nothing the rules change, so the fresh array is the result as it is.
        if type(picked) is np.ndarray and picked.flags.c_contiguous:
            return picked
        return np.array(picked, dtype=np.float32, order="C")  # as f32 gives it: a C-ordered array, 0-d too
    if name == "Add" and f32_fold and _narrow_rows(values) and np.minimum.reduce(values, axis=None) >= 0:
        # A sum of numbers none below zero (and no NaN): each partial result is +0 or at least the largest
        # number added so far (rounding is monotone), so none is subnormal and the per-step rules change
        # nothing. numpy adds the rows of a C-ordered array one at a time, in order, into the running row
        # (pairwise summation runs only along the axis contiguous in memory): the sequential fold's bits.
        return f32(np.add.reduce(np.ascontiguousarray(values), axis=0, initial=_PLUS_ZERO))
    if name == "Add" and f32_fold and _wide_sum_in_order(values) and _no_small_addend(values):
        # Every partial sum is a multiple of 2**-125 (docs/runtime.md §3.9, "Sums without small addends"): none is
        # subnormal, so the per-step rules change nothing the rules on the result do not. numpy adds each row into
        # the running row in index order when the reduced axis is not the innermost in memory.
        return f32(np.add.reduce(values, axis=0, initial=_PLUS_ZERO))
    acc = np.full(values.shape[1:], identity(op))
    if values.shape[0] and f32_fold and name in _ACCUMULATES:
        partial = _partials(_ACCUMULATES[name], acc, values)
        result = f32(partial[-1])  # a copy: the scan below works in the partials' own buffer
        if not _subnormal(partial, in_place=True):
            return result
    for step in values:
        acc = _combine(op, acc, step)
    return acc


def reduce_tree4(op: ReduceOp, x: object, axis: int) -> Array:
    """The packet tree ``op(op(a, b), op(c, d))`` along an ``axis`` of length 4."""
    a, b, c, d = np.moveaxis(_converted(op, x), axis, 0)
    return _combine(op, _combine(op, a, b), _combine(op, c, d))
