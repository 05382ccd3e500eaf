"""The MX matrix product ``C = (scaleA ⊗ A) · (scaleB ⊗ B) + bias`` (docs/block-formats.md §1.4, §2).

Internal precision and summation order of the block dot product are implementation-defined, so
this is a golden model: every operand value is dequantized exactly into float64 (products of MX
values are exact there too), the sum runs in float64, and the result is rounded to float32 once.
Any mix of element formats and block sizes is accepted (OCP); Ascend hardware only pairs FP4 with
FP4 and FP8 with FP8, and has neither FP6 nor INT8. Leading batch axes broadcast as in
``numpy.matmul``; K needs no relation to the block size, since a short last block is zero-padded.
"""

from __future__ import annotations

from math import prod
from typing import Final

import numpy as np
import numpy.typing as npt

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.mx.array import MxArray
from tcpdsl.mx.formats import read_array
from tcpdsl.mx.quantize import dequantize

MATMUL_STAGE: Final = "mx.matmul"
SUM_BYTES: Final = 8  # every result cell is summed in float64
# Sums past this many bytes are refused before numpy tries to allocate them; below it, numpy's own
# MemoryError is turned into the same refusal.
MAX_SUM_BYTES: Final = 2**40


def matmul(a: MxArray, b: MxArray, bias: npt.ArrayLike | None = None) -> npt.NDArray[np.float32]:
    """``a`` is [..., M, K] scaled along K (its last axis), ``b`` is [..., K, N] scaled along K.

    Batch axes broadcast like ``numpy.matmul``. ``bias`` is a row of N values, shape [N] or
    [..., 1, N] with batch axes that broadcast too; it is added to every row. The result is float32
    [..., M, N].
    """
    for name, operand, k_axis, dims in (("a", a, -1, "M, K"), ("b", b, -2, "K, N")):
        if not isinstance(operand, MxArray):
            raise DtypeError(MATMUL_STAGE, "OperandType", f"{name} must be an MxArray, got {type(operand).__name__}", hint="quantize it first")
        ndim = operand.elements.ndim
        if ndim < 2:
            raise LayoutError(
                MATMUL_STAGE, "OperandRank", f"{name} must be [..., {dims}] with at least 2 axes, got shape {operand.shape}",
                hint="a vector operand needs an explicit axis of length 1",
            )
        if operand.axis != ndim + k_axis:
            raise LayoutError(
                MATMUL_STAGE,
                "ScaleAxis",
                f"{name} must be block-scaled along K (axis {ndim + k_axis}), got axis {operand.axis}",
                hint=f"quantize {name} with axis={ndim + k_axis}",
            )
    if a.shape[-1] != b.shape[-2]:
        raise LayoutError(MATMUL_STAGE, "ReductionMismatch", f"a is {a.shape} and b is {b.shape}: K differs ({a.shape[-1]} vs {b.shape[-2]})")
    batch = _batch(a.shape[:-2], b.shape[:-2])
    rows = (*batch, a.shape[-2], b.shape[-1])
    row = _bias_row(bias, rows) if bias is not None else None
    if SUM_BYTES * prod(rows) > MAX_SUM_BYTES:
        raise _too_large(a, b, rows)
    lhs, rhs = dequantize(a, np.float64), dequantize(b, np.float64)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            if rhs.ndim == 2:  # one weight for every batch: a single GEMM, about twice numpy's stacked matmul
                # the row count is explicit: with K = 0 a -1 could not be inferred
                acc = (lhs.reshape(prod(lhs.shape[:-1]), lhs.shape[-1]) @ rhs).reshape(rows)
            else:
                acc = np.matmul(lhs, rhs)
            if row is not None:
                acc = acc + row
            out: npt.NDArray[np.float32] = acc.astype(np.float32)
    except MemoryError:
        raise _too_large(a, b, rows) from None
    return out


def _too_large(a: MxArray, b: MxArray, rows: tuple[int, ...]) -> LayoutError:
    """The product does not fit in memory: say how much it needs (float64 sums, then the float32 result)."""
    cells = prod(rows)
    return LayoutError(
        MATMUL_STAGE, "ResultTooLarge",
        f"a {a.shape} times b {b.shape} is {rows}: its {cells} float64 sums need {_gib(SUM_BYTES * cells)} GiB "
        f"(and {_gib(4 * cells)} GiB for the float32 result), more memory than this machine gives",
        hint="split the batch axes and multiply one slice of them at a time",
    )


def _gib(size: int) -> str:
    return f"{size / 2**30:.1f}"


def _batch(left: tuple[int, ...], right: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(left, right))
    except ValueError:
        raise LayoutError(
            MATMUL_STAGE,
            "BatchMismatch",
            f"the batch axes {left} of a and {right} of b do not broadcast",
            hint="make each batch axis equal in both operands, or 1 in one of them",
        ) from None


def _bias_row(bias: npt.ArrayLike, out: tuple[int, ...]) -> npt.NDArray[np.float64]:
    values = read_array(bias, MATMUL_STAGE, "the bias")
    if values.dtype.kind not in "iuf":
        raise DtypeError(MATMUL_STAGE, "BiasDtype", f"bias must be real, got {values.dtype}", hint="use a float32 bias")
    n, batch = out[-1], out[:-2]
    row_shape = values.ndim >= 1 and values.shape[-1] == n and (values.ndim == 1 or values.shape[-2] == 1)
    if not (row_shape and _broadcasts(values.shape[:-2], batch)):
        allowed = f"({n},) or (1, {n})" if not batch else f"({n},) or (..., 1, {n}) with batch axes that broadcast to {batch}"
        raise LayoutError(MATMUL_STAGE, "BiasShape", f"bias must have shape {allowed}, got {values.shape}", hint="the bias adds one value per column N to every row")
    return values.astype(np.float32).astype(np.float64)


def _broadcasts(shape: tuple[int, ...], batch: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(shape, batch) == batch
    except ValueError:
        return False
