"""The harness's own model of a vector pass: the transformer's rmsnorm and residual pass ``tcpdsl run`` on
both evaluators, an evaluator that computes wrongly fails, and every i32 and f32 op the model knows agrees
with the engine on random inputs."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.harness.run import run_kernel
from tcpdsl.harness.kernel_spec import describe
from tcpdsl.numerics import vector_ops

EVALUATORS = ["fused", "simulate"]
FOLDER = Path(__file__).resolve().parent.parent / "examples" / "transformer"
A = tcp.axis("A", 128)
Flat = tcp.CollectTensor[tcp.i32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]
FlatF = tcp.CollectTensor[tcp.f32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]


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


def _run(fn: Any, evaluator: str, seed: int = 0) -> Any:
    return run_kernel(describe(fn), Path(fn.__name__), seed, evaluator)


@pytest.mark.parametrize("evaluator", EVALUATORS)
@pytest.mark.parametrize("seed", [0, 1])
def test_rmsnorm_passes_the_runner_with_each_pass_costed(evaluator: str, seed: int) -> None:
    result = _run(_load("rmsnorm").rmsnorm, evaluator, seed)
    assert result.status == "PASS", result.error
    # mean square, its root, then x * w / rms (docs/cost-model.md, "The vector engine")
    assert [(p.steps, p.cycles, p.latency) for p in result.passes] == [(10, 256, 260), (6, 1, 1), (7, 256, 2)]
    # The last pass is the stage table's vector_final row; the report says it there only.
    lines = str(result).splitlines()
    assert [line for line in lines if line.startswith("  vector pass")] == [
        "  vector pass 1: 10 steps, 256 cycles streaming, 260 cycles latency",
        "  vector pass 2: 6 steps, 1 cycles streaming, 1 cycles latency",
    ]
    assert [(p.in_table) for p in result.passes] == [False, False, True]
    final = next(line for line in lines if line.startswith("  vector_final"))
    assert "pass init -> intra_slice_tag -> narrow_split -> fp_binary -> fp_div -> widen_concat -> final" in final
    assert final.split()[-3:] == ["256", "2", "-"]
    assert result.to_json()["vector_passes"][1] == {"steps": 6, "cycles": 1, "latency": 1}


@pytest.mark.parametrize("evaluator", EVALUATORS)
def test_residual_passes_the_runner(evaluator: str) -> None:
    result = _run(_load("residual").residual, evaluator)
    assert result.status == "PASS", result.error
    assert len(result.passes) == 1


def test_an_evaluator_that_divides_wrongly_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # Three parts in a hundred off in every division (more than the bf16 output's ulp): the model must see it.
    # The fused evaluator plans each f32 op by the numpy function it computes with: FpDiv's is made wrong.
    right = vector_ops.float_function
    monkeypatch.setattr(vector_ops, "float_function", lambda op: (
        (lambda a, b: right(op)(a, b) * np.float32(1.03)) if op is tcp.FpBinaryOp.DIV_F else right(op)))
    result = _run(_load("rmsnorm").rmsnorm, "fused")
    assert result.status == "FAIL"
    assert (result.error or "").startswith("result differs from the oracle: max error")


INT_OPS = [*tcp.FxpBinaryOp, *tcp.LogicBinaryOpI32]
FLOAT_OPS = [tcp.FpBinaryOp.ADD_F, tcp.FpBinaryOp.SUB_F, tcp.FpBinaryOp.DIV_F,
             tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)]


@pytest.mark.parametrize("evaluator", EVALUATORS)
@pytest.mark.parametrize("op", INT_OPS, ids=lambda op: op.name)
@pytest.mark.parametrize("operand", [3, -7, 40])
def test_every_i32_op_agrees_with_the_engine(evaluator: str, op: Any, operand: int) -> None:
    @tcp.kernel
    def one(x: Flat) -> object:
        stream = x.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)
        if isinstance(op, tcp.LogicBinaryOpI32):
            return stream.vector_logic(op, operand).vector_final()
        return stream.vector_fxp(op, operand).vector_final()

    result = _run(one, evaluator)
    assert (result.status, result.max_error) == ("PASS", 0.0), result.error


@pytest.mark.parametrize("evaluator", EVALUATORS)
@pytest.mark.parametrize("op", FLOAT_OPS, ids=str)
@pytest.mark.parametrize("mode", list(tcp.BinaryArgMode), ids=lambda mode: mode.name)
def test_every_fp_binary_op_agrees_with_the_engine(evaluator: str, op: Any, mode: Any) -> None:
    @tcp.kernel
    def one(x: FlatF) -> object:
        narrow = x.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO).vector_narrow_trim(out_packet=m["A % 2 # 4"])
        return narrow.vector_fp_binary(op, 1.5, mode=mode).vector_widen_pad(out_packet=m["A % 2 # 8"]).vector_final()

    result = _run(one, evaluator)
    assert result.status == "PASS", result.error
    assert np.isfinite(result.max_error)
