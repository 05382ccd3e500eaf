"""The choices inside one slice: the Outer packet, the lanes, and where the remaining digits go.

Given a grid, every axis has ``local`` cells per slice. Its innermost digit may go to the Outer
packet (stream axes) or to the lanes (weight-only axes); the rest become Time digits. From those
choices every mapping of the chain follows (docs/search.md §3):

* stream ``Time = [kept digits, contracted digits, packed cells]`` and ``Packet`` the packet's flit;
* ``OutTime = [kept digits, contracted digits, broadcast digits]``, ``OutPacket`` the packet;
* TRF ``Element = [its OutTime digits in OutTime order, the packet's weight digits]``;
* the reducers keep exactly the result axes, and the Lane Folder lays lanes out per mode.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product
from math import prod

from tcpdsl.algebra import Digit, PaddingKind
from tcpdsl.planner.clock import Clock
from tcpdsl.planner.grid import Grid
from tcpdsl.planner.layout import Layout
from tcpdsl.planner.problem import Problem, Role
from tcpdsl.verify import LaneMode
from tcpdsl.verify.constants import (
    CONTRACT_LANE_OUT_PACKET_ELEMENTS,
    MAX_LANES,
    TEMPORAL_ACCUMULATOR_COLS,
    VALID_LANE_SIZES,
    align_up,
)

_OUT = CONTRACT_LANE_OUT_PACKET_ELEMENTS


@dataclass(frozen=True)
class Packing:
    """The Outer stage's packet: ``packet = [packed, flit]``; the reducers keep ``kept``."""

    packet: Layout
    flit: Layout
    packed: Layout
    kept: Layout
    read: Layout  # the packet's innermost digits the TRF holds (its weight axes)
    counts: tuple[tuple[str, int], ...]  # packet cells taken from each stream axis

    @property
    def pack(self) -> int:
        return self.packed.size


@dataclass(frozen=True)
class Candidate:
    """Every mapping of one chain but the Lane Folder's, which :meth:`lane_layouts` gives per mode."""

    grid: Grid
    packing: Packing
    lane: Layout
    stream_time: Layout
    weight_time: Layout
    weight_packet: Layout
    element: Layout
    outer_time: Layout
    time_out: Layout

    def lane_layouts(self, mode: LaneMode) -> tuple[Layout, Layout] | None:
        """``(OutTime, OutPacket)`` of ``contract_lane`` in ``mode``; None when no padding writes it per axis."""
        kept = self.packing.kept
        if mode is LaneMode.INTERLEAVED:
            packet = self.lane.padded(_OUT)
            return None if packet is None else (Layout.of(self.time_out, kept), packet)
        padded = kept.padded(align_up(kept.size, _OUT))
        halves = None if padded is None else padded.split(_OUT)
        return None if halves is None else (Layout.of(self.time_out, self.lane, halves[0]), halves[1])


def _pow2_divisors(n: int, limit: int) -> list[int]:
    out, d = [], 1
    while d <= limit and n % d == 0:
        out.append(d)
        d *= 2
    return out


def packings(problem: Problem, grid: Grid, clock: Clock) -> Iterator[Packing]:
    """Outer packets of one or two flits, widest first; a Zero-padded flit only when none fits exactly."""
    flit = problem.flit
    order = (
        *problem.with_role(Role.STREAM),
        *(a for a in problem.stream_axes if problem.role(a) is Role.BATCH),
        *(a for a in problem.stream_axes if problem.role(a) is Role.CONTRACTED),
    )
    cells = {a: _cells(problem, grid, a) for a in order}
    options = [_pow2_divisors(cells[a], 2 * flit) for a in order]
    exact: list[tuple[int, ...]] = []
    for counts in _ticking(product(*options), clock):
        total = prod(counts)
        kept = prod(c for a, c in zip(order, counts) if problem.role(a) is not Role.CONTRACTED)
        if total in (flit, 2 * flit) and kept <= TEMPORAL_ACCUMULATOR_COLS:
            exact.append(counts)
    exact.sort(key=lambda c: (-prod(c), c))
    for counts in exact:
        yield _packing(problem, order, counts, flit)
    if not exact:
        yield from _padded_packings(problem, cells, flit, clock)


def _cells(problem: Problem, grid: Grid, axis: str) -> int:
    return problem.sizes[axis] if problem.role(axis) is Role.CONTRACTED else grid.cells(axis)


