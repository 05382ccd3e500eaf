"""A whole kernel from DM to DM: fetch an i8 tensor, widen it to i32 in the fetch adapter, commit it back.

Each of the 256 slices holds 16 rows ``A`` of ``B = 8`` bytes. The fetch reads them as two time
steps of 64 bytes (``A / 8 % 2`` in Time, ``[A % 8, B]`` in the packet); ``fetch_cast`` widens each
element to i32 (so one 32-byte read becomes one flit), ``collect`` regroups the stream into flits
of eight i32, and ``commit_trim`` / ``commit`` write every flit back to DM in the original order.
Result: ``out[a, b] = x[a, b]`` as i32.
"""

import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 4096)
B = tcp.axis("B", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["A / 16"]

Bytes = tcp.DmTensor[tcp.i8, Chip, Cluster, Slice, m["A / 8 % 2, A % 8, B"]]
Words = tcp.DmTensor[tcp.i32, Chip, Cluster, Slice, m["A % 16, B"]]
dev = tcp.Device()


@tcp.kernel
def fetch_commit_simple(x: Bytes) -> Words:
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["A / 8 % 2"], out_packet=m["A % 8, B"])
        .fetch_cast(tcp.i32)
        .collect(out_time=m["A / 8 % 2, A % 8"], out_packet=m["B"])
        .commit_trim(out_packet=m["B"])
        .commit(element=m["A / 8 % 2, A % 8, B"])
    )


if __name__ == "__main__":
    print(tcp.try_kernel(fetch_commit_simple))
