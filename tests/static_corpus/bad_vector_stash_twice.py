"""Invalid: the stash read a second time (vector_clip ReadOnce); the stash state is part of the type."""

# runtime: vector_clip ReadOnce
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 512)

Stream = tcp.CollectTensor[tcp.f32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]


@tcp.kernel
def kernel(x: Stream) -> object:
    kept = x.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO).vector_stash()
    once = kept.vector_clip(tcp.ClipBinaryOpF32.MAX, tcp.STASH)
    return once.vector_clip(tcp.ClipBinaryOpF32.MIN, tcp.STASH)  # E: tcpdsl-layout ReadOnce # plain: arg-type # pyright: reportArgumentType
