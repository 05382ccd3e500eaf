"""Invalid: a Broadcast01 with a zero slice0 (switch ZeroDimension), the configuration held in a name."""

# runtime: switch ZeroDimension
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 8)
B = tcp.axis("B", 32)
C = tcp.axis("C", 256)

Data = tcp.DmTensor[tcp.i8, m["1"], m["1 # 2"], m["C"], m["A, B"]]
Empty = tcp.Broadcast01(slice1=2, slice0=0, time0=1)
dev = tcp.Device()


@tcp.kernel
def kernel(x: Data) -> object:
    fetched = dev.main.begin(x.view()).fetch(out_time=m["A"], out_packet=m["B"])
    return fetched.switch(Empty, out_slice=m["C"], out_time=m["A"])  # E: tcpdsl-layout ZeroDimension
