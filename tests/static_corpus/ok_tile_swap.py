"""Valid: a read tile copied into a write tile of another DM tensor, then cast results committed."""

# runtime: valid
import numpy as np

import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 8)
X = tcp.axis("X", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
Half = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["A, X"]]
dev = tcp.Device()


def main() -> None:
    src = Half(tcp.Tensor(np.ones((8, 32)), "A X"))
    dst = Half(tcp.Tensor(np.zeros((8, 32)), "A X"))
    read = src.view().tile(0, index=m["X"], len=16, element=m["A, X % 16 # 32"])
    write = dst.view_mut().tile(16, index=m["X"], len=16, element=m["A, X % 16 #{!} 32"])
    stream = dev.main.begin(read).fetch(out_time=m["A"], out_packet=m["X % 16"])
    collected = stream.collect(out_time=m["A"], out_packet=m["X % 16"])
    collected.commit_trim(out_packet=m["X % 16"]).commit_view(write)
