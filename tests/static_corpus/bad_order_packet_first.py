"""Invalid: a collected stream has no contract_packet (stage order)."""

# runtime: attr-defined
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    return x.contract_packet(out_packet=m["1"])  # E: attr-defined # plain: attr-defined # pyright: reportAttributeAccessIssue
