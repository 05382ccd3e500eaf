"""``tcpdsl run`` against modules and kernels that would sink it: axes too long to list, modules that
never finish importing, kernels that never return, processes that die; and its JUnit report."""

from __future__ import annotations

import os
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl.algebra import Digit
from tcpdsl.cli.main import main
from tcpdsl.harness.kernel_spec import MAX_RANDOM_ELEMENTS, _coordinates, _spells_fewer

HEADER = '''
import tcpdsl as tcp
from tcpdsl import m

Chip, Cluster, Slice = m["1"], m["1 # 2"], m["1 # 256"]
'''


def matmul(name: str, a: int, body: str = "") -> str:
    """A module's text defining the README matmul as ``name`` over an axis A of ``a`` rows;
    ``body`` runs first in the kernel."""
    return f'''
A, B, C = tcp.axis("A", {a}), tcp.axis("B", 32), tcp.axis("C", 8)
Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]
Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]


@tcp.kernel
def {name}(x: Stream, w: Weights) -> Out:
    {body or "pass"}
    trf = w.to_trf(lane=m["C"], element=m["B"])
    return (
        x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"], mode=tcp.LaneMode.INTERLEAVED)
    )
'''


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def report(path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, ET.Element]:
    """Run ``tcpdsl run`` with a JUnit report; the status and the report's root."""
    xml = path.parent / "report.xml" if path.is_file() else path / "report.xml"
    status = main(["run", str(path), "--junit-xml", str(xml), *options])
    capsys.readouterr()
    return status, ET.parse(xml).getroot()


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {case.attrib["name"]: case for case in root.iter("testcase")}


# -- axes too long to list ----------------------------------------------------------------------
_DIGITS = st.lists(st.tuples(st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 24]), st.integers(2, 4)), min_size=1, max_size=3)
_NESTED = st.lists(st.tuples(st.integers(0, 10), st.integers(1, 3)), min_size=1, max_size=3)


def _terms(digits: list[tuple[int, int]], n: int = 96) -> tuple[Digit, ...] | None:
    terms = tuple(Digit("A", n, s, c) for s, c in digits)
    spans = sorted((t.stride, t.top) for t in terms)
    if any(high > low for (_, high), (low, _) in zip(spans, spans[1:])):
        return None  # overlapping digits are no tensor's terms
    return terms


@given(_DIGITS, _DIGITS)
def test_a_proper_part_is_found_as_by_listing_coordinates(mine: list[tuple[int, int]], theirs: list[tuple[int, int]]) -> None:
    ours, other = _terms(mine), _terms(theirs)
    if ours is not None and other is not None:
        assert _spells_fewer(ours, other) == (_coordinates(ours) < _coordinates(other))


@given(_NESTED, _NESTED)
def test_digits_that_nest_are_compared_as_digits(mine: list[tuple[int, int]], theirs: list[tuple[int, int]]) -> None:
    # Strides and tops that are powers of two nest, as a layout's digits do: compared as digits.
    ours = _terms([(1 << shift, 1 << width) for shift, width in mine], 2**43)
    other = _terms([(1 << shift, 1 << width) for shift, width in theirs], 2**43)
    if ours is not None and other is not None:
        assert _spells_fewer(ours, other) == (_coordinates(ours) < _coordinates(other))


def test_digits_of_a_long_axis_are_compared_at_once() -> None:
    whole, low = Digit("A", 2**40, 1, 2**40), Digit("A", 2**40, 1, 2**20)
    started = time.perf_counter()
    assert _spells_fewer((low,), (whole,)) and not _spells_fewer((whole,), (low,)) and not _spells_fewer((whole,), (whole,))
    assert time.perf_counter() - started < 0.1


def test_a_kernel_over_an_axis_of_2_pow_40_is_skipped_at_once() -> None:
    namespace: dict[str, object] = {}
    exec(compile(textwrap.dedent(HEADER + matmul("huge", 2**40)), "huge.py", "exec"), namespace)
    started = time.perf_counter()
    result = tcp.try_kernel(namespace["huge"])  # type: ignore[arg-type]
    assert time.perf_counter() - started < 2
    assert result.status == "SKIP"
    assert result.skipped == (
        f"its inputs hold {2**40 * 32 + 8 * 32} elements, more than the {MAX_RANDOM_ELEMENTS} a runner draws at "
        "random; run it on data of your own"
    )


