"""Invalid: a padded view with fewer cells than the view (pad NarrowerView)."""

# runtime: pad NarrowerView
import numpy as np

import tcpdsl as tcp
from tcpdsl import m

W = tcp.axis("W", 16)

Row = tcp.DmTensor[tcp.f32, m["1"], m["1"], m["1 # 64"], m["W"]]


def main() -> None:
    Row(tcp.Tensor(np.zeros(16), "W")).view().pad(element=m["W = 8"])  # E: tcpdsl-layout NarrowerView
