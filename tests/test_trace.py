"""The schedule as Chrome trace events (docs/trace.md): the event schema, one track per engine, each
kernel's span equal to its reported cycles, kernels back to back, and the bounding engine in the text
report. Subjects: examples/matmul_dm.py, examples/switch_gather.py and the transformer's rmsnorm."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl.cli.main import main
from tcpdsl.harness.report import KernelResult

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
H = tcp.axis("H", 1024)  # the rmsnorm example's axes, declared where this module names them
Dummy64 = tcp.axis("Dummy64", 64)


def _load(path: Path) -> types.ModuleType:
    name = f"trace_subject_{path.stem}"
    found = sys.modules.get(name)
    if found is not None:
        return found
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _matmul() -> KernelResult:
    return tcp.try_kernel(_load(EXAMPLES / "matmul_dm.py").matmul_dm)


def _switch() -> KernelResult:
    return tcp.try_kernel(_load(EXAMPLES / "switch_gather.py").switch_gather)


def _rmsnorm() -> Any:
    module = _load(EXAMPLES / "transformer" / "rmsnorm.py")
    x = module.Activation(tcp.Tensor(np.ones(1024, np.float32), "H"))
    w = module.Weight(tcp.Tensor(np.ones(1024, np.float32), "H"))
    return module.rmsnorm(x, w)


def _complete(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in document["traceEvents"] if e["ph"] == "X"]


def _tracks(document: dict[str, Any]) -> dict[int, str]:
    return {e["tid"]: e["args"]["name"] for e in document["traceEvents"] if e["name"] == "thread_name"}


def _check_schema(document: dict[str, Any]) -> None:
    """Complete events carry name, ts, dur, pid and tid as numbers; metadata names every track once."""
    assert json.loads(json.dumps(document)) == document
    for event in document["traceEvents"]:
        assert event["ph"] in {"X", "M"}
        assert isinstance(event["pid"], int)
        if event["ph"] == "X":
            assert isinstance(event["name"], str)
            assert all(isinstance(event[key], int) and event[key] >= 0 for key in ("ts", "dur", "tid"))
        else:
            assert event["name"] in {"process_name", "thread_name", "thread_sort_index"}
    tracks = _tracks(document)
    assert len(set(tracks.values())) == len(tracks), "one track per engine"
    assert {e["tid"] for e in _complete(document)} == set(tracks)
    for event in _complete(document):
        if event["tid"] != 0:
            assert tracks[event["tid"]] == event["name"], "an engine's events sit on its own track"


def test_matmul_draws_the_contraction_pipeline_with_its_latencies() -> None:
    result = _matmul()
    document = tcp.trace(result)
    _check_schema(document)
    drawn = {e["name"]: (e["ts"], e["dur"]) for e in _complete(document)}
    # 1 packet streams everywhere; the adder tree adds 6 cycles (i8) and the Lane Folder drains 1,
    # then the commit: 1 + 6 + 1 + 1 = 9 cycles, as the report says.
    assert drawn == {
        "matmul_dm": (0, 9),
        "contract_outer": (0, 1),
        "contract_packet": (0, 7),
        "contract_time": (6, 1),
        "contract_lane": (6, 2),
        "commit_trim": (8, 1),
        "commit": (8, 1),
    }
    assert result.cost is not None and result.cost.total_cycles == 9


def test_switch_gather_is_bound_by_the_switch_in_the_trace_and_the_text() -> None:
    result = _switch()
    document = tcp.trace(result)
    _check_schema(document)
    kernel = next(e for e in _complete(document) if e["tid"] == 0)
    assert kernel["dur"] == 64 and kernel["args"] == {"total_cycles": 64, "bound_by": "switch"}
    switch = next(e for e in _complete(document) if e["name"] == "switch")
    assert (switch["ts"], switch["dur"]) == (0, 64)
    assert "  bound by: switch (64 cycles streaming of 64 in total)" in str(result).splitlines()
    assert result.to_json()["bound_by"] == "switch"


def test_rmsnorm_draws_its_last_vector_pass_then_the_cast_and_commit() -> None:
    document = tcp.trace(_rmsnorm())
    _check_schema(document)
    drawn = {e["name"]: (e["ts"], e["dur"]) for e in _complete(document) if e["tid"] != 0}
    # The pass streams 256 cycles on its Way4 float path with 2 ALUs of latency; cast, trim and
    # commit pass 128 packets after it: 258 + 128 = 386.
    assert drawn == {"vector_final": (0, 258), "cast": (258, 128), "commit_trim": (258, 128), "commit": (258, 128)}
    kernel = next(e for e in _complete(document) if e["tid"] == 0)
    assert kernel["dur"] == 386 and kernel["args"]["bound_by"] == "vector_final"


def test_a_sequence_runs_back_to_back_on_shared_tracks(tmp_path: Path) -> None:
    results = [_matmul(), _switch(), _matmul()]
    path = tmp_path / "schedule.json"
    document = tcp.trace(results, path)
    _check_schema(document)
    assert json.loads(path.read_text()) == document
    kernels = [(e["name"], e["ts"], e["dur"]) for e in _complete(document) if e["tid"] == 0]
    assert kernels == [("matmul_dm", 0, 9), ("switch_gather", 9, 64), ("matmul_dm", 73, 9)]
    assert sum(d for _, _, d in kernels) == sum(r.cost.total_cycles for r in results if r.cost is not None)
    commits = [e["ts"] for e in _complete(document) if e["name"] == "commit"]
    assert commits == [8, 9, 81]
    for event in _complete(document):
        assert 0 <= event["ts"] and event["ts"] + event["dur"] <= 82


def test_what_cannot_be_drawn_is_refused_with_the_reason() -> None:
    with pytest.raises(tcp.LayoutError) as empty:
        tcp.trace([])
    assert (empty.value.stage, empty.value.rule) == ("trace", "Subject")
    with pytest.raises(tcp.LayoutError) as other:
        tcp.trace(42)
    assert "cannot draw a int: it is not a kernel's result" in str(other.value)
    skipped = KernelResult("f.py", "k", "kernel", skipped="no inputs")
    with pytest.raises(tcp.LayoutError) as costless:
        tcp.trace(skipped)
    assert costless.value.rule == "NoCost" and "kernel k (SKIP) has no cost to draw" in str(costless.value)


def test_run_writes_the_trace_of_the_kernels_that_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.json"
    assert main(["run", str(EXAMPLES / "switch_gather.py"), "--timeout", "0", "--trace", str(path)]) == 0
    assert "bound by: switch" in capsys.readouterr().out
    document = json.loads(path.read_text())
    _check_schema(document)
    assert [e["name"] for e in _complete(document) if e["tid"] == 0] == ["switch_gather"]


def test_a_decoder_step_as_far_as_ported_is_one_valid_trace(tmp_path: Path) -> None:
    """The transformer's kernels that exist, in a decoder step's order: rmsnorm, the q, k, v
    projections, the output projection, the residual. Each kernel's span is the total its report
    gives, and the kernel events sum to the step's cycles."""
    from tcpdsl.harness.stages import flow_stages
    from test_transformer_projection import proj_o, proj_p, proj_q

    rng = np.random.default_rng(0)
    x = rng.standard_normal(1024).astype(np.float32)
    residual = _load(EXAMPLES / "transformer" / "residual.py")
    step = {
        "rmsnorm": _rmsnorm(),
        "proj_q": proj_q(x, rng.standard_normal((2048, 1024)).astype(np.float32)),
        "proj_k": proj_p(x, rng.standard_normal((1024, 1024)).astype(np.float32)),
        "proj_v": proj_p(x, rng.standard_normal((1024, 1024)).astype(np.float32)),
        "proj_o": proj_o(rng.standard_normal(2048).astype(np.float32),
                         rng.standard_normal((1024, 2048)).astype(np.float32)),
        "residual": residual.residual(residual.Activation(tcp.Tensor(x, "H")), residual.Activation(tcp.Tensor(x, "H"))),
    }
    path = tmp_path / "decoder_step.json"
    tcp.trace(step, path)
    document = json.loads(path.read_text())
    _check_schema(document)
    kernels = [e for e in _complete(document) if e["tid"] == 0]
    reported = [flow_stages(out.flow)[1].total_cycles for out in step.values()]
    assert [e["name"] for e in kernels] == list(step)
    assert [e["dur"] for e in kernels] == [e["args"]["total_cycles"] for e in kernels] == reported
    assert [e["ts"] for e in kernels] == [sum(reported[:i]) for i in range(len(reported))]
    assert "switch" in _tracks(document).values() and "vector_final" in _tracks(document).values()
    for kernel in kernels:
        inside = [e for e in _complete(document) if e["tid"] != 0 and e["args"]["kernel"] == kernel["name"]]
        assert inside and max(e["ts"] + e["dur"] for e in inside) == kernel["ts"] + kernel["dur"]


