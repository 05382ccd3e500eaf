"""The stream back: ``cast -> transpose -> commit_trim -> commit`` / ``commit_view`` (docs/stage-rules.md §4.7-4.8,
§5.2), and ``to_vrf`` (§4.6).

A collected stream or a contraction result casts on the cast engine or trims for the commit; each
position here has only the methods the hardware allows next. The helpers at the bottom are the
method bodies that the collect and contraction classes share.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from tcpdsl.errors import LayoutError
from tcpdsl.numerics.flow import Flow
from tcpdsl.numerics.scalars import Scalar
from tcpdsl.tensors.base import ChipT, ClusterT, D, PacketT, SliceT, TensorBase, TimeT, unspecialised
from tcpdsl.tensors.memory import DmTensor, DmViewMut, VrfTensor
from tcpdsl.tensors.stream import FlowTensor
from tcpdsl.tensors.subscription import dtype_name, spec_of
from tcpdsl.verify.families import CAST, COMMIT_CAST, COMMIT_TRIM, TRANSPOSE
from tcpdsl.verify.stage import Stage

Out = TypeVar("Out", bound=Scalar)


class CastTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A stream narrowed by the cast engine: one flit of ``D`` per packet."""

    __slots__ = ()
    __tcp_family__ = CAST

    def __init__(self) -> None:
        raise unspecialised("CastTensor")

    def transpose(
        self, *, out_time: object, out_packet: object
    ) -> TransposeTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Transpose the matrix held in the innermost time steps and the packet (docs/stage-rules.md §5.2)."""
        return transpose(self, self._flow, out_time, out_packet)  # type: ignore[no-any-return]

    def commit_trim(self, *, out_packet: object) -> CommitTrimTensor[D, ChipT, ClusterT, SliceT, TimeT, Any]:
        """Keep the first 8, 16, 24 or 32 bytes of each packet for the commit (docs/stage-rules.md §4.8)."""
        return trim(self, self._flow, out_packet)  # type: ignore[no-any-return]


class TransposeTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A transposed stream: the columns of the matrices the transpose engine read, one flit per packet."""

    __slots__ = ()
    __tcp_family__ = TRANSPOSE

    def __init__(self) -> None:
        raise unspecialised("TransposeTensor")

    def commit_trim(self, *, out_packet: object) -> CommitTrimTensor[D, ChipT, ClusterT, SliceT, TimeT, Any]:
        """Keep the first 8, 16, 24 or 32 bytes of each packet for the commit (docs/stage-rules.md §4.8)."""
        return trim(self, self._flow, out_packet)  # type: ignore[no-any-return]


class _Committing(FlowTensor):
    """A stream the commit engine writes: after ``commit_trim``, or after the commit adapter's cast."""

    __slots__ = ()

    def _commit(self, element: object) -> Any:
        return self._advance(DmTensor, Stage.COMMIT, {"element": element}, context=self._flow.context)

    def _commit_view(self, dst: object) -> Any:
        spec = spec_of(dst)
        if not isinstance(dst, DmViewMut) or spec is None:
            raise LayoutError(
                Stage.COMMIT_VIEW, "NotAWriteView",
                f"commit_view writes into a write view of a DM tensor, got a {type(dst).__name__}",
                hint="pass dm.view_mut() or a tile of it",
            )
        _, written = self._recorded(self._flow, Stage.COMMIT_VIEW, {}, (spec,), {"context": self._flow.context})
        return dst._write(written)


