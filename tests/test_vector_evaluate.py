"""Both evaluators of a vector pass against numpy (docs/runtime.md §3.9): a pass recorded step by step
from the composers, evaluated on its logical view (fused) and on the physical buffer (simulate)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tcpdsl.algebra import Mapping, logical_terms, pairs, parse
from tcpdsl.evaluate import vector_fused, vector_simulate
from tcpdsl.numerics.transfer import to_physical, to_terms
from tcpdsl.numerics.vector_chain import Constant, PassSource, PassStep, VectorChain, VrfValues
from tcpdsl.verify import vector_compose as vc
from tcpdsl.verify.families import COLLECT, VRF, TensorType, check_type
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_ops import (
    ClipBinaryOpF32,
    FpBinaryOp,
    FpMulAlu,
    FpUnaryOp,
    InterSliceReduceOpF32,
    IntraSliceReduceOpF32,
    TagMode,
)
from tcpdsl.verify.vector_pass import STASH, Immediate

EVALUATORS = ["fused", "simulate"]


class Pass:
    """A pass built through the composers, recording what a typed tensor's methods would."""

    def __init__(self, values: np.ndarray[Any, Any], axes: str, layouts: list[str], sizes: dict[str, int],
                 dtype: str = "f32") -> None:
        self.sizes = sizes
        maps = tuple(self.m(t) for t in layouts)
        mapping = pairs(list(maps))
        terms = logical_terms(mapping)
        grid = to_physical(values, tuple(axes.split()), mapping, 0)
        self.chain = VectorChain(PassSource(maps, dtype, lambda name: to_terms(grid, mapping, terms),
                                            lambda name: grid))
        self.type, step = vc.vector_init(check_type(COLLECT, (dtype,), maps))
        self.state = step.state
        self._record(Stage.VECTOR_INIT, step)

    def m(self, text: str) -> Mapping:
        return parse(text, self.sizes)

    def _record(self, stage: Stage, step: vc.VectorStep, **what: Any) -> None:
        self.chain = self.chain.with_step(PassStep(stage, self.type.layouts, step, **what))

    def call(self, stage: Stage, compose: Callable[..., Any], *, record: dict[str, Any] | None = None,
             **arguments: Any) -> Pass:
        self.type, step = compose(self.type, **arguments, state=self.state)
        self.state = step.state
        self._record(stage, step, **(record or {}))
        return self

    def evaluate(self, evaluator: str) -> np.ndarray[Any, Any]:
        """The logical result over the last layout's terms."""
        if evaluator == "fused":
            return vector_fused.run_pass(self.chain, evaluator)
        flat = vector_simulate.run_pass(self.chain, evaluator)
        mapping = pairs(list(self.type.layouts))
        return to_terms(flat, mapping, logical_terms(mapping))


def tag(p: Pass) -> Pass:
    return p.call(Stage.VECTOR_INTRA_SLICE_TAG, vc.vector_intra_slice_tag, tag=TagMode.ZERO)


def final(p: Pass) -> Pass:
    return p.call(Stage.VECTOR_FINAL, vc.vector_final)


RNG = np.random.default_rng(42)
A = 512


@pytest.mark.parametrize("evaluator", EVALUATORS)
def test_trim_mul_widen_clip(evaluator: str) -> None:
    x = RNG.standard_normal(A).astype(np.float32)
    p = tag(Pass(x, "A", ["1", "1", "A / 2", "1", "A % 2 # 8"], {"A": A}))
    p.call(Stage.VECTOR_NARROW_TRIM, vc.vector_narrow_trim, out_packet=p.m("A % 2 # 4"))
    mul = FpBinaryOp.MUL_F(FpMulAlu.MUL0)
    p.call(Stage.VECTOR_FP_BINARY, vc.vector_fp_binary, op=mul, operand=Immediate("f32"),
           record={"op": mul, "operands": (Constant(2.5),)})
    p.call(Stage.VECTOR_WIDEN_PAD, vc.vector_widen_pad, out_packet=p.m("A % 2 # 8"))
    p.call(Stage.VECTOR_CLIP, vc.vector_clip, op=ClipBinaryOpF32.MAX, operand=Immediate("f32"),
           record={"op": ClipBinaryOpF32.MAX, "operands": (Constant(0.0),)})
    got = final(p).evaluate(evaluator).reshape(-1)
    np.testing.assert_array_equal(got, np.maximum(x * np.float32(2.5), 0))


