"""Valid: a kernel run in a loop over several inputs, errors collected in a list."""

# runtime: valid
import numpy as np

import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device, reference
from user_shapes import A, B, C, Out, Stream, Weights

USED = (A, B, C)


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    return (
        x.contract_outer(w, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"])
    )


def main() -> list[float]:
    dev = device()
    errors: list[float] = []
    for seed in range(3):
        x, w = data(32, 32, seed), data(8, 32, seed + 10)
        got = matmul(Stream(dev.main, tcp.Tensor(x, "A B")), Weights(tcp.Tensor(w, "C B"))).to_tensor().to_numpy("A C")
        errors.append(float(np.linalg.norm(got - reference(x, w)) / np.linalg.norm(reference(x, w))))
    assert max(errors) < 0.05
    return errors
