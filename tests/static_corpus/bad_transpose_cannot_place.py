"""Invalid: a transpose whose OutTime swaps the outer time axis with the columns (transpose CannotPlaceInRows)."""

# runtime: transpose CannotPlaceInRows
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 16)
C = tcp.axis("C", 8)
E = tcp.axis("E", 8)
F = tcp.axis("F", 8)

Rows = tcp.CollectTensor[tcp.i8, m["1"], m["1 # 2"], m["A # 64"], m["C, F"], m["E # 32"]]


@tcp.kernel
def kernel(r: Rows) -> object:
    return r.transpose(out_time=m["E, C"], out_packet=m["F # 32"])  # E: tcpdsl-layout CannotPlaceInRows
