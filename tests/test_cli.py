"""The command line: ``explain`` output, ``run`` reports and exit codes, ``check`` diagnostics."""

from __future__ import annotations

import json
import textwrap
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tcpdsl.cli.check import Diagnostic, find_config, generated_config, parse_output, underline
from tcpdsl.cli.explain import parse_axes
from tcpdsl.cli.main import main

HEADER = '''
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 4)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]
'''

GOOD_KERNEL = '''
@tcp.kernel
def small_matmul(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    return (
        x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"], mode=tcp.LaneMode.INTERLEAVED)
    )
'''

BAD_KERNEL = '''
@tcp.kernel
def narrow_packet(x: Stream, w: Weights) -> object:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    return x.contract_outer(trf, out_time=m["A"], out_packet=m["B % 8"])
'''


def write(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


# -- explain ------------------------------------------------------------------------------------

EXPLAIN_C_D = """\
expression: C, D # 4
canonical:  C, D # 4
size:       8 (6 live, 2 padding)
axes:       C=2, D=3

slots (innermost first):
slot  stride  extent  live  term  padding
----  ------  ------  ----  ----  --------
0     1       4       3     D     # 1 of 4
1     4       2       2     C     -

cells:
  | +0       +1       +2       +3
---------------------------------
0 | C:0 D:0  C:0 D:1  C:0 D:2  #
4 | C:1 D:0  C:1 D:1  C:1 D:2  #
"""


def test_explain_prints_canonical_form_slots_and_cells(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "C, D # 4", "--axes", "C=2,D=3"]) == 0
    out, err = capsys.readouterr()
    assert out == EXPLAIN_C_D
    assert err == ""


def test_explain_shows_the_canonical_form_of_a_split_axis(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "B / 4, B % 4", "--axes", "B=16"]) == 0
    assert "canonical:  B\n" in capsys.readouterr().out


def test_explain_writes_a_well_formed_svg(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "cells.svg"
    assert main(["explain", "C, D # 4", "--axes", "C=2,D=3", "--svg", str(target)]) == 0
    root = ET.fromstring(target.read_text(encoding="utf-8"))
    rects = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if "cell" in r.get("class", "")]
    assert len(rects) == 8
    assert [r.get("fill") for r in rects].count("url(#tcp-hatch)") == 2
    assert f"wrote {target}" in capsys.readouterr().out


def test_explain_syntax_error_shows_a_caret_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "A, B / 16)", "--axes", "A=4,B=32"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith("tcpdsl explain: ")
    assert lines[1:] == ["  A, B / 16)", "           ^"]
    assert "Traceback" not in err


def test_explain_layout_error_names_rule_and_hint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "A / 3", "--axes", "A=32"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tcpdsl explain: [mapping] StrideIndivisible: stride 3 does not divide size 32")
    assert "hint:" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("axes", "message"),
    [
        ("A=x", "--axes: expected NAME=SIZE with a positive integer size, got 'A=x'"),
        ("A=0", "--axes: expected NAME=SIZE with a positive integer size, got 'A=0'"),
        ("A=①", "--axes: expected NAME=SIZE with a positive integer size, got 'A=①'"),
        ("A=2,A=3", "--axes: axis A is given twice"),
    ],
)
def test_explain_rejects_bad_axes(axes: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "A", "--axes", axes]) == 2
    assert capsys.readouterr().err == f"tcpdsl explain: {message}\n"


def test_parse_axes() -> None:
    assert parse_axes(" A=32, Bat=4096 ,") == {"A": 32, "Bat": 4096}
    assert parse_axes("") == {}


def test_explain_unwritable_svg_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "A", "--axes", "A=2", "--svg", str(tmp_path / "missing" / "x.svg")]) == 2
    assert "cannot write" in capsys.readouterr().err


# -- run ----------------------------------------------------------------------------------------


