"""The MX matrix product ``C = (scaleA ⊗ A) · (scaleB ⊗ B) + bias`` (OCP §6, Ascend MmadMx).

Internal precision and summation order of the block dot product are implementation-defined, so
this is a golden model: every operand value is dequantized exactly into float64 (products of MX
values are exact there too), the sum runs in float64, and the result is rounded to float32 once.
Any mix of element formats is accepted (OCP); Ascend hardware only pairs FP4 with FP4 and FP8
with FP8, and has neither FP6 nor INT8.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.mx.formats import read_array
from tcpdsl.mx.quantize import MxArray, dequantize

MATMUL_STAGE: Final = "mx.matmul"


def matmul(a: MxArray, b: MxArray, bias: npt.ArrayLike | None = None) -> npt.NDArray[np.float32]:
    """``a`` is [M, K] scaled along K (axis 1), ``b`` is [K, N] scaled along K (axis 0).

    ``bias`` has shape [N] or [1, N] and is added to every row. The result is float32 [M, N].
    """
    for name, operand, axis in (("a", a, 1), ("b", b, 0)):
        if not isinstance(operand, MxArray):
            raise DtypeError(MATMUL_STAGE, "OperandType", f"{name} must be an MxArray, got {type(operand).__name__}", hint="quantize it first")
        if operand.elements.ndim != 2:
            raise LayoutError(MATMUL_STAGE, "OperandRank", f"{name} must be 2-D, got shape {operand.shape}")
        if operand.axis != axis:
            raise LayoutError(
                MATMUL_STAGE,
                "ScaleAxis",
                f"{name} must be block-scaled along K (axis {axis}), got axis {operand.axis}",
                hint=f"quantize {name} with axis={axis}",
            )
    if a.shape[1] != b.shape[0]:
        raise LayoutError(MATMUL_STAGE, "ReductionMismatch", f"a is {a.shape} and b is {b.shape}: K differs ({a.shape[1]} vs {b.shape[0]})")
    n = b.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):
        acc = dequantize(a, np.float64) @ dequantize(b, np.float64)
        if bias is not None:
            acc = acc + _bias_row(bias, n)
        return acc.astype(np.float32)


def _bias_row(bias: npt.ArrayLike, n: int) -> npt.NDArray[np.float64]:
    values = read_array(bias, MATMUL_STAGE, "the bias")
    if values.dtype.kind not in "iuf":
        raise DtypeError(MATMUL_STAGE, "BiasDtype", f"bias must be real, got {values.dtype}", hint="use a float32 bias")
    if values.shape not in ((n,), (1, n)):
        raise LayoutError(MATMUL_STAGE, "BiasShape", f"bias must have shape ({n},) or (1, {n}), got {values.shape}")
    return values.astype(np.float32).astype(np.float64).reshape(n)
