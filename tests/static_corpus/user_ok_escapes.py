"""Valid: module aliases spliced into texts with {Name}, and an int constant as a pad."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, B, C, Chip, Cluster, Slice

USED = (A, B, C)
Rows = m["A"]
Flit = m["B % 16"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["{Rows}, B / 16"], m["{Flit}"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["B"]]


@tcp.kernel
def matmul(x: Stream, w: Weights) -> tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]:
    kept = x.contract_outer(w, out_time=Rows, out_packet=m["B"]).contract_packet(out_packet=m["1"]).contract_time(out_time=Rows)
    return kept.contract_lane(out_time=m["{Rows}"], out_packet=m["C"])
