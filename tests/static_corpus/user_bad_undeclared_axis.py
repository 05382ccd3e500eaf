"""Invalid: K is never declared in this module, so each text naming it fails (other corpus modules declare a K)."""

# runtime: mapping UnknownAxis
import tcpdsl as tcp
from tcpdsl import m
from user_shapes import A, Chip, Cluster, Slice

USED = A
Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, K / 16"], m["K % 16"]]  # E: tcpdsl-layout UnknownAxis # E: tcpdsl-layout UnknownAxis


@tcp.kernel
def kernel(x: Stream) -> object:
    return x.to_trf(lane=m["1"], element=m["K"])  # E: tcpdsl-layout UnknownAxis
