"""The runtime's shortcuts give the same bits as the step-by-step definitions they replace."""

from __future__ import annotations


import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.numerics.vector_ops import _combine, _converted, identity, reduce_fold
from tcpdsl.verify.vector_ops import InterSliceReduceOpF32, IntraSliceReduceOpF32, ReduceOp

F32_REDUCES: list[ReduceOp] = [*IntraSliceReduceOpF32, *InterSliceReduceOpF32]
# Bit patterns that stress the RNGD rules: signed zeros, subnormals, the smallest normals, infinities,
# NaNs with other payloads, and values whose sums or products leave the normal range.
SPECIAL_BITS = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F800000, 0xFF800000,
                0x7FC00001, 0xFFFFFFFF, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0x1F800000, 0x20000000, 0x00FFFFFF]
CELLS = st.one_of(st.sampled_from(SPECIAL_BITS), st.integers(0, 2**32 - 1))


def _step_by_step(op: ReduceOp, x: np.ndarray, axis: int) -> np.ndarray:
    """The fold as the accumulator runs it: one rounded, flushed step per index."""
    values = np.moveaxis(_converted(op, x), axis, 0)
    acc = np.broadcast_to(identity(op), values.shape[1:]).copy()
    for step in values:
        acc = _combine(op, acc, step)
    return acc


@settings(max_examples=300)
@given(st.sampled_from(F32_REDUCES), st.integers(0, 7), st.integers(1, 3), st.lists(CELLS, min_size=24, max_size=24),
       st.integers(0, 1))
def test_an_f32_fold_has_the_bits_of_the_step_by_step_fold(op: ReduceOp, steps: int, width: int, cells: list[int],
                                                           axis: int) -> None:
    data = np.array(cells[: steps * width], dtype=np.uint32).view(np.float32).reshape(steps, width)
    data = np.moveaxis(data, 0, axis)
    got, expected = reduce_fold(op, data, axis), _step_by_step(op, data, axis)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.view(np.uint32).tolist() == expected.view(np.uint32).tolist()


def test_a_sum_through_a_subnormal_partial_flushes_it_as_the_accumulator_does() -> None:
    # 1.5 * 2**-126 - 2**-126 is the subnormal 2**-127, which the accumulator flushes to +0: adding
    # 2**-126 then gives 2**-126, where an unflushed sum would give 1.5 * 2**-126.
    tiny = 2.0**-126
    data = np.array([1.5 * tiny, -tiny, tiny], dtype=np.float32)
    assert reduce_fold(IntraSliceReduceOpF32.ADD, data, 0).tolist() == tiny
    assert _step_by_step(IntraSliceReduceOpF32.ADD, data, 0).tolist() == tiny
