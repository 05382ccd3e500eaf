"""Valid: transposes of a collected i8 stream, of an f32 contraction result and of an i32 vector pass's result."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 16)
C = tcp.axis("C", 8)
E = tcp.axis("E", 8)
F = tcp.axis("F", 8)
K = tcp.axis("K", 32)
N = tcp.axis("N", 2)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["A # 64"]

Rows = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["C, F"], m["E # 32"]]
Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["N, K / 16"], m["K % 16"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["K"]]
Columns = tcp.CollectTensor[tcp.i32, Chip, Cluster, Slice, m["N"], m["C # 8"]]


@tcp.kernel
def kernel(r: Rows, x: Stream, w: Weights, v: Columns) -> object:
    columns = r.transpose(out_time=m["C, E"], out_packet=m["F # 32"])
    out = (
        x.contract_outer(w, out_time=m["N, K / 32"], out_packet=m["K % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["N"])
        .contract_lane(out_time=m["N"], out_packet=m["C"])
    )
    final = v.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO).vector_fxp(tcp.FxpBinaryOp.ADD_FXP, 1).vector_final()
    return columns, out.transpose(out_time=m["C"], out_packet=m["N # 8"]), final.transpose(out_time=m["C"], out_packet=m["N # 8"])
