"""Invalid: an escape names an alias this module never defined (BadEscape)."""

# runtime: mapping BadEscape
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, B, C, Stream, Weights

USED = (A, B, C)


@tcp.kernel
def matmul(x: Stream, w: Weights) -> object:
    return x.contract_outer(w, out_time=m["{Rows}"], out_packet=m["B"])  # E: tcpdsl-layout BadEscape
