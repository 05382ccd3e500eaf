"""Invalid: the lane mode is a module constant assigned once (no ``Final``), read as written: Interleaved mode
puts the lanes into OutPacket (contract_lane OutPacketMismatch)."""

# runtime: contract_lane OutPacketMismatch
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
Interleaved = tcp.LaneMode.INTERLEAVED

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["1 # 8"]]:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    packet = outer.contract_packet(out_packet=m["1"])
    return packet.contract_time(out_time=m["A"]).contract_lane(out_time=m["A"], out_packet=m["1 # 8"], mode=Interleaved)  # E: tcpdsl-layout OutPacketMismatch
