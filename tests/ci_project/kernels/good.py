import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 4)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Stream = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["C, B / 16"], m["B % 16"]]
Out = tcp.ContractTensor[tcp.f32, m["1"], m["1 # 2"], m["1 # 256"], m["A"], m["C"]]


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    return (
        x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"], mode=tcp.LaneMode.INTERLEAVED)
    )
