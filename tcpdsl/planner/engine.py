"""The search loop: spreads cheapest bound first, each chain checked and costed, the best ``top`` kept.

Branch and bound (docs/search.md §4): a spread, or a packet and lane choice on its grid, is
skipped once the best rank it can reach cannot beat the ``top``-th plan in hand; spreads come
sorted by bound, so the first one slower than that plan ends the search with the space exhausted.
A grid whose TRF overflows on its first chain is left whole, since every chain on it holds the same
weights. A time budget, read inside every enumeration (:mod:`tcpdsl.planner.clock`), ends the
search earlier with the best plans found so far.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tcpdsl.algebra import Mapping
from tcpdsl.errors import StageError
from tcpdsl.planner.candidates import Candidate, candidates, lanes, packings
from tcpdsl.planner.chain import Folded, fold, reduce
from tcpdsl.planner.clock import Clock, OutOfTime
from tcpdsl.planner.grid import Grid, GridPins, Machine, lay_out, spread_of, spreads
from tcpdsl.planner.heap import SpreadHeap
from tcpdsl.planner.placement import HBM, Placement, Where, oriented
from tcpdsl.planner.problem import Problem
from tcpdsl.planner.progress import Progress
from tcpdsl.planner.ranking import Rank, branch_rank, plan_rank, spread_rank
from tcpdsl.planner.source import texts
from tcpdsl.verify import LaneMode, verify_contract_packet

# How often (in chains) the loop redraws the progress bar.
_PROGRESS_EVERY = 16


@dataclass(frozen=True)
class Settings:
    """What the caller chose: how many plans, how long, on which machine, with which fixed layouts."""

    top: int
    budget: float
    machine: Machine
    grid_pins: GridPins
    lane_pin: Mapping | None
    modes: tuple[LaneMode, ...]
    grid_axes: frozenset[str] | None = None  # the only axes the grid may spread (None: any)
    places: tuple[Where, Where] | None = None  # where each einsum operand is (docs/search.md §1)


@dataclass
class Found:
    """A checked, costed chain of one orientation of the problem, with its rank."""

    problem: Problem
    chain: Folded
    rank: Rank = field(init=False)

    def __post_init__(self) -> None:
        self.rank = plan_rank(self.chain)

    @property
    def cycles(self) -> int:
        return self.chain.whole.total_cycles


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
        self.clock = Clock(settings.budget)
        self.problems = problems
        self.kept: list[Found] = []
        self.seen: set[tuple[object, ...]] = set()
        self.outcome = Outcome([], False, 0, 0.0)

    @property
    def worst(self) -> Rank | None:
        """The rank a new plan must beat to enter the list (None while it has room)."""
        return self.kept[-1].rank if len(self.kept) >= self.settings.top else None

    def beaten(self, best: Rank) -> bool:
        """Whether a branch whose best reachable rank is ``best`` cannot improve the list (the
        layouts' text length, the last key, is no reason to explore)."""
        worst = self.worst
        return worst is not None and best[:-1] >= worst[:-1]

    def where(self, problem: Problem) -> Placement:
        return oriented(problem, self.settings.places)

    def out_of_time(self) -> bool:
        return self.clock.expired()

    def run(self) -> Outcome:
        try:
            exhausted = self.visit()
        except OutOfTime:
            exhausted = False
        self.progress.close()
        outcome = self.outcome
        outcome.found = self.kept
        outcome.exhausted = exhausted
        outcome.seconds = self.clock.seconds()
        return outcome

    def visit(self) -> bool:
        """Visit the spreads best bound first; False when the budget ran out."""
        machine = self.settings.machine
        # Each spread is pushed as the ticking enumeration finds it: no sort outlasts the budget after it.
        heap = SpreadHeap(self.problems, machine)
        hbm = [(self.where(p).weights == HBM, self.where(p).stream == HBM) for p in self.problems]
        for tag, problem in enumerate(self.problems):
            for found in spreads(problem, machine, self.clock, self.settings.grid_axes, *hbm[tag]):
                heap.push(tag, found)
        total = len(heap)
        while len(heap):
            self.clock.tick()
            tag, local = heap.pop()
            problem = self.problems[tag]
            spread = spread_of(problem, machine, local, *hbm[tag])
            worst = self.worst
            if worst is not None and spread.bound > worst[0]:
                break  # spreads come by bound: no later one is faster
            if self.beaten(spread_rank(spread)):
                continue
            grid = lay_out(problem, spread, machine, self.settings.grid_pins, self.clock)
            if grid is None:
                continue
            self.outcome.grids += 1
            if self.out_of_time() or not self.grid(problem, grid, 1 - len(heap) / total):
                return False
        return True

    def grid(self, problem: Problem, grid: Grid, done: float) -> bool:
        """Visit every chain on ``grid`` (``done`` of the spreads visited); False when the budget ran out midway."""
        for packing in packings(problem, grid, self.clock):
            self.outcome.packets += 1
            try:  # the Packet Reducer's rule reads only the packet: check it before any chain uses it
                verify_contract_packet(problem.stream_dtype, packet=packing.packet.mapping, out_packet=packing.kept.mapping)
            except StageError as error:
                self.fail(error)
                continue
            for lane, counts in lanes(problem, grid, self.clock):
                self.clock.tick()  # bounding a lane is cheap, but there may be thousands
                pin = self.settings.lane_pin
                if pin is not None and lane.mapping != pin:
                    continue
                if self.beaten(branch_rank(problem, grid, packing, lane, self.settings.modes, self.where(problem))):
                    continue
                for candidate in candidates(problem, grid, packing, lane, counts):
                    if self.chain(problem, candidate):
                        self.outcome.capacity_grids += 1
                        return True
                    if self.outcome.chains % _PROGRESS_EVERY == 0:
                        best = self.kept[0].cycles if self.kept else None
                        self.progress.update(done, self.outcome.chains, best)
                    if self.out_of_time():  # a chain over many axes is slow to check: ask after each
                        return False
        return True

    def chain(self, problem: Problem, c: Candidate) -> bool:
        """Check and cost one candidate in every mode; True when no chain on its grid fits the TRF
        (an unpadded TRF holds exactly the slice's weights, which every chain on the grid holds)."""
        self.outcome.chains += 1
        try:
            reduced = reduce(problem, c)
        except StageError as error:
            self.fail(error)
            unpadded = c.lane.size == c.lane.live and c.element.size == c.element.live
            return error.rule == "ExceedsCapacity" and unpadded
        for mode in self.settings.modes:
            try:
                folded = fold(problem, reduced, mode, self.where(problem))
            except StageError as error:
                self.fail(error)
                continue
            if folded is not None:
                self.offer(Found(problem, folded))
        return False

    def fail(self, error: StageError) -> None:
        key = (error.stage, error.rule)
        self.outcome.failures[key] += 1
        self.outcome.examples.setdefault(key, error)

    def offer(self, found: Found) -> None:
        signature = (found.problem.swapped, *vars(texts(found.chain)).values())
        if signature in self.seen:
            return
        self.seen.add(signature)
        self.kept.append(found)
        self.kept.sort(key=lambda f: f.rank)
        del self.kept[self.settings.top :]


def run(problems: list[Problem], settings: Settings, progress: Progress) -> Outcome:
    """Search every orientation in ``problems`` together."""
    return _Search(problems, settings, progress).run()
