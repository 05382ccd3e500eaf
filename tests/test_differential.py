"""Differential property: fused evaluator, simulator and numpy agree on kernels nobody wrote by hand.

Hypothesis draws a small two-operand einsum, axis sizes (odd ones make the layouts pad) and a dtype
pair; the layout search writes valid kernels for it; each kernel runs through the public API
(``tcp.Tensor``, the tensor types, the four stages, ``.to_tensor().to_numpy(...)``) with both
evaluators. Integer results must equal the exact einsum wrapped to i32; f32 results must lie within
the accumulator's rounding of it.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl.numerics.scalars import cast

EINSUMS = ("mk,nk->mn", "k,nk->n", "mk,k->m", "bmk,nk->bmn", "bmk,bnk->bmn", "mk,nk->nm", "tk,nk->ntk")
DTYPES = (("bf16", "bf16"), ("i8", "i8"), ("f8e4m3", "f8e4m3"), ("i4", "i5"))
SIZES = (1, 2, 3, 4, 5, 8, 16, 24, 32, 48)


@st.composite
def problems(draw: st.DrawFn) -> tuple[str, dict[str, int], tuple[str, str]]:
    einsum = draw(st.sampled_from(EINSUMS))
    letters = sorted(set(einsum) & set(string.ascii_lowercase))
    sizes = {c.upper(): draw(st.sampled_from(SIZES)) for c in letters}
    return einsum, sizes, draw(st.sampled_from(DTYPES))


def _operand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> Any:
    if dtype.startswith("i"):
        return rng.integers(-8, 8, size=shape)
    return np.asarray(cast(rng.standard_normal(shape), dtype), dtype=np.float64)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.integers(0, 2**16))
def test_searched_kernels_agree_across_evaluators_and_numpy(problem: tuple[str, dict[str, int], tuple[str, str]],
                                                            seed: int) -> None:
    einsum, sizes, (stream, weights) = problem
    try:
        plans = tcp.search(einsum, sizes, stream=stream, weights=weights, top=2, budget=2.0, progress=False)
    except tcp.LayoutError:
        reject()  # no valid kernel for these sizes (e.g. a TRF too small): nothing to compare
    rng = np.random.default_rng(seed)
    operands = [tuple(sizes[c.upper()] for c in term) for term in einsum.split("->")[0].split(",")]
    x, w = _operand(rng, operands[0], stream), _operand(rng, operands[1], weights)
    exact = np.einsum(einsum, x, w)
    scale = np.einsum(einsum, np.abs(x), np.abs(w))
    for plan in plans:
        fused = plan.run(x, w)
        with tcp.evaluator("simulate"):
            simulated = plan.run(x, w)
        assert fused.shape == simulated.shape == exact.shape
        if stream.startswith("i"):
            wrapped = (((exact.astype(np.int64) + 2**31) % 2**32) - 2**31).astype(np.int32)
            assert np.array_equal(fused, wrapped) and np.array_equal(simulated, wrapped)
        else:
            bound = 1e-5 * scale + 1e-30
            assert np.all(np.abs(fused - exact) <= bound) and np.all(np.abs(simulated - exact) <= bound)
