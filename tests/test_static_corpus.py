"""The kernel corpus: per-line diagnostics of the plugin, and agreement of its verdict with the runtime's.

All modules (and the examples) go through one mypy run with a fresh cache directory per pytest run
(``corpus_report``, shared with the other static tests).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from static_corpus.support import (
    CORPUS,
    EXAMPLES,
    Diagnostic,
    corpus_modules,
    corpus_report,  # the corpus mypy run, as a fixture
    error_keys,
    of_file,
    pinned_errors,
    pinned_notes,
    pinned_runtime,
    static_verdict,
)
from tcpdsl.errors import DtypeError, LayoutError, MappingSyntaxError, TcpError
from tcpdsl.tensors.kernel_spec import kernels_in, random_inputs

MODULES = corpus_modules()
STAGE_METHODS = frozenset({"to_trf", "contract_outer", "contract_packet", "contract_time", "contract_lane"})
IDS = [p.stem for p in MODULES]


def test_corpus_is_large_and_mixed() -> None:
    valid = [p for p in MODULES if pinned_runtime(p) == "valid"]
    assert len(MODULES) >= 40
    assert len(valid) >= 8 and len(MODULES) - len(valid) >= 30


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_pinned_diagnostics(path: Path, corpus_report: list[Diagnostic]) -> None:
    found = of_file(corpus_report, path)
    assert error_keys(found) == pinned_errors(path), "\n".join(map(str, found))
    notes = [d for d in found if d.severity == "note"]
    for line, text in pinned_notes(path):
        assert any(n.line == line and text in n.message for n in notes), (line, text, notes)


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_static_verdict_agrees_with_runtime(path: Path, corpus_report: list[Diagnostic]) -> None:
    runtime = runtime_verdict(path)
    assert runtime == pinned_runtime(path)
    assert static_verdict(of_file(corpus_report, path)) == runtime


def test_error_text_is_the_runtime_text(corpus_report: list[Diagnostic]) -> None:
    """Each stage error line is the first line of ``str(error)`` of the exception the kernel raises."""
    checked = 0
    for path in MODULES:
        errors = [d for d in of_file(corpus_report, path) if d.code in ("tcpdsl-layout", "tcpdsl-dtype")]
        if not errors or pinned_runtime(path) in ("valid", "attr-defined"):
            continue
        error = runtime_error(path)
        assert isinstance(error, TcpError)
        assert str(error).splitlines()[0] in {d.message for d in errors}, path.name
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
def test_examples_are_clean_under_strict(path: Path, corpus_report: list[Diagnostic]) -> None:
    assert [d for d in of_file(corpus_report, path) if d.severity == "error"] == []


# -- the runtime side ---------------------------------------------------------------------------------
@pytest.fixture(autouse=True, scope="module")
def _corpus_on_path() -> Iterator[None]:
    sys.path.insert(0, str(CORPUS))
    yield
    sys.path.remove(str(CORPUS))


def runtime_error(path: Path) -> BaseException | None:
    """Import the module and run each of its kernels on random inputs; the exception raised, if any."""
    name = f"static_corpus_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        kernels = kernels_in(module)
        assert kernels, f"{path.name} defines no @tcp.kernel"
        for kernel in kernels:
            kernel.function(**random_inputs(kernel.function, seed=0))
    except TcpError as error:
        return error
    except AttributeError as error:
        if error.name not in STAGE_METHODS:
            raise
        return error
    finally:
        del sys.modules[name]
    return None


def runtime_verdict(path: Path) -> str:
    """``valid``, ``syntax``, ``attr-defined`` (a stage called out of order) or ``<stage> <rule>``."""
    error = runtime_error(path)
    if error is None:
        return "valid"
    if isinstance(error, MappingSyntaxError):
        return "syntax"
    if isinstance(error, AttributeError):
        return "attr-defined"
    assert isinstance(error, (LayoutError, DtypeError)), repr(error)
    return f"{error.stage} {error.rule}"
