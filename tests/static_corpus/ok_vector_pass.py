"""Valid: a vector pass on a collected f32 stream: stash, narrow, multiply, reduce, divide, widen, clip."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)

Stream = tcp.CollectTensor[tcp.f32, m["1"], m["1 # 2"], m["1 # 64"], m["H / 8"], m["H % 8"]]
Square = tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)


@tcp.kernel
def kernel(x: Stream) -> object:
    return (
        x.vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["H / 4"], out_packet=m["H % 4"])
        .vector_stash()
        .vector_fp_binary(Square, tcp.STASH)
        .vector_intra_slice_reduce(tcp.IntraSliceReduceOpF32.ADD, reduce=H, out_time=m["1"], out_packet=m["1 # 4"])
        .vector_fp_div(1024.0)
        .vector_widen_pad(out_packet=m["1 # 8"])
        .vector_clip(tcp.ClipBinaryOpF32.ADD, 6.25e-8)
        .vector_final()
    )
