"""Invalid: a doubled comma in a mapping held in a local (syntax)."""

# runtime: syntax
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, B, C, Stream, Weights

USED = (A, B, C)


@tcp.kernel
def matmul(x: Stream, w: Weights) -> object:
    rows = m["A,, B"]  # E: tcpdsl-syntax
    return x.contract_outer(w, out_time=rows, out_packet=m["B"])
