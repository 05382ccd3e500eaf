"""Invalid: the weights sit on another Cluster layout than the stream (contract_outer ClusterMismatch)."""

# runtime: contract_outer ClusterMismatch
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, m["1"], Slice, m["C, B / 16"], m["B % 16"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])  # E: tcpdsl-layout ClusterMismatch # plain: arg-type # pyright: reportArgumentType
    return outer
