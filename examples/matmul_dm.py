"""A contraction wrapped fetch-to-commit: both operands start in DM and the result ends there.

Each of 64 slices holds one row ``A`` of the activations ``x[A, K]`` and all of the weights
``w[R, K]``. The activations are fetched into one packet of ``K`` and collected; the weights are
fetched on the sub context, collected and loaded into the TRF as ``[R][K]``. The chain multiplies
and reduces ``K`` into eight i32 accumulators per row, one flit, which ``commit_trim`` keeps whole
and ``commit`` writes to DM. Result: ``out[a, r] = sum_k x[a, k] * w[r, k]`` in i32.
"""

import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 8)
K = tcp.axis("K", 32)
R = tcp.axis("R", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["A # 64"]

Rows = tcp.DmTensor[tcp.i8, Chip, Cluster, Slice, m["K"]]
Weights = tcp.DmTensor[tcp.i8, Chip, Cluster, Slice, m["R, K"]]
Out = tcp.DmTensor[tcp.i32, Chip, Cluster, Slice, m["R"]]
dev = tcp.Device()


@tcp.kernel
def matmul_dm(x: Rows, w: Weights) -> Out:
    stream = (
        dev.main.begin(x.view())
        .fetch(out_time=m["1"], out_packet=m["K"])
        .collect(out_time=m["1"], out_packet=m["K"])
    )
    trf = (
        dev.sub.begin(w.view())
        .fetch(out_time=m["R"], out_packet=m["K"])
        .collect(out_time=m["R"], out_packet=m["K"])
        .to_trf(lane=m["R"], element=m["K"])
    )
    return (
        stream.contract_outer(trf, out_time=m["1"], out_packet=m["K"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["1"])
        .contract_lane(out_time=m["1"], out_packet=m["R"])
        .commit_trim(out_packet=m["R"])
        .commit(element=m["R"])
    )


if __name__ == "__main__":
    print(tcp.try_kernel(matmul_dm))
