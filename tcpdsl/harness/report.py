"""The results of ``tcpdsl run``: one record per kernel, as a text table or as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tcpdsl.harness.schedule import Schedule
from tcpdsl.harness.stages import PassRow, StageRow, bound_by
from tcpdsl.cost import KernelCost
from tcpdsl.numerics.chain import Chain
from tcpdsl.numerics.flow import Flow

ERROR_LINES = 6  # a long error (a beartype violation) is cut in the text report, kept whole in JSON


@dataclass(frozen=True)
class OutputCheck:
    """How one output of a kernel (its result, an element of a tuple result, or an input it wrote in place)
    compares with the oracle."""

    label: str
    max_error: float
    tolerance: float
    passed: bool

    @property
    def excess(self) -> float:
        """The error as a share of its bound; an exact output (bound 0) with any error is infinitely over it."""
        if self.tolerance:
            return self.max_error / self.tolerance
        return float("inf") if self.max_error else 0.0


@dataclass
class KernelResult:
    """The outcome of one kernel (or one example ``main()``)."""

    file: str
    name: str
    kind: str  # "kernel", "main" or "import"
    passed: bool = False
    skipped: str | None = None  # why the runner could not drive it (neither a pass nor a failure)
    error: str | None = None
    seconds: float = 0.0
    output: str = ""
    dtype: str | None = None
    accumulator: str | None = None
    max_error: float | None = None
    tolerance: float | None = None
    stages: tuple[StageRow, ...] = ()
    cost: KernelCost | None = None
    # Every stream and move its result was built from, back to back: the whole kernel's cycles, what a
    # search plan's ``cycles`` counts and the trace draws (docs/trace.md).
    whole: Schedule | None = None
    passes: tuple[PassRow, ...] = ()  # the vector passes it went through, in order
    outputs: tuple[OutputCheck, ...] = ()  # each output compared; max_error and tolerance are the worst's

    @property
    def status(self) -> str:
        if self.skipped is not None:
            return "SKIP"
        return "PASS" if self.passed else "FAIL"

    def __str__(self) -> str:
        return render_result(self)

    def record(self, checks: tuple[OutputCheck, ...]) -> None:
        """The verdict of the comparisons: a pass when every output is within its bound."""
        self.outputs = checks
        worst = max(checks, key=lambda check: check.excess)
        self.max_error, self.tolerance = worst.max_error, worst.tolerance
        self.passed = all(check.passed for check in checks)
        self.error = "; ".join(
            f"{check.label} differs from the oracle: max error {check.max_error:.3g} > tolerance {check.tolerance:.3g}"
            for check in checks if not check.passed
        ) or None

    def describe_chain(self, chain: Chain, stages: tuple[tuple[StageRow, ...], KernelCost]) -> None:
        self.dtype, self.accumulator = chain.stream.dtype, chain.acc
        self.stages, self.cost = stages

    def describe_flow(self, flow: Flow, stages: tuple[tuple[StageRow, ...], KernelCost]) -> None:
        """A stream's engines: from the dtype it starts in to the one it ends in."""
        source = flow.root.source
        self.dtype = source.stream.dtype if isinstance(source, Chain) else flow.root.dtype
        self.accumulator = flow.dtype
        self.stages, self.cost = stages

    def to_json(self) -> dict[str, Any]:
        cost = self.cost
        return {
            "file": self.file,
            "kernel": self.name,
            "kind": self.kind,
            "status": self.status,
            "error": self.error,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 4),
            "dtype": self.dtype,
            "accumulator": self.accumulator,
            "max_error": self.max_error,
            "tolerance": self.tolerance,
            "stages": [
                {
                    "stage": row.stage,
                    "layout": row.layout,
                    "params": row.params,
                    "cycles": row.cost.cycles,
                    "latency": row.cost.latency,
                    "mac_utilisation": row.cost.mac_utilisation,
                    "notes": list(row.cost.notes),
                }
                for row in self.stages
            ],
            "outputs": [{"output": c.label, "max_error": c.max_error, "tolerance": c.tolerance, "passed": c.passed}
                        for c in self.outputs],
            "vector_passes": [{"steps": p.steps, "cycles": p.cycles, "latency": p.latency} for p in self.passes],
            "total_cycles": cost.total_cycles if cost else None,
            "bound_by": str(bound.stage) if cost and (bound := bound_by(cost)) else None,
            "mac_utilisation": cost.mac_utilisation if cost else None,
            "average_utilisation": cost.average_utilisation if cost else None,
            "accumulator_cells": cost.accumulator_cells if cost else None,
            "accumulator_use": cost.accumulator_use if cost else None,
            "whole_cycles": self.whole.total_cycles if self.whole else None,
            "whole_breakdown": dict(self.whole.breakdown) if self.whole else None,
            "whole_bound_by": engine[0] if self.whole and (engine := self.whole.bound_by) else None,
            "output": self.output,
        }


