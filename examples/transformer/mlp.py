"""The transformer's MLP as a whole kernel, fetch to commit (examples/transformer/README.md, ``mlp::forward``).

``down @ (silu(gate @ x) * (up @ x))`` at the reference's sizes (``H = 1024``, ``L = 3072``). The activation,
replicated on every slice, is spread by a four-slice ring (``CustomBroadcast``) onto 128 slice pairs, each of
which owns 24 rows of ``up`` and ``gate``. The gate's SiLU runs on the vector engine of the sub context, the
product with ``up`` on the main context; a ``Broadcast1`` switch then gives every slice pair all of ``L`` for
its 8 rows of ``down``, committed in f32, and a second ``Broadcast1`` replicates ``H`` on every slice again
before the one bf16 rounding.
"""

import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)
L = tcp.axis("L", 3072)
Dummy4 = tcp.axis("Dummy4", 4)
Dummy64 = tcp.axis("Dummy64", 64)

Chip = m["1"]
Cluster = m["1 # 2"]
SliceP4 = m["Dummy64, 1 # 4"]
SliceRing = m["L / 48, 1 # 4"]  # SliceP4's bytes, read as 64 rings of four slices
SliceUG = m["L / 24, 1 # 2"]  # 128 slice pairs, 24 rows of up and gate each
SliceD = m["H / 8, 1 # 2"]  # 128 slice pairs, 8 rows of down each
MUL0 = tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)
MUL1 = tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL1)
IL = tcp.LaneMode.INTERLEAVED

Activation = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceP4, m["H"]]
UpWeight = tcp.HbmTensor[tcp.bf16, Chip, m["L, H"]]
DownWeight = tcp.HbmTensor[tcp.bf16, Chip, m["H, L"]]
dev = tcp.Device()


