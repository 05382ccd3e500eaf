"""Invalid: a helper run in a loop keeps B in contract_time, an axis Time does not hold (Indivisible)."""

# runtime: contract_time Indivisible
import tcpdsl as tcp
from tcpdsl import m
from user_helpers import data, device
from user_shapes import A, B, C, Stream, Weights

USED = (A, B, C)


def step(x: Stream, w: Weights) -> object:
    packet = x.contract_outer(w, out_time=m["A"], out_packet=m["B"]).contract_packet(out_packet=m["1"])
    return packet.contract_time(out_time=m["B"])  # E: tcpdsl-layout Indivisible


def main() -> list[object]:
    dev = device()
    results: list[object] = []
    for seed in range(2):
        x = Stream(dev.main, tcp.Tensor(data(32, 32, seed), "A B"))
        w = Weights(tcp.Tensor(data(8, 32, seed), "C B"))
        results.append(step(x, w))
    return results