@dataclass
class RunSummary:
    seed: int
    evaluator: str
    results: list[KernelResult] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def skipped(self) -> int:
        return sum(r.skipped is not None for r in self.results)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed - self.skipped

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "evaluator": self.evaluator,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "results": [r.to_json() for r in self.results],
        }


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _bound(tolerance: float | None) -> str:
    return "exact" if tolerance == 0.0 else f"tolerance {tolerance:.3g}"


def table(rows: list[tuple[str, ...]], right: frozenset[int]) -> list[str]:
    """``rows`` (the first is the header) as indented aligned lines; columns in ``right`` align right."""
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [text.rjust(w) if c in right else text.ljust(w) for c, (text, w) in enumerate(zip(row, widths))]
        lines.append("  " + "  ".join(cells).rstrip())
    return lines


def bound_line(bound: tuple[str, int] | None, total: int, count: int, unit: str) -> str:
    """``bound by: ENGINE (N of TOTAL cycles, over COUNT UNITs)``: the engine charged the most cycles."""
    engine, cycles = bound if bound is not None else ("nothing", 0)
    return f"bound by: {engine} ({cycles} of {total} cycles, over {count} {unit}{'' if count == 1 else 's'})"


def render_result(result: KernelResult) -> str:
    """The text report of one kernel: a header, its stage table, and the comparison with the oracle."""
    types = f" ({result.dtype} -> {result.accumulator})" if result.dtype else ""
    lines = [f"{result.file}::{result.name}{types}  {result.status}  [{result.seconds:.2f} s]"]
    cost = result.cost
    if result.stages and cost is not None:
        rows: list[tuple[str, ...]] = [("stage", "layout", "derived parameters", "cycles", "latency", "MAC util")]
        for row in result.stages:
            rows.append(
                (row.stage, row.layout, row.params_text(), str(row.cost.cycles), str(row.cost.latency), _percent(row.cost.mac_utilisation))
            )
        rows.append(("total", "", "per slice", str(cost.total_cycles), "", _percent(cost.mac_utilisation)))
        lines += table(rows, frozenset({3, 4, 5}))
        slowest = bound_by(cost)
        if slowest is not None:
            plural = "" if slowest.cycles == 1 else "s"
            lines.append(f"  bound by: {slowest.stage} ({slowest.cycles} cycle{plural} streaming of {cost.total_cycles} in total)")
        if cost.accumulator_cells is not None:
            lines.append(f"  accumulator: {cost.accumulator_cells} of 1024 cells ({_percent(cost.accumulator_use)})")
    if result.whole is not None:
        whole = result.whole
        shares = ", ".join(f"{engine} {cycles}" for engine, cycles in whole.breakdown)
        lines.append(f"  whole kernel: {whole.total_cycles} cycles per slice ({shares})")
        lines.append("  whole kernel " + bound_line(whole.bound_by, whole.total_cycles, len(whole.streams), "stream"))
    for number, done in enumerate(result.passes, 1):
        if done.in_table and result.stages:
            continue  # its vector_final row above says it
        lines.append(f"  vector pass {number}: {done.steps} steps, {done.cycles} cycles streaming, {done.latency} cycles latency")
    if len(result.outputs) > 1:
        for check in result.outputs:
            lines.append(f"  {check.label}: max error vs oracle {check.max_error:.3g} ({_bound(check.tolerance)})")
    elif result.max_error is not None:
        lines.append(f"  max error vs oracle: {result.max_error:.3g} ({_bound(result.tolerance)})")
    if result.skipped is not None:
        lines.append("  skipped: " + result.skipped)
    if result.output.strip():
        lines += ["  output:"] + ["    " + line for line in result.output.rstrip().splitlines()]
    if result.error:
        error_lines = result.error.splitlines()
        lines += ["  error: " + error_lines[0]] + ["    " + line for line in error_lines[1:ERROR_LINES]]
        if len(error_lines) > ERROR_LINES:
            lines.append(f"    ... ({len(error_lines) - ERROR_LINES} more lines; --json has them all)")
    return "\n".join(lines)


def render_summary(summary: RunSummary) -> str:
    total = len(summary.results)
    skipped = f", {summary.skipped} skipped" if summary.skipped else ""
    return (
        f"{summary.passed} of {total} passed, {summary.failed} failed{skipped} "
        f"(seed {summary.seed}, evaluator {summary.evaluator})"
    )
