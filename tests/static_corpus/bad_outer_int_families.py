"""Invalid: an i4 stream cannot meet i8 weights (dtype pairing)."""

# runtime: contract_outer NoMultiplier
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 64)
C = tcp.axis("C", 8)
K = tcp.axis("K", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.i4, Chip, Cluster, Slice, m["A"], m["B"]]
Weights = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["C"], m["K"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    trf = w.to_trf(lane=m["C"], element=m["K"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])  # E: tcpdsl-dtype NoMultiplier # plain: type-var # pyright: reportArgumentType
    return outer
