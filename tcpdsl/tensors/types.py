"""The six tensor classes of the contraction chain, in the RNGD parameter order.

Each class has only the next stage's method, so calling a stage out of order is an attribute
error for type checkers and at run time alike::

    CollectTensor --contract_outer--> ContractOuterTensor --contract_packet--> ContractPacketTensor
        --contract_time--> ContractTimeTensor --contract_lane--> ContractTensor
    CollectTensor --to_trf--> TrfTensor

To checkers the classes are generic over a scalar class and ``Literal`` mapping strings. Stage
results keep Chip/Cluster/Slice and give ``Any`` for the mappings the mypy plugin computes, and the
``contract_outer`` overloads spell out the Multiplier's dtype pairings. At run time a subscription
with concrete arguments is a checked, callable hint (see :mod:`tcpdsl.tensors.hints`).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from types import FrameType
from typing import Any, Generic, TypeVar, overload

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra.nodes import Mapping, pairs
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.pictures import tensor_svg
from tcpdsl.tensors.backend import get as get_evaluator
from tcpdsl.tensors.carrier import Chain, Operand
from tcpdsl.tensors.device import TuContext
from tcpdsl.tensors.explain import describe_chain, describe_source
from tcpdsl.tensors.hints import Family, Spec, Subscriptable, as_mapping, spec_of
from tcpdsl.tensors.logical import Tensor
from tcpdsl.tensors.placement import plan, to_logical, to_physical
from tcpdsl.tensors.scalars import Scalar, bf16, cast, f8e4m3, f8e5m2, f32, i4, i5, i8, i9, i32, scalar
from tcpdsl.verify import (
    ACCUMULATOR,
    LaneMode,
    TrfParams,
    check_collect,
    check_contract,
    check_contract_outer,
    check_contract_packet,
    check_pairing,
    check_trf,
    verify_contract_lane,
    verify_contract_outer,
    verify_contract_packet,
    verify_contract_time,
    verify_to_trf,
)

D = TypeVar("D", bound=Scalar)
Acc = TypeVar("Acc", bound=Scalar)
Storage = TypeVar("Storage", bound=Scalar)
ChipT = TypeVar("ChipT")
ClusterT = TypeVar("ClusterT")
SliceT = TypeVar("SliceT")
LaneT = TypeVar("LaneT")
ElementT = TypeVar("ElementT")
TimeT = TypeVar("TimeT")
PacketT = TypeVar("PacketT")

# The Multiplier's families: a 4-bit stream takes 4-bit weights, an 8-bit integer stream 8-bit ones.
_Int4Stream = TypeVar("_Int4Stream", i4, i5)
_Int4Weight = TypeVar("_Int4Weight", i4, i5)
_Int8Stream = TypeVar("_Int8Stream", i8, i9)
_Int8Weight = TypeVar("_Int8Weight", i8, i9)

Array = npt.NDArray[Any]


# -- constructor constraints (engine §2.2), run when a tensor type is subscribed -------------------
def _check_collect(dtypes: tuple[type[Scalar], ...], layouts: tuple[Mapping, ...]) -> None:
    check_collect(dtypes[0].name, *layouts)


def _check_trf(dtypes: tuple[type[Scalar], ...], layouts: tuple[Mapping, ...]) -> None:
    check_trf(dtypes[0].name, *layouts)


def _check_accumulator(stage: str, acc: type[Scalar], storage: type[Scalar] | None) -> None:
    if acc not in (i32, f32):
        raise DtypeError(
            stage, "NotAnAccumulator", f"the accumulator of a {stage} must be i32 or f32, got {acc.name}",
            hint="integer streams accumulate in tcp.i32, float streams in tcp.f32",
        )
    if storage is None:
        return
    expected = ACCUMULATOR.get(storage.name)
    if expected is None:
        raise DtypeError(
            stage, "NoMultiplier", f"{storage.name} is not a contraction stream dtype, so no {stage} stores it",
            hint=f"the stream must be one of {', '.join(ACCUMULATOR)}",
        )
    if expected != acc.name:
        raise DtypeError(
            stage, "Accumulator", f"a {storage.name} stream accumulates in {expected}, not {acc.name}",
            hint=f"declare {stage}[tcp.{expected}, tcp.{storage.name}, ...]",
        )


def _check_outer(dtypes: tuple[type[Scalar], ...], layouts: tuple[Mapping, ...]) -> None:
    _check_accumulator("ContractOuterTensor", dtypes[0], dtypes[1])
    check_contract_outer(dtypes[1].name, *layouts)


def _check_packet(dtypes: tuple[type[Scalar], ...], layouts: tuple[Mapping, ...]) -> None:
    _check_accumulator("ContractPacketTensor", dtypes[0], None)
    chip, cluster, slice_, lane, time, packet = layouts
    check_contract_packet(chip, cluster, slice_, lane, time, packet, stage="ContractPacketTensor")


def _check_time(dtypes: tuple[type[Scalar], ...], layouts: tuple[Mapping, ...]) -> None:
    _check_accumulator("ContractTimeTensor", dtypes[0], None)
    chip, cluster, slice_, lane, time, packet = layouts
    check_contract_packet(chip, cluster, slice_, lane, time, packet, stage="ContractTimeTensor")


def _check_contract(dtypes: tuple[type[Scalar], ...], layouts: tuple[Mapping, ...]) -> None:
    check_contract(dtypes[0].name, *layouts)


_GRID = ("Chip", "Cluster", "Slice")
COLLECT = Family("CollectTensor", ("D", *_GRID, "Time", "Packet"), 1, _check_collect)
TRF = Family("TrfTensor", ("D", *_GRID, "Lane", "Element"), 1, _check_trf)
OUTER = Family("ContractOuterTensor", ("Acc", "Storage", *_GRID, "Lane", "Time", "Packet"), 2, _check_outer)
PACKET = Family("ContractPacketTensor", ("Acc", *_GRID, "Lane", "Time", "Packet"), 1, _check_packet)
TIME = Family("ContractTimeTensor", ("Acc", *_GRID, "Lane", "Time", "Packet"), 1, _check_time)
CONTRACT = Family("ContractTensor", ("Acc", *_GRID, "Time", "Packet"), 1, _check_contract)


def _specialise(family: Family, dtypes: tuple[type[Scalar], ...], layouts: tuple[Mapping, ...]) -> Spec:
    family.check(dtypes, layouts)
    return Spec(family, dtypes, layouts)


def _caller() -> FrameType:
    """The frame of the code that called the public method calling this (for lexical mapping text)."""
    return sys._getframe(2)


# -- the shared base ------------------------------------------------------------------------------
class TensorBase(Subscriptable):
    """What every pipeline tensor has: its type, a logical view, the physical buffer, an explanation."""

    __slots__ = ("_spec",)
    _spec: Spec

    @property
    def dtype(self) -> type[Scalar]:
        """The element type (the accumulator for contraction results)."""
        return self._spec.dtypes[0]

    @property
    def layout(self) -> dict[str, Mapping]:
        """Every layout parameter by name, e.g. ``{"Chip": ..., "Time": ..., "Packet": ...}``."""
        return dict(zip(self._spec.family.layouts, self._spec.layouts))

    @property
    def mapping(self) -> Mapping:
        """The whole physical layout: the layout parameters paired, outermost first."""
        return pairs(list(self._spec.layouts))

    def _dims(self) -> tuple[int, ...]:
        return tuple(m.size for m in self._spec.layouts)

    @staticmethod
    def __tcp_build__(spec: Spec, *args: object) -> Any:
        """Calling a subscribed class builds a tensor; contraction results come only from stage methods."""
        raise LayoutError(
            spec.family.name, "NotConstructible", f"a {spec.family.name} is produced by a stage method, not built directly",
            hint="build a CollectTensor or TrfTensor from a tcp.Tensor and call the stages on it",
        )

    def to_tensor(self) -> Tensor:
        raise NotImplementedError

    def physical(self) -> Array:
        """The buffer over the physical layout, padding included, one numpy dimension per layout parameter."""
        raise NotImplementedError

    def explain(self, svg: str | os.PathLike[str] | None = None) -> str:
        """The derived stage parameters as text; with ``svg``, also draw the layout to that file."""
        if svg is not None:
            Path(svg).write_text(tensor_svg(self.layout, title=self._spec.text()))
        return self._describe()

    def _describe(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self._spec.text()}>"


def _layout_logical(spec: Spec, tensor: object, stage: str) -> Tensor:
    """Check ``tensor`` against a source layout and cast it to the dtype."""
    if not isinstance(tensor, Tensor):
        raise LayoutError(
            stage, "NotATensor", f"expected a tcp.Tensor to lay out, got {type(tensor).__name__}",
            hint="wrap the array: tcp.Tensor(array, \"A B\")",
        )
    full = pairs(list(spec.layouts))
    sizes = full.axis_sizes()
    extra = [a for a in tensor.axes if a not in sizes]
    if extra:
        raise LayoutError(
            stage, "AxisNotInLayout",
            f"axis {', '.join(extra)} of the tensor appears nowhere in the layout {full}",
            hint="add the axis to Time/Packet (or Lane/Element), or drop it from the tensor",
        )
    for a in tensor.axes:
        if tensor.sizes[a] != sizes[a]:
            raise LayoutError(
                stage, "AxisSize", f"axis {a} has size {tensor.sizes[a]} in the tensor but {sizes[a]} in the layout {full}",
            )
    if not plan(full).coverage(tensor.axes):
        raise LayoutError(
            stage, "AxisNotCovered",
            f"the layout {full} does not hold every element of the tensor over {' '.join(tensor.axes)}",
            hint="cover each axis completely (e.g. [A / 16, A % 16]) or drop the partly covered axis from the tensor",
        )
    return Tensor(cast(tensor.values, spec.dtypes[0]), tensor.axes, sizes=tensor.sizes)


class _Source(TensorBase):
    """A tensor holding data: a collected stream, or TRF weights."""

    __slots__ = ("_tensor", "_context", "_trf_params")
    _tensor: Tensor
    _context: TuContext | None
    _trf_params: TrfParams | None

    @classmethod
    def _make(cls, spec: Spec, tensor: Tensor, context: TuContext | None, trf: TrfParams | None = None) -> Any:
        out = object.__new__(cls)
        out._spec = spec
        out._tensor = tensor
        out._context = context
        out._trf_params = trf
        return out

    @property
    def context(self) -> TuContext | None:
        """The tensor-unit context the data was placed in, if any."""
        return self._context

    def to_tensor(self) -> Tensor:
        """The logical tensor, cast to the dtype."""
        return self._tensor

    def physical(self) -> Array:
        flat = to_physical(self._tensor.values, self._tensor.axes, self.mapping, 0)
        return flat.reshape(self._dims())

    def _describe(self) -> str:
        return describe_source(self._spec, self._tensor, self._trf_params)

    def __repr__(self) -> str:
        return f"<{self._spec.text()} of {self._tensor!r}>"


def _unspecialised(name: str) -> LayoutError:
    return LayoutError(
        name, "Unspecialised", f"a bare {name} has no dtype or layout",
        hint=f"subscribe it first: {name}[tcp.bf16, Chip, Cluster, Slice, ...](...)",
    )


def _same_grid(stream: Spec, trf: Spec) -> None:
    for name in _GRID:
        a, b = stream.layout(name), trf.layout(name)
        if a != b:
            raise LayoutError(
                "contract_outer", f"{name}Mismatch",
                f"contract_outer: the TRF's {name} {b} differs from the stream's {name} {a}",
                hint=f"load the TRF with the stream's {name} layout",
            )


class CollectTensor(_Source, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A collected stream over ``[Chip, Cluster, Slice, Time, Packet]``; the Packet is one 32-byte flit."""

    __slots__ = ()
    __tcp_family__ = COLLECT

    def __init__(self, context: TuContext, tensor: Tensor) -> None:
        raise _unspecialised("CollectTensor")

    @staticmethod
    def __tcp_build__(spec: Spec, *args: object) -> Any:
        if len(args) != 2:
            raise LayoutError("CollectTensor", "Arguments", "build a stream as CollectTensor[...](dev.main, tensor)")
        context, tensor = args
        if not isinstance(context, TuContext):
            raise LayoutError(
                "CollectTensor", "NotAContext", f"expected a device context such as dev.main, got {type(context).__name__}",
            )
        return CollectTensor._make(spec, _layout_logical(spec, tensor, "CollectTensor"), context)

    @property
    def time(self) -> Mapping:
        return self._spec.layout("Time")

    @property
    def packet(self) -> Mapping:
        return self._spec.layout("Packet")

    def to_trf(self, *, lane: object, element: object) -> TrfTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Load this stream into the tensor register file as ``[Lane, Element]`` (engine §2.4 ``to_trf``)."""
        frame = _caller()
        lane_m = as_mapping(lane, "to_trf", "lane=", frame)
        element_m = as_mapping(element, "to_trf", "element=", frame)
        spec = self._spec
        params = verify_to_trf(spec.dtypes[0].name, self.time, self.packet, lane_m, element_m)
        trf = _specialise(TRF, spec.dtypes, (*spec.layouts[:3], lane_m, element_m))
        result: TrfTensor[D, ChipT, ClusterT, SliceT, Any, Any] = TrfTensor._make(trf, self._tensor, self._context, params)
        return result

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
        """Multiply the stream with TRF weights into ``[Lane, OutTime, OutPacket]`` (engine §2.3, §2.4)."""
        frame = _caller()
        stage = "contract_outer"
        time_m = as_mapping(out_time, stage, "out_time=", frame)
        packet_m = as_mapping(out_packet, stage, "out_packet=", frame)
        trf_spec = spec_of(trf)
        if not isinstance(trf, TrfTensor) or trf_spec is None:
            raise LayoutError(
                stage, "NotATrf", f"contract_outer takes TRF weights (a TrfTensor), got {type(trf).__name__}",
                hint="load the weights with .to_trf(lane=..., element=...) or build a tcp.TrfTensor[...]",
            )
        spec = self._spec
        stream_dtype, weight_dtype = spec.dtypes[0].name, trf_spec.dtypes[0].name
        acc = check_pairing(stream_dtype, weight_dtype)
        _same_grid(spec, trf_spec)
        lane_m, element_m = trf.lane, trf.element
        params = verify_contract_outer(stream_dtype, weight_dtype, self.time, self.packet, lane_m, element_m, time_m, packet_m)
        out = _specialise(OUTER, (scalar(acc), spec.dtypes[0]), (*spec.layouts[:3], lane_m, time_m, packet_m))
        chain = Chain(
            stream=Operand(self._tensor.values, self._tensor.axes, stream_dtype, self.mapping),
            weight=Operand(trf._tensor.values, trf._tensor.axes, weight_dtype, trf.mapping),
            acc=acc,
            chip=spec.layouts[0],
            cluster=spec.layouts[1],
            slice=spec.layouts[2],
            lane=lane_m,
            time=self.time,
            packet=self.packet,
            element=element_m,
            outer_time=time_m,
            outer_packet=packet_m,
            outer=params,
            packet_out=None,
            packet_params=None,
            time_out=None,
            time_params=None,
            lane_time=None,
            lane_packet=None,
            mode=None,
            lane_params=None,
        )
        result: ContractOuterTensor[Any, Any, Any, Any, Any, Any, Any, Any] = ContractOuterTensor._from_chain(out, chain, None)
        return result


class TrfTensor(_Source, Generic[D, ChipT, ClusterT, SliceT, LaneT, ElementT]):
    """Weights in the tensor register file over ``[Chip, Cluster, Slice, Lane, Element]``."""

    __slots__ = ()
    __tcp_family__ = TRF

    @overload
    def __init__(self, tensor: Tensor, /) -> None: ...
    @overload
    def __init__(self, context: TuContext, tensor: Tensor, /) -> None: ...
    def __init__(self, *args: object) -> None:
        raise _unspecialised("TrfTensor")

    @staticmethod
    def __tcp_build__(spec: Spec, *args: object) -> Any:
        context = args[0] if len(args) == 2 else None
        if len(args) not in (1, 2) or not (context is None or isinstance(context, TuContext)):
            raise LayoutError(
                "TrfTensor", "Arguments", "build a TRF as TrfTensor[...](tensor) or TrfTensor[...](dev.sub, tensor)",
            )
        return TrfTensor._make(spec, _layout_logical(spec, args[-1], "TrfTensor"), context)

    @property
    def lane(self) -> Mapping:
        return self._spec.layout("Lane")

    @property
    def element(self) -> Mapping:
        return self._spec.layout("Element")


# -- contraction results: lazy until read ------------------------------------------------------------
class _Result(TensorBase):
    """A stage of a contraction chain; values are computed on demand by the selected evaluator."""

    __slots__ = ("_chain", "_evaluator", "_buffers")
    _chain: Chain
    _evaluator: str | None
    _buffers: dict[str, Array]

    @classmethod
    def _from_chain(cls, spec: Spec, chain: Chain, evaluator: str | None) -> Any:
        out = object.__new__(cls)
        out._spec = spec
        out._chain = chain
        out._evaluator = evaluator
        out._buffers = {}
        return out

    @property
    def chain(self) -> Chain:
        """Everything an evaluator needs: operands, mappings and each stage's derived parameters."""
        return self._chain

    def _next(self, cls: type[_Result], spec: Spec, **changes: object) -> Any:
        return cls._from_chain(spec, dataclasses.replace(self._chain, **changes), self._evaluator)  # type: ignore[arg-type]

    def _flat(self) -> Array:
        evaluator = get_evaluator(self._evaluator)
        found = self._buffers.get(evaluator.name)
        if found is None:
            found = np.asarray(evaluator.run(self._chain))
            self._buffers[evaluator.name] = found
        return found

    def to_tensor(self) -> Tensor:
        """The logical result over the axes of this stage's layout, in the accumulator dtype."""
        mapping = self._chain.result_mapping()
        sizes = mapping.axis_sizes()
        axes = mapping.axes
        return Tensor(to_logical(self._flat(), mapping, axes), axes, sizes=sizes)

    def physical(self) -> Array:
        return self._flat().reshape(self._dims())

    def _describe(self) -> str:
        return describe_chain(self._spec, self._chain)

    def _mapping_arg(self, value: object, stage: str, what: str) -> Mapping:
        return as_mapping(value, stage, what, sys._getframe(2))


