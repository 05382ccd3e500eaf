"""Valid: ``from user_plans import plan_head`` imports a module of a package; the kernel reads its types
through it, and passes its axes as objects where a stage takes a mapping."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m
from user_plans import plan_head
from user_plans.plan_head import A, C


@tcp.kernel
def matmul(x: plan_head.Stream, w: plan_head.Weights) -> plan_head.Out:
    outer = x.contract_outer(w, out_time=A, out_packet=plan_head.Packet)
    return outer.contract_packet(out_packet=m["1"]).contract_time(out_time=A).contract_lane(out_time=A, out_packet=C)