def test_tcpdsl_run_skips_a_module_over_an_axis_of_2_pow_40(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Once this module was reported as "import failed: MemoryError", though it imported fine.
    path = write(tmp_path, "huge.py", HEADER + matmul("huge", 2**40))
    status, root = report(path, capsys)
    assert status == 0
    skipped = cases(root)["huge"].find("skipped")
    assert skipped is not None and skipped.attrib["message"].startswith(f"its inputs hold {2**40 * 32 + 8 * 32} elements")


# -- time limits and dying processes ------------------------------------------------------------
def test_a_module_that_never_finishes_importing_fails_within_its_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pids = tmp_path / "pids"
    write(tmp_path, "a_ok.py", HEADER + matmul("first", 32))
    write(tmp_path, "b_stuck.py", f'''
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pids)!r}, "w").write(str(child.pid))
        while True:
            pass
    ''')
    write(tmp_path, "c_ok.py", HEADER + matmul("last", 32))
    started = time.perf_counter()
    status, root = report(tmp_path, capsys, "--timeout", "3")
    assert time.perf_counter() - started < 30
    assert status == 1
    found = cases(root)
    assert [found["first"].find("failure"), found["last"].find("failure")] == [None, None]
    failure = found["(import)"].find("failure")
    assert failure is not None and failure.attrib["message"] == (
        "timed out: its import was still running when the module reached its time limit of 3 s "
        "(tcpdsl run --timeout); the rest of the module was not run"
    )
    # The process the module started went with it: nothing is left running.
    pid = int(pids.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_a_kernel_that_never_returns_stops_its_module_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "kernels.py", HEADER + matmul("before", 32) + matmul("stuck", 32, "while True: pass")
                 + matmul("after", 32))
    status, root = report(path, capsys, "--timeout", "3")
    assert status == 1
    found = cases(root)
    assert list(found) == ["before", "stuck"]
    assert found["before"].find("failure") is None
    failure = found["stuck"].find("failure")
    assert failure is not None and failure.attrib["message"].startswith(
        "timed out: kernel stuck was still running when the module reached its time limit of 3 s"
    )
    assert 1 < float(found["stuck"].attrib["time"]) < 10


def test_a_module_whose_process_dies_is_a_failure_and_the_run_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "a_dies.py", "import os\nos._exit(7)\n")
    write(tmp_path, "b_ok.py", HEADER + matmul("fine", 32))
    status, root = report(tmp_path, capsys)
    assert status == 1
    found = cases(root)
    failure = found["(import)"].find("failure")
    assert failure is not None
    assert failure.attrib["message"] == "the module's process ended (exit status 7) during its import; the rest of the module was not run"
    assert found["fine"].find("failure") is None


def test_no_time_limit_runs_modules_in_this_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "pid"
    write(tmp_path, "where.py", f"import os\n\ndef main() -> None:\n    open({str(marker)!r}, 'w').write(str(os.getpid()))\n")
    assert main(["run", str(tmp_path), "--timeout", "0"]) == 0
    assert int(marker.read_text()) == os.getpid()
    assert main(["run", str(tmp_path)]) == 0
    assert int(marker.read_text()) != os.getpid()
    capsys.readouterr()


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "soon"])
def test_a_bad_time_limit_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", ".", "--timeout", value])
    assert exit_.value.code == 2
    assert "--timeout" in capsys.readouterr().err


# -- the JUnit report ---------------------------------------------------------------------------
BAD = '''
@tcp.kernel
def narrow(
    x: tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]],
    w: tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]],
) -> tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    return (
        x.contract_outer(trf, out_time=m["A, B / 4"], out_packet=m["B % 4"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"], mode=tcp.LaneMode.INTERLEAVED)
    )


@tcp.kernel
def undrivable(
    t: tcp.ContractTimeTensor[tcp.f32, Chip, Cluster, Slice, m["C"], m["A"], m["1"]],
) -> tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]:
    print("never printed")
    return t.contract_lane(out_time=m["A"], out_packet=m["C"])
'''


def test_the_junit_report_has_a_testcase_per_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "kernels.py", HEADER + matmul("good", 32, "print('hello from good')") + BAD)
    status, root = report(path, capsys, "--seed", "4")
    assert status == 1
    assert root.tag == "testsuites"
    [suite] = list(root)
    assert suite.tag == "testsuite"
    for element in (root, suite):
        assert {k: element.attrib[k] for k in ("tests", "failures", "errors", "skipped")} == {
            "tests": "3", "failures": "1", "errors": "0", "skipped": "1"}
        assert float(element.attrib["time"]) >= 0
    properties = {p.attrib["name"]: p.attrib["value"] for p in suite.iter("property")}
    assert properties == {"seed": "4", "evaluator": "fused"}
    found = cases(suite)
    assert list(found) == ["good", "narrow", "undrivable"]
    for case in found.values():
        assert case.attrib["classname"].endswith(".kernels") and case.attrib["file"] == str(path)
        assert float(case.attrib["time"]) >= 0
    good, narrow, skipped = found.values()
    assert [child.tag for child in good] == ["system-out"] and good[0].text == "hello from good\n"
    [failure] = list(narrow)
    assert failure.tag == "failure" and failure.attrib["type"] == "kernel"
    assert failure.attrib["message"].startswith("[contract_outer] OutPacketFlits: OutPacket must be 1 or 2 flits")
    assert failure.text is not None and f"{path}::narrow" in failure.text and "error: [contract_outer]" in failure.text
    [skip] = list(skipped)
    assert skip.tag == "skipped"
    assert "parameter t of undrivable must be annotated with a subscripted CollectTensor, TrfTensor, DmTensor, HbmTensor or VrfTensor" in skip.attrib["message"]


def test_a_clean_run_exits_zero_and_an_unwritable_report_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "kernels.py", HEADER + matmul("good", 32))
    status, root = report(path, capsys)
    assert status == 0 and root.attrib["failures"] == "0" and root.attrib["tests"] == "1"
    assert main(["run", str(path), "--junit-xml", str(tmp_path / "missing" / "report.xml")]) == 2
    assert "cannot write the JUnit report" in capsys.readouterr().err


def test_nothing_to_run_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["run", str(tmp_path / "empty")]) == 2
    assert "nothing to run: no kernel and no main()" in capsys.readouterr().err
    write(tmp_path, "inert.py", "X = 1\n")
    assert main(["run", str(tmp_path / "inert.py")]) == 2


def test_text_the_xml_cannot_hold_is_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "noisy.py", "def main() -> None:\n    print('bell \\x07 here')\n")
    status, root = report(path, capsys)
    assert status == 0
    [case] = root.iter("testcase")
    out = case.find("system-out")
    assert out is not None and out.text == "bell \ufffd here\n"
