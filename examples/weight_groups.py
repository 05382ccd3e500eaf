"""Tokens on the slices, the weight fed to the TRF one group of 8 output rows at a time.

This is the contraction of the reference's ``stotrf_table_lookup_gemm`` (its f4 weight decode and
vector-engine dequantization are not contractions and are left out): 16 tokens of an f8e4m3
activation ``act[Tok, Red]`` sit on the slices (``Tok / 8 % 2`` on the Cluster, ``Tok % 8`` on
the Slice) and stream ``Red`` through the packet. The weight ``w[Out, Red]`` has 16 output rows;
each call takes the tile ``Out / 8 = g``, which holds ``Out % 8``, into the 8 TRF lanes. The
Packet Reducer sums ``Red % 64`` in one f8 adder tree and the Lane Folder lays the 8 lanes out as
the output packet: ``out[t, o] = sum_r act[t, r] * w[o, r]`` in f32.

``gemm`` runs the two groups; each result carries ``Out / 8 = g`` from its weight tile, and
``out.assign(part)`` writes it into columns ``8 g`` to ``8 g + 7``.
"""

import numpy as np
import numpy.typing as npt

import tcpdsl as tcp
from tcpdsl import m

Tok = tcp.axis("Tok", 16)
Red = tcp.axis("Red", 64)
Out = tcp.axis("Out", 16)

Chip = m["1"]
Cluster = m["Tok / 8 % 2"]
Slice = m["Tok % 8 # 256"]

Activations = tcp.CollectTensor[tcp.f8e4m3, Chip, Cluster, Slice, m["Red / 32"], m["Red % 32"]]
WeightGroup = tcp.CollectTensor[tcp.f8e4m3, Chip, Cluster, Slice, m["Out % 8, Red / 32"], m["Red % 32"]]
Group = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["1"], m["Out % 8"]]


@tcp.kernel
def weight_groups(act: Activations, w: WeightGroup) -> Group:
    trf = w.to_trf(lane=m["Out % 8"], element=m["Red"])
    return (
        act.contract_outer(trf, out_time=m["Red / 64"], out_packet=m["Red % 64"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["1"])
        .contract_lane(out_time=m["1"], out_packet=m["Out % 8"], mode=tcp.LaneMode.INTERLEAVED)
    )


def gemm(act: npt.ArrayLike, weight: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """``out[t, o] = sum_r act[t, r] * weight[o, r]``, one group of 8 weight rows per kernel call."""
    dev = tcp.Device()
    x = Activations(dev.main, tcp.Tensor(act, "Tok Red"))
    w = tcp.Tensor(weight, "Out Red")
    result = np.zeros((Tok.n, Out.n), dtype=np.float32)
    out = tcp.Tensor(result, "Tok Out")
    for g in range(Out.n // 8):
        out.assign(weight_groups(x, WeightGroup(dev.sub, w.tile(m["Out / 8"], g))).to_tensor())
    return result


if __name__ == "__main__":
    print(tcp.try_kernel(weight_groups))
