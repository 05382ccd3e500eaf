"""The tensors that hold data: a collected stream (:class:`CollectTensor`) and TRF weights (:class:`TrfTensor`).

Building one lays a logical :class:`~tcpdsl.numerics.logical.Tensor` out on the declared layout,
after checking that the layout holds exactly the tensor's elements.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

from tcpdsl.algebra import Mapping
from tcpdsl.errors import LayoutError
from tcpdsl.tensors.base import Array, ChipT, ClusterT, D, ElementT, LaneT, PacketT, SliceT, TensorBase, TimeT
from tcpdsl.tensors.base import lay_out_logical, unspecialised
from tcpdsl.evaluate.backend import get as get_evaluator
from tcpdsl.numerics.chain import Chain, Operand
from tcpdsl.numerics.flow import Flow
from tcpdsl.tensors import back
from tcpdsl.tensors.back import CastTensor, CommitTrimTensor, TransposeTensor
from tcpdsl.tensors.memory import VrfTensor
from tcpdsl.tensors.stream import root_of
from tcpdsl.tensors.context import TuContext
from tcpdsl.tensors.recording import source_evaluated, values_read
from tcpdsl.tensors.explain import describe_source
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.transfer import to_physical
from tcpdsl.numerics.term_arrays import axes_of, coordinate_array
from tcpdsl.tensors.results import ContractOuterTensor
from tcpdsl.numerics.scalars import Scalar, bf16, f8e4m3, f8e5m2, f32, i4, i5, i8, i9, i32
from tcpdsl.tensors.subscription import Spec, spec_of
from tcpdsl.tensors.vector import VectorInitTensor, pass_source, start_pass
from tcpdsl.verify.device import check_placement
from tcpdsl.verify.families import COLLECT, TRF
from tcpdsl.verify.params import TrfParams
from tcpdsl.verify.stage import Stage

# The Multiplier's families: a 4-bit stream takes 4-bit weights, an 8-bit integer stream 8-bit ones.
_Int4Stream = TypeVar("_Int4Stream", i4, i5)
_Int4Weight = TypeVar("_Int4Weight", i4, i5)
_Int8Stream = TypeVar("_Int8Stream", i8, i9)
_Int8Weight = TypeVar("_Int8Weight", i8, i9)
_Out = TypeVar("_Out", bound=Scalar)


def _place(spec: Spec, context: TuContext, stage: str) -> None:
    """The layout's grid must fit the device the context belongs to."""
    topology = context.device.topology
    chip, cluster, slice_ = spec.tensor_type.grid
    check_placement(stage, chip=chip, cluster=cluster, slice_=slice_, chips=topology.chips, pes=topology.pes)


class SourceTensor(TensorBase):
    """A tensor holding data: a collected stream, or TRF weights."""

    __slots__ = ("_held", "_flow", "_context", "_trf_params")
    _held: Tensor | None
    _flow: Flow | None  # the stream that produced it (collect), read on first use
    _context: TuContext | None
    _trf_params: TrfParams | None

    @classmethod
    def _make(cls, spec: Spec, tensor: Tensor | None, context: TuContext | None, trf: TrfParams | None = None,
              flow: Flow | None = None) -> Any:
        out = object.__new__(cls)
        out._spec = spec
        out._held = tensor
        out._flow = flow
        out._context = context
        out._trf_params = trf
        return out

    @property
    def _tensor(self) -> Tensor:
        """The logical tensor; a collected stream's is computed by the selected evaluator when first read."""
        if self._held is None:
            assert self._flow is not None
            root = self._flow.root
            self._held = Tensor.of_terms(get_evaluator().flow_logical(self._flow), root.terms, root.fixed)
            source_evaluated(self._held, self._flow)
        return self._held

    @property
    def context(self) -> TuContext | None:
        """The tensor-unit context the data was placed in, if any."""
        return self._context

    def to_tensor(self) -> Tensor:
        """The logical tensor, cast to the dtype."""
        values_read()
        return self._tensor

    def physical(self) -> Array:
        values_read()
        values, axes = coordinate_array(self._tensor.values, self._tensor.terms)
        return to_physical(values, axes, self.mapping, 0).reshape(self._dims())

    def _operand(self) -> Operand:
        tensor = self._tensor
        return Operand(None, axes_of(tensor.terms), self._spec.tensor_type.dtype, self.mapping, tensor, canonical=True,
                       origin=self._flow)

    def _describe(self) -> str:
        return describe_source(self._spec, self._tensor, self._trf_params)

    def __repr__(self) -> str:
        return f"<{self._spec.text()} of {self._tensor!r}>"


