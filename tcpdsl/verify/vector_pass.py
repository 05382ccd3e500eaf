"""A vector pass as a pure state machine (docs/stage-rules.md §6.1 and §6.3).

A :class:`VectorState` is where a pass stands: its stage, way, dtype, the ALUs it has used, the
stash and the order of its two blocks. Each method of the pass is one function here that takes the
state and returns the next one, or raises the rule it breaks. The checks run in one order for every
method: ``MulAlu`` (when the op names its ALU), ``StageOrder``, ``VeOrder``, ``WayOfStage``,
``Way8Entry``, ``Dtype`` (the stream's, then each operand's), ``IntWidth``, the stash rules, then
``AluOnce``. The layouts of narrow, widen and the reduces are
checked by their own verifiers; the tensor classes call both. An op's argument mode changes
nothing here: it only says which inputs the op reads.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Final

from tcpdsl.algebra import Mapping
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_ops import (
    F32,
    I32,
    VECTOR_DTYPES,
    Alu,
    ClipBinaryOpF32,
    ClipBinaryOpI32,
    FpBinary,
    FpTernaryOp,
    FpUnaryOp,
    FxpBinaryOp,
    InterReduceOp,
    IntraReduceOp,
    LogicBinaryOpF32,
    LogicBinaryOpI32,
    fp_binary_alu,
    op_dtype,
)

WAY8: Final = 8
WAY4: Final = 4
MAX_INT_WIDTH: Final = 31


class VeStage(enum.IntEnum):
    """A position of the pass; intra-slice stages are numbered in hardware order."""

    INIT = 0
    TAG = 1
    LOGIC = 2
    FXP = 3
    FXP_TO_FP = 4
    NARROW = 5
    FP = 6
    INTRA_SLICE_REDUCE = 7
    FP_DIV = 8
    WIDEN = 9
    FP_TO_FXP = 10
    CLIP = 11
    INTER_SLICE_REDUCE = 12
    FINAL = 13


# A stage that may follow itself: its cluster has several ALUs.
REPEATABLE: Final = frozenset({VeStage.LOGIC, VeStage.FXP, VeStage.FP, VeStage.CLIP})
# The way each stage runs at (narrow and widen: the way they take in).
WAY_OF: Final[dict[VeStage, int]] = {
    VeStage.LOGIC: WAY8,
    VeStage.FXP: WAY8,
    VeStage.FXP_TO_FP: WAY8,
    VeStage.NARROW: WAY8,
    VeStage.FP: WAY4,
    VeStage.INTRA_SLICE_REDUCE: WAY4,
    VeStage.FP_DIV: WAY4,
    VeStage.WIDEN: WAY4,
    VeStage.FP_TO_FXP: WAY8,
    VeStage.CLIP: WAY8,
    VeStage.INTER_SLICE_REDUCE: WAY8,
}
STASHABLE: Final = frozenset(
    {VeStage.TAG, VeStage.LOGIC, VeStage.FXP, VeStage.NARROW, VeStage.FP, VeStage.FP_DIV, VeStage.CLIP}
)
# Intra-slice stages that may hand the stream to the inter-slice reducer (all at Way8, not Tag).
INTER_FROM: Final = frozenset(
    {VeStage.LOGIC, VeStage.FXP, VeStage.FXP_TO_FP, VeStage.WIDEN, VeStage.FP_TO_FXP, VeStage.CLIP}
)
INTRA: Final = frozenset(s for s in VeStage if VeStage.TAG <= s <= VeStage.CLIP)


class StashState(enum.Enum):
    FRESH = "Fresh"
    OCCUPIED = "Occupied"
    SPENT = "Spent"


class VeOrder(enum.Enum):
    INTRA_FIRST = "IntraFirst"
    INTER_FIRST = "InterFirst"


class Block(enum.Enum):
    INTRA = "the intra-slice chain"
    INTER = "the inter-slice reducer"


@dataclass(frozen=True)
class Immediate:
    """A constant operand of ``dtype``."""

    dtype: str


@dataclass(frozen=True)
class VrfOperand:
    """A VRF tensor operand of ``dtype`` (read as often as needed)."""

    dtype: str


class StashRead(enum.Enum):
    """The stash as an operand: read once."""

    STASH = "Stash"


STASH: Final = StashRead.STASH
Operand = Immediate | VrfOperand | StashRead


@dataclass(frozen=True)
class VectorState:
    """Where a pass stands. ``stash_dtype``/``stash_way`` are those of the write while it is Occupied."""

    stage: VeStage
    way: int
    dtype: str
    alus: frozenset[Alu] = frozenset()
    stash: StashState = StashState.FRESH
    stash_dtype: str | None = None
    stash_way: int | None = None
    order: VeOrder | None = None
    entered: frozenset[Block] = frozenset()


def _name(stage: VeStage) -> str:
    return stage.name.replace("_", " ").title().replace(" ", "")


def way_after(stage: VeStage) -> int:
    """The way a stream has after reaching ``stage`` (narrow gives Way4, widen Way8)."""
    if stage is VeStage.NARROW:
        return WAY4
    return WAY8 if stage is VeStage.WIDEN else WAY_OF.get(stage, WAY8)


def may_follow(now: VeStage, target: VeStage) -> bool:
    """Whether a stream at ``now`` may go on to ``target``: ``StageOrder`` and ``WayOfStage`` allow it."""
    if now is target is VeStage.INTER_SLICE_REDUCE:
        return False  # VeOrder: the reducer is entered once
    state = VectorState(stage=now, way=way_after(now), dtype=F32)
    try:
        _stage_order(Stage.VECTOR_FINAL, state, target)
        _way(Stage.VECTOR_FINAL, state, target)
    except LayoutError:
        return False
    return target is not VeStage.FINAL or state.way == WAY8


def _stage_order(method: Stage, state: VectorState, target: VeStage) -> None:
    """Raise ``StageOrder`` unless ``target`` may follow ``state.stage`` (docs/stage-rules.md §6.1)."""
    now = state.stage
    if now is VeStage.FINAL:
        why, hint = "the pass has ended", "start a new pass with vector_init"
    elif target is VeStage.FINAL:
        if now is not VeStage.INIT:
            return
        why, hint = "an empty pass", "enter a block first: vector_intra_slice_tag or vector_inter_slice_reduce"
    elif target is VeStage.INTER_SLICE_REDUCE:
        if now is VeStage.INIT or now in INTER_FROM or now is VeStage.INTER_SLICE_REDUCE:
            return  # a second entry is VeOrder's to report
        why = "the inter-slice reducer is entered from vector_init or a Way8 stage after Tag"
        hint = "leave Tag through a Logic, Fxp or Clip op, or widen back to Way8 first"
    elif now is VeStage.INIT:
        if target is VeStage.TAG:
            return
        why, hint = "the intra-slice chain starts with its tag", "call vector_intra_slice_tag(TagMode.ZERO) first"
    elif now is VeStage.INTER_SLICE_REDUCE:
        if target is VeStage.TAG:
            return
        why = "after the inter-slice reducer only vector_intra_slice_tag or vector_final may come"
        hint = "re-enter the intra-slice chain with vector_intra_slice_tag, or end with vector_final"
    elif target > now or (target is now and target in REPEATABLE):
        return
    else:
        why = "the intra-slice stages run in hardware order and only Logic, Fxp, Fp and Clip repeat"
        hint = "reorder the ops, or split them over two passes"
    raise LayoutError(
        method,
        "StageOrder",
        f"{method}: stage {_name(target)} cannot follow stage {_name(now)}: {why}",
        hint=hint,
    )


def _enter(method: Stage, state: VectorState, block: Block) -> VectorState:
    """Enter ``block``; ``VeOrder`` refuses a second entry (docs/stage-rules.md §6.1)."""
    if block in state.entered:
        raise LayoutError(
            method,
            "VeOrder",
            f"{method}: {block.value} was already entered in this pass ({state.order.value if state.order else ''}); "
            "each block runs at most once",
            hint="end the pass with vector_final and start another with vector_init",
        )
    order = state.order or (VeOrder.INTRA_FIRST if block is Block.INTRA else VeOrder.INTER_FIRST)
    return replace(state, order=order, entered=state.entered | {block})


def _way(method: Stage, state: VectorState, target: VeStage) -> None:
    need = WAY_OF.get(target)
    if need is not None and state.way != need:
        fix = "narrow with vector_narrow_split or vector_narrow_trim" if need == WAY4 else (
            "widen with vector_widen_concat or vector_widen_pad")
        raise LayoutError(
            method,
            "WayOfStage",
            f"{method}: stage {_name(target)} runs at Way{need}, but the stream is at Way{state.way}",
            hint=f"{fix} first",
        )


def _dtype(method: Stage, got: str, want: str, what: str) -> None:
    if got != want:
        raise DtypeError(
            method,
            "Dtype",
            f"{method}: {what} must be {want}, got {got}",
            hint=f"convert the stream (vector_fxp_to_fp, vector_fp_to_fxp or vector_reinterpret) or use the {got} op",
        )


def _operand(method: Stage, state: VectorState, operand: Operand) -> VectorState:
    """Check an operand against the stream; a stash read spends the stash (docs/stage-rules.md §6.3)."""
    if not isinstance(operand, StashRead):
        _dtype(method, operand.dtype, state.dtype, "an operand's dtype (the stream's)")
        return state
    if state.stash is not StashState.OCCUPIED:
        why = "nothing was stashed" if state.stash is StashState.FRESH else "the stash was already read"
        raise LayoutError(
            method,
            "ReadOnce",
            f"{method}: the stash is read once after one vector_stash, but {why}",
            hint="call vector_stash earlier in the pass, and read it in one op only",
        )
    if state.stash_dtype != state.dtype:
        raise LayoutError(
            method,
            "SameScalar",
            f"{method}: the stash holds {state.stash_dtype} but the stream is {state.dtype}",
            hint="read the stash before converting the stream, or stash after the conversion",
        )
    if state.stash_way != state.way:
        raise LayoutError(
            method,
            "SameWay",
            f"{method}: the stash was written at Way{state.stash_way} but is read at Way{state.way}",
            hint="stash before a narrow or after a widen so that the write and the read share a way",
        )
    return replace(state, stash=StashState.SPENT, stash_dtype=None, stash_way=None)


def _use(method: Stage, state: VectorState, alu: Alu) -> VectorState:
    if alu in state.alus:
        raise LayoutError(
            method,
            "AluOnce",
            f"{method}: {alu} is already in use",
            hint="each ALU serves one op per pass: use another ALU of the cluster or split the ops over two passes",
        )
    return replace(state, alus=state.alus | {alu})


def _op(method: Stage, state: VectorState, target: VeStage, want: str, alu: Alu,
        operands: tuple[Operand, ...]) -> VectorState:
    """The common path of an op with operands: order, way, dtype, operands, then its ALU."""
    _stage_order(method, state, target)
    _way(method, state, target)
    _dtype(method, state.dtype, want, "the stream's dtype for this op")
    for operand in operands:
        state = _operand(method, state, operand)
    return replace(_use(method, state, alu), stage=target)


def vector_init(dtype: str) -> VectorState:
    """Start a pass on a stream of ``dtype`` (i32 or f32; the input packet is one flit)."""
    method = Stage.VECTOR_INIT
    if dtype not in VECTOR_DTYPES:
        raise DtypeError(
            method,
            "Dtype",
            f"{method}: the vector engine computes on i32 or f32, got {dtype}",
            hint="cast the stream to f32 (fetch_cast) or i32 before vector_init",
        )
    return VectorState(stage=VeStage.INIT, way=WAY8, dtype=dtype)


def vector_intra_slice_tag(state: VectorState, *, packet: Mapping) -> VectorState:
    """Enter the intra-slice chain (its TagMode sets the tags, which the state does not follow)."""
    method = Stage.VECTOR_INTRA_SLICE_TAG
    _stage_order(method, state, VeStage.TAG)
    state = _enter(method, state, Block.INTRA)
    if packet.size != WAY8:
        raise LayoutError(
            method,
            "Way8Entry",
            f"{method}: the intra-slice chain takes a packet of 8 elements (one flit), got {packet.size} in {packet}",
            hint="collect or contract into an 8-element packet (pad with `# 8`) before the vector engine",
        )
    return replace(state, stage=VeStage.TAG)


def vector_logic(state: VectorState, op: LogicBinaryOpI32 | LogicBinaryOpF32, operand: Operand) -> VectorState:
    return _op(Stage.VECTOR_LOGIC, state, VeStage.LOGIC, op_dtype(op), op.alu, (operand,))


def vector_fxp(state: VectorState, op: FxpBinaryOp, operand: Operand) -> VectorState:
    return _op(Stage.VECTOR_FXP, state, VeStage.FXP, I32, op.alu, (operand,))


def vector_fp_unary(state: VectorState, op: FpUnaryOp) -> VectorState:
    return _op(Stage.VECTOR_FP_UNARY, state, VeStage.FP, F32, op.alu, ())


def vector_fp_binary(state: VectorState, op: FpBinary, operand: Operand) -> VectorState:
    return _op(Stage.VECTOR_FP_BINARY, state, VeStage.FP, F32, fp_binary_alu(op), (operand,))


def vector_fp_ternary(state: VectorState, op: FpTernaryOp, operands: tuple[Operand, Operand]) -> VectorState:
    return _op(Stage.VECTOR_FP_TERNARY, state, VeStage.FP, F32, op.alu, operands)


def vector_intra_slice_reduce(state: VectorState, op: IntraReduceOp) -> VectorState:
    """Reduce inside each slice (its layout: ``verify_vector_intra_slice_reduce``)."""
    return _op(Stage.VECTOR_INTRA_SLICE_REDUCE, state, VeStage.INTRA_SLICE_REDUCE, op_dtype(op),
               Alu.REDUCE_ACC_TREE, ())


def vector_fp_div(state: VectorState, operand: Operand) -> VectorState:
    return _op(Stage.VECTOR_FP_DIV, state, VeStage.FP_DIV, F32, Alu.REDUCE_FP_DIV, (operand,))


def vector_clip(state: VectorState, op: ClipBinaryOpI32 | ClipBinaryOpF32, operand: Operand) -> VectorState:
    return _op(Stage.VECTOR_CLIP, state, VeStage.CLIP, op_dtype(op), op.alu, (operand,))


def _reshape(method: Stage, state: VectorState, target: VeStage, out_way: int) -> VectorState:
    _stage_order(method, state, target)
    _way(method, state, target)
    return replace(state, stage=target, way=out_way)


def vector_narrow_split(state: VectorState) -> VectorState:
    return _reshape(Stage.VECTOR_NARROW_SPLIT, state, VeStage.NARROW, WAY4)


def vector_narrow_trim(state: VectorState) -> VectorState:
    return _reshape(Stage.VECTOR_NARROW_TRIM, state, VeStage.NARROW, WAY4)


def vector_widen_concat(state: VectorState) -> VectorState:
    return _reshape(Stage.VECTOR_WIDEN_CONCAT, state, VeStage.WIDEN, WAY8)


def vector_widen_pad(state: VectorState) -> VectorState:
    return _reshape(Stage.VECTOR_WIDEN_PAD, state, VeStage.WIDEN, WAY8)


def _int_width(method: Stage, int_width: int) -> None:
    if isinstance(int_width, bool) or not isinstance(int_width, int) or not 0 <= int_width <= MAX_INT_WIDTH:
        raise LayoutError(
            method,
            "IntWidth",
            f"{method}: the integer width of a fixed-point number is 0 to 31 bits, got {int_width!r}",
            hint="pass 31 for a plain integer, fewer bits to keep a fraction",
        )


def _convert(method: Stage, state: VectorState, target: VeStage, source: str, result: str,
             int_width: int) -> VectorState:
    _stage_order(method, state, target)
    _way(method, state, target)
    _dtype(method, state.dtype, source, "the stream's dtype for this conversion")
    _int_width(method, int_width)
    return replace(state, stage=target, dtype=result)


def vector_fxp_to_fp(state: VectorState, int_width: int) -> VectorState:
    return _convert(Stage.VECTOR_FXP_TO_FP, state, VeStage.FXP_TO_FP, I32, F32, int_width)


def vector_fp_to_fxp(state: VectorState, int_width: int) -> VectorState:
    return _convert(Stage.VECTOR_FP_TO_FXP, state, VeStage.FP_TO_FXP, F32, I32, int_width)


def vector_reinterpret(state: VectorState, dtype: str) -> VectorState:
    """Read the stream's bits as ``dtype``; no stage, no ALU, the way unchanged."""
    method = Stage.VECTOR_REINTERPRET
    if state.stage not in INTRA:
        raise LayoutError(
            method,
            "StageOrder",
            f"{method}: a reinterpret happens inside the intra-slice chain, not at stage {_name(state.stage)}",
            hint="enter the chain with vector_intra_slice_tag first",
        )
    if dtype not in VECTOR_DTYPES:
        raise DtypeError(
            method,
            "Dtype",
            f"{method}: the vector engine computes on i32 or f32, got {dtype}",
            hint="reinterpret as i32 or f32",
        )
    return replace(state, dtype=dtype)


