"""Derived parameters each stage verifier returns (frozen, hashable)."""

from __future__ import annotations

from dataclasses import dataclass

from tcpdsl.algebra import DivideTerm, Mapping
from tcpdsl.verify.lane_mode import LaneMode


@dataclass(frozen=True)
class TrfParams:
    """``to_trf``: the stream Time splits into ``[Lane, time_inner]``; ``[time_inner, Packet]`` is the Element."""

    time_inner: Mapping
    bytes_per_lane: int
    total_bytes: int


@dataclass(frozen=True)
class StreamAdapterParams:
    """The Stream Adapter's free variables: ``OutTime = [Time / pack_size, time_broadcast]``."""

    pack_size: int
    lane_broadcast: int
    time_outer: Mapping
    time_broadcast: Mapping


@dataclass(frozen=True)
class LoopEntry:
    """One nested-loop entry of the TRF sequencer.

    ``time`` is the OutTime factor the entry walks, ``count`` its iterations (padded extent
    included) and ``stride`` the Element cells advanced per iteration; 0 marks a broadcast.
    """

    time: Mapping
    count: int
    stride: int


@dataclass(frozen=True)
class SequencerParams:
    """The TRF Sequencer: ``OutPacket = [packet_broadcast, Element % read_size]``."""

    read_size: int
    packet_broadcast: int
    wide_read: bool
    element_outer: Mapping
    sequencing: tuple[LoopEntry, ...]


@dataclass(frozen=True)
class OuterParams(SequencerParams, StreamAdapterParams):
    """Everything ``contract_outer`` derives: the Stream Adapter's and the TRF Sequencer's
    parameters (``sequencing`` is outermost loop first), and the accumulator."""

    accumulator: str


@dataclass(frozen=True)
class PacketParams:
    """The Packet Reducer sums the innermost ``2**depth`` cells; ``output`` drops outer padding."""

    depth: int
    reduce_packet: Mapping
    output: Mapping


@dataclass(frozen=True)
class TimeParams:
    """The Time Reducer keeps ``terms`` (outermost first); ``reduced`` names the axes summed away."""

    terms: tuple[DivideTerm, ...]
    reduced: tuple[str, ...]


@dataclass(frozen=True)
class LaneParams:
    """The Lane Folder's accumulator footprint: ``padded_lane * inner_time * padded_packet == cells``."""

    mode: LaneMode
    inner_time: int
    padded_lane: int
    padded_packet: int
    cells: int
