"""Invalid: a bf16 accumulator; the contraction accumulates in i32 or f32 (ContractTensor NotAnAccumulator)."""

# runtime: ContractTensor NotAnAccumulator
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Out = tcp.ContractTensor[tcp.bf16, Chip, Cluster, Slice, m["A"], m["C"]]  # E: tcpdsl-dtype NotAnAccumulator


@tcp.kernel
def kernel() -> Out:
    raise NotImplementedError
