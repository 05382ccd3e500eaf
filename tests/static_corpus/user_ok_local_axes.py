"""Valid: axes declared inside the function that uses them, with the tensor types built there too."""

# runtime: valid
import numpy as np

import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device


def run() -> float:
    M = tcp.axis("M", 32)
    K = tcp.axis("K", 64)
    N = tcp.axis("N", 8)
    Stream = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["M, K / 16"], m["K % 16"]]
    Weights = tcp.TrfTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["N"], m["K"]]
    dev = device()
    x, w = data(M.size, K.size), data(N.size, K.size)
    out = (
        Stream(dev.main, tcp.Tensor(x, "M K"))
        .contract_outer(Weights(tcp.Tensor(w, "N K")), out_time=m["M, K / 32"], out_packet=m["K % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["M"])
        .contract_lane(out_time=m["M"], out_packet=m["N"])
    )
    got = out.to_tensor().to_numpy("M N")
    return float(np.abs(got - np.einsum("mk,nk->mn", x, w)).max())


def main() -> None:
    assert run() < 1.0
