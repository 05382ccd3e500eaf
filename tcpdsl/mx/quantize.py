"""FP32 to MX quantization and back (docs/block-formats.md §1.5 and §1.6).

Per block of ``block`` consecutive elements along ``axis``:

* ``shared_exp = floor(log2(amax)) - emax_elem``, clamped to ``-127..127``; scale code
  ``shared_exp + 127`` (the FLOOR rule; round-up variants of other libraries are not offered).
* A block holding Inf or NaN gets scale code 255 (NaN) and elements 0.
* Elements are ``V / 2**shared_exp`` computed in float32 (exact: a power-of-two division),
  saturated to ``±max_normal`` and then rounded to nearest, ties to even. Saturating first matters:
  ml_dtypes turns an out-of-range e4m3 cast into NaN and an e5m2 one into Inf.
* MXINT8: ``P = clip(rint(64 q), low, 127)``, value ``P / 64``; ``low`` is -127 by default and
  -128 with ``int8_clamp="full"`` (docs/block-formats.md §1.7).
* A ragged last block is quantized zero-padded to full length; the padding is dropped from the
  result, since it is zero by definition (docs/block-formats.md §1.6).

Choices the OCP text could not confirm are listed in docs/block-formats.md §8. Inputs are
converted to float32 first, because the algorithm is defined on FP32: values beyond the float32
range become infinite, so their block is NaN.
"""

from __future__ import annotations

from typing import Any, Final, Literal, SupportsIndex

import numpy as np
import numpy.typing as npt

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.mx.array import DEFAULT_BLOCK, QUANTIZE_STAGE, MxArray, check_axis, check_block
from tcpdsl.mx.formats import (
    E8M0_BIAS,
    E8M0_MAX_EXPONENT,
    E8M0_MIN_EXPONENT,
    E8M0_NAN,
    INT8_SCALE,
    ElementFormat,
    element_format,
)

_FLOAT_OUTPUTS: Final = (np.dtype(np.float32), np.dtype(np.float64))

Int8Clamp = Literal["symmetric", "full"]
# The smallest MXINT8 code each convention produces (docs/block-formats.md §1.7).
_INT8_LOW: Final[dict[str, int]] = {"symmetric": -127, "full": -128}


def quantize(
    x: npt.ArrayLike, axis: SupportsIndex, fmt: str = "e4m3", block: SupportsIndex = DEFAULT_BLOCK, *, int8_clamp: Int8Clamp = "symmetric"
) -> MxArray:
    """Quantize ``x`` to MX format ``fmt`` in blocks of ``block`` elements along ``axis``.

    A length that ``block`` does not divide leaves a short last block, zero-padded by the format's
    rule: the scales hold ``ceil(length / block)`` codes along ``axis``. ``int8_clamp`` matters for
    ``"int8"`` only: ``"symmetric"`` keeps elements in ``±127/64``; ``"full"`` also produces -2.0
    (code 0x80) where a negative value rounds there.
    """
    spec = element_format(fmt)
    low = _int8_low(int8_clamp)
    values = _as_float32(x)
    ax = check_axis(axis, values.ndim)
    size = check_block(block)
    moved = np.moveaxis(values, ax, -1)
    length = moved.shape[-1]
    blocks = _whole_blocks(moved, size)
    amax = np.max(np.abs(blocks), axis=-1)
    special = ~np.isfinite(amax)
    _, exp = np.frexp(np.where(special, np.float32(1), amax))
    shared = np.clip(exp.astype(np.int32) - 1 - spec.emax, E8M0_MIN_EXPONENT, E8M0_MAX_EXPONENT)
    shared = np.where(amax == 0, E8M0_MIN_EXPONENT, shared)
    shared = np.where(special, 0, shared)  # unused for a NaN block; 0 keeps its finite values finite
    codes = np.where(special, E8M0_NAN, shared + E8M0_BIAS).astype(np.uint8)
    scaled = np.ldexp(blocks, -shared[..., None]).astype(np.float32)
    scaled[special] = 0
    elements = _round_elements(scaled, spec, low).reshape(*moved.shape[:-1], blocks.shape[-2] * blocks.shape[-1])[..., :length]
    return MxArray(np.moveaxis(elements, -1, ax), np.moveaxis(codes, -1, ax), spec.name, ax, size)


