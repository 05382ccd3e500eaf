"""The reference's valid_size_32: a contraction over every other element of B, held as ``B / 2``.

Both operands are i8 tensors that hold ``B / 2`` (B = 64, so 32 elements, one 32-byte flit): the
reference declares them ``HostTensor<i8, m![A, B / 2]>``. Build such a tensor with
``tcp.Tensor(array, m["A, B / 2"])``: its second dimension holds B = 0, 2, 4, ... 62. The TRF keeps
the 8 rows of R in its lanes; the Packet Reducer sums the 32 cells of ``B / 2`` and the Lane Folder
lays R out as the output packet. Result: ``out[a, r] = sum_j x[a, 2 j] * w[r, 2 j]`` in i32.
"""

import numpy as np
import numpy.typing as npt

import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 8)
B = tcp.axis("B", 64)
R = tcp.axis("R", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["A"], m["B / 2"]]
Weights = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["R"], m["B / 2"]]
Out = tcp.ContractTensor[tcp.i32, Chip, Cluster, Slice, m["A"], m["R # 8"]]


@tcp.kernel
def valid_size_32(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["R"], element=m["B / 2"])
    return (
        x.contract_outer(trf, out_time=m["A"], out_packet=m["B / 2"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["R # 8"], mode=tcp.LaneMode.INTERLEAVED)
    )


def stream_tensor(x: npt.ArrayLike) -> tcp.Tensor:
    """``x[A, B]`` as the stream holds it: every even B, a view of ``x``."""
    return tcp.Tensor(np.asarray(x)[:, ::2], m["A, B / 2"])


if __name__ == "__main__":
    print(tcp.try_kernel(valid_size_32))
