"""The transformer's vector kernels, rmsnorm and residual, as whole kernels from DM fetch to DM commit, at the
reference's sizes (H = 1024, both clusters, replicated on every slice), on both evaluators against the
example's numpy model in float64 (examples/transformer/model.py)."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tcpdsl as tcp

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "transformer"
H = tcp.axis("H", 1024)  # the examples' axes, declared where this module names them
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
RMSNORM = _load("rmsnorm")
RESIDUAL = _load("residual")
# One bf16 rounding of an f32 result: half a unit in the last of bf16's 8 significant bits, plus the
# f32 arithmetic before it.
BF16_ONCE = MODEL.Tolerance(1e-6, 2.0**-8 + 1e-5)


def _activation(module: types.ModuleType, seed: int) -> Any:
    values = np.random.default_rng(seed).standard_normal(1024).astype(np.float32)
    return module.Activation(tcp.Tensor(values, "H"))


def _values(tensor: Any) -> np.ndarray[Any, Any]:
    """The one H vector of a tensor replicated over the 64 x 4 slices (every replica the same, when the
    result keeps the slice axis)."""
    logical = tensor.to_tensor()
    if "Dummy64" not in logical.axes:
        return np.asarray(logical.to_numpy("H"), dtype=np.float64)
    grid = logical.to_numpy("Dummy64 H").astype(np.float64)
    assert (grid == grid[0]).all()
    return np.asarray(grid[0])


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
def test_rmsnorm_kernel(evaluator: str) -> None:
    x = _activation(RMSNORM, 1)
    w = RMSNORM.Weight(tcp.Tensor(np.random.default_rng(2).standard_normal(1024).astype(np.float32), "H"))
    with tcp.evaluator(evaluator):
        out = RMSNORM.rmsnorm(x, w)
        got = _values(out)
    expected = MODEL.rmsnorm(_values(x), _values(w))
    assert out.dtype is tcp.bf16
    assert BF16_ONCE.holds(got, expected), BF16_ONCE.excess(got, expected)


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
def test_residual_kernel(evaluator: str) -> None:
    x, r = _activation(RESIDUAL, 3), _activation(RESIDUAL, 4)
    with tcp.evaluator(evaluator):
        got = _values(RESIDUAL.residual(x, r))
    expected = MODEL.residual(_values(x), _values(r))
    assert BF16_ONCE.holds(got, expected), BF16_ONCE.excess(got, expected)


def test_rmsnorm_explains_each_pass_and_its_cycles() -> None:
    x = _activation(RMSNORM, 1)
    stream = (RMSNORM.dev.main.begin(x.view())
              .fetch(out_time=tcp.m["H / 16"], out_packet=tcp.m["H % 16"]).fetch_cast(tcp.f32)
              .collect(out_time=tcp.m["H / 8"], out_packet=tcp.m["H % 8"]))
    final = (stream.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)
             .vector_narrow_split(out_time=tcp.m["H / 4"], out_packet=tcp.m["H % 4"])
             .vector_fp_unary(tcp.FpUnaryOp.EXP)
             .vector_widen_concat(out_time=tcp.m["H / 8"], out_packet=tcp.m["H % 8"])
             .vector_final())
    text = final.explain()
    assert "vector_narrow_split -> H / 4 | H % 4 (f32, Way4)" in text
    # 128 flits at Way8 against 256 half-flits at Way4: the float path streams 256 cycles.
    assert "cost: 256 cycles streaming" in text and "1 ALU: FpExp" in text
