"""The spatial part of a plan: how much of each axis every slice holds, and the Chip/Cluster/Slice layouts.

Every kept axis gives its outermost digits to the grid (Chip, then Cluster, then Slice) and keeps
the innermost ``local`` cells in each slice; contracted axes stay whole in every slice, since the
contraction engine sums within a slice only (docs/search.md §2). Choices are listed with a lower
bound on their cycles so the search can visit the promising ones first and stop early.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from math import prod

from tcpdsl.algebra.nodes import Mapping
from tcpdsl.errors import LayoutError
from tcpdsl.planner.bounds import cycles_bound
from tcpdsl.planner.layout import Digit, Group, Layout
from tcpdsl.planner.problem import Problem, Role
from tcpdsl.verify.constants import CLUSTER_SIZES, MAX_LANES, SLICE_SIZES, SLICES_PER_PE
from tcpdsl.verify.device import check_placement

MAX_CLUSTER = max(CLUSTER_SIZES)
MAX_SLICE = max(SLICE_SIZES)


@dataclass(frozen=True)
class Machine:
    """The device searched for: ``chips`` chips of ``pes`` processing elements."""

    chips: int = 1
    pes: int = 8

    @property
    def slices(self) -> int:
        """Cluster x Slice cells one chip holds."""
        return self.pes * SLICES_PER_PE


@dataclass(frozen=True)
class Grid:
    """One spatial choice: ``local[axis]`` cells of each axis per slice, and the three grid layouts."""

    local: tuple[tuple[str, int], ...]
    chip: Layout
    cluster: Layout
    slice: Layout
    bound: int
    weight_cells: int  # TRF elements each slice holds: less replication first among equal bounds
    volume: int  # cells of the product space each slice walks: every axis' local cells

    def cells(self, axis: str) -> int:
        return dict(self.local)[axis]

    @property
    def slices(self) -> int:
        """Slices doing distinct work (the grid digits' product)."""
        return prod(p.live for p in (*self.chip.parts, *self.cluster.parts, *self.slice.parts))

    @property
    def order(self) -> tuple[int, int, int, int]:
        """Visiting order: cheapest bound, then more slices, less replicated weights, less padding."""
        padding = sum(isinstance(p, Group) for p in (*self.cluster.parts, *self.slice.parts))
        return self.bound, -self.slices, self.weight_cells, padding


@dataclass(frozen=True)
class GridPins:
    """Grid layouts the caller fixed (None: free)."""

    chip: Mapping | None = None
    cluster: Mapping | None = None
    slice: Mapping | None = None

    def accept(self, sizes: dict[str, int], chip: Layout, cluster: Layout, slice_: Layout) -> bool:
        for pin, layout in ((self.chip, chip), (self.cluster, cluster), (self.slice, slice_)):
            if pin is not None and layout.mapping(sizes) != pin:
                return False
        return True


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def _local_choices(problem: Problem, capacity: int) -> Iterator[dict[str, int]]:
    """Every per-slice size of the kept axes whose grid part fits ``capacity`` slices."""
    kept = problem.with_role(Role.BATCH, Role.STREAM, Role.WEIGHT)

    def walk(index: int, used: int, chosen: dict[str, int]) -> Iterator[dict[str, int]]:
        if index == len(kept):
            yield dict(chosen)
            return
        axis = kept[index]
        size = problem.sizes[axis]
        for local in _divisors(size):
            spread = size // local
            if used * spread <= capacity:
                chosen[axis] = local
                yield from walk(index + 1, used * spread, chosen)
                del chosen[axis]

    yield from walk(0, 1, {})


def _splits(spread: list[int], machine: Machine) -> Iterator[list[tuple[int, int, int]]]:
    """Ways to cut each axis' grid part into (chip, cluster, slice) counts, most cluster use first."""

    def walk(index: int, chip: int, cluster: int, slice_: int) -> Iterator[list[tuple[int, int, int]]]:
        if index == len(spread):
            yield []
            return
        total = spread[index]
        for k in sorted((k for k in CLUSTER_SIZES if total % k == 0 and cluster * k <= MAX_CLUSTER), reverse=True):
            for c in sorted((c for c in _divisors(total // k) if chip * c <= machine.chips), reverse=True):
                s = total // (k * c)
                if slice_ * s <= MAX_SLICE:
                    for rest in walk(index + 1, chip * c, cluster * k, slice_ * s):
                        yield [(c, k, s), *rest]

    yield from walk(0, 1, 1, 1)


def _layouts(
    problem: Problem, local: dict[str, int], split: list[tuple[int, int, int]], machine: Machine
) -> tuple[Layout, Layout, Layout] | None:
    """The grid layouts, Slice padded to a valid size and Cluster to 2 where the chip has room; None if too big."""
    chip: list[Digit] = []
    cluster: list[Digit] = []
    slice_: list[Digit] = []
    for (axis, cells), (c, k, s) in zip(local.items(), split):
        size = problem.sizes[axis]
        chip.append(Digit(axis, size, size // c, c))
        cluster.append(Digit(axis, size, size // (c * k), k))
        slice_.append(Digit(axis, size, cells, s))
    chip_layout, cluster_layout = Layout.of(*chip), Layout.of(*cluster)
    live = Layout.of(*slice_)
    padded = (live.padded(n) for n in sorted(SLICE_SIZES) if n >= live.size)
    slice_layout = next((p for p in padded if p is not None), None)
    if slice_layout is None:
        return None
    if cluster_layout.size < MAX_CLUSTER and MAX_CLUSTER * slice_layout.size <= machine.slices:
        cluster_layout = Layout((Group((), MAX_CLUSTER),))  # the idle cluster, as `1 # 2`
    if cluster_layout.size * slice_layout.size > machine.slices:
        return None
    return chip_layout, cluster_layout, slice_layout


def _fits(problem: Problem, layouts: tuple[Layout, Layout, Layout], machine: Machine) -> bool:
    """The device rule a placed tensor checks, on the grid alone."""
    chip, cluster, slice_ = (layout.mapping(problem.sizes) for layout in layouts)
    try:
        check_placement("CollectTensor", chip=chip, cluster=cluster, slice_=slice_, chips=machine.chips, pes=machine.pes)
    except LayoutError:
        return False
    return True


def grids(problem: Problem, machine: Machine, pins: GridPins) -> list[Grid]:
    """Every spatial choice the device and the pins allow, cheapest lower bound first (more slices first on ties)."""
    found: list[Grid] = []
    for local in _local_choices(problem, machine.chips * machine.slices):
        spread = [problem.sizes[a] // n for a, n in local.items()]
        for split in _splits(spread, machine):
            layouts = _layouts(problem, local, split, machine)
            if layouts is None or not pins.accept(problem.sizes, *layouts) or not _fits(problem, layouts, machine):
                continue
            weights = prod(local.get(a, problem.sizes[a]) for a in problem.weight_axes)
            volume = prod(local.get(a, problem.sizes[a]) for a in problem.sizes)
            found.append(Grid(tuple(local.items()), *layouts, _grid_bound(problem, local), weights, volume))
            break
    found.sort(key=lambda g: g.order)
    return found


def _grid_bound(problem: Problem, local: dict[str, int]) -> int:
    """No plan on this grid beats full lanes and full packets over its per-slice volume."""
    whole = {a: problem.sizes[a] for a in problem.with_role(Role.CONTRACTED)}
    cells = {**local, **whole}
    volume = prod(cells.values())
    lanes = min(MAX_LANES, prod(cells[a] for a in problem.with_role(Role.WEIGHT)))
    packet = min(2 * problem.flit, prod(cells[a] for a in problem.stream_axes))
    return cycles_bound(problem.stream_dtype, -(-volume // (lanes * packet)))
