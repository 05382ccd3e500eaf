"""Valid: a CustomBroadcast that moves the inner slice axis to the innermost time steps (ring 4)."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

P = tcp.axis("P", 64)
Q = tcp.axis("Q", 4)
B = tcp.axis("B", 8)
V = tcp.axis("V", 16)
Y = tcp.axis("Y", 4)

Data = tcp.DmTensor[tcp.bf16, m["1"], m["1"], m["P, Q"], m["B, V"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Data) -> object:
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["B"], out_packet=m["V"])
        .switch(tcp.CustomBroadcast(ring_size=4), out_slice=m["P, Y"], out_time=m["B, Q"])
        .collect(out_time=m["B, Q"], out_packet=m["V"])
    )
