"""Invalid: a commit that leaves part of the new DM tensor unwritten (commit Unwritten)."""

# runtime: commit Unwritten
import tcpdsl as tcp
from tcpdsl import m

M = tcp.axis("M", 16)
N = tcp.axis("N", 8)

Acc = tcp.CollectTensor[tcp.f32, m["1"], m["1 # 2"], m["1 # 256"], m["M"], m["N"]]


@tcp.kernel
def kernel(x: Acc) -> object:
    return x.commit_trim(out_packet=m["N"]).commit(element=m["M, N, 2"])  # E: tcpdsl-layout Unwritten
