"""Invalid: the declared result is an i32 tensor; a bf16 chain accumulates in f32 (a type mismatch)."""

# runtime: type
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, B, C, Chip, Cluster, Slice, Stream, Weights

USED = (A, B, C)
Out = tcp.ContractTensor[tcp.i32, Chip, Cluster, Slice, m["A"], m["C"]]


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    kept = x.contract_outer(w, out_time=m["A"], out_packet=m["B"]).contract_packet(out_packet=m["1"]).contract_time(out_time=m["A"])
    return kept.contract_lane(out_time=m["A"], out_packet=m["C"])  # E: return-value # plain: return-value # pyright: reportReturnType
