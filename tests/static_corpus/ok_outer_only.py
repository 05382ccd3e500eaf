"""Valid: a kernel may stop after contract_outer (the stream adapter with a time broadcast)."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

M = tcp.axis("M", 32)
N = tcp.axis("N", 8)
K = tcp.axis("K", 16)
L = tcp.axis("L", 2)
B = tcp.axis("B", 5)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["M, L"], m["K"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["N, L"], m["K"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    trf = w.to_trf(lane=m["N"], element=m["L, K"])
    outer = x.contract_outer(trf, out_time=m["M, B"], out_packet=m["L, K"])
    return outer