class ContractOuterTensor(_Result, Generic[Acc, Storage, ChipT, ClusterT, SliceT, LaneT, TimeT, PacketT]):
    """The Multiplier's output over ``[Chip, Cluster, Slice, Lane, Time, Packet]``, before any reduction."""

    __slots__ = ()
    __tcp_family__ = OUTER

    def __init__(self, chain: Chain) -> None:
        raise _unspecialised("ContractOuterTensor")

    def contract_packet(self, *, out_packet: object) -> ContractPacketTensor[Acc, ChipT, ClusterT, SliceT, LaneT, TimeT, Any]:
        """Sum the innermost ``2**depth`` packet cells in the adder tree (engine §2.5)."""
        out = self._mapping_arg(out_packet, "contract_packet", "out_packet=")
        chain = self._chain
        params = verify_contract_packet(chain.stream.dtype, chain.outer_packet, out)
        layouts = self._spec.layouts
        spec = _specialise(PACKET, self._spec.dtypes[:1], (*layouts[:5], out))
        return self._next(ContractPacketTensor, spec, packet_out=out, packet_params=params)  # type: ignore[no-any-return]


class ContractPacketTensor(_Result, Generic[Acc, ChipT, ClusterT, SliceT, LaneT, TimeT, PacketT]):
    """After the Packet Reducer: ``[Chip, Cluster, Slice, Lane, Time, Packet]``."""

    __slots__ = ()
    __tcp_family__ = PACKET

    def __init__(self, chain: Chain) -> None:
        raise _unspecialised("ContractPacketTensor")

    def contract_time(self, *, out_time: object) -> ContractTimeTensor[Acc, ChipT, ClusterT, SliceT, LaneT, Any, PacketT]:
        """Accumulate across Time, keeping the axes of ``out_time`` (engine §2.6)."""
        out = self._mapping_arg(out_time, "contract_time", "out_time=")
        params = verify_contract_time(self._chain.outer_time, out)
        layouts = self._spec.layouts
        spec = _specialise(TIME, self._spec.dtypes, (*layouts[:4], out, layouts[5]))
        return self._next(ContractTimeTensor, spec, time_out=out, time_params=params)  # type: ignore[no-any-return]


