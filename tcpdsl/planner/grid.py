"""The spatial part of a plan: how much of each axis every slice holds, and the Chip/Cluster/Slice layouts.

Every kept axis gives its outermost digits to the grid (Chip, then Cluster, then Slice) and keeps
the innermost ``local`` cells in each slice; contracted axes stay whole in every slice, since the
contraction engine sums within a slice only (docs/search.md §2). Choices are listed with a lower
bound on their cycles so the search can visit the promising ones first and stop early.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from math import isqrt, prod

from tcpdsl.algebra import Digit, Index, Mapping
from tcpdsl.cost import VE_RING_CYCLES_PER_SLICE
from tcpdsl.errors import LayoutError
from tcpdsl.planner.bounds import cycles_bound, load_cycles
from tcpdsl.planner.clock import Clock
from tcpdsl.planner.layout import Group, Layout
from tcpdsl.planner.problem import Problem, Role
from tcpdsl.verify import BITS
from tcpdsl.verify.constants import (
    BITS_PER_BYTE,
    CLUSTER_SIZES,
    CONTRACT_LANE_OUT_PACKET_ELEMENTS,
    MAX_LANES,
    SLICE_SIZES,
    SLICES_PER_PE,
)
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
class Spread:
    """How much of each kept axis every slice holds (``local``), before any grid layout is chosen.

    The figures the search orders and bounds by are plain products, so thousands of spreads cost
    little; layouts are written only for the spreads the search visits (:func:`lay_out`).
    """

    local: tuple[tuple[str, int], ...]
    slices: int  # slices doing distinct work: the product of the grid parts
    bound: int
    weight_cells: int  # TRF elements each slice holds: less replication first among equal bounds
    volume: int  # cells of the product space each slice walks: every axis' local cells
    kept: int  # result cells each slice computes
    stream_cells: int  # cells of the streamed operand each slice fetches

    @property
    def order(self) -> tuple[int, int, int]:
        """Visiting order: cheapest bound, then more slices, then less replicated weights."""
        return self.bound, -self.slices, self.weight_cells


@dataclass(frozen=True)
class Grid:
    """A spread with its Chip, Cluster and Slice layouts."""

    spread: Spread
    chip: Layout
    cluster: Layout
    slice: Layout

    def cells(self, axis: str) -> int:
        return dict(self.spread.local)[axis]

    @property
    def bound(self) -> int:
        return self.spread.bound

    @property
    def weight_cells(self) -> int:
        return self.spread.weight_cells

    @property
    def volume(self) -> int:
        return self.spread.volume

    @property
    def kept(self) -> int:
        return self.spread.kept


@dataclass(frozen=True)
class PinnedLayout(Layout):
    """A grid layout the caller fixed: the search's digits, written with the caller's padding
    (``Q / 32, 1 # 4`` where the search would write ``Q / 32 # 256``)."""

    pin: Mapping = field(kw_only=True)

    @property
    def mapping(self) -> Mapping:
        return self.pin

    def text(self) -> str:
        return str(self.pin)


@dataclass(frozen=True)
class GridPins:
    """Grid layouts the caller fixed (None: free)."""

    chip: Mapping | None = None
    cluster: Mapping | None = None
    slice: Mapping | None = None

    def place(self, layouts: tuple[Layout, Layout, Layout]) -> tuple[Layout, Layout, Layout] | None:
        """``layouts`` with each pin in place of the layout holding the same live cells (padding
        may sit elsewhere and be wider); None when a pin holds other cells."""
        placed: list[Layout] = []
        for pin, layout in zip((self.chip, self.cluster, self.slice), layouts):
            if pin is None or pin == layout.mapping:
                placed.append(layout)
            elif _live(pin) == _live(layout.mapping):
                placed.append(PinnedLayout(layout.parts, pin=pin))
            else:
                return None
        return placed[0], placed[1], placed[2]


@lru_cache(maxsize=1024)
def _live(mapping: Mapping) -> frozenset[object]:
    """The live cells of a grid layout (at most a chip's slices), whatever the padding around them."""
    return frozenset(c for c in (mapping.cell(i) for i in range(mapping.size)) if isinstance(c, Index))


@lru_cache(maxsize=256)
def divisors(n: int) -> tuple[int, ...]:
    """Every divisor of ``n``, ascending, from its prime factors (sizes are bounded, docs/search.md §1)."""
    found = [1]
    rest, p = n, 2
    while p <= isqrt(rest):
        power = 1
        while rest % p == 0:
            rest //= p
            power += 1
        if power > 1:
            found = [d * p**e for d in found for e in range(power)]
        p += 1 if p == 2 else 2
    if rest > 1:
        found += [d * rest for d in found]
    return tuple(sorted(found))


def kept_axes(problem: Problem) -> tuple[str, ...]:
    """The axes a spread gives the grid, in the order :attr:`Spread.local` lists them."""
    return problem.with_role(Role.BATCH, Role.STREAM, Role.WEIGHT)


def _local_choices(
    problem: Problem, capacity: int, clock: Clock, grid_axes: frozenset[str] | None = None
) -> Iterator[dict[str, int]]:
    """Every per-slice size of the kept axes whose grid part fits ``capacity`` slices (only the
    ``grid_axes`` among them spread, when given)."""
    kept = kept_axes(problem)
    whole = set() if grid_axes is None else {a for a in kept if a not in grid_axes}

    def walk(index: int, used: int, chosen: dict[str, int]) -> Iterator[dict[str, int]]:
        if index == len(kept):
            yield dict(chosen)
            return
        axis = kept[index]
        size = problem.sizes[axis]
        for local in (size,) if axis in whole else divisors(size):
            clock.tick()
            spread = size // local
            if used * spread <= capacity:
                chosen[axis] = local
                yield from walk(index + 1, used * spread, chosen)
                del chosen[axis]

    yield from walk(0, 1, {})


def _splits(
    spread: list[int], machine: Machine, clock: Clock, room: int = MAX_SLICE
) -> Iterator[list[tuple[int, int, int]]]:
    """Ways to cut each axis' grid part into (chip, cluster, slice) counts, most cluster use first,
    the Slice parts within ``room`` slices."""

    def walk(index: int, chip: int, cluster: int, slice_: int) -> Iterator[list[tuple[int, int, int]]]:
        if index == len(spread):
            yield []
            return
        total = spread[index]
        for k in sorted((k for k in CLUSTER_SIZES if total % k == 0 and cluster * k <= MAX_CLUSTER), reverse=True):
            for c in sorted((c for c in divisors(total // k) if chip * c <= machine.chips), reverse=True):
                clock.tick()
                s = total // (k * c)
                if slice_ * s <= room:
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
        chip.append(problem.digit(axis, size // c, c))
        cluster.append(problem.digit(axis, size // (c * k), k))
        slice_.append(problem.digit(axis, cells, s))
    chip_layout, cluster_layout = Layout.of(*chip), Layout.of(*cluster)
    live = Layout.of(*slice_)
    # A split axis is the innermost Slice digit, where the inter-slice reducer adds its partial
    # sums; the padding goes around the kept digits above it, so that every reduced slice is live.
    shared = Layout.of(*(Digit(a, problem.declared[a], problem.sizes[a], n) for a, n in problem.split.items()))
    padded = (live.padded(n // shared.size) for n in sorted(SLICE_SIZES) if n >= live.size * shared.size)
    kept_part = next((p for p in padded if p is not None), None)
    if kept_part is None:
        return None
    slice_layout = Layout.of(kept_part, shared)
    if cluster_layout.size < MAX_CLUSTER and MAX_CLUSTER * slice_layout.size <= machine.slices:
        cluster_layout = Layout((Group((), MAX_CLUSTER),))  # the idle cluster, as `1 # 2`
    if cluster_layout.size * slice_layout.size > machine.slices:
        return None
    return chip_layout, cluster_layout, slice_layout


def _fits(layouts: tuple[Layout, Layout, Layout], machine: Machine) -> bool:
    """The device rule a placed tensor checks, on the grid alone."""
    chip, cluster, slice_ = (layout.mapping for layout in layouts)
    try:
        check_placement("CollectTensor", chip=chip, cluster=cluster, slice_=slice_, chips=machine.chips, pes=machine.pes)
    except LayoutError:
        return False
    return True


def spreads(
    problem: Problem,
    machine: Machine,
    clock: Clock,
    grid_axes: frozenset[str] | None = None,
    from_hbm: bool = True,
    stream_from_hbm: bool = False,
) -> Iterator[Spread]:
    """Every per-slice size of the kept axes the device can spread (only ``grid_axes``, when
    given), as the enumeration finds them: the caller orders them by :attr:`Spread.order`."""
    capacity = machine.chips * machine.slices // problem.split_count
    for local in _local_choices(problem, capacity, clock, grid_axes):
        yield spread_of(problem, machine, local, from_hbm, stream_from_hbm)


def spread_of(problem: Problem, machine: Machine, local: dict[str, int], from_hbm: bool, stream_from_hbm: bool) -> Spread:
    """The spread keeping ``local`` cells of each kept axis per slice, with its bound; ``from_hbm``
    and ``stream_from_hbm`` say whether the weights' and the stream's DMA count."""
    cells = {a: local.get(a, n) for a, n in problem.sizes.items()}
    volume, kept = prod(cells.values()), prod(local.values())
    lanes = min(MAX_LANES, prod(cells[a] for a in problem.with_role(Role.WEIGHT)))
    stream_cells = prod(cells[a] for a in problem.stream_axes)
    packet = min(2 * problem.flit, stream_cells)
    slices = problem.split_count * prod(problem.sizes[a] // n for a, n in local.items())
    weight_cells = prod(cells[a] for a in problem.weight_axes)
    flits = -(-stream_cells // problem.flit)
    engines, chips = min(slices, machine.chips * machine.pes), min(slices, machine.chips)
    stream = stream_bytes(problem, stream_cells) if stream_from_hbm else 0
    load = load_cycles(problem.weight_dtype, trf_bytes(problem, weight_cells), slices, engines, chips, from_hbm, stream)
    outputs = -(-kept // CONTRACT_LANE_OUT_PACKET_ELEMENTS)
    return Spread(
        tuple(local.items()),
        slices,
        load + _grid_bound(problem.stream_dtype, volume, lanes * packet, kept, flits) + reduce_bound(problem, outputs),
        weight_cells,
        volume,
        kept,
        stream_cells,
    )


def lay_out(problem: Problem, spread: Spread, machine: Machine, pins: GridPins, clock: Clock) -> Grid | None:
    """The first grid layouts of ``spread`` (most Cluster use first) that the pins and the device allow."""
    local = dict(spread.local)
    room = MAX_SLICE // problem.split_count  # a split axis takes its own share of Slice
    for split in _splits([problem.sizes[a] // n for a, n in local.items()], machine, clock, room):
        layouts = _layouts(problem, local, split, machine)
        placed = None if layouts is None else pins.place(layouts)
        if placed is not None and _fits(placed, machine):
            return Grid(spread, *placed)
    return None


def _grid_bound(dtype: str, volume: int, per_packet: int, kept: int, flits: int) -> int:
    """No plan on a grid whose slices walk ``volume`` cells beats full lanes and full packets
    (``per_packet`` cells an Outer step), fetches its stream in fewer than ``flits`` full flits, nor
    emits its ``kept`` result cells faster than one output packet a cycle."""
    outputs = -(-kept // CONTRACT_LANE_OUT_PACKET_ELEMENTS)
    return cycles_bound(dtype, -(-volume // per_packet), lane_packets=outputs, flits=flits)


def reduce_bound(problem: Problem, packets: int) -> int:
    """The least a split reduction adds (docs/cost-model.md, "The whole kernel"): the inter-slice
    reducer streams at least the ``packets`` result packets of a slice, then its ring of slices."""
    if not problem.split:
        return 0
    return packets + problem.split_count * VE_RING_CYCLES_PER_SLICE


def stream_bytes(problem: Problem, cells: int) -> int:
    """The bytes of ``cells`` of the streamed operand."""
    return -(-cells * BITS[problem.stream_dtype] // BITS_PER_BYTE)


def trf_bytes(problem: Problem, cells: int) -> int:
    """The bytes of ``cells`` weights, as the TRF holds them (4-bit weights two to a byte)."""
    return -(-cells * BITS[problem.weight_dtype] // BITS_PER_BYTE)
