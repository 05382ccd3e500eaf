"""Invalid: a layout names the variable ``Bee``, which holds the axis ``B`` (mapping UnknownAxis)."""

# runtime: mapping UnknownAxis
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
Bee = tcp.axis("B", 32)  # E: tcpdsl-axis

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, Bee / 16"], m["Bee % 16"]]  # E: tcpdsl-layout UnknownAxis # E: tcpdsl-layout UnknownAxis


@tcp.kernel
def kernel(x: Stream) -> object:
    return x
