"""Invalid: f8e4m3 streams pair only with f8e4m3 weights (dtype pairing)."""

# runtime: contract_outer NoMultiplier
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.f8e4m3, Chip, Cluster, Slice, m["A"], m["B"]]
Weights = tcp.CollectTensor[tcp.f8e5m2, Chip, Cluster, Slice, m["C"], m["B"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])  # E: tcpdsl-dtype NoMultiplier # plain: arg-type # pyright: reportArgumentType
    return outer
