"""The vector pass's composers: each pass method as a function from the stream's type to the next.

A composer runs the state machine of :mod:`tcpdsl.verify.vector_pass` first (order, way, dtype,
operands, stash, ALUs), then the layout verifier of the same call (narrow and widen, the reduces, a
VRF operand's broadcast), and returns the next position's type with a :class:`VectorStep`: the new
state, which the next call carries, and what the verifiers derived (docs/stage-rules.md §6).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import Mapping, check_axis_sizes
from tcpdsl.errors import LayoutError
from tcpdsl.verify import vector_pass as vp
from tcpdsl.verify.families import VRF, TensorType, check_type
from tcpdsl.verify.intra_reduce import IntraReduceParams, verify_vector_intra_slice_reduce
from tcpdsl.verify.inter_reduce import InterReduceParams, verify_vector_inter_slice_reduce
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.families import VECTOR_FAMILIES
from tcpdsl.verify.vector_families import POSITION_OF
from tcpdsl.verify.vector_operand import verify_vrf_operand
from tcpdsl.verify.vector_ops import (
    F32,
    I32_MIN,
    ClipBinaryOpF32,
    ClipBinaryOpI32,
    FpBinary,
    FpBinaryOp,
    FpTernaryOp,
    FpUnaryOp,
    FxpBinaryOp,
    InterReduceOp,
    InterSliceReduceOpF32,
    InterSliceReduceOpI32,
    IntraReduceOp,
    IntraSliceReduceOpF32,
    IntraSliceReduceOpI32,
    LogicBinaryOpF32,
    LogicBinaryOpI32,
    MulF,
    TagMode,
)
from tcpdsl.verify.vector_way import (
    WayParams,
    verify_vector_narrow_split,
    verify_vector_narrow_trim,
    verify_vector_widen_concat,
    verify_vector_widen_pad,
)

# What an operand is to a composer: a constant of a dtype, the stash, or a VRF tensor's type.
PassOperand = vp.Immediate | vp.StashRead | TensorType
U32_MAX: Final = 2**32 - 1


@dataclass(frozen=True)
class VectorStep:
    """One pass call: the state after it, its layout parameters and the axes each VRF operand is read by."""

    state: vp.VectorState
    layout: WayParams | IntraReduceParams | InterReduceParams | None = None
    vrf_axes: tuple[tuple[str, ...], ...] = ()


def _state(stage: Stage, src: TensorType, state: vp.VectorState | None) -> vp.VectorState:
    """The state the receiver's type stands at; a position not reached through the pass has none."""
    if state is None or POSITION_OF.get(src.family) is not state.stage:
        raise LayoutError(
            stage, "StageOrder", f"{stage}: the {src.family.name} was not produced by a vector pass method",
            hint="start the pass with vector_init on a collected stream or a contraction result",
        )
    return state


def _at(src: TensorType, state: vp.VectorState, *, slice: Mapping | None = None, time: Mapping | None = None,
        packet: Mapping | None = None) -> TensorType:
    """The stream at ``state``'s position, with the layouts the call changed."""
    chip, cluster, old_slice = src.grid
    layouts = (chip, cluster, slice or old_slice, time or src.layout("Time"), packet or src.layout("Packet"))
    check_axis_sizes(zip(("its Chip", "its Cluster", "its Slice", "its Time", "its Packet"), layouts))
    return check_type(VECTOR_FAMILIES[state.stage], (state.dtype,), layouts)


def not_an_operand(stage: str, what: str) -> LayoutError:
    """``Operand``: what a pass method was given in place of an operand (docs/stage-rules.md §6.3)."""
    return LayoutError(
        stage, "Operand", f"{stage}: an operand is a number, tcp.STASH or a VrfTensor, got a {what}",
        hint="store the tensor in the vector register file with .to_vrf(element=...) first",
    )


