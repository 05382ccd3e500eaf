"""The device a kernel runs on and its two tensor-unit contexts, ``main`` and ``sub``, which begin streams."""

from __future__ import annotations

from typing import Any

from tcpdsl.errors import LayoutError
from tcpdsl.tensors.base import ChipT, ClusterT, D, SliceT
from tcpdsl.tensors.context import Topology, TuContext
from tcpdsl.tensors.front import BeginTensor
from tcpdsl.tensors.memory import DmView
from tcpdsl.tensors.subscription import Spec
from tcpdsl.verify.stage import Stage

__all__ = ["Device", "TensorUnit", "Topology", "TuContext"]


class TensorUnit(TuContext):
    """A tensor-unit context as the device hands it out: it begins streams on DM views."""

    def begin(self, view: DmView[D, ChipT, ClusterT, SliceT, Any], /) -> BeginTensor[D, ChipT, ClusterT, SliceT, Any, Any]:
        """Begin a stream on a DM view: one packet of the view's Element per slice (docs/stage-rules.md §4.3)."""
        if not isinstance(view, DmView) or not isinstance(getattr(view, "_spec", None), Spec):  # spec_of, for a DmView
            raise LayoutError(
                Stage.BEGIN, "NotAView", f"begin takes a view of a DM tensor, got {type(view).__name__}",
                hint="begin on dm.view() or on a tile of it",
            )
        return view._advance(BeginTensor, Stage.BEGIN, {}, unit=self.unit)  # type: ignore[no-any-return]


class Device:
    """A device with a :class:`Topology`; ``dev.main`` and ``dev.sub`` are its tensor-unit contexts."""

    __slots__ = ("topology", "main", "sub")

    def __init__(self, topology: Topology | None = None) -> None:
        if topology is None:
            topology = Topology()
        if not isinstance(topology, Topology):
            raise LayoutError("Device", "NotATopology", f"expected a tcp.Topology, got {type(topology).__name__}")
        self.topology = topology
        self.main = TensorUnit(self, "main")
        self.sub = TensorUnit(self, "sub")

    def __repr__(self) -> str:
        return f"Device(chips={self.topology.chips}, pes={self.topology.pes})"
