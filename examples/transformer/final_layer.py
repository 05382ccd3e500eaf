"""The transformer's final layer as typed kernels, HBM to HBM (examples/transformer/README.md,
``lm_head::forward`` and ``ops::final_layer``).

``final_layer`` is the entry: the last residual stream ``[H]`` through the final rmsnorm, then the lm_head
over the vocabulary padded to 19 tiles of 8192 rows (``Wp = 155648``), to logits ``[Wp]`` in HBM (the
padding rows' logits are whatever their zero weights give: zero). Only the first ``W = 151936`` are
meaningful.

The lm_head lays the vocabulary over both clusters (``Wp / 4096 % 2``) and every slice (``Wp / 16 % 256``):
each slice owns 16 rows of every tile. For each tile a DMA moves the tile view of the HBM weight into DM, the
sub context loads it into the TRF as 8 lanes of 2 rows, and the hidden vector, the same on every slice,
streams through the contraction; the bf16 results land in the tile's window of the logits. A ``Broadcast1``
switch then gathers 128 logits onto each group of 8 slices before the move to HBM.

tcpdsl has no uninitialised DM tensor yet (``DmTensor::new()`` in the port plan), so the two DM tensors that
a DMA or ``commit_view`` fills tile by tile start as zeros placed from the host.
"""

from typing import Annotated, Final

import numpy as np

import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)
Wp = tcp.axis("Wp", 155648)

TILE: Final = 8192  # vocabulary rows per lm_head tile
TILES = Wp.n // TILE
Chip = m["1"]
Cluster = m["Wp / 4096 % 2"]
Slice = m["Wp / 16 % 256"]
IL = tcp.LaneMode.INTERLEAVED
EPS = 6.25e-8  # the final rmsnorm's epsilon, as rmsnorm.py's
MUL0 = tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)

Vector = tcp.HbmTensor[tcp.bf16, Chip, m["H"]]
Hidden = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["H"]]
LmWeight = tcp.HbmTensor[tcp.bf16, Chip, m["Wp, H"]]
WeightTile = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["Wp % 16, H"]]
Logits = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["Wp / 8192, Wp % 16"]]
Gathered = tcp.DmTensor[tcp.bf16, Chip, Cluster, m["Wp / 128 % 32, 1 # 8"], m["Wp / 8192, Wp % 128"]]
LogitsHbm = tcp.HbmTensor[tcp.bf16, Chip, m["Wp"]]
dev = tcp.Device()


