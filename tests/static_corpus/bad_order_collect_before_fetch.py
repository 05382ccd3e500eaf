"""Invalid: collect straight after begin, without a fetch (stage order)."""

# runtime: attr-defined
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 16)
K = tcp.axis("K", 32)

Hidden = tcp.DmTensor[tcp.bf16, m["1"], m["1"], m["A # 64"], m["K"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Hidden) -> object:
    return dev.main.begin(x.view()).collect(out_time=m["K / 16"], out_packet=m["K % 16"])  # E: attr-defined # plain: attr-defined # pyright: reportAttributeAccessIssue
