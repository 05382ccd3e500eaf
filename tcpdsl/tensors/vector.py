"""The vector engine's pass as typed positions (docs/stage-rules.md §6).

``vector_init()`` on a collected stream or a contraction result starts a pass; each method returns
the class of the position it moves the stream to, and each class has only the methods of the
stages that may follow it (the table of docs/stage-rules.md §6.1). The way is part of the position
(Narrow, Fp, IntraReduce and FpDiv are Way4), so a Way8 op after a narrow is an attribute error for
checkers. The stash is a last type parameter, ``Fresh``, ``Occupied`` or ``Spent`` (``Fresh`` when
left out): ``vector_stash`` needs a ``Fresh`` stream and gives an ``Occupied`` one, and ``tcp.STASH``
as an operand needs ``Occupied`` and gives ``Spent``, so plain mypy and pyright refuse a second read.
The rules the types cannot carry (``AluOnce``, ``VeOrder``, the layouts) are checked at the call by
the composers, at run time and by the plugin alike.

Nothing is computed while a pass is built: each method records a step on a
:class:`~tcpdsl.numerics.vector_chain.VectorChain`, which the selected evaluator runs when the
values are read. ``vector_final()`` ends the pass in a :class:`VectorFinalTensor`, a stream position
whose flow starts from the pass's result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Generic, overload

import numpy as np
from typing_extensions import TypeVar

from tcpdsl.algebra import Axis, Digit
from tcpdsl.cost import VectorPassCost, vector_pass_cost
from tcpdsl.evaluate.backend import get as get_evaluator
from tcpdsl.numerics.flow import Flow, Root
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.placement import plan
from tcpdsl.numerics.scalars import Scalar, f32, i32
from tcpdsl.numerics.vector_chain import Constant, OperandValue, PassSource, PassStep, VectorChain, VrfValues
from tcpdsl.tensors import back
from tcpdsl.tensors.back import CastTensor, CommitTrimTensor, Out, TransposeTensor
from tcpdsl.tensors.base import Array, ChipT, ClusterT, D, PacketT, SliceT, TensorBase, TimeT, interned, unspecialised
from tcpdsl.tensors.filled import FLOW_SERIAL, filled
from tcpdsl.tensors.recording import values_read
from tcpdsl.tensors.stream import FlowTensor
from tcpdsl.tensors.subscription import Spec, spec_of
from tcpdsl.tensors.memory import VrfTensor
from tcpdsl.verify import vector_compose as vc
from tcpdsl.verify.families import VECTOR_FAMILIES
from tcpdsl.verify.intra_reduce import IntraReduceParams
from tcpdsl.verify.inter_reduce import InterReduceParams
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_ops import (
    BinaryArgMode,
    ClipBinaryOpF32,
    ClipBinaryOpI32,
    FpBinaryOp,
    FpTernaryOp,
    FpUnaryOp,
    FxpBinaryOp,
    InterSliceReduceOpF32,
    InterSliceReduceOpI32,
    IntraSliceReduceOpF32,
    IntraSliceReduceOpI32,
    LogicBinaryOpF32,
    LogicBinaryOpI32,
    MulF,
    TagMode,
    TernaryArgMode,
    op_dtype,
)
from tcpdsl.verify.vector_pass import WAY4, StashRead, VectorState, VeStage, way_after


class Fresh:
    """The stash holds nothing yet: ``vector_stash`` may write it."""


class Occupied:
    """The stash holds a copy of the stream: one op may read it as ``tcp.STASH``."""


class Spent:
    """The stash was read: it is not written or read again in this pass."""


StashT = TypeVar("StashT", default=Fresh)
NumberOrVrf = float | VrfTensor[Any, Any, Any, Any, Any]
Operand = NumberOrVrf | StashRead


class PassTensor(TensorBase):
    """A position of a vector pass: its type, the pass's state and the steps recorded so far."""

    __slots__ = ("_chain", "_state")
    __tcp_typestate__ = 1  # the stash state, a type parameter only checkers read
    _chain: VectorChain
    _state: VectorState

    @classmethod
    def _of(cls, spec: Spec, chain: VectorChain, state: VectorState) -> Any:
        out = object.__new__(cls)
        out._spec = spec
        out._chain = chain
        out._state = state
        return out

    @property
    def chain(self) -> VectorChain:
        """The pass as recorded: its source and its steps."""
        return self._chain

    def _operand(self, stage: Stage, value: object, dtype: str) -> tuple[vc.PassOperand, OperandValue]:
        """An operand for the composer (its type) and for the evaluators (its values)."""
        if isinstance(value, StashRead):
            return value, value
        if isinstance(value, VrfTensor):
            spec, flow = spec_of(value), value.flow
            assert spec is not None  # a VrfTensor instance always has its type
            return spec.tensor_type, VrfValues(lambda name: get_evaluator(name).flow_logical(flow), flow.root.terms,
                                               flow)
        if isinstance(value, TensorBase):
            raise vc.not_an_operand(stage, type(value).__name__)
        kind = type(value)
        if kind is not float and kind is not int:
            return interned(vc.constant(stage, value, dtype)), Constant(value)  # type: ignore[arg-type]
        # An exact int or float passes the composer's checks as any equal value of its type does (a bool,
        # equal to an int, is another type), so the operand's type is kept by value.
        key = (stage, kind, value, dtype)
        immediate = _IMMEDIATES.get(key)
        if immediate is None:
            immediate = interned(vc.constant(stage, value, dtype))
            if len(_IMMEDIATES) >= _PASS_STEPS_LIMIT:
                _IMMEDIATES.clear()
            _IMMEDIATES[key] = immediate
        return immediate, Constant(value)  # type: ignore[arg-type]

    def _step(self, cls: type[Any], stage: Stage, mappings: dict[str, Any] | None = None, *,
              record: dict[str, Any] | None = None, **options: Any) -> Any:
        """Compose the row with the pass's state, record the step, and return the next position.

        A step that reads no operand values is found in one lookup by the identity of the receiver's type,
        its state and the arguments (what :meth:`_compose` and :func:`_pass_step` would each look up);
        it is kept only when the composer kept the call by identity (its options are hashable)."""
        if mappings is None:
            mappings = {}
        state, receiver = self._state, self._spec
        if record is None or "operands" not in record:
            kept = record or {}
            held = (receiver, state, *mappings.values(), *options.values(), *kept.values())
            key = (stage, len(mappings), len(options), *mappings, *options, *kept, *map(id, held))
            found = _SEEN_STEPS.get(key)
            if found is None:
                spec, step = self._compose(stage, mappings, state=state, **options)
                recorded = _pass_step(stage, spec, step, record)
                composed = (stage, *mappings, "state", *options, *map(id, (*mappings.values(), state,
                                                                             *options.values())))
                if composed in receiver._calls:
                    if len(_SEEN_STEPS) >= _PASS_STEPS_LIMIT:
                        _SEEN_STEPS.clear()
                    _SEEN_STEPS[key] = (held, (spec, step, recorded))
            else:
                spec, step, recorded = found[1]
        else:
            spec, step = self._compose(stage, mappings, state=state, **options)
            recorded = _pass_step(stage, spec, step, record)
        target = cls if cls is not PassTensor else type(self)
        before = self._chain
        chain = _chained(before.source, (*before.steps, recorded))
        if target is VectorFinalTensor:
            return VectorFinalTensor._ended(spec, chain)
        out = object.__new__(target)  # as _of builds it, one call fewer on every method of a pass
        out._spec, out._chain, out._state = spec, chain, step.state
        return out

    def _binary(self, cls: type[Any], stage: Stage, op: object, operand: object, mode: object) -> Any:
        vc.check_choice(stage, "op", op, vc.OPS[stage])
        vc.check_choice(stage, "mode", mode, (BinaryArgMode,))
        typed, value = self._operand(stage, operand, op_dtype(op))
        return self._step(cls, stage, op=op, operand=typed, record={"op": op, "operands": (value,), "mode": mode})

    def _reinterpret(self, dtype: object) -> Any:
        name = getattr(dtype, "name", repr(dtype))
        return self._step(PassTensor, Stage.VECTOR_REINTERPRET, dtype=name, record={"dtype": name})

    def to_tensor(self) -> Tensor:
        """The stream's values at this position, computed by the selected evaluator."""
        values_read()
        return Tensor.of_terms(get_evaluator().vector_logical(self._chain), self._spec.terms)

    def physical(self) -> Array:
        values_read()
        return get_evaluator().vector_physical(self._chain).reshape(self._dims())

    def _describe(self) -> str:
        return describe_pass(self._spec, self._chain, self._state)


