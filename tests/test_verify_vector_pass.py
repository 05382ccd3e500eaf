"""The vector pass as a state machine (docs/stage-rules.md §6.1, §6.3): the reference's chains are
accepted with the state they end in, and every rule refuses with its pinned message."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcpdsl.algebra import parse
from tcpdsl.errors import DtypeError, LayoutError, StageError, TcpError
from tcpdsl.verify.vector_ops import (
    Alu,
    ClipBinaryOpF32,
    ClipBinaryOpI32,
    FpBinaryOp,
    FpMulAlu,
    FpTernaryOp,
    FpUnaryOp,
    FxpBinaryOp,
    InterSliceReduceOpF32,
    InterSliceReduceOpI32,
    IntraSliceReduceOpF32,
    LogicBinaryOpF32,
    LogicBinaryOpI32,
)
from tcpdsl.verify.vector_pass import (
    STASH,
    Immediate,
    StashState,
    VectorState,
    VeOrder,
    VeStage,
    VrfOperand,
    vector_clip,
    vector_final,
    vector_fp_binary,
    vector_fp_div,
    vector_fp_ternary,
    vector_fp_to_fxp,
    vector_fp_unary,
    vector_fxp,
    vector_fxp_to_fp,
    vector_init,
    vector_inter_slice_reduce,
    vector_intra_slice_reduce,
    vector_intra_slice_tag,
    vector_logic,
    vector_narrow_split,
    vector_narrow_trim,
    vector_reinterpret,
    vector_stash,
    vector_widen_concat,
    vector_widen_pad,
)

FLIT = parse("A % 2 # 8", {"A": 512})
I = Immediate("i32")
F = Immediate("f32")


def tagged(dtype: str) -> VectorState:
    return vector_intra_slice_tag(vector_init(dtype), packet=FLIT)


def refused(step: Callable[[], object]) -> StageError:
    with pytest.raises(StageError) as info:
        step()
    return info.value


def test_the_vector_verifiers_load_no_numpy() -> None:
    modules = "vector_ops, vector_pass, vector_way, vector_operand, intra_reduce, inter_reduce"
    code = f"import sys; from tcpdsl.verify import {modules}; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


def test_each_op_knows_its_alu_dtype_and_identity() -> None:
    assert (FxpBinaryOp.SUB_FXP.alu, FxpBinaryOp.SUB_FXP.dtype) == (Alu.FXP_ADD, "i32")
    assert (FpUnaryOp.TANH.alu, FpUnaryOp.NEG_EXP.alu, FpUnaryOp.SIN.dtype) == (Alu.FP_FPU, Alu.FP_EXP, "f32")
    assert (LogicBinaryOpF32.BIT_AND.dtype, ClipBinaryOpF32.ABS_MAX.alu) == ("f32", Alu.CLIP_MAX)
    mul = FpBinaryOp.MUL_F(FpMulAlu.MUL1)
    assert (mul.alu, mul.dtype, mul.reference, FpBinaryOp.DIV_F.dtype) == (Alu.FP_MUL1, "f32", "MulF(Mul1)", "f32")
    assert [op.identity for op in IntraSliceReduceOpF32] == [0.0, float("-inf"), float("inf")]
    assert [op.identity for op in InterSliceReduceOpI32] == [0, 0, -(2**31), 2**31 - 1]
    assert InterSliceReduceOpF32.MUL.identity == 1.0 and InterSliceReduceOpI32.ADD_SAT.dtype == "i32"
    assert "ERF" not in FpUnaryOp.__members__ and "ARITH_RIGHT_SHIFT_ROUND" not in FxpBinaryOp.__members__


# -- the reference's single-stream chains (tier A and B of the vector tests) -------------------


def test_full_pipeline_is_accepted() -> None:
    s = vector_fxp(tagged("i32"), FxpBinaryOp.ADD_FXP, I)
    s = vector_fxp_to_fp(s, 31)
    s = vector_narrow_trim(s)
    s = vector_fp_binary(s, FpBinaryOp.MUL_F(FpMulAlu.MUL0), F)
    s = vector_widen_pad(s)
    s = vector_fp_to_fxp(s, 31)
    s = vector_clip(s, ClipBinaryOpI32.MAX, I)
    s = vector_final(vector_clip(s, ClipBinaryOpI32.MIN, I))
    assert s.stage is VeStage.FINAL and s.way == 8 and s.dtype == "i32"
    assert s.alus == {Alu.FXP_ADD, Alu.FP_MUL0, Alu.CLIP_MAX, Alu.CLIP_MIN}
    assert s.order is VeOrder.INTRA_FIRST


def test_stash_across_narrow_and_widen() -> None:
    s = vector_stash(tagged("f32"))
    assert (s.stash, s.stash_dtype, s.stash_way) == (StashState.OCCUPIED, "f32", 8)
    s = vector_fp_binary(vector_narrow_trim(s), FpBinaryOp.MUL_F(FpMulAlu.MUL0), F)
    s = vector_clip(vector_widen_pad(s), ClipBinaryOpF32.MAX, STASH)
    assert s.stash is StashState.SPENT
    assert vector_final(s).stage is VeStage.FINAL


def test_stash_after_widen_and_the_ternary_stash() -> None:
    s = vector_fp_binary(vector_narrow_trim(tagged("f32")), FpBinaryOp.MUL_F(FpMulAlu.MUL0), F)
    s = vector_stash(vector_clip(vector_widen_pad(s), ClipBinaryOpF32.MAX, F))
    vector_final(vector_clip(s, ClipBinaryOpF32.ADD, STASH))
    s = vector_stash(vector_narrow_trim(tagged("f32")))
    s = vector_fp_ternary(s, FpTernaryOp.FMA_F, (STASH, F))
    assert vector_final(vector_widen_pad(s)).alus == {Alu.FP_FMA}


def test_stash_at_fxp_and_after_reinterpret() -> None:
    s = vector_fxp(vector_stash(vector_fxp(tagged("i32"), FxpBinaryOp.ADD_FXP, I)), FxpBinaryOp.MUL_INT, I)
    vector_final(vector_clip(s, ClipBinaryOpI32.MAX, STASH))
    s = vector_reinterpret(tagged("f32"), "i32")
    s = vector_reinterpret(vector_logic(s, LogicBinaryOpI32.BIT_AND, I), "f32")
    vector_final(vector_clip(vector_stash(s), ClipBinaryOpF32.ADD, STASH))


def test_the_mode_examples_and_vrf_operands() -> None:
    s = vector_fp_binary(vector_narrow_trim(tagged("f32")), FpBinaryOp.SUB_F, F)
    vector_final(vector_widen_pad(vector_fp_div(s, F)))
    s = vector_fxp(tagged("i32"), FxpBinaryOp.ADD_FXP, VrfOperand("i32"))
    s = vector_clip(vector_fxp(s, FxpBinaryOp.MUL_INT, VrfOperand("i32")), ClipBinaryOpI32.ADD_FXP, VrfOperand("i32"))
    assert vector_final(s).alus == {Alu.FXP_ADD, Alu.FXP_MUL, Alu.CLIP_ADD}


def test_a_split_float_path_and_a_logic_chain() -> None:
    s = vector_fp_unary(vector_narrow_split(tagged("f32")), FpUnaryOp.EXP)
    s = vector_fp_binary(s, FpBinaryOp.MUL_F(FpMulAlu.MUL1), F)
    s = vector_fp_binary(s, FpBinaryOp.MUL_F(FpMulAlu.MUL0), F)
    s = vector_fp_unary(s, FpUnaryOp.SIGMOID)
    assert vector_final(vector_widen_concat(s)).way == 8
    s = vector_logic(vector_logic(tagged("i32"), LogicBinaryOpI32.BIT_AND, I), LogicBinaryOpI32.BIT_OR, I)
    assert vector_final(s).alus == {Alu.LOGIC_AND, Alu.LOGIC_OR}
    assert vector_final(vector_logic(tagged("f32"), LogicBinaryOpF32.BIT_XOR, F)).dtype == "f32"


def test_the_reduce_paths_in_both_orders() -> None:
    s = vector_intra_slice_reduce(vector_narrow_trim(tagged("f32")), IntraSliceReduceOpF32.ADD)
    s = vector_widen_pad(vector_fp_div(s, F))
    assert vector_final(s).alus == {Alu.REDUCE_ACC_TREE, Alu.REDUCE_FP_DIV}
    # InterFirst: reduce, then tag, then AddFxp 100 (the reference's vru-then-vau).
    s = vector_inter_slice_reduce(vector_init("i32"), InterSliceReduceOpI32.ADD_SAT)
    assert s.order is VeOrder.INTER_FIRST
    s = vector_stash(vector_intra_slice_tag(s, packet=FLIT))
    s = vector_final(vector_fxp(s, FxpBinaryOp.ADD_FXP, STASH))
    assert s.order is VeOrder.INTER_FIRST and s.stage is VeStage.FINAL
    # IntraFirst: widen back to Way8, then reduce across slices.
    s = vector_widen_pad(vector_fp_unary(vector_narrow_trim(tagged("f32")), FpUnaryOp.EXP))
    assert vector_final(vector_inter_slice_reduce(s, InterSliceReduceOpF32.ADD)).order is VeOrder.INTRA_FIRST


# -- every rule, with its message --------------------------------------------------------------


def test_alu_once_addfxp_then_subfxp() -> None:
    s = vector_fxp(vector_fxp(tagged("i32"), FxpBinaryOp.ADD_FXP, I), FxpBinaryOp.MUL_INT, I)
    error = refused(lambda: vector_fxp(s, FxpBinaryOp.SUB_FXP, I))
    assert (error.stage, error.rule) == ("vector_fxp", "AluOnce")
    assert error.detail == "vector_fxp: FxpAdd is already in use"


def test_alu_once_tanh_of_sqrt() -> None:
    s = vector_fp_unary(vector_narrow_trim(tagged("f32")), FpUnaryOp.SQRT)
    error = refused(lambda: vector_fp_unary(s, FpUnaryOp.TANH))
    assert (error.stage, error.rule, error.detail) == ("vector_fp_unary", "AluOnce", "vector_fp_unary: FpFpu is already in use")
    # DIV_F of the Fp cluster is FpFpu too, but vector_fp_div has its own divider.
    assert refused(lambda: vector_fp_binary(s, FpBinaryOp.DIV_F, F)).rule == "AluOnce"
    assert Alu.REDUCE_FP_DIV in vector_fp_div(s, F).alus


def test_alu_once_mul_f_on_the_fma() -> None:
    s = vector_fp_binary(vector_narrow_trim(tagged("f32")), FpBinaryOp.ADD_F, F)
    error = refused(lambda: vector_fp_binary(s, FpBinaryOp.MUL_F(FpMulAlu.FMA), F))
    assert error.detail == "vector_fp_binary: FpFma is already in use"


def test_stage_order() -> None:
    error = refused(lambda: vector_fxp(vector_clip(tagged("i32"), ClipBinaryOpI32.MAX, I), FxpBinaryOp.ADD_FXP, I))
    assert (error.stage, error.rule) == ("vector_fxp", "StageOrder")
    assert error.detail == ("vector_fxp: stage Fxp cannot follow stage Clip: the intra-slice stages run in hardware "
                            "order and only Logic, Fxp, Fp and Clip repeat")
    error = refused(lambda: vector_fxp(vector_init("i32"), FxpBinaryOp.ADD_FXP, I))
    assert error.detail == "vector_fxp: stage Fxp cannot follow stage Init: the intra-slice chain starts with its tag"
    error = refused(lambda: vector_final(vector_init("i32")))
    assert error.detail == "vector_final: stage Final cannot follow stage Init: an empty pass"
    error = refused(lambda: vector_inter_slice_reduce(tagged("i32"), InterSliceReduceOpI32.ADD))
    assert error.rule == "StageOrder" and "entered from vector_init or a Way8 stage after Tag" in error.detail
    s = vector_inter_slice_reduce(vector_init("i32"), InterSliceReduceOpI32.ADD)
    error = refused(lambda: vector_fxp(s, FxpBinaryOp.ADD_FXP, I))
    assert error.detail.endswith("after the inter-slice reducer only vector_intra_slice_tag or vector_final may come")
    error = refused(lambda: vector_final(vector_final(tagged("i32"))))
    assert error.detail == "vector_final: stage Final cannot follow stage Final: the pass has ended"
    # IntraSliceReduce cannot go back to Fp; FpDiv may follow it.
    s = vector_intra_slice_reduce(vector_narrow_trim(tagged("f32")), IntraSliceReduceOpF32.MAX)
    assert refused(lambda: vector_fp_unary(s, FpUnaryOp.EXP)).rule == "StageOrder"
    error = refused(lambda: vector_reinterpret(vector_init("f32"), "i32"))
    assert error.detail == "vector_reinterpret: a reinterpret happens inside the intra-slice chain, not at stage Init"


def test_ve_order_each_block_once() -> None:
    s = vector_inter_slice_reduce(vector_init("f32"), InterSliceReduceOpF32.MAX)
    s = vector_clip(vector_intra_slice_tag(s, packet=FLIT), ClipBinaryOpF32.MAX, F)
    error = refused(lambda: vector_inter_slice_reduce(s, InterSliceReduceOpF32.MAX))
    assert (error.stage, error.rule) == ("vector_inter_slice_reduce", "VeOrder")
    assert error.detail == ("vector_inter_slice_reduce: the inter-slice reducer was already entered in this pass "
                            "(InterFirst); each block runs at most once")
    s = vector_inter_slice_reduce(vector_clip(tagged("f32"), ClipBinaryOpF32.MAX, F), InterSliceReduceOpF32.ADD)
    error = refused(lambda: vector_intra_slice_tag(s, packet=FLIT))
    assert error.detail == ("vector_intra_slice_tag: the intra-slice chain was already entered in this pass "
                            "(IntraFirst); each block runs at most once")


def test_way_of_stage_and_the_exits() -> None:
    error = refused(lambda: vector_fp_unary(tagged("f32"), FpUnaryOp.EXP))
    assert (error.rule, error.detail) == ("WayOfStage", "vector_fp_unary: stage Fp runs at Way4, but the stream is at Way8")
    assert "narrow with vector_narrow_split or vector_narrow_trim" in error.hint
    s = vector_narrow_trim(tagged("f32"))
    error = refused(lambda: vector_fp_to_fxp(s, 31))
    assert error.detail == "vector_fp_to_fxp: stage FpToFxp runs at Way8, but the stream is at Way4"
    error = refused(lambda: vector_final(s))
    assert (error.rule, error.detail) == ("ExitWay8", "vector_final: a pass ends at Way8, but the stream is at Way4")
    error = refused(lambda: vector_intra_slice_tag(vector_init("f32"), packet=parse("A % 4", {"A": 8})))
    assert (error.rule, error.detail) == (
        "Way8Entry", "vector_intra_slice_tag: the intra-slice chain takes a packet of 8 elements (one flit), got 4 in A % 4")


def test_dtypes() -> None:
    error = refused(lambda: vector_init("bf16"))
    assert isinstance(error, DtypeError)
    assert (error.rule, error.detail) == ("Dtype", "vector_init: the vector engine computes on i32 or f32, got bf16")
    error = refused(lambda: vector_fxp(tagged("f32"), FxpBinaryOp.ADD_FXP, F))
    assert error.detail == "vector_fxp: the stream's dtype for this op must be i32, got f32"
    error = refused(lambda: vector_clip(tagged("i32"), ClipBinaryOpI32.MAX, F))
    assert error.detail == "vector_clip: an operand's dtype (the stream's) must be i32, got f32"
    error = refused(lambda: vector_fxp_to_fp(tagged("f32"), 31))
    assert error.detail == "vector_fxp_to_fp: the stream's dtype for this conversion must be i32, got f32"
    error = refused(lambda: vector_reinterpret(tagged("f32"), "bf16"))
    assert error.detail == "vector_reinterpret: the vector engine computes on i32 or f32, got bf16"


def test_int_width_and_mul_alu() -> None:
    error = refused(lambda: vector_fxp_to_fp(tagged("i32"), 32))
    assert (error.rule, error.detail) == (
        "IntWidth", "vector_fxp_to_fp: the integer width of a fixed-point number is 0 to 31 bits, got 32")
    s = vector_narrow_trim(tagged("f32"))
    error = refused(lambda: vector_fp_binary(s, FpBinaryOp.MUL_F, F))
    assert (error.rule, error.detail) == (
        "MulAlu", "vector_fp_binary: MUL_F names no multiplier; the pass cannot tell which ALU it occupies")
    error = refused(lambda: FpBinaryOp.ADD_F(FpMulAlu.MUL0))
    assert error.detail == ("vector_fp_binary: only MUL_F takes a multiplier, called with an FpMulAlu; "
                            "got ADD_F(<FpMulAlu.MUL0: <Alu.FP_MUL0: 'FpMul0'>>)")


def test_stash_rules() -> None:
    error = refused(lambda: vector_stash(vector_fxp_to_fp(tagged("i32"), 31)))
    assert (error.rule, error.detail) == (
        "StashStage", "vector_stash: the stash is written at Tag, Logic, Fxp, Narrow, Fp, FpDiv or Clip, not at stage FxpToFp")
    s = vector_stash(tagged("i32"))
    error = refused(lambda: vector_stash(s))
    assert (error.rule, error.detail) == ("WriteOnce", "vector_stash: the stash is written once per pass, and it is Occupied")
    spent = vector_fxp(s, FxpBinaryOp.ADD_FXP, STASH)
    assert refused(lambda: vector_stash(spent)).detail.endswith("and it is Spent")
    error = refused(lambda: vector_clip(spent, ClipBinaryOpI32.MAX, STASH))
    assert (error.rule, error.detail) == (
        "ReadOnce", "vector_clip: the stash is read once after one vector_stash, but the stash was already read")
    error = refused(lambda: vector_fxp(tagged("i32"), FxpBinaryOp.ADD_FXP, STASH))
    assert error.detail == "vector_fxp: the stash is read once after one vector_stash, but nothing was stashed"
    s = vector_fxp_to_fp(vector_stash(tagged("i32")), 31)
    error = refused(lambda: vector_clip(s, ClipBinaryOpF32.MAX, STASH))
    assert (error.rule, error.detail) == ("SameScalar", "vector_clip: the stash holds i32 but the stream is f32")
    s = vector_narrow_trim(vector_stash(tagged("f32")))
    error = refused(lambda: vector_fp_binary(s, FpBinaryOp.ADD_F, STASH))
    assert (error.rule, error.detail) == ("SameWay", "vector_fp_binary: the stash was written at Way8 but is read at Way4")
    s = vector_stash(vector_clip(tagged("f32"), ClipBinaryOpF32.MAX, F))
    error = refused(lambda: vector_inter_slice_reduce(s, InterSliceReduceOpF32.ADD))
    assert (error.rule, error.detail) == (
        "DroppedByInter",
        "vector_inter_slice_reduce: the stash holds a value that was never read, and the inter-slice reducer "
        "discards it")
    s = vector_stash(vector_narrow_trim(tagged("f32")))
    error = refused(lambda: vector_fp_ternary(s, FpTernaryOp.FMA_F, (STASH, STASH)))
    assert (error.rule, error.detail) == (
        "ReadOnce", "vector_fp_ternary: the stash is read once after one vector_stash, but the stash was already read")
    # A Way4 stash read back at Way8.
    error = refused(lambda: vector_clip(vector_widen_pad(s), ClipBinaryOpF32.MAX, STASH))
    assert (error.rule, error.detail) == ("SameWay", "vector_clip: the stash was written at Way4 but is read at Way8")


def test_the_reduce_ops_pick_the_dtype() -> None:
    error = refused(lambda: vector_inter_slice_reduce(vector_init("f32"), InterSliceReduceOpI32.ADD_SAT))
    assert (error.rule, error.detail) == (
        "Dtype", "vector_inter_slice_reduce: the stream's dtype for this reduce op must be i32, got f32")
    s = vector_narrow_trim(tagged("i32"))
    error = refused(lambda: vector_intra_slice_reduce(s, IntraSliceReduceOpF32.ADD))
    assert error.detail == "vector_intra_slice_reduce: the stream's dtype for this op must be f32, got i32"


# -- laws --------------------------------------------------------------------------------------

FXP_OPS = list(FxpBinaryOp)


@given(st.lists(st.sampled_from(FXP_OPS), min_size=1, max_size=6))
def test_an_fxp_chain_is_refused_exactly_when_an_alu_repeats(ops: list[FxpBinaryOp]) -> None:
    state = tagged("i32")
    alus = [op.alu for op in ops]
    try:
        for op in ops:
            state = vector_fxp(state, op, I)
    except LayoutError as error:
        assert error.rule == "AluOnce" and len(set(alus)) < len(alus)
    else:
        assert len(set(alus)) == len(alus) and state.alus == set(alus)


STEPS: list[Callable[[VectorState], VectorState]] = [
    lambda s: vector_intra_slice_tag(s, packet=FLIT),
    lambda s: vector_logic(s, LogicBinaryOpI32.BIT_XOR, I),
    lambda s: vector_fxp(s, FxpBinaryOp.MUL_INT, I),
    lambda s: vector_fxp_to_fp(s, 31),
    vector_narrow_trim,
    vector_narrow_split,
    lambda s: vector_fp_unary(s, FpUnaryOp.EXP),
    lambda s: vector_fp_binary(s, FpBinaryOp.ADD_F, F),
    lambda s: vector_intra_slice_reduce(s, IntraSliceReduceOpF32.ADD),
    lambda s: vector_fp_div(s, STASH),
    vector_widen_pad,
    vector_widen_concat,
    lambda s: vector_fp_to_fxp(s, 31),
    lambda s: vector_clip(s, ClipBinaryOpI32.MIN, STASH),
    lambda s: vector_reinterpret(s, "f32"),
    vector_stash,
    lambda s: vector_inter_slice_reduce(s, InterSliceReduceOpI32.MAX),
    vector_final,
]


@given(st.sampled_from(["i32", "f32"]), st.lists(st.integers(0, len(STEPS) - 1), max_size=12))
def test_any_call_sequence_gives_a_state_or_a_named_rule(dtype: str, picks: list[int]) -> None:
    state = vector_init(dtype)
    for pick in picks:
        try:
            state = STEPS[pick](state)
        except TcpError as error:
            assert isinstance(error, StageError) and error.rule and error.detail.startswith(error.stage)
            continue
        assert state.way in (4, 8) and state.dtype in ("i32", "f32")
        assert (state.way == 4) == (VeStage.NARROW <= state.stage <= VeStage.FP_DIV)
