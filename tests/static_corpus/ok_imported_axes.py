"""Valid: axes and grid aliases imported with ``from ... import`` resolve in this module's texts."""

# runtime: valid
import tcpdsl as tcp
from corpus_shapes import A, B, C, Chip, Cluster, Slice
from tcpdsl import m

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]
USED = (A, B, C)


@tcp.kernel
def kernel(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    packet = outer.contract_packet(out_packet=m["1"])
    return packet.contract_time(out_time=m["A"]).contract_lane(out_time=m["A"], out_packet=m["C"])
