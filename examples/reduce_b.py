"""The Time Reducer summing an outer Time axis, folded Sequentially.

A matrix-vector product over 2048 rows: ``A / 8`` picks the slice and ``A % 8`` the time slot, B is
split between Time (``B / 16``) and the packet (``B % 16``). The Packet Reducer sums the 16 packet
cells, ``contract_time`` sums the two ``B / 16`` steps (the outer Time axis, so InnerTime is 8) and
the single lane is folded Sequentially: 1 x 8 x 32 = 256 accumulator cells.
Result: ``out[a] = sum_b x[a, b] * w[b]`` in f32.
"""

import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 2048)
B = tcp.axis("B", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["A / 8"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["B / 16, A % 8"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["B / 16"], m["B % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A % 8"], m["1 # 8"]]


@tcp.kernel
def reduce_b(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["1"], element=m["B"])
    return (
        x.contract_outer(trf, out_time=m["B / 16, A % 8"], out_packet=m["B % 16"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A % 8"])
        .contract_lane(out_time=m["A % 8"], out_packet=m["1 # 8"], mode=tcp.LaneMode.SEQUENTIAL)
    )


if __name__ == "__main__":
    print(tcp.try_kernel(reduce_b))
