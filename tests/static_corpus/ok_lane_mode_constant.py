"""Valid: the lane mode is a module constant assigned once, without ``Final``; the plugin reads it."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

N = tcp.axis("N", 8)
M = tcp.axis("M", 4)
P = tcp.axis("P", 16)
Sequential = tcp.LaneMode.SEQUENTIAL

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["M"], m["P"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["N"], m["P"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["M, N, P / 8"], m["P % 8"]]:
    trf = w.to_trf(lane=m["N"], element=m["P"])
    outer = x.contract_outer(trf, out_time=m["M"], out_packet=m["P"])
    packet = outer.contract_packet(out_packet=m["P"])
    return packet.contract_time(out_time=m["M"]).contract_lane(out_time=m["M, N, P / 8"], out_packet=m["P % 8"], mode=Sequential)
