"""Valid: layouts written in another module (``import x; x.Alias``) resolve in the module that wrote them."""

# runtime: valid
import corpus_shapes as shapes
import tcpdsl as tcp

Stream = tcp.CollectTensor[tcp.bf16, shapes.Chip, shapes.Cluster, shapes.Slice, shapes.StreamTime, shapes.Flit]
Weights = tcp.CollectTensor[tcp.bf16, shapes.Chip, shapes.Cluster, shapes.Slice, shapes.WeightTime, shapes.Flit]
Out = tcp.ContractOuterTensor[
    tcp.f32, tcp.bf16, shapes.Chip, shapes.Cluster, shapes.Slice, shapes.Lanes, shapes.OutTime, shapes.Packet
]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=shapes.Lanes, element=shapes.Packet)
    return x.contract_outer(trf, out_time=shapes.OutTime, out_packet=shapes.Packet)
