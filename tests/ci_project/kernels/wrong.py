import numpy as np
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 4)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Stream = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["C, B / 16"], m["B % 16"]]
Out = tcp.ContractTensor[tcp.f32, m["1"], m["1 # 2"], m["1 # 256"], m["A"], m["C"]]


@tcp.kernel
def off_by_one(x: Stream) -> Stream:
    """Hands back its input plus one: every cell differs from the oracle (the input itself)."""
    shifted = x.to_tensor().to_numpy("A B").astype(np.float32) + 1
    return Stream(tcp.Device(tcp.Topology(chips=1)).main, tcp.Tensor(shifted, "A B"))
