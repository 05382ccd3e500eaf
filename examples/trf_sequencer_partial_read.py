"""The TRF Sequencer reading half a packet and broadcasting it (ReadSize 16, PacketBroadcast L).

Each lane holds ``[O, K]``; a TRF read returns the 16 cells of K, which the sequencer repeats for
both cells of L to fill the 64-byte packet ``[L, K]``, while O is walked in Time.
Only ``contract_outer`` runs: ``out[n, o, m, l, k] = x[o, m, l, k] * w[n, o, k]`` in f32.
"""

import tcpdsl as tcp
from tcpdsl import m

M = tcp.axis("M", 32)
N = tcp.axis("N", 8)
K = tcp.axis("K", 16)
L = tcp.axis("L", 2)
O = tcp.axis("O", 2)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["O, M, L"], m["K"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["N"], m["O, K"]]
Out = tcp.ContractOuterTensor[tcp.f32, tcp.bf16, Chip, Cluster, Slice, m["N"], m["O, M"], m["L, K"]]


@tcp.kernel
def trf_sequencer_partial_read(x: Stream, w: Weights) -> Out:
    return x.contract_outer(w, out_time=m["O, M"], out_packet=m["L, K"])


if __name__ == "__main__":
    print(tcp.try_kernel(trf_sequencer_partial_read))
