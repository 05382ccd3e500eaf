"""Invalid: mappings held in locals, and a lane fold whose out_packet is not one 8-cell flit (OutPacketSize)."""

# runtime: contract_lane OutPacketSize
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, B, C, Stream, Weights

USED = (A, B, C)


@tcp.kernel
def matmul(x: Stream, w: Weights) -> object:
    rows = m["A"]
    outer = x.contract_outer(w, out_time=rows, out_packet=m["B"])
    kept = outer.contract_packet(out_packet=m["1"]).contract_time(out_time=rows)
    half = m["C % 4"]
    return kept.contract_lane(out_time=rows, out_packet=half)  # E: tcpdsl-layout OutPacketSize
