"""Valid: HBM -> DM -> HBM with the tail padded to 8 i32 on both sides, then a DM reshape."""

# runtime: valid
import numpy as np

import tcpdsl as tcp
from tcpdsl import m

PA = tcp.axis("PA", 256)
PC = tcp.axis("PC", 5)

Rows = tcp.HbmTensor[tcp.i32, m["1"], m["PA, PC # 8"]]


def main() -> None:
    hbm = Rows(tcp.Tensor(np.zeros((256, 5)), "PA PC"))
    dm = hbm.to_dm(cluster=m["1 # 2"], slice=m["PA"], element=m["PC # 8"])
    dm.to_dm(slice=m["PA"], element=m["PC # 8"]).to_hbm(element=m["PA, PC # 8"])
    dm.reshape(chip=m["1"], cluster=m["1 # 2"], slice=m["PA"], element=m["PC # 8"])
