"""The vector pass's composers (docs/stage-rules.md §6): a pass call on a stream type runs the state
machine, then the layout rules of the same call, and names the next position's family."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tcpdsl.algebra import Mapping, parse
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify import vector_compose as vc
from tcpdsl.verify.families import COLLECT, VECTOR_FAMILIES, VRF, TensorType, check_type
from tcpdsl.verify.vector_ops import (
    ClipBinaryOpF32,
    FpBinaryOp,
    FpMulAlu,
    FpUnaryOp,
    FxpBinaryOp,
    InterSliceReduceOpF32,
    IntraSliceReduceOpF32,
    TagMode,
)
from tcpdsl.verify.vector_pass import STASH, Immediate, StashState, VeOrder, VeStage

H = {"H": 1024, "S": 256}


def m(text: str, **sizes: int) -> Mapping:
    return parse(text, {**H, **sizes})


def collect(time: str, packet: str, dtype: str = "f32", slice_: str = "S", **sizes: int) -> TensorType:
    return check_type(COLLECT, (dtype,), (m("1"), m("1"), m(slice_, **sizes), m(time, **sizes), m(packet, **sizes)))


def vrf(element: str, dtype: str = "f32") -> TensorType:
    return TensorType(VRF, (dtype,), (m("1"), m("1"), m("S"), m(element)))


Step = tuple[TensorType, vc.VectorStep]


def run(src: TensorType, *calls: tuple[Callable[..., Step], dict[str, Any]]) -> Step:
    out, step = vc.vector_init(src)
    for call, arguments in calls:
        out, step = call(out, **arguments, state=step.state)
    return out, step


def refused(src: TensorType, *calls: tuple[Callable[..., Step], dict[str, Any]]) -> LayoutError:
    with pytest.raises(LayoutError) as info:
        run(src, *calls)
    return info.value


MUL0 = FpBinaryOp.MUL_F(FpMulAlu.MUL0)
TAG = (vc.vector_intra_slice_tag, {"tag": TagMode.ZERO})


def test_rmsnorm_mean_square_pass_composes_to_a_final_f32_stream() -> None:
    out, step = run(
        collect("H / 8", "H % 8"),
        TAG,
        (vc.vector_narrow_split, {"out_time": m("H / 4"), "out_packet": m("H % 4")}),
        (vc.vector_stash, {}),
        (vc.vector_fp_binary, {"op": MUL0, "operand": STASH}),
        (vc.vector_intra_slice_reduce, {"op": IntraSliceReduceOpF32.ADD, "reduce": "H", "out_time": m("1"),
                                        "out_packet": m("1 # 4")}),
        (vc.vector_fp_div, {"operand": Immediate("f32")}),
        (vc.vector_widen_pad, {"out_packet": m("1 # 8")}),
        (vc.vector_clip, {"op": ClipBinaryOpF32.ADD, "operand": Immediate("f32")}),
        (vc.vector_final, {}),
    )
    assert out.family is VECTOR_FAMILIES[VeStage.FINAL] and out.family.name == "VectorFinalTensor"
    assert (out.dtype, str(out.layout("Time")), str(out.layout("Packet"))) == ("f32", "1", "1 # 8")
    assert step.state.stash is StashState.SPENT and step.state.order is VeOrder.INTRA_FIRST


def test_each_call_names_its_position_and_keeps_the_layouts_it_does_not_move() -> None:
    out, step = run(collect("H / 8", "H % 8", dtype="i32"), TAG,
                    (vc.vector_fxp, {"op": FxpBinaryOp.ADD_FXP, "operand": Immediate("i32")}))
    assert out.family.name == "VectorFxpTensor" and step.state.stage is VeStage.FXP
    assert str(out.layout("Time")) == "H / 8" and out.dtype == "i32"


def test_a_vrf_operand_is_read_by_its_axes() -> None:
    _, step = run(collect("H / 8", "H % 8"), TAG, (vc.vector_clip, {"op": ClipBinaryOpF32.ADD, "operand": vrf("H")}))
    assert step.vrf_axes == (("H",),)


def test_a_vrf_operand_must_hold_what_the_stream_reads() -> None:
    error = refused(collect("H / 8", "H % 8"), TAG, (vc.vector_clip, {"op": ClipBinaryOpF32.ADD,
                                                                       "operand": vrf("H / 2")}))
    assert (error.stage, error.rule) == ("vector_clip", "VrfBroadcast")


def test_an_operand_tensor_must_be_a_vrf() -> None:
    error = refused(collect("H / 8", "H % 8"), TAG, (vc.vector_clip, {"op": ClipBinaryOpF32.ADD,
                                                                       "operand": collect("H / 8", "H % 8")}))
    assert (error.stage, error.rule) == ("vector_clip", "Operand")
    assert error.detail.startswith("vector_clip: an operand is a number, tcp.STASH or a VrfTensor, got a CollectTensor")


def test_the_state_machine_runs_before_the_layout_rules() -> None:
    # Fp at Way8 is refused by WayOfStage before any mapping is read.
    error = refused(collect("H / 8", "H % 8"), TAG, (vc.vector_fp_unary, {"op": FpUnaryOp.EXP}))
    assert error.rule == "WayOfStage"
    error = refused(collect("H / 8", "H % 8"), TAG,
                    (vc.vector_narrow_split, {"out_time": m("H / 8"), "out_packet": m("H % 4")}))
    assert (error.stage, error.rule) == ("vector_narrow_split", "SplitTimeMismatch")


def test_a_pass_starts_on_i32_or_f32() -> None:
    with pytest.raises(DtypeError) as info:
        vc.vector_init(collect("H / 16", "H % 16", dtype="bf16"))
    assert (info.value.stage, info.value.rule) == ("vector_init", "Dtype")


def test_a_position_without_a_pass_state_has_no_next_stage() -> None:
    final = check_type(VECTOR_FAMILIES[VeStage.TAG], ("f32",), (m("1"), m("1"), m("S"), m("H / 8"), m("H % 8")))
    with pytest.raises(LayoutError) as info:
        vc.vector_final(final, state=None)
    assert (info.value.rule, info.value.detail) == (
        "StageOrder", "vector_final: the VectorTagTensor was not produced by a vector pass method")


def test_inter_slice_reduce_moves_slice_and_time() -> None:
    sizes = {"A": 512, "R": 4}
    out, step = run(
        collect("1", "A % 8", slice_="A / 8, R", **sizes),
        (vc.vector_inter_slice_reduce, {"op": InterSliceReduceOpF32.ADD, "out_slice": m("A / 8, 1 # 4", **sizes),
                                        "out_time": m("1", **sizes)}),
        (vc.vector_final, {}),
    )
    assert str(out.layout("Slice")) == "A / 8, 1 # 4" and step.state.order is VeOrder.INTER_FIRST
