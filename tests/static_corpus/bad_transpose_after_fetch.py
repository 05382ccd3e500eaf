"""Invalid: a transpose of a fetched stream, before collect (stage order)."""

# runtime: attr-defined
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 16)
E = tcp.axis("E", 8)
F = tcp.axis("F", 8)

Data = tcp.DmTensor[tcp.i8, m["1"], m["1"], m["A # 64"], m["F, E"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Data) -> object:
    fetched = dev.main.begin(x.view()).fetch(out_time=m["F"], out_packet=m["E # 32"])
    return fetched.transpose(out_time=m["E"], out_packet=m["F # 32"])  # E: attr-defined # plain: attr-defined # pyright: reportAttributeAccessIssue
