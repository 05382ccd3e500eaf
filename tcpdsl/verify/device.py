"""Whether a layout fits the device it is placed on: its chips, and the slices of its processing elements.

A layout's Chip, Cluster and Slice sizes must match the hardware (docs/stage-rules.md §2.2): a
device of ``chips`` chips holds a Chip of at most that many cells, and ``pes`` processing elements
of ``SLICES_PER_PE`` slices each hold at most ``pes * SLICES_PER_PE`` cells of Cluster x Slice.
"""

from __future__ import annotations

from tcpdsl.algebra import Mapping
from tcpdsl.errors import LayoutError
from tcpdsl.verify.constants import SLICES_PER_PE


def check_placement(stage: str, *, chip: Mapping, cluster: Mapping, slice_: Mapping, chips: int, pes: int) -> None:
    """Raise unless a ``[Chip, Cluster, Slice]`` grid fits a device of ``chips`` chips with ``pes`` PEs each."""
    if chip.size > chips:
        raise LayoutError(
            stage, "ChipCount", f"Chip {chip} spans {chip.size} chips, but the device has {chips}",
            hint=f"build the device with tcp.Topology(chips={chip.size}), or map fewer cells to Chip",
        )
    slices = cluster.size * slice_.size
    if slices > pes * SLICES_PER_PE:
        raise LayoutError(
            stage, "SliceCount",
            f"Cluster {cluster} x Slice {slice_} spans {slices} slices, but {pes} processing elements hold "
            f"{pes * SLICES_PER_PE}",
            hint=f"use a device with at least {-(-slices // SLICES_PER_PE)} PEs per chip, or a smaller Cluster or Slice",
        )
