"""Lower bounds on a plan's cycles, from the cost model's own terms (docs/cost-model.md).

The model charges the slowest stage's streaming time plus every stage's latency; the Outer stage
streams one packet per period and the accumulator drains after the last input. Bounding only those
two terms never overestimates, so a branch whose bound exceeds the plans in hand can be dropped.
"""

from __future__ import annotations

from tcpdsl.cost import DRAIN_ELEMENTS_PER_CYCLE, PACKET_PERIOD_CYCLES, tree_latency
from tcpdsl.verify.constants import CONTRACT_LANE_OUT_PACKET_ELEMENTS


def cycles_bound(dtype: str, outer_packets: int, accumulator_cells: int = CONTRACT_LANE_OUT_PACKET_ELEMENTS) -> int:
    """Cycles of ``outer_packets`` Outer packets per lane, the adder tree and a drain of ``accumulator_cells``."""
    drain = -(-accumulator_cells // DRAIN_ELEMENTS_PER_CYCLE)
    return PACKET_PERIOD_CYCLES * outer_packets + tree_latency(dtype) + drain
