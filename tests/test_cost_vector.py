"""The vector pass cost (docs/cost-model.md, "The vector engine"): the book's figures pinned."""

from __future__ import annotations

from collections.abc import Callable

from tcpdsl.algebra import Mapping, parse
from tcpdsl.cost import vector_pass_cost
from tcpdsl.verify.inter_reduce import verify_vector_inter_slice_reduce
from tcpdsl.verify.intra_reduce import verify_vector_intra_slice_reduce
from tcpdsl.verify.vector_ops import (
    ClipBinaryOpF32,
    FpBinaryOp,
    FpMulAlu,
    FpUnaryOp,
    InterSliceReduceOpI32,
    IntraSliceReduceOpI32,
)
from tcpdsl.verify.vector_pass import (
    Immediate,
    vector_clip,
    vector_final,
    vector_fp_binary,
    vector_fp_unary,
    vector_init,
    vector_inter_slice_reduce,
    vector_intra_slice_reduce,
    vector_intra_slice_tag,
    vector_narrow_split,
    vector_narrow_trim,
    vector_widen_concat,
    vector_widen_pad,
)

FLIT = parse("A % 8", {"A": 8})


def scope(**sizes: int) -> Callable[[str], Mapping]:
    return lambda text: parse(text, sizes)


def test_the_book_reduce_time() -> None:
    # R = 16 in Time, trimmed to Way4, AddSat: 16 cycles of stream, the first output after 16 steps + 1 ALU.
    m = scope(A=512, R=16)
    state = vector_intra_slice_tag(vector_init("i32"), packet=FLIT)
    state = vector_final(vector_widen_pad(vector_intra_slice_reduce(vector_narrow_trim(state),
                                                                    IntraSliceReduceOpI32.ADD_SAT)))
    reduce = verify_vector_intra_slice_reduce(IntraSliceReduceOpI32.ADD_SAT, reduce="R", slice=m("A / 2"),
                                              time=m("R"), packet=m("A % 2 # 4"), out_time=m("1"),
                                              out_packet=m("A % 2 # 4"))
    cost = vector_pass_cost(state, way8_time=m("R"), way4_time=m("R"), reduce=reduce)
    assert (cost.cycles, cost.latency) == (16, 17)
    assert cost.notes == ("1 ALU: ReduceAccTree", "intra-slice reduce waits 16 flit cycles (1 accumulator slot)")


def test_a_split_halves_the_float_path() -> None:
    m = scope(T=64, A=8)
    state = vector_narrow_split(vector_intra_slice_tag(vector_init("f32"), packet=FLIT))
    state = vector_fp_binary(vector_fp_unary(state, FpUnaryOp.EXP), FpBinaryOp.MUL_F(FpMulAlu.MUL0), Immediate("f32"))
    state = vector_final(vector_clip(vector_widen_concat(state), ClipBinaryOpF32.MAX, Immediate("f32")))
    cost = vector_pass_cost(state, way8_time=m("T"), way4_time=m("T, A / 4 % 2"))
    assert (cost.cycles, cost.latency) == (128, 3)
    assert cost.notes[-1] == "the Way4 float path streams 128 cycles against 64 at Way8"
    assert vector_pass_cost(state, way8_time=m("T")).cycles == 64


def test_the_inter_slice_ring() -> None:
    m = scope(A=512, R=4)
    state = vector_final(vector_inter_slice_reduce(vector_init("i32"), InterSliceReduceOpI32.ADD_SAT))
    inter = verify_vector_inter_slice_reduce(slice=m("A / 8, R"), time=m("1"), out_slice=m("A / 8, 1 # 4"),
                                             out_time=m("1"))
    cost = vector_pass_cost(state, way8_time=m("1"), inter=inter)
    assert (cost.cycles, cost.latency) == (1, 4)
    assert cost.notes == ("0 ALUs: none", "inter-slice reduce over 4 slices: 4 cycles of ring")
