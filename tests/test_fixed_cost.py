"""The fixed cost of a small kernel through the public path, counted in Python calls (a count does
not depend on how loaded the machine is, as a time would). benchmarks/bench_public.py times it."""

from __future__ import annotations

import sys
from types import FrameType

import numpy as np

import tcpdsl as tcp
from tcpdsl import m

A, B, C = tcp.axis("A", 32), tcp.axis("B", 32), tcp.axis("C", 8)
Chip, Cluster, Slice = m["1"], m["1 # 2"], m["1 # 256"]
Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]
lane, element, rows, whole, lanes, one = m["C"], m["B"], m["A"], m["B"], m["C"], m["1"]


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=lane, element=element)
    return (
        x.contract_outer(trf, out_time=rows, out_packet=whole)
        .contract_packet(out_packet=one)
        .contract_time(out_time=rows)
        .contract_lane(out_time=rows, out_packet=lanes, mode=tcp.LaneMode.INTERLEAVED)
    )


def test_the_readme_matmul_makes_few_python_calls() -> None:
    # The README matmul as a user runs it: wrap, lay out, run, read. It made about 760 Python calls
    # per run when it took 7x numpy; the stage methods' work is remembered per type, so a warm
    # call only wraps data, chains stages and runs one einsum.
    dev = tcp.Device()
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((32, 32)).astype(np.float32), rng.standard_normal((8, 32)).astype(np.float32)
    sizes = {"A": 32, "B": 32, "C": 8}

    def public() -> np.ndarray:
        y = matmul(Stream(dev.main, tcp.Tensor(x, "A B", sizes=sizes)), Weights(dev.sub, tcp.Tensor(w, "C B", sizes=sizes)))
        return y.to_tensor().to_numpy("A C")

    want = public()
    calls = 0

    def count(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        got = public()
    finally:
        sys.setprofile(None)
    np.testing.assert_array_equal(got, want)
    assert calls <= 400, calls  # 296 when written
