"""A switch between fetch and collect: the reference projection's gather of one query head's rows.

Each group of four slices (``Q / 32``, the rest of the group Top padding) holds 32 rows of ``Q``;
``Broadcast1(slice1=8, slice0=4)`` splits the 256 slices into sub-rings of 32 and carries every
group's packet round its sub-ring, so that each of the 32 slices of a head (``Q / 256``) receives
the 256 rows of that head, one 32-row packet per time step (``Q / 32 % 8``). ``collect`` regroups
them into flits of 16 bf16 and ``commit`` writes the head's rows back to DM in order.
Result: ``out[q] = x[q]`` on every slice of the head.
"""

import tcpdsl as tcp
from tcpdsl import m

Q = tcp.axis("Q", 2048)

Chip = m["1"]
Cluster = m["1 # 2"]

Rows = tcp.DmTensor[tcp.bf16, Chip, Cluster, m["Q / 32, 1 # 4"], m["Q % 32"]]
Heads = tcp.DmTensor[tcp.bf16, Chip, Cluster, m["Q / 256, 1 # 32"], m["Q % 256"]]
dev = tcp.Device()


@tcp.kernel
def switch_gather(x: Rows) -> Heads:
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["1"], out_packet=m["Q % 32"])
        .switch(tcp.Broadcast1(slice1=8, slice0=4), out_slice=m["Q / 256, 1 # 32"], out_time=m["Q / 32 % 8"])
        .collect(out_time=m["Q / 16 % 16"], out_packet=m["Q % 16"])
        .commit_trim(out_packet=m["Q % 16"])
        .commit(element=m["Q % 256"])
    )


if __name__ == "__main__":
    print(tcp.try_kernel(switch_gather))
