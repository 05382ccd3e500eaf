"""A transpose after a contraction: the reference projection's rows turned into packets of four.

Each of the 64 slice groups computes 32 rows of ``y = w @ x`` (``H = 1024``): the lane folder
leaves them as four time steps (``Q % 4``) of eight lanes (``Q / 4 % 8``). The cast narrows each
flit to bf16 and the transpose engine turns the 4 x 8 matrix over, so that each of eight time
steps holds four consecutive rows in one packet; ``commit`` writes the 32 rows in order.
Result: ``out[q] = sum_h w[q, h] * x[h]`` in bf16.
"""

import tcpdsl as tcp
from tcpdsl import m

H = tcp.axis("H", 1024)
Q = tcp.axis("Q", 2048)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["Q / 32, 1 # 4"]

Hidden = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["H"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["Q / 4 % 8"], m["Q % 4, H"]]
Rows = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["Q % 32"]]
dev = tcp.Device()


@tcp.kernel
def transpose_rows(x: Hidden, w: Weights) -> Rows:
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
        .contract_outer(w, out_time=m["H / 32, Q % 4"], out_packet=m["H % 32"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["Q % 4"])
        .contract_lane(out_time=m["Q % 4"], out_packet=m["Q / 4 % 8"])
        .cast(tcp.bf16, out_packet=m["Q / 4 % 8 # 16"])
        .transpose(out_time=m["Q / 4 % 8"], out_packet=m["Q % 4 # 16"])
        .commit_trim(out_packet=m["Q % 4"])
        .commit(element=m["Q % 32"])
    )


if __name__ == "__main__":
    print(tcp.try_kernel(transpose_rows))
