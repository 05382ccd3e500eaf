"""Batched matmul with the rows M in Time and K packed into the packet.

The batch V is spread over Cluster and Slice (padded to 256 slices). Each 64-byte packet holds all
of K (PackSize 2), so the Packet Reducer sums K in one adder tree and ``contract_time`` keeps M.
Result: ``out[v, m, n] = sum_k x[v, m, k] * w[v, n, k]`` accumulated in f32.
"""

import tcpdsl as tcp
from tcpdsl import m

V = tcp.axis("V", 32)
M = tcp.axis("M", 32)
N = tcp.axis("N", 8)
K = tcp.axis("K", 32)

Chip = m["1"]
Cluster = m["V / 16"]
Slice = m["V % 16 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["M, K / 16"], m["K % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["N, K / 16"], m["K % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["M"], m["N"]]


@tcp.kernel
def bmatmul_m_in_time(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["N"], element=m["K"])
    return (
        x.contract_outer(trf, out_time=m["M"], out_packet=m["K"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["M"])
        .contract_lane(out_time=m["M"], out_packet=m["N"], mode=tcp.LaneMode.INTERLEAVED)
    )


if __name__ == "__main__":
    print(tcp.try_kernel(bmatmul_m_in_time))