def dequantize(a: MxArray, dtype: npt.DTypeLike = np.float32) -> npt.NDArray[np.floating[Any]]:
    """The values ``P_i * 2**(code - 127)`` of ``a`` as float32 (default) or float64, in ``a.shape``.

    Every value of an MX array is exact in float64; float32 holds every value ``quantize`` can
    produce exactly too. The implicit padding of a ragged last block is not part of the result.
    """
    if not isinstance(a, MxArray):
        raise DtypeError(QUANTIZE_STAGE, "OperandType", f"dequantize takes an MxArray, got {type(a).__name__}", hint="quantize it first")
    try:
        out_dtype = np.dtype(dtype)
    except TypeError:
        raise DtypeError(QUANTIZE_STAGE, "DequantizeDtype", f"{dtype!r} is not a dtype") from None
    if out_dtype not in _FLOAT_OUTPUTS:
        raise DtypeError(QUANTIZE_STAGE, "DequantizeDtype", f"dequantize produces float32 or float64, not {out_dtype}")
    return _dequantize64(a).astype(out_dtype)


def _whole_blocks(moved: npt.NDArray[np.float32], size: int) -> npt.NDArray[np.float32]:
    """``moved`` as (..., blocks, block) along its last axis, a short last block zero-padded.

    A block longer than the axis is one block of the axis' length: the padding would change
    nothing, and the block size may be far larger than memory.
    """
    length = moved.shape[-1]
    step = min(size, length) or 1
    count = -(-length // step)
    if count * step != length:
        padded = np.zeros((*moved.shape[:-1], count * step), np.float32)
        padded[..., :length] = moved
        moved = padded
    return moved.reshape(*moved.shape[:-1], count, step)


def _int8_low(clamp: object) -> int:
    low = _INT8_LOW.get(clamp) if isinstance(clamp, str) else None
    if low is None:
        raise DtypeError(
            QUANTIZE_STAGE,
            "Int8Clamp",
            f"int8_clamp must be 'symmetric' or 'full', got {clamp!r}",
            hint="'symmetric' keeps MXINT8 in ±127/64; 'full' lets negative values reach -2 (code 0x80)",
        )
    return low


def _dequantize64(a: MxArray) -> npt.NDArray[np.float64]:
    elements = a.elements.astype(np.float64)
    if a.format.is_int:
        elements /= INT8_SCALE
    scale = a.block_scales()
    with np.errstate(over="ignore", invalid="ignore"):
        return elements * scale


def _round_elements(scaled: npt.NDArray[np.float32], spec: ElementFormat, int8_low: int) -> npt.NDArray[Any]:
    if spec.is_int:
        codes: npt.NDArray[np.int8] = np.clip(np.rint(scaled * np.float32(INT8_SCALE)), int8_low, 127).astype(np.int8)
        return codes
    limit = np.float32(spec.max_normal)
    rounded: npt.NDArray[Any] = np.clip(scaled, -limit, limit).astype(spec.dtype)
    return rounded


def _as_float32(x: npt.ArrayLike) -> npt.NDArray[np.float32]:
    try:
        values = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise DtypeError(QUANTIZE_STAGE, "InputDtype", f"cannot read the input as an array: {exc}") from None
    if values.dtype.kind not in "iuf" and not _is_ml_float(values.dtype):
        raise DtypeError(
            QUANTIZE_STAGE,
            "InputDtype",
            f"MX quantization takes real numbers, got dtype {values.dtype}",
            hint="convert the input to float32",
        )
    if values.ndim == 0:
        raise LayoutError(QUANTIZE_STAGE, "InputRank", "cannot quantize a scalar: blocks need an axis", hint="pass a 1-D array")
    with np.errstate(over="ignore"):
        return values.astype(np.float32)


def _is_ml_float(dtype: np.dtype[Any]) -> bool:
    if dtype.kind != "V" or dtype.fields is not None:
        return False
    try:
        np.zeros(1, dtype).astype(np.float32)
    except (TypeError, ValueError):
        return False
    return True
