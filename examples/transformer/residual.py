"""The transformer's residual add as a whole kernel, fetch to commit (examples/transformer/README.md).

``x + r`` over the hidden axis ``H = 1024`` in f32, rounded once to bf16 when committed: ``r`` goes to
the vector register file on the sub context, and the main context's stream adds it on the Clip
cluster, read by axis name. Both inputs are replicated on every slice (``SliceP4``) and cluster.
"""

import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)
Dummy64 = tcp.axis("Dummy64", 64)

Chip = m["1"]
Cluster = m["1 # 2"]
SliceP4 = m["Dummy64, 1 # 4"]

Activation = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceP4, m["H"]]
dev = tcp.Device()


@tcp.kernel
def residual(x: Activation, r: Activation) -> Activation:
    stream = (
        dev.sub.begin(r.view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["H / 8"], out_packet=m["H % 8"])
        .to_vrf(element=m["H"])
    )
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["H / 8"], out_packet=m["H % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_clip(tcp.ClipBinaryOpF32.ADD, stream)
        .vector_final()
        .cast(tcp.bf16, out_packet=m["H % 8 # 16"])
        .commit_trim(out_packet=m["H % 8"])
        .commit(element=m["H"])
    )
