"""Invalid: axes declared under ``if TYPE_CHECKING:`` and ``else:`` are found, so the stage rule is what
is reported: OutPacket B % 8 is half a flit of bf16 (contract_outer OutPacketFlits)."""

# runtime: contract_outer OutPacketFlits
from typing import TYPE_CHECKING

import tcpdsl as tcp
from tcpdsl import m

if TYPE_CHECKING:
    A = tcp.axis("A", 32)
    B = tcp.axis("B", 32)
else:
    A = tcp.axis("A", 32)
    B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["B"]]


@tcp.kernel
def kernel(x: Stream, w: Weights) -> object:
    return x.contract_outer(w, out_time=m["A"], out_packet=m["B % 8"])  # E: tcpdsl-layout OutPacketFlits
