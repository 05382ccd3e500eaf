"""Valid: a kernel checked against numpy the way a first user does it (arithmetic, @, einsum, np.testing)."""

# runtime: valid
import numpy as np

import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["B"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    return (
        x.contract_outer(w, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"])
    )


def main() -> float:
    dev = device()
    x, w = data(32, 32), data(8, 32, seed=1)
    out = matmul(Stream(dev.main, tcp.Tensor(x, "A B")), Weights(tcp.Tensor(w, "C B")))
    got = out.to_tensor().to_numpy("A C")
    ref = x @ w.T
    np.testing.assert_allclose(got, ref, rtol=0.05, atol=0.5)
    scaled = got * 2.5 - ref
    assert bool((np.abs(scaled - 1.5 * ref) < 1.0).all())
    assert np.allclose(got, np.einsum("ab,cb->ac", x, w), atol=0.5)
    return float(np.abs(got - ref).max())
