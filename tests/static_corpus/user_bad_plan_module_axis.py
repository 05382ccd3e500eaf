"""Invalid: A is declared here with 16 cells, and with 32 in ``plan_head``, which ``from user_plans import
plan_head`` imports (AxisSizeConflict)."""

# runtime: mapping AxisSizeConflict
import tcpdsl as tcp
from tcpdsl import m
from user_plans import plan_head

A = tcp.axis("A", 16)  # E: tcpdsl-layout AxisSizeConflict


@tcp.kernel
def matmul(x: plan_head.Stream, w: plan_head.Weights) -> object:
    return x.contract_outer(w, out_time=m["A"], out_packet=plan_head.Packet)