class CommitTrimTensor(_Committing, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A stream trimmed for the commit engine, which writes it into DM."""

    __slots__ = ()
    __tcp_family__ = COMMIT_TRIM

    def __init__(self) -> None:
        raise unspecialised("CommitTrimTensor")

    def commit_cast(self, dtype: type[Out], /) -> CommitCastTensor[Out, ChipT, ClusterT, SliceT, TimeT, PacketT]:
        """Narrow f32 to bf16 in the commit adapter, main context only (docs/stage-rules.md §4.8)."""
        return self._adapter(Stage.COMMIT_CAST, dtype, relu=False)  # type: ignore[no-any-return]

    def commit_cast_relu(self, dtype: type[Out], /) -> CommitCastTensor[Out, ChipT, ClusterT, SliceT, TimeT, PacketT]:
        """``commit_cast`` of ``max(x, 0)`` (docs/stage-rules.md §4.8)."""
        return self._adapter(Stage.COMMIT_CAST_RELU, dtype, relu=True)  # type: ignore[no-any-return]

    def _adapter(self, stage: Stage, dtype: object, relu: bool) -> Any:
        target = dtype_name(stage, dtype)
        others = {"dtype": target, "context": self._flow.context}
        return CommitCastTensor._of_flow(*self._recorded(self._flow, stage, {}, (), others, relu=relu))

    def commit(self, *, element: object) -> DmTensor[D, ChipT, ClusterT, SliceT, Any]:
        """Write the stream into a new DM tensor with Element ``element`` (docs/stage-rules.md §4.8)."""
        return self._commit(element)  # type: ignore[no-any-return]

    def commit_view(self, dst: DmViewMut[D, ChipT, ClusterT, SliceT, Any], /) -> DmTensor[D, ChipT, ClusterT, SliceT, Any]:
        """Write the stream into a write view (or a tile of one); the tensor's cells outside it stay as
        they were. Returns the tensor written (docs/stage-rules.md §4.8)."""
        return self._commit_view(dst)  # type: ignore[no-any-return]


class CommitCastTensor(_Committing, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A trimmed stream the commit adapter has narrowed to ``D``."""

    __slots__ = ()
    __tcp_family__ = COMMIT_CAST

    def __init__(self) -> None:
        raise unspecialised("CommitCastTensor")

    def commit(self, *, element: object) -> DmTensor[D, ChipT, ClusterT, SliceT, Any]:
        """Write the stream into a new DM tensor with Element ``element`` (docs/stage-rules.md §4.8)."""
        return self._commit(element)  # type: ignore[no-any-return]

    def commit_view(self, dst: DmViewMut[D, ChipT, ClusterT, SliceT, Any], /) -> DmTensor[D, ChipT, ClusterT, SliceT, Any]:
        """Write the stream into a write view (or a tile of one); other cells stay (docs/stage-rules.md §4.8)."""
        return self._commit_view(dst)  # type: ignore[no-any-return]


def cast(src: TensorBase, flow: Flow, dtype: object, out_packet: object) -> Any:
    """``cast(D, out_packet=)`` on a collected stream or a contraction result (docs/stage-rules.md §4.7)."""
    target = dtype_name(Stage.CAST, dtype)
    return _step(src, flow, CastTensor, Stage.CAST, {"out_packet": out_packet}, dtype=target)


def transpose(src: TensorBase, flow: Flow, out_time: object, out_packet: object) -> Any:
    """``transpose(out_time=, out_packet=)`` on a collected stream, a contraction result or a cast (§5.2). The
    step keeps the layouts before and after it: the simulator runs the engine's matrix on them."""
    args = {"out_time": out_time, "out_packet": out_packet}
    return TransposeTensor._of_flow(*src._recorded(flow, Stage.TRANSPOSE, args, source=True))


def trim(src: TensorBase, flow: Flow, out_packet: object) -> Any:
    """``commit_trim(out_packet=)`` on any stream that may be committed (docs/stage-rules.md §4.8)."""
    return _step(src, flow, CommitTrimTensor, Stage.COMMIT_TRIM, {"out_packet": out_packet})


def to_vrf(src: TensorBase, flow: Flow, element: object) -> Any:
    """``to_vrf(element=)``: store a collected stream into the vector register file (docs/stage-rules.md §4.6)."""
    return _step(src, flow, VrfTensor, Stage.TO_VRF, {"element": element})


def _step(src: TensorBase, flow: Flow, cls: type[FlowTensor], stage: Stage, args: dict[str, Any], **others: Any) -> Any:
    out = object.__new__(cls)  # as _of_flow builds it, one call fewer on every cast, commit_trim and to_vrf
    out._spec, out._flow = src._recorded(flow, stage, args, (), others)
    return out
