"""``tcpdsl run`` on kernels with more than one output: tuple results, memory tensors written in place,
VRF inputs and run-time integer arguments drawn from their annotated range."""

from __future__ import annotations

import importlib.util
import json
import textwrap
import types
from pathlib import Path

import pytest

import tcpdsl.evaluate.fused
from tcpdsl.cli.main import main
from tcpdsl.harness.kernel_spec import KernelSpecError, describe, random_case
from tcpdsl.harness.report import KernelResult, OutputCheck
from tcpdsl.testing.kernels import rerun

BODY = '''
from typing import Annotated

import tcpdsl as tcp
from tcpdsl import m

T = tcp.axis("T", 8)
D = tcp.axis("D", 16)
Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
Row = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["D"]]
Table = tcp.HbmTensor[tcp.bf16, Chip, m["T, D"]]
Copy = tcp.HbmTensor[tcp.bf16, Chip, m["D"]]
RowVrf = tcp.VrfTensor[tcp.f32, Chip, Cluster, Slice, m["D"]]
dev = tcp.Device()


@tcp.kernel
def store(x: Row, table: Table, row: Annotated[int, range(2, 8, 3)]) -> Copy:
    """x into row ``row`` of the table (in place), and a copy of x."""
    window = table.view_mut().tile(row, index=m["T"], len=1, element=m["T = 1 #{!} 8, D"])
    x.view().to_hbm_view(window)
    return x.to_hbm(element=m["D"])


@tcp.kernel
def store_both(x: Row, table: Table, row: Annotated[int, range(8)]) -> tuple[Copy, Table]:
    """The same write, the table returned as the second result."""
    window = table.view_mut().tile(row, index=m["T"], len=1, element=m["T = 1 #{!} 8, D"])
    x.view().to_hbm_view(window)
    return x.to_hbm(element=m["D"]), table


@tcp.kernel
def add_vrf(x: Row, y: RowVrf) -> Row:
    """x + y in the vector engine, y read from the register file."""
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_clip(tcp.ClipBinaryOpF32.ADD, y)
        .vector_final()
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["D"])
    )


@tcp.kernel
def store_quietly(x: Row, table: Table, row: Annotated[int, range(8)]) -> None:
    """Only the in-place write: that is the output."""
    x.view().to_hbm_view(table.view_mut().tile(row, index=m["T"], len=1, element=m["T = 1 #{!} 8, D"]))


@tcp.kernel
def nothing(x: Row) -> None:
    """No result and no write: nothing to compare."""
    x.to_hbm(element=m["D"])


@tcp.kernel
def passthrough(x: Row, table: Table) -> tuple[Copy, Row]:
    """Its second result is an input as it came: nothing to compare it with."""
    return x.to_hbm(element=m["D"]), x


@tcp.kernel
def bare(x: Row, table: Table, row: int) -> Copy:
    return x.to_hbm(element=m["D"])


@tcp.kernel
def empty(x: Row, table: Table, row: Annotated[int, range(3, 3)]) -> Copy:
    return x.to_hbm(element=m["D"])
'''


