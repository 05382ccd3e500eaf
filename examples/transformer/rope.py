"""The transformer's rotary embedding as whole kernels, fetch to commit (examples/transformer/README.md,
``rope::apply_rope``).

``x * cos + swap_halves(x) * sin`` per head of ``D = 128``, on one KV head per 32 slices; ``cos`` and
``sin`` are the token's bf16 table rows (``sin``'s first half negated by the host, so the swap needs no
negation). The halves are swapped by two read tiles streamed into two write tiles of a copy of ``x``;
both products are committed in f32 and their sum rounded once to bf16.
"""

import tcpdsl as tcp
from tcpdsl import m

N = tcp.axis("N", 8)
G = tcp.axis("G", 2)
D = tcp.axis("D", 128)

Chip = m["1"]
Cluster = m["1 # 2"]
SliceN32 = m["N, 1 # 32"]
MUL0 = tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)
MUL1 = tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL1)

QHeads = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceN32, m["G, D"]]
KHead = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceN32, m["D"]]
Table = tcp.HbmTensor[tcp.bf16, Chip, m["D"]]
RowVrf = tcp.VrfTensor[tcp.f32, Chip, Cluster, SliceN32, m["D"]]
dev = tcp.Device()


def _row(table: Table) -> RowVrf:
    """A table row in the vector register file of every slice, f32."""
    return (
        dev.sub.begin(table.to_dm(cluster=Cluster, slice=SliceN32, element=m["D"]).view())
        .fetch(out_time=m["D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["D / 8"], out_packet=m["D % 8"])
        .to_vrf(element=m["D"])
    )


@tcp.kernel
def rope_q(q: QHeads, cos: Table, sin: Table) -> QHeads:
    cos_vrf, sin_vrf = _row(cos), _row(sin)
    swapped = (  # a copy of q whose two halves the tile writes below replace
        dev.main.begin(q.view())
        .fetch(out_time=m["G, D / 16"], out_packet=m["D % 16"])
        .collect(out_time=m["G, D / 16"], out_packet=m["D % 16"])
        .commit_trim(out_packet=m["D % 16"])
        .commit(element=m["G, D"])
    )
    for start, dest in ((0, 64), (64, 0)):
        (
            dev.main.begin(q.view().tile(start, index=m["D"], len=64, element=m["G, D = 64 # 128"]))
            .fetch(out_time=m["G"], out_packet=m["D = 64"])
            .collect(out_time=m["G, D = 64 / 16"], out_packet=m["D = 64 % 16"])
            .commit_trim(out_packet=m["D = 64 % 16"])
            .commit_view(swapped.view_mut().tile(dest, index=m["D"], len=64, element=m["G, D = 64 #{!} 128"]))
        )
    with_cos = (
        dev.main.begin(q.view())
        .fetch(out_time=m["G, D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["G, D / 4"], out_packet=m["D % 4"])
        .vector_fp_binary(MUL0, cos_vrf)
        .vector_widen_concat(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .vector_final()
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["G, D"])
    )
    with_sin = (
        dev.main.begin(swapped.view())
        .fetch(out_time=m["G, D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["G, D / 4"], out_packet=m["D % 4"])
        .vector_fp_binary(MUL1, sin_vrf)
        .vector_widen_concat(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .vector_final()
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["G, D"])
    )
    sin_part = (
        dev.sub.begin(with_sin.view())
        .fetch(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .collect(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .to_vrf(element=m["G, D"])
    )
    return (
        dev.main.begin(with_cos.view())
        .fetch(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .collect(out_time=m["G, D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_clip(tcp.ClipBinaryOpF32.ADD, sin_part)
        .vector_final()
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["G, D"])
    )


@tcp.kernel
def rope_k(k: KHead, cos: Table, sin: Table) -> KHead:
    cos_vrf, sin_vrf = _row(cos), _row(sin)
    swapped = (
        dev.main.begin(k.view())
        .fetch(out_time=m["D / 16"], out_packet=m["D % 16"])
        .collect(out_time=m["D / 16"], out_packet=m["D % 16"])
        .commit_trim(out_packet=m["D % 16"])
        .commit(element=m["D"])
    )
    for start, dest in ((0, 64), (64, 0)):
        (
            dev.main.begin(k.view().tile(start, index=m["D"], len=64, element=m["D = 64 # 128"]))
            .fetch(out_time=m["1"], out_packet=m["D = 64"])
            .collect(out_time=m["D = 64 / 16"], out_packet=m["D = 64 % 16"])
            .commit_trim(out_packet=m["D = 64 % 16"])
            .commit_view(swapped.view_mut().tile(dest, index=m["D"], len=64, element=m["D = 64 #{!} 128"]))
        )
    with_cos = (
        dev.main.begin(k.view())
        .fetch(out_time=m["D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["D / 4"], out_packet=m["D % 4"])
        .vector_fp_binary(MUL0, cos_vrf)
        .vector_widen_concat(out_time=m["D / 8"], out_packet=m["D % 8"])
        .vector_final()
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["D"])
    )
    with_sin = (
        dev.main.begin(swapped.view())
        .fetch(out_time=m["D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["D / 4"], out_packet=m["D % 4"])
        .vector_fp_binary(MUL1, sin_vrf)
        .vector_widen_concat(out_time=m["D / 8"], out_packet=m["D % 8"])
        .vector_final()
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["D"])
    )
    sin_part = (
        dev.sub.begin(with_sin.view())
        .fetch(out_time=m["D / 8"], out_packet=m["D % 8"])
        .collect(out_time=m["D / 8"], out_packet=m["D % 8"])
        .to_vrf(element=m["D"])
    )
    return (
        dev.main.begin(with_cos.view())
        .fetch(out_time=m["D / 8"], out_packet=m["D % 8"])
        .collect(out_time=m["D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_clip(tcp.ClipBinaryOpF32.ADD, sin_part)
        .vector_final()
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["D"])
    )
