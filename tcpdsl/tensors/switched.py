"""The position after the switch engine (docs/stage-rules.md §5.1): a :class:`SwitchTensor`, whose
packets sit on the slices ``out_slice`` names; ``collect`` follows."""

from __future__ import annotations

from typing import Any, Generic

from tcpdsl.tensors.base import ChipT, ClusterT, D, PacketT, SliceT, TimeT, unspecialised
from tcpdsl.tensors.sources import CollectTensor
from tcpdsl.tensors.stream import FlowTensor
from tcpdsl.verify.families import SWITCH
from tcpdsl.verify.stage import Stage


class SwitchTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A switched stream over ``[Chip, Cluster, Slice, Time, Packet]``: the fetched packets, moved between slices."""

    __slots__ = ()
    __tcp_family__ = SWITCH

    def __init__(self) -> None:
        raise unspecialised("SwitchTensor")

    def collect(self, *, out_time: object, out_packet: object) -> CollectTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Make each packet exactly one 32-byte flit (docs/stage-rules.md §4.5)."""
        args = {"out_time": out_time, "out_packet": out_packet}
        return CollectTensor._collected(*self._recorded(self._flow, Stage.COLLECT, args))  # type: ignore[no-any-return]
