"""The transformer's projection entry as typed kernels, fetch to commit (examples/transformer/README.md,
``projection::proj_q``, ``proj_k``, ``proj_v`` and ``ops::projection``).

``proj_q``, ``proj_p`` and ``proj_o`` contract the normed activation with rows of the weight on groups of slices,
then a ``Broadcast1`` switch gathers one KV head onto each group of 32 slices (``proj_o``: the hidden
vector onto every slice). ``projection`` is the
entry: the input norm, the three projections, the per-head q/k norms, RoPE, and the token's key and
value scattered into the KV-cache chunk at the row whose byte offset the ``offset`` tensor holds, as the
reference writes them: the row is data, so a loop over tokens calls the kernel with one signature.
"""

from typing import Annotated

import numpy as np

import tcpdsl as tcp
from tcpdsl import m
from rmsnorm import HeadWeight, KHead, QHeads, rmsnorm, rmsnorm_k, rmsnorm_q
from rope import Table, rope_k, rope_q

H = tcp.axis("H", 1024)
Q = tcp.axis("Q", 2048)
P = tcp.axis("P", 1024)
N = tcp.axis("N", 8)
G = tcp.axis("G", 2)
D = tcp.axis("D", 128)
T = tcp.axis("T", 512)
Dummy64 = tcp.axis("Dummy64", 64)

Chip = m["1"]
Cluster = m["1 # 2"]
SliceP4 = m["Dummy64, 1 # 4"]
SliceN32 = m["N, 1 # 32"]
SliceQ = m["Q / 32, 1 # 4"]  # 64 slice groups of 32 query rows
SliceP = m["P / 32, 1 # 8"]  # 32 slice groups of 32 key or value rows
SliceO = m["H / 16, 1 # 4"]  # 64 slice groups of 16 output rows
IL = tcp.LaneMode.INTERLEAVED

Activation = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceP4, m["H"]]
Hidden = tcp.HbmTensor[tcp.bf16, Chip, m["H"]]
QWeight = tcp.HbmTensor[tcp.bf16, Chip, m["Q, H"]]
PWeight = tcp.HbmTensor[tcp.bf16, Chip, m["P, H"]]
Attended = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceP4, m["Q"]]
OWeight = tcp.HbmTensor[tcp.bf16, Chip, m["H, Q"]]
QOut = tcp.HbmTensor[tcp.bf16, Chip, m["N, G, D"]]
Cache = tcp.HbmTensor[tcp.bf16, Chip, m["T, N, D"]]
Offset = tcp.HbmTensor[tcp.i32, Chip, m["1"]]  # a byte offset into a cache chunk, read by dma_scatter
ROW_BYTES = N.size * D.size * 2  # one cache row [N, D] of bf16: the unit of the scatter's offsets
dev = tcp.Device()


