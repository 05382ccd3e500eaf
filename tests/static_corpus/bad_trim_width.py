"""Invalid: a commit packet of 4 bytes (commit_trim Width)."""

# runtime: commit_trim Width
import tcpdsl as tcp
from tcpdsl import m

T = tcp.axis("T", 4)
N = tcp.axis("N", 8)

Bytes = tcp.CollectTensor[tcp.i8, m["1"], m["1 # 2"], m["1 # 256"], m["T"], m["N # 32"]]


@tcp.kernel
def kernel(x: Bytes) -> object:
    return x.commit_trim(out_packet=m["N = 4"])  # E: tcpdsl-layout Width
