"""Invalid: a switch after collect (stage order: the switch sits between fetch and collect)."""

# runtime: attr-defined
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 8)
B = tcp.axis("B", 32)
C = tcp.axis("C", 256)

Data = tcp.DmTensor[tcp.i8, m["1"], m["1 # 2"], m["C"], m["A, B"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Data) -> object:
    collected = dev.main.begin(x.view()).fetch(out_time=m["A"], out_packet=m["B"]).collect(out_time=m["A"], out_packet=m["B"])
    return collected.switch(tcp.Forwarding(), out_slice=m["C"], out_time=m["A"])  # E: attr-defined # plain: attr-defined # pyright: reportAttributeAccessIssue
