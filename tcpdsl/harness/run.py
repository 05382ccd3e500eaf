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
from tcpdsl.harness.kernel_spec import Case, KernelSpec, KernelSpecError, describe, random_case
from tcpdsl.harness.oracle import OracleCheck
from tcpdsl.harness.report import KernelResult, OutputCheck
from tcpdsl.harness.schedule import schedule_of
from tcpdsl.harness.stages import chain_stages, flow_stages, reduced_contraction, vector_passes
from tcpdsl.numerics.flow import Flow

EVALUATORS: Final = tuple(names())
WRITABLE: Final = ("DmTensor", "HbmTensor")


def failure(error: BaseException) -> str:
    """The message of a failure: our own errors as they are, anything else with its type and origin."""
    if isinstance(error, TcpError):
        return str(error)
    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {error}{where}"


def outputs(value: object, inputs: dict[str, object], before: dict[str, object]) -> list[tuple[str, object]]:
    """What a run checks: the result (each element of a tuple result), then every input tensor the kernel
    wrote in place (its flow changed during the call) that is not also returned."""
    found: list[tuple[str, object]]
    if value is None:  # a kernel that only writes into its inputs
        found = []
    else:
        found = [(f"result {i}", part) for i, part in enumerate(value)] if isinstance(value, tuple) else [("result", value)]
    returned = {id(part) for _, part in found}
    for name, tensor in inputs.items():
        if name in before and getattr(tensor, "flow", None) is not before[name] and id(tensor) not in returned:
            found.append((f"{name} (written in place)", tensor))
    return found


def _costliest(found: list[tuple[str, object]]) -> object:
    """The output whose engines the report shows: the one with the most cycles (a kernel's bound)."""
    def cycles(part: object) -> int:
        chain, flow = getattr(part, "chain", None), getattr(part, "flow", None)
        if chain is not None:
            return chain_stages(chain)[1].total_cycles
        return flow_stages(flow)[1].total_cycles if isinstance(flow, Flow) and flow.steps else -1

    return max((part for _, part in found), key=cycles)


def kernel_outputs(spec: KernelSpec, case: Case) -> list[tuple[str, object]]:
    """Call the kernel on ``case``: its outputs (:func:`outputs`), refused with ``NoOracle`` when it has none."""
    # Only DM and HBM tensors have write views, so only they can change in place.
    before = {p.name: getattr(case.inputs[p.name], "flow") for p in spec.params if p.family in WRITABLE}
    found = outputs(spec.function(**case.inputs), case.inputs, before)
    if not found:
        raise LayoutError("oracle", "NoOracle", "the kernel returns nothing and writes none of its DM or HBM inputs: "
                          "there is no output to compare")
    return found


def check_outputs(found: list[tuple[str, object]], case: Case) -> list[tuple[str, OracleCheck]]:
    """Compare each output with the oracle; one it cannot follow raises its ``NoOracle`` error, naming the
    output when there are several."""
    checks = []
    for label, part in found:
        try:
            checks.append((label, oracle.check(part, case.logical)))
        except LayoutError as error:
            if error.rule != "NoOracle" or len(found) == 1:
                raise
            raise LayoutError(error.stage, error.rule, f"{label}: {error.detail}", hint=error.hint) from error
    return checks


def compare_outputs(spec: KernelSpec, case: Case) -> tuple[list[tuple[str, object]], list[tuple[str, OracleCheck]]]:
    """Call the kernel on ``case`` and compare each of its outputs with the oracle."""
    found = kernel_outputs(spec, case)
    return found, check_outputs(found, case)


def run_kernel(spec: Any, file: Path, seed: int, evaluator: str) -> KernelResult:
    """Run one kernel on random inputs and compare each of its outputs with the oracle.

    A kernel the runner cannot drive, or an output the oracle cannot follow, makes the kernel a skip
    with the reason: it is neither a pass nor a failure.
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
            try:
                found = kernel_outputs(spec, case)
                result.whole = schedule_of(tuple(part for _, part in found))  # shown even when the oracle cannot follow
                checks = check_outputs(found, case)
            except LayoutError as error:
                if error.rule != "NoOracle":
                    raise
                result.skipped = error.detail
                return result
        shown = _costliest(found)
        chain, flow = getattr(shown, "chain", None), getattr(shown, "flow", None)
        in_table = None  # a vector pass the stage table shows as its vector_final row
        if chain is not None:
            result.describe_chain(chain, chain_stages(chain))
        elif isinstance(flow, Flow) and flow.steps:
            result.describe_flow(flow, flow_stages(flow))
            in_table = flow.root.source
        elif isinstance(flow, Flow) and (reduced := reduced_contraction(flow)) is not None:
            result.describe_chain(reduced, chain_stages(reduced))
        result.passes = vector_passes(*(part for _, part in found), shown=in_table)
        result.record(tuple(OutputCheck(label, c.max_error, c.tolerance, c.passed) for label, c in checks))
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
