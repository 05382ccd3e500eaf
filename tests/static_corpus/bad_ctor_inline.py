"""Invalid: a Slice of 100 cells in a tensor type subscripted inline (CollectTensor SliceSize, at the call)."""

# runtime: CollectTensor SliceSize
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]


@tcp.kernel
def kernel(x: Stream) -> object:
    dev = tcp.Device()
    return tcp.CollectTensor[tcp.bf16, Chip, Cluster, m["1 # 100"], m["A, B / 16"], m["B % 16"]](dev.main, x.to_tensor())  # E: tcpdsl-layout SliceSize
