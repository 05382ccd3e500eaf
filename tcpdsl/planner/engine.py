"""The search loop: grids cheapest bound first, each chain checked and costed, the best ``top`` kept.

Branch and bound (docs/search.md §4): a grid, or a chain whose Outer packet count is known, is
skipped once its lower bound cannot beat the ``top``-th plan in hand; the grids come sorted by
bound, so the first grid that cannot beat it ends the search with the space exhausted. A time
budget ends it earlier with the best plans found so far.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from tcpdsl.algebra.nodes import Mapping
from tcpdsl.errors import StageError
from tcpdsl.planner.bounds import cycles_bound
from tcpdsl.planner.candidates import Candidate, Packing, candidates, lanes, packings
from tcpdsl.planner.chain import Folded, fold, reduce
from tcpdsl.planner.grid import Grid, GridPins, Machine, grids
from tcpdsl.planner.layout import Layout
from tcpdsl.planner.problem import Problem
from tcpdsl.planner.progress import Progress
from tcpdsl.planner.source import texts
from tcpdsl.verify import LaneMode
from tcpdsl.verify.constants import CONTRACT_LANE_OUT_PACKET_ELEMENTS, SEQUENTIAL_PACKET_ALIGN, align_up

# How often (in chains) the loop looks at the clock and redraws the progress bar.
_CLOCK_EVERY = 16


@dataclass(frozen=True)
class Settings:
    """What the caller chose: how many plans, how long, on which machine, with which fixed layouts."""

    top: int
    budget: float
    machine: Machine
    grid_pins: GridPins
    lane_pin: Mapping | None
    modes: tuple[LaneMode, ...]


@dataclass
class Found:
    """A checked, costed chain of one orientation of the problem."""

    problem: Problem
    chain: Folded

    @property
    def cycles(self) -> int:
        return self.chain.cost.total_cycles

    def rank(self) -> tuple[int, float, int, int, int]:
        """Fewest cycles, then the busiest multipliers, the smallest accumulator, the least replicated
        weights and the shortest layouts."""
        cost = self.chain.cost
        weights = self.chain.reduced.candidate.grid.weight_cells
        size = sum(map(len, _texts(self.chain)))
        return (cost.total_cycles, -cost.mac_utilisation, cost.accumulator_cells or 0, weights, size)


@dataclass
class Outcome:
    """The plans found (best first), whether every branch was visited or bounded, and the effort."""

    found: list[Found]
    exhausted: bool
    chains: int
    seconds: float
    failures: Counter[tuple[str, str]] = field(default_factory=Counter)
    examples: dict[tuple[str, str], StageError] = field(default_factory=dict)
    grids: int = 0
    packets: int = 0
    capacity_grids: int = 0


class _Search:
    def __init__(self, problems: list[Problem], settings: Settings, progress: Progress) -> None:
        self.settings = settings
        self.progress = progress
        self.started = time.perf_counter()
        self.deadline = self.started + settings.budget
        self.kept: list[Found] = []
        self.seen: set[tuple[object, ...]] = set()
        self.outcome = Outcome([], False, 0, 0.0)
        self.work = sorted(
            ((p, g) for p in problems for g in grids(p, settings.machine, settings.grid_pins)),
            key=lambda pg: pg[1].order,
        )
        self.outcome.grids = len(self.work)

    @property
    def worst(self) -> int | None:
        """Cycles a new plan must beat to enter the list (None while it has room)."""
        return self.kept[-1].cycles if len(self.kept) >= self.settings.top else None

    def beaten(self, bound: int) -> bool:
        worst = self.worst
        return worst is not None and bound > worst

    def out_of_time(self) -> bool:
        return time.perf_counter() > self.deadline

    def run(self) -> Outcome:
        exhausted = True
        for index, (problem, grid) in enumerate(self.work):
            if self.beaten(grid.bound):
                break
            if self.out_of_time() or not self.grid(problem, grid, index):
                exhausted = False
                break
        self.progress.close()
        outcome = self.outcome
        outcome.found = self.kept
        outcome.exhausted = exhausted
        outcome.seconds = time.perf_counter() - self.started
        return outcome

    def grid(self, problem: Problem, grid: Grid, index: int) -> bool:
        """Visit every chain on ``grid``; False when the budget ran out midway."""
        for packing in packings(problem, grid):
            self.outcome.packets += 1
            for lane, counts in lanes(problem, grid):
                pin = self.settings.lane_pin
                if pin is not None and lane.mapping(problem.sizes) != pin:
                    continue
                if self.beaten(self.bound(problem, grid, packing, lane)):
                    continue
                for candidate in candidates(problem, grid, packing, lane, counts):
                    verdict = self.chain(problem, candidate)
                    if verdict == "capacity":
                        self.outcome.capacity_grids += 1
                        return True
                    if self.outcome.chains % _CLOCK_EVERY == 0:
                        best = self.kept[0].cycles if self.kept else None
                        self.progress.update(index / max(1, len(self.work)), self.outcome.chains, best)
                        if self.out_of_time():
                            return False
        return True

    def bound(self, problem: Problem, grid: Grid, packing: Packing, lane: Layout) -> int:
        """No chain with this packet and these lanes beats this: its Outer packet count is fixed
        (every other cell of the slice is a Time cell) and its accumulator holds at least one slot."""
        packets = grid.volume // (packing.packet.live * lane.live)
        kept = packing.kept.size
        cells = [
            CONTRACT_LANE_OUT_PACKET_ELEMENTS * kept if m is LaneMode.INTERLEAVED
            else lane.size * align_up(kept, SEQUENTIAL_PACKET_ALIGN)
            for m in self.settings.modes
        ]
        return cycles_bound(problem.stream_dtype, packets, min(cells))

    def chain(self, problem: Problem, c: Candidate) -> str:
        """Check and cost one candidate in every mode; "capacity" when no chain on its grid fits the TRF."""
        self.outcome.chains += 1
        try:
            reduced = reduce(problem, c)
        except StageError as error:
            self.fail(error)
            unpadded = c.lane.size == c.lane.live and c.element.size == c.element.live
            return "capacity" if error.rule == "ExceedsCapacity" and unpadded else "failed"
        for mode in self.settings.modes:
            try:
                folded = fold(problem, reduced, mode)
            except StageError as error:
                self.fail(error)
                continue
            if folded is not None:
                self.offer(Found(problem, folded))
        return "ok"

    def fail(self, error: StageError) -> None:
        key = (error.stage, error.rule)
        self.outcome.failures[key] += 1
        self.outcome.examples.setdefault(key, error)

    def offer(self, found: Found) -> None:
        signature = (found.problem.swapped, *_texts(found.chain))
        if signature in self.seen:
            return
        self.seen.add(signature)
        self.kept.append(found)
        self.kept.sort(key=Found.rank)
        del self.kept[self.settings.top :]


def _texts(chain: Folded) -> tuple[str, ...]:
    return tuple(vars(texts(chain)).values())


def run(problems: list[Problem], settings: Settings, progress: Progress) -> Outcome:
    """Search every orientation in ``problems`` together."""
    return _Search(problems, settings, progress).run()
