"""Scalar types of the contraction engine and the RNGD rules for casting between them.

Each scalar class is both a type argument (``CollectTensor[bf16, ...]``) and a runtime tag carrying
its wire width, its numpy storage dtype and whether it is a float. The casts here do not rely on
numpy/ml_dtypes promotion: ml_dtypes rounds correctly but keeps subnormals, does not canonicalise
NaN and turns f32 values above 464 into NaN for e4m3, all of which differ from RNGD.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import ml_dtypes
import numpy as np
import numpy.typing as npt

from tcpdsl.errors import DtypeError

Array = npt.NDArray[Any]

SCALAR_STAGE: Final = "dtype"
_F32_CANONICAL_NAN: Final = np.uint32(0x7FC00000)
_E4M3_MAX: Final = 448.0


class Scalar:
    """Base of every scalar tag. Subclasses are never instantiated."""

    name: ClassVar[str]
    bits: ClassVar[int]  # wire bits: what packet sizes are computed from
    value_bits: ClassVar[int]  # two's-complement width of the value (integers only)
    numpy: ClassVar[np.dtype[Any]]
    is_float: ClassVar[bool]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.name] = cls

    def __new__(cls, *args: object, **kwargs: object) -> Scalar:
        raise TypeError(f"{cls.__name__} is a scalar tag, not a value type")


_REGISTRY: dict[str, type[Scalar]] = {}


class i4(Scalar):
    name = "i4"
    bits = 4
    value_bits = 4
    numpy = np.dtype(ml_dtypes.int4)
    is_float = False


class i5(Scalar):
    """A zero-point-subtracted i4: 4 bits on the wire, a 5-bit value staged in a byte."""

    name = "i5"
    bits = 4
    value_bits = 5
    numpy = np.dtype(np.int8)
    is_float = False


class i8(Scalar):
    name = "i8"
    bits = 8
    value_bits = 8
    numpy = np.dtype(np.int8)
    is_float = False


class i9(Scalar):
    """A zero-point-subtracted i8: 8 bits on the wire, a 9-bit value staged in 16 bits."""

    name = "i9"
    bits = 8
    value_bits = 9
    numpy = np.dtype(np.int16)
    is_float = False


class f8e4m3(Scalar):
    name = "f8e4m3"
    bits = 8
    value_bits = 8
    numpy = np.dtype(ml_dtypes.float8_e4m3fn)
    is_float = True


class f8e5m2(Scalar):
    name = "f8e5m2"
    bits = 8
    value_bits = 8
    numpy = np.dtype(ml_dtypes.float8_e5m2)
    is_float = True


class bf16(Scalar):
    name = "bf16"
    bits = 16
    value_bits = 16
    numpy = np.dtype(ml_dtypes.bfloat16)
    is_float = True


class i32(Scalar):
    name = "i32"
    bits = 32
    value_bits = 32
    numpy = np.dtype(np.int32)
    is_float = False


class f32(Scalar):
    name = "f32"
    bits = 32
    value_bits = 32
    numpy = np.dtype(np.float32)
    is_float = True


ScalarLike = type[Scalar] | str


def scalar(name: ScalarLike) -> type[Scalar]:
    """The scalar class called ``name`` (a class is returned unchanged)."""
    if isinstance(name, type):
        return name
    found = _REGISTRY.get(name)
    if found is None:
        known = ", ".join(_REGISTRY)
        raise DtypeError(SCALAR_STAGE, "UnknownDtype", f"unknown scalar type {name!r}", hint=f"use one of {known}")
    return found


def accumulator(frm: ScalarLike) -> type[Scalar]:
    """The accumulator a value of ``frm`` widens to: ``i32`` for integers, ``f32`` for floats."""
    return f32 if scalar(frm).is_float else i32


def _flush_f32(x: Array) -> Array:
    """RNGD f32 hygiene: subnormals become zeros of their own sign and NaN becomes 0x7fc00000.

    Works on the bit pattern and only rewrites the few cells whose exponent field is all zeros
    (zero or subnormal) or all ones (infinity or NaN), since this runs on every operand. The
    caller passes an array it owns.
    """
    out = np.ascontiguousarray(x, dtype=np.float32)
    bits = out.view(np.uint32)
    # exponent - 1 (in units of the exponent field) wraps around for a zero field, so one unsigned
    # comparison finds both extremes.
    shifted = np.bitwise_and(bits, np.uint32(0x7F800000))
    np.subtract(shifted, np.uint32(0x00800000), out=shifted)
    special = np.flatnonzero(shifted >= np.uint32(0x7F000000))
    if special.size:
        picked = bits.reshape(-1)[special]
        exponent = picked & np.uint32(0x7F800000)
        nan = (exponent != 0) & ((picked & np.uint32(0x007FFFFF)) != 0)
        picked = np.where(exponent == 0, picked & np.uint32(0x80000000), picked)
        bits.reshape(-1)[special] = np.where(nan, _F32_CANONICAL_NAN, picked)
    return out


def _narrow_bf16(wide: Array) -> Array:
    """f32 to bf16 by the RNGD rule, fixing up only the cells that need it.

    ml_dtypes rounds to nearest even. Only cells that narrow to a zero or subnormal exponent, to the
    smallest normal (an f32 subnormal may round up to it, but RNGD flushes it first), or to an
    infinity or NaN can differ; those few are redone with the f32 input flushed, after which a
    subnormal result is impossible and NaN narrows to the canonical 0x7fc0.
    """
    with np.errstate(invalid="ignore"):
        narrow = wide.astype(bf16.numpy)
    bits = narrow.view(np.uint16)
    field = np.bitwise_and(bits, np.uint16(0x7F80))
    # Exponent fields 0, 1 and 255 are the suspects: (field - 0x81) wraps for 0 and 1.
    np.subtract(field, np.uint16(0x0081), out=field)
    suspects = np.flatnonzero(field >= np.uint16(0x7EFF))
    if suspects.size:
        narrow.reshape(-1)[suspects] = _flush_f32(wide.reshape(-1)[suspects]).astype(bf16.numpy)
    return narrow


def _widen_bf16(stored: Array) -> Array:
    """bf16 to f32 with the RNGD fixes applied on the 16-bit patterns (half the bytes of f32)."""
    bits = stored.view(np.uint16)
    shifted = np.bitwise_and(bits, np.uint16(0x7F80))
    np.subtract(shifted, np.uint16(0x0080), out=shifted)
    special = np.flatnonzero(shifted >= np.uint16(0x7F00))
    wide = stored.astype(np.float32)
    if special.size:
        wide.reshape(-1)[special] = _flush_f32(wide.reshape(-1)[special])
    return wide


def _wrap(values: Array, bits: int) -> Array:
    """Two's-complement wrap of int64 ``values`` to ``bits`` bits."""
    half = np.int64(1) << (bits - 1)
    return ((values + half) & ((half << 1) - 1)) - half


