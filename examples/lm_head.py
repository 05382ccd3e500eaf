"""The reference transformer's lm_head at its real size: 19 tiles of 8192 vocabulary rows, one kernel.

The weight (Wp = 155648 rows, the vocabulary padded to whole tiles, by H = 1024) is too big for the
TRF, so the model feeds one tile ``Wp / 8192 = i`` per call. Within a tile, Cluster holds
``Wp / 4096 % 2`` and Slice ``Wp / 16 % 256``; each slice keeps 16 rows in the TRF as 8 lanes
(``Wp % 8``) of 2 rows (``Wp / 8 % 2``) of H. The hidden state is the stream, the same on every
slice (its layout holds no Wp). The Packet Reducer sums ``H % 32``, the Time Reducer the rest of H,
and the Lane Folder lays the 8 lanes out as the output packet: ``logits[w] = sum_h x[h] * W[w, h]``.

``logits`` runs the 19 tiles: each result holds ``Wp % 8192`` and carries the fixed digit
``Wp / 8192 = i`` of its weight tile, so ``out.assign(part)`` writes it in place.
"""

import numpy as np
import numpy.typing as npt

import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)
Wp = tcp.axis("Wp", 19 * 8192)

Chip = m["1"]
Cluster = m["Wp / 4096 % 2"]
Slice = m["Wp / 16 % 256"]

Hidden = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["H / 16"], m["H % 16"]]
WeightTile = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["Wp % 8, Wp / 8 % 2, H / 16"], m["H % 16"]]
Logits = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["Wp / 8 % 2"], m["Wp % 8"]]


@tcp.kernel
def lm_head(x: Hidden, w: WeightTile) -> Logits:
    trf = w.to_trf(lane=m["Wp % 8"], element=m["Wp / 8 % 2, H"])
    return (
        x.contract_outer(trf, out_time=m["H / 32, Wp / 8 % 2"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["Wp / 8 % 2"])
        .contract_lane(out_time=m["Wp / 8 % 2"], out_packet=m["Wp % 8"], mode=tcp.LaneMode.INTERLEAVED)
    )


def logits(hidden: npt.ArrayLike, weight: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """``logits[w] = sum_h hidden[h] * weight[w, h]``, one 8192-row tile of the weight per kernel call."""
    dev = tcp.Device()
    x = Hidden(dev.main, tcp.Tensor(hidden, "H"))
    w = tcp.Tensor(weight, "Wp H")
    result = np.zeros(Wp.n, dtype=np.float32)
    out = tcp.Tensor(result, "Wp")  # a view: assigning into out writes into result
    for i in range(Wp.n // 8192):
        part = lm_head(x, WeightTile(dev.sub, w.tile(m["Wp / 8192"], i))).to_tensor()
        out.assign(part)  # part fixes Wp / 8192 = i: it lands in tile i
    return result


if __name__ == "__main__":
    print(tcp.try_kernel(lm_head))
