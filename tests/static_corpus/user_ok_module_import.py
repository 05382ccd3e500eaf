"""Valid: ``import user_shapes as shapes``; types and mapping aliases read through the module."""

# runtime: valid
import tcpdsl as tcp
import user_shapes as shapes
from tcpdsl import m
from user_shapes import A, B, C

USED = (A, B, C)
OutTime = m["A"]


@tcp.kernel
def matmul(x: shapes.Stream, w: shapes.Weights) -> shapes.Out:
    return (
        x.contract_outer(w, out_time=OutTime, out_packet=m["B"])
        .contract_packet(out_packet=shapes.Chip)
        .contract_time(out_time=OutTime)
        .contract_lane(out_time=OutTime, out_packet=m["C"])
    )
