"""The element-wise pass methods, shared by both evaluators (docs/runtime.md §3.9).

An element-wise step computes the same on a logical array and on a physical buffer: the evaluators
differ only in how they read its operands (by logical term, or laid out on the stream's physical
layout) and in how they move the stream between ways and through the reduces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy.typing as npt

from tcpdsl.numerics import vector_ops as ops
from tcpdsl.numerics.vector_chain import PassStep
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_ops import BinaryArgMode, TernaryArgMode

Array = npt.NDArray[Any]

# Methods that change no value: they enter or leave a block, or keep a copy (which the evaluators do).
PASSIVE: Final = frozenset({Stage.VECTOR_INIT, Stage.VECTOR_INTRA_SLICE_TAG, Stage.VECTOR_FINAL, Stage.VECTOR_STASH})
# Methods that move the stream between Way8 and Way4: values stay, their layout changes.
WAY_MOVES: Final = frozenset({
    Stage.VECTOR_NARROW_SPLIT, Stage.VECTOR_NARROW_TRIM, Stage.VECTOR_WIDEN_CONCAT, Stage.VECTOR_WIDEN_PAD,
})


def typed(values: Array, dtype: str) -> Array:
    """The stream as the engine holds it: i32 or f32 with the RNGD rules applied."""
    return ops.i32(values) if dtype == "i32" else ops.f32(values)


def elementwise(step: PassStep, stream: Array, operands: Sequence[Array]) -> Array:
    """``step`` applied to ``stream`` with its operands already read (broadcastable to the stream)."""
    stage = step.stage
    if stage is Stage.VECTOR_FP_UNARY:
        return ops.fp_unary(step.op, stream)
    if stage is Stage.VECTOR_FXP_TO_FP:
        return ops.fxp_to_fp(stream, step.int_width)
    if stage is Stage.VECTOR_FP_TO_FXP:
        return ops.fp_to_fxp(stream, step.int_width)
    if stage is Stage.VECTOR_REINTERPRET:
        return ops.reinterpret(stream, step.dtype)
    if stage is Stage.VECTOR_FP_TERNARY:
        mode = step.mode if isinstance(step.mode, TernaryArgMode) else TernaryArgMode.MODE012
        first, second = operands
        return ops.fp_ternary(step.op, stream, first, second, mode)
    mode2 = step.mode if isinstance(step.mode, BinaryArgMode) else BinaryArgMode.MODE01
    (operand,) = operands
    if stage is Stage.VECTOR_FP_DIV:
        return ops.fp_div(stream, operand, mode2)
    return ops.binary(step.op, stream, operand, mode2)
