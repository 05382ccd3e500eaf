"""Valid: an i8 stream against i9 weights accumulates in i32."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 8)
K = tcp.axis("K", 32)
R = tcp.axis("R", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["A"], m["K"]]
Weights = tcp.CollectTensor[tcp.i9, Chip, Cluster, Slice, m["R"], m["K"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> tcp.ContractTensor[tcp.i32, Chip, Cluster, Slice, m["A"], m["R"]]:
    trf = w.to_trf(lane=m["R"], element=m["K"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["K"])
    packet = outer.contract_packet(out_packet=m["1"])
    return packet.contract_time(out_time=m["A"]).contract_lane(out_time=m["A"], out_packet=m["R"], mode=tcp.LaneMode.INTERLEAVED)
