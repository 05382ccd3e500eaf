"""Running one kernel as ``tcpdsl run`` does: random inputs, its run-time checks, the chosen evaluator,
and the comparison with the numpy oracle. ``tcpdsl run``, ``tcp.try_kernel`` and the modules the
layout search emits all run kernels through here.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from tcpdsl.errors import LayoutError, TcpError
from tcpdsl.evaluate.backend import names
from tcpdsl.evaluate.select import evaluator as using
from tcpdsl.harness import oracle
from tcpdsl.harness.kernel_spec import KernelSpecError, describe, random_case
from tcpdsl.harness.report import KernelResult
from tcpdsl.harness.stages import chain_stages, flow_stages, reduced_contraction, vector_passes
from tcpdsl.numerics.flow import Flow

EVALUATORS: Final = tuple(names())


def failure(error: BaseException) -> str:
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
        chain, flow = getattr(value, "chain", None), getattr(value, "flow", None)
        if chain is not None:
            result.describe_chain(chain, chain_stages(chain))
        elif isinstance(flow, Flow) and flow.steps:
            result.describe_flow(flow, flow_stages(flow))
        elif isinstance(flow, Flow) and (reduced := reduced_contraction(flow)) is not None:
            result.describe_chain(reduced[0], chain_stages(reduced[0]), reduced[1])
        result.passes = vector_passes(value)
        result.max_error, result.tolerance = check.max_error, check.tolerance
        result.passed = check.passed
        if not check.passed:
            result.error = f"result differs from the oracle: max error {check.max_error:.3g} > tolerance {check.tolerance:.3g}"
    except (Exception, SystemExit) as error:  # any failure (sys.exit too) of a user kernel is a FAIL, not a crash
        result.passed = False
        result.error = failure(error)
    result.output = output.getvalue()
    result.seconds = time.perf_counter() - started
    return result


def try_kernel(fn: Callable[..., object], *, seed: int = 0, evaluator: str = "fused") -> KernelResult:
    """Run one ``@tcp.kernel`` as ``tcpdsl run`` does, from Python: random inputs fixed by ``seed``,
    its run-time checks, the chosen evaluator, and the comparison with the numpy oracle.

    The result's ``status`` is PASS, FAIL or SKIP, and printing it prints ``tcpdsl run``'s report
    of the kernel (its stages, derived parameters and estimated cost).
    """
    if evaluator not in EVALUATORS:
        raise LayoutError(
            "try_kernel", "Evaluator", f"unknown evaluator {evaluator!r}", hint=f"use one of {', '.join(EVALUATORS)}"
        )
    spec = describe(fn, strict=False)
    source = inspect.getsourcefile(inspect.unwrap(fn))  # describe() has refused anything but a kernel
    return run_kernel(spec, Path(source) if source else Path(spec.name), seed, evaluator)