@tcp.kernel
def lm_head_tile(x: Hidden, weight: LmWeight, logits: Logits, i: Annotated[int, range(TILES)]) -> Logits:
    """Tile ``i``: its 8192 rows of the HBM weight moved to DM and into the TRF, contracted with ``x``, and the
    bf16 results written into the tile's window of ``logits``, which is returned."""
    rows = weight.view().tile(i * TILE, index=m["Wp"], len=TILE, element=m["Wp % 8192 # 155648, H"])
    w_dm = rows.to_dm_view(WeightTile(tcp.Tensor(np.zeros((TILE, H.n), np.float32), m["Wp % 8192, H"])).view_mut())
    w_trf = (
        dev.sub.begin(w_dm.view())
        .fetch(out_time=m["Wp % 8, Wp / 8 % 2, H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["Wp % 8, Wp / 8 % 2, H / 16"], out_packet=m["H % 16"])
        .to_trf(lane=m["Wp % 8"], element=m["Wp / 8 % 2, H"])
    )
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
        .contract_outer(w_trf, out_time=m["H / 32, Wp / 8 % 2"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["Wp / 8 % 2"])
        .contract_lane(out_time=m["Wp / 8 % 2"], out_packet=m["Wp % 8"], mode=IL)
        .cast(tcp.bf16, out_packet=m["Wp % 8 # 16"])
        .commit_trim(out_packet=m["Wp % 8"])
        .commit_view(logits.view_mut().tile(i, index=m["Wp / 8192"], len=1, element=m["1 #{!} 19, Wp % 16"]))
    )


@tcp.kernel
def gather(logits: Logits) -> Gathered:
    """Each group of 8 slices collects its 128 logits of every tile, 16 from each slice."""
    return (
        dev.main.begin(logits.view())
        .fetch(out_time=m["Wp / 8192"], out_packet=m["Wp % 16"])
        .switch(tcp.Broadcast1(slice1=8, slice0=1), out_slice=m["Wp / 128 % 32, 1 # 8"],
                out_time=m["Wp / 8192, Wp / 16 % 8"])
        .collect(out_time=m["Wp / 8192, Wp / 16 % 8"], out_packet=m["Wp % 16"])
        .commit_trim(out_packet=m["Wp % 16"])
        .commit(element=m["Wp / 8192, Wp % 128"])
    )


def empty_logits() -> Logits:
    """The DM logits that the tiles fill, zeros placed from the host in place of an uninitialised tensor."""
    return Logits(tcp.Tensor(np.zeros(Wp.n, np.float32), "Wp"))


def lm_head(x: Hidden, weight: LmWeight) -> Gathered:
    """The logits of all 19 tiles, gathered: a loop over kernels rather than a kernel, so that ``tcpdsl run``
    drives the 19 tiles once, through the ``final_layer`` entry."""
    logits = empty_logits()
    for i in range(TILES):
        logits = lm_head_tile(x, weight, logits, i)
    return gather(logits)


@tcp.kernel
def final_norm(x: Vector, w: Vector) -> Hidden:
    """The final rmsnorm of ``x``, on the lm_head's layout: the vector moved from HBM onto it (every slice of
    both clusters holds it, a broadcast over the vocabulary digits it lacks), then ``rmsnorm``'s three passes
    there, as the reference runs its rmsnorm on the layout it is given. One DMA in and the norm's own moves,
    no move onto the lm_head's layout after it."""
    h = x.to_dm(cluster=Cluster, slice=Slice, element=m["H"])
    mean_square = (
        dev.main.begin(h.view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["H / 8"], out_packet=m["H % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["H / 4"], out_packet=m["H % 4"])
        .vector_stash()
        .vector_fp_binary(MUL0, tcp.STASH)
        .vector_intra_slice_reduce(tcp.IntraSliceReduceOpF32.ADD, reduce=H, out_time=m["1"], out_packet=m["1 # 4"])
        .vector_fp_div(1024.0)
        .vector_widen_pad(out_packet=m["1 # 8"])
        .vector_clip(tcp.ClipBinaryOpF32.ADD, EPS)
        .vector_final()
        .commit_trim(out_packet=m["1 # 8"])
        .commit(element=m["1 # 8"])
    )
    rms = (
        dev.main.begin(mean_square.view())
        .fetch(out_time=m["1"], out_packet=m["1 # 8"])
        .collect(out_time=m["1"], out_packet=m["1 # 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_trim(out_packet=m["1 # 4"])
        .vector_fp_unary(tcp.FpUnaryOp.SQRT)
        .vector_widen_pad(out_packet=m["1 # 8"])
        .vector_final()
        .commit_trim(out_packet=m["1 # 8"])
        .commit(element=m["1 # 8"])
    )
    weight = (
        dev.sub.begin(w.to_dm(cluster=Cluster, slice=Slice, element=m["H"]).view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["H / 8"], out_packet=m["H % 8"])
        .to_vrf(element=m["H"])
    )
    root = (
        dev.sub.begin(rms.view())
        .fetch(out_time=m["1"], out_packet=m["1 # 8"])
        .collect(out_time=m["1"], out_packet=m["1 # 8"])
        .to_vrf(element=m["1 # 8"])
    )
    return (
        dev.main.begin(h.view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["H / 8"], out_packet=m["H % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["H / 4"], out_packet=m["H % 4"])
        .vector_fp_binary(MUL0, weight)
        .vector_fp_div(root)
        .vector_widen_concat(out_time=m["H / 8"], out_packet=m["H % 8"])
        .vector_final()
        .cast(tcp.bf16, out_packet=m["H % 8 # 16"])
        .commit_trim(out_packet=m["H % 8"])
        .commit(element=m["H"])
    )


@tcp.kernel
def final_layer(x: Vector, norm: Vector, weight: LmWeight) -> LogitsHbm:
    """The logits ``[Wp]`` in HBM of the last residual stream ``x [H]``."""
    return lm_head(final_norm(x, norm), weight).to_hbm(element=m["Wp"])
