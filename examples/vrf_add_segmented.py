"""Segmented VRF addition on one processing element: ``out[a, b] = lhs[a, b] + rhs[b]`` in i32.

``A = 128`` rows are spread over 64 slices, two per slice (``A % 2``). ``rhs`` (2 KiB) is loaded into
the vector register file through the sub context; then each of the two rows of a slice is a segment of
its own: a tile of the DM copy of ``lhs`` is fetched, its VRF addition runs on the vector engine, and
the result is committed into the matching tile of the output (``A % 2 = 1 #{!} 2``: the other row is
left as it is). The output starts as a second DMA copy of ``lhs``, which the two segments overwrite.
"""

import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 128)
B = tcp.axis("B", 512)

Chip = m["1"]
Cluster = m["1"]
Slice = m["A / 2 # 64"]

Lhs = tcp.HbmTensor[tcp.i32, Chip, m["A, B"]]
Rhs = tcp.HbmTensor[tcp.i32, Chip, m["B"]]
Out = tcp.DmTensor[tcp.i32, Chip, Cluster, Slice, m["A % 2, B"]]
dev = tcp.Device(tcp.Topology(chips=1, pes=1))


@tcp.kernel
def vrf_add_segmented(lhs: Lhs, rhs: Rhs) -> Out:
    lhs_dm = lhs.to_dm(cluster=Cluster, slice=Slice, element=m["A % 2, B"])
    rhs_dm = rhs.to_dm(cluster=Cluster, slice=Slice, element=m["B"])
    vrf = (
        dev.sub.begin(rhs_dm.view())
        .fetch(out_time=m["1"], out_packet=m["B"])
        .fetch_cast(tcp.i32)
        .collect(out_time=m["B / 8"], out_packet=m["B % 8"])
        .to_vrf(element=m["B"])
    )
    out = lhs.to_dm(cluster=Cluster, slice=Slice, element=m["A % 2, B"])
    for i in range(2):
        segment = lhs_dm.view().tile(i, index=m["A % 2"], len=1, element=m["A % 2 = 1 # 2, B"])
        window = out.view_mut().tile(i, index=m["A % 2"], len=1, element=m["A % 2 = 1 #{!} 2, B"])
        (
            dev.main.begin(segment)
            .fetch(out_time=m["A % 2 = 1"], out_packet=m["B"])
            .fetch_cast(tcp.i32)
            .collect(out_time=m["A % 2 = 1, B / 8"], out_packet=m["B % 8"])
            .vector_init()
            .vector_intra_slice_tag(tcp.TagMode.ZERO)
            .vector_fxp(tcp.FxpBinaryOp.ADD_FXP, vrf)
            .vector_final()
            .commit_trim(out_packet=m["B % 8"])
            .commit_view(window)  # writes the tile; out's other row stays
        )
    return out


if __name__ == "__main__":
    print(tcp.try_kernel(vrf_add_segmented))
