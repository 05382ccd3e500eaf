"""What the search returns: plans, each a whole kernel with its cost, its source and a way to run it.

``Plan.run`` executes the plan's own module text through the public tensor API, so what runs is
exactly what ``.source()`` shows and what ``--emit`` writes.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import digit_text, parse
from tcpdsl.cost import KernelCost, WholeKernelCost
from tcpdsl.errors import LayoutError
from tcpdsl.planner.chain import Folded
from tcpdsl.planner.grid import Machine
from tcpdsl.planner.problem import STAGE, Problem
from tcpdsl.planner.source import Texts, check_kernel_name, module_source, texts
from tcpdsl.planner.tiling import Tiling
from tcpdsl.tensors.device import Device, Topology
from tcpdsl.numerics.logical import Tensor
from tcpdsl.verify import LaneMode


@dataclass(frozen=True, eq=False)
class Plan:
    """One valid kernel for the einsum, with the cost model's figures (per slice).

    ``cycles`` is the whole kernel: loading the weights, streaming, contracting, draining and
    committing (docs/cost-model.md, "The whole kernel"); ``breakdown`` gives each engine's busy
    cycles; ``tcpdsl run`` prints both (per tile) as its "whole kernel" line for the emitted module.
    ``cost`` is the contraction alone, whose ``total_cycles``, ``mac_utilisation`` and
    ``accumulator_use`` are the "total" row of its stage table.
    ``streamed`` is 0 or 1: which einsum operand the kernel streams.
    """

    problem: Problem
    chain: Folded
    rank: int
    machine: Machine
    tiling: Tiling | None = None
    _module: dict[str, types.ModuleType] = field(default_factory=dict, repr=False)

    @property
    def cost(self) -> KernelCost:
        return self.chain.cost

    @property
    def whole(self) -> WholeKernelCost:
        return self.chain.whole

    @property
    def tiles(self) -> int:
        """How many times the kernel runs: once per tile of weights beyond the TRF, else once."""
        return 1 if self.tiling is None else self.tiling.count

    @property
    def cycles(self) -> int:
        return self.tiles * self.whole.total_cycles

    @property
    def breakdown(self) -> dict[str, int]:
        """Cycles per engine over every tile: weight DMA, TRF load, any input moves, the four
        contraction stages (streaming plus latency) and the commit."""
        return {engine: self.tiles * cycles for engine, cycles in self.whole.breakdown}

    @property
    def trf_bytes(self) -> int:
        """The weight bytes each slice's TRF holds."""
        return self.whole.trf_bytes

    @property
    def mac_utilisation(self) -> float:
        return self.cost.mac_utilisation

    @property
    def accumulator_use(self) -> float:
        use = self.cost.accumulator_use
        assert use is not None  # a plan always reaches contract_lane
        return use

    @property
    def accumulator_cells(self) -> int:
        cells = self.cost.accumulator_cells
        assert cells is not None
        return cells

    @property
    def streamed(self) -> int:
        return 1 if self.problem.swapped else 0

    @property
    def mode(self) -> LaneMode:
        return self.chain.mode

    @property
    def layouts(self) -> Texts:
        """Every mapping of the kernel as its module writes it."""
        return texts(self.chain)

    @property
    def name(self) -> str:
        return f"plan_{self.rank}"

    def source(self, name: str | None = None) -> str:
        """A complete kernel module (axes, aliases, tensor types, one ``@tcp.kernel`` function)."""
        kernel = self.name if name is None else name
        p = self.problem
        check_kernel_name(kernel, p)
        headline = f'Plan {self.rank} for the einsum "{p.einsum}" ({sizes_text(p)}), found by tcp.search.'
        return module_source(p, self.chain, kernel, headline, self.tiling)

    def _kernel_module(self) -> types.ModuleType:
        found = self._module.get("module")
        if found is None:
            found = types.ModuleType(f"tcpdsl_plan_{self.rank}")
            exec(compile(self.source(), f"<{self.name}>", "exec"), found.__dict__)  # the plan's own text
            self._module["module"] = found
        return found

    def run(self, x: npt.ArrayLike, w: npt.ArrayLike) -> npt.NDArray[Any]:
        """The result for logical arrays ``x`` and ``w`` in the einsum's operand order, axes in its result order."""
        module = self._kernel_module()
        p = self.problem
        first, second = (_squeezed(p, array, index) for index, array in enumerate((x, w)))
        stream, weight = (second, first) if p.swapped else (first, second)
        device = Device(Topology(chips=self.machine.chips, pes=self.machine.pes))
        if self.tiling is not None:
            whole = (Tensor(values, axes, sizes=p.written) for values, axes in ((stream, p.stream_axes), (weight, p.weight_axes)))
            out = getattr(module, f"{self.name}_tiles")(device, *whole)
            values = np.asarray(out.to_numpy(p.out_axes))
            return values.reshape(tuple(p.given_sizes[a] for a in p.given[2]))
        collected = module.Stream(device.main, _tensor(p, stream, p.stream_axes))
        loaded = module.Weights(device.sub, _tensor(p, weight, p.weight_axes))
        result = getattr(module, self.name)(collected, loaded)
        logical = result.to_tensor()
        if logical.whole:
            values = np.asarray(logical.to_numpy(p.out_axes))
        else:  # a plan for a tile holds a digit of an axis, which to_numpy reads under its own text
            parts = ", ".join(digit_text(t) for a in p.out_axes for t in logical.terms if t.axis == a)
            values = np.asarray(logical.to_numpy(parse(parts, logical.sizes)))
        return values.reshape(tuple(p.given_sizes[a] for a in p.given[2]))

    def summary(self) -> dict[str, Any]:
        """The plan as JSON-ready data: its figures and every mapping."""
        return {
            "rank": self.rank,
            "cycles": self.cycles,
            "breakdown": self.breakdown,
            "contraction_cycles": self.cost.total_cycles,
            "trf_bytes": self.trf_bytes,
            "mac_utilisation": self.mac_utilisation,
            "accumulator_use": self.accumulator_use,
            "accumulator_cells": self.accumulator_cells,
            "streamed": self.streamed,
            "tiles": self.tiles,
            "layouts": dict(vars(self.layouts)),
        }

    def __repr__(self) -> str:
        return (
            f"<Plan {self.rank} of {self.problem.einsum}: {self.cycles} cycles, "
            f"MAC {100 * self.mac_utilisation:.1f}%, accumulator {100 * self.accumulator_use:.1f}%>"
        )


