"""The transformer's MLP as a whole kernel from DM fetch to DM commit, at the reference's sizes (H = 1024,
L = 3072, the four-slice ring and both Broadcast1 switches), on both evaluators against the example's numpy
model in float64 within the reference's projection tolerance (examples/transformer/mlp.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tcpdsl as tcp
from test_transformer_vector import _load, _values

H = tcp.axis("H", 1024)  # the example's axes, declared where this module names them
L = tcp.axis("L", 3072)
Dummy64 = tcp.axis("Dummy64", 64)

MODEL = _load("model")
MLP = _load("mlp")


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = MODEL.uniform_bf16(rng, (1024,), 1.0)
    up, gate = MODEL.uniform_bf16(rng, (3072, 1024), 0.05), MODEL.uniform_bf16(rng, (3072, 1024), 0.05)
    return x, up, gate, MODEL.uniform_bf16(rng, (1024, 3072), 0.05)


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
def test_mlp_kernel_matches_the_model(evaluator: str) -> None:
    x, up, gate, down = _inputs(5)
    with tcp.evaluator(evaluator):
        out = MLP.mlp(MLP.Activation(tcp.Tensor(x.astype(np.float32), "H")),
                      MLP.UpWeight(tcp.Tensor(up.astype(np.float32), "L H")),
                      MLP.UpWeight(tcp.Tensor(gate.astype(np.float32), "L H")),
                      MLP.DownWeight(tcp.Tensor(down.astype(np.float32), "H L")))
        got = _values(out)
    assert repr(out) == '<DmTensor[bf16, m["1"], m["1 # 2"], m["Dummy64, 1 # 4"], m["H"]]>'
    expected = MODEL.mlp(x, up, gate, down)
    assert MODEL.PROJECTION.holds(got, expected), MODEL.PROJECTION.excess(got, expected)
    # Tighter than the reference asks: the kernel rounds where the bf16 model does, so the two agree to
    # within a few bf16 steps of the output's scale.
    kernel = MODEL.mlp(x.astype(np.float32), up.astype(np.float32), gate.astype(np.float32),
                       down.astype(np.float32), MODEL.KERNEL)
    assert np.abs(got - kernel).max() <= 2.0**-7 * np.abs(kernel).max()
