"""``tcp.search``: the best valid kernels for a two-operand einsum, ranked by the cost model."""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping as MappingABC
from collections.abc import Sequence
from numbers import Real
from dataclasses import replace
from typing import Any, Final, Literal, SupportsIndex

from tcpdsl.algebra import Axis, Mapping, parse
from tcpdsl.errors import LayoutError
from tcpdsl.planner.engine import Found, Settings, run
from tcpdsl.planner.failure import capacity_error, no_plan, weights_overflow
from tcpdsl.planner.grid import MAX_SLICE, GridPins, Machine
from tcpdsl.planner.placement import placement
from tcpdsl.planner.plan import Plan, Plans
from tcpdsl.planner.problem import STAGE, Problem, make_problem, split_reductions, zero_padded
from tcpdsl.planner.progress import Progress
from tcpdsl.planner.source import check_axis_names
from tcpdsl.planner.tiling import Tiling, tile_problems
from tcpdsl.tensors.device import Topology
from tcpdsl.numerics.scalars import Scalar, bf16
from tcpdsl.verify import LaneMode
from tcpdsl.verify.constants import MAX_LANES

DEFAULT_BUDGET: Final = 5.0
FIXABLE: Final = ("Chip", "Cluster", "Slice", "Lane", "mode")
_CANONICAL: Final = {k.lower(): k for k in FIXABLE}  # fixed= keys in any case: "slice" is Slice
Streamed = Literal["first", "second", "either"]
_ORIENTATIONS: Final[dict[str, tuple[bool, ...]]] = {"first": (False,), "second": (True,), "either": (False, True)}


def search(
    einsum: str,
    sizes: MappingABC[str, SupportsIndex],
    *,
    stream: type[Scalar] | str = bf16,
    weights: type[Scalar] | str = bf16,
    top: SupportsIndex = 5,
    streamed: Streamed = "first",
    fixed: MappingABC[str, Mapping | str | LaneMode] | None = None,
    topology: Topology | None = None,
    budget: float = DEFAULT_BUDGET,
    progress: bool | None = None,
    axes: MappingABC[str, str | Axis[Any, Any]] | None = None,
    inputs: Sequence[str | MappingABC[str, Mapping | str]] | None = None,
) -> Plans:
    """Up to ``top`` valid kernels for ``einsum`` (e.g. ``"th,lh->tl"``), fewest cycles first.

    Each letter names the axis of the same letter in upper case, unless ``axes`` names it:
    ``axes={"w": "Wp"}`` or ``axes={"w": Wp}`` with an axis object (which brings its size).
    ``sizes`` gives every axis by that name.
    ``stream`` and ``weights`` are the dtypes of the streamed and the TRF operand; ``streamed``
    says which einsum operand streams (``"either"`` ranks both ways together). ``fixed`` pins
    layouts: ``{"Chip": m["1"], "Cluster": "1 # 2", "Slice": ..., "Lane": ..., "mode": LaneMode...}``
    (keys in any case); a grid layout may pad where it likes (``"Q / 32, 1 # 4"``).
    ``topology`` is the device: Chip spreads over its chips, Cluster x Slice over the processing
    elements of a chip. The search stops after ``budget`` seconds of wall time with the best plans
    so far (``Plans.exhausted`` is then False). ``progress`` draws a bar on stderr (default: when
    stderr is a terminal). ``inputs`` says where each einsum operand is before the kernel:
    ``"hbm"``, ``"dm"`` (already where the plan reads it) or the grid of its DM tensor
    (``{"Slice": "Q / 32, 1 # 4"}``); by default the stream is in DM and the weights in HBM. The
    plan's cycles include the moves that bring them where it reads them.

    Raises ``tcp.LayoutError`` naming the constraint that rules out every kernel, and
    ``tcp.DtypeError`` for a dtype pair the Multiplier refuses.
    """
    problem = make_problem(einsum, sizes, stream, weights, axes)
    check_axis_names(problem)
    settings = replace(make_settings(problem, top, fixed, topology, budget), places=placement(problem, inputs))
    if not isinstance(streamed, str) or streamed not in _ORIENTATIONS:
        raise LayoutError(
            STAGE, "Option", f"streamed= must be \"first\", \"second\" or \"either\", got {streamed!r}",
            hint="\"first\" streams the einsum's first operand and holds the second in the TRF",
        )
    oriented = [problem.oriented(swapped) for swapped in _ORIENTATIONS[streamed]]
    return plan_problem([q for p in oriented for q in variants(p, settings.machine)], settings, progress)


def variants(problem: Problem, machine: Machine, split: bool = True) -> list[Problem]:
    """``problem`` and the forms the space also holds: padded with zeros, or (unless ``split`` is
    False) with a split reduction (docs/search.md §5)."""
    splits = split_reductions(problem, min(MAX_SLICE, machine.slices)) if split else []
    return [problem, *zero_padded(problem), *splits]


