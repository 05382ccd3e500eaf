"""Invalid: function-local axes, and an OutPacket of 8 elements, a quarter flit (OutPacketFlits)."""

# runtime: contract_outer OutPacketFlits
import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device


def main() -> object:
    M = tcp.axis("M", 32)
    K = tcp.axis("K", 64)
    N = tcp.axis("N", 8)
    Stream = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["M, K / 16"], m["K % 16"]]
    Weights = tcp.TrfTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["N"], m["K"]]
    x = Stream(device().main, tcp.Tensor(data(M.size, K.size), "M K"))
    w = Weights(tcp.Tensor(data(N.size, K.size), "N K"))
    return x.contract_outer(w, out_time=m["M, K / 8"], out_packet=m["K % 8"])  # E: tcpdsl-layout OutPacketFlits