def describe_pass(spec: Spec, chain: VectorChain, state: VectorState) -> str:
    """Each step of a pass with what its verifier derived, then the pass's cycles."""
    lines = [f"{spec.text()}  (vector pass, {state.order.value if state.order else 'no block yet'})"]
    for step in chain.steps:
        derived = "" if step.step.layout is None else f": {step.step.layout}"
        lines.append(f"  {step.stage} -> {step.layouts[3]} | {step.layouts[4]} ({step.step.state.dtype}, "
                     f"Way{step.step.state.way}){derived}")
    cost = pass_cost(chain, state)
    lines.append(f"  cost: {cost.cycles} cycles streaming, {cost.latency} cycles latency; {'; '.join(cost.notes)}")
    return "\n".join(lines)


def pass_cost(chain: VectorChain, state: VectorState) -> VectorPassCost:
    """The pass's cycles (docs/cost-model.md, "The vector engine"): its Way8 and Way4 Time, its reduces."""
    way8 = chain.source.layouts[3]
    way4 = None
    reduce = inter = None
    for step in chain.steps:
        layout = step.step.layout
        if isinstance(layout, IntraReduceParams):
            reduce = layout
        elif isinstance(layout, InterReduceParams):
            inter = layout
        if way_after(step.step.state.stage) == WAY4 and way4 is None:
            way4 = step.layouts[3]
    return vector_pass_cost(state, way8_time=way8, way4_time=way4, reduce=reduce, inter=inter)