@pytest.mark.parametrize("evaluator", EVALUATORS)
def test_rmsnorm_mean_square(evaluator: str) -> None:
    h = 1024
    x = RNG.standard_normal(h).astype(np.float32)
    p = tag(Pass(x, "H", ["1", "1", "1 # 64", "H / 8", "H % 8"], {"H": h}))
    p.call(Stage.VECTOR_NARROW_SPLIT, vc.vector_narrow_split, out_time=p.m("H / 4"), out_packet=p.m("H % 4"))
    p.call(Stage.VECTOR_STASH, vc.vector_stash)
    mul = FpBinaryOp.MUL_F(FpMulAlu.MUL0)
    p.call(Stage.VECTOR_FP_BINARY, vc.vector_fp_binary, op=mul, operand=STASH,
           record={"op": mul, "operands": (STASH,)})
    add = IntraSliceReduceOpF32.ADD
    p.call(Stage.VECTOR_INTRA_SLICE_REDUCE, vc.vector_intra_slice_reduce, op=add, reduce="H",
           out_time=p.m("1"), out_packet=p.m("1 # 4"), record={"op": add, "reduce": "H"})
    p.call(Stage.VECTOR_FP_DIV, vc.vector_fp_div, operand=Immediate("f32"),
           record={"operands": (Constant(float(h)),)})
    p.call(Stage.VECTOR_WIDEN_PAD, vc.vector_widen_pad, out_packet=p.m("1 # 8"))
    got = final(p).evaluate(evaluator).reshape(-1)
    assert got.shape == (1,)
    np.testing.assert_allclose(got[0], np.mean(x.astype(np.float64) ** 2), rtol=1e-5)


@pytest.mark.parametrize("evaluator", EVALUATORS)
def test_vrf_operand_broadcast_by_axis(evaluator: str) -> None:
    t, h = 8, 64
    x = RNG.standard_normal((t, h)).astype(np.float32)
    v = RNG.standard_normal(h).astype(np.float32)
    p = tag(Pass(x, "T H", ["1", "1", "T # 64", "H / 8", "H % 8"], {"T": t, "H": h}))
    operand = TensorType(VRF, ("f32",), (p.m("1"), p.m("1"), p.m("T # 64"), p.m("H")))
    p.call(Stage.VECTOR_CLIP, vc.vector_clip, op=ClipBinaryOpF32.ADD, operand=operand,
           record={"op": ClipBinaryOpF32.ADD, "operands": (VrfValues(lambda name: v, logical_terms(p.m("H"))),)})
    got = final(p).evaluate(evaluator)
    np.testing.assert_array_equal(got.reshape(t, h), x + v)


@pytest.mark.parametrize("evaluator", EVALUATORS)
def test_inter_slice_add(evaluator: str) -> None:
    sizes = {"A": A, "R": 4}
    x = RNG.standard_normal((4, A)).astype(np.float32)
    p = Pass(x, "R A", ["1", "1", "A / 8, R", "1", "A % 8"], sizes)
    add = InterSliceReduceOpF32.ADD
    p.call(Stage.VECTOR_INTER_SLICE_REDUCE, vc.vector_inter_slice_reduce, op=add, out_slice=p.m("A / 8, 1 # 4"),
           out_time=p.m("1"), record={"op": add})
    got = final(p).evaluate(evaluator).reshape(-1)
    np.testing.assert_allclose(got, x.sum(axis=0), rtol=1e-6)


@pytest.mark.parametrize("evaluator", EVALUATORS)
def test_exp(evaluator: str) -> None:
    x = RNG.standard_normal(A).astype(np.float32)
    p = tag(Pass(x, "A", ["1", "1", "A / 2", "1", "A % 2 # 8"], {"A": A}))
    p.call(Stage.VECTOR_NARROW_TRIM, vc.vector_narrow_trim, out_packet=p.m("A % 2 # 4"))
    p.call(Stage.VECTOR_FP_UNARY, vc.vector_fp_unary, op=FpUnaryOp.EXP, record={"op": FpUnaryOp.EXP})
    p.call(Stage.VECTOR_WIDEN_PAD, vc.vector_widen_pad, out_packet=p.m("A % 2 # 8"))
    got = final(p).evaluate(evaluator).reshape(-1)
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)
