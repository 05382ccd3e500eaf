"""Valid: the logical tensors name their dimensions with the axes themselves, so every checker counts the
axis imports as used (no ``USED = ...`` line); a name given as text is declared where it is written."""

# runtime: valid
import numpy as np

import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device, reference
from user_shapes import A, B, C, Out, Stream, Weights


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    outer = x.contract_outer(w, out_time=A, out_packet=B)
    return outer.contract_packet(out_packet=m["1"]).contract_time(out_time=A).contract_lane(out_time=A, out_packet=C)


def main() -> None:
    dev = device()
    x, w = data(32, 32), data(8, 32)
    got = matmul(Stream(dev.main, tcp.Tensor(x, (A, B))), Weights(tcp.Tensor(w, ("C", B)))).to_tensor().to_numpy((A, C))
    np.testing.assert_allclose(got, reference(x, w), rtol=0.05, atol=0.5)
