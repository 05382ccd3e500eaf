"""The Lane Folder in Sequential mode: lanes go to Time, the packet is cut into 8-element flits.

The same products as ``lane_interleaved``, folded Sequentially: ``OutTime = [M, N, P / 8]`` and
``OutPacket = P % 8``, so each output flit holds 8 consecutive cells of P for one lane.
Result: ``out[m, n, p] = x[m, p] * w[n, p]`` in f32.
"""

import tcpdsl as tcp
from tcpdsl import m

N = tcp.axis("N", 8)
M = tcp.axis("M", 4)
P = tcp.axis("P", 16)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["M"], m["P"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["N"], m["P"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["M, N, P / 8"], m["P % 8"]]


@tcp.kernel
def lane_sequential(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["N"], element=m["P"])
    return (
        x.contract_outer(trf, out_time=m["M"], out_packet=m["P"])
        .contract_packet(out_packet=m["P"])
        .contract_time(out_time=m["M"])
        .contract_lane(out_time=m["M, N, P / 8"], out_packet=m["P % 8"], mode=tcp.LaneMode.SEQUENTIAL)
    )


if __name__ == "__main__":
    print(tcp.try_kernel(lane_sequential))
