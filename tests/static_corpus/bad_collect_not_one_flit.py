"""Invalid: collect into half a flit of bf16 (collect OutputNotOneFlit)."""

# runtime: collect OutputNotOneFlit
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 16)
K = tcp.axis("K", 32)

Hidden = tcp.DmTensor[tcp.bf16, m["1"], m["1"], m["A # 64"], m["K"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Hidden) -> object:
    fetched = dev.main.begin(x.view()).fetch(out_time=m["K / 8"], out_packet=m["K % 8"])
    return fetched.collect(out_time=m["K / 8"], out_packet=m["K % 8"])  # E: tcpdsl-layout OutputNotOneFlit
