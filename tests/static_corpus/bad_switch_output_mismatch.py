"""Invalid: a Broadcast1 whose OutSlice keeps Slice's outer axis where the broadcast slot goes (switch OutputMismatch)."""

# runtime: switch OutputMismatch
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 8)
B = tcp.axis("B", 32)
C = tcp.axis("C", 256)
D = tcp.axis("D", 64)

Data = tcp.DmTensor[tcp.i8, m["1"], m["1 # 2"], m["C"], m["A, B"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Data) -> object:
    fetched = dev.main.begin(x.view()).fetch(out_time=m["A"], out_packet=m["B"])
    return fetched.switch(tcp.Broadcast1(slice1=4, slice0=16), out_slice=m["D % 4, C % 64"], out_time=m["A, C / 64"])  # E: tcpdsl-layout OutputMismatch
