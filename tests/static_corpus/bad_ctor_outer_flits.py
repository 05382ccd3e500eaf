"""Invalid: a ContractOuterTensor Packet of 16 bytes (ContractOuterTensor PacketFlits, at the annotation)."""

# runtime: ContractOuterTensor PacketFlits
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Outer = tcp.ContractOuterTensor[tcp.f32, tcp.bf16, Chip, Cluster, Slice, m["C"], m["A"], m["B % 8"]]  # E: tcpdsl-layout PacketFlits


@tcp.kernel
def kernel() -> Outer:
    raise NotImplementedError
