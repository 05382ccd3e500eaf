"""Valid: a stage called on a subclass of a tensor type is checked as the tensor type's own, and gets its
computed result type."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device
from user_shapes import A, B, C, Out, Stream, Weights


class Rows(Stream):
    """The application's own name for its stream type."""


def project(x: Rows, w: Weights) -> Out:
    outer = x.contract_outer(w, out_time=A, out_packet=B)
    return outer.contract_packet(out_packet=m["1"]).contract_time(out_time=A).contract_lane(out_time=A, out_packet=C)


def main() -> None:
    dev = device()
    project(Rows(dev.main, tcp.Tensor(data(32, 32), (A, B))), Weights(tcp.Tensor(data(8, 32), (C, B))))
