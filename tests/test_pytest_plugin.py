"""``pytest --tcpdsl``: every kernel an item, with run's verdicts, in pytest's usual workflows.

Each test copies the user project of tests/ci_project into pytest's temporary folder and runs
pytest there (in process, except where workers are involved).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import tcpdsl
import tcpdsl.testing

pytest_plugins = ["pytester"]

# In-process runs forget the modules they import; numpy refuses a second import into one process,
# so everything a kernel run imports is imported here first.
assert tcpdsl.try_kernel is not None and tcpdsl.testing.check_kernel is not None

PROJECT = Path(__file__).resolve().parent / "ci_project"
OUTCOMES = {
    "PASSED kernels/good.py::matmul",
    "FAILED kernels/narrow.py::narrow_packet",
    "FAILED kernels/wrong.py::off_by_one",
}


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    for folder in ("kernels", "broken"):
        shutil.copytree(PROJECT / folder, pytester.path / folder)
    return pytester


def _outcomes(lines: list[str]) -> set[str]:
    return {line.split(" - ")[0] for line in lines if re.match(r"^(PASSED|FAILED) ", line)}


def test_one_item_per_kernel_with_run_verdicts(project: pytest.Pytester) -> None:
    result = project.runpytest("--tcpdsl", "kernels", "-rA", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2, skipped=1)
    assert _outcomes(result.outlines) == OUTCOMES
    out = result.stdout.str()
    # the skip names the kernel's line and the runner's reason
    assert re.search(r"SKIPPED \[1\] kernels/skipped\.py:\d+: parameter factor of scaled must be annotated", out)
    # a layout failure: the stage report with the rule and its hint, and the rule in the summary line
    assert "\nFAIL (fused, seed 0): [contract_outer] OutPacketFlits: OutPacket must be 1 or 2 flits" in out
    assert "FAILED kernels/narrow.py::narrow_packet - FAIL (fused, seed 0): [contract_out" in out
    assert "hint: make OutPacket 16 or 32 elements of bf16 (OutPacket B % 8 has 8)" in out
    # a wrong result: the first differing cells
    assert "first differing cells:\n  A=0, B=0: got " in out
    assert "... and 123 more of 128 cells" in out


def test_off_without_the_option(project: pytest.Pytester) -> None:
    result = project.runpytest("kernels", "-p", "no:cacheprovider")
    result.assert_outcomes()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_on_from_the_configuration(project: pytest.Pytester) -> None:
    project.makepyprojecttoml("[tool.pytest.ini_options]\ntcpdsl = true\n")
    # a packaging script runs on import: the plugin leaves it alone, as it does conftest.py
    (project.path / "kernels" / "setup.py").write_text("raise SystemExit('setup.py was imported')\n")
    result = project.runpytest("kernels", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2, skipped=1)


def test_a_module_that_does_not_import_is_one_collection_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--tcpdsl", "broken", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*broken.py does not import (at line 5): RuntimeError: this module is broken on purpose"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    going_on = project.runpytest("--tcpdsl", "kernels", "broken", "--continue-on-collection-errors", "-p", "no:cacheprovider")
    going_on.assert_outcomes(passed=1, failed=2, skipped=1, errors=1)


def test_keyword_selection_and_exit_first(project: pytest.Pytester) -> None:
    chosen = project.runpytest("--tcpdsl", "kernels", "-k", "matmul or scaled", "-p", "no:cacheprovider")
    chosen.assert_outcomes(passed=1, skipped=1, deselected=2)
    first = project.runpytest("--tcpdsl", "kernels", "-x", "-p", "no:cacheprovider")
    first.assert_outcomes(passed=1, failed=1)


def test_last_failed_reruns_the_failing_kernels(project: pytest.Pytester) -> None:
    project.runpytest("--tcpdsl", "kernels").assert_outcomes(passed=1, failed=2, skipped=1)
    again = project.runpytest("--tcpdsl", "kernels", "--lf", "-rA")
    again.assert_outcomes(failed=2)
    assert "rerun previous 2 failures" in again.stdout.str()
    assert _outcomes(again.outlines) == OUTCOMES - {"PASSED kernels/good.py::matmul"}


def test_evaluators_and_seed(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "--tcpdsl", "kernels", "--tcpdsl-evaluator", "both", "--tcpdsl-seed", "3", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=1, failed=2, skipped=1)
    assert "FAIL (fused, seed 3): result differs from the oracle" in result.stdout.str()
    simulated = project.runpytest("--tcpdsl", "kernels/good.py", "--tcpdsl-evaluator", "simulate", "-p", "no:cacheprovider")
    simulated.assert_outcomes(passed=1)
    refused = project.runpytest("--tcpdsl", "kernels", "--tcpdsl-evaluator", "fast", "-p", "no:cacheprovider")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert "invalid choice: 'fast'" in refused.stderr.str()


def test_workers_share_the_kernels(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--tcpdsl", "kernels", "-n", "2", "-rA", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2, skipped=1)
    assert _outcomes(result.outlines) == OUTCOMES


def test_kernels_in_test_files_are_collected_where_pytest_imports_them(project: pytest.Pytester) -> None:
    # a test package with a relative import: importing its modules any other way than pytest's fails
    (project.path / "checks").mkdir()
    (project.path / "checks" / "__init__.py").write_text("")
    (project.path / "checks" / "helpers.py").write_text("SCALE = 2\n")
    good = (PROJECT / "kernels" / "good.py").read_text()
    (project.path / "checks" / "test_local.py").write_text(
        "from .helpers import SCALE\n" + good.replace("def matmul(", "def local_matmul(")
        + "\n\ndef test_scale() -> None:\n    assert SCALE == 2\n"
    )
    (project.path / "checks" / "test_imports.py").write_text("from .test_local import local_matmul\n")
    result = project.runpytest("--tcpdsl", "checks", "-rA", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert _outcomes(result.outlines) == {"PASSED checks/test_local.py::local_matmul", "PASSED checks/test_local.py::test_scale"}


def test_a_file_named_on_the_command_line_gives_each_kernel_once(project: pytest.Pytester) -> None:
    result = project.runpytest("--tcpdsl", "kernels/good.py", "-rA", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert _outcomes(result.outlines) == {"PASSED kernels/good.py::matmul"}
