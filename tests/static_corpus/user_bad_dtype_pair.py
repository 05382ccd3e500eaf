"""Invalid: bf16 activations against int8 weights (NoMultiplier), one error."""

# runtime: contract_outer NoMultiplier
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, B, C, Chip, Cluster, Slice, Stream

USED = (A, B, C)
Int8Weights = tcp.TrfTensor[tcp.i8, Chip, Cluster, Slice, m["C"], m["B"]]


@tcp.kernel
def matmul(x: Stream, w: Int8Weights) -> object:
    return x.contract_outer(w, out_time=m["A"], out_packet=m["B"])  # E: tcpdsl-dtype NoMultiplier # plain: arg-type # pyright: reportArgumentType