def pass_source(spec: Spec, logical: Callable[[str], Array], physical: Callable[[str], Array],
                terms: tuple[Digit, ...], origin: object) -> PassSource:
    """The stream a pass starts from, as a collected stream or a contraction result hands it over; ``terms``
    are the terms its data has (the layout may replicate it over other axes)."""
    return filled(PassSource, {"layouts": spec.layouts, "dtype": spec.dtype, "logical": logical, "physical": physical,
                               "axes": _axes(terms), "origin": origin})


# Per-type answers a pass start and end would otherwise recompute on every call, by the identity of the
# objects they derive from (each entry keeps them alive, so the ids name them): the axes of a tuple of
# terms, and the terms and first-cell index of a pass's result.
_AXES: dict[int, tuple[tuple[Digit, ...], frozenset[str]]] = {}
_ENDS: dict[tuple[int, int], tuple[Spec, frozenset[str], tuple[Digit, ...], tuple[slice | int, ...]]] = {}
_PER_TYPE_LIMIT: Final = 4096


def _axes(terms: tuple[Digit, ...]) -> frozenset[str]:
    """The axes ``terms`` cover, one object per tuple of terms."""
    found = _AXES.get(id(terms))
    if found is None:
        if len(_AXES) >= _PER_TYPE_LIMIT:
            _AXES.clear()
        found = _AXES[id(terms)] = (terms, frozenset(t.axis for t in terms))
    return found[1]


def _held(spec: Spec, axes: frozenset[str]) -> tuple[tuple[Digit, ...], tuple[slice | int, ...]]:
    """The terms of ``spec`` on the axes a pass's data has, and the index that reads them from values over
    ``spec.terms`` (the first cell of any other axis): one tuple per type, so the evaluators' caches find
    them by identity."""
    found = _ENDS.get((id(spec), id(axes)))
    if found is None:
        held = tuple(t for t in spec.terms if t.axis in axes)
        first = tuple(slice(None) if t in held else 0 for t in spec.terms)
        if len(_ENDS) >= _PER_TYPE_LIMIT:
            _ENDS.clear()
        found = _ENDS[(id(spec), id(axes))] = (spec, axes, held, first)
    return found[2], found[3]


def start_pass(spec: Spec, step: vc.VectorStep, source: PassSource) -> Any:
    """The VectorInitTensor of a pass whose ``vector_init`` composed to ``spec``."""
    return VectorInitTensor._of(spec, _chained(source, (_pass_step(Stage.VECTOR_INIT, spec, step, None),)), step.state)


# Pass steps by the identity of what they hold (each entry keeps its objects alive, so the ids name them):
# a method called again on a seen path with the same options records the same immutable step. A step
# with operands holds values made afresh on every call, so it is built each time.
_PASS_STEPS: dict[tuple[object, ...], tuple[tuple[object, ...], PassStep]] = {}
_PASS_STEPS_LIMIT: Final = 4096
# A method's composed type, step and pass step together, by the identity of the receiver's type, its state
# and the arguments (PassTensor._step); each entry keeps them alive.
_IMMEDIATES: dict[tuple[Stage, type, object, str], vc.PassOperand] = {}
_SEEN_STEPS: dict[tuple[object, ...], tuple[tuple[object, ...], tuple[Spec, vc.VectorStep, PassStep]]] = {}


