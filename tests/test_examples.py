"""Every kernel example runs on random data under both evaluators and agrees with the oracle; so does
every kernel of examples/transformer, as ``tcpdsl run`` drives them."""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest
from mypy_runner import run_mypy

import tcpdsl as tcp
from tcpdsl.cli.main import main
from tcpdsl.cli.run import load
from tcpdsl.harness.oracle import check
from tcpdsl.harness.kernel_spec import kernels_in, random_case
from tcpdsl.harness.run import run_kernel

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
KERNEL_EXAMPLES = [
    "bmatmul_k_in_time",
    "bmatmul_m_in_time",
    "bmatmul_v_in_time",
    "dot_product",
    "fetch_commit_simple",
    "gemm",
    "gemv",
    "lane_interleaved",
    "lm_head",
    "lane_sequential",
    "matmul",
    "matmul_dm",
    "reduce_b",
    "stream_adapter",
    "switch_gather",
    "trf_load_i8",
    "trf_sequencer_full_read",
    "trf_sequencer_partial_read",
    "transpose_rows",
    "valid_size_32",
    "vrf_add_segmented",
    "weight_groups",
]
# Outer-only doc examples stop at contract_outer.
OUTER_ONLY = {"stream_adapter", "trf_sequencer_full_read", "trf_sequencer_partial_read"}


def _load(name: str) -> types.ModuleType:
    found = sys.modules.get(f"examples_{name}")
    if found is not None:
        return found
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", KERNEL_EXAMPLES)
def test_example_is_documented_and_defines_one_kernel(name: str) -> None:
    module = _load(name)
    assert module.__doc__ and len(module.__doc__.strip()) > 80
    kernels = kernels_in(module)
    assert [k.name for k in kernels] == [name]
    kernel = kernels[0]
    assert kernel.params, "a kernel example takes tensors"
    returns = getattr(kernel.returns, "__tcp_spec__", None)
    assert returns is not None, "the result is annotated with a tensor type"
    if name in OUTER_ONLY:
        assert returns.family.name == "ContractOuterTensor"


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
@pytest.mark.parametrize("name", KERNEL_EXAMPLES)
def test_example_agrees_with_the_oracle(name: str, evaluator: str) -> None:
    (kernel,) = kernels_in(_load(name))
    case = random_case(kernel, seed=2024)
    with tcp.evaluator(evaluator):
        result = kernel.function(**case.inputs)
        verdict = check(result, case.logical)
    assert verdict.passed, f"max error {verdict.max_error} > tolerance {verdict.tolerance}"
    if verdict.exact:
        assert verdict.max_error == 0


def test_examples_type_check_strictly_without_the_plugin() -> None:
    files = [str(EXAMPLES / f"{n}.py") for n in KERNEL_EXAMPLES]
    out = run_mypy(files, plugin=False, cache_name="tcpdsl-plain-mypy-cache")
    example_errors = [line for line in out if "examples" in line]
    assert example_errors == [], "\n".join(example_errors)


@pytest.mark.parametrize("path", sorted(EXAMPLES.rglob("*.py")), ids=lambda p: str(p.relative_to(EXAMPLES).with_suffix("")))
def test_example_uses_only_the_public_api(path: Path) -> None:
    imported = [
        node
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    modules = [a.name for n in imported if isinstance(n, ast.Import) for a in n.names]
    modules += [n.module or "" for n in imported if isinstance(n, ast.ImportFrom)]
    assert [m for m in modules if m.startswith("tcpdsl.")] == []


def test_try_kernel_reports_like_tcpdsl_run(capsys: pytest.CaptureFixture[str]) -> None:
    kernel = _load("matmul").matmul
    result = tcp.try_kernel(kernel, seed=3)
    assert (result.status, result.passed) == ("PASS", True)
    text = str(result)
    assert text.splitlines()[0].startswith(f"{EXAMPLES / 'matmul.py'}::matmul (bf16 -> f32)  PASS")
    assert "contract_lane" in text and "max error vs oracle" in text
    assert tcp.try_kernel(kernel, seed=3, evaluator="simulate").passed
    with pytest.raises(tcp.LayoutError, match="unknown evaluator 'slow'"):
        tcp.try_kernel(kernel, evaluator="slow")
    with pytest.raises(tcp.TcpError, match="is not a @tcp.kernel function"):
        tcp.try_kernel(print)


TRANSFORMER = EXAMPLES / "transformer"
# Every kernel of examples/transformer by module, in definition order; a kernel added there must pass too.
TRANSFORMER_KERNELS = {
    "attention": ["ng_to_vrf", "qk_scaled", "row_max", "masked_exp", "row_sum", "weighted_sum",
                  "attention_forward_first", "attention_forward", "attention_norm"],
    "decoder": ["decoder"],
    "final_layer": ["lm_head_tile", "gather", "final_norm", "final_layer"],
    "mlp": ["mlp"],
    "projection": ["proj_q", "proj_p", "proj_o", "projection"],
    "residual": ["residual"],
    "rmsnorm": ["rmsnorm", "rmsnorm_q", "rmsnorm_k"],
    "rope": ["rope_q", "rope_k"],
    "run_model": ["main"],
}
# The outputs each kernel with more than one is compared on: the elements of a tuple result, the caches
# the projection entry writes in place.
SEVERAL_OUTPUTS = {
    "attention_forward_first": ["result 0", "result 1", "result 2"],
    "attention_forward": ["result 0", "result 1", "result 2"],
    "projection": ["result", "k_cache (written in place)", "v_cache (written in place)"],
}


def test_tcpdsl_run_passes_every_transformer_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    """At the reference's sizes, through the fused evaluator: the whole final layer and the end-to-end driver
    included (about 50 s on two loaded cores)."""
    status = main(["run", str(TRANSFORMER), "--json"])
    results = json.loads(capsys.readouterr().out)["results"]
    by_module: dict[str, list[str]] = {}
    for r in results:
        by_module.setdefault(Path(r["file"]).stem, []).append(r["kernel"])
    for module, names in TRANSFORMER_KERNELS.items():
        assert by_module[module][: len(names)] == names, module
    assert {f"{Path(r['file']).stem}::{r['kernel']}": (r["status"], r["skipped"], r["error"]) for r in results
            if r["status"] != "PASS"} == {}
    assert status == 0
    several = {r["kernel"]: [o["output"] for o in r["outputs"]] for r in results if len(r["outputs"]) > 1}
    assert several == SEVERAL_OUTPUTS


# The kernels cheap enough for the simulator here (each under a second): one per kind of input or stage mix.
SIMULATED = [("attention", "ng_to_vrf"), ("attention", "qk_scaled"), ("attention", "row_sum"),
             ("residual", "residual"), ("rmsnorm", "rmsnorm_k"), ("rope", "rope_k")]


@pytest.mark.parametrize(("module", "name"), SIMULATED, ids=[f"{m}::{n}" for m, n in SIMULATED])
def test_cheap_transformer_kernels_pass_on_the_simulator(module: str, name: str) -> None:
    file = TRANSFORMER / f"{module}.py"
    (spec,) = [k for k in kernels_in(load(file, 0)) if k.name == name]
    result = run_kernel(spec, file, 0, "simulate")
    assert (result.status, result.error) == ("PASS", None)
