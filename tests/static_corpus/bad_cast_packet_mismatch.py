"""Invalid: the cast engine pads the packet to one flit; a reordered packet is refused (cast PacketMismatch)."""

# runtime: cast PacketMismatch
import tcpdsl as tcp
from tcpdsl import m

T = tcp.axis("T", 4)
N = tcp.axis("N", 8)

Acc = tcp.CollectTensor[tcp.f32, m["1"], m["1 # 2"], m["1 # 256"], m["T"], m["N"]]


@tcp.kernel
def kernel(x: Acc) -> object:
    return x.cast(tcp.bf16, out_packet=m["N #{0} 16"])  # E: tcpdsl-layout PacketMismatch
