"""The reference transformer's attention run whole, fetch to commit, at the reference's sizes (N = 8, G = 2,
D = 128, T = 512 per chunk) on both evaluators: the online softmax over two chunks against the float64
model within the reference's tolerances, the running max persisted across three chunks, and the norm
(examples/transformer/README.md, ``attention::forward_first``, ``forward``, ``norm``)."""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tcpdsl as tcp

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "transformer"
N = tcp.axis("N", 8)  # the example's axes, declared where this module names them
G = tcp.axis("G", 2)
D = tcp.axis("D", 128)
T = tcp.axis("T", 512)
Dummy64 = tcp.axis("Dummy64", 64)


def _load(name: str) -> types.ModuleType:
    found = sys.modules.get(f"examples_transformer_{name}")
    if found is not None:
        return found
    spec = importlib.util.spec_from_file_location(f"examples_transformer_{name}", FOLDER / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


MODEL = _load("model")
ATT = _load("attention")
MAX_CLOSE = 0.1  # the reference's bound on the running max after two chunks
PERSISTED_CLOSE = 0.05  # and on the max persisted through a third chunk


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def _cache(values: np.ndarray[Any, Any]) -> Any:
    return ATT.Cache(tcp.Tensor(values, "T N D"))


def _state(state: tuple[Any, Any, Any]) -> tuple[np.ndarray[Any, Any], ...]:
    top, total, out = (x.to_tensor() for x in state)
    return top.to_numpy("N G"), total.to_numpy("N G"), out.to_numpy("N G D")


def test_two_chunks_match_the_scalar_reference(evaluator: str) -> None:
    """The reference's seeded case: bf16 values in [-0.2, 0.2), every key attended, two chunks; the output
    divided by the sum within (0.12, 0.12) of the float64 model, the max within 0.1."""
    rng = np.random.default_rng(0xA77E17)

    def draw(*shape: int) -> np.ndarray[Any, Any]:
        return MODEL.to_bf16(rng.uniform(-0.2, 0.2, shape))

    q, k0, k1, v0, v1 = draw(8, 2, 128), draw(512, 8, 128), draw(512, 8, 128), draw(512, 8, 128), draw(512, 8, 128)
    mask = np.ones(512, np.float32)
    query, ones = ATT.Query(tcp.Tensor(q, "N G D")), ATT.Mask(tcp.Tensor(mask, "T"))
    state = ATT.attention_forward_first(query, _cache(k0), _cache(v0), ones)
    top, total, out = _state(ATT.attention_forward(query, _cache(k1), _cache(v1), ones, *state))

    expected = MODEL.attention_chunk(MODEL.attention_first(q, k0, v0, mask), q, k1, v1, mask)
    got, want = out / total[..., None], expected.out / expected.sum[..., None]
    assert MODEL.ATTENTION.holds(got, want), MODEL.ATTENTION.excess(got, want)
    assert np.abs(top - expected.max).max() < MAX_CLOSE
    # The kernel rounds where the bf16-rounding model does, so its output is that model's to the last bit.
    kernel = MODEL.attention_chunk(MODEL.attention_first(q, k0, v0, mask, MODEL.KERNEL), q, k1, v1, mask, MODEL.KERNEL)
    assert np.array_equal(out, kernel.out)


def test_forward_persists_the_running_max(evaluator: str) -> None:
    """Keys of 1 in the middle chunk raise the max to ``D / sqrt(D)`` between two zeroed chunks; the third
    chunk keeps it only if the second stored it (masks and values zero: the max is taken before masking)."""
    query = ATT.Query(tcp.Tensor(np.ones((8, 2, 128), np.float32), "N G D"))
    zeros, ones = _cache(np.zeros((512, 8, 128), np.float32)), _cache(np.ones((512, 8, 128), np.float32))
    hidden = ATT.Mask(tcp.Tensor(np.zeros(512, np.float32), "T"))
    state = ATT.attention_forward_first(query, zeros, zeros, hidden)
    for keys in (ones, zeros):
        state = ATT.attention_forward(query, keys, zeros, hidden, *state)
    top = state[0].to_tensor().to_numpy("N G")
    assert np.abs(top - np.sqrt(128.0)).max() < PERSISTED_CLOSE


def test_norm_divides_each_head_by_its_sum(evaluator: str) -> None:
    rng = np.random.default_rng(5)
    out = MODEL.to_bf16(rng.standard_normal((8, 2, 128)))
    total = rng.uniform(0.5, 40.0, (8, 2)).astype(np.float32)
    x = ATT.Normalised(tcp.Tensor(out, "N G D"))
    got = ATT.attention_norm(x, ATT.RowsHbm(tcp.Tensor(total, "N G"))).to_tensor().to_numpy("N G D")
    assert np.array_equal(got, MODEL.attention_norm(out, total, MODEL.KERNEL))
