"""Invalid: 8 lanes of 8192 bf16 overflow the 64 KiB TRF (to_trf ExceedsCapacity, checked before the layouts)."""

# runtime: to_trf ExceedsCapacity
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
K = tcp.axis("K", 8192)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    trf = w.to_trf(lane=m["C"], element=m["K"])  # E: tcpdsl-layout ExceedsCapacity
    return trf
