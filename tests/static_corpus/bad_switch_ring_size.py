"""Invalid: a CustomBroadcast that names a ring of 2 where the layouts imply 4 (switch RingSizeMismatch)."""

# runtime: switch RingSizeMismatch
import tcpdsl as tcp
from tcpdsl import m

P = tcp.axis("P", 64)
B = tcp.axis("B", 8)
V = tcp.axis("V", 16)
Y = tcp.axis("Y", 4)

Data = tcp.DmTensor[tcp.bf16, m["1"], m["1"], m["P, 1 # 4"], m["B, V"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Data) -> object:
    fetched = dev.main.begin(x.view()).fetch(out_time=m["B"], out_packet=m["V"])
    return fetched.switch(tcp.CustomBroadcast(ring_size=2), out_slice=m["P, Y"], out_time=m["B"])  # E: tcpdsl-layout RingSizeMismatch
