"""Invalid: a read tile declared with Bottom padding, which only write tiles have (tile UnexpectedView)."""

# runtime: tile UnexpectedView
import numpy as np

import tcpdsl as tcp
from tcpdsl import m

D = tcp.axis("D", 64)

Row = tcp.DmTensor[tcp.f32, m["1"], m["1"], m["1 # 64"], m["D"]]


def main() -> None:
    view = Row(tcp.Tensor(np.zeros(64), "D")).view()
    view.tile(0, index=m["D"], len=32, element=m["D % 32 #{!} 64"])  # E: tcpdsl-layout UnexpectedView
