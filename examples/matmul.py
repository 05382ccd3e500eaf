"""Matrix multiply through the whole chain, with the Packet Reducer summing a 64-byte packet.

The stream ``[A, B / 16] | B % 16`` (bf16) meets TRF weights ``C | B``. ``contract_outer`` packs two
flits into one 64-byte packet of B (PackSize 2); ``contract_packet`` sums all 32 cells of B in one
adder tree (depth 5); ``contract_time`` keeps A; ``contract_lane`` puts the 8 lanes of C into the
output packet (Interleaved). Result: ``out[a, c] = sum_b x[a, b] * w[c, b]`` accumulated in f32.
"""

import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    return (
        x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"], mode=tcp.LaneMode.INTERLEAVED)
    )


if __name__ == "__main__":
    print(tcp.try_kernel(matmul))
