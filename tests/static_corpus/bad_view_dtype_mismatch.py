"""Invalid: a DMA from a bf16 view into an f32 write view (to_hbm_view DtypeMismatch)."""

# runtime: to_hbm_view DtypeMismatch
import numpy as np

import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)

Row = tcp.HbmTensor[tcp.bf16, m["1"], m["H"]]
Wide = tcp.HbmTensor[tcp.f32, m["1"], m["H"]]


def main() -> None:
    src = Row(tcp.Tensor(np.zeros(1024), "H"))
    dst = Wide(tcp.Tensor(np.zeros(1024), "H"))
    src.view().to_hbm_view(dst.view_mut())  # E: tcpdsl-layout DtypeMismatch # E: arg-type # plain: arg-type # pyright: reportArgumentType
