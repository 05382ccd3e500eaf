"""Invalid: a collected bf16 Packet of 8 elements is half a flit (CollectTensor PacketFlit)."""

# runtime: CollectTensor PacketFlit
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 8"], m["B % 8"]]  # E: tcpdsl-layout PacketFlit


@tcp.kernel
def kernel(x: Stream) -> object:
    return x
