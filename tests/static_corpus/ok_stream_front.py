"""Valid: a stream begun on a DM view, fetched and collected, then contracted."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 16)
K = tcp.axis("K", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1"]
Slice = m["A # 64"]

Hidden = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["K"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["K"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Hidden, w: Weights) -> object:
    stream = (
        dev.main.begin(x.view())
        .fetch(out_time=m["K / 16"], out_packet=m["K % 16"])
        .collect(out_time=m["K / 16"], out_packet=m["K % 16"])
    )
    return (
        stream.contract_outer(w, out_time=m["1"], out_packet=m["K"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["1"])
        .contract_lane(out_time=m["1"], out_packet=m["C"])
    )