class ContractTimeTensor(_Result, Generic[Acc, ChipT, ClusterT, SliceT, LaneT, TimeT, PacketT]):
    """After the Time Reducer: ``[Chip, Cluster, Slice, Lane, Time, Packet]``."""

    __slots__ = ()
    __tcp_family__ = TIME

    def __init__(self, chain: Chain) -> None:
        raise _unspecialised("ContractTimeTensor")

    def contract_lane(
        self,
        *,
        out_time: object,
        out_packet: object,
        mode: LaneMode = LaneMode.INTERLEAVED,
        evaluator: str | None = None,
    ) -> ContractTensor[Acc, ChipT, ClusterT, SliceT, Any, Any]:
        """Fold the lanes into ``[OutTime, OutPacket]`` (engine §2.7, §3.5); ``evaluator`` pins who computes it."""
        stage = "contract_lane"
        time_m = self._mapping_arg(out_time, stage, "out_time=")
        packet_m = self._mapping_arg(out_packet, stage, "out_packet=")
        if not isinstance(mode, LaneMode):
            raise LayoutError(stage, "LaneMode", f"mode must be tcp.LaneMode.INTERLEAVED or SEQUENTIAL, got {mode!r}")
        if evaluator is not None:
            get_evaluator(evaluator)
        chain = self._chain
        assert chain.time_out is not None and chain.packet_out is not None
        params = verify_contract_lane(chain.lane, chain.time_out, chain.packet_out, time_m, packet_m, chain.outer_time, mode)
        spec = _specialise(CONTRACT, self._spec.dtypes, (*self._spec.layouts[:3], time_m, packet_m))
        result = ContractTensor._from_chain(
            spec,
            dataclasses.replace(chain, lane_time=time_m, lane_packet=packet_m, mode=mode, lane_params=params),
            evaluator if evaluator is not None else self._evaluator,
        )
        return result  # type: ignore[no-any-return]


class ContractTensor(_Result, Generic[Acc, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """The contraction result over ``[Chip, Cluster, Slice, Time, Packet]``, one 8-accumulator flit per Packet."""

    __slots__ = ()
    __tcp_family__ = CONTRACT

    def __init__(self, chain: Chain) -> None:
        raise _unspecialised("ContractTensor")


__all__ = [
    "CollectTensor",
    "ContractOuterTensor",
    "ContractPacketTensor",
    "ContractTensor",
    "ContractTimeTensor",
    "TrfTensor",
]
