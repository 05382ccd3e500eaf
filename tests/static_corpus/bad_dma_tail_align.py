"""Invalid: a move into DM whose shared innermost run is 20 bytes (to_dm TailAlign)."""

# runtime: to_dm TailAlign
import numpy as np

import tcpdsl as tcp
from tcpdsl import m

PA = tcp.axis("PA", 256)
PC = tcp.axis("PC", 5)

Rows = tcp.HbmTensor[tcp.i32, m["1"], m["PA, PC"]]


def main() -> None:
    hbm = Rows(tcp.Tensor(np.zeros((256, 5)), "PA PC"))
    hbm.to_dm(cluster=m["1 # 2"], slice=m["PA"], element=m["PC"])  # E: tcpdsl-layout TailAlign
