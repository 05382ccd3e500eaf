"""Invalid: a fetch that names an axis the DM view does not hold (fetch Unreadable)."""

# runtime: fetch Unreadable
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 16)
K = tcp.axis("K", 32)
C = tcp.axis("C", 16)

Hidden = tcp.DmTensor[tcp.bf16, m["1"], m["1"], m["A # 64"], m["K"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Hidden) -> object:
    return dev.main.begin(x.view()).fetch(out_time=m["K"], out_packet=m["C"])  # E: tcpdsl-layout Unreadable