def load(tmp_path: Path) -> types.ModuleType:
    path = tmp_path / "loaded.py"
    path.write_text(textwrap.dedent(BODY), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("run_outputs_kernels", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(tmp_path: Path, evaluator: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, dict[str, object]]]:
    path = tmp_path / "kernels.py"
    path.write_text(textwrap.dedent(BODY), encoding="utf-8")
    status = main(["run", str(path), "--json", "--evaluator", evaluator, "--timeout", "0"])
    report = json.loads(capsys.readouterr().out)
    return status, {r["kernel"]: r for r in report["results"]}


def outputs(result: dict[str, object]) -> list[tuple[object, object]]:
    found = result["outputs"]
    assert isinstance(found, list)
    return [(o["output"], o["passed"]) for o in found]


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
def test_every_output_is_compared(tmp_path: Path, evaluator: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, results = run(tmp_path, evaluator, capsys)
    assert status == 0
    assert {name: r["status"] for name, r in results.items()} == {
        "store": "PASS", "store_both": "PASS", "add_vrf": "PASS", "store_quietly": "PASS", "nothing": "SKIP",
        "passthrough": "SKIP", "bare": "SKIP", "empty": "SKIP",
    }
    assert outputs(results["store_quietly"]) == [("table (written in place)", True)]
    assert results["nothing"]["skipped"] == (
        "the kernel returns nothing and writes none of its DM or HBM inputs: there is no output to compare"
    )
    # An output the oracle cannot follow skips the kernel, naming that output.
    assert results["passthrough"]["skipped"] == (
        "result 1: a result that is not a contraction is compared with its one logical input"
    )
    assert outputs(results["store"]) == [("result", True), ("table (written in place)", True)]
    # A tensor both written in place and returned is compared once, as the result it is.
    assert outputs(results["store_both"]) == [("result 0", True), ("result 1", True)]
    assert outputs(results["add_vrf"]) == [("result", True)]
    assert results["bare"]["skipped"] == (
        "parameter row of bare is an int without the values it may take; annotate it as "
        "Annotated[int, range(...)] (or give it a default) so that a runner can draw one"
    )
    assert results["empty"]["skipped"] == "parameter row of empty may take no value: its range range(3, 3) is empty"


def test_a_write_the_evaluator_drops_fails_the_kernel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The in-place write is compared for real: an evaluator that loses it fails on that output alone."""
    # The fused evaluator writes a window as a slice of the logical values, or as a planned scatter of them
    # (docs/runtime.md §4): both lose the write here.
    monkeypatch.setattr(tcpdsl.evaluate.fused, "box_written", lambda parent, *rest: parent)
    monkeypatch.setattr(tcpdsl.evaluate.fused, "written_values", lambda parent, *rest: parent)
    status, results = run(tmp_path, "fused", capsys)
    assert status == 1
    store = results["store"]
    assert store["status"] == "FAIL"
    assert outputs(store) == [("result", True), ("table (written in place)", False)]
    assert str(store["error"]).startswith("table (written in place) differs from the oracle: max error ")
    assert outputs(results["store_both"]) == [("result 0", True), ("result 1", False)]
    # pytest --tcpdsl names the differing cells of that output, not of the result.
    verdict = rerun(load(tmp_path).store, 0, "fused")
    assert (verdict.passed, verdict.axes) == (False, ("T", "D"))


def test_an_integer_is_drawn_from_its_range_with_the_seed(tmp_path: Path) -> None:
    module = load(tmp_path)
    kernel = describe(module.store)
    assert [(p.name, p.values) for p in kernel.integers] == [("row", range(2, 8, 3))]
    rows = [random_case(kernel, seed).inputs["row"] for seed in range(12)]
    assert set(rows) == {2, 5}
    assert rows == [random_case(kernel, seed).inputs["row"] for seed in range(12)]
    with pytest.raises(KernelSpecError, match="parameter row of bare is an int without the values it may take"):
        describe(module.bare)


def test_the_worst_output_sets_the_verdict_and_the_report_lists_each() -> None:
    result = KernelResult("k.py", "k", "kernel")
    result.record((OutputCheck("result 0", 0.5, 1.0, True), OutputCheck("result 1", 3.0, 2.0, False),
                   OutputCheck("cache (written in place)", 0.0, 0.0, True)))
    assert (result.status, result.max_error, result.tolerance) == ("FAIL", 3.0, 2.0)
    assert result.error == "result 1 differs from the oracle: max error 3 > tolerance 2"
    assert str(result).splitlines()[1:] == [
        "  result 0: max error vs oracle 0.5 (tolerance 1)",
        "  result 1: max error vs oracle 3 (tolerance 2)",
        "  cache (written in place): max error vs oracle 0 (exact)",
        "  error: result 1 differs from the oracle: max error 3 > tolerance 2",
    ]
