"""Valid: contract_lane on a stored ContractTimeTensor, whose type keeps the Time it had before contract_time."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    reduced = outer.contract_packet(out_packet=m["1"]).contract_time(out_time=m["A"])
    return reduced.contract_lane(out_time=m["A"], out_packet=m["C"])
