"""Valid: every stage stored in a variable, some with a declared type, before the next is called."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, B, C, Chip, Cluster, Out, Slice, Stream, Weights

USED = (A, B, C)
Outer = tcp.ContractOuterTensor[tcp.f32, tcp.bf16, Chip, Cluster, Slice, m["C"], m["A"], m["B"]]


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    outer: Outer = x.contract_outer(w, out_time=m["A"], out_packet=m["B"])
    packet = outer.contract_packet(out_packet=m["1"])
    kept = packet.contract_time(out_time=m["A"])
    result: Out = kept.contract_lane(out_time=m["A"], out_packet=m["C"])
    return result
