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
from tcpdsl.verify.vector_ops import F32, OP_DTYPE, BinaryArgMode, LogicBinaryOpF32, TernaryArgMode

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


def typed_read(values: Array, dtype: str) -> Array:
    """:func:`typed`, for reading only: an f32 array the rules leave alone is read as it is, not copied."""
    return ops.i32(values) if dtype == "i32" else ops.read_f32(values)


# Steps whose result is f32 with the RNGD rules applied: the next step may read it without a scan.
_FLUSHING: Final = frozenset({Stage.VECTOR_FP_UNARY, Stage.VECTOR_FXP_TO_FP, Stage.VECTOR_FP_TERNARY,
                              Stage.VECTOR_FP_DIV})
_BINARY: Final = frozenset({Stage.VECTOR_LOGIC, Stage.VECTOR_FXP, Stage.VECTOR_FP_BINARY, Stage.VECTOR_CLIP})


def flushes(step: PassStep) -> bool:
    """Whether ``step``'s result is f32 with the rules applied: a float op's (the ops apply them to every
    f32 result), not a bit op's or a reinterpretation's, which leave the bits alone."""
    if step.stage in _FLUSHING:
        return True
    return step.stage in _BINARY and OP_DTYPE[type(step.op)] == F32 and not isinstance(step.op, LogicBinaryOpF32)


def elementwise(step: PassStep, stream: Array, operands: Sequence[Array], *, clean: bool = False,
                operand_clean: bool = False) -> Array:
    """``step`` applied to ``stream`` with its operands already read (broadcastable to the stream).
    ``clean`` says the stream is f32 with the rules applied (the step before :func:`flushes`);
    ``operand_clean`` says the same of the one operand of a binary step."""
    stage = step.stage
    if stage is Stage.VECTOR_FP_UNARY:
        return ops.fp_unary(step.op, stream, clean=clean)
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
        return ops.fp_div(stream, operand, mode2, clean=clean, operand_clean=operand_clean)
    return ops.binary(step.op, stream, operand, mode2, clean=clean, operand_clean=operand_clean)
