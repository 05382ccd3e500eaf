"""Invalid: commit straight after collect, without commit_trim (stage order)."""

# runtime: attr-defined
import tcpdsl as tcp
from tcpdsl import m

M = tcp.axis("M", 16)
N = tcp.axis("N", 8)

Acc = tcp.CollectTensor[tcp.f32, m["1"], m["1 # 2"], m["1 # 256"], m["M"], m["N"]]


@tcp.kernel
def kernel(x: Acc) -> object:
    return x.commit(element=m["M, N"])  # E: attr-defined # plain: attr-defined # pyright: reportAttributeAccessIssue
