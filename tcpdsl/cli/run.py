"""``tcpdsl run FILE_OR_DIR``: run every kernel example against the numpy oracle and report its cost.

A kernel example is a ``@tcp.kernel`` function whose parameters are annotated tensor types or
integers with an annotated range: it gets random inputs (fixed by ``--seed``), runs with its run-time
checks on the chosen evaluator, and each of its outputs (its result, every element of a tuple result,
every input it wrote in place) is compared with the oracle (docs/tensors.md §6). A module with no kernel but a ``main()`` function is run by
calling ``main()``. Progress goes to stderr; the report (or ``--json``) to stdout, and with
``--junit-xml`` to a JUnit file as well. Each module runs in a child process under a time limit
(:mod:`tcpdsl.cli.isolated`); the exit statuses are in docs/ci.md.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import io
import json
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from tcpdsl.errors import LayoutError
from tcpdsl.cli.isolated import CAN_FORK, Emit, Event, run_isolated
from tcpdsl.harness.junit import junit_xml
from tcpdsl.harness.kernel_spec import kernels_in
from tcpdsl.harness.report import KernelResult, RunSummary, render_result, render_summary
from tcpdsl.harness.run import EVALUATORS, failure, run_kernel
from tcpdsl.harness.trace import describe, trace

CLEAN: Final = 0
FAILURES: Final = 1
USAGE_ERROR: Final = 2
DEFAULT_TIMEOUT: Final = 300.0  # seconds per module: far above any example's, well below a CI job's own limit


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "run",
        help="run kernel examples against the numpy oracle",
        description="Run every kernel example in FILE_OR_DIR on random inputs, compare with the numpy oracle "
        "and print the stage chain with its derived parameters and estimated cost.",
    )
    parser.add_argument("path", metavar="FILE_OR_DIR", type=Path, help="an example module or a directory of them")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--evaluator", choices=EVALUATORS, default="fused", help="how to evaluate chains (default fused)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--junit-xml", metavar="FILE", type=Path, help="also write the results to FILE as a JUnit XML report")
    parser.add_argument(
        "--trace", metavar="FILE", type=Path,
        help="also write the schedule of the kernels that ran, back to back, to FILE as Chrome trace-event JSON "
        "(open it in Perfetto or chrome://tracing)",
    )
    parser.add_argument(
        "--timeout", metavar="SECONDS", type=_seconds, default=DEFAULT_TIMEOUT,
        help=f"time limit of each module, its import and its kernels together, in a process of its own "
        f"(default {DEFAULT_TIMEOUT:g}; 0: no limit, run in this process)",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"the time limit must be a finite number of seconds >= 0, got {text!r}")
    return value


def discover(path: Path) -> list[Path]:
    """The example modules under ``path``: ``*.py`` files, skipping private and hidden names."""
    if path.is_file():
        return [path]
    found = []
    for file in sorted(path.rglob("*.py")):
        parts = file.relative_to(path).parts
        if any(p.startswith((".", "_")) for p in parts):
            continue
        found.append(file)
    return found


@contextlib.contextmanager
def _importable_from(folder: Path) -> Iterator[None]:
    """Let an example import its sibling modules while it loads."""
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def load(file: Path, index: int) -> types.ModuleType:
    """Import ``file`` as a fresh module (registered, so annotations resolve against its globals)."""
    name = f"_tcpdsl_example_{index}_{file.stem}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with _importable_from(file.parent):
        spec.loader.exec_module(module)
    return module


def run_main(module: types.ModuleType, file: Path) -> KernelResult:
    """Run a module's ``main()``; it fails if ``main()`` raises."""
    started = time.perf_counter()
    output = io.StringIO()
    result = KernelResult(str(file), "main", "main")
    try:
        with contextlib.redirect_stdout(output):
            module.main()
        result.passed = True
    except (Exception, SystemExit) as error:  # the example's own failure (sys.exit too), reported as FAIL
        result.passed = False
        result.error = failure(error)
    result.output = output.getvalue()
    result.seconds = time.perf_counter() - started
    return result


def run_module(file: Path, index: int, seed: int, evaluator: str, emit: Emit) -> None:
    """Import ``file`` and run its kernels (or its ``main()``), reporting each step to ``emit``."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            module = load(file, index)
        kernels = kernels_in(module)
    except (Exception, SystemExit) as error:  # an example that does not even import (or exits) is a failure
        emit(("result", KernelResult(str(file), "(import)", "import", passed=False, error=failure(error))))
        return
    if kernels:
        for spec in kernels:
            emit(("start", spec.name))
            emit(("result", run_kernel(spec, file, seed, evaluator)))
    elif callable(getattr(module, "main", None)):
        emit(("start", "main"))
        emit(("result", run_main(module, file)))
    else:
        emit(("note", "no kernel and no main(): skipped"))


def run_path(path: Path, seed: int, evaluator: str, progress: Any, timeout: float = DEFAULT_TIMEOUT) -> RunSummary:
    """Run every example under ``path``, reporting each step to ``progress`` (a text stream).

    Each module runs in a child process that may take at most ``timeout`` seconds (0: no limit, in
    this process); see :mod:`tcpdsl.cli.isolated`.
    """
    summary = RunSummary(seed, evaluator)
    files = discover(path)

    def show(event: Event) -> None:
        kind, value = event
        if isinstance(value, KernelResult):
            summary.results.append(value)
            if value.kind == "import":
                first = (value.error or "").partition("\n")[0]
                print(f"    import failed: {first}", file=progress, flush=True)
            else:
                _progress_line(value, progress)
        elif kind == "note":
            print(f"    {value}", file=progress, flush=True)

    for index, file in enumerate(files):
        print(f"[{index + 1}/{len(files)}] {file}", file=progress, flush=True)
        body = functools.partial(run_module, file, index, seed, evaluator)
        if timeout and CAN_FORK:
            run_isolated(body, show, file, timeout)
        else:
            body(show)
    return summary


def _progress_line(result: KernelResult, progress: Any) -> None:
    reason = f": {result.skipped}" if result.skipped is not None else ""
    print(f"    {result.name}: {result.status} ({result.seconds:.2f} s){reason}", file=progress, flush=True)


def execute(args: argparse.Namespace) -> int:
    path: Path = args.path
    if not path.exists():
        print(f"tcpdsl run: no such file or directory: {path}", file=sys.stderr)
        return USAGE_ERROR
    summary = run_path(path, args.seed, args.evaluator, sys.stderr, args.timeout)
    if args.json:
        print(json.dumps(summary.to_json(), indent=2))
    else:
        for result in summary.results:
            print(render_result(result))
            print()
        print(render_summary(summary))
    if args.junit_xml is not None:
        try:
            args.junit_xml.write_text(junit_xml(summary), encoding="utf-8")
        except OSError as error:
            print(f"tcpdsl run: cannot write the JUnit report {args.junit_xml}: {error.strerror or error}", file=sys.stderr)
            return USAGE_ERROR
    if args.trace is not None:
        costed = [result for result in summary.results if result.whole is not None]
        try:
            if costed:
                schedule = trace(costed, args.trace)
                if not args.json:
                    print(f"{describe(schedule)}; written to {args.trace}")
            else:
                print(f"tcpdsl run: no trace written: no kernel in {path} has a cost to draw", file=sys.stderr)
        except LayoutError as error:
            print(f"tcpdsl run: {error.detail}", file=sys.stderr)
            return USAGE_ERROR
    if not summary.results:
        print(f"tcpdsl run: nothing to run: no kernel and no main() in {path}", file=sys.stderr)
        return USAGE_ERROR
    return CLEAN if summary.failed == 0 else FAILURES
