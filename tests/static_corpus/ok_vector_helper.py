"""Valid: a pass continued in a helper from an annotated position; the plugin notes what it cannot follow."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 512)

Stream = tcp.CollectTensor[tcp.f32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]
Tagged = tcp.VectorTagTensor[tcp.f32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]


def relu(t: Tagged) -> tcp.VectorFinalTensor[tcp.f32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]:
    return t.vector_clip(tcp.ClipBinaryOpF32.MAX, 0.0).vector_final()  # N: the state of the vector pass this call continues


@tcp.kernel
def kernel(x: Stream) -> object:
    return relu(x.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO))