@tcp.kernel
def mlp(x: Activation, up: UpWeight, gate: UpWeight, down: DownWeight) -> Activation:
    ring = (
        dev.main.begin(x.reshape(chip=Chip, cluster=Cluster, slice=SliceRing, element=m["H"]).view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .switch(tcp.CustomBroadcast(ring_size=4), out_slice=m["L / 48, Dummy4"], out_time=m["H / 16"])
        .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
        .commit_trim(out_packet=m["H % 16"])
        .commit(element=m["H"])
    )
    xu = ring.reshape(chip=Chip, cluster=Cluster, slice=SliceUG, element=m["H"])
    up_rows = (
        dev.sub.begin(up.to_dm(cluster=Cluster, slice=SliceUG, element=m["L % 24, H"]).view())
        .fetch(out_time=m["L % 8, L / 8 % 3, H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["L % 8, L / 8 % 3, H / 16"], out_packet=m["H % 16"])
        .to_trf(lane=m["L % 8"], element=m["L / 8 % 3, H"])
    )
    u = (
        dev.main.begin(xu.view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
        .contract_outer(up_rows, out_time=m["H / 32, L / 8 % 3"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["L / 8 % 3"])
        .contract_lane(out_time=m["L / 8 % 3"], out_packet=m["L % 8"], mode=IL)
        .cast(tcp.bf16, out_packet=m["L % 8 # 16"])
        .commit_trim(out_packet=m["L % 8"])
        .commit(element=m["L % 24"])
    )
    gate_rows = (
        dev.sub.begin(gate.to_dm(cluster=Cluster, slice=SliceUG, element=m["L % 24, H"]).view())
        .fetch(out_time=m["L % 8, L / 8 % 3, H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["L % 8, L / 8 % 3, H / 16"], out_packet=m["H % 16"])
        .to_trf(lane=m["L % 8"], element=m["L / 8 % 3, H"])
    )
    g = (
        dev.main.begin(xu.view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
        .contract_outer(gate_rows, out_time=m["H / 32, L / 8 % 3"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["L / 8 % 3"])
        .contract_lane(out_time=m["L / 8 % 3"], out_packet=m["L % 8"], mode=IL)
        .cast(tcp.bf16, out_packet=m["L % 8 # 16"])
        .commit_trim(out_packet=m["L % 8"])
        .commit(element=m["L % 24"])
    )
    silu = (  # g * sigmoid(g) in f32, on the sub context as the reference runs it
        dev.sub.begin(g.view())
        .fetch(out_time=m["L / 8 % 3"], out_packet=m["L % 8"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["L / 8 % 3"], out_packet=m["L % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["L / 4 % 6"], out_packet=m["L % 4"])
        .vector_stash()
        .vector_fp_unary(tcp.FpUnaryOp.SIGMOID)
        .vector_fp_binary(MUL0, tcp.STASH)
        .vector_widen_concat(out_time=m["L / 8 % 3"], out_packet=m["L % 8"])
        .vector_final()
        .commit_trim(out_packet=m["L % 8"])
        .commit(element=m["L % 24"])
    )
    silu_vrf = (
        dev.sub.begin(silu.view())
        .fetch(out_time=m["L / 8 % 3"], out_packet=m["L % 8"])
        .collect(out_time=m["L / 8 % 3"], out_packet=m["L % 8"])
        .to_vrf(element=m["L % 24"])
    )
    hidden = (  # u * silu, one bf16 rounding
        dev.main.begin(u.view())
        .fetch(out_time=m["L / 8 % 3"], out_packet=m["L % 8"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["L / 8 % 3"], out_packet=m["L % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["L / 4 % 6"], out_packet=m["L % 4"])
        .vector_fp_binary(MUL1, silu_vrf)
        .vector_widen_concat(out_time=m["L / 8 % 3"], out_packet=m["L % 8"])
        .vector_final()
        .cast(tcp.bf16, out_packet=m["L % 8 # 16"])
        .commit_trim(out_packet=m["L % 8"])
        .commit(element=m["L % 24"])
    )
    hidden_all = (  # all of L on every slice pair
        dev.main.begin(hidden.view())
        .fetch(out_time=m["L / 8 % 3"], out_packet=m["L % 8 # 16"])
        .switch(tcp.Broadcast1(slice1=128, slice0=2), out_slice=SliceD, out_time=m["L / 8 % 3, L / 24"])
        .collect(out_time=m["L / 8 % 3, L / 24"], out_packet=m["L % 8 # 16"])
        .commit_trim(out_packet=m["L % 8"])
        .commit(element=m["L"])
    )
    down_rows = (
        dev.sub.begin(down.to_dm(cluster=Cluster, slice=SliceD, element=m["H % 8, L"]).view())
        .fetch(out_time=m["H % 8, L / 16"], out_packet=m["L % 16"])
        .collect(out_time=m["H % 8, L / 16"], out_packet=m["L % 16"])
        .to_trf(lane=m["H % 8"], element=m["L"])
    )
    y = (  # committed in f32: the bf16 rounding comes after the switch
        dev.main.begin(hidden_all.view())
        .fetch(out_time=m["L / 16"], out_packet=m["L % 16"])
        .collect(out_time=m["L / 16"], out_packet=m["L % 16"])
        .contract_outer(down_rows, out_time=m["L / 32"], out_packet=m["L % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["1"])
        .contract_lane(out_time=m["1"], out_packet=m["H % 8"], mode=IL)
        .commit_trim(out_packet=m["H % 8"])
        .commit(element=m["H % 8"])
    )
    return (
        dev.main.begin(y.view())
        .fetch(out_time=m["1"], out_packet=m["H % 8"])
        .switch(tcp.Broadcast1(slice1=128, slice0=2), out_slice=SliceP4, out_time=m["H / 8"])
        .collect(out_time=m["H / 8"], out_packet=m["H % 8"])
        .cast(tcp.bf16, out_packet=m["H % 8 # 16"])
        .commit_trim(out_packet=m["H % 8"])
        .commit(element=m["H"])
    )
