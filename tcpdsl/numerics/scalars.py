"""Scalar types of the contraction engine and the RNGD rules for casting between them.

Each scalar class is both a type argument (``CollectTensor[bf16, ...]``) and a runtime tag carrying
its wire width, its numpy storage dtype and whether it is a float. The casts here do not rely on
numpy/ml_dtypes promotion: ml_dtypes rounds correctly but keeps subnormals, does not canonicalise
NaN and turns f32 values above 464 into NaN for e4m3, all of which differ from RNGD.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Final

import ml_dtypes
import numpy as np
import numpy.typing as npt

from tcpdsl.errors import DtypeError
from tcpdsl.verify.dtypes import DTYPES

Array = npt.NDArray[Any]
IntArray = npt.NDArray[np.intp]

SCALAR_STAGE: Final = "dtype"
_F32_CANONICAL_NAN: Final = np.uint32(0x7FC00000)
_F32: Final = np.dtype(np.float32)
_U32: Final = np.dtype(np.uint32)
_U16: Final = np.dtype(np.uint16)
_E4M3_MAX: Final = 448.0
_BLOCK: Final = 1 << 17  # cells narrowed or widened per pass


class Scalar:
    """Base of every scalar tag. Subclasses are never instantiated.

    A subclass is named for a row of the dtype table (:data:`tcpdsl.verify.dtypes.DTYPES`), e.g.
    ``class i9(Scalar)``, and takes its widths, float-ness and numpy storage dtype from that row.
    """

    name: ClassVar[str]
    bits: ClassVar[int]  # wire bits: what packet sizes are computed from
    value_bits: ClassVar[int]  # two's-complement width of the value (integers only)
    numpy: ClassVar[np.dtype[Any]]
    is_float: ClassVar[bool]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        row = DTYPES[cls.__name__]
        cls.name = row.name
        cls.bits = row.wire_bits
        cls.value_bits = row.value_bits
        cls.numpy = storage_dtype(row.storage)
        cls.is_float = row.is_float
        _REGISTRY[cls.name] = cls

    def __new__(cls, *args: object, **kwargs: object) -> Scalar:
        raise TypeError(f"{cls.__name__} is a scalar tag, not a value type")

    @classmethod
    def cast(cls, array: npt.ArrayLike) -> Array:
        """``array`` narrowed to this type by the chip's rules, as a typed tensor would hold it
        (``tcp.bf16.cast(x)``): unlike ml_dtypes, bf16 keeps no subnormal (docs/runtime.md §3.2)."""
        return cast(_numbers(array, f"{cls.__name__}.cast"), cls)  # the module's function

    @classmethod
    def widen(cls, array: npt.ArrayLike) -> Array:
        """Values stored as this type widened to its accumulator (int32 or float32) as the
        Multiplier widens them (docs/runtime.md §3.2)."""
        return widen(_numbers(array, f"{cls.__name__}.widen"), cls)  # the module's function


_REGISTRY: dict[str, type[Scalar]] = {}


def is_real(dtype: np.dtype[Any]) -> bool:
    """Whether ``dtype`` holds real numbers: bool, integers, floats, or ml_dtypes' own types (which
    numpy files under kind ``V``, as it does raw bytes and structured records, which are not)."""
    return dtype.kind in "biuf" or (dtype.kind == "V" and not issubclass(dtype.type, np.void))


def _numbers(array: npt.ArrayLike, what: str) -> Array:
    """``array`` as a numpy array of real numbers, else a DtypeError saying what it holds."""
    try:
        values = np.asarray(array)
    except (TypeError, ValueError) as error:
        raise DtypeError(SCALAR_STAGE, "NotNumbers", f"{what} cannot read the data as an array: {error}",
                         hint="pass integers or floats (numpy, ml_dtypes)") from None
    if not is_real(values.dtype):
        raise DtypeError(SCALAR_STAGE, "NotNumbers", f"{what} takes real numbers, got an array of {values.dtype}",
                         hint="pass integers or floats (numpy, ml_dtypes)")
    return values


def storage_dtype(name: str) -> np.dtype[Any]:
    """The numpy dtype a storage name of the dtype table stands for (ml_dtypes' own types first)."""
    found = getattr(ml_dtypes, name, None)
    return np.dtype(found if found is not None else name)


class i4(Scalar):
    """A 4-bit integer."""


class i5(Scalar):
    """A zero-point-subtracted i4: 4 bits on the wire, a 5-bit value staged in a byte."""


class i8(Scalar):
    """An 8-bit integer."""


class i9(Scalar):
    """A zero-point-subtracted i8: 8 bits on the wire, a 9-bit value staged in 16 bits."""


class f8e4m3(Scalar):
    """An 8-bit float with 4 exponent and 3 mantissa bits, saturating at 448."""


class f8e5m2(Scalar):
    """An 8-bit float with 5 exponent and 2 mantissa bits."""


class bf16(Scalar):
    """bfloat16: the exponent range of f32 with 7 mantissa bits."""


class i32(Scalar):
    """The integer accumulator."""


class f32(Scalar):
    """The float accumulator."""


ScalarLike = type[Scalar] | str
_BF16: Final = bf16.numpy


def scalar(name: ScalarLike) -> type[Scalar]:
    """The scalar class called ``name`` (a class is returned unchanged)."""
    if isinstance(name, type):
        return name
    found = _REGISTRY.get(name)
    if found is None:
        known = ", ".join(_REGISTRY)
        raise DtypeError(SCALAR_STAGE, "UnknownDtype", f"unknown scalar type {name!r}", hint=f"use one of {known}")
    return found


_NO_CELLS: Final = np.empty(0, dtype=np.intp)
_NO_CELLS.setflags(write=False)


# Per (word dtype, field, low): the magnitude mask, ``low``, the threshold, where a zero lands and ``field``, as
# numpy scalars of the word type, built once: making them on every call cost more than the check itself.
_ExtremeConstants = tuple[np.generic, np.generic, np.generic, np.generic, np.generic]
_extreme_constants: dict[tuple[np.dtype[Any], int, int], _ExtremeConstants] = {}


def _constants(dtype: np.dtype[Any], field: int, low: int) -> _ExtremeConstants:
    word = dtype.type
    top = 8 * dtype.itemsize
    found = _extreme_constants[dtype, field, low] = (
        word((1 << (top - 1)) - 1), word(low), word(field - low), word((1 << top) - low), word(field))
    return found


def _extremes(bits: Array, field: int, low: int, scratch: Array | None = None) -> IntArray:
    """Flat indices of the nonzero cells whose magnitude (the bits without the sign) is below ``low`` or at
    least ``field`` (``bits`` of at least one dimension, read flattened): for an exponent field and a power
    of two, the cells whose exponent field (``bits & field``) is below ``low`` or all ones.

    Zeros of either sign convert exactly both ways and need no fixing; integer data, ReLU outputs
    and pruned weights hold many, so they are left out rather than sent down the slow path. On the
    magnitude (the bits without the sign) ``magnitude - low`` wraps around below ``low``, so one
    unsigned comparison finds both ends, a zero landing on one known value; only the few cells
    found are fixed up. ``scratch`` (as long as ``bits``, of its dtype) saves allocating the work
    array on every block.
    """
    dtype = bits.dtype
    constants = _extreme_constants.get((dtype, field, low))
    magnitude, start, threshold, zero, top = constants if constants is not None else _constants(dtype, field, low)
    shifted = np.bitwise_and(bits, magnitude, out=None if scratch is None else scratch[:bits.size])
    np.subtract(shifted, start, out=shifted)
    # The ufunc's own reduce: ndarray.max goes through a Python wrapper, a cost paid on every block.
    largest = np.maximum.reduce(shifted, axis=None, initial=0)
    if largest < threshold:  # the usual case: nothing to fix, no index pass
        return _NO_CELLS
    if largest == zero:
        # Zeros and no subnormal (which lands above them): what is left to find is a magnitude from ``field`` up.
        np.add(shifted, start, out=shifted)
        if np.maximum.reduce(shifted, axis=None, initial=0) < top:
            return _NO_CELLS
        np.subtract(shifted, start, out=shifted)
    return np.flatnonzero((shifted >= threshold) & (shifted != zero))


# What :func:`_small_extremes` reads a word type by: its signed twin, and 1 << (bits - 1), the sign bit.
_Words = tuple[np.dtype[Any], int]
_WORDS32: Final[_Words] = (np.dtype(np.int32), 1 << 31)
_WORDS16: Final[_Words] = (np.dtype(np.int16), 1 << 15)
# Up to this many cells, the arg-extremes of :func:`_small_extremes` (no work array, no write) cost less than
# :func:`_extremes`' passes.
_SMALL_SCAN: Final = 1 << 14
# From this many cells on, converting by integer passes over the bit patterns costs less than ml_dtypes' loop:
# widening shifts each pattern in one pass, narrowing takes five.
_BY_WORDS: Final = 1 << 13
_NARROW_BY_WORDS: Final = 1 << 14


def _small_extremes(bits: Array, words: _Words, field: int, low: int) -> IntArray:
    """:func:`_extremes` of ``bits`` (unsigned words, C-contiguous, not empty, any shape) in the fewest numpy
    calls, for arrays small enough that each call costs more than the cells it reads.

    Read as unsigned, the positive cells come first, by magnitude, then the negative ones; read as
    signed, the negative ones come first. So the unsigned minimum and maximum bound the magnitudes of
    an array of one sign (as many are: exponentials, squares, probabilities), and for one of both signs
    they are the smallest positive and the largest negative magnitude, the signed minimum and maximum
    the smallest negative and the largest positive: two or four arg-extremes, each a C call with no work
    array (``ndarray.item`` of a flat index gives the value as a Python int), say that every magnitude
    is normal. A zero of either sign fails that (integer data and ReLU outputs hold many): then the
    magnitudes' maximum, and their minimum less one, where a zero wraps round to the top, say whether a
    cell needs fixing. Only an array that has one is scanned by :func:`_extremes`. docs/runtime.md §3.2.
    """
    signed, sign = words
    smallest: int = bits.item(bits.argmin())
    if smallest >= low:
        largest: int = bits.item(bits.argmax())
        if largest < sign:  # no negative cell
            if largest < field:
                return _NO_CELLS
        elif smallest >= sign:  # no positive cell
            if sign + low <= smallest and largest < sign + field:
                return _NO_CELLS
        elif largest < sign + field:
            twin = bits.view(signed)
            smallest, largest = twin.item(twin.argmin()), twin.item(twin.argmax())
            if smallest >= low - sign and largest < field:
                return _NO_CELLS
    flat = bits.reshape(-1)  # numpy gives a 0-d array's results as scalars, which cannot be written into
    magnitude = np.bitwise_and(flat, sign - 1)
    if magnitude.item(magnitude.argmax()) < field:
        np.subtract(magnitude, 1, out=magnitude)
        if magnitude.item(magnitude.argmin()) >= low - 1:
            return _NO_CELLS
    return _extremes(flat, field, low)


def _cells_to_fix(bits: Array, words: _Words, field: int, low: int) -> IntArray:
    """:func:`_extremes` of ``bits`` (unsigned words, C-contiguous, any shape), by :func:`_small_extremes` when
    there are few enough of them."""
    if 0 < bits.size <= _SMALL_SCAN:
        return _small_extremes(bits, words, field, low)
    return _extremes(bits.reshape(-1), field, low)


def _in_memory_order(x: Array) -> Array | None:
    """A C-contiguous view of the cells of ``x`` in the order they sit in memory, when they fill it
    without gaps or repeats (a transposed view, or a ufunc's result over one); else None. A check or fix
    of every cell on its own reads it as well as ``x``, without copying strided cells."""
    view = x.transpose(sorted(range(x.ndim), key=x.strides.__getitem__, reverse=True))
    return view if view.flags.c_contiguous else None


def flush_f32(x: Array) -> Array:
    """RNGD f32 hygiene: subnormals become zeros of their own sign and NaN becomes 0x7fc00000.

    Works on the bit pattern and only rewrites the nonzero cells whose exponent field is all zeros
    (subnormals) or all ones (infinity or NaN), since this runs on every operand. The caller passes
    an array it owns, and gets it back fixed in place when its cells fill their memory (a ufunc's result
    over transposed operands too), else a C-contiguous copy fixed.
    """
    if type(x) is np.ndarray and x.dtype is _F32 and x.flags.c_contiguous:
        out = x  # what ascontiguousarray would return, without its calls
    else:
        cells = _in_memory_order(x) if type(x) is np.ndarray and x.dtype is _F32 and x.flags.writeable else None
        if cells is not None:
            flush_f32(cells)  # the same cells, fixed where they sit: no strided copy
            return x
        out = np.ascontiguousarray(x, dtype=np.float32).reshape(np.shape(x))  # 0-d stays 0-d
    bits = out.view(_U32)
    special = _cells_to_fix(bits, _WORDS32, 0x7F800000, 0x00800000)
    if special.size:
        flat = bits.reshape(-1)  # a view of out (contiguous), which the flat indices index
        picked = flat[special]
        exponent = picked & np.uint32(0x7F800000)
        nan = (exponent != 0) & ((picked & np.uint32(0x007FFFFF)) != 0)
        picked = np.where(exponent == 0, picked & np.uint32(0x80000000), picked)
        flat[special] = np.where(nan, _F32_CANONICAL_NAN, picked)
    return out


def has_special_f32(x: Array) -> bool:
    """Whether a cell of the f32 array ``x`` is one :func:`flush_f32` looks at: a subnormal or a NaN, which
    it changes, or an infinity, which it keeps (so False says there is nothing to change). Reads ``x`` only."""
    bits = x.view(_U32)  # a view of the same item size: any strides, no contiguous copy needed
    if 0 < bits.size <= _SMALL_SCAN:
        cells = bits if bits.flags.c_contiguous else _in_memory_order(bits)
        if cells is not None:
            return bool(_small_extremes(cells, _WORDS32, 0x7F800000, 0x00800000).size)
    # Any shape but 0-d (numpy's ops give a 0-d array's result as a scalar, which cannot be written into).
    return bool(_extremes(bits if bits.ndim else bits.reshape(1), 0x7F800000, 0x00800000).size)


def _bf16_blocks(source: Array, dtype: np.dtype[Any], low: int, redo: Callable[[Array], Array]) -> Array:
    """``source`` converted to ``dtype`` (one side is bf16) a cache-sized block at a time, so each
    block is still in cache when its bf16 patterns are checked: cells whose exponent field is below
    ``low`` or all ones are replaced by ``redo`` of their source cells. A single block of
    :data:`_BY_WORDS` cells or more converts by integer passes over the patterns instead."""
    if source.size <= _BLOCK:  # one block: no buffers to set up, which a small kernel would notice
        if source.size >= _BY_WORDS and dtype is not source.dtype:
            # Narrowing by words reads its source three times: a strided one (a transposed view) is read once,
            # in C order, by ml_dtypes' loop below instead.
            if dtype is not _BF16:
                return _widen_words(source)
            if source.size >= _NARROW_BY_WORDS and source.flags.c_contiguous:
                return _narrow_words(source)
        # A strided source (a transposed view) is converted in one pass into C order, not first flattened into
        # a copy: narrowing checks the output's patterns, and reads the source again only to redo cells.
        out = source.astype(dtype, "C")
        bits = (out if dtype is _BF16 else source).view(_U16)  # widening reads a C-contiguous source
        cells = _cells_to_fix(bits, _WORDS16, 0x7F80, low)
        if cells.size:
            out.reshape(-1)[cells] = redo(source.reshape(-1)[cells])  # a view of out, a copy of a strided source
        return out
    flat = source if source.ndim == 1 else source.reshape(-1)
    out = np.empty(flat.size, dtype=dtype)
    bits = (out if dtype == bf16.numpy else flat).view(np.uint16)
    scratch = np.empty(min(flat.size, _BLOCK), dtype=np.uint16)
    for start in range(0, flat.size, _BLOCK):
        block = slice(start, start + _BLOCK)
        out[block] = flat[block]
        cells = _extremes(bits[block], 0x7F80, low, scratch)
        if cells.size:
            cells += start
            out[cells] = redo(flat[cells])
    return out.reshape(source.shape)


# The rounding of f32 to bf16 by integer passes is exact for magnitudes in [_ROUNDED_LOW, _ROUNDED_FIELD): they
# narrow to a bf16 exponent from 2 to 254, as ml_dtypes rounds them. Outside, a narrowing :func:`_narrow_bf16`
# redoes (a zero, subnormal or exponent-1 result, an infinity or NaN), or a negative NaN whose sum wraps.
_ROUNDED_LOW: Final = 0x00FF8000
_ROUNDED_FIELD: Final = 0x7F7F8000


def _narrow_words(wide: Array) -> Array:
    """f32 (C-contiguous, at least one dimension) narrowed to bf16 by the RNGD rule, rounding by
    integer passes: ml_dtypes converts about a cell a nanosecond, and five passes over words cost less from
    :data:`_NARROW_BY_WORDS` cells on (three fifths of its time at 65536). Checked on the input's
    magnitudes, which the passes leave exact."""
    bits = wide.view(_U32)
    rounded = np.right_shift(bits, 16)
    np.bitwise_and(rounded, 1, out=rounded)  # the lowest kept bit: ties go to even
    np.add(rounded, 0x7FFF, out=rounded)
    np.add(rounded, bits, out=rounded)
    out = np.empty(wide.shape, dtype=_U16)
    np.right_shift(rounded, 16, out=out, casting="unsafe")  # the high half of each word
    narrowed = out.view(_BF16)
    cells = _extremes(bits, _ROUNDED_FIELD, _ROUNDED_LOW)
    if cells.size:
        narrowed.reshape(-1)[cells] = _narrowed(wide.reshape(-1)[cells])  # views of out and of the source
    return narrowed


def _widen_words(stored: Array) -> Array:
    """bf16 (C-contiguous, at least one dimension) widened to f32 by the RNGD rule, each pattern shifted into
    the high half of a word (what ml_dtypes does, in a third of its time at 65536 cells)."""
    bits = stored.view(_U16)
    out = _shifted(bits)
    cells = _extremes(bits, 0x7F80, 0x0080)
    if cells.size:
        out.reshape(-1)[cells] = flush_f32(stored.reshape(-1)[cells])
    return out


def _shifted(bits: Array) -> Array:
    """bf16 patterns as the f32 values they widen to exactly, laid out as ``bits`` (as ``astype`` lays out:
    a transposed view is read in the order its cells sit, not gathered into C order)."""
    wide = bits.astype(_U32)
    np.left_shift(wide, 16, out=wide)
    return wide.view(_F32)


def _narrow_bf16(wide: Array) -> Array:
    """f32 to bf16 by the RNGD rule, fixing up only the cells that need it.

    ml_dtypes rounds to nearest even in one pass. Only cells that narrow to a zero or subnormal
    exponent, to the smallest normal (an f32 subnormal may round up to it, but RNGD flushes it
    first), or to an infinity or NaN can differ; those few are redone with the f32 input flushed,
    after which a subnormal result is impossible and NaN narrows to the canonical 0x7fc0.
    """
    return _bf16_blocks(wide, _BF16, 0x0100, _narrowed)


def _narrowed(cells: Array) -> Array:
    """f32 cells flushed, then narrowed by ml_dtypes (the cells :func:`_narrow_bf16` redoes)."""
    return flush_f32(cells).astype(_BF16)


def _widen_bf16(stored: Array) -> Array:
    """bf16 to f32 with the RNGD fixes, found on the 16-bit patterns (half the bytes of f32)."""
    return _bf16_blocks(stored, _F32, 0x0080, flush_f32)


def _canonical_bf16(stored: Array) -> Array:
    """bf16 already: a copy with subnormals flushed and NaN made canonical (the round trip through
    f32, done on the few cells it changes).

    Copied and checked a block at a time like a conversion: a whole-array check would allocate
    work arrays several times the tensor's size, and first touching fresh memory is most of what
    a big weight's copy costs."""
    return _bf16_blocks(stored, _BF16, 0x0080, _round_trip)


def _round_trip(cells: Array) -> Array:
    """bf16 cells widened and narrowed back by the RNGD rules (the cells :func:`_canonical_bf16` redoes)."""
    return _narrow_bf16(_widen_bf16(cells))


def _wrap(values: Array, bits: int) -> Array:
    """Two's-complement wrap of int64 ``values`` to ``bits`` bits."""
    half = np.int64(1) << (bits - 1)
    return ((values + half) & ((half << 1) - 1)) - half


def _holds(dtype: np.dtype[Any], bits: int) -> bool:
    """Whether every value of the integer (or bool) ``dtype`` fits in ``bits``-bit two's complement,
    so that wrapping to ``bits`` changes nothing."""
    if dtype.kind == "b":
        return bits > 1
    if dtype.kind not in "iu":
        return False
    info = np.iinfo(dtype)
    return info.min >= -(1 << (bits - 1)) and info.max < 1 << (bits - 1)


def _f8_table(dtype: np.dtype[Any]) -> Array:
    """Every 8-bit pattern of an f8 dtype widened to f32: widening by table lookup reads one byte
    per cell instead of converting each one."""
    table = np.arange(256, dtype=np.uint8).view(dtype).astype(np.float32)
    table.setflags(write=False)
    return table


def _as_int64(array: Array) -> Array:
    if array.dtype.kind in "iub" or array.dtype == np.dtype(ml_dtypes.int4):
        return array.astype(np.int64)
    real = array.astype(np.float64)
    # Float to integer rounds to nearest even; NaN and infinities have no integer, they become 0.
    real = np.where(np.isfinite(real), np.rint(real), 0.0)
    # Every target is at most 32 bits wide, so reducing modulo 2**32 first keeps the wrap exact
    # and the int64 conversion in range.
    return np.fmod(real, 2.0**32).astype(np.int64)


# The rules above say what overflow, NaN and infinities become, so their floating-point flags tell the caller
# nothing (ml_dtypes' narrowing of a signalling NaN raises one). As a decorator the state is set and reset by the
# call itself: two Python calls fewer than a ``with`` block, on a function every stream cast runs.
@np.errstate(over="ignore", invalid="ignore")
def cast(array: npt.ArrayLike, to: ScalarLike) -> Array:
    """Narrow (or convert) ``array`` to ``to`` by the RNGD rules, stored in ``to.numpy``.

    * bf16: round to nearest even, subnormals flush to signed zero, NaN becomes 0x7fc0.
    * f8e4m3: saturates at +-448 (infinities too); NaN stays NaN.
    * f8e5m2: round to nearest even, overflow to infinity.
    * f32: subnormals flush, NaN becomes 0x7fc00000.
    * integers: wrap to their value width (i5 to 5 bits, i9 to 9 bits).
    """
    # scalar(to), without its call for a known name (every cast of a stream passes one).
    target = (_REGISTRY.get(to) if isinstance(to, str) else None) or scalar(to)
    src = array if type(array) is np.ndarray else np.asarray(array)
    if not target.is_float:
        storage = target.numpy
        if storage.kind == "i" and (_holds(src.dtype, target.value_bits)
                                    or (src.dtype.kind in "iu" and target.value_bits == 8 * storage.itemsize)):
            # Nothing to wrap, or numpy's integer narrowing keeps the low bits, which is the wrap.
            return src.astype(storage)
        return _wrap(_as_int64(src), target.value_bits).astype(storage)
    if target is bf16:
        if src.dtype == bf16.numpy:
            return _canonical_bf16(src)
        # Narrowing only reads its input, so an f32 array needs no copy (nor the call that would find that out).
        return _narrow_bf16(src if src.dtype is _F32 else np.asarray(src, dtype=_F32))
    x = flush_f32(src.astype(np.float32))
    if target is f32:
        return x
    if target is f8e4m3:
        # Clipping keeps NaN (numpy's minimum and maximum propagate it); x is a copy of our own.
        return np.clip(x, -_E4M3_MAX, _E4M3_MAX, out=x).astype(f8e4m3.numpy)
    return x.astype(target.numpy)


def widen(array: npt.ArrayLike, frm: ScalarLike, *, canonical: bool = False) -> Array:
    """Widen values stored as ``frm`` to the accumulator (docs/runtime.md §3.2), as int32 or float32.

    Integers sign-extend the low ``value_bits`` of the stored value; bf16 flushes subnormals and
    canonicalises NaN; f8 widens exactly. ``canonical`` says the values came out of :func:`cast`,
    which leaves no bf16 subnormal and only the canonical NaN: nothing is left to fix, so bf16
    widens by plain conversion (the same bits, without the scan for special values).
    """
    source = (_REGISTRY.get(frm) if isinstance(frm, str) else None) or scalar(frm)  # as in cast
    src = array if type(array) is np.ndarray else np.asarray(array)
    if source is bf16 and src.dtype is _BF16:  # the widening every stream and operand runs, in the fewest calls
        if canonical:
            return src.astype(_F32) if src.size < _BY_WORDS else _shifted(src.view(_U16))
        if src.flags.c_contiguous:
            return _widen_bf16(src)
    if not source.is_float:
        if _holds(src.dtype, source.value_bits):
            return src.astype(np.int32)
        return _wrap(_as_int64(src), source.value_bits).astype(np.int32)
    if source is bf16:
        # ascontiguousarray makes a 0-d array 1-d; a scalar operand (no axes) must stay 0-d.
        if src.dtype != bf16.numpy or not src.flags.c_contiguous:
            src = np.ascontiguousarray(src, dtype=bf16.numpy).reshape(src.shape)
        return _widen_bf16(src)
    if source is f32:
        return flush_f32(src.astype(np.float32))
    if src.dtype == source.numpy:
        return _looked_up(_F8_TABLES[source.name], src.view(np.uint8))
    return src.astype(source.numpy).astype(np.float32)


_F8_TABLES: Final = {kind.name: _f8_table(kind.numpy) for kind in (f8e4m3, f8e5m2)}


def _looked_up(table: Array, patterns: Array) -> Array:
    """``table`` at each 8-bit pattern, laid out as ``patterns``. ``take`` first copies its indices as 8-byte
    integers: a block at a time, that copy stays one block's size and its memory is reused, where a whole weight's
    would be a new array eight times the patterns' size, every page of it faulted in on first touch."""
    if patterns.size <= _BLOCK:
        return np.asarray(table.take(patterns))  # take makes a 0-d index a scalar
    flat = patterns.reshape(-1)
    out = np.empty(flat.size, dtype=table.dtype)
    for start in range(0, flat.size, _BLOCK):
        table.take(flat[start:start + _BLOCK], out=out[start:start + _BLOCK])
    return out.reshape(patterns.shape)


def poison(dtype: ScalarLike) -> Any:
    """The value the simulator writes into Top padding: NaN for floats, the most negative value
    for integers (integer poison is also tracked by a mask, since any value is a legal integer)."""
    kind = scalar(dtype)
    if kind.is_float:
        return kind.numpy.type(np.nan)
    return kind.numpy.type(-(1 << (kind.value_bits - 1)))
