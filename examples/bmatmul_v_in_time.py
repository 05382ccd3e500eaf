"""Batched matmul with the rows V in Time and the batch M spread over Cluster and Slice.

The mirror image of ``bmatmul_m_in_time``: the batch M goes to Cluster (``M / 16``) and Slice
(``M % 16``, padded to 256), V streams through Time and K fills each 64-byte packet.
Result: ``out[m, v, n] = sum_k x[m, v, k] * w[m, n, k]`` accumulated in f32.
"""

import tcpdsl as tcp
from tcpdsl import m

V = tcp.axis("V", 32)
M = tcp.axis("M", 32)
N = tcp.axis("N", 8)
K = tcp.axis("K", 32)

Chip = m["1"]
Cluster = m["M / 16"]
Slice = m["M % 16 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["V, K / 16"], m["K % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["N, K / 16"], m["K % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["V"], m["N"]]


@tcp.kernel
def bmatmul_v_in_time(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["N"], element=m["K"])
    return (
        x.contract_outer(trf, out_time=m["V"], out_packet=m["K"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["V"])
        .contract_lane(out_time=m["V"], out_packet=m["N"], mode=tcp.LaneMode.INTERLEAVED)
    )


if __name__ == "__main__":
    print(tcp.try_kernel(bmatmul_v_in_time))
