"""The lazy product of a contraction chain: what the stage methods build and an evaluator consumes.

Nothing is multiplied or summed while the chain is built; each stage only records its mappings and
the parameters its verifier derived. An evaluator turns a :class:`Chain` into the physical buffer
of the last stage present.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Mapping, pairs
from tcpdsl.numerics.kept import derived
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.scalars import widen
from tcpdsl.numerics.term_arrays import coordinate_array, coordinate_extents, distinct
from tcpdsl.verify.lane_mode import LaneMode
from tcpdsl.verify.params import LaneParams, OuterParams, PacketParams, TimeParams
from tcpdsl.verify.stage import Stage


def _widened(values: npt.NDArray[Any], dtype: str, canonical: bool) -> npt.NDArray[Any]:
    """``values`` widened, each distinct value once where they repeat along a dimension (a stream
    replicated over slices); then broadcast back, read-only."""
    base = distinct(values)
    out = widen(base, dtype, canonical=canonical)
    return out if base is values else np.broadcast_to(out, values.shape)


@dataclass(frozen=True, eq=False)
class Operand:
    """One side of the multiplier.

    ``values`` is the logical tensor stored in the operand dtype's numpy dtype, one dimension per
    name of ``axes``, indexed by axis coordinate; ``mapping`` is the full physical mapping:
    ``[Chip, Cluster, Slice, Time, Packet]`` for the stream, ``[Chip, Cluster, Slice, Lane,
    Element]`` for the TRF. An axis of a tensor holding part of it is only as long as its top held
    coordinate needs (it may be shorter than the axis's declared size), and coordinates the tensor
    does not hold read 0 (:func:`tcpdsl.numerics.term_arrays.coordinate_array`). ``tensor`` is the
    logical tensor as the user gave it: its terms (one per dimension) and the digits it fixes.
    ``canonical`` says ``values`` came out of :func:`~tcpdsl.numerics.scalars.cast` (as a source
    tensor's do), so widening them has nothing to fix up.

    Built from a tensor alone (``given`` None), ``values`` is derived from it when first read: an
    evaluator that reads the tensor's own array never builds it.
    """

    given: npt.NDArray[Any] | None
    axes: tuple[str, ...]
    dtype: str
    mapping: Mapping
    tensor: Tensor | None = None
    canonical: bool = False
    # The stream it was collected by or loaded through (a flow), for the schedule (docs/trace.md); None for data
    # given as the operand itself.
    origin: object = field(default=None, repr=False)

    @cached_property
    def values(self) -> npt.NDArray[Any]:
        if self.given is not None:
            return self.given
        assert self.tensor is not None
        return coordinate_array(self.tensor.values, self.tensor.terms)[0]

    def widened(self) -> npt.NDArray[Any]:
        """``values`` widened to the accumulator (:func:`~tcpdsl.numerics.scalars.widen`); read-only.

        Frozen values (a typed tensor's own data, such as weights) are widened once and the result
        is kept (:mod:`tcpdsl.numerics.kept`).
        """
        return derived(self.values, ("widen", self.dtype, self.canonical), _widened, self.dtype, self.canonical,
                       elementwise=True)

    def widened_held(self) -> npt.NDArray[Any]:
        """The tensor's own array (one dimension per term) widened like :meth:`widened`."""
        assert self.tensor is not None
        return derived(self.tensor.values, ("widen", self.dtype, self.canonical), _widened, self.dtype, self.canonical,
                       elementwise=True)

    @property
    def shape(self) -> tuple[int, ...]:
        if self.given is None and self.tensor is not None:
            return coordinate_extents(self.tensor.terms)
        return tuple(int(n) for n in np.shape(self.values))


@dataclass(frozen=True, eq=False)
class Chain:
    """Everything the evaluators need; every parameter comes from the stage verifiers.

    Stages after Outer are ``None`` until that stage has been called.
    """

    stream: Operand
    weight: Operand
    acc: str
    chip: Mapping
    cluster: Mapping
    slice: Mapping
    lane: Mapping
    time: Mapping
    packet: Mapping
    element: Mapping
    outer_time: Mapping
    outer_packet: Mapping
    outer: OuterParams
    packet_out: Mapping | None = None
    packet_params: PacketParams | None = None
    time_out: Mapping | None = None
    time_params: TimeParams | None = None
    lane_time: Mapping | None = None
    lane_packet: Mapping | None = None
    mode: LaneMode | None = None
    lane_params: LaneParams | None = None

    @property
    def prefix(self) -> Mapping:
        """``[Chip, Cluster, Slice]``, the spatial part shared by every stage."""
        return pairs([self.chip, self.cluster, self.slice])

    @property
    def stage(self) -> Stage:
        """The last stage present."""
        if self.lane_time is not None:
            return Stage.CONTRACT_LANE
        if self.time_out is not None:
            return Stage.CONTRACT_TIME
        if self.packet_out is not None:
            return Stage.CONTRACT_PACKET
        return Stage.CONTRACT_OUTER

    def pre_reduce(self) -> Mapping:
        """``[Chip, Cluster, Slice, Lane, OutTime, OutPacket]`` of Outer: the unreduced product."""
        return pairs([self.chip, self.cluster, self.slice, self.lane, self.outer_time, self.outer_packet])

    def after_packet(self) -> Mapping:
        """``[Chip, Cluster, Slice, Lane, OutTime, OutPacket2]``: the Packet Reducer's output."""
        packet = self.packet_out if self.packet_out is not None else self.outer_packet
        return pairs([self.chip, self.cluster, self.slice, self.lane, self.outer_time, packet])

    def reduced(self) -> Mapping:
        """``[Chip, Cluster, Slice, Lane, OutTime2, OutPacket2]``: the Time Reducer's output."""
        packet = self.packet_out if self.packet_out is not None else self.outer_packet
        time = self.time_out if self.time_out is not None else self.outer_time
        return pairs([self.chip, self.cluster, self.slice, self.lane, time, packet])

    def final(self) -> Mapping:
        """``[Chip, Cluster, Slice, OutTime3, OutPacket3]``: the Lane Folder's output."""
        if self.lane_time is None or self.lane_packet is None:
            return self.reduced()
        return pairs([self.chip, self.cluster, self.slice, self.lane_time, self.lane_packet])

    def result_mapping(self) -> Mapping:
        """The mapping of the last stage present."""
        stage = self.stage
        if stage == Stage.CONTRACT_LANE:
            return self.final()
        if stage == Stage.CONTRACT_TIME:
            return self.reduced()
        if stage == Stage.CONTRACT_PACKET:
            return self.after_packet()
        return self.pre_reduce()

    def part(self, stage: Stage | None = None) -> Mapping:
        """A stage's mapping without ``[Chip, Cluster, Slice]`` (default: the last stage present)."""
        stage = self.stage if stage is None else stage
        packet = self.packet_out if self.packet_out is not None else self.outer_packet
        time = self.time_out if self.time_out is not None else self.outer_time
        if stage == Stage.CONTRACT_LANE and self.lane_time is not None and self.lane_packet is not None:
            return pairs([self.lane_time, self.lane_packet])
        if stage == Stage.CONTRACT_TIME:
            return pairs([self.lane, time, packet])
        if stage == Stage.CONTRACT_PACKET:
            return pairs([self.lane, self.outer_time, packet])
        return pairs([self.lane, self.outer_time, self.outer_packet])

    def fold_mapping(self) -> Mapping:
        """The mapping the fold sums into: the last reduction present (the Lane Folder only moves cells)."""
        return self.reduced() if self.stage == Stage.CONTRACT_LANE else self.result_mapping()

    def with_stage(self, **changes: Any) -> Chain:
        """A copy with the given stage fields set (used by the stage methods).

        Copies the fields directly: ``dataclasses.replace`` re-runs the constructor over every
        field, which costs more than the rest of a stage call.
        """
        unknown = changes.keys() - _FIELDS
        if unknown:
            raise TypeError(f"Chain has no field {', '.join(sorted(unknown))}")
        out = object.__new__(Chain)
        out.__dict__.update(self.__dict__, **changes)
        return out


_FIELDS: Final = frozenset(field.name for field in fields(Chain))
