"""The stream back: ``cast -> commit_trim -> commit`` / ``commit_view`` (docs/stage-rules.md §4.7-4.8), and
``to_vrf`` (§4.6).

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
from tcpdsl.tensors.stream import FlowTensor, step_of
from tcpdsl.tensors.subscription import Spec, dtype_name, spec_of
from tcpdsl.verify.families import CAST, COMMIT_CAST, COMMIT_TRIM
from tcpdsl.verify.stage import Stage

Out = TypeVar("Out", bound=Scalar)


class CastTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A stream narrowed by the cast engine: one flit of ``D`` per packet."""

    __slots__ = ()
    __tcp_family__ = CAST

    def __init__(self) -> None:
        raise unspecialised("CastTensor")

    def commit_trim(self, *, out_packet: object) -> CommitTrimTensor[D, ChipT, ClusterT, SliceT, TimeT, Any]:
        """Keep the first 8, 16, 24 or 32 bytes of each packet for the commit (docs/stage-rules.md §4.8)."""
        return trim(self, self._flow, out_packet)  # type: ignore[no-any-return]


class _Committing(FlowTensor):
    """A stream the commit engine writes: after ``commit_trim``, or after the commit adapter's cast."""

    __slots__ = ()

    def _commit(self, element: object) -> Any:
        args = self._mappings(Stage.COMMIT, element=element)
        return self._advance(DmTensor, Stage.COMMIT, args, context=self._flow.context)

    def _commit_view(self, dst: object) -> Any:
        spec = spec_of(dst)
        if not isinstance(dst, DmViewMut) or spec is None:
            raise LayoutError(
                Stage.COMMIT_VIEW, "NotAWriteView",
                f"commit_view writes into a write view of a DM tensor, got a {type(dst).__name__}",
                hint="pass dm.view_mut() or a tile of it",
            )
        out, params = self._compose(Stage.COMMIT_VIEW, {}, spec, context=self._flow.context)
        return dst._write(self._flow.then(step_of(Stage.COMMIT_VIEW, out, params)))


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
        spec, written = self._compose(stage, {}, dtype=target, context=self._flow.context)
        return CommitCastTensor._of_flow(spec, self._flow.then(step_of(stage, spec, written, relu=relu)))

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
    args = src._mappings(Stage.CAST, out_packet=out_packet)
    return _step(src, flow, CastTensor, Stage.CAST, args, dtype=target)


def trim(src: TensorBase, flow: Flow, out_packet: object) -> Any:
    """``commit_trim(out_packet=)`` on any stream that may be committed (docs/stage-rules.md §4.8)."""
    args = src._mappings(Stage.COMMIT_TRIM, out_packet=out_packet)
    return _step(src, flow, CommitTrimTensor, Stage.COMMIT_TRIM, args)


def to_vrf(src: TensorBase, flow: Flow, element: object) -> Any:
    """``to_vrf(element=)``: store a collected stream into the vector register file (docs/stage-rules.md §4.6)."""
    args = src._mappings(Stage.TO_VRF, element=element)
    return _step(src, flow, VrfTensor, Stage.TO_VRF, args)


def _step(src: TensorBase, flow: Flow, cls: type[FlowTensor], stage: Stage, args: dict[str, Any], **others: Any) -> Any:
    spec, params = src._compose(stage, args, **others)
    assert isinstance(spec, Spec)
    return cls._of_flow(spec, flow.then(step_of(stage, spec, params)))
