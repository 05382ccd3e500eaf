"""Invalid: a Cluster of 3 cells (CollectTensor ClusterSize, checked at the annotation)."""

# runtime: CollectTensor ClusterSize
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)

Chip = m["1"]
Cluster = m["1 # 3"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]  # E: tcpdsl-layout ClusterSize


@tcp.kernel
def kernel(x: Stream) -> object:
    return x
