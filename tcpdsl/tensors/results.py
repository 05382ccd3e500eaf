"""The four stage results of a contraction chain: lazy until their values are read.

A stage method composes the result's type (its row of :mod:`tcpdsl.verify.stages`) and records its mappings
and derived parameters on the :class:`~tcpdsl.numerics.chain.Chain`; the selected evaluator computes
the values the first time they are read.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import numpy as np

from tcpdsl.algebra import Digit
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate.backend import get as get_evaluator
from tcpdsl.numerics.chain import Chain
from tcpdsl.numerics.flow import Buffer, Flow, Root
from tcpdsl.numerics.moves import lay_out
from tcpdsl.numerics.scalars import Scalar
from tcpdsl.tensors import back
from tcpdsl.tensors.back import CastTensor, CommitTrimTensor, TransposeTensor
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.term_arrays import Fixed
from tcpdsl.numerics.transfer import to_terms
from tcpdsl.tensors.base import Acc, Array, ChipT, ClusterT, LaneT, PacketT, SliceT, Storage, TensorBase, TimeT
from tcpdsl.tensors.base import unspecialised
from tcpdsl.tensors.explain import describe_chain
from tcpdsl.tensors.recording import values_read
from tcpdsl.tensors.subscription import Spec
from tcpdsl.tensors.vector import VectorInitTensor, pass_source, start_pass
from tcpdsl.verify.families import CONTRACT, OUTER, PACKET, TIME
from tcpdsl.verify.lane_mode import LaneMode
from tcpdsl.verify.stage import Stage


_Out = TypeVar("_Out", bound=Scalar)


def carried_fixed(chain: Chain, terms: tuple[Digit, ...]) -> tuple[Fixed, ...]:
    """The digits the operands' tiles fix that a result over ``terms`` carries.

    A fixed digit is carried when the result holds a term of its axis and none that overlaps it;
    a digit the two operands fix at different values is dropped (the result mixes two tiles).
    """
    axes = {t.axis for t in terms}
    found: dict[Digit, set[int]] = {}
    for operand in (chain.stream, chain.weight):
        for term, value in operand.tensor.fixed_terms if operand.tensor is not None else ():
            if term.axis in axes and not any(term.stride < t.top and t.stride < term.top for t in terms if t.axis == term.axis):
                found.setdefault(term, set()).add(value)
    return tuple((term, values.pop()) for term, values in found.items() if len(values) == 1)


class StageResult(TensorBase):
    """A stage of a contraction chain; values are computed on demand by the selected evaluator."""

    __slots__ = ("_chain", "_evaluator", "_buffers", "_logical")
    _chain: Chain
    _evaluator: str | None
    _buffers: dict[str, Array]  # the physical buffer, by evaluator
    _logical: dict[str, Array]  # the logical result, by evaluator

    @classmethod
    def _from_chain(cls, spec: Spec, chain: Chain, evaluator: str | None) -> Any:
        out = object.__new__(cls)
        out._spec = spec
        out._chain = chain
        out._evaluator = evaluator
        out._buffers = {}
        out._logical = {}
        return out

    @property
    def chain(self) -> Chain:
        """Everything an evaluator needs: operands, mappings and each stage's derived parameters."""
        return self._chain

    def _next(self, cls: type[StageResult], spec: Spec, **changes: object) -> Any:
        return cls._from_chain(spec, self._chain.with_stage(**changes), self._evaluator)

    def _flat(self) -> Array:
        values_read()
        evaluator = get_evaluator(self._evaluator)
        found = self._buffers.get(evaluator.name)
        if found is None:
            found = np.asarray(evaluator.run(self._chain))
            self._buffers[evaluator.name] = found
        return found

    def to_tensor(self) -> Tensor:
        """The logical result in the accumulator dtype: exactly the terms this stage's layout holds
        (:func:`~tcpdsl.algebra.terms.logical_terms`, never padding), fixing the digits its
        operands' tiles fix on the axes it holds."""
        values_read()
        evaluator = get_evaluator(self._evaluator)
        terms = self._spec.terms
        found = self._logical.get(evaluator.name)
        if found is None:
            physical = self._buffers.get(evaluator.name)
            # Once the physical buffer exists the logical result is read from it, so the two views
            # never disagree and nothing is evaluated twice.
            if physical is None:
                found = evaluator.logical(self._chain)
            else:
                found = to_terms(physical, self._spec.mapping, terms)
            self._logical[evaluator.name] = found
        return Tensor.of_terms(found, terms, carried_fixed(self._chain, terms))

    def physical(self) -> Array:
        return self._flat().reshape(self._dims())

    def _describe(self) -> str:
        return describe_chain(self._spec, self._chain)


class ContractOuterTensor(StageResult, Generic[Acc, Storage, ChipT, ClusterT, SliceT, LaneT, TimeT, PacketT]):
    """The Multiplier's output over ``[Chip, Cluster, Slice, Lane, Time, Packet]``, before any reduction."""

    __slots__ = ()
    __tcp_family__ = OUTER

    def __init__(self, chain: Chain) -> None:
        raise unspecialised("ContractOuterTensor")

    def contract_packet(self, *, out_packet: object) -> ContractPacketTensor[Acc, ChipT, ClusterT, SliceT, LaneT, TimeT, Any]:
        """Sum the innermost ``2**depth`` packet cells in the adder tree (docs/stage-rules.md §2.5)."""
        args = self._mappings(Stage.CONTRACT_PACKET, out_packet=out_packet)
        spec, params = self._compose(Stage.CONTRACT_PACKET, args)
        return self._next(ContractPacketTensor, spec, packet_out=args["out_packet"], packet_params=params)  # type: ignore[no-any-return]


