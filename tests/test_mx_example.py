"""examples/mx_formats.py runs, reports what it promises, and uses only the public API."""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
from pathlib import Path

from tcpdsl.cli.run import run_path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "mx_formats.py"


def test_imports_only_the_public_api() -> None:
    tree = ast.parse(EXAMPLE.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    assert {name for name in imported if name.startswith("tcpdsl")} == {"tcpdsl"}
    assert imported <= {"__future__", "typing", "numpy", "numpy.typing", "tcpdsl"}


def test_main_reports_ragged_blocks_batches_clamps_and_layouts() -> None:
    spec = importlib.util.spec_from_file_location("mx_formats_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module.main()
    text = out.getvalue()
    assert "4 scale codes per row, the last block holds 4" in text
    assert "-> (3, 48, 40)" in text
    assert "'symmetric': -1.99609375 -> code -127, value -1.984375" in text
    assert "'full': -1.99609375 -> code -128, value -2.0" in text
    assert text.count("walk equals formula: True") == 2
    assert "max |error| against dense int32: 0" in text


def test_tcpdsl_run_treats_it_as_a_passing_main() -> None:
    summary = run_path(EXAMPLE, seed=0, evaluator="fused", progress=io.StringIO())
    assert [(r.kind, r.passed) for r in summary.results] == [("main", True)]
