"""Valid: an int8 kernel whose int32 result is compared exactly with numpy."""

# runtime: valid
import numpy as np

import tcpdsl as tcp
from tcpdsl import m
from user_helpers import device

A = tcp.axis("A", 8)
K = tcp.axis("K", 32)
R = tcp.axis("R", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["A"], m["K"]]
Weights = tcp.TrfTensor[tcp.i9, Chip, Cluster, Slice, m["R"], m["K"]]
Out = tcp.ContractTensor[tcp.i32, Chip, Cluster, Slice, m["A"], m["R"]]


@tcp.kernel
def dot(x: Stream, w: Weights) -> Out:
    outer = x.contract_outer(w, out_time=m["A"], out_packet=m["K"])
    return outer.contract_packet(out_packet=m["1"]).contract_time(out_time=m["A"]).contract_lane(out_time=m["A"], out_packet=m["R"])


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(-8, 8, size=(8, 32))
    w = rng.integers(-8, 8, size=(8, 32))
    got = dot(Stream(device().main, tcp.Tensor(x, "A K")), Weights(tcp.Tensor(w, "R K"))).to_tensor().to_numpy("A R")
    assert np.array_equal(got, x @ w.T)
    assert int(got.sum()) == int((x @ w.T).sum())
