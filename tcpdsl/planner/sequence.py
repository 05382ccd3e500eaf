"""``tcp.search_chain``: plans for a sequence of kernels, each feeding the next, costed as a whole.

Kernel ``i + 1`` streams the result of kernel ``i``. When both spread over the same grid and the
next kernel puts no axis of its own there, every slice already holds the stream it needs in its
DM, and the next kernel's fetch reads it as its stream layout asks (docs/search.md §7). Otherwise
the stream is moved between slices first: a DM to DM DMA of the bytes every slice needs, priced
as the weights' DMA is (docs/cost-model.md). The search keeps the ``top`` plans of every kernel,
and for each plan of one kernel also asks for the next kernel on that plan's grid; the cheapest
sequence of kernels and moves is chosen exactly over those candidates.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping as MappingABC
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, SupportsIndex

from tcpdsl.cost import dm_move_cycles, dma_engines, live_cells
from tcpdsl.errors import LayoutError, TcpError
from tcpdsl.planner.api import DEFAULT_BUDGET, _positive_int, make_settings, plan_problem, variants
from tcpdsl.planner.grid import stream_bytes
from tcpdsl.planner.problem import make_problem
from tcpdsl.planner.source import check_axis_names
from tcpdsl.planner.plan import Plan
from tcpdsl.planner.problem import STAGE
from tcpdsl.tensors.device import Topology
from tcpdsl.numerics.scalars import Scalar, bf16


@dataclass(frozen=True)
class ChainPlan:
    """One plan per kernel and the move before each kernel after the first (0: none needed).

    ``cycles`` is every kernel's whole-kernel cycles plus every move. ``exhausted`` is False when
    the time budget stopped one of the searches behind it.
    """

    kernels: tuple[Plan, ...]
    moves: tuple[int, ...]
    exhausted: bool

    @property
    def cycles(self) -> int:
        return sum(p.cycles for p in self.kernels) + sum(self.moves)

    def summary(self) -> dict[str, Any]:
        """The sequence as JSON-ready data: each kernel's plan and the move before it."""
        return {
            "cycles": self.cycles,
            "kernels": [
                {"einsum": p.problem.einsum, "move": move, **p.summary()}
                for p, move in zip(self.kernels, (0, *self.moves))
            ],
        }

    def __repr__(self) -> str:
        parts = " -> ".join(f"{p.problem.einsum} ({p.cycles})" for p in self.kernels)
        return f"<ChainPlan of {len(self.kernels)} kernels: {self.cycles} cycles; {parts}; moves {list(self.moves)}>"


