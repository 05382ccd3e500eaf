"""Batched matmul with the contracted axis K in Time: one live element per packet.

Batch M is spread over Cluster and Slice, rows V over Slice and Time, and every packet carries a
single live element (``1 # 16``), so the Packet Reducer has nothing to sum and ``contract_time``
does the whole reduction over K. It is correct but uses 1/32 of the multipliers.
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
Slice = m["M % 16, V % 16"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["V / 16, K"], m["1 # 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["N, K / 16"], m["K % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["V / 16"], m["N"]]


@tcp.kernel
def bmatmul_k_in_time(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["N"], element=m["K"])
    return (
        x.contract_outer(trf, out_time=m["V / 16, K"], out_packet=m["1 # 16"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["V / 16"])
        .contract_lane(out_time=m["V / 16"], out_packet=m["N"], mode=tcp.LaneMode.INTERLEAVED)
    )


if __name__ == "__main__":
    print(tcp.try_kernel(bmatmul_k_in_time))
