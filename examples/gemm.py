"""Quick start: a 512 x 512 x 64 matrix multiply tiled over 256 slices.

Slice ``[I / 32, J / 32]`` gives every slice a 32 x 32 output tile. The stream walks the tile's rows
``I % 32``, the four groups ``J / 8 % 4`` and K in Time (the stream does not depend on J, so each
row is reused for every group); the 8 lanes hold ``J % 8`` with weights ``[J / 8 % 4, K]``.
K is packed 32 per packet and summed by the Packet Reducer and the Time Reducer, and the lanes
become the output packet. Result: ``out[i, j] = sum_k x[i, k] * w[j, k]`` in f32.
"""

import tcpdsl as tcp
from tcpdsl import m

I = tcp.axis("I", 512)
J = tcp.axis("J", 512)
K = tcp.axis("K", 64)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["I / 32, J / 32"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["I % 32, J / 8 % 4, K / 16"], m["K % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["J % 8, J / 8 % 4, K / 16"], m["K % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["I % 32, J / 8 % 4"], m["J % 8"]]


@tcp.kernel
def gemm(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["J % 8"], element=m["J / 8 % 4, K"])
    return (
        x.contract_outer(trf, out_time=m["I % 32, J / 8 % 4, K / 32"], out_packet=m["K % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["I % 32, J / 8 % 4"])
        .contract_lane(out_time=m["I % 32, J / 8 % 4"], out_packet=m["J % 8"], mode=tcp.LaneMode.INTERLEAVED)
    )


if __name__ == "__main__":
    print(tcp.try_kernel(gemm))