def sizes_text(problem: Problem) -> str:
    """``H=64, Wp=1024 of 4096, K=999 padded to 1008, W=8192 of 151936 padded to 155648``: every
    axis' size (a split axis' whole extent), the declared size of an axis searched as a tile, and the
    extent of an axis padded with zeros."""
    out = []
    for a in problem.sizes:
        n, declared, live = problem.extent(a), problem.declared[a], problem.zero_padded.get(a)
        if declared == n:
            out.append(f"{a}={n}" if live is None else f"{a}={live} padded to {n}")
        else:
            out.append(f"{a}={n} of {declared}" if live is None else f"{a}={n} of {live} padded to {declared}")
    return ", ".join(out)


def _tensor(problem: Problem, values: npt.NDArray[Any], axes: tuple[str, ...]) -> Tensor:
    """An operand over ``axes``; an axis searched as a tile holds its innermost cells (``Wp % 1024``)."""
    if all(problem.declared[a] == problem.extent(a) for a in axes):
        return Tensor(values, axes, sizes=problem.written)
    terms = ", ".join(a if problem.declared[a] == problem.extent(a) else f"{a} % {problem.sizes[a]}" for a in axes)
    return Tensor(values, parse(terms, problem.declared))


def _squeezed(problem: Problem, array: npt.ArrayLike, index: int) -> npt.NDArray[Any]:
    """Operand ``index`` as given to ``run``, without its size-1 axes (no layout holds them)."""
    axes = problem.given[index]
    expected = tuple(problem.given_sizes[a] for a in axes)
    try:
        values = np.asarray(array)
    except (TypeError, ValueError) as error:
        raise LayoutError(STAGE, "NotAnArray", f"operand {index + 1} is not an array: {error}") from None
    if values.shape != expected:
        raise LayoutError(
            STAGE, "ShapeMismatch",
            f"operand {index + 1} of {problem.einsum!r} has shape {values.shape}, expected {expected} "
            f"({', '.join(axes) or 'a scalar'})",
            hint="pass the operands in the einsum's order, each with its axes in the order written",
        )
    return values.reshape(tuple(problem.given_sizes[a] for a in axes if problem.given_sizes[a] > 1))


@dataclass(frozen=True)
class Plans(Sequence[Plan]):
    """The plans, best first. ``exhausted`` says whether the whole space was searched or bounded;
    False means the time budget ended the search and better plans may exist."""

    plans: tuple[Plan, ...]
    exhausted: bool
    seconds: float
    chains: int

    @overload
    def __getitem__(self, index: int) -> Plan: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Plan]: ...
    def __getitem__(self, index: int | slice) -> Plan | Sequence[Plan]:
        return self.plans[index]

    def __len__(self) -> int:
        return len(self.plans)

    def __iter__(self) -> Iterator[Plan]:
        return iter(self.plans)

    def __repr__(self) -> str:
        state = "exhausted" if self.exhausted else "stopped by the time budget"
        return f"<{len(self.plans)} plans, {self.chains} chains in {self.seconds:.2f} s, {state}>"
