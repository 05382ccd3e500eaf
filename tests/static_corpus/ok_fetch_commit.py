"""Valid: DM to DM through fetch, a widening fetch_cast, collect, commit_trim and commit."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 4096)
B = tcp.axis("B", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Ramp = tcp.DmTensor[tcp.i8, Chip, Cluster, m["A / 16"], m["A / 8 % 2, A % 8, B"]]
dev = tcp.Device()


@tcp.kernel
def kernel(x: Ramp) -> object:
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["A / 8 % 2"], out_packet=m["A % 8, B"])
        .fetch_cast(tcp.i32)
        .collect(out_time=m["A / 8 % 2, A % 8"], out_packet=m["B"])
        .commit_trim(out_packet=m["B"])
        .commit(element=m["A / 8 % 2, A % 8, B"])
    )
