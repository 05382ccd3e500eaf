"""Valid: a helper returns a declared ContractTimeTensor; the plugin notes it cannot see its pre-reduce Time."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, B, C, Chip, Cluster, Out, Slice, Stream, Weights

USED = (A, B, C)
Reduced = tcp.ContractTimeTensor[tcp.f32, Chip, Cluster, Slice, m["C"], m["A"], m["1"]]


def reduce(x: Stream, w: Weights) -> Reduced:
    return x.contract_outer(w, out_time=m["A"], out_packet=m["B"]).contract_packet(out_packet=m["1"]).contract_time(out_time=m["A"])


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    return reduce(x, w).contract_lane(out_time=m["A"], out_packet=m["C"])  # N: the Time before contract_time is not known
