"""Invalid: an Fp op on an i32 stream (vector_fp_unary Dtype); the stream's dtype is part of the type."""

# runtime: vector_fp_unary Dtype
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 512)

Stream = tcp.CollectTensor[tcp.i32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]


@tcp.kernel
def kernel(x: Stream) -> object:
    narrow = x.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO).vector_narrow_trim(out_packet=m["A % 2 # 4"])
    return narrow.vector_fp_unary(tcp.FpUnaryOp.EXP)  # E: misc # E: tcpdsl-dtype Dtype # plain: misc # pyright: reportAttributeAccessIssue
