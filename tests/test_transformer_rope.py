"""The transformer's per-head norms, RoPE and the whole projection entry (norm, q/k/v, q/k norms, RoPE and the
KV-cache row write) as typed kernels at the reference's sizes, on both evaluators against the example's numpy
model in float64 (examples/transformer/rmsnorm.py, rope.py, projection.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tcpdsl as tcp
from test_transformer_vector import FOLDER, MODEL, _load

H = tcp.axis("H", 1024)  # the examples' axes, declared where this module names them
Q = tcp.axis("Q", 2048)
P = tcp.axis("P", 1024)
N = tcp.axis("N", 8)
G = tcp.axis("G", 2)
D = tcp.axis("D", 128)
T = tcp.axis("T", 512)

sys.path.insert(0, str(FOLDER))  # projection.py imports its sibling kernels by plain name
RMSNORM = _load("rmsnorm")
ROPE = _load("rope")
PROJECTION = _load("projection")
BF16_ONCE = MODEL.Tolerance(1e-6, 2.0**-8 + 1e-5)
POSITION = 700  # chunk 1, row 188: a token past the first KV chunk


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def _f32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32)


def test_head_norms(evaluator: str) -> None:
    rng = np.random.default_rng(3)
    q, k = MODEL.uniform_bf16(rng, (8, 2, 128), 1.0), MODEL.uniform_bf16(rng, (8, 128), 1.0)
    w = RMSNORM.HeadWeight(tcp.Tensor(_f32(MODEL.uniform_bf16(rng, (128,), 1.0)), "D"))
    weight = w.to_tensor().to_numpy("D").astype(np.float64)
    got_q = RMSNORM.rmsnorm_q(RMSNORM.QHeads(tcp.Tensor(_f32(q), "N G D")), w).to_tensor().to_numpy("N G D")
    got_k = RMSNORM.rmsnorm_k(RMSNORM.KHead(tcp.Tensor(_f32(k), "N D")), w).to_tensor().to_numpy("N D")
    for got, x in ((got_q, q), (got_k, k)):
        expected = MODEL.rmsnorm(x, weight)
        assert BF16_ONCE.holds(got.astype(np.float64), expected), BF16_ONCE.excess(got, expected)


def test_rope(evaluator: str) -> None:
    rng = np.random.default_rng(4)
    q, k = MODEL.uniform_bf16(rng, (8, 2, 128), 1.0), MODEL.uniform_bf16(rng, (8, 128), 1.0)
    cos, sin = MODEL.rope_tables(POSITION, MODEL.REFERENCE)
    c, s = ROPE.Table(tcp.Tensor(cos, "D")), ROPE.Table(tcp.Tensor(sin, "D"))
    got_q = ROPE.rope_q(ROPE.QHeads(tcp.Tensor(_f32(q), "N G D")), c, s).to_tensor().to_numpy("N G D")
    got_k = ROPE.rope_k(ROPE.KHead(tcp.Tensor(_f32(k), "N D")), c, s).to_tensor().to_numpy("N D")
    for got, x in ((got_q, q), (got_k, k)):
        expected = MODEL.rope(x, cos, sin)
        assert BF16_ONCE.holds(got.astype(np.float64), expected), BF16_ONCE.excess(got, expected)
    # The half swap is real: without it the rotation would be x * (cos + sin).
    assert np.abs(got_k - k * (cos + sin)).max() > 0.1


def run_projection(x: np.ndarray, layer: Any, position: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entry on the model's weights: q [N, G, D] and the two cache chunks [T, N, D] after the write."""
    pr = PROJECTION
    cos, sin = MODEL.rope_tables(position, MODEL.REFERENCE)
    k_cache = pr.Cache(tcp.Tensor(np.zeros((512, 8, 128), np.float32), "T N D"))
    v_cache = pr.Cache(tcp.Tensor(np.zeros((512, 8, 128), np.float32), "T N D"))
    q = pr.projection(
        pr.Hidden(tcp.Tensor(_f32(x), "H")), pr.Hidden(tcp.Tensor(_f32(layer.input_norm), "H")),
        pr.QWeight(tcp.Tensor(_f32(layer.q), "Q H")), pr.PWeight(tcp.Tensor(_f32(layer.k), "P H")),
        pr.PWeight(tcp.Tensor(_f32(layer.v), "P H")), pr.HeadWeight(tcp.Tensor(_f32(layer.q_norm), "D")),
        pr.HeadWeight(tcp.Tensor(_f32(layer.k_norm), "D")), pr.Table(tcp.Tensor(cos, "D")),
        pr.Table(tcp.Tensor(sin, "D")), k_cache, v_cache, pr.kv_offset(position % 512),
    )  # fmt: skip
    return (q.to_tensor().to_numpy("N G D"), k_cache.to_tensor().to_numpy("T N D"),
            v_cache.to_tensor().to_numpy("T N D"))


def test_projection_entry_matches_the_model(evaluator: str) -> None:
    sizes = MODEL.REFERENCE
    layer = MODEL.random_layer(sizes, 1)
    x = MODEL.uniform_bf16(np.random.default_rng(2), (1024,), 1.0)
    cache = MODEL.KvCache.empty(sizes, 2)
    expected_q = MODEL.projection(x, layer, POSITION, cache, sizes)
    q, k_cache, v_cache = run_projection(x, layer, POSITION)
    chunk, row = divmod(POSITION, 512)
    tolerance = MODEL.PROJECTION
    for got, expected in ((q, expected_q), (k_cache[row], cache.k[chunk, row]), (v_cache[row], cache.v[chunk, row])):
        assert tolerance.holds(got.astype(np.float64), expected), tolerance.excess(got, expected)
    # The scatter touches the token's row only.
    others = np.delete(np.arange(512), row)
    assert not k_cache[others].any() and not v_cache[others].any() and k_cache[row].any()
