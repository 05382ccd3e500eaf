"""The kernel corpus under three checkers, and agreement of the plugin's verdict with the runtime's.

Each module is checked by mypy with the plugin, mypy without it and pyright in strict mode, and each
checker's errors must be exactly the ones pinned on their lines: a valid module has none (no false
errors), and a module with a mistake has it reported at its line by every checker that can know it
(no missed mistakes). The ``user_*`` modules are written as users write them: numpy around kernels,
helpers, loops, two-module kernels, locals and function-local axes.

Each checker runs once per pytest run over all modules and the examples, shared by the xdist workers.
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
    example_modules,
    of_file,
    pinned_errors,
    pinned_notes,
    pinned_other,
    pinned_runtime,
    plain_report,  # the corpus mypy run without the plugin, as a fixture
    pyright_report,  # the corpus pyright run, as a fixture
    shared_modules,
    static_verdict,
)
from tcpdsl.errors import DtypeError, LayoutError, MappingSyntaxError, TcpError
from tcpdsl.tensors.checking import HintViolation
from tcpdsl.harness.kernel_spec import kernels_in, random_inputs
from tcpdsl.verify.stages import STAGES

MODULES = corpus_modules()
STAGE_METHODS = frozenset(STAGES)  # the stage table's method names
IDS = [p.stem for p in MODULES]


def test_corpus_is_large_and_mixed() -> None:
    valid = [p for p in MODULES if pinned_runtime(p) == "valid"]
    users = [p for p in MODULES if p.name.startswith("user_")]
    assert len(MODULES) >= 80
    assert len(valid) >= 20 and len(MODULES) - len(valid) >= 50
    assert len(users) >= 25 and sum(p.name.startswith("user_ok_") for p in users) >= 12


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_pinned_diagnostics(path: Path, corpus_report: list[Diagnostic]) -> None:
    found = of_file(corpus_report, path)
    assert error_keys(found) == pinned_errors(path), "\n".join(map(str, found))
    notes = [d for d in found if d.severity == "note"]
    for line, text in pinned_notes(path):
        assert any(n.line == line and text in n.message for n in notes), (line, text, notes)


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_plain_mypy_diagnostics(path: Path, plain_report: list[Diagnostic]) -> None:
    """Without the plugin mypy knows stage order, dtype pairs and declared types, at their lines."""
    found = [(d.line, d.code or "") for d in of_file(plain_report, path) if d.severity == "error"]
    assert sorted(found) == pinned_other(path, "plain"), "\n".join(map(str, of_file(plain_report, path)))


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_pyright_diagnostics(path: Path, pyright_report: list[Diagnostic]) -> None:
    """pyright strict, no plugin: the pinned errors; in a module with a mistake, also their Unknown types."""
    errors = [d for d in of_file(pyright_report, path) if d.severity == "error"]
    primary = sorted({(d.line, d.code or "") for d in errors if not (d.code or "").startswith("reportUnknown")})
    pinned = pinned_other(path, "pyright")
    assert primary == pinned, "\n".join(map(str, errors))
    if not pinned:
        assert errors == [], "\n".join(map(str, errors))


@pytest.mark.parametrize("path", shared_modules(), ids=lambda p: p.stem)
def test_shared_modules_are_clean_everywhere(
    path: Path, corpus_report: list[Diagnostic], plain_report: list[Diagnostic], pyright_report: list[Diagnostic]
) -> None:
    for report in (corpus_report, plain_report, pyright_report):
        assert [d for d in of_file(report, path) if d.severity == "error"] == []


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
        # Two sizes of one axis are found where the second is declared statically, but only where layouts
        # of the two meet at run time: the same rule, said of different places.
        if not errors or pinned_runtime(path) in ("valid", "attr-defined", "mapping AxisSizeConflict"):
            continue
        error = runtime_error(path)
        assert isinstance(error, TcpError)
        assert str(error).splitlines()[0] in {d.message for d in errors}, path.name
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize("path", example_modules(), ids=lambda p: str(p.relative_to(EXAMPLES).with_suffix("")))
def test_examples_are_clean_under_strict(
    path: Path, corpus_report: list[Diagnostic], plain_report: list[Diagnostic], pyright_report: list[Diagnostic]
) -> None:
    for report in (corpus_report, plain_report, pyright_report):
        assert [d for d in of_file(report, path) if d.severity == "error"] == []


# -- the runtime side ---------------------------------------------------------------------------------
@pytest.fixture(autouse=True, scope="module")
def _corpus_on_path() -> Iterator[None]:
    sys.path.insert(0, str(CORPUS))
    yield
    sys.path.remove(str(CORPUS))


def runtime_error(path: Path) -> BaseException | None:
    """Import the module, run each of its kernels on random inputs, then its ``main()``; what it raised."""
    name = f"static_corpus_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        kernels = kernels_in(module)
        main = getattr(module, "main", None)
        assert kernels or main, f"{path.name} defines no @tcp.kernel and no main()"
        for kernel in kernels:
            kernel.function(**random_inputs(kernel.function, seed=0))
        if main is not None:
            main()
    except TcpError as error:
        return error
    except AttributeError as error:
        if error.name not in STAGE_METHODS and not str(error).startswith("module 'tcpdsl' has no attribute"):
            raise
        return error
    finally:
        del sys.modules[name]
    return None


def runtime_verdict(path: Path) -> str:
    """``valid``, ``syntax``, ``attr-defined`` (a stage out of order, a misspelt name), ``type`` or ``<stage> <rule>``."""
    error = runtime_error(path)
    if error is None:
        return "valid"
    if isinstance(error, MappingSyntaxError):
        return "syntax"
    if isinstance(error, AttributeError):
        return "attr-defined"
    if isinstance(error, HintViolation):
        return "type"
    assert isinstance(error, (LayoutError, DtypeError)), repr(error)
    return f"{error.stage} {error.rule}"
