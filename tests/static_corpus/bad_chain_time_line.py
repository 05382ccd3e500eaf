"""Invalid: a chained kernel whose third stage drops an axis Time never had (contract_time Indivisible).

The diagnostic must sit on the line of the offending stage, not on the line where the chain starts.
"""

# runtime: contract_time Indivisible
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["B"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    return (
        x.contract_outer(w, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["B"])  # E: tcpdsl-layout Indivisible
        .contract_lane(out_time=m["A"], out_packet=m["C"], mode=tcp.LaneMode.INTERLEAVED)
    )
