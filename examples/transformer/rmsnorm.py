"""The transformer's rmsnorm as a whole kernel, fetch to commit (examples/transformer/README.md).

``x * w / sqrt(sum(x^2) / H + 6.25e-8)`` over the hidden axis ``H = 1024``, in f32 on the vector engine,
rounded once to bf16 when committed. The activation is replicated on every slice (``SliceP4``) and on
both clusters, as the reference lays it out; the weight comes from HBM by DMA. Three passes: the mean square (stash, multiply, the
intra-slice reduce, a divide and the epsilon), its square root, then ``x * w / rms`` with the weight
and the root read from the vector register file, broadcast along ``H``.

``rmsnorm_q`` and ``rmsnorm_k`` are the per-head norms of the projection (``forward_q``, ``forward_k``) over
``D = 128`` on one KV head per 32 slices: ``k``'s one head as ``rmsnorm`` does it, ``q``'s two heads with
each head's mean square in its own time step (the reference transposes them into one packet, but a
transpose cannot follow ``vector_final`` in tcpdsl yet, so the root keeps the time steps: same values).
"""

import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)
Dummy64 = tcp.axis("Dummy64", 64)
N = tcp.axis("N", 8)
G = tcp.axis("G", 2)
D = tcp.axis("D", 128)

Chip = m["1"]
Cluster = m["1 # 2"]
SliceP4 = m["Dummy64, 1 # 4"]
SliceN32 = m["N, 1 # 32"]
EPS = 6.25e-8
MUL0 = tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)

Activation = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceP4, m["H"]]
Weight = tcp.HbmTensor[tcp.bf16, Chip, m["H"]]
QHeads = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceN32, m["G, D"]]
KHead = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceN32, m["D"]]
HeadWeight = tcp.HbmTensor[tcp.bf16, Chip, m["D"]]
dev = tcp.Device()


@tcp.kernel
def rmsnorm(x: Activation, w: Weight) -> Activation:
    mean_square = (
        dev.main.begin(x.view())
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
        dev.sub.begin(w.to_dm(cluster=Cluster, slice=SliceP4, element=m["H"]).view())
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
        dev.main.begin(x.view())
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
def rmsnorm_q(q: QHeads, w: HeadWeight) -> QHeads:
    mean_square = (
        dev.main.begin(q.view())
        .fetch(out_time=m["G, D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["G, D / 4"], out_packet=m["D % 4"])
        .vector_stash()
        .vector_fp_binary(MUL0, tcp.STASH)
        .vector_intra_slice_reduce(tcp.IntraSliceReduceOpF32.ADD, reduce=D, out_time=m["G"], out_packet=m["1 # 4"])
        .vector_fp_div(128.0)
        .vector_widen_pad(out_packet=m["1 # 8"])
        .vector_clip(tcp.ClipBinaryOpF32.ADD, EPS)
        .vector_final()
        .commit_trim(out_packet=m["1 # 8"])
        .commit(element=m["G, 1 # 8"])
    )
    rms = (
        dev.main.begin(mean_square.view())
        .fetch(out_time=m["G"], out_packet=m["1 # 8"])
        .collect(out_time=m["G"], out_packet=m["1 # 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_trim(out_packet=m["1 # 4"])
        .vector_fp_unary(tcp.FpUnaryOp.SQRT)
        .vector_widen_pad(out_packet=m["1 # 8"])
        .vector_final()
        .commit_trim(out_packet=m["1 # 8"])
        .commit(element=m["G, 1 # 8"])
    )
    weight = (
        dev.sub.begin(w.to_dm(cluster=Cluster, slice=SliceN32, element=m["D"]).view())
        .fetch(out_time=m["D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["D / 8"], out_packet=m["D % 8"])
        .to_vrf(element=m["D"])
    )
    root = (
        dev.sub.begin(rms.view())
        .fetch(out_time=m["G"], out_packet=m["1 # 8"])
        .collect(out_time=m["G"], out_packet=m["1 # 8"])
        .to_vrf(element=m["G, 1 # 8"])
    )
    return (
        dev.main.begin(q.view())
        .fetch(out_time=m["G, D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["G, D / 4"], out_packet=m["D % 4"])
        .vector_fp_binary(MUL0, weight)
        .vector_fp_div(root)
        .vector_widen_concat(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .vector_final()
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["G, D"])
    )


@tcp.kernel
def rmsnorm_k(k: KHead, w: HeadWeight) -> KHead:
    mean_square = (
        dev.main.begin(k.view())
        .fetch(out_time=m["D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["D / 4"], out_packet=m["D % 4"])
        .vector_stash()
        .vector_fp_binary(MUL0, tcp.STASH)
        .vector_intra_slice_reduce(tcp.IntraSliceReduceOpF32.ADD, reduce=D, out_time=m["1"], out_packet=m["1 # 4"])
        .vector_fp_div(128.0)
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
        dev.sub.begin(w.to_dm(cluster=Cluster, slice=SliceN32, element=m["D"]).view())
        .fetch(out_time=m["D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["D / 8"], out_packet=m["D % 8"])
        .to_vrf(element=m["D"])
    )
    root = (
        dev.sub.begin(rms.view())
        .fetch(out_time=m["1"], out_packet=m["1 # 8"])
        .collect(out_time=m["1"], out_packet=m["1 # 8"])
        .to_vrf(element=m["1 # 8"])
    )
    return (
        dev.main.begin(k.view())
        .fetch(out_time=m["D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["D / 4"], out_packet=m["D % 4"])
        .vector_fp_binary(MUL0, weight)
        .vector_fp_div(root)
        .vector_widen_concat(out_time=m["D / 8"], out_packet=m["D % 8"])
        .vector_final()
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["D"])
    )
