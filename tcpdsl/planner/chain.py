"""Check a candidate through the chain composer, stage by stage, and cost it.

The search never decides validity itself: a candidate's tensor types are built and its stages
composed by :mod:`tcpdsl.verify.compose`, the functions the runtime's stage methods and the mypy
plugin call, so a plan is valid exactly when its emitted module is. The device rule is checked on
the grid alone (:mod:`tcpdsl.planner.grid`), the only input it reads. Composer and verifiers are
memoized, so candidates sharing layouts share their checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcpdsl.algebra import Mapping
from tcpdsl.cost import KernelCost, WholeKernelCost, dma_engines, estimate, live_cells, whole_kernel
from tcpdsl.planner.candidates import Candidate
from tcpdsl.planner.grid import stream_bytes, trf_bytes
from tcpdsl.planner.layout import Layout
from tcpdsl.planner.placement import Placement, moves
from tcpdsl.planner.problem import Problem
from tcpdsl.planner.reduce import SplitReduce, reduce_partials
from tcpdsl.verify import LaneMode, LaneParams, OuterParams, PacketParams, TimeParams, compose
from tcpdsl.verify.families import COLLECT, TensorType, check_type


@dataclass(frozen=True)
class Layouts:
    """The parsed mappings of a candidate, by the parameter names of the tensor classes."""

    chip: Mapping
    cluster: Mapping
    slice: Mapping
    stream_time: Mapping
    stream_packet: Mapping
    weight_time: Mapping
    weight_packet: Mapping
    lane: Mapping
    element: Mapping
    outer_time: Mapping
    outer_packet: Mapping
    packet_out: Mapping
    time_out: Mapping

    @property
    def grid(self) -> tuple[Mapping, Mapping, Mapping]:
        return self.chip, self.cluster, self.slice


@dataclass(frozen=True)
class Reduced:
    """A candidate the composer accepts up to ``contract_time``, with what each stage derived."""

    candidate: Candidate
    layouts: Layouts
    reduced_type: TensorType
    outer: OuterParams
    packet: PacketParams
    time: TimeParams


@dataclass(frozen=True)
class Folded:
    """A whole chain: the Lane Folder's layouts and parameters, the contraction's estimate and the
    whole kernel's (load, stream, contract, drain, commit)."""

    reduced: Reduced
    mode: LaneMode
    lane_layouts: tuple[Layout, Layout]
    lane_time: Mapping
    lane_packet: Mapping
    lane: LaneParams
    cost: KernelCost
    whole: WholeKernelCost
    split: SplitReduce | None = None  # the vector pass that adds a split reduction's partial sums


def layouts(problem: Problem, c: Candidate) -> Layouts:
    def parse(layout: Layout) -> Mapping:
        return layout.mapping

    return Layouts(
        parse(c.grid.chip), parse(c.grid.cluster), parse(c.grid.slice),
        parse(c.stream_time), parse(c.packing.flit), parse(c.weight_time), parse(c.weight_packet),
        parse(c.lane), parse(c.element), parse(c.outer_time), parse(c.packing.packet),
        parse(c.packing.kept), parse(c.time_out),
    )


def reduce(problem: Problem, c: Candidate) -> Reduced:
    """Type both sources, load the TRF, then compose Outer, the Packet Reducer and the Time Reducer."""
    m = layouts(problem, c)
    stream = check_type(COLLECT, (problem.stream_dtype,), (*m.grid, m.stream_time, m.stream_packet))
    weights = check_type(COLLECT, (problem.weight_dtype,), (*m.grid, m.weight_time, m.weight_packet))
    trf, _ = compose.to_trf(weights, lane=m.lane, element=m.element)
    outer_type, outer = compose.contract_outer(stream, trf, out_time=m.outer_time, out_packet=m.outer_packet)
    packet_type, packet = compose.contract_packet(outer_type, out_packet=m.packet_out)
    time_type, time = compose.contract_time(packet_type, out_time=m.time_out)
    return Reduced(c, m, time_type, outer, packet, time)


def fold(problem: Problem, r: Reduced, mode: LaneMode, where: Placement = Placement()) -> Folded | None:
    """Compose the Lane Folder in ``mode`` (and the reducer of a split reduction) and estimate the
    whole chain as ``tcpdsl run`` does (None when the mode's layouts cannot be written)."""
    m = r.layouts
    layouts = r.candidate.lane_layouts(mode)
    if layouts is None:
        return None
    lane_time_layout, lane_packet_layout = layouts
    lane_time = lane_time_layout.mapping
    lane_packet = lane_packet_layout.mapping
    result, params = compose.contract_lane(
        r.reduced_type, out_time=lane_time, out_packet=lane_packet, mode=mode, pre_reduce_time=m.outer_time
    )
    cost = estimate(
        problem.stream_dtype, m.lane, m.stream_time, m.outer_time, m.outer_packet, r.outer,
        packet_params=r.packet, time_out=m.time_out, time_params=r.time, lane_time=lane_time, lane_params=params,
    )
    grid = r.candidate.grid
    trf = trf_bytes(problem, r.candidate.lane.live * r.candidate.element.size)
    stream = stream_bytes(problem, grid.spread.stream_cells)
    before, from_hbm = moves(grid, where, stream, trf)
    split = reduce_partials(problem, grid.slice, result, lane_time)
    whole = whole_kernel(
        cost, weight_dtype=problem.weight_dtype, trf_bytes=trf, slices=grid.spread.slices,
        engines=dma_engines(*m.grid), chips=live_cells(m.chip), result_packets=lane_time.size, moves=before,
        weights_from_hbm=from_hbm, after=None if split is None else split.cost,
    )
    return Folded(r, mode, layouts, lane_time, lane_packet, params, cost, whole, split)
