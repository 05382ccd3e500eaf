"""Invalid: a helper loads the weights with a Lane the TRF cannot hold (to_trf)."""

# runtime: to_trf LaneSize
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
W = tcp.axis("W", 64)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Rows = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["W, B / 16"], m["B % 16"]]


def load(w: Rows) -> object:
    return w.to_trf(lane=m["W"], element=m["B"])  # E: tcpdsl-layout LaneSize


@tcp.kernel
def kernel(x: Stream, w: Rows) -> object:
    return x, load(w)