def _as_int64(array: Array) -> Array:
    if array.dtype.kind in "iub" or array.dtype == np.dtype(ml_dtypes.int4):
        return array.astype(np.int64)
    real = array.astype(np.float64)
    # Float to integer rounds to nearest even; NaN and infinities have no integer, they become 0.
    real = np.where(np.isfinite(real), np.rint(real), 0.0)
    # Every target is at most 32 bits wide, so reducing modulo 2**32 first keeps the wrap exact
    # and the int64 conversion in range.
    return np.fmod(real, 2.0**32).astype(np.int64)


def cast(array: npt.ArrayLike, to: ScalarLike) -> Array:
    """Narrow (or convert) ``array`` to ``to`` by the RNGD rules, stored in ``to.numpy``.

    * bf16: round to nearest even, subnormals flush to signed zero, NaN becomes 0x7fc0.
    * f8e4m3: saturates at +-448 (infinities too); NaN stays NaN.
    * f8e5m2: round to nearest even, overflow to infinity.
    * f32: subnormals flush, NaN becomes 0x7fc00000.
    * integers: wrap to their value width (i5 to 5 bits, i9 to 9 bits).
    """
    target = scalar(to)
    src = np.asarray(array)
    if not target.is_float:
        return _wrap(_as_int64(src), target.value_bits).astype(target.numpy)
    with np.errstate(over="ignore", invalid="ignore"):
        if target is bf16:
            # Narrowing only reads its input, so an f32 array needs no copy.
            return _narrow_bf16(np.asarray(src, dtype=np.float32))
        x = _flush_f32(src.astype(np.float32))
    if target is f32:
        return x
    if target is f8e4m3:
        clipped = np.where(np.isnan(x), x, np.clip(x, -_E4M3_MAX, _E4M3_MAX))
        return clipped.astype(f8e4m3.numpy)
    return x.astype(target.numpy)


def widen(array: npt.ArrayLike, frm: ScalarLike) -> Array:
    """Widen values stored as ``frm`` to the accumulator (engine §3.2), as int32 or float32.

    Integers sign-extend the low ``value_bits`` of the stored value; bf16 flushes subnormals and
    canonicalises NaN; f8 widens exactly.
    """
    source = scalar(frm)
    src = np.asarray(array)
    if not source.is_float:
        return _wrap(_as_int64(src), source.value_bits).astype(np.int32)
    if source is bf16:
        return _widen_bf16(np.ascontiguousarray(src, dtype=bf16.numpy))
    if source is f32:
        return _flush_f32(src.astype(np.float32))
    return src.astype(source.numpy).astype(np.float32)


def poison(dtype: ScalarLike) -> Any:
    """The value the simulator writes into Top padding: NaN for floats, the most negative value
    for integers (integer poison is also tracked by a mask, since any value is a legal integer)."""
    kind = scalar(dtype)
    if kind.is_float:
        return kind.numpy.type(np.nan)
    return kind.numpy.type(-(1 << (kind.value_bits - 1)))
