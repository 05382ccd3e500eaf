"""Valid: a helper generic in its stream type (a type variable bound to one). mypy calls no plugin for a
stage called on a type variable, so the plugin says, where the variable is used, that those stages are
checked only at run time."""

# runtime: valid
from typing import TypeVar

import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device
from user_shapes import A, B, C, Out, Stream, Weights

S = TypeVar("S", bound=Stream)


def project(x: S, w: Weights) -> tuple[S, Out]:  # N: tcpdsl: a stage called on a value of type S, a type variable bound to CollectTensor, reaches no plugin
    outer = x.contract_outer(w, out_time=A, out_packet=B)
    return x, outer.contract_packet(out_packet=m["1"]).contract_time(out_time=A).contract_lane(out_time=A, out_packet=C)


def main() -> None:
    dev = device()
    project(Stream(dev.main, tcp.Tensor(data(32, 32), (A, B))), Weights(tcp.Tensor(data(8, 32), (C, B))))