def _pass_step(stage: Stage, spec: Spec, step: vc.VectorStep, record: dict[str, Any] | None) -> PassStep:
    """The :class:`PassStep` a method records: the stage, the layouts after it, its composed step and what it computes."""
    if record is None:
        record = {}
    elif "operands" in record:
        return filled(PassStep, {"stage": stage, "layouts": spec.layouts, "step": step, **record})
    held = (spec, step, *record.values())
    key = (stage, *record, *map(id, held))
    found = _PASS_STEPS.get(key)
    if found is None:
        if len(_PASS_STEPS) >= _PASS_STEPS_LIMIT:
            _PASS_STEPS.clear()
        found = _PASS_STEPS[key] = (held, filled(PassStep, {"stage": stage, "layouts": spec.layouts, "step": step,
                                                             **record}))
    return found[1]


def _chained(source: PassSource, steps: tuple[PassStep, ...]) -> VectorChain:
    """``VectorChain(source, steps)``, written field by field as ``tensors.filled`` does: a pass builds one per
    method, and the constructor costs more than the rest of the method."""
    chain = object.__new__(VectorChain)
    fields = chain.__dict__
    fields["source"] = source
    fields["steps"] = steps
    fields["cache"] = {}
    return chain


def _reduce_axis(stage: Stage, reduce: object) -> str:
    """``reduce=``: an axis, or its name."""
    vc.check_choice(stage, "reduce axis", reduce, (Axis, str))
    return str(reduce.name) if isinstance(reduce, Axis) else str(reduce)


# -- the methods, one mixin each, so that every position lists exactly the stages that may follow it ---------


class _Tag(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    def vector_intra_slice_tag(self, tag: TagMode) -> VectorTagTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT,
                                                                       StashT]:
        """Enter the intra-slice chain; ``TagMode.ZERO`` tags every element 0 (docs/stage-rules.md §6.1)."""
        return self._step(VectorTagTensor, Stage.VECTOR_INTRA_SLICE_TAG, tag=tag)  # type: ignore[no-any-return]


class _Logic(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    @overload
    def vector_logic(self: _Logic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied],
                     op: LogicBinaryOpI32 | LogicBinaryOpF32, operand: StashRead, *, mode: BinaryArgMode = ...,
                     ) -> VectorLogicTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Spent]: ...
    @overload
    def vector_logic(self, op: LogicBinaryOpI32 | LogicBinaryOpF32, operand: NumberOrVrf, *,
                     mode: BinaryArgMode = ...) -> VectorLogicTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT,
                                                                     StashT]: ...
    def vector_logic(self, op: LogicBinaryOpI32 | LogicBinaryOpF32, operand: Operand, *,
                     mode: BinaryArgMode = BinaryArgMode.MODE01) -> VectorLogicTensor[Any, Any, Any, Any, Any, Any, Any]:
        """A bit op of the Logic cluster (docs/stage-rules.md §6.1)."""
        return self._binary(VectorLogicTensor, Stage.VECTOR_LOGIC, op, operand, mode)  # type: ignore[no-any-return]


class _Fxp(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    @overload
    def vector_fxp(self: _Fxp[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied], op: FxpBinaryOp,
                   operand: StashRead, *, mode: BinaryArgMode = ...,
                   ) -> VectorFxpTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, Spent]: ...
    @overload
    def vector_fxp(self: _Fxp[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT], op: FxpBinaryOp,
                   operand: NumberOrVrf, *, mode: BinaryArgMode = ...,
                   ) -> VectorFxpTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_fxp(self, op: FxpBinaryOp, operand: Operand, *, mode: BinaryArgMode = BinaryArgMode.MODE01) -> VectorFxpTensor[Any, Any, Any, Any, Any, Any, Any]:
        """An i32 op of the Fxp cluster (docs/stage-rules.md §6.1)."""
        return self._binary(VectorFxpTensor, Stage.VECTOR_FXP, op, operand, mode)  # type: ignore[no-any-return]


class _FxpToFp(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    def vector_fxp_to_fp(self: _FxpToFp[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT], int_width: int,
                         ) -> VectorFxpToFpTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]:
        """Read the i32 stream as fixed point with ``int_width`` integer bits, to f32."""
        return self._step(VectorFxpToFpTensor, Stage.VECTOR_FXP_TO_FP, int_width=int_width,  # type: ignore[no-any-return]
                          record={"int_width": int_width})


