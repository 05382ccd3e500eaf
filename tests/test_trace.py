"""The schedule as Chrome trace events (docs/trace.md): the event schema, one track per engine of each unit,
every stream and move behind a kernel's result drawn back to back, the stream spans summing to the
whole-kernel cycles the report prints, kernels back to back, and the bounding engine in the text.
Subjects: examples/matmul.py, matmul_dm.py, switch_gather.py, the transformer's rmsnorm and residual, its
decoder entry, and one decoder step (projection, attention over two chunks, decoder)."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl.cli.main import main
from tcpdsl.cost import StageCost, combine, stream_cost
from tcpdsl.harness.report import KernelResult
from tcpdsl.harness.schedule import place, schedule_of
from tcpdsl.verify.stage import Stage

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TRANSFORMER = EXAMPLES / "transformer"
H = tcp.axis("H", 1024)  # the transformer's axes, declared where this module names them
T = tcp.axis("T", 512)
Dummy64 = tcp.axis("Dummy64", 64)
sys.path.insert(0, str(TRANSFORMER))  # the decoder imports its sibling kernels by plain name
PROCESSES = {1: "tcpdsl schedule (cycles per slice)", 2: "main context", 3: "sub context", 4: "DMA engines"}


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


def _run(file: str, kernel: str) -> KernelResult:
    return tcp.try_kernel(getattr(_load(EXAMPLES / file), kernel))


def _rmsnorm() -> Any:
    module = _load(TRANSFORMER / "rmsnorm.py")
    x = module.Activation(tcp.Tensor(np.ones(1024, np.float32), "H"))
    w = module.Weight(tcp.Tensor(np.ones(1024, np.float32), "H"))
    return module.rmsnorm(x, w)


def _complete(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in document["traceEvents"] if e["ph"] == "X"]


def _tracks(document: dict[str, Any]) -> dict[int, tuple[int, str]]:
    return {e["tid"]: (e["pid"], e["args"]["name"]) for e in document["traceEvents"] if e["name"] == "thread_name"}


def _on(document: dict[str, Any], track: str) -> list[dict[str, Any]]:
    tid = next(t for t, (pid, name) in _tracks(document).items() if (pid, name) == (1, track))
    return [e for e in _complete(document) if e["tid"] == tid]


def _engines(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in _complete(document) if e["pid"] != 1]


def _check(document: dict[str, Any]) -> None:
    """The trace-event schema, one track per engine of each unit, and the sums: the streams run back to back
    inside their kernel, each covered exactly by its engines' busy spans, and the kernels back to back."""
    assert json.loads(json.dumps(document)) == document
    names = set()
    for event in document["traceEvents"]:
        assert event["ph"] in {"X", "M"} and isinstance(event["pid"], int) and isinstance(event["name"], str)
        if event["ph"] == "X":
            assert all(isinstance(event[key], int) and event[key] >= 0 for key in ("ts", "dur", "tid"))
        else:
            names.add(event["name"])
            assert event["pid"] in PROCESSES and isinstance(event["args"], dict)
    assert names == {"process_name", "process_sort_index", "thread_name", "thread_sort_index"}
    processes = {e["pid"]: e["args"]["name"] for e in document["traceEvents"] if e["name"] == "process_name"}
    assert processes.items() <= PROCESSES.items()
    tracks = _tracks(document)
    assert len(set(tracks.values())) == len(tracks), "one track per engine of each unit"
    assert {(e["pid"], e["tid"]) for e in _complete(document)} <= {(pid, tid) for tid, (pid, _) in tracks.items()}
    kernels, streams = _on(document, "kernel"), _on(document, "stream")
    assert [k["ts"] for k in kernels] == [sum(k["dur"] for k in kernels[:i]) for i in range(len(kernels))]
    total = document["otherData"]["total_cycles"]
    assert sum(k["dur"] for k in kernels) == sum(s["dur"] for s in streams) == total
    clock = 0
    for kernel in kernels:
        end = kernel["ts"] + kernel["dur"]
        inside = [s for s in streams if s["args"]["kernel"] == kernel["name"] and kernel["ts"] <= s["ts"] < end]
        assert [s["ts"] for s in inside] == [kernel["ts"] + sum(s["dur"] for s in inside[:i]) for i in range(len(inside))]
        assert sum(s["dur"] for s in inside) == kernel["dur"] and kernel["ts"] == clock
        clock += kernel["dur"]
    engines = _engines(document)
    assert [s["args"]["stream"] for s in streams] == list(range(len(streams)))
    assert {e["args"]["stream"] for e in engines} == set(range(len(streams)))
    for stream in streams:
        busy = [e for e in engines if e["args"]["stream"] == stream["args"]["stream"]]
        assert min(e["ts"] for e in busy) == stream["ts"]
        assert max(e["ts"] + e["dur"] for e in busy) == stream["ts"] + stream["dur"], stream
        assert all(e["args"]["kernel"] == stream["args"]["kernel"] for e in busy)


