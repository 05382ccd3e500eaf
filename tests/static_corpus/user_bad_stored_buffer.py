"""Invalid: a stored ContractTimeTensor whose lane fold overflows the accumulator (BufferExceeded)."""

# runtime: contract_lane BufferExceeded
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
R = tcp.axis("R", 2)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["R, A, B / 16"], m["B % 16"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["B"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    outer = x.contract_outer(w, out_time=m["R, A"], out_packet=m["B"])
    packet = outer.contract_packet(out_packet=m["B"])
    reduced = packet.contract_time(out_time=m["A"])
    folded = reduced.contract_lane(out_time=m["A, B"], out_packet=m["C"])  # E: tcpdsl-layout BufferExceeded
    return folded
