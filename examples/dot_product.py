"""Quick start: the dot product of two 2048-element bf16 vectors.

Both vectors stream as ``A / 16 | A % 16``; the weights go to a single TRF lane holding all of A.
``contract_outer`` packs 32 elements per packet, the Packet Reducer sums them (depth 5) and
``contract_time`` sums the 64 packets, leaving one value: ``out = sum_a x[a] * w[a]`` in f32.
"""

import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 2048)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A / 16"], m["A % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["1, A / 16"], m["A % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["1"], m["1 # 8"]]


@tcp.kernel
def dot_product(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["1"], element=m["A"])
    return (
        x.contract_outer(trf, out_time=m["A / 32"], out_packet=m["A % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["1"])
        .contract_lane(out_time=m["1"], out_packet=m["1 # 8"], mode=tcp.LaneMode.INTERLEAVED)
    )


if __name__ == "__main__":
    print(tcp.try_kernel(dot_product))