def test_the_last_pipelined_stage_ends_with_the_kernel() -> None:
    """examples/matmul.py streams 64 cycles in contract_outer; the adder tree (5) and the drain (1)
    follow it, so contract_lane, fed at the outer stage's pace, ends at 70, the reported total."""
    document = tcp.trace(tcp.try_kernel(_load(EXAMPLES / "matmul.py").matmul))
    _check_schema(document)
    drawn = {e["name"]: (e["ts"], e["dur"], e["args"].get("cycles")) for e in _complete(document)}
    assert drawn == {
        "matmul": (0, 70, None),
        "contract_outer": (0, 64, 64),
        "contract_packet": (0, 69, 32),
        "contract_time": (5, 64, 32),
        "contract_lane": (5, 65, 32),
    }


def test_a_dma_move_has_its_own_track_and_the_dma_formula() -> None:
    """The rmsnorm weight's move from HBM to DM: 2 KiB runs of 2048 bytes to every one of 64 slices, each
    run 8 requests of 256 bytes: 64 x 8 = 512 requests after the 500-cycle start-up, HBM to DM pipelined."""
    module = _load(EXAMPLES / "transformer" / "rmsnorm.py")
    w = module.Weight(tcp.Tensor(np.ones(1024, np.float32), "H"))
    moved = w.to_dm(cluster=module.Cluster, slice=module.SliceP4, element=tcp.m["H"])
    document = tcp.trace({"weight": moved, "rmsnorm": _rmsnorm()})
    _check_schema(document)
    drawn = [(e["name"], e["ts"], e["dur"]) for e in _complete(document) if e["name"] in {"weight", "to_dm", "rmsnorm"}]
    assert drawn == [("weight", 0, 1012), ("to_dm", 0, 1012), ("rmsnorm", 1012, 386)]
    dma = next(e for e in _complete(document) if e["name"] == "to_dm")
    assert dma["args"]["notes"] == ["512 requests of 131072 bytes"]
    assert "to_dm -> Element H (bf16): 1012 cycles" in moved.explain()


def test_an_unwritable_trace_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no such folder" / "t.json"
    with pytest.raises(tcp.LayoutError) as refused:
        tcp.trace(_switch(), missing)
    assert refused.value.rule == "Unwritable" and f"cannot write the trace to {missing}" in str(refused.value)
    assert main(["run", str(EXAMPLES / "switch_gather.py"), "--timeout", "0", "--trace", str(missing)]) == 2
    assert f"tcpdsl run: cannot write the trace to {missing}: No such file or directory" in capsys.readouterr().err
