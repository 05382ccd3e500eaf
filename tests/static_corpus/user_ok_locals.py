"""Valid: mappings held in local variables and in aliases, passed to the stages like literals."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, B, C, Out, Stream, Weights

USED = (A, B, C)
Rows = m["A"]


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    rows = Rows
    packet = m["B"]
    reduced = m["1"]
    lanes = m["C"]
    outer = x.contract_outer(w, out_time=rows, out_packet=packet)
    summed = outer.contract_packet(out_packet=reduced)
    kept = summed.contract_time(out_time=rows)
    return kept.contract_lane(out_time=rows, out_packet=lanes)
