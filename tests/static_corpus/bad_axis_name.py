"""Invalid: an axis bound to a variable of another name cannot be found by name (static axis check)."""

# runtime: mapping UnknownAxis
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
Bee = tcp.axis("B", 32)  # E: tcpdsl-axis

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
Rows = m["A, B / 16"]  # E: tcpdsl-layout UnknownAxis

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, Rows, m["B % 16"]]  # E: tcpdsl-layout UnknownAxis


@tcp.kernel
def kernel(x: Stream) -> object:
    return x
