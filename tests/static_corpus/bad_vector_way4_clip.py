"""Invalid: a Way8 Clip op straight after a narrow, before any widen (stage order, part of the type)."""

# runtime: attr-defined
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 512)

Stream = tcp.CollectTensor[tcp.f32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]


@tcp.kernel
def kernel(x: Stream) -> object:
    narrow = x.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO).vector_narrow_trim(out_packet=m["A % 2 # 4"])
    return narrow.vector_clip(tcp.ClipBinaryOpF32.MAX, 0.0)  # E: attr-defined # plain: attr-defined # pyright: reportAttributeAccessIssue