def search_chain(
    einsums: Sequence[str],
    sizes: MappingABC[str, SupportsIndex],
    *,
    stream: type[Scalar] | str = bf16,
    weights: type[Scalar] | str = bf16,
    top: SupportsIndex = 3,
    topology: Topology | None = None,
    budget: float = DEFAULT_BUDGET,
) -> ChainPlan:
    """The cheapest plans for ``einsums`` run in order, each streaming the previous one's result.

    Every einsum's first operand is its stream; from the second einsum on, it must be the previous
    einsum's result, axis for axis (``"h,ngdh->ngd"`` then ``"ngd,tnd->ngt"``). ``sizes`` gives every
    axis of every einsum; ``top`` plans of each kernel are weighed together. ``budget`` is shared.
    """
    if isinstance(einsums, str) or not isinstance(einsums, Sequence) or not einsums:
        raise LayoutError(
            STAGE, "Option", f"search_chain takes a non-empty list of einsums, got {einsums!r}",
            hint='e.g. tcp.search_chain(["h,ngdh->ngd", "ngd,tnd->ngt"], sizes)',
        )
    count = _positive(top)
    stopped: list[bool] = []
    share = budget / (len(einsums) * (2 + 2 * count))

    def plans(index: int, fixed: dict[str, str] | None = None, grid_axes: frozenset[str] | None = None) -> list[Plan]:
        """Kernel ``index``'s best plans; those spread only over ``grid_axes`` keep their result in
        place, which no split reduction does."""
        einsum = einsums[index]
        names = {a.upper() for a in str(einsum).split("->")[0].replace(",", "")}
        problem = make_problem(einsum, {a: n for a, n in sizes.items() if a in names}, stream, weights)
        check_axis_names(problem)
        settings = replace(make_settings(problem, count, fixed, topology, share), grid_axes=grid_axes)
        found = plan_problem(variants(problem.oriented(False), settings.machine, split=grid_axes is None), settings)
        stopped.append(not found.exhausted)
        return list(found)

    def shared(index: int) -> list[Plan]:
        """Kernel ``index`` spread only over the axes its result keeps in the next kernel."""
        if index + 1 == len(einsums):
            return []
        following = str(einsums[index + 1]).split("->")[-1].strip().upper()
        try:
            return plans(index, grid_axes=frozenset(following))
        except TcpError:
            return []

    _check_links(einsums)
    # for each candidate plan of the latest kernel, the cheapest chain ending in it
    Chosen = tuple[int, tuple[Plan, ...], tuple[int, ...]]
    layer: dict[int, Chosen] = {id(p): (p.cycles, (p,), ()) for p in plans(0) + shared(0)}
    for index in range(1, len(einsums)):
        following = plans(index) + shared(index)
        for _, chosen, _ in list(layer.values()):
            following += _aligned(chosen[-1], lambda fixed: plans(index, fixed))
        best: dict[int, Chosen] = {}
        for plan in following:
            for total, chosen, moves in layer.values():
                move = move_cycles(chosen[-1], plan)
                cost = total + move + plan.cycles
                if id(plan) not in best or cost < best[id(plan)][0]:
                    best[id(plan)] = (cost, (*chosen, plan), (*moves, move))
        layer = best
    _, kernels, moves = min(layer.values(), key=lambda entry: entry[0])
    return ChainPlan(kernels, moves, not any(stopped))


def _positive(top: object) -> int:
    count = _positive_int(top)
    if count is None:
        raise LayoutError(STAGE, "Option", f"top= must be a positive int, got {top!r}", hint="ask for e.g. top=3 plans")
    return count


def _check_links(einsums: Sequence[str]) -> None:
    for before, after in zip(einsums, einsums[1:]):
        result = str(before).split("->")[-1].strip()
        first = str(after).split(",")[0].strip()
        if sorted(result) != sorted(first):
            raise LayoutError(
                STAGE, "ChainLink",
                f"search_chain: {after!r} does not stream the result of {before!r} (axes {result!r}, got {first!r})",
                hint="write each einsum after the first with the previous result as its first operand",
            )


def _aligned(previous: Plan, search_on: Callable[[dict[str, str]], list[Plan]]) -> list[Plan]:
    """The next kernel planned on ``previous``'s grid, when its layouts can be written there (a
    split reduction's result sits on no grid the next kernel's search writes)."""
    t = previous.layouts
    if t.out_slice:
        return []
    try:
        return list(search_on({"Chip": t.chip, "Cluster": t.cluster, "Slice": t.slice}))
    except TcpError:
        return []


def move_cycles(previous: Plan, plan: Plan) -> int:
    """The move between ``previous``'s result and ``plan``'s stream: none when both grids are the
    same and only the result's axes are on it, else a DM to DM DMA of every slice's stream."""
    mine = previous.layouts
    theirs = plan.layouts
    # a split reduction leaves its result on its reduced Slice: one slice of each group holds it
    held = (mine.chip, mine.cluster, mine.out_slice or mine.slice)
    if held == (theirs.chip, theirs.cluster, theirs.slice) and not _grid_axes(plan) - set(previous.problem.out_axes):
        return 0
    per_slice = stream_bytes(plan.problem, plan.chain.reduced.candidate.grid.spread.stream_cells)
    grid = plan.chain.reduced.layouts.grid
    slices = live_cells(grid[0]) * live_cells(grid[1]) * live_cells(grid[2])
    return dm_move_cycles(per_slice, slices, dma_engines(*grid))


def _grid_axes(plan: Plan) -> set[str]:
    grid = plan.chain.reduced.candidate.grid
    return {d.axis for layout in (grid.chip, grid.cluster, grid.slice) for d in layout.digits}
