"""Loading weights into the tensor register file: an i8 vector of 32 elements into one lane.

The collected stream ``1 | B`` is one 32-byte flit of i8; ``to_trf`` stores it as a single lane
``1`` whose Element is B. The result is the TRF tensor itself, holding the input unchanged.
"""

import tcpdsl as tcp
from tcpdsl import m

B = tcp.axis("B", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Vector = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["1"], m["B"]]
Loaded = tcp.TrfTensor[tcp.i8, Chip, Cluster, Slice, m["1"], m["B"]]


@tcp.kernel
def trf_load_i8(v: Vector) -> Loaded:
    return v.to_trf(lane=m["1"], element=m["B"])


if __name__ == "__main__":
    print(tcp.try_kernel(trf_load_i8))
