"""The Lane Folder in Interleaved mode: the 8 lanes become the output packet.

After ``contract_outer`` every lane n holds ``[M, P]`` products of one 16-element packet; the
Packet Reducer keeps all of P (depth 0) and ``contract_time`` keeps M. Interleaved folding writes
``OutTime = [M, P]`` and ``OutPacket = N``: each output flit holds the 8 lanes of one (m, p).
Result: ``out[m, p, n] = x[m, p] * w[n, p]`` in f32 (P is kept, nothing is summed).
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
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["M, P"], m["N"]]


@tcp.kernel
def lane_interleaved(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["N"], element=m["P"])
    return (
        x.contract_outer(trf, out_time=m["M"], out_packet=m["P"])
        .contract_packet(out_packet=m["P"])
        .contract_time(out_time=m["M"])
        .contract_lane(out_time=m["M, P"], out_packet=m["N"], mode=tcp.LaneMode.INTERLEAVED)
    )


if __name__ == "__main__":
    print(tcp.try_kernel(lane_interleaved))
