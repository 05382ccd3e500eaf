"""Invalid: the fetch adapter has no bf16 to i32 cast (fetch_cast CastPair)."""

# runtime: fetch_cast CastPair
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 16)
K = tcp.axis("K", 32)

Hidden = tcp.DmTensor[tcp.bf16, m["1"], m["1"], m["A # 64"], m["K"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Hidden) -> object:
    fetched = dev.main.begin(x.view()).fetch(out_time=m["K / 16"], out_packet=m["K % 16"])
    return fetched.fetch_cast(tcp.i32)  # E: tcpdsl-dtype CastPair
