"""Invalid: an escape names nothing in this module (mapping BadEscape)."""

# runtime: mapping BadEscape
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
Rows = m["{Tile}, B / 16"]  # E: tcpdsl-layout BadEscape

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, Rows, m["B % 16"]]


@tcp.kernel
def kernel(x: Stream) -> object:
    return x
