"""Invalid: an axis of size 0 (mapping InvalidAxisSize)."""

# runtime: mapping InvalidAxisSize
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 0)  # E: tcpdsl-layout InvalidAxisSize

Rows = m["1"]


@tcp.kernel
def kernel() -> object:
    return Rows