def plan_problem(oriented: list[Problem], settings: Settings, progress: bool | None = None) -> Plans:
    """The plans of a checked problem in each of its orientations, tiled when no grid holds it."""
    problems = [p for p in oriented if not weights_overflow(p, settings)]
    if problems:
        outcome = run(problems, settings, Progress(progress))
        if not outcome.found:
            raise no_plan(problems[0], outcome, settings)
        plans = tuple(Plan(f.problem, f.chain, rank, settings.machine) for rank, f in enumerate(outcome.found, 1))
        return Plans(plans, outcome.exhausted, outcome.seconds, outcome.chains)
    # No grid holds the weights: search tiles of them (docs/search.md §4), each reduced in its slices.
    spread = settings.machine.chips * settings.machine.slices * MAX_LANES
    whole = [p for p in oriented if not p.split]
    tilings = [t for p in whole for t in tile_problems(p, lambda q: weights_overflow(q, settings), spread)]
    if not tilings:  # said at once: the search would try every grid in vain
        raise capacity_error(oriented[0], settings)
    return _tiled(tilings, replace(settings, budget=settings.budget / len(tilings)), progress)


def _tiled(tilings: list[tuple[Problem, Tiling]], settings: Settings, progress: bool | None) -> Plans:
    """Search each tiling with its share of the budget and rank the plans of all by total cycles."""
    found: list[tuple[int, Found, Tiling]] = []
    outcomes = []
    for problem, tiling in tilings:
        outcome = run([problem], settings, Progress(progress))
        outcomes.append((problem, outcome))
        found += [(tiling.count * f.cycles, f, tiling) for f in outcome.found]
    if not found:
        problem, outcome = outcomes[0]
        raise no_plan(problem, outcome, settings)
    found.sort(key=lambda item: (item[0], item[1].rank))
    best = found[: settings.top]
    plans = tuple(Plan(f.problem, f.chain, rank, settings.machine, t) for rank, (_, f, t) in enumerate(best, 1))
    exhausted = all(o.exhausted for _, o in outcomes)
    return Plans(plans, exhausted, sum(o.seconds for _, o in outcomes), sum(o.chains for _, o in outcomes))


def make_settings(
    problem: Problem,
    top: object,
    fixed: MappingABC[str, Mapping | str | LaneMode] | None,
    topology: object,
    budget: object,
) -> Settings:
    count = _positive_int(top)
    if count is None:
        raise LayoutError(STAGE, "Option", f"top= must be a positive int, got {top!r}", hint="ask for e.g. top=5 plans")
    seconds = _seconds(budget)
    if topology is None:
        topology = Topology()
    if not isinstance(topology, Topology):
        raise LayoutError(STAGE, "Option", f"topology= must be a tcp.Topology, got {type(topology).__name__}")
    pins = _pins(problem, fixed)
    mode = pins.get("mode")
    modes = (mode,) if isinstance(mode, LaneMode) else (LaneMode.INTERLEAVED, LaneMode.SEQUENTIAL)
    grid = GridPins(*(_mapping(pins.get(k)) for k in ("Chip", "Cluster", "Slice")))
    return Settings(count, seconds, Machine(topology.chips, topology.pes), grid, _mapping(pins.get("Lane")), modes)


def _positive_int(value: object) -> int | None:
    """``value`` as a positive int (numpy integers too), else None."""
    if isinstance(value, bool):
        return None
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None
    return number if number > 0 else None


def _seconds(budget: object) -> float:
    """A positive budget in seconds; one too large for a float (or infinite) sets no limit."""
    if not isinstance(budget, bool) and isinstance(budget, Real):
        try:
            seconds = float(budget)
        except OverflowError:  # a number beyond every float: no limit if positive, else refused below
            seconds = math.inf if isinstance(budget, int) and budget > 0 else math.nan
        if seconds > 0:  # False for NaN
            return seconds
    raise LayoutError(
        STAGE, "Option", f"budget= must be a positive number of seconds, got {_short(budget)}", hint="e.g. budget=5.0"
    )


def _short(value: object) -> str:
    """``repr(value)``, cut short: a huge number should not flood the message."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def _mapping(value: Mapping | LaneMode | None) -> Mapping | None:
    return value if isinstance(value, Mapping) else None


def _pins(problem: Problem, fixed: object) -> dict[str, Mapping | LaneMode]:
    if fixed is None:
        return {}
    if not isinstance(fixed, MappingABC):
        raise LayoutError(
            STAGE, "Option", f"fixed= must be a dict, got {type(fixed).__name__}", hint='e.g. fixed={"Cluster": "1 # 2"}'
        )
    pins: dict[str, Mapping | LaneMode] = {}
    for given, value in fixed.items():
        key = _CANONICAL.get(given.lower(), given) if isinstance(given, str) else given
        if key not in FIXABLE:
            raise LayoutError(
                STAGE, "Option", f"fixed= cannot fix {given!r}", hint=f"fix any of {', '.join(FIXABLE)}",
            )
        if key == "mode":
            if not isinstance(value, LaneMode):
                raise LayoutError(STAGE, "Option", f"fixed mode must be a tcp.LaneMode, got {value!r}")
            pins[key] = value
        elif isinstance(value, Mapping):
            pins[key] = value
        elif isinstance(value, str):
            pins[key] = parse(value, problem.declared)
        else:
            raise LayoutError(
                STAGE, "Option", f"fixed {key} must be a mapping or its text, got {type(value).__name__}",
                hint=f'e.g. fixed={{"{key}": "1 # 2"}}',
            )
    return pins
