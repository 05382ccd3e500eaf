"""Invalid: a layout alias names an axis no module declares (mapping UnknownAxis)."""

# runtime: mapping UnknownAxis
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
Rows = m["A, Z / 16"]  # E: tcpdsl-layout UnknownAxis

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, Rows, m["B % 16"]]


@tcp.kernel
def kernel(x: Stream) -> object:
    return x
