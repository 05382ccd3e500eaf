"""Invalid: the types come from another module, but B is not imported here (UnknownAxis)."""

# runtime: mapping UnknownAxis
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, Stream, Weights

USED = A


@tcp.kernel
def matmul(x: Stream, w: Weights) -> object:
    return x.contract_outer(w, out_time=m["A"], out_packet=m["B"])  # E: tcpdsl-layout UnknownAxis