class _Narrow(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    def vector_narrow_split(self, *, out_time: object, out_packet: object,
                            ) -> VectorNarrowTensor[D, ChipT, ClusterT, SliceT, Any, Any, StashT]:
        """Fold the back half of each flit onto Time: Way8 to Way4 (docs/stage-rules.md §6.2)."""
        args = self._mappings(Stage.VECTOR_NARROW_SPLIT, out_time=out_time, out_packet=out_packet)
        return self._step(VectorNarrowTensor, Stage.VECTOR_NARROW_SPLIT, args)  # type: ignore[no-any-return]

    def vector_narrow_trim(self, *, out_packet: object) -> VectorNarrowTensor[D, ChipT, ClusterT, SliceT, TimeT, Any,
                                                                              StashT]:
        """Drop the back half of each flit, which is padding: Way8 to Way4 (docs/stage-rules.md §6.2)."""
        args = self._mappings(Stage.VECTOR_NARROW_TRIM, out_packet=out_packet)
        return self._step(VectorNarrowTensor, Stage.VECTOR_NARROW_TRIM, args)  # type: ignore[no-any-return]


class _Fp(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    def vector_fp_unary(self: _Fp[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT], op: FpUnaryOp,
                        ) -> VectorFpTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]:
        """An f32 function of the Fp cluster (docs/stage-rules.md §6.1)."""
        vc.check_choice(Stage.VECTOR_FP_UNARY, "op", op, vc.OPS[Stage.VECTOR_FP_UNARY])
        return self._step(VectorFpTensor, Stage.VECTOR_FP_UNARY, op=op, record={"op": op})  # type: ignore[no-any-return]

    @overload
    def vector_fp_binary(self: _Fp[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied], op: FpBinaryOp | MulF,
                         operand: StashRead, *, mode: BinaryArgMode = ...,
                         ) -> VectorFpTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, Spent]: ...
    @overload
    def vector_fp_binary(self: _Fp[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT], op: FpBinaryOp | MulF,
                         operand: NumberOrVrf, *, mode: BinaryArgMode = ...,
                         ) -> VectorFpTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_fp_binary(self, op: FpBinaryOp | MulF, operand: Operand, *,
                         mode: BinaryArgMode = BinaryArgMode.MODE01) -> VectorFpTensor[Any, Any, Any, Any, Any, Any, Any]:
        """An f32 op of the Fp cluster; ``MUL_F`` names its multiplier (docs/stage-rules.md §6.1)."""
        return self._binary(VectorFpTensor, Stage.VECTOR_FP_BINARY, op, operand, mode)  # type: ignore[no-any-return]

    @overload
    def vector_fp_ternary(self: _Fp[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied], op: FpTernaryOp,
                          operands: tuple[StashRead, NumberOrVrf] | tuple[NumberOrVrf, StashRead], *,
                          mode: TernaryArgMode = ...,
                          ) -> VectorFpTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, Spent]: ...
    @overload
    def vector_fp_ternary(self: _Fp[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT], op: FpTernaryOp,
                          operands: tuple[NumberOrVrf, NumberOrVrf], *, mode: TernaryArgMode = ...,
                          ) -> VectorFpTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_fp_ternary(self, op: FpTernaryOp, operands: tuple[Operand, Operand], *,
                          mode: TernaryArgMode = TernaryArgMode.MODE012) -> VectorFpTensor[Any, Any, Any, Any, Any, Any, Any]:
        """``FMA_F`` on the stream and a pair of operands (``MODE012``: ``stream * o0 + o1``)."""
        stage = Stage.VECTOR_FP_TERNARY
        vc.check_choice(stage, "op", op, vc.OPS[stage])
        vc.check_choice(stage, "mode", mode, (TernaryArgMode,))
        pairs = [self._operand(stage, o, "f32") for o in operands] if isinstance(operands, tuple) else []
        typed = interned(tuple(t for t, _ in pairs)) if len(pairs) == 2 else operands
        values = tuple(v for _, v in pairs)
        return self._step(VectorFpTensor, stage, op=op, operands=typed,  # type: ignore[no-any-return]
                          record={"op": op, "operands": values, "mode": mode})


