"""The stream front: ``begin -> fetch -> (fetch_cast) -> collect`` (docs/stage-rules.md §4.3-4.5), one class
per position.

``dev.main.begin(view)`` starts a stream on a DM view; ``fetch`` reads it through the sequencer and
``collect`` makes its packet one flit, giving the :class:`~tcpdsl.tensors.sources.CollectTensor`
the contraction chain takes.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from tcpdsl.numerics.scalars import Scalar
from tcpdsl.tensors.base import ChipT, ClusterT, D, PacketT, SliceT, TimeT, interned, unspecialised
from tcpdsl.tensors.sources import CollectTensor
from tcpdsl.tensors.stream import FlowTensor
from tcpdsl.tensors.switched import SwitchTensor
from tcpdsl.verify.families import BEGIN, FETCH, FETCH_CAST
from tcpdsl.verify.fetch import FetchParams
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.switch import check_config
from tcpdsl.verify.switch_config import SwitchConfig
from tcpdsl.tensors.subscription import dtype_name

Out = TypeVar("Out", bound=Scalar)


class BeginTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A stream begun on a DM view: Time ``1``, the view's Element as the packet."""

    __slots__ = ()
    __tcp_family__ = BEGIN

    def __init__(self) -> None:
        raise unspecialised("BeginTensor")

    def fetch(self, *, out_time: object, out_packet: object) -> FetchTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Read the DM partition as ``[OutTime][OutPacket]`` through the sequencer (docs/stage-rules.md §4.2-4.3)."""
        args = {"out_time": out_time, "out_packet": out_packet}
        # The stream's context is its begin step's unit, the last step here (what flow.context finds).
        return self._advance(FetchTensor, Stage.FETCH, args, context=self._flow.steps[-1].context)  # type: ignore[no-any-return]


class FetchTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A fetched stream over ``[Chip, Cluster, Slice, Time, Packet]``."""

    __slots__ = ()
    __tcp_family__ = FETCH

    def __init__(self) -> None:
        raise unspecialised("FetchTensor")

    def fetch_cast(self, dtype: type[Out], /) -> FetchCastTensor[Out, ChipT, ClusterT, SliceT, TimeT, PacketT]:
        """Cast each element in the fetch adapter (docs/stage-rules.md §4.4); an identity cast is allowed."""
        params = self._flow.steps[-1].params
        read = params.read_size if isinstance(params, FetchParams) else None
        target = dtype_name(Stage.FETCH_CAST, dtype)
        return self._advance(FetchCastTensor, Stage.FETCH_CAST, {}, dtype=target, read_size=read)  # type: ignore[no-any-return]

    def switch(
        self, config: SwitchConfig, /, *, out_slice: object, out_time: object
    ) -> SwitchTensor[D, ChipT, ClusterT, Any, Any, PacketT]:
        """Move the packets between slices as ``config`` routes them (docs/stage-rules.md §5.1)."""
        return _switch(self, config, out_slice, out_time)  # type: ignore[no-any-return]

    def collect(self, *, out_time: object, out_packet: object) -> CollectTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Make each packet exactly one 32-byte flit (docs/stage-rules.md §4.5)."""
        return _collect(self, out_time, out_packet)  # type: ignore[no-any-return]


class FetchCastTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A fetched stream after the fetch adapter's cast, over ``[Chip, Cluster, Slice, Time, Packet]``."""

    __slots__ = ()
    __tcp_family__ = FETCH_CAST

    def __init__(self) -> None:
        raise unspecialised("FetchCastTensor")

    def switch(
        self, config: SwitchConfig, /, *, out_slice: object, out_time: object
    ) -> SwitchTensor[D, ChipT, ClusterT, Any, Any, PacketT]:
        """Move the packets between slices as ``config`` routes them (docs/stage-rules.md §5.1)."""
        return _switch(self, config, out_slice, out_time)  # type: ignore[no-any-return]

    def collect(self, *, out_time: object, out_packet: object) -> CollectTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Make each packet exactly one 32-byte flit (docs/stage-rules.md §4.5)."""
        return _collect(self, out_time, out_packet)  # type: ignore[no-any-return]


def _collect(src: FlowTensor, out_time: object, out_packet: object) -> Any:
    return CollectTensor._collected(*src._recorded(src._flow, Stage.COLLECT, {"out_time": out_time,
                                                                              "out_packet": out_packet}))


def _switch(src: FlowTensor, config: object, out_slice: object, out_time: object) -> Any:
    args = src._mappings(Stage.SWITCH, out_slice=out_slice, out_time=out_time)
    return src._advance(SwitchTensor, Stage.SWITCH, args, config=interned(check_config(config)))
