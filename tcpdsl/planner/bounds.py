"""Lower bounds on a plan's cycles, from the cost model's own terms (docs/cost-model.md).

The model charges the slowest stage's streaming time plus every stage's latency. Two stages bound
the streaming time from below: Outer streams one packet per lane every period, and the Lane Folder
emits one 8-accumulator packet per cycle; the adder tree adds its latency and the accumulator
drains after the last input. Bounding only those terms never overestimates, so a branch whose
bound exceeds the plans in hand can be dropped.
"""

from __future__ import annotations

from tcpdsl.cost import DRAIN_ELEMENTS_PER_CYCLE, PACKET_PERIOD_CYCLES, tree_latency
from tcpdsl.verify.constants import CONTRACT_LANE_OUT_PACKET_ELEMENTS


def cycles_bound(
    dtype: str,
    outer_packets: int,
    accumulator_cells: int = CONTRACT_LANE_OUT_PACKET_ELEMENTS,
    lane_packets: int = 0,
) -> int:
    """``outer_packets`` Outer packets per lane or ``lane_packets`` output packets, whichever streams
    longer, plus the adder tree and a drain of ``accumulator_cells``."""
    drain = -(-accumulator_cells // DRAIN_ELEMENTS_PER_CYCLE)
    return max(PACKET_PERIOD_CYCLES * outer_packets, lane_packets) + tree_latency(dtype) + drain
