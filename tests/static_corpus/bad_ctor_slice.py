"""Invalid: a Slice of 100 cells (TrfTensor SliceSize, checked at the annotation)."""

# runtime: TrfTensor SliceSize
import tcpdsl as tcp
from tcpdsl import m

C = tcp.axis("C", 8)
K = tcp.axis("K", 32)

Chip = m["1"]
Cluster = m["1 # 2"]


@tcp.kernel
def kernel(trf: tcp.TrfTensor[tcp.bf16, Chip, Cluster, m["1 # 100"], m["C"], m["K"]]) -> object:  # E: tcpdsl-layout SliceSize
    return trf
