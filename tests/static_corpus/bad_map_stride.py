"""Invalid: a stride of 5 does not divide an axis of 32 (mapping StrideIndivisible)."""

# runtime: mapping StrideIndivisible
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
Rows = tcp.m["A, B / 5"]  # E: tcpdsl-layout StrideIndivisible

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, Rows, m["B % 16"]]


@tcp.kernel
def kernel(x: Stream) -> object:
    return x