class _IntraReduce(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    def vector_intra_slice_reduce(self, op: IntraSliceReduceOpI32 | IntraSliceReduceOpF32, *, out_time: object,
                                  out_packet: object, reduce: object,
                                  ) -> VectorIntraReduceTensor[D, ChipT, ClusterT, SliceT, Any, Any, StashT]:
        """Reduce the axis ``reduce`` inside each slice into ``[OutTime, OutPacket]`` (docs/stage-rules.md §6.4)."""
        stage = Stage.VECTOR_INTRA_SLICE_REDUCE
        axis = _reduce_axis(stage, reduce)
        args = self._mappings(stage, out_time=out_time, out_packet=out_packet)
        return self._step(VectorIntraReduceTensor, stage, args, op=op, reduce=axis,  # type: ignore[no-any-return]
                          record={"op": op, "reduce": axis})


class _FpDiv(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    @overload
    def vector_fp_div(self: _FpDiv[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied], operand: StashRead, *,
                      mode: BinaryArgMode = ...,
                      ) -> VectorFpDivTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, Spent]: ...
    @overload
    def vector_fp_div(self: _FpDiv[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT], operand: NumberOrVrf, *,
                      mode: BinaryArgMode = ...,
                      ) -> VectorFpDivTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_fp_div(self, operand: Operand, *, mode: BinaryArgMode = BinaryArgMode.MODE01) -> VectorFpDivTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Divide the f32 stream by ``operand`` (``MODE10``: the operand by the stream)."""
        stage = Stage.VECTOR_FP_DIV
        vc.check_choice(stage, "mode", mode, (BinaryArgMode,))
        typed, value = self._operand(stage, operand, "f32")
        return self._step(VectorFpDivTensor, stage, operand=typed,  # type: ignore[no-any-return]
                          record={"operands": (value,), "mode": mode})


class _Widen(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    def vector_widen_concat(self, *, out_time: object, out_packet: object,
                            ) -> VectorWidenTensor[D, ChipT, ClusterT, SliceT, Any, Any, StashT]:
        """Join two Way4 packets into one flit: Way4 to Way8 (docs/stage-rules.md §6.2)."""
        args = self._mappings(Stage.VECTOR_WIDEN_CONCAT, out_time=out_time, out_packet=out_packet)
        return self._step(VectorWidenTensor, Stage.VECTOR_WIDEN_CONCAT, args)  # type: ignore[no-any-return]

    def vector_widen_pad(self, *, out_packet: object) -> VectorWidenTensor[D, ChipT, ClusterT, SliceT, TimeT, Any,
                                                                           StashT]:
        """Pad each Way4 packet back to a flit (docs/stage-rules.md §6.2)."""
        args = self._mappings(Stage.VECTOR_WIDEN_PAD, out_packet=out_packet)
        return self._step(VectorWidenTensor, Stage.VECTOR_WIDEN_PAD, args)  # type: ignore[no-any-return]


class _FpToFxp(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    def vector_fp_to_fxp(self: _FpToFxp[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT], int_width: int,
                         ) -> VectorFpToFxpTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]:
        """Round the f32 stream to fixed point with ``int_width`` integer bits, saturating."""
        return self._step(VectorFpToFxpTensor, Stage.VECTOR_FP_TO_FXP, int_width=int_width,  # type: ignore[no-any-return]
                          record={"int_width": int_width})


class _Clip(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    @overload
    def vector_clip(self: _Clip[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied],
                    op: ClipBinaryOpI32 | ClipBinaryOpF32, operand: StashRead, *, mode: BinaryArgMode = ...,
                    ) -> VectorClipTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Spent]: ...
    @overload
    def vector_clip(self, op: ClipBinaryOpI32 | ClipBinaryOpF32, operand: NumberOrVrf, *,
                    mode: BinaryArgMode = ...) -> VectorClipTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT,
                                                                   StashT]: ...
    def vector_clip(self, op: ClipBinaryOpI32 | ClipBinaryOpF32, operand: Operand, *,
                    mode: BinaryArgMode = BinaryArgMode.MODE01) -> VectorClipTensor[Any, Any, Any, Any, Any, Any, Any]:
        """A min, max or add of the Clip cluster (docs/stage-rules.md §6.1)."""
        return self._binary(VectorClipTensor, Stage.VECTOR_CLIP, op, operand, mode)  # type: ignore[no-any-return]


class _InterReduce(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    def vector_inter_slice_reduce(self, op: InterSliceReduceOpI32 | InterSliceReduceOpF32, *, out_slice: object,
                                  out_time: object) -> VectorInterReduceTensor[D, ChipT, ClusterT, Any, Any, PacketT]:
        """Reduce across the innermost slices of each group into ``[OutSlice, OutTime]`` (docs/stage-rules.md §6.5)."""
        stage = Stage.VECTOR_INTER_SLICE_REDUCE
        args = self._mappings(stage, out_slice=out_slice, out_time=out_time)
        return self._step(VectorInterReduceTensor, stage, args, op=op, record={"op": op})  # type: ignore[no-any-return]


class _Final(PassTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]):
    __slots__ = ()

    def vector_final(self) -> VectorFinalTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT]:
        """End the pass at Way8 (docs/stage-rules.md §6.1)."""
        return self._step(VectorFinalTensor, Stage.VECTOR_FINAL)  # type: ignore[no-any-return]


# -- the positions: each inherits the methods of the stages that may follow it ----------------------------


class VectorInitTensor(
    _Tag[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _InterReduce[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """A stream that entered the vector engine: Way8, no block entered yet."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.INIT]

    def __init__(self) -> None:
        raise unspecialised("VectorInitTensor")


class VectorTagTensor(
    _Logic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Fxp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _FxpToFp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Narrow[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _FpToFxp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Clip[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Final[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After the tag: the intra-slice chain at Way8."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.TAG]

    def __init__(self) -> None:
        raise unspecialised("VectorTagTensor")

    def vector_stash(self: VectorTagTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Fresh]) -> VectorTagTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied]:
        """Keep a copy of the stream for one later read as ``tcp.STASH`` (docs/stage-rules.md §6.3)."""
        return self._step(PassTensor, Stage.VECTOR_STASH)  # type: ignore[no-any-return]

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorTagTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorTagTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorTagTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorLogicTensor(
    _Logic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Fxp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _FxpToFp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Narrow[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _FpToFxp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Clip[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _InterReduce[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Final[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After a Logic op (Way8)."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.LOGIC]

    def __init__(self) -> None:
        raise unspecialised("VectorLogicTensor")

    def vector_stash(self: VectorLogicTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Fresh]) -> VectorLogicTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied]:
        """Keep a copy of the stream for one later read as ``tcp.STASH`` (docs/stage-rules.md §6.3)."""
        return self._step(PassTensor, Stage.VECTOR_STASH)  # type: ignore[no-any-return]

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorLogicTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorLogicTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorLogicTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorFxpTensor(
    _Fxp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _FxpToFp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Narrow[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _FpToFxp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Clip[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _InterReduce[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Final[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After an Fxp op (Way8, i32)."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.FXP]

    def __init__(self) -> None:
        raise unspecialised("VectorFxpTensor")

    def vector_stash(self: VectorFxpTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Fresh]) -> VectorFxpTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied]:
        """Keep a copy of the stream for one later read as ``tcp.STASH`` (docs/stage-rules.md §6.3)."""
        return self._step(PassTensor, Stage.VECTOR_STASH)  # type: ignore[no-any-return]

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorFxpTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorFxpTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorFxpTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorFxpToFpTensor(
    _Narrow[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _FpToFxp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Clip[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _InterReduce[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Final[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After the fixed-point to f32 conversion (Way8)."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.FXP_TO_FP]

    def __init__(self) -> None:
        raise unspecialised("VectorFxpToFpTensor")

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorFxpToFpTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorFxpToFpTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorFxpToFpTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorNarrowTensor(
    _Fp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _IntraReduce[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _FpDiv[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Widen[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After a narrow: Way4."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.NARROW]

    def __init__(self) -> None:
        raise unspecialised("VectorNarrowTensor")

    def vector_stash(self: VectorNarrowTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Fresh]) -> VectorNarrowTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied]:
        """Keep a copy of the stream for one later read as ``tcp.STASH`` (docs/stage-rules.md §6.3)."""
        return self._step(PassTensor, Stage.VECTOR_STASH)  # type: ignore[no-any-return]

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorNarrowTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorNarrowTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorNarrowTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorFpTensor(
    _Fp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _IntraReduce[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _FpDiv[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Widen[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After an Fp op (Way4, f32)."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.FP]

    def __init__(self) -> None:
        raise unspecialised("VectorFpTensor")

    def vector_stash(self: VectorFpTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Fresh]) -> VectorFpTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied]:
        """Keep a copy of the stream for one later read as ``tcp.STASH`` (docs/stage-rules.md §6.3)."""
        return self._step(PassTensor, Stage.VECTOR_STASH)  # type: ignore[no-any-return]

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorFpTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorFpTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorFpTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorIntraReduceTensor(
    _FpDiv[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Widen[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After the intra-slice reduce (Way4)."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.INTRA_SLICE_REDUCE]

    def __init__(self) -> None:
        raise unspecialised("VectorIntraReduceTensor")

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorIntraReduceTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorIntraReduceTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorIntraReduceTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorFpDivTensor(
    _Widen[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After the divider (Way4, f32)."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.FP_DIV]

    def __init__(self) -> None:
        raise unspecialised("VectorFpDivTensor")

    def vector_stash(self: VectorFpDivTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Fresh]) -> VectorFpDivTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied]:
        """Keep a copy of the stream for one later read as ``tcp.STASH`` (docs/stage-rules.md §6.3)."""
        return self._step(PassTensor, Stage.VECTOR_STASH)  # type: ignore[no-any-return]

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorFpDivTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorFpDivTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorFpDivTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorWidenTensor(
    _FpToFxp[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Clip[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _InterReduce[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Final[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After a widen: Way8 again."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.WIDEN]

    def __init__(self) -> None:
        raise unspecialised("VectorWidenTensor")

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorWidenTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorWidenTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorWidenTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorFpToFxpTensor(
    _Clip[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _InterReduce[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Final[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After the f32 to fixed-point conversion (Way8, i32)."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.FP_TO_FXP]

    def __init__(self) -> None:
        raise unspecialised("VectorFpToFxpTensor")

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorFpToFxpTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorFpToFxpTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorFpToFxpTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorClipTensor(
    _Clip[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _InterReduce[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Final[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After a Clip op (Way8)."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.CLIP]

    def __init__(self) -> None:
        raise unspecialised("VectorClipTensor")

    def vector_stash(self: VectorClipTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Fresh]) -> VectorClipTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT, Occupied]:
        """Keep a copy of the stream for one later read as ``tcp.STASH`` (docs/stage-rules.md §6.3)."""
        return self._step(PassTensor, Stage.VECTOR_STASH)  # type: ignore[no-any-return]

    @overload
    def vector_reinterpret(self, dtype: type[i32]) -> VectorClipTensor[i32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    @overload
    def vector_reinterpret(self, dtype: type[f32]) -> VectorClipTensor[f32, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT]: ...
    def vector_reinterpret(self, dtype: type[Scalar]) -> VectorClipTensor[Any, Any, Any, Any, Any, Any, Any]:
        """Read the stream's bits as ``dtype`` (i32 or f32), staying at this position."""
        return self._reinterpret(dtype)  # type: ignore[no-any-return]


class VectorInterReduceTensor(
    _Tag[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    _Final[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
    Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT, StashT],
):
    """After the inter-slice reducer (Way8); the stash is fresh again."""

    __slots__ = ()
    __tcp_family__ = VECTOR_FAMILIES[VeStage.INTER_SLICE_REDUCE]

    def __init__(self) -> None:
        raise unspecialised("VectorInterReduceTensor")


class VectorFinalTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A pass's result: a stream position at Way8 whose flow starts from the values the pass computed."""

    __slots__ = ("_pass",)
    _pass: VectorChain
    __tcp_family__ = VECTOR_FAMILIES[VeStage.FINAL]

    def __init__(self) -> None:
        raise unspecialised("VectorFinalTensor")

    @classmethod
    def _ended(cls, spec: Spec, chain: VectorChain) -> Any:
        # The result holds the axes of the pass's data; an axis the layout only replicated the data over
        # (a Dummy slice axis) is read at its first cell.
        held, first = _held(spec, chain.source.axes)
        # Written field by field as tensors.filled writes them, without its per-class plan (one a pass).
        root = object.__new__(Root)
        root.__dict__.update(
            mapping=spec.mapping, dtype=spec.dtype, terms=held, fixed=(),
            logical=lambda name: get_evaluator(name).vector_logical(chain)[first],
            physical=lambda name: (get_evaluator(name).vector_physical(chain), _undefined_padding(spec)),
            source=chain,
        )
        flow = object.__new__(Flow)
        flow.__dict__.update(root=root, steps=(), cache={}, serial=FLOW_SERIAL())
        out = object.__new__(cls)  # as _of_flow builds it
        out._spec, out._flow, out._pass = spec, flow, chain
        return out

    def cast(self, dtype: type[Out], /, *, out_packet: object) -> CastTensor[Out, ChipT, ClusterT, SliceT, TimeT, Any]:
        """Narrow each flit of the pass's result on the cast engine (docs/stage-rules.md §4.7)."""
        return back.cast(self, self._flow, dtype, out_packet)  # type: ignore[no-any-return]

    def transpose(self, *, out_time: object, out_packet: object) -> TransposeTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Transpose the matrix held in the innermost time steps and the packet (docs/stage-rules.md §5.2)."""
        return back.transpose(self, self._flow, out_time, out_packet)  # type: ignore[no-any-return]

    def commit_trim(self, *, out_packet: object) -> CommitTrimTensor[D, ChipT, ClusterT, SliceT, TimeT, Any]:
        """Keep the first 8, 16, 24 or 32 bytes of each packet for the commit (docs/stage-rules.md §4.8)."""
        return back.trim(self, self._flow, out_packet)  # type: ignore[no-any-return]

    def _describe(self) -> str:
        last = self._pass.steps[-1].step.state
        return describe_pass(self._spec, self._pass, last) + "\n" + "\n".join(super()._describe().splitlines()[1:])


def _undefined_padding(spec: Spec) -> Array:
    """After a pass every padding cell holds whatever the ops made of it: none is defined."""
    return (~plan(spec.mapping).live).astype(np.uint8)
