"""Invalid: the stash read before any vector_stash; the plugin reports it once, in the runtime's words."""

# runtime: vector_clip ReadOnce
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 512)

Stream = tcp.CollectTensor[tcp.f32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]


@tcp.kernel
def kernel(x: Stream) -> object:
    tagged = x.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)
    return tagged.vector_clip(tcp.ClipBinaryOpF32.MAX, tcp.STASH)  # E: tcpdsl-layout ReadOnce # plain: arg-type # pyright: reportArgumentType
