"""The TRF Sequencer reading a whole 64-byte row per cycle (ReadSize 32, PacketBroadcast 1).

Each lane's weights are one row of K (32 bf16 = 64 bytes), exactly the OutPacket, so the sequencer
does a wide read of the full row and never broadcasts within the packet.
Only ``contract_outer`` runs: ``out[n, m, k] = x[m, k] * w[n, k]`` in f32.
"""

import tcpdsl as tcp
from tcpdsl import m

M = tcp.axis("M", 32)
N = tcp.axis("N", 8)
K = tcp.axis("K", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["M, K / 16"], m["K % 16"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["N"], m["K"]]
Out = tcp.ContractOuterTensor[tcp.f32, tcp.bf16, Chip, Cluster, Slice, m["N"], m["M"], m["K"]]


@tcp.kernel
def trf_sequencer_full_read(x: Stream, w: Weights) -> Out:
    return x.contract_outer(w, out_time=m["M"], out_packet=m["K"])


if __name__ == "__main__":
    print(tcp.try_kernel(trf_sequencer_full_read))
