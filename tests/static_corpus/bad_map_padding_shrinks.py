"""Invalid: padding an axis of 32 to 16 cells shrinks it (mapping PaddingShrinks)."""

# runtime: mapping PaddingShrinks
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A # 16, B / 16"], m["B % 16"]]  # E: tcpdsl-layout PaddingShrinks


@tcp.kernel
def kernel(x: Stream) -> object:
    return x
