"""The stream front: ``begin -> fetch -> collect`` (docs/stage-rules.md §4.3-4.5), one class per position.

``dev.main.begin(view)`` starts a stream on a DM view; ``fetch`` reads it through the sequencer and
``collect`` makes its packet one flit, giving the :class:`~tcpdsl.tensors.sources.CollectTensor`
the contraction chain takes.
"""

from __future__ import annotations

from typing import Any, Generic

from tcpdsl.tensors.base import ChipT, ClusterT, D, PacketT, SliceT, TimeT, unspecialised
from tcpdsl.tensors.sources import CollectTensor
from tcpdsl.tensors.stream import FlowTensor
from tcpdsl.verify.families import BEGIN, FETCH
from tcpdsl.verify.stage import Stage


class BeginTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A stream begun on a DM view: Time ``1``, the view's Element as the packet."""

    __slots__ = ()
    __tcp_family__ = BEGIN

    def __init__(self) -> None:
        raise unspecialised("BeginTensor")

    def fetch(self, *, out_time: object, out_packet: object) -> FetchTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Read the DM partition as ``[OutTime][OutPacket]`` through the sequencer (docs/stage-rules.md §4.2-4.3)."""
        args = self._mappings(Stage.FETCH, out_time=out_time, out_packet=out_packet)
        return self._advance(FetchTensor, Stage.FETCH, args, context=self._flow.context)  # type: ignore[no-any-return]


class FetchTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A fetched stream over ``[Chip, Cluster, Slice, Time, Packet]``."""

    __slots__ = ()
    __tcp_family__ = FETCH

    def __init__(self) -> None:
        raise unspecialised("FetchTensor")

    def collect(self, *, out_time: object, out_packet: object) -> CollectTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Make each packet exactly one 32-byte flit (docs/stage-rules.md §4.5)."""
        args = self._mappings(Stage.COLLECT, out_time=out_time, out_packet=out_packet)
        spec, params = self._compose(Stage.COLLECT, args)
        return CollectTensor._collected(spec, self._flow, params)  # type: ignore[no-any-return]
