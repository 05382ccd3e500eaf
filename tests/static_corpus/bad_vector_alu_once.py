"""Invalid: a third Fxp op on the adder the first one used (vector_fxp AluOnce)."""

# runtime: vector_fxp AluOnce
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 512)

Stream = tcp.CollectTensor[tcp.i32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]


@tcp.kernel
def kernel(x: Stream) -> object:
    tagged = x.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)
    scaled = tagged.vector_fxp(tcp.FxpBinaryOp.ADD_FXP, 10).vector_fxp(tcp.FxpBinaryOp.MUL_INT, 2)
    return scaled.vector_fxp(tcp.FxpBinaryOp.SUB_FXP, 5).vector_final()  # E: tcpdsl-layout AluOnce