def _packing(problem: Problem, order: tuple[str, ...], counts: tuple[int, ...], flit: int) -> Packing:
    packet = Layout.of(*(problem.digit(a, 1, c) for a, c in zip(order, counts)))
    halves = packet.split(flit)
    assert halves is not None  # power-of-two digits split at a power of two
    packed, flit_part = halves
    contracted = frozenset(problem.with_role(Role.CONTRACTED))
    kept = packet.without(contracted)
    read = packet.without(frozenset(problem.with_role(Role.STREAM)))
    return Packing(packet, flit_part, packed, kept, read, tuple(zip(order, counts)))


def _padded_packings(problem: Problem, cells: dict[str, int], flit: int, clock: Clock) -> Iterator[Packing]:
    """Flits of contracted digits padded with zeros (the hardware sums the whole packet), fullest
    first: for axes whose sizes have few factors of two, any divisor may fill part of the flit."""
    contracted = [a for a in problem.stream_axes if problem.role(a) is Role.CONTRACTED]
    options = [[d for d in range(1, flit + 1) if cells[a] % d == 0] for a in contracted]
    found = sorted((c for c in _ticking(product(*options), clock) if prod(c) < flit), key=lambda c: (-prod(c), c))
    for counts in found:
        digits = Layout.of(*(problem.digit(a, 1, c) for a, c in zip(contracted, counts)))
        packet = digits.padded(flit, PaddingKind.ZERO)
        if packet is not None:
            yield Packing(packet, packet, Layout(), Layout(), packet, tuple(zip(contracted, counts)))
            return


def lanes(problem: Problem, grid: Grid, clock: Clock) -> Iterator[tuple[Layout, dict[str, int]]]:
    """Lane layouts over the weight-only axes (innermost digits), most live lanes first."""
    axes = problem.with_role(Role.WEIGHT)
    options = [[d for d in range(1, MAX_LANES + 1) if grid.cells(a) % d == 0] for a in axes]
    choices = [c for c in _ticking(product(*options), clock) if prod(c) <= MAX_LANES]
    choices.sort(key=lambda c: (-prod(c), c))
    for counts in choices:
        digits = Layout.of(*(problem.digit(a, 1, c) for a, c in zip(axes, counts)))
        lane = digits.padded(min(n for n in VALID_LANE_SIZES if n >= digits.size))
        if lane is not None:
            yield lane, dict(zip(axes, counts))


def _ticking(choices: Iterator[tuple[int, ...]], clock: Clock) -> Iterator[tuple[int, ...]]:
    """``choices`` as they come, ticking ``clock`` for each (products over many axes grow fast)."""
    for choice in choices:
        clock.tick()
        yield choice


def candidates(problem: Problem, grid: Grid, packing: Packing, lane: Layout, lane_counts: dict[str, int]) -> Iterator[Candidate]:
    """The chains of one packet and lane choice: weight-only Time digits in the stream, or broadcast."""
    packet_counts = dict(packing.counts)
    kept: list[Digit] = []
    walked: list[Digit] = []
    contracted: list[Digit] = []
    for axis in problem.axes:
        role = problem.role(axis)
        cells = _cells(problem, grid, axis)
        inner = lane_counts.get(axis, 1) if role is Role.WEIGHT else packet_counts.get(axis, 1)
        digit = problem.digit(axis, inner, cells // inner)
        {Role.WEIGHT: walked, Role.CONTRACTED: contracted}.get(role, kept).append(digit)
    contracted.sort(key=lambda d: problem.stream_axes.index(d.axis))
    for broadcast in (False, True) if walked else (False,):
        outer_kept = Layout.of(*kept) if broadcast else Layout.of(*kept, *walked)
        tail = Layout.of(*walked) if broadcast else Layout()
        stream_time = Layout.of(outer_kept, *contracted, packing.packed)
        outer_time = Layout.of(outer_kept, *contracted, tail)
        weight_axes = frozenset(problem.weight_axes)
        element = Layout.of(*(d for d in outer_time.digits if d.axis in weight_axes), packing.read)
        halves = element.split(problem.flit)
        if halves is None:
            continue
        time_out = outer_time.without(frozenset(problem.with_role(Role.CONTRACTED)))
        yield Candidate(
            grid, packing, lane, stream_time, Layout.of(lane, halves[0]), halves[1], element, outer_time, time_out
        )
