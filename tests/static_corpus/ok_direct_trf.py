"""Valid: weights passed as a TrfTensor parameter; layouts spelled ``tcp.m[...]`` as well as ``m[...]``."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

M = tcp.axis("M", 32)
N = tcp.axis("N", 8)
K = tcp.axis("K", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["M, K / 16"], m["K % 16"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, tcp.m["N"], tcp.m["K"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["M"], m["N"]]


@tcp.kernel
def kernel(x: Stream, trf: Weights) -> Out:
    outer = x.contract_outer(trf, out_time=tcp.m["M"], out_packet=tcp.m["K"])
    packet = outer.contract_packet(out_packet=m["1"])
    return packet.contract_time(out_time=m["M"]).contract_lane(out_time=m["M"], out_packet=m["N"])