class CollectTensor(SourceTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A collected stream over ``[Chip, Cluster, Slice, Time, Packet]``; the Packet is one 32-byte flit."""

    __slots__ = ()
    __tcp_family__ = COLLECT

    def __init__(self, context: TuContext, tensor: Tensor) -> None:
        raise unspecialised("CollectTensor")

    @staticmethod
    def __tcp_build__(spec: Spec, *args: object) -> Any:
        if len(args) != 2:
            raise LayoutError("CollectTensor", "Arguments", "build a stream as CollectTensor[...](dev.main, tensor)")
        context, tensor = args
        if not isinstance(context, TuContext):
            raise LayoutError(
                "CollectTensor", "NotAContext", f"expected a device context such as dev.main, got {type(context).__name__}",
            )
        _place(spec, context, "CollectTensor")
        return CollectTensor._make(spec, lay_out_logical(spec, tensor, "CollectTensor"), context)

    @classmethod
    def _collected(cls, spec: Spec, flow: Flow) -> Any:
        """The stream ``collect`` produced, ``flow`` ending on its step (docs/stage-rules.md §4.5): what
        ``_make(spec, None, None, flow=flow)`` builds, one call fewer on every collect."""
        out = object.__new__(cls)
        out._spec, out._held, out._flow, out._context, out._trf_params = spec, None, flow, None, None
        return out

    def transpose(self, *, out_time: object, out_packet: object) -> TransposeTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Transpose the matrix held in the innermost time steps and the packet (docs/stage-rules.md §5.2)."""
        return back.transpose(self, self.flow, out_time, out_packet)  # type: ignore[no-any-return]

    @property
    def flow(self) -> Flow:
        """The stream as a flow: the one ``collect`` produced, or this tensor's data laid out."""
        return self._flow if self._flow is not None else root_of(self._spec, self._tensor)

    @property
    def time(self) -> Mapping:
        return self._spec.layout("Time")

    def to_vrf(self, *, element: object) -> VrfTensor[D, ChipT, ClusterT, SliceT, Any]:
        """Store this stream into the vector register file as ``[Element]`` (docs/stage-rules.md §4.6)."""
        return back.to_vrf(self, self.flow, element)  # type: ignore[no-any-return]

    def cast(self, dtype: type[_Out], /, *, out_packet: object) -> CastTensor[_Out, ChipT, ClusterT, SliceT, TimeT, Any]:
        """Narrow each flit on the cast engine (docs/stage-rules.md §4.7)."""
        return back.cast(self, self.flow, dtype, out_packet)  # type: ignore[no-any-return]

    def commit_trim(self, *, out_packet: object) -> CommitTrimTensor[D, ChipT, ClusterT, SliceT, TimeT, Any]:
        """Keep the first 8, 16, 24 or 32 bytes of each packet for the commit (docs/stage-rules.md §4.8)."""
        return back.trim(self, self.flow, out_packet)  # type: ignore[no-any-return]

    @property
    def packet(self) -> Mapping:
        return self._spec.layout("Packet")

    def vector_init(self) -> VectorInitTensor[D, ChipT, ClusterT, SliceT, TimeT, PacketT]:
        """Start a vector pass on this stream (docs/stage-rules.md §6.1)."""
        spec, step = self._compose(Stage.VECTOR_INIT, {})
        flow, mapping, terms = self.flow, self.mapping, self._spec.terms

        def physical(name: str) -> Array:
            return get_evaluator(name).flow_physical(flow)

        def logical(name: str) -> Array:
            # The stream's own buffer read back through its own mapping: the evaluator plans it (flow_read).
            return get_evaluator(name).flow_read(flow, mapping, terms)

        source = pass_source(self._spec, logical, physical, flow.root.terms, flow)
        return start_pass(spec, step, source)  # type: ignore[no-any-return]

    def to_trf(self, *, lane: object, element: object) -> TrfTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Load this stream into the tensor register file as ``[Lane, Element]`` (docs/stage-rules.md §2.4)."""
        args = self._mappings(Stage.TO_TRF, lane=lane, element=element)
        # A stream collected from memory keeps its load as a flow: the schedule draws it (docs/trace.md).
        load = None
        if self._flow is None:
            spec, params = self._compose(Stage.TO_TRF, args)
        else:
            spec, load = self._recorded(self._flow, Stage.TO_TRF, args)
            params = load.steps[-1].params
        trf: TrfTensor[D, ChipT, ClusterT, SliceT, Any, Any] = TrfTensor._make(spec, self._tensor, self._context, params,
                                                                              flow=load)
        return trf

    @overload
    def contract_outer(
        self: CollectTensor[bf16, ChipT, ClusterT, SliceT, Any, Any],
        trf: TrfTensor[bf16, ChipT, ClusterT, SliceT, Any, Any],
        *,
        out_time: object,
        out_packet: object,
    ) -> ContractOuterTensor[f32, bf16, ChipT, ClusterT, SliceT, Any, Any, Any]: ...
    @overload
    def contract_outer(
        self: CollectTensor[f8e4m3, ChipT, ClusterT, SliceT, Any, Any],
        trf: TrfTensor[f8e4m3, ChipT, ClusterT, SliceT, Any, Any],
        *,
        out_time: object,
        out_packet: object,
    ) -> ContractOuterTensor[f32, f8e4m3, ChipT, ClusterT, SliceT, Any, Any, Any]: ...
    @overload
    def contract_outer(
        self: CollectTensor[f8e5m2, ChipT, ClusterT, SliceT, Any, Any],
        trf: TrfTensor[f8e5m2, ChipT, ClusterT, SliceT, Any, Any],
        *,
        out_time: object,
        out_packet: object,
    ) -> ContractOuterTensor[f32, f8e5m2, ChipT, ClusterT, SliceT, Any, Any, Any]: ...
    @overload
    def contract_outer(
        self: CollectTensor[_Int8Stream, ChipT, ClusterT, SliceT, Any, Any],
        trf: TrfTensor[_Int8Weight, ChipT, ClusterT, SliceT, Any, Any],
        *,
        out_time: object,
        out_packet: object,
    ) -> ContractOuterTensor[i32, _Int8Stream, ChipT, ClusterT, SliceT, Any, Any, Any]: ...
    @overload
    def contract_outer(
        self: CollectTensor[_Int4Stream, ChipT, ClusterT, SliceT, Any, Any],
        trf: TrfTensor[_Int4Weight, ChipT, ClusterT, SliceT, Any, Any],
        *,
        out_time: object,
        out_packet: object,
    ) -> ContractOuterTensor[i32, _Int4Stream, ChipT, ClusterT, SliceT, Any, Any, Any]: ...
    def contract_outer(
        self,
        trf: TrfTensor[Any, Any, Any, Any, Any, Any],
        *,
        out_time: object,
        out_packet: object,
    ) -> ContractOuterTensor[Any, Any, Any, Any, Any, Any, Any, Any]:
        """Multiply the stream with TRF weights into ``[Lane, OutTime, OutPacket]`` (docs/stage-rules.md §2.3-2.4)."""
        stage = Stage.CONTRACT_OUTER
        args = self._mappings(stage, out_time=out_time, out_packet=out_packet)
        trf_spec = spec_of(trf)
        if not isinstance(trf, TrfTensor) or trf_spec is None:
            raise LayoutError(
                stage, "NotATrf", f"contract_outer takes TRF weights (a TrfTensor), got {type(trf).__name__}",
                hint="load the weights with .to_trf(lane=..., element=...) or build a tcp.TrfTensor[...]",
            )
        spec, params = self._compose(stage, args, trf_spec)
        grid = self._spec.tensor_type.grid
        chain = Chain(
            stream=self._operand(),
            weight=trf._operand(),
            acc=spec.tensor_type.dtype,
            chip=grid[0],
            cluster=grid[1],
            slice=grid[2],
            lane=trf.lane,
            time=self.time,
            packet=self.packet,
            element=trf.element,
            outer_time=args["out_time"],
            outer_packet=args["out_packet"],
            outer=params,
        )
        outer: ContractOuterTensor[Any, Any, Any, Any, Any, Any, Any, Any] = ContractOuterTensor._from_chain(
            spec, chain, None
        )
        return outer


class TrfTensor(SourceTensor, Generic[D, ChipT, ClusterT, SliceT, LaneT, ElementT]):
    """Weights in the tensor register file over ``[Chip, Cluster, Slice, Lane, Element]``."""

    __slots__ = ()
    __tcp_family__ = TRF

    @overload
    def __init__(self, tensor: Tensor, /) -> None: ...
    @overload
    def __init__(self, context: TuContext, tensor: Tensor, /) -> None: ...
    def __init__(self, *args: object) -> None:
        raise unspecialised("TrfTensor")

    @staticmethod
    def __tcp_build__(spec: Spec, *args: object) -> Any:
        context = args[0] if len(args) == 2 else None
        if len(args) not in (1, 2) or not (context is None or isinstance(context, TuContext)):
            raise LayoutError(
                "TrfTensor", "Arguments", "build a TRF as TrfTensor[...](tensor) or TrfTensor[...](dev.sub, tensor)",
            )
        if context is not None:
            _place(spec, context, "TrfTensor")
        return TrfTensor._make(spec, lay_out_logical(spec, args[-1], "TrfTensor"), context)

    @property
    def lane(self) -> Mapping:
        return self._spec.layout("Lane")

    @property
    def element(self) -> Mapping:
        return self._spec.layout("Element")
