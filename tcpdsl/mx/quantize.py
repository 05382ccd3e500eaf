"""FP32 to MX quantization and back (OCP MX v1.0 §6.3, as reconstructed in the MX spec §1.5).

Rules, per block of ``block`` consecutive elements along ``axis``:

* ``shared_exp = floor(log2(amax)) - emax_elem``, clamped to ``-127..127``; scale code
  ``shared_exp + 127``. (FLOOR rule; the round-up variants of other libraries are not offered.)
* A block holding Inf or NaN gets scale code 255 (NaN) and elements 0.
* Elements are ``V / 2**shared_exp`` computed in float32 (exact: a power-of-two division),
  saturated to ``±max_normal`` and then rounded to nearest, ties to even. Saturating first matters:
  ml_dtypes turns an out-of-range e4m3 cast into NaN and an e5m2 one into Inf.
* MXINT8: ``P = clip(rint(64 q), -127, 127)``, value ``P / 64``.

Choices the OCP text could not confirm (recorded here because they change results):

* element rounding is round-to-nearest-even, also for MXINT8 (the reference emulator rounds
  MXINT8 ties away from zero);
* MXINT8 clamps symmetrically to ``±127/64`` although ``-2.0`` is encodable;
* an all-zero block gets scale code 0 (``2**-127``) and zero elements;
* a NaN scale makes every value of its block NaN, whatever the element holds.

Inputs are converted to float32 first, because the algorithm is defined on FP32: values beyond
the float32 range become infinite, so their block is NaN. A length along ``axis`` that ``block``
does not divide is refused (pad with zeros first), rather than padded silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.mx.formats import (
    E8M0_BIAS,
    E8M0_MAX_EXPONENT,
    E8M0_MIN_EXPONENT,
    E8M0_NAN,
    INT8_SCALE,
    ElementFormat,
    e8m0_decode,
    element_format,
)

QUANTIZE_STAGE: Final = "mx.quantize"
DEFAULT_BLOCK: Final = 32
_FLOAT_OUTPUTS: Final = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass(frozen=True, eq=False)
class MxArray:
    """A block-scaled array: ``elements`` (same shape as the source) and one E8M0 code per block.

    ``scales`` has the source shape with ``axis`` shortened by the factor ``block``. ``fmt`` is
    the canonical element format name and ``axis`` is stored non-negative.
    """

    elements: npt.NDArray[Any]
    scales: npt.NDArray[np.uint8]
    fmt: str
    axis: int
    block: int = DEFAULT_BLOCK

    def __post_init__(self) -> None:
        fmt = element_format(self.fmt)
        elements, scales = self.elements, self.scales
        if not isinstance(elements, np.ndarray) or elements.dtype != fmt.dtype:
            got = elements.dtype if isinstance(elements, np.ndarray) else type(elements).__name__
            raise DtypeError(QUANTIZE_STAGE, "ElementDtype", f"{fmt.name} elements must be {fmt.dtype}, got {got}")
        if not isinstance(scales, np.ndarray) or scales.dtype != np.uint8:
            got = scales.dtype if isinstance(scales, np.ndarray) else type(scales).__name__
            raise DtypeError(QUANTIZE_STAGE, "ScaleDtype", f"scales must be uint8 E8M0 codes, got {got}")
        axis = _check_axis(self.axis, elements.ndim)
        block = _check_block(self.block)
        expected = list(elements.shape)
        if expected[axis] % block:
            raise _indivisible(expected[axis], block, axis)
        expected[axis] //= block
        if scales.shape != tuple(expected):
            raise LayoutError(
                QUANTIZE_STAGE,
                "ScaleShape",
                f"elements of shape {elements.shape} with block {block} on axis {axis} need scales of shape "
                f"{tuple(expected)}, got {scales.shape}",
            )
        object.__setattr__(self, "fmt", fmt.name)
        object.__setattr__(self, "axis", axis)
        object.__setattr__(self, "block", block)

    @property
    def format(self) -> ElementFormat:
        return element_format(self.fmt)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.elements.shape)


def quantize(x: npt.ArrayLike, axis: int, fmt: str = "e4m3", block: int = DEFAULT_BLOCK) -> MxArray:
    """Quantize ``x`` to MX format ``fmt`` in blocks of ``block`` elements along ``axis``."""
    spec = element_format(fmt)
    values = _as_float32(x)
    ax = _check_axis(axis, values.ndim)
    size = _check_block(block)
    length = values.shape[ax]
    if length % size:
        raise _indivisible(length, size, ax)
    moved = np.moveaxis(values, ax, -1)
    blocks = moved.reshape(*moved.shape[:-1], length // size, size)
    amax = np.max(np.abs(blocks), axis=-1)
    special = ~np.isfinite(amax)
    _, exp = np.frexp(np.where(special, np.float32(1), amax))
    shared = np.clip(exp.astype(np.int32) - 1 - spec.emax, E8M0_MIN_EXPONENT, E8M0_MAX_EXPONENT)
    shared = np.where(amax == 0, E8M0_MIN_EXPONENT, shared)
    codes = np.where(special, E8M0_NAN, shared + E8M0_BIAS).astype(np.uint8)
    scaled = np.ldexp(blocks, -shared[..., None]).astype(np.float32)
    scaled[special] = 0
    elements = _round_elements(scaled, spec).reshape(moved.shape)
    return MxArray(np.moveaxis(elements, -1, ax), np.moveaxis(codes, -1, ax), spec.name, ax, size)


def dequantize(a: MxArray, dtype: npt.DTypeLike = np.float32) -> npt.NDArray[np.floating[Any]]:
    """The values ``P_i * 2**(code - 127)`` of ``a`` as float32 (default) or float64.

    Every value of an MX array is exact in float64; float32 holds every value ``quantize`` can
    produce exactly too.
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


def _dequantize64(a: MxArray) -> npt.NDArray[np.float64]:
    elements = a.elements.astype(np.float64)
    if a.format.is_int:
        elements /= INT8_SCALE
    scale = np.repeat(e8m0_decode(a.scales), a.block, axis=a.axis)
    with np.errstate(over="ignore", invalid="ignore"):
        return elements * scale


def _round_elements(scaled: npt.NDArray[np.float32], spec: ElementFormat) -> npt.NDArray[Any]:
    if spec.is_int:
        codes: npt.NDArray[np.int8] = np.clip(np.rint(scaled * np.float32(INT8_SCALE)), -127, 127).astype(np.int8)
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


def _check_axis(axis: object, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise LayoutError(QUANTIZE_STAGE, "AxisType", f"axis must be an integer, got {axis!r}")
    if not -ndim <= int(axis) < ndim:
        raise LayoutError(
            QUANTIZE_STAGE,
            "AxisRange",
            f"axis {axis} is out of range for an array of {ndim} dimension(s)",
            hint=f"use an axis in {-ndim}..{ndim - 1}",
        )
    return int(axis) % ndim


def _check_block(block: object) -> int:
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or int(block) <= 0:
        raise LayoutError(QUANTIZE_STAGE, "BlockSize", f"block must be a positive integer, got {block!r}", hint="MX uses 32")
    if int(block) > np.iinfo(np.intp).max:
        raise LayoutError(QUANTIZE_STAGE, "BlockSize", f"block {block} exceeds the largest array extent", hint="MX uses 32")
    return int(block)


def _indivisible(length: int, block: int, axis: int) -> LayoutError:
    return LayoutError(
        QUANTIZE_STAGE,
        "BlockIndivisible",
        f"block {block} does not divide length {length} of axis {axis}",
        hint=f"pad axis {axis} with zeros to {-(-length // block) * block}",
    )
