"""Quick start: a matrix-vector product with one matrix row per slice.

Row I of the 256 x 2048 matrix lives in slice I and streams its 2048 columns J through Time and
the packet; every slice holds the vector in one TRF lane. Each slice reduces J like
``dot_product``. Result: ``out[i] = sum_j x[i, j] * w[j]`` in f32 (a runner filling the weights
over the whole layout gives each slice its own vector: ``w[i, j]``).
"""

import tcpdsl as tcp
from tcpdsl import m

I = tcp.axis("I", 256)
J = tcp.axis("J", 2048)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["I"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["J / 16"], m["J % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["J / 16"], m["J % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["1"], m["1 # 8"]]


@tcp.kernel
def gemv(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["1"], element=m["J"])
    return (
        x.contract_outer(trf, out_time=m["J / 32"], out_packet=m["J % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["1"])
        .contract_lane(out_time=m["1"], out_packet=m["1 # 8"], mode=tcp.LaneMode.INTERLEAVED)
    )


if __name__ == "__main__":
    print(tcp.try_kernel(gemv))