def vector_stash(state: VectorState) -> VectorState:
    """Keep a copy of the stream for one later read (docs/stage-rules.md §6.3)."""
    method = Stage.VECTOR_STASH
    if state.stage not in STASHABLE:
        raise LayoutError(
            method,
            "StashStage",
            f"{method}: the stash is written at Tag, Logic, Fxp, Narrow, Fp, FpDiv or Clip, not at stage "
            f"{_name(state.stage)}",
            hint="move vector_stash next to one of those stages",
        )
    if state.stash is not StashState.FRESH:
        raise LayoutError(
            method,
            "WriteOnce",
            f"{method}: the stash is written once per pass, and it is {state.stash.value}",
            hint="keep one vector_stash per pass; a spent stash does not come back",
        )
    return replace(state, stash=StashState.OCCUPIED, stash_dtype=state.dtype, stash_way=state.way)


def vector_inter_slice_reduce(state: VectorState, op: InterReduceOp) -> VectorState:
    """Enter the inter-slice reducer (its layout: ``verify_vector_inter_slice_reduce``)."""
    method = Stage.VECTOR_INTER_SLICE_REDUCE
    _stage_order(method, state, VeStage.INTER_SLICE_REDUCE)
    state = _enter(method, state, Block.INTER)
    _way(method, state, VeStage.INTER_SLICE_REDUCE)
    _dtype(method, state.dtype, op_dtype(op), "the stream's dtype for this reduce op")
    if state.stash is StashState.OCCUPIED:
        raise LayoutError(
            method,
            "DroppedByInter",
            f"{method}: the stash holds a value that was never read, and the inter-slice reducer discards it",
            hint="read the stash before vector_inter_slice_reduce, or drop the vector_stash",
        )
    # The reducer hands on a fresh stash: an InterFirst pass may stash again in its intra-slice chain.
    return replace(state, stage=VeStage.INTER_SLICE_REDUCE, way=WAY8, stash=StashState.FRESH,
                   stash_dtype=None, stash_way=None)


def vector_final(state: VectorState) -> VectorState:
    """End the pass at Way8."""
    method = Stage.VECTOR_FINAL
    _stage_order(method, state, VeStage.FINAL)
    if state.way != WAY8:
        raise LayoutError(
            method,
            "ExitWay8",
            f"{method}: a pass ends at Way8, but the stream is at Way{state.way}",
            hint="widen with vector_widen_concat or vector_widen_pad before vector_final",
        )
    return replace(state, stage=VeStage.FINAL)