def test_run_passing_kernel_reports_stages_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "good.py", HEADER + GOOD_KERNEL)
    assert main(["run", str(tmp_path), "--json", "--seed", "3"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert (report["seed"], report["evaluator"], report["passed"], report["failed"]) == (3, "fused", 1, 0)
    [result] = report["results"]
    assert set(result) >= {
        "file", "kernel", "kind", "status", "error", "seconds", "dtype", "accumulator", "max_error", "tolerance",
        "stages", "total_cycles", "mac_utilisation", "average_utilisation", "accumulator_cells", "accumulator_use",
    }
    assert (result["kernel"], result["kind"], result["status"], result["error"]) == ("small_matmul", "kernel", "PASS", None)
    assert (result["dtype"], result["accumulator"]) == ("bf16", "f32")
    assert [s["stage"] for s in result["stages"]] == ["contract_outer", "contract_packet", "contract_time", "contract_lane"]
    outer, packet, _, lane = result["stages"]
    assert outer["params"]["PackSize"] == 2 and outer["mac_utilisation"] == 1.0
    assert outer["layout"] == "Lane C | Time A | Packet B"
    assert packet["params"]["TreeDepth"] == 5 and packet["latency"] == 5
    assert lane["params"] == {"Mode": "Interleaved", "InnerTime": 1, "AccumulatorCells": 8}
    assert result["total_cycles"] == 2 * 4 + 5 + 1
    assert result["accumulator_cells"] == 8
    assert 0 <= result["max_error"] <= result["tolerance"]
    assert "[1/1]" in err and "small_matmul: PASS" in err


def test_run_text_report_has_a_table_per_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "good.py", HEADER + GOOD_KERNEL)
    assert main(["run", str(path), "--evaluator", "simulate"]) == 0
    out = capsys.readouterr().out
    assert f"{path}::small_matmul (bf16 -> f32)  PASS" in out
    assert "contract_packet  Packet 1" in out
    assert "accumulator: 8 of 1024 cells (0.8%)" in out
    assert out.rstrip().endswith("1 of 1 passed, 0 failed (seed 0, evaluator simulate)")


def test_run_failing_kernel_exits_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "a_good.py", HEADER + GOOD_KERNEL)
    write(tmp_path, "b_bad.py", HEADER + BAD_KERNEL)
    assert main(["run", str(tmp_path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["passed"], report["failed"]) == (1, 1)
    bad = report["results"][1]
    assert (bad["kernel"], bad["status"]) == ("narrow_packet", "FAIL")
    assert bad["error"].startswith("[contract_outer] OutPacketFlits: OutPacket must be 1 or 2 flits")


def test_run_calls_main_of_modules_without_kernels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "hello.py", "def main() -> None:\n    print('hello from main')\n")
    assert main(["run", str(tmp_path)]) == 0
    assert "hello from main" in capsys.readouterr().out
    write(tmp_path, "raises.py", "def main() -> None:\n    raise RuntimeError('broken example')\n")
    assert main(["run", str(tmp_path), "--json"]) == 1
    results = {r["file"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    broken = results[str(tmp_path / "raises.py")]
    assert broken["status"] == "FAIL" and broken["error"].startswith("RuntimeError: broken example")


def test_run_reports_modules_that_do_not_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "broken.py", "import tcpdsl as tcp\nA = tcp.axis('a', 4)\n")
    write(tmp_path, "_private.py", "raise SystemExit('never imported')\n")
    assert main(["run", str(tmp_path), "--json"]) == 1
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert (result["kind"], result["status"]) == ("import", "FAIL")
    assert "InvalidAxisName" in result["error"]


def test_run_missing_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "nowhere")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


# -- check --------------------------------------------------------------------------------------


def test_underline_picks_the_mapping_the_message_names() -> None:
    source = '    return x.contract_outer(trf, out_time=m["A"], out_packet=m["B % 8"])'
    error = Diagnostic("k.py", 5, 12, "error", "[contract_outer] OutPacketFlits: OutPacket must be 1 or 2 flits")
    marks = underline(source, error)
    assert marks is not None
    assert marks.strip() == "^" * len('m["B % 8"]')
    assert marks.index("^") == source.index('m["B % 8"]')
    # a mapping quoted in the attached hint decides when no argument role is named
    quoted = Diagnostic("k.py", 5, 12, "error", "[contract_time] Indivisible: something")
    marks = underline(source, quoted, "hint: look at A here")
    assert marks is not None and marks.index("^") == source.index('m["A"]')
    # other errors get a single caret at their column
    plain = Diagnostic("k.py", 5, 12, "error", 'Stream? has no attribute "contract_outer"')
    assert underline(source, plain) == " " * 11 + "^"


def test_parse_output_reads_positions() -> None:
    items = parse_output('k.py:3:5: error: boom  [misc]\nk.py:4: note: see\nSuccess: no issues found')
    assert items == [
        Diagnostic("k.py", 3, 5, "error", "boom  [misc]"),
        Diagnostic("k.py", 4, None, "note", "see"),
        "Success: no issues found",
    ]


def test_check_config_enables_the_plugin(tmp_path: Path) -> None:
    assert "plugins = tcpdsl.mypy_plugin" in generated_config()
    assert find_config(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text('[tool.mypy]\nplugins = ["tcpdsl.mypy_plugin"]\n', encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    assert find_config(tmp_path / "pkg") == tmp_path / "pyproject.toml"


def test_check_reports_a_layout_error_under_its_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pytestconfig: pytest.Config
) -> None:
    # a fresh module name each run: mypy's cache would otherwise replay the last run's file path
    path = write(tmp_path, f"kernel_{uuid.uuid4().hex[:12]}.py", HEADER + BAD_KERNEL)
    assert pytestconfig.cache is not None
    cache = pytestconfig.cache.mkdir("tcpdsl-check-mypy")  # kept between runs: a warm mypy takes seconds
    status = main(["check", str(path), "--", "--cache-dir", str(cache)])
    out, err = capsys.readouterr()
    assert status == 1
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "[contract_outer] OutPacketFlits" in line)
    assert lines[at].startswith(f"{path}:")
    assert "[tcpdsl-" in lines[at]
    source, marks = lines[at + 1], lines[at + 2]
    assert source.strip().startswith("return x.contract_outer(")
    assert marks.index("^") == source.index('m["B % 8"]')
    assert marks.strip() == "^" * len('m["B % 8"]')
    assert "tcpdsl check: 1 error in" in err


def test_check_takes_several_paths_then_mypy_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pytestconfig: pytest.Config
) -> None:
    good = write(tmp_path, f"good_{uuid.uuid4().hex[:12]}.py", "x: int = 1\n")
    bad = write(tmp_path, f"kernel_{uuid.uuid4().hex[:12]}.py", HEADER + BAD_KERNEL)
    assert pytestconfig.cache is not None
    cache = pytestconfig.cache.mkdir("tcpdsl-check-mypy")
    status = main(["check", str(good), str(bad), "--", "--cache-dir", str(cache)])
    out, err = capsys.readouterr()
    assert status == 1
    assert "[contract_outer] OutPacketFlits" in out
    assert f"tcpdsl check: 1 error in {good} {bad}" in err


def test_check_refuses_a_missing_path_or_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "absent.py")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    assert main(["check", "--", "--strict"]) == 2
    assert "name at least one file or directory" in capsys.readouterr().err
