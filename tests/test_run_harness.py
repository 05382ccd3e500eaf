"""``tcpdsl run`` on kernels its harness once got wrong: partial inputs, split reductions,
reduced broadcast axes, and kernels it cannot drive (skipped, never failing their neighbours)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tcpdsl.cli.main import main

HEADER = '''
import tcpdsl as tcp
from tcpdsl import m

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
'''

# K = 32 split over the slices (K / 16) and the packet (K % 16): only the packet is summed.
SPLIT_K = '''
A = tcp.axis("A", 8)
K = tcp.axis("K", 32)
R = tcp.axis("R", 8)
Spread = m["K / 16 # 256"]


@tcp.kernel
def split_reduction(
    x: tcp.CollectTensor[tcp.bf16, Chip, Cluster, Spread, m["A"], m["K % 16"]],
    w: tcp.CollectTensor[tcp.bf16, Chip, Cluster, Spread, m["R"], m["K % 16"]],
) -> tcp.ContractTensor[tcp.f32, Chip, Cluster, Spread, m["A"], m["R"]]:
    trf = w.to_trf(lane=m["R"], element=m["K % 16"])
    return (
        x.contract_outer(trf, out_time=m["A"], out_packet=m["K % 16"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["R"], mode=tcp.LaneMode.INTERLEAVED)
    )
'''

# T is in OutTime but in neither operand; contract_time sums it away: the sum times |T|.
TIME_BROADCAST = '''
A = tcp.axis("A", 4)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
T = tcp.axis("T", 5)


@tcp.kernel
def time_broadcast(
    x: tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]],
    w: tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]],
) -> tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    return (
        x.contract_outer(trf, out_time=m["A, T"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"], mode=tcp.LaneMode.INTERLEAVED)
    )
'''

# A kernel taking a stage result the runner cannot build, next to one it can.
UNDRIVABLE = TIME_BROADCAST + '''

@tcp.kernel
def finish(
    t: tcp.ContractTimeTensor[tcp.f32, Chip, Cluster, Slice, m["C"], m["A"], m["1"]],
) -> tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]:
    return t.contract_lane(out_time=m["A"], out_packet=m["C"])
'''


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(tmp_path: Path, body: str, evaluator: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, dict[str, object]]]:
    """Run ``body`` (a module's kernels) or, when it names one, an example file."""
    path = EXAMPLES / body
    if not path.is_file():
        path = tmp_path / "kernels.py"
        path.write_text(textwrap.dedent(HEADER + body), encoding="utf-8")
    status = main(["run", str(path), "--json", "--evaluator", evaluator])
    report = json.loads(capsys.readouterr().out)
    return status, {r["kernel"]: r for r in report["results"]}


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
# valid_size_32.py is the reference's kernel over every other element of B, held as m["B / 2"].
@pytest.mark.parametrize("body", ["valid_size_32.py", SPLIT_K, TIME_BROADCAST], ids=["half_b", "split_k", "time_broadcast"])
def test_valid_kernels_pass(tmp_path: Path, body: str, evaluator: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, results = run(tmp_path, body, evaluator, capsys)
    assert status == 0
    assert [r["status"] for r in results.values()] == ["PASS"], results


def test_a_kernel_the_runner_cannot_drive_is_skipped_with_its_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, results = run(tmp_path, UNDRIVABLE, "fused", capsys)
    assert status == 0
    assert results["time_broadcast"]["status"] == "PASS"
    skipped = results["finish"]
    assert skipped["status"] == "SKIP"
    assert "parameter t of finish must be annotated with a subscripted CollectTensor, TrfTensor, DmTensor, HbmTensor or VrfTensor" in str(skipped["skipped"])


def test_the_text_report_counts_skips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "kernels.py"
    path.write_text(textwrap.dedent(HEADER + UNDRIVABLE), encoding="utf-8")
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "finish  SKIP" in out and "1 of 2 passed, 0 failed, 1 skipped" in out
