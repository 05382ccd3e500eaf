"""Invalid: the Packet Reducer keeps at most 32 elements (contract_packet OutPacketTooWide)."""

# runtime: contract_packet OutPacketTooWide
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
C = tcp.axis("C", 8)
K = tcp.axis("K", 64)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["A, K / 32"], m["K % 32"]]
Weights = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["C, K / 32"], m["K % 32"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    trf = w.to_trf(lane=m["C"], element=m["K"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["K"])
    packet = outer.contract_packet(out_packet=m["K"])  # E: tcpdsl-layout OutPacketTooWide
    return packet
