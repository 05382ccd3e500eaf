"""Running mypy with the tcpdsl plugin over files, and reading its diagnostics and inline expectations.

Expectations are pinned in the checked files as comments on the offending line:
``# E: <code> [<Rule>]`` for an error of mypy with the plugin (``Rule`` is the rule name in
``[stage] Rule: ...``), ``# N: <text>`` for its note containing ``text``, ``# plain: <code>`` for an
error of mypy without the plugin and ``# pyright: <rule>`` for an error of pyright in strict mode.
A module pins its run-time verdict as ``# runtime: <verdict>``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest
from mypy import api

CORPUS: Final = Path(__file__).resolve().parent
ROOT: Final = CORPUS.parent.parent
EXAMPLES: Final = ROOT / "examples"
STUBS: Final = ROOT / "stubs"

_LINE: Final = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?:(?P<column>\d+):)? (?P<severity>error|note): (?P<message>.*?)(?:  \[(?P<code>[\w-]+)\])?$"
)
_RULE: Final = re.compile(r"^\[(?P<stage>\w+)\] (?P<rule>\w+):")
_PIN_ERROR: Final = re.compile(r"E: (?P<code>[\w-]+)(?: (?P<rule>[A-Z]\w*))?")
_PIN_NOTE: Final = re.compile(r"N: (?P<text>[^#]*)")
_PIN_OTHER: Final = {"plain": re.compile(r"plain: (?P<code>[\w-]+)"), "pyright": re.compile(r"pyright: (?P<code>\w+)")}
_RUNTIME: Final = re.compile(r"^# runtime: (?P<verdict>.+)$", re.MULTILINE)
_VERDICT_CODES: Final = ("tcpdsl-layout", "tcpdsl-dtype", "tcpdsl-syntax")


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int
    severity: str
    message: str
    code: str | None
    column: int | None = None  # 1-based, with --show-column-numbers

    @property
    def rule(self) -> str | None:
        found = _RULE.match(self.message)
        return found["rule"] if found else None

    @property
    def stage(self) -> str | None:
        found = _RULE.match(self.message)
        return found["stage"] if found else None


def config(directory: Path, *, plugin: bool = True, numpy: bool = True) -> Path:
    """A mypy config: strict, the project stubs, tcpdsl's own modules analysed but not reported.

    ``numpy=False`` also skips numpy, ml_dtypes and the layers above the tensor types, which no kernel's
    types depend on: a fresh run then takes a few seconds.
    """
    name = f"{'plugin' if plugin else 'plain'}{'' if numpy else '-nonumpy'}"
    path = directory / f"mypy-{name}.ini"
    lines = ["[mypy]", "strict = True", f"mypy_path = {STUBS}", "show_error_codes = True"]
    if plugin:
        lines.append("plugins = tcpdsl.mypy_plugin")
    lines += ["", "[mypy-tcpdsl.*]", "follow_imports = silent"]
    # beartype's 300-odd typed modules matter only to the runtime checker, never to a kernel's types.
    skipped = ["beartype.*"] if numpy else ["beartype.*", "numpy.*", "ml_dtypes.*", "tcpdsl.mx.*", "tcpdsl.evaluate.*"]
    lines += ["", f"[mypy-{','.join(skipped)}]", "follow_imports = skip"]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(
    paths: list[Path], cache: Path, *, plugin: bool = True, numpy: bool = True, extra: tuple[str, ...] = ()
) -> tuple[list[Diagnostic], str]:
    """mypy over ``paths`` with a cache under ``cache`` (one per configuration): diagnostics and raw report."""
    cache.mkdir(parents=True, exist_ok=True)
    ini = config(cache, plugin=plugin, numpy=numpy)
    args = [
        "--config-file", str(ini),
        "--cache-dir", str(cache / ini.stem),
        "--no-error-summary", "--hide-error-context", "--no-pretty", "--show-absolute-path",
        *extra,
        *map(str, paths),
    ]
    out, err, _ = api.run(args)
    diagnostics = []
    for text in out.splitlines():
        found = _LINE.match(text)
        if found:
            diagnostics.append(
                Diagnostic(
                    found["path"],
                    int(found["line"]),
                    found["severity"],
                    found["message"],
                    found["code"],
                    int(found["column"]) if found["column"] else None,
                )
            )
    return diagnostics, out + err


def once(directory: Path, name: str, compute: Callable[[], None]) -> None:
    """Run ``compute()`` once per pytest run, even when several pytest-xdist workers ask for it.

    ``directory`` is common to the workers; the first to take the lock computes, the others wait until
    it has finished (and compute themselves if it failed).
    """
    done, lock = directory / f"{name}.done", directory / f"{name}.lock"
    deadline = time.monotonic() + 900
    while not done.exists():
        try:
            handle = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited too long for {lock}") from None
            time.sleep(0.2)
            continue
        try:
            compute()
            done.touch()
        finally:
            os.close(handle)
            lock.unlink()


def shared(directory: Path, name: str, compute: Callable[[], list[Diagnostic]]) -> list[Diagnostic]:
    """``compute()`` once per pytest run (see :func:`once`); every worker gets the same diagnostics."""
    result = directory / f"{name}.json"

    def store() -> None:
        result.write_text(json.dumps([dataclasses.asdict(d) for d in compute()]))

    once(directory, name, store)
    return [Diagnostic(**fields) for fields in json.loads(result.read_text())]


def run_directory(base: Path) -> Path:
    """A directory shared by the xdist workers of this pytest run (``base`` is a worker's own base temp)."""
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def of_file(diagnostics: list[Diagnostic], path: Path) -> list[Diagnostic]:
    return [d for d in diagnostics if Path(d.path).resolve() == path.resolve()]


def error_keys(diagnostics: list[Diagnostic]) -> list[tuple[int, str | None, str | None]]:
    """``(line, code, rule)`` of every error; the rule only for tcpdsl's stage and constructor errors."""
    return sorted(
        (d.line, d.code, d.rule if d.code in ("tcpdsl-layout", "tcpdsl-dtype") else None)
        for d in diagnostics
        if d.severity == "error"
    )


def pinned_errors(path: Path) -> list[tuple[int, str | None, str | None]]:
    keys = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        comment = line.partition("  # ")[2]
        for found in _PIN_ERROR.finditer(comment):
            keys.append((number, found["code"], found["rule"]))
    return sorted(keys)


def pinned_other(path: Path, checker: str) -> list[tuple[int, str]]:
    """``(line, code)`` pinned for mypy without the plugin (``plain``) or for ``pyright``."""
    keys = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        comment = line.partition("  # ")[2]
        keys += [(number, found["code"]) for found in _PIN_OTHER[checker].finditer(comment)]
    return sorted(keys)


def pinned_notes(path: Path) -> list[tuple[int, str]]:
    notes = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        comment = line.partition("  # ")[2]
        notes += [(number, found["text"].strip()) for found in _PIN_NOTE.finditer(comment)]
    return notes


def pinned_runtime(path: Path) -> str:
    found = _RUNTIME.search(path.read_text())
    if found is None:
        raise ValueError(f"{path.name} pins no '# runtime:' verdict")
    return found["verdict"].strip()


def static_verdict(diagnostics: list[Diagnostic]) -> str:
    """The first stage, constructor, dtype or syntax error; else the first other error code; else valid.

    The axis-name check has no run-time counterpart (variable names are invisible at run time), so it
    never decides the verdict.
    """
    errors = [d for d in diagnostics if d.severity == "error"]
    for d in errors:
        if d.code == "tcpdsl-syntax":
            return "syntax"
        if d.code in _VERDICT_CODES:
            return f"{d.stage} {d.rule}"
    others = [d.code or "error" for d in errors if d.code != "tcpdsl-axis"]
    if not others:
        return "valid"
    # A value whose declared type differs: beartype's HintViolation at run time.
    return "type" if others[0] in ("return-value", "arg-type", "assignment") else others[0]


def example_modules() -> list[Path]:
    """The examples, those in subfolders too (the transformer's modules import their siblings by name)."""
    return sorted(EXAMPLES.rglob("*.py"))


def corpus_modules() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*.py") if p.name.startswith(("ok_", "bad_", "user_ok_", "user_bad_")))


def shared_modules() -> list[Path]:
    """Modules the kernels import (axes, types, numpy helpers, a package of them): every checker must accept
    them as they are."""
    names = {p.name for p in corpus_modules()} | {"support.py", "__init__.py"}
    return sorted(p for p in [*CORPUS.glob("*.py"), *CORPUS.glob("*/*.py")] if p.name not in names)


def corpus_cache(base: Path) -> Path:
    """The cache directory of this pytest run's corpus check (complete once :func:`corpus_report` returned)."""
    return run_directory(base) / "mypy-corpus"


@pytest.fixture(scope="session")
def plain_report(tmp_path_factory: pytest.TempPathFactory) -> list[Diagnostic]:
    """mypy without the plugin over the corpus and the examples (numpy analysed: kernels use it)."""
    base = tmp_path_factory.getbasetemp()

    def compute() -> list[Diagnostic]:
        diagnostics, report = run(
            [*corpus_modules(), *shared_modules(), *example_modules()],
            run_directory(base) / "mypy-plain", plugin=False,
        )
        assert "INTERNAL ERROR" not in report and "Traceback" not in report, report
        return diagnostics

    return shared(run_directory(base), "plain-report", compute)


@pytest.fixture(scope="session")
def pyright_report(tmp_path_factory: pytest.TempPathFactory) -> list[Diagnostic]:
    """pyright in strict mode, with no plugin, over the corpus and the examples."""
    base = tmp_path_factory.getbasetemp()

    def compute() -> list[Diagnostic]:
        return run_pyright([*corpus_modules(), *shared_modules(), *example_modules()], run_directory(base))

    return shared(run_directory(base), "pyright-report", compute)


def run_pyright(paths: list[Path], directory: Path) -> list[Diagnostic]:
    """pyright (the PyPI package, with its own node) in strict mode; its errors as diagnostics."""
    config = directory / "pyrightconfig.json"
    config.write_text(json.dumps({
        "typeCheckingMode": "strict", "pythonVersion": "3.11", "stubPath": str(STUBS),
        "extraPaths": [str(ROOT), str(CORPUS), *sorted({str(p.parent) for p in example_modules()})],
    }))
    pyright = Path(sys.executable).parent / "pyright"
    done = subprocess.run(
        [str(pyright), "--outputjson", "-p", str(config), "--pythonpath", sys.executable, *map(str, paths)],
        capture_output=True, text=True,
    )
    report = json.loads(done.stdout)
    return [
        Diagnostic(d["file"], d["range"]["start"]["line"] + 1, d["severity"], d["message"], d.get("rule"))
        for d in report["generalDiagnostics"]
    ]


@pytest.fixture(scope="session")
def corpus_report(tmp_path_factory: pytest.TempPathFactory) -> list[Diagnostic]:
    """One mypy run with a fresh cache over the corpus and the examples, shared by the xdist workers."""
    base = tmp_path_factory.getbasetemp()

    def compute() -> list[Diagnostic]:
        diagnostics, report = run([*corpus_modules(), *shared_modules(), *example_modules()], corpus_cache(base))
        assert "INTERNAL ERROR" not in report and "Traceback" not in report, report
        return diagnostics

    return shared(run_directory(base), "corpus-report", compute)