@tcp.kernel
def proj_q(x: Activation, w: QWeight) -> QHeads:
    rows = (
        dev.sub.begin(w.to_dm(cluster=Cluster, slice=SliceQ, element=m["Q % 32, H"]).view())
        .fetch(out_time=m["Q % 32, H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["Q % 32, H / 16"], out_packet=m["H % 16"])
        .to_trf(lane=m["Q / 4 % 8"], element=m["Q % 4, H"])
    )
    part = (
        dev.main.begin(x.reshape(chip=Chip, cluster=Cluster, slice=SliceQ, element=m["H"]).view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
        .contract_outer(rows, out_time=m["H / 32, Q % 4"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["Q % 4"])
        .contract_lane(out_time=m["Q % 4"], out_packet=m["Q / 4 % 8"], mode=IL)
        .cast(tcp.bf16, out_packet=m["Q / 4 % 8 # 16"])
        .transpose(out_time=m["Q / 4 % 8"], out_packet=m["Q % 4 # 16"])
        .commit_trim(out_packet=m["Q % 4"])
        .commit(element=m["Q % 32"])
    )
    heads = (
        dev.main.begin(part.view())
        .fetch(out_time=m["1"], out_packet=m["Q % 32"])
        .switch(tcp.Broadcast1(slice1=8, slice0=4), out_slice=m["Q / 256, 1 # 32"], out_time=m["Q / 32 % 8"])
        .collect(out_time=m["Q / 16 % 16"], out_packet=m["Q % 16"])
        .commit_trim(out_packet=m["Q % 16"])
        .commit(element=m["Q % 256"])
    )
    return heads.reshape(chip=Chip, cluster=Cluster, slice=SliceN32, element=m["G, D"])  # Q / 256 is N


@tcp.kernel
def proj_p(x: Activation, w: PWeight) -> KHead:
    """The key or the value projection: one head of D = 128 rows on each group of 32 slices."""
    rows = (
        dev.sub.begin(w.to_dm(cluster=Cluster, slice=SliceP, element=m["P % 32, H"]).view())
        .fetch(out_time=m["P % 8, P / 8 % 4, H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["P % 8, P / 8 % 4, H / 16"], out_packet=m["H % 16"])
        .to_trf(lane=m["P % 8"], element=m["P / 8 % 4, H"])
    )
    part = (
        dev.main.begin(x.reshape(chip=Chip, cluster=Cluster, slice=SliceP, element=m["H"]).view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
        .contract_outer(rows, out_time=m["H / 32, P / 8 % 4"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["P / 8 % 4"])
        .contract_lane(out_time=m["P / 8 % 4"], out_packet=m["P % 8"], mode=IL)
        .cast(tcp.bf16, out_packet=m["P % 8 # 16"])
        .commit_trim(out_packet=m["P % 8"])
        .commit(element=m["P % 32"])
    )
    heads = (
        dev.main.begin(part.view())
        .fetch(out_time=m["1"], out_packet=m["P % 32"])
        .switch(tcp.Broadcast1(slice1=4, slice0=8), out_slice=m["P / 128, 1 # 32"], out_time=m["P / 32 % 4"])
        .collect(out_time=m["P / 16 % 8"], out_packet=m["P % 16"])
        .commit_trim(out_packet=m["P % 16"])
        .commit(element=m["P % 128"])
    )
    return heads.reshape(chip=Chip, cluster=Cluster, slice=SliceN32, element=m["D"])  # P / 128 is N


@tcp.kernel
def proj_o(x: Attended, w: OWeight) -> Activation:
    """The output projection: four of the eight lanes carry 16 rows per slice group; H then goes to every slice."""
    rows = (
        dev.sub.begin(w.to_dm(cluster=Cluster, slice=SliceO, element=m["H % 16, Q"]).view())
        .fetch(out_time=m["H % 16, Q / 16"], out_packet=m["Q % 16"])
        .collect(out_time=m["H % 16, Q / 16"], out_packet=m["Q % 16"])
        .to_trf(lane=m["H / 4 % 4"], element=m["H % 4, Q"])
    )
    part = (
        dev.main.begin(x.reshape(chip=Chip, cluster=Cluster, slice=SliceO, element=m["Q"]).view())
        .fetch(out_time=m["Q / 16"], out_packet=m["Q % 16"])
        .collect(out_time=m["Q / 16"], out_packet=m["Q % 16"])
        .contract_outer(rows, out_time=m["Q / 32, H % 4"], out_packet=m["Q % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["H % 4"])
        .contract_lane(out_time=m["H % 4"], out_packet=m["H / 4 % 4 # 8"], mode=IL)
        .cast(tcp.bf16, out_packet=m["H / 4 % 4 # 16"])
        .transpose(out_time=m["H / 4 % 4"], out_packet=m["H % 4 # 16"])
        .commit_trim(out_packet=m["H % 4"])
        .commit(element=m["H % 16"])
    )
    return (
        dev.main.begin(part.view())
        .fetch(out_time=m["1"], out_packet=m["H % 16"])
        .switch(tcp.Broadcast1(slice1=64, slice0=4), out_slice=SliceP4, out_time=m["H / 16"])
        .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
        .commit_trim(out_packet=m["H % 16"])
        .commit(element=m["H"])
    )


def kv_offset(row: int) -> Offset:
    """The scatter index that writes a token's key or value into row ``row`` of a cache chunk."""
    return Offset(tcp.Tensor(np.array(row * ROW_BYTES, dtype=np.int32), ""))


@tcp.kernel
def projection(
    x: Hidden, norm: Hidden, wq: QWeight, wk: PWeight, wv: PWeight, q_norm: HeadWeight, k_norm: HeadWeight,
    cos: Table, sin: Table, k_cache: Cache, v_cache: Cache, offset: Annotated[Offset, range(0, T.size * ROW_BYTES, ROW_BYTES)],
) -> QOut:
    """The query ``[N, G, D]`` in HBM; the key and value land in the caches' row at ``offset`` bytes."""
    normed = rmsnorm(x.to_dm(cluster=Cluster, slice=SliceP4, element=m["H"]), norm)
    q = rope_q(rmsnorm_q(proj_q(normed, wq), q_norm), cos, sin)
    rope_k(rmsnorm_k(proj_p(normed, wk), k_norm), cos, sin).dma_scatter(offset, k_cache, key=m["1"])
    proj_p(normed, wv).dma_scatter(offset, v_cache, key=m["1"])
    return q.to_hbm(element=m["N, G, D"])
