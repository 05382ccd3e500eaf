"""Invalid: narrow_split keeps OutTime as Time instead of adding the back half of the flit (SplitTimeMismatch)."""

# runtime: vector_narrow_split SplitTimeMismatch
import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)

Stream = tcp.CollectTensor[tcp.f32, m["1"], m["1"], m["1 # 64"], m["H / 8"], m["H % 8"]]


@tcp.kernel
def kernel(x: Stream) -> object:
    tagged = x.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)
    return tagged.vector_narrow_split(out_time=m["H / 8"], out_packet=m["H % 4"])  # E: tcpdsl-layout SplitTimeMismatch
