"""A tensor-unit context, as the tensors placed in it see it: which device, and which unit.

The device (:mod:`tcpdsl.tensors.device`) hands out contexts that can also begin a stream; the
tensor classes below it only need to know where they were placed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

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


class HasTopology(Protocol):
    @property
    def topology(self) -> Topology: ...


@dataclass(frozen=True)
class TuContext:
    """One tensor-unit context of a device: contraction runs in ``main``, TRF loading usually in ``sub``."""

    device: HasTopology = field(repr=False)
    unit: Unit

    def __repr__(self) -> str:
        return f"{self.device!r}.{self.unit}"
