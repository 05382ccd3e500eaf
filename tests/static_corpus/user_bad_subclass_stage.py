"""Invalid: a stage called on a subclass of a tensor type is checked as the tensor type's own: OutPacket
B % 8 is half a flit of bf16 (contract_outer OutPacketFlits)."""

# runtime: contract_outer OutPacketFlits
import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device
from user_shapes import A, B, C, Stream, Weights


class Rows(Stream):
    """The application's own name for its stream type."""


def project(x: Rows, w: Weights) -> object:
    return x.contract_outer(w, out_time=A, out_packet=m["B % 8"])  # E: tcpdsl-layout OutPacketFlits


def main() -> None:
    dev = device()
    project(Rows(dev.main, tcp.Tensor(data(32, 32), (A, B))), Weights(tcp.Tensor(data(8, 32), (C, B))))
