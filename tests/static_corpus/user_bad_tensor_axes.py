"""Invalid: a logical tensor names an axis that this module neither declares nor imports (Tensor UnknownAxis)."""

# runtime: Tensor UnknownAxis
import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device
from user_shapes import A, B, C, Out, Stream, Weights


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    outer = x.contract_outer(w, out_time=A, out_packet=B)
    return outer.contract_packet(out_packet=m["1"]).contract_time(out_time=A).contract_lane(out_time=A, out_packet=C)


def main() -> None:
    dev = device()
    x = Stream(dev.main, tcp.Tensor(data(32, 32), (A, B)))
    w = Weights(tcp.Tensor(data(8, 32), "C K"))  # E: tcpdsl-layout UnknownAxis
    matmul(x, w)
