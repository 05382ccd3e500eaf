"""Valid: a user inspects a kernel's stages: explain(), physical() shapes, to_tensor().axes."""

# runtime: valid
import numpy as np

import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device
from user_shapes import A, B, C, Stream, Weights

USED = (A, B, C)


def main() -> str:
    x = Stream(device().main, tcp.Tensor(data(32, 32), "A B"))
    w = Weights(tcp.Tensor(data(8, 32), "C B"))
    outer = x.contract_outer(w, out_time=m["A"], out_packet=m["B"])
    lanes = outer.contract_packet(out_packet=m["1"]).contract_time(out_time=m["A"]).contract_lane(out_time=m["A"], out_packet=m["C"])
    assert lanes.physical().shape == (1, 2, 256, 32, 8)
    assert lanes.to_tensor().axes == ("A", "C")
    assert np.isfinite(lanes.physical()).all()
    return outer.explain() + lanes.explain()
