"""Invalid: A is declared here with 16 cells while the imported types use user_shapes' A of 32 (AxisSizeConflict)."""

# runtime: mapping AxisSizeConflict
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import B, C, Stream, Weights

USED = (B, C)
A = tcp.axis("A", 16)  # E: tcpdsl-layout AxisSizeConflict


@tcp.kernel
def matmul(x: Stream, w: Weights) -> object:
    return x.contract_outer(w, out_time=m["A"], out_packet=m["B"])
