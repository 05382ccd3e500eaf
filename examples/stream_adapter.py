"""The Stream Adapter on its own: PackSize 2 and a TimeBroadcast axis.

The stream ``[M, L] | K`` packs its two innermost Time cells (L) with the 16-element flit of K into
a 64-byte packet ``[L, K]`` (PackSize 2). ``OutTime = [M, B]`` repeats every packet for each of the
5 TRF rows B (TimeBroadcast B), and the 8 lanes N each read their own weights ``[B, L, K]``.
Only ``contract_outer`` runs: the result is the unreduced product
``out[n, m, b, l, k] = x[m, l, k] * w[n, b, l, k]`` in f32.
"""

import tcpdsl as tcp
from tcpdsl import m

M = tcp.axis("M", 32)
N = tcp.axis("N", 8)
K = tcp.axis("K", 16)
L = tcp.axis("L", 2)
B = tcp.axis("B", 5)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["M, L"], m["K"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["N"], m["B, L, K"]]
Out = tcp.ContractOuterTensor[tcp.f32, tcp.bf16, Chip, Cluster, Slice, m["N"], m["M, B"], m["L, K"]]


@tcp.kernel
def stream_adapter(x: Stream, w: Weights) -> Out:
    return x.contract_outer(w, out_time=m["M, B"], out_packet=m["L, K"])


if __name__ == "__main__":
    print(tcp.try_kernel(stream_adapter))
