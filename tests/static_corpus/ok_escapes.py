"""Valid: ``{Name}`` escapes splice a module-level alias (atom position) and an int constant (number position)."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
FLIT = 16

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
Rows = m["A"]
Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["{Rows}, B / {FLIT}"], m["B % {FLIT}"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / {FLIT}"], m["B % {FLIT}"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["{Rows}"], m["C"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    outer = x.contract_outer(trf, out_time=m["{Rows}"], out_packet=m["B"])
    packet = outer.contract_packet(out_packet=m["1"])
    return packet.contract_time(out_time=Rows).contract_lane(out_time=Rows, out_packet=m["C"])