def constant(stage: str, value: object, dtype: str) -> vp.Immediate:
    """A number as an operand of an op on ``dtype``: an int serves either dtype, a float only f32 (the
    state machine refuses it on an i32 op); an int must fit in 32 bits, signed or not."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise not_an_operand(stage, type(value).__name__)
    if isinstance(value, int) and not I32_MIN <= value <= U32_MAX:
        raise LayoutError(
            stage, "Operand", f"{stage}: a constant operand holds 32 bits, but {value} does not fit in them",
            hint="write a constant between -2**31 and 2**32 - 1",
        )
    return vp.Immediate(F32 if isinstance(value, float) else dtype)


def check_choice(stage: str, what: str, value: object, kinds: tuple[type, ...]) -> None:
    """``Op``: an op, a tag mode or an argument mode of one of ``kinds`` (docs/stage-rules.md §6.1)."""
    if not isinstance(value, kinds):
        names = " or ".join(k.__name__ for k in kinds)
        given = f"{type(value).__name__}.{value.name}" if isinstance(value, enum.Enum) else repr(value)
        raise LayoutError(
            stage, "Op", f"{stage}: the {what} must be a {names}, got {given}",
            hint=f"pass a member of {names}, e.g. tcp.{kinds[0].__name__}.<MEMBER>",
        )


# The op each method takes (the tag mode for the tag), by kind.
OPS: Final[dict[Stage, tuple[type, ...]]] = {
    Stage.VECTOR_INTRA_SLICE_TAG: (TagMode,),
    Stage.VECTOR_LOGIC: (LogicBinaryOpI32, LogicBinaryOpF32),
    Stage.VECTOR_FXP: (FxpBinaryOp,),
    Stage.VECTOR_FP_UNARY: (FpUnaryOp,),
    Stage.VECTOR_FP_BINARY: (FpBinaryOp, MulF),
    Stage.VECTOR_FP_TERNARY: (FpTernaryOp,),
    Stage.VECTOR_INTRA_SLICE_REDUCE: (IntraSliceReduceOpI32, IntraSliceReduceOpF32),
    Stage.VECTOR_CLIP: (ClipBinaryOpI32, ClipBinaryOpF32),
    Stage.VECTOR_INTER_SLICE_REDUCE: (InterSliceReduceOpI32, InterSliceReduceOpF32),
}


def _checked(stage: Stage, op: object) -> None:
    check_choice(stage, "tag mode" if stage is Stage.VECTOR_INTRA_SLICE_TAG else "op", op, OPS[stage])


def _pure(stage: Stage, operand: PassOperand) -> vp.Operand:
    """An operand as the state machine sees it (a VRF tensor by its dtype)."""
    if not isinstance(operand, TensorType):
        return operand
    if operand.family is not VRF:
        raise not_an_operand(stage, operand.family.name)
    return vp.VrfOperand(operand.dtype)


def _vrf_axes(stage: Stage, src: TensorType, operands: tuple[PassOperand, ...]) -> tuple[tuple[str, ...], ...]:
    chip, cluster, slice_ = src.grid
    vrfs = [o for o in operands if isinstance(o, TensorType)]
    check_axis_sizes([*zip(("the stream's Time", "the stream's Packet"), (src.layout("Time"), src.layout("Packet"))),
                      *(("a VRF operand's Element", o.layout("Element")) for o in vrfs)])
    return tuple(
        verify_vrf_operand(stage, element=o.layout("Element"), chip=chip, cluster=cluster, slice=slice_,
                           time=src.layout("Time"), packet=src.layout("Packet"))
        for o in vrfs
    )


def _op(stage: Stage, src: TensorType, state: vp.VectorState, operands: tuple[PassOperand, ...]) -> tuple[
        TensorType, VectorStep]:
    return _at(src, state), VectorStep(state, vrf_axes=_vrf_axes(stage, src, operands))


def vector_init(src: TensorType) -> tuple[TensorType, VectorStep]:
    """Start a pass on a collected stream or a contraction result (docs/stage-rules.md §6.1)."""
    state = vp.vector_init(src.dtype)
    return _at(src, state), VectorStep(state)


def vector_intra_slice_tag(src: TensorType, *, tag: TagMode, state: vp.VectorState | None) -> tuple[
        TensorType, VectorStep]:
    _checked(Stage.VECTOR_INTRA_SLICE_TAG, tag)
    state = vp.vector_intra_slice_tag(_state(Stage.VECTOR_INTRA_SLICE_TAG, src, state), packet=src.layout("Packet"))
    return _at(src, state), VectorStep(state)


def vector_logic(src: TensorType, *, op: LogicBinaryOpI32 | LogicBinaryOpF32, operand: PassOperand, state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    stage = Stage.VECTOR_LOGIC
    _checked(stage, op)
    after = vp.vector_logic(_state(stage, src, state), op, _pure(stage, operand))
    return _op(stage, src, after, (operand,))


def vector_fxp(src: TensorType, *, op: FxpBinaryOp, operand: PassOperand,
               state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    stage = Stage.VECTOR_FXP
    _checked(stage, op)
    after = vp.vector_fxp(_state(stage, src, state), op, _pure(stage, operand))
    return _op(stage, src, after, (operand,))


def vector_fp_unary(src: TensorType, *, op: FpUnaryOp, state: vp.VectorState | None) -> tuple[
        TensorType, VectorStep]:
    _checked(Stage.VECTOR_FP_UNARY, op)
    after = vp.vector_fp_unary(_state(Stage.VECTOR_FP_UNARY, src, state), op)
    return _at(src, after), VectorStep(after)


def vector_fp_binary(src: TensorType, *, op: FpBinary, operand: PassOperand,
                     state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    stage = Stage.VECTOR_FP_BINARY
    _checked(stage, op)
    after = vp.vector_fp_binary(_state(stage, src, state), op, _pure(stage, operand))
    return _op(stage, src, after, (operand,))


def vector_fp_ternary(src: TensorType, *, op: FpTernaryOp, operands: tuple[PassOperand, PassOperand], state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    stage = Stage.VECTOR_FP_TERNARY
    _checked(stage, op)
    if not isinstance(operands, tuple) or len(operands) != 2:
        raise not_an_operand(stage, f"{type(operands).__name__} where a pair of operands is due")
    first, second = operands
    after = vp.vector_fp_ternary(_state(stage, src, state), op, (_pure(stage, first), _pure(stage, second)))
    return _op(stage, src, after, operands)


def vector_fp_div(src: TensorType, *, operand: PassOperand,
                  state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    stage = Stage.VECTOR_FP_DIV
    after = vp.vector_fp_div(_state(stage, src, state), _pure(stage, operand))
    return _op(stage, src, after, (operand,))


def vector_clip(src: TensorType, *, op: ClipBinaryOpI32 | ClipBinaryOpF32, operand: PassOperand, state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    stage = Stage.VECTOR_CLIP
    _checked(stage, op)
    after = vp.vector_clip(_state(stage, src, state), op, _pure(stage, operand))
    return _op(stage, src, after, (operand,))


def vector_intra_slice_reduce(src: TensorType, *, out_time: Mapping, out_packet: Mapping, op: IntraReduceOp,
                              reduce: str, state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    """Reduce the ``reduce`` axis inside each slice (docs/stage-rules.md §6.4)."""
    _checked(Stage.VECTOR_INTRA_SLICE_REDUCE, op)
    after = vp.vector_intra_slice_reduce(_state(Stage.VECTOR_INTRA_SLICE_REDUCE, src, state), op)
    params = verify_vector_intra_slice_reduce(
        op, reduce=reduce, slice=src.grid[2], time=src.layout("Time"), packet=src.layout("Packet"),
        out_time=out_time, out_packet=out_packet,
    )
    return _at(src, after, time=out_time, packet=out_packet), VectorStep(after, params)


def vector_inter_slice_reduce(src: TensorType, *, out_slice: Mapping, out_time: Mapping, op: InterReduceOp,
                              state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    """Reduce across the slices of a cluster (docs/stage-rules.md §6.5)."""
    _checked(Stage.VECTOR_INTER_SLICE_REDUCE, op)
    after = vp.vector_inter_slice_reduce(_state(Stage.VECTOR_INTER_SLICE_REDUCE, src, state), op)
    params = verify_vector_inter_slice_reduce(slice=src.grid[2], time=src.layout("Time"), out_slice=out_slice,
                                              out_time=out_time)
    return _at(src, after, slice=out_slice, time=out_time), VectorStep(after, params)


def vector_narrow_split(src: TensorType, *, out_time: Mapping, out_packet: Mapping,
                        state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    after = vp.vector_narrow_split(_state(Stage.VECTOR_NARROW_SPLIT, src, state))
    params = verify_vector_narrow_split(time=src.layout("Time"), packet=src.layout("Packet"), out_time=out_time,
                                        out_packet=out_packet)
    return _at(src, after, time=params.out_time, packet=params.out_packet), VectorStep(after, params)


def vector_narrow_trim(src: TensorType, *, out_packet: Mapping, state: vp.VectorState | None) -> tuple[
        TensorType, VectorStep]:
    after = vp.vector_narrow_trim(_state(Stage.VECTOR_NARROW_TRIM, src, state))
    params = verify_vector_narrow_trim(time=src.layout("Time"), packet=src.layout("Packet"), out_packet=out_packet)
    return _at(src, after, packet=params.out_packet), VectorStep(after, params)


def vector_widen_concat(src: TensorType, *, out_time: Mapping, out_packet: Mapping,
                        state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    after = vp.vector_widen_concat(_state(Stage.VECTOR_WIDEN_CONCAT, src, state))
    params = verify_vector_widen_concat(time=src.layout("Time"), packet=src.layout("Packet"), out_time=out_time,
                                        out_packet=out_packet)
    return _at(src, after, time=params.out_time, packet=params.out_packet), VectorStep(after, params)


def vector_widen_pad(src: TensorType, *, out_packet: Mapping, state: vp.VectorState | None) -> tuple[
        TensorType, VectorStep]:
    after = vp.vector_widen_pad(_state(Stage.VECTOR_WIDEN_PAD, src, state))
    params = verify_vector_widen_pad(time=src.layout("Time"), packet=src.layout("Packet"), out_packet=out_packet)
    return _at(src, after, packet=params.out_packet), VectorStep(after, params)


def vector_fxp_to_fp(src: TensorType, *, int_width: int, state: vp.VectorState | None) -> tuple[
        TensorType, VectorStep]:
    after = vp.vector_fxp_to_fp(_state(Stage.VECTOR_FXP_TO_FP, src, state), int_width)
    return _at(src, after), VectorStep(after)


def vector_fp_to_fxp(src: TensorType, *, int_width: int, state: vp.VectorState | None) -> tuple[
        TensorType, VectorStep]:
    after = vp.vector_fp_to_fxp(_state(Stage.VECTOR_FP_TO_FXP, src, state), int_width)
    return _at(src, after), VectorStep(after)


def vector_reinterpret(src: TensorType, *, dtype: str, state: vp.VectorState | None) -> tuple[
        TensorType, VectorStep]:
    after = vp.vector_reinterpret(_state(Stage.VECTOR_REINTERPRET, src, state), dtype)
    return _at(src, after), VectorStep(after)


def vector_stash(src: TensorType, *, state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    after = vp.vector_stash(_state(Stage.VECTOR_STASH, src, state))
    return _at(src, after), VectorStep(after)


def vector_final(src: TensorType, *, state: vp.VectorState | None) -> tuple[TensorType, VectorStep]:
    after = vp.vector_final(_state(Stage.VECTOR_FINAL, src, state))
    return _at(src, after), VectorStep(after)