def _drawn(document: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    """Every engine event as (track, name, start, length), the track named with its unit."""
    unit = {2: "main", 3: "sub", 4: "dma"}
    tracks = _tracks(document)
    return [(f"{unit[e['pid']]} {tracks[e['tid']][1]}", e["name"], e["ts"], e["dur"]) for e in _engines(document)]


def test_a_trf_loaded_on_the_sub_context_is_its_own_stream_before_the_contraction() -> None:
    """examples/matmul_dm.py: the sub context fetches the weights w[R, K] (8 time steps of 32 i8, four 8-byte
    reads each: 32 cycles) into the TRF; then the main stream's contraction: 1 packet everywhere, the i8
    adder tree's 6 cycles and the Lane Folder's 1 of drain, then the commit: 9 cycles. 32 + 9 = 41."""
    result = _run("matmul_dm.py", "matmul_dm")
    document = tcp.trace(result)
    _check(document)
    assert [(s["name"], s["ts"], s["dur"]) for s in _on(document, "stream")] == [
        ("sub: begin -> to_trf", 0, 32), ("main: contract_outer -> commit", 32, 9)]
    assert _drawn(document) == [
        ("sub begin", "begin", 0, 1), ("sub fetch", "fetch", 0, 32), ("sub collect", "collect", 0, 8),
        ("sub to_trf", "to_trf", 0, 1),
        ("main contract_outer", "contract_outer", 32, 1), ("main contract_packet", "contract_packet", 32, 7),
        ("main contract_time", "contract_time", 38, 1), ("main contract_lane", "contract_lane", 38, 2),
        ("main commit_trim", "commit_trim", 40, 1), ("main commit", "commit", 40, 1),
    ]
    assert result.whole is not None and result.whole.total_cycles == 41 == document["otherData"]["total_cycles"]
    lines = str(result).splitlines()
    assert "  whole kernel: 41 cycles per slice (sub begin 1, sub fetch 32, sub collect 8, sub to_trf 1, contract_outer 1, " \
           "contract_packet 7, contract_time 1, contract_lane 2, commit_trim 1, commit 1)" in lines
    assert "  whole kernel bound by: sub fetch (32 of 41 cycles, over 2 streams)" in lines
    assert result.to_json()["whole_cycles"] == 41 and result.to_json()["whole_bound_by"] == "sub fetch"


def test_weights_given_in_place_pay_the_whole_kernels_load_first() -> None:
    """examples/matmul.py takes its TRF as an argument: the whole kernel loads it from HBM first
    (docs/cost-model.md: weight DMA 502, TRF load 64), then the 70-cycle pipeline, whose results are
    committed beside the Lane Folder: 636, the README's whole-kernel line."""
    result = _run("matmul.py", "matmul")
    document = tcp.trace(result)
    _check(document)
    assert _drawn(document) == [
        ("dma to_dm", "weight DMA", 0, 502), ("sub fetch", "TRF load", 502, 64),
        ("main contract_outer", "contract_outer", 566, 64), ("main contract_packet", "contract_packet", 566, 69),
        ("main contract_time", "contract_time", 571, 64), ("main contract_lane", "contract_lane", 571, 65),
        ("main commit", "commit", 572, 64),
    ]
    assert "  whole kernel: 636 cycles per slice (weight DMA 502, TRF load 64, contract_outer 64, contract_packet 37, " \
           "contract_time 32, contract_lane 33, commit 32)" in str(result).splitlines()
    assert _on(document, "kernel")[0]["args"] == {"total_cycles": 636, "bound_by": "weight DMA"}


def test_switch_gather_is_bound_by_the_switch_in_the_trace_and_the_text() -> None:
    result = _run("switch_gather.py", "switch_gather")
    document = tcp.trace(result)
    _check(document)
    (kernel,) = _on(document, "kernel")
    assert kernel["dur"] == 64 and kernel["args"] == {"total_cycles": 64, "bound_by": "switch"}
    switch = next(e for e in _engines(document) if e["name"] == "switch")
    assert (switch["ts"], switch["dur"]) == (0, 64)
    lines = str(result).splitlines()
    assert "  bound by: switch (64 cycles streaming of 64 in total)" in lines
    assert "  whole kernel bound by: switch (64 of 64 cycles, over 1 stream)" in lines
    assert result.to_json()["bound_by"] == "switch"


def test_rmsnorm_draws_every_pass_and_the_loads_of_its_vector_operands() -> None:
    """The transformer's rmsnorm: the mean square's two passes, the weight's DMA to DM (64 slices x 2 KiB
    in 8 requests of 256 bytes each, after the 500-cycle start-up: 1012), the weight and the mean square
    loaded into the VRF on the sub context, then the scaling pass: 517 + 3 + 1012 + 256 + 4 + 386."""
    document = tcp.trace(_rmsnorm())
    _check(document)
    assert [(s["name"], s["dur"]) for s in _on(document, "stream")] == [
        ("main: vector_final -> commit", 517), ("main: vector_final -> commit", 3), ("dma: to_dm", 1012),
        ("sub: begin -> to_vrf", 256), ("sub: begin -> to_vrf", 4), ("main: vector_final -> commit", 386)]
    assert document["otherData"]["total_cycles"] == 2178
    assert document["otherData"]["bound_by"] == "to_dm" and document["otherData"]["bound_cycles"] == 1012
    # The last pass streams 256 cycles on its Way4 float path with 2 ALUs of latency; cast, trim and commit
    # pass its 128 packets after it.
    assert _drawn(document)[-4:] == [("main vector_final", "vector_final", 1792, 258), ("main cast", "cast", 2050, 128),
                                     ("main commit_trim", "commit_trim", 2050, 128), ("main commit", "commit", 2050, 128)]
    dma = next(e for e in _engines(document) if e["name"] == "to_dm")
    assert dma["args"]["notes"] == ["512 requests of 131072 bytes"]


def test_a_sequence_of_results_runs_back_to_back_on_shared_tracks(tmp_path: Path) -> None:
    switch, matmul = _run("switch_gather.py", "switch_gather"), _run("matmul_dm.py", "matmul_dm")
    path = tmp_path / "schedule.json"
    document = tcp.trace([switch, matmul, switch], path)
    _check(document)
    assert json.loads(path.read_text()) == document
    kernels = [(e["name"], e["ts"], e["dur"]) for e in _on(document, "kernel")]
    assert kernels == [("switch_gather", 0, 64), ("matmul_dm", 64, 41), ("switch_gather", 105, 64)]
    assert [e["ts"] for e in _engines(document) if e["name"] == "commit"] == [0, 104, 105]
    # The switch bounds its two kernels' 128 cycles; the sub context's fetch bounds 32.
    assert document["otherData"] == {"unit": "cycles per slice", "kernels": 3, "streams": 4, "total_cycles": 169,
                                     "bound_by": "switch", "bound_cycles": 128}
    tracks = _tracks(document).values()
    assert (2, "fetch") in tracks and (3, "fetch") in tracks  # the main and sub contexts' fetch engines


def test_a_stream_behind_two_kernels_is_drawn_for_the_first() -> None:
    """The residual add of rmsnorm's result: the trace of the pair draws rmsnorm's streams once, so the
    residual's span is only its own, and the pair sums to the residual's whole schedule."""
    residual = _load(TRANSFORMER / "residual.py")
    normed = _rmsnorm()
    added = residual.residual(normed, residual.Activation(tcp.Tensor(np.ones(1024, np.float32), "H")))
    document = tcp.trace({"rmsnorm": normed, "residual": added, "again": added})
    _check(document)
    first, second = (schedule_of(x) for x in (normed, added))
    assert first is not None and second is not None
    assert [(k["name"], k["dur"]) for k in _on(document, "kernel")] == [
        ("rmsnorm", 2178), ("residual", second.total_cycles - 2178), ("again", 0)]
    assert second.streams[:6] == first.streams and len(second.streams) > 6


def test_what_cannot_be_drawn_is_refused_with_the_reason() -> None:
    with pytest.raises(tcp.LayoutError) as empty:
        tcp.trace([])
    assert (empty.value.stage, empty.value.rule) == ("trace", "Subject")
    with pytest.raises(tcp.LayoutError) as other:
        tcp.trace(42)
    assert "cannot draw a int: it is not a kernel's result" in str(other.value)
    with pytest.raises(tcp.LayoutError) as nothing:
        tcp.trace(())
    assert "cannot draw a tuple: it is not a kernel's result" in str(nothing.value)
    skipped = KernelResult("f.py", "k", "kernel", skipped="no inputs")
    with pytest.raises(tcp.LayoutError) as costless:
        tcp.trace(skipped)
    assert costless.value.rule == "NoCost" and "kernel k (SKIP) has no cost to draw" in str(costless.value)


def test_run_writes_the_trace_and_names_the_sequences_bounding_engine(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.json"
    assert main(["run", str(EXAMPLES / "matmul_dm.py"), "--timeout", "0", "--trace", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"schedule of 1 kernel: 41 cycles per slice, bound by: sub fetch (32 of 41 cycles, over 2 streams); " \
                      f"written to {path}"
    document = json.loads(path.read_text())
    _check(document)
    assert [e["name"] for e in _on(document, "kernel")] == ["matmul_dm"]


def test_the_decoder_entry_sums_to_its_reported_whole_kernel() -> None:
    """examples/transformer/decoder.py's ``decoder`` calls attention_norm, proj_o, residual, rmsnorm and the
    MLP: its trace draws every one of their streams, and they sum to the report's whole-kernel line."""
    result = _run("transformer/decoder.py", "decoder")
    assert result.whole is not None
    document = tcp.trace(result)
    _check(document)
    total = result.whole.total_cycles
    assert f"  whole kernel: {total} cycles per slice (" in "\n".join(str(result).splitlines())
    assert document["otherData"]["total_cycles"] == total
    streams = _on(document, "stream")
    assert len(streams) == len(result.whole.streams) > 20
    kinds = {s["name"].split(":")[0] for s in streams}
    assert kinds == {"main", "sub", "dma"}
    # The MLP's three weight loads: 3 x 3 MiB from HBM over 4 PEs, then 48 KiB into each slice's TRF.
    assert sorted(e["dur"] for e in _engines(document) if e["name"] == "to_dm")[-3:] == [25076] * 3
    assert [s["dur"] for s in streams if s["name"] == "sub: begin -> to_trf"].count(6144) == 3


def test_one_decoder_step_is_one_valid_trace(tmp_path: Path) -> None:
    """One layer for the token at position 700 (chunk 1): the projection, with the key and value written into
    the caches, attention over chunks 0 and 1 (its final online-softmax state), and the decoder. Each stream is
    drawn for the first kernel that needs it; the step's schedule is the decoder's result's whole schedule,
    everything included."""
    decoder, model = (__import__(name) for name in ("decoder", "model"))
    sizes, position = model.REFERENCE, 700
    layer = model.random_layer(sizes, 1)
    x = model.uniform_bf16(np.random.default_rng(2), (sizes.H,), 1.0)
    chunks = decoder.KvChunks.of(model.KvCache.empty(sizes, 2))
    with tcp.evaluator("fused"):
        done = decoder.layer_step(decoder.Hidden(tcp.Tensor(x.astype(np.float32), "H")),
                                  decoder.LayerTensors.of(layer), position, chunks)
    step: dict[str, Any] = {"projection": done.q, "attention (chunks 0 and 1)": done.state, "decoder": done.stream}
    path = tmp_path / "decoder_step.json"
    tcp.trace(step, path)
    document = json.loads(path.read_text())
    _check(document)
    kernels = _on(document, "kernel")
    assert [k["name"] for k in kernels] == ["projection", "attention (chunks 0 and 1)", "decoder"]
    seen: set[int] = set()
    for kernel, result in zip(kernels, step.values()):
        alone = schedule_of(result, seen)
        assert alone is not None and kernel["dur"] == kernel["args"]["total_cycles"] == alone.total_cycles
    # The decoder's result was built from every stream of the step but one, which no later kernel reads: the
    # running max's move to HBM after the last chunk.
    whole = schedule_of(step["decoder"])
    assert whole is not None
    drawn = Counter((s["name"], s["dur"]) for s in _on(document, "stream"))
    assert drawn - Counter((f"{s.unit}: {s.name}", s.cycles) for s in whole.streams) == Counter({("dma: to_hbm", 501): 1})
    assert document["otherData"]["total_cycles"] == whole.total_cycles + 501
    assert {name for pid, name in _tracks(document).values() if pid == 4} == {"to_dm", "to_hbm", "dma_scatter"}


_PIPELINED = st.builds(lambda cycles, latency: StageCost(Stage.CONTRACT_PACKET, cycles, latency, None, ()),
                       st.integers(0, 10**6), st.integers(0, 64))
_AFTER = st.builds(lambda cycles: StageCost(Stage.COMMIT, cycles, 0, None, ()), st.integers(0, 10**6))


@given(st.lists(_PIPELINED, max_size=5), st.lists(_AFTER, max_size=5))
def test_a_streams_drawing_ends_at_the_cost_models_total(head: list[StageCost], tail: list[StageCost]) -> None:
    """The drawing of any stream spans the model's own total (``cost.combine`` then ``cost.stream_cost``); its
    last engine ends there, no engine is drawn shorter than it streams, and the pipeline starts in order."""
    placed, end = place(head, tail)
    model = stream_cost(tuple(tail), combine(tuple(head), 0, None) if head else None)
    assert end == model.total_cycles
    if placed:
        assert max(start + length for _, start, length in placed) == end
    assert all(length >= stage.cycles and start >= 0 for stage, start, length in placed)
    starts = [start for _, start, _ in placed[:len(head)]]
    assert starts == sorted(starts) and all(start == end - max(s.cycles for s in tail) for _, start, _ in placed[len(head):])


def test_a_trace_path_that_is_not_a_path_is_refused() -> None:
    with pytest.raises(tcp.LayoutError) as refused:
        tcp.trace(_run("switch_gather.py", "switch_gather"), 3)  # type: ignore[arg-type]
    assert refused.value.rule == "Unwritable" and "cannot write the trace to 3: not a file name" in str(refused.value)


def test_an_unwritable_trace_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no such folder" / "t.json"
    with pytest.raises(tcp.LayoutError) as refused:
        tcp.trace(_run("switch_gather.py", "switch_gather"), missing)
    assert refused.value.rule == "Unwritable" and f"cannot write the trace to {missing}" in str(refused.value)
    assert main(["run", str(EXAMPLES / "switch_gather.py"), "--timeout", "0", "--trace", str(missing)]) == 2
    assert f"tcpdsl run: cannot write the trace to {missing}: No such file or directory" in capsys.readouterr().err
