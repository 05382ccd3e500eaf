"""Invalid: a reshape that changes the Element size (reshape Preserve)."""

# runtime: reshape Preserve
import numpy as np

import tcpdsl as tcp
from tcpdsl import m

PA = tcp.axis("PA", 256)
PC = tcp.axis("PC", 8)

Rows = tcp.DmTensor[tcp.i32, m["1"], m["1 # 2"], m["PA"], m["PC"]]


def main() -> None:
    dm = Rows(tcp.Tensor(np.zeros((256, 8)), "PA PC"))
    dm.reshape(chip=m["1"], cluster=m["1 # 2"], slice=m["PA"], element=m["PC # 16"])  # E: tcpdsl-layout Preserve
