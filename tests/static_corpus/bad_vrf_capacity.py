"""Invalid: 16 KiB of i32 into the 8 KiB vector register file (to_vrf ExceedsCapacity)."""

# runtime: to_vrf ExceedsCapacity
import tcpdsl as tcp
from tcpdsl import m

V = tcp.axis("V", 4096)

Wide = tcp.CollectTensor[tcp.i32, m["1"], m["1 # 2"], m["1 # 256"], m["V / 8"], m["V % 8"]]


@tcp.kernel
def kernel(x: Wide) -> object:
    return x.to_vrf(element=m["V"])  # E: tcpdsl-layout ExceedsCapacity
