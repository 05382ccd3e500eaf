"""Invalid: an unbalanced bracket in a layout; the error shows the text with a caret (mapping syntax)."""

# runtime: syntax
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["(A, B / 16"], m["B % 16"]]  # E: tcpdsl-syntax


@tcp.kernel
def kernel(x: Stream) -> object:
    return x
