"""Valid: axis sizes given by module constants, as a user keeps sizes in one place."""

# runtime: valid
from typing import Final

import tcpdsl as tcp
from tcpdsl import m

TOKENS: Final = 32
HIDDEN = 64
LANES: Final = 8

T = tcp.axis("T", TOKENS)
H = tcp.axis("H", HIDDEN)
L = tcp.axis("L", LANES)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["T, H / 16"], m["H % 16"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["L"], m["H"]]


@tcp.kernel
def project(x: Stream, w: Weights) -> tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["T"], m["L"]]:
    outer = x.contract_outer(w, out_time=m["T, H / 32"], out_packet=m["H % 32"])
    return outer.contract_packet(out_packet=m["1"]).contract_time(out_time=m["T"]).contract_lane(out_time=m["T"], out_packet=m["L"])
