"""The device a kernel runs on and its two tensor-unit contexts, ``main`` and ``sub``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tcpdsl.errors import LayoutError

Unit = Literal["main", "sub"]


@dataclass(frozen=True)
class Topology:
    """How many chips, and processing elements per chip, the device has."""

    chips: int = 1
    pes: int = 8

    def __post_init__(self) -> None:
        for name, value in (("chips", self.chips), ("pes", self.pes)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise LayoutError("Topology", "TopologySize", f"{name} must be a positive int, got {value!r}")


@dataclass(frozen=True)
class TuContext:
    """One tensor-unit context of a device: contraction runs in ``main``, TRF loading usually in ``sub``."""

    device: Device = field(repr=False)
    unit: Unit

    def __repr__(self) -> str:
        return f"{self.device!r}.{self.unit}"


class Device:
    """A device with a :class:`Topology`; ``dev.main`` and ``dev.sub`` are its tensor-unit contexts."""

    __slots__ = ("topology", "main", "sub")

    def __init__(self, topology: Topology | None = None) -> None:
        if topology is None:
            topology = Topology()
        if not isinstance(topology, Topology):
            raise LayoutError("Device", "NotATopology", f"expected a tcp.Topology, got {type(topology).__name__}")
        self.topology = topology
        self.main = TuContext(self, "main")
        self.sub = TuContext(self, "sub")

    def __repr__(self) -> str:
        return f"Device(chips={self.topology.chips}, pes={self.topology.pes})"
