"""``tcpdsl run FILE_OR_DIR``: run every kernel example against the numpy oracle and report its cost.

A kernel example is a ``@tcp.kernel`` function whose parameters are annotated tensor types: it gets
random inputs (fixed by ``--seed``), runs with its run-time checks on the chosen evaluator, and its
result is compared with the oracle. A module with no kernel but a ``main()`` function is run by
calling ``main()``. Progress goes to stderr; the report (or ``--json``) to stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import io
import json
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from tcpdsl.cli.report import KernelResult, RunSummary, render_result, render_summary
from tcpdsl.cli.stages import chain_stages
from tcpdsl.errors import LayoutError, TcpError

EVALUATORS: Final = ("fused", "simulate")
USAGE_ERROR: Final = 2


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


def _failure(error: BaseException) -> str:
    """The message of a failure: our own errors as they are, anything else with its type and origin."""
    if isinstance(error, TcpError):
        return str(error)
    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {error}{where}"


def run_kernel(spec: Any, file: Path, seed: int, evaluator: str) -> KernelResult:
    """Run one kernel on random inputs and compare it with the oracle.

    A kernel the runner cannot drive, or whose result the oracle cannot follow, is skipped with
    the reason: it is neither a pass nor a failure.
    """
    from tcpdsl.evaluate import oracle
    from tcpdsl.evaluate.select import evaluator as using
    from tcpdsl.tensors.kernel_spec import KernelSpecError, random_case

    started = time.perf_counter()
    output = io.StringIO()
    result = KernelResult(str(file), spec.name, "kernel")
    if spec.skip is not None:
        result.skipped = spec.skip
        return result
    try:
        with contextlib.redirect_stdout(output), using(evaluator):
            try:
                case = random_case(spec, seed)
            except KernelSpecError as error:
                result.skipped = str(error)
                return result
            value = spec.function(**case.inputs)
            try:
                check = oracle.check(value, case.logical)
            except LayoutError as error:
                if error.rule != "NoOracle":
                    raise
                result.skipped = error.detail
                return result
        chain = getattr(value, "chain", None)
        if chain is not None:
            result.describe_chain(chain, chain_stages(chain))
        result.max_error, result.tolerance = check.max_error, check.tolerance
        result.passed = check.passed
        if not check.passed:
            result.error = f"result differs from the oracle: max error {check.max_error:.3g} > tolerance {check.tolerance:.3g}"
    except (Exception, SystemExit) as error:  # any failure (sys.exit too) of a user kernel is a FAIL, not a crash
        result.passed = False
        result.error = _failure(error)
    result.output = output.getvalue()
    result.seconds = time.perf_counter() - started
    return result


def try_kernel(fn: Callable[..., object], *, seed: int = 0, evaluator: str = "fused") -> KernelResult:
    """Run one ``@tcp.kernel`` as ``tcpdsl run`` does, from Python: random inputs fixed by ``seed``,
    its run-time checks, the chosen evaluator, and the comparison with the numpy oracle.

    The result's ``status`` is PASS, FAIL or SKIP, and printing it prints ``tcpdsl run``'s report
    of the kernel (its stages, derived parameters and estimated cost).
    """
    from tcpdsl.tensors.kernel_spec import describe

    if evaluator not in EVALUATORS:
        raise LayoutError(
            "try_kernel", "Evaluator", f"unknown evaluator {evaluator!r}", hint=f"use one of {', '.join(EVALUATORS)}"
        )
    spec = describe(fn, strict=False)
    source = inspect.getsourcefile(inspect.unwrap(fn))  # describe() has refused anything but a kernel
    return run_kernel(spec, Path(source) if source else Path(spec.name), seed, evaluator)


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
        result.error = _failure(error)
    result.output = output.getvalue()
    result.seconds = time.perf_counter() - started
    return result


def run_path(path: Path, seed: int, evaluator: str, progress: Any) -> RunSummary:
    """Run every example under ``path``, reporting each step to ``progress`` (a text stream)."""
    from tcpdsl.tensors.kernel_spec import kernels_in

    summary = RunSummary(seed, evaluator)
    files = discover(path)
    for index, file in enumerate(files):
        print(f"[{index + 1}/{len(files)}] {file}", file=progress, flush=True)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                module = load(file, index)
            kernels = kernels_in(module)
        except (Exception, SystemExit) as error:  # an example that does not even import (or exits) is a failure
            message = _failure(error)
            summary.results.append(KernelResult(str(file), "(import)", "import", passed=False, error=message))
            print(f"    import failed: {message.splitlines()[0]}", file=progress, flush=True)
            continue
        entries: list[KernelResult] = []
        if kernels:
            for spec in kernels:
                entries.append(run_kernel(spec, file, seed, evaluator))
                _progress_line(entries[-1], progress)
        elif callable(getattr(module, "main", None)):
            entries.append(run_main(module, file))
            _progress_line(entries[-1], progress)
        else:
            print("    no kernel and no main(): skipped", file=progress, flush=True)
        summary.results += entries
    return summary


def _progress_line(result: KernelResult, progress: Any) -> None:
    reason = f": {result.skipped}" if result.skipped is not None else ""
    print(f"    {result.name}: {result.status} ({result.seconds:.2f} s){reason}", file=progress, flush=True)


def execute(args: argparse.Namespace) -> int:
    path: Path = args.path
    if not path.exists():
        print(f"tcpdsl run: no such file or directory: {path}", file=sys.stderr)
        return USAGE_ERROR
    summary = run_path(path, args.seed, args.evaluator, sys.stderr)
    if args.json:
        print(json.dumps(summary.to_json(), indent=2))
    else:
        for result in summary.results:
            print(render_result(result))
            print()
        print(render_summary(summary))
    return 0 if summary.results and summary.failed == 0 else 1
