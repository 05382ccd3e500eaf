"""How plans are ordered, and the best rank any chain of a branch can reach.

A plan's rank is ``(whole-kernel cycles, weights per slice, -MAC utilisation, accumulator cells,
text length)``: fewest cycles of the whole kernel first (docs/cost-model.md, "The whole kernel");
among equally fast plans the fewest TRF bytes per slice, the busiest multipliers, the smallest
accumulator footprint, then the shortest layouts. Once a grid, an Outer packet
and the lanes are chosen, every term but the last is either exact or bounded from below, so a
branch whose best reachable rank is no better than the last plan kept can be skipped without
changing the result (docs/search.md §4).
"""

from __future__ import annotations

from tcpdsl.cost import LANES, dma_engines, live_cells, macs_per_lane
from tcpdsl.planner.bounds import cycles_bound, load_cycles
from tcpdsl.planner.candidates import Packing
from tcpdsl.planner.chain import Folded
from tcpdsl.planner.grid import Grid, Spread, reduce_bound, stream_bytes, trf_bytes
from tcpdsl.planner.layout import Layout
from tcpdsl.planner.placement import Placement, moves
from tcpdsl.planner.problem import Problem
from tcpdsl.planner.source import texts
from tcpdsl.verify import LaneMode
from tcpdsl.verify.constants import CONTRACT_LANE_OUT_PACKET_ELEMENTS, SEQUENTIAL_PACKET_ALIGN, align_up

Rank = tuple[int, int, float, int, int]

_OUT = CONTRACT_LANE_OUT_PACKET_ELEMENTS


def plan_rank(chain: Folded) -> Rank:
    cost = chain.cost
    weights = chain.reduced.candidate.grid.weight_cells
    size = sum(map(len, vars(texts(chain)).values()))
    return (chain.whole.total_cycles, weights, -cost.mac_utilisation, cost.accumulator_cells or 0, size)


def spread_rank(spread: Spread) -> Rank:
    """The best rank a plan on ``spread`` can have: its cycle bound, every multiplier busy, one slot."""
    return (spread.bound, spread.weight_cells, -1.0, _OUT, 0)


def branch_rank(
    problem: Problem,
    grid: Grid,
    packing: Packing,
    lane: Layout,
    modes: tuple[LaneMode, ...],
    where: Placement = Placement(),
) -> Rank:
    """The best rank a chain with this grid, Outer packet and lanes can have.

    Its Outer packet count, its lane-stage packets per mode, its MAC utilisation and the moves of
    its inputs onto the grid (``where`` they are) are fixed; the accumulator holds at least one
    slot of ``[Lane, Packet]`` (InnerTime 1, docs/stage-rules.md §2.7).
    """
    outer_packets = grid.volume // (packing.packet.live * lane.live)
    flits = -(-grid.spread.stream_cells // packing.flit.live)
    layouts = (grid.chip.mapping, grid.cluster.mapping, grid.slice.mapping)
    weights = trf_bytes(problem, grid.weight_cells)  # the TRF may pad them, never shrink them
    before, from_hbm = moves(grid, where, stream_bytes(problem, grid.spread.stream_cells), weights)
    load = sum(c for _, c in before) + load_cycles(
        problem.weight_dtype, weights, grid.spread.slices, dma_engines(*layouts), live_cells(layouts[0]), from_hbm
    )
    kept = packing.kept
    slots = grid.kept // (kept.live * lane.live)  # cells of the reduced Time
    bounds = []
    for mode in modes:
        if mode is LaneMode.INTERLEAVED:
            cells = align_up(lane.size, _OUT) * kept.size
            outputs = slots * kept.size
        else:
            cells = lane.size * align_up(kept.size, SEQUENTIAL_PACKET_ALIGN)
            outputs = slots * lane.size * -(-kept.size // _OUT)
        cycles = cycles_bound(problem.stream_dtype, outer_packets, cells, outputs, flits)
        bounds.append((load + cycles + reduce_bound(problem, outputs), cells))
    cycles, cells = min(bounds)
    utilisation = packing.packet.live / macs_per_lane(problem.stream_dtype) * (lane.live / LANES)
    return (cycles, grid.weight_cells, -utilisation, cells, 0)
