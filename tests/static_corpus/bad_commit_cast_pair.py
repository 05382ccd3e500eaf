"""Invalid: the commit adapter narrows only f32 to bf16 (commit_cast Pair)."""

# runtime: commit_cast Pair
import tcpdsl as tcp
from tcpdsl import m

M = tcp.axis("M", 16)
N = tcp.axis("N", 8)

Ints = tcp.CollectTensor[tcp.i32, m["1"], m["1 # 2"], m["1 # 256"], m["M"], m["N"]]


@tcp.kernel
def kernel(x: Ints) -> object:
    return x.commit_trim(out_packet=m["N"]).commit_cast(tcp.i8)  # E: tcpdsl-dtype Pair
