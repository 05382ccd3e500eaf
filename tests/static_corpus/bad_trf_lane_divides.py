"""Invalid: 4 lanes do not divide a Time of 6 cells (to_trf LaneDoesNotDivideTime)."""

# runtime: to_trf LaneDoesNotDivideTime
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
E = tcp.axis("E", 3)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["E, B / 16"], m["B % 16"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    trf = w.to_trf(lane=m["1 # 4"], element=m["B"])  # E: tcpdsl-layout LaneDoesNotDivideTime
    return trf