class ContractPacketTensor(StageResult, Generic[Acc, ChipT, ClusterT, SliceT, LaneT, TimeT, PacketT]):
    """After the Packet Reducer: ``[Chip, Cluster, Slice, Lane, Time, Packet]``."""

    __slots__ = ()
    __tcp_family__ = PACKET

    def __init__(self, chain: Chain) -> None:
        raise unspecialised("ContractPacketTensor")

    def contract_time(self, *, out_time: object) -> ContractTimeTensor[Acc, ChipT, ClusterT, SliceT, LaneT, Any, PacketT]:
        """Accumulate across Time, keeping the axes of ``out_time`` (docs/stage-rules.md §2.6)."""
        args = self._mappings(Stage.CONTRACT_TIME, out_time=out_time)
        spec, params = self._compose(Stage.CONTRACT_TIME, args)
        return self._next(ContractTimeTensor, spec, time_out=args["out_time"], time_params=params)  # type: ignore[no-any-return]


class ContractTimeTensor(StageResult, Generic[Acc, ChipT, ClusterT, SliceT, LaneT, TimeT, PacketT]):
    """After the Time Reducer: ``[Chip, Cluster, Slice, Lane, Time, Packet]``."""

    __slots__ = ()
    __tcp_family__ = TIME

    def __init__(self, chain: Chain) -> None:
        raise unspecialised("ContractTimeTensor")

    def contract_lane(
        self,
        *,
        out_time: object,
        out_packet: object,
        mode: LaneMode = LaneMode.INTERLEAVED,
        evaluator: str | None = None,
    ) -> ContractTensor[Acc, ChipT, ClusterT, SliceT, Any, Any]:
        """Fold the lanes into ``[OutTime, OutPacket]`` (docs/stage-rules.md §2.7, docs/runtime.md §3.5).

        ``evaluator`` pins who computes the result.
        """
        stage = Stage.CONTRACT_LANE
        args = self._mappings(stage, out_time=out_time, out_packet=out_packet)
        if not isinstance(mode, LaneMode):
            raise LayoutError(stage, "LaneMode", f"mode must be tcp.LaneMode.INTERLEAVED or SEQUENTIAL, got {mode!r}")
        if evaluator is not None:
            get_evaluator(evaluator)
        chain = self._chain
        spec, params = self._compose(stage, args, mode=mode, pre_reduce_time=chain.outer_time)
        return ContractTensor._from_chain(  # type: ignore[no-any-return]
            spec,
            chain.with_stage(lane_time=args["out_time"], lane_packet=args["out_packet"], mode=mode, lane_params=params),
            evaluator if evaluator is not None else self._evaluator,
        )


class ContractTensor(StageResult, Generic[Acc, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """The contraction result over ``[Chip, Cluster, Slice, Time, Packet]``, one 8-accumulator flit per Packet."""

    __slots__ = ()
    __tcp_family__ = CONTRACT

    def __init__(self, chain: Chain) -> None:
        raise unspecialised("ContractTensor")

    @property
    def flow(self) -> Flow:
        """The result as the root of a stream: each evaluator runs the chain first (docs/runtime.md §4)."""
        spec, chain = self._spec, self._chain
        terms, mapping, dtype = spec.terms, spec.mapping, spec.tensor_type.dtype

        def logical(name: str) -> Any:
            return get_evaluator(name).logical(chain)

        def physical(name: str) -> Buffer:
            values = np.asarray(get_evaluator(name).run(chain))
            return values, lay_out(to_terms(values, mapping, terms), terms, mapping, dtype)[1]

        return Flow(Root(mapping, dtype, terms, carried_fixed(chain, terms), logical, physical, source=chain))

    def cast(self, dtype: type[_Out], /, *, out_packet: object) -> CastTensor[_Out, ChipT, ClusterT, SliceT, TimeT, Any]:
        """Narrow each flit of the result on the cast engine (docs/stage-rules.md §4.7)."""
        return back.cast(self, self.flow, dtype, out_packet)  # type: ignore[no-any-return]

    def commit_trim(self, *, out_packet: object) -> CommitTrimTensor[Acc, ChipT, ClusterT, SliceT, TimeT, Any]:
        """Keep the first 8, 16, 24 or 32 bytes of each packet for the commit (docs/stage-rules.md §4.8)."""
        return back.trim(self, self.flow, out_packet)  # type: ignore[no-any-return]

    def transpose(self, *, out_time: object, out_packet: object) -> TransposeTensor[Acc, ChipT, ClusterT, SliceT, Any, Any]:
        """Transpose the matrix held in the innermost time steps and the packet (docs/stage-rules.md §5.2)."""
        return back.transpose(self, self.flow, out_time, out_packet)  # type: ignore[no-any-return]
    def vector_init(self) -> VectorInitTensor[Acc, ChipT, ClusterT, SliceT, TimeT, PacketT]:
        """Start a vector pass on the accumulated result (docs/stage-rules.md §6.1)."""
        spec, step = self._compose(Stage.VECTOR_INIT, {})
        chain = self._chain
        source = pass_source(self._spec, lambda name: get_evaluator(name).logical(chain),
                             lambda name: get_evaluator(name).run(chain), self._spec.terms, chain)
        return start_pass(spec, step, source)  # type: ignore[no-any-return]
