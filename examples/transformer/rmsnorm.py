"""The transformer's rmsnorm as a whole kernel, fetch to commit (examples/transformer/README.md).

``x * w / sqrt(sum(x^2) / H + 6.25e-8)`` over the hidden axis ``H = 1024``, in f32 on the vector engine,
rounded once to bf16 when committed. The activation is replicated on every slice (``SliceP4``) and on
both clusters, as the reference lays it out; the weight comes from HBM by DMA. Three passes: the mean square (stash, multiply, the
intra-slice reduce, a divide and the epsilon), its square root, then ``x * w / rms`` with the weight
and the root read from the vector register file, broadcast along ``H``.
"""

import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)
Dummy64 = tcp.axis("Dummy64", 64)

Chip = m["1"]
Cluster = m["1 # 2"]
SliceP4 = m["Dummy64, 1 # 4"]
EPS = 6.25e-8
MUL0 = tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)

Activation = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceP4, m["H"]]
Weight = tcp.HbmTensor[tcp.bf16, Chip, m["H"]]
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
