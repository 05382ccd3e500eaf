"""Invalid: contract_packet skipped in a chain written over several lines (stage order)."""

# runtime: attr-defined
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, B, C, Stream, Weights

USED = (A, B, C)


@tcp.kernel
def matmul(x: Stream, w: Weights) -> object:
    return (
        x.contract_outer(w, out_time=m["A"], out_packet=m["B"])  # plain: attr-defined
        .contract_time(out_time=m["A"])  # E: attr-defined # pyright: reportAttributeAccessIssue
        .contract_lane(out_time=m["A"], out_packet=m["C"])
    )
