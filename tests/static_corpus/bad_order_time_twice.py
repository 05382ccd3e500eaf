"""Invalid: contract_time cannot run twice (stage order)."""

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
    trf = w.to_trf(lane=m["C"], element=m["B"])
    packet = x.contract_outer(trf, out_time=m["A"], out_packet=m["B"]).contract_packet(out_packet=m["1"])
    return packet.contract_time(out_time=m["A"]).contract_time(out_time=m["A"])  # E: attr-defined # plain: attr-defined # pyright: reportAttributeAccessIssue
