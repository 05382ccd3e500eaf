"""Valid: the projection's gather of proj_q, a Broadcast1 switch between fetch and collect."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

Q = tcp.axis("Q", 2048)

Part = tcp.DmTensor[tcp.bf16, m["1"], m["1 # 2"], m["Q / 32, 1 # 4"], m["Q % 32"]]
Gather = tcp.Broadcast1(slice1=8, slice0=4)
dev = tcp.Device()


@tcp.kernel
def kernel(x: Part) -> object:
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["1"], out_packet=m["Q % 32"])
        .switch(Gather, out_slice=m["Q / 256, 1 # 32"], out_time=m["Q / 32 % 8"])
        .collect(out_time=m["Q / 16 % 16"], out_packet=m["Q % 16"])
    )
