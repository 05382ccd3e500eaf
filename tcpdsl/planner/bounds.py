"""Lower bounds on a plan's cycles, from the cost model's own terms (docs/cost-model.md).

The model charges the slowest stage's streaming time plus every stage's latency. Three terms bound
the streaming time from below: Outer takes one packet per lane a cycle, the stream's flits arrive
one a cycle, and the Lane Folder
emits one 8-accumulator packet per cycle; the adder tree adds its latency and the accumulator
drains after the last input. Bounding only those terms never overestimates, so a branch whose
bound exceeds the plans in hand can be dropped. Loading the weights comes first and depends on
the grid alone (the bytes each slice holds, how many slices hold them, the DMA engines and chips
they sit on); more engines and chips never load slower, so their largest possible counts bound it.
"""

from __future__ import annotations

from tcpdsl.cost import (
    DRAIN_ELEMENTS_PER_CYCLE,
    FLITS_PER_CYCLE,
    PACKETS_PER_CYCLE,
    trf_load_cycles,
    tree_latency,
    weight_dma_cycles,
)
from tcpdsl.verify.constants import CONTRACT_LANE_OUT_PACKET_ELEMENTS


def cycles_bound(
    dtype: str,
    outer_packets: int,
    accumulator_cells: int = CONTRACT_LANE_OUT_PACKET_ELEMENTS,
    lane_packets: int = 0,
    flits: int = 0,
) -> int:
    """``outer_packets`` Outer packets per lane, ``flits`` fetched stream flits or ``lane_packets``
    output packets, whichever streams longest, plus the adder tree and a drain of ``accumulator_cells``."""
    drain = -(-accumulator_cells // DRAIN_ELEMENTS_PER_CYCLE)
    outer = max(-(-outer_packets // PACKETS_PER_CYCLE), -(-flits // FLITS_PER_CYCLE))
    return max(outer, lane_packets) + tree_latency(dtype) + drain


def load_cycles(
    weight_dtype: str, trf_bytes: int, slices: int, engines: int, chips: int, from_hbm: bool = True, stream_bytes: int = 0
) -> int:
    """The weight DMA (when the weights come ``from_hbm``) and the TRF load of ``slices`` slices of
    ``trf_bytes`` on at most ``engines`` DMA engines and ``chips`` chips (docs/cost-model.md, "The
    whole kernel"): exact when the grid is laid out, a lower bound when only the most engines and
    chips it could use are known. Weights already in DM may still move between slices: that move
    is left out, so the figure stays a lower bound. ``stream_bytes`` per slice come from HBM too
    (``inputs=``, docs/search.md §1), by the same DMA formula."""
    dma = weight_dma_cycles(trf_bytes, slices, engines, chips) if from_hbm else 0
    stream = weight_dma_cycles(stream_bytes, slices, engines, chips)
    return dma + stream + trf_load_cycles(trf_bytes, weight_dtype)
