"""The error when no plan exists: the constraint that rules every candidate out, in words."""

from __future__ import annotations

from math import prod

from tcpdsl.errors import LayoutError
from tcpdsl.planner.engine import Outcome, Settings
from tcpdsl.planner.problem import STAGE, Problem, Role
from tcpdsl.verify import BITS
from tcpdsl.verify.constants import TRF_CAPACITY_BYTES
from tcpdsl.verify.dtypes import bytes_text


def no_plan(problem: Problem, outcome: Outcome, settings: Settings) -> LayoutError:
    """Why ``outcome`` holds no plan; ``problem`` is the first orientation searched."""
    if not outcome.exhausted:
        return LayoutError(
            STAGE, "Budget", f"no plan found within the {settings.budget:g} s budget",
            hint="raise budget=, or fix Chip/Cluster/Slice to shrink the space",
        )
    if outcome.grids == 0:
        return LayoutError(
            STAGE, "FixedGrid", "no grid layout of the einsum's kept axes matches the fixed Chip, Cluster and Slice",
            hint="the search puts the outermost digits of kept axes on the grid (docs/search.md §2); "
            "fix layouts of that form, or leave them free",
        )
    if outcome.capacity_grids == outcome.grids:
        return capacity_error(problem, settings)
    if outcome.packets == 0:
        flit = problem.flit
        return LayoutError(
            STAGE, "NoPacket",
            f"no slice holds enough of the stream to fill a {flit}-element packet of {problem.stream_dtype}, "
            "and there is no contracted axis to pad with zeros",
            hint="give the stream more cells per slice (larger axes), or contract over an axis",
        )
    if not outcome.failures:
        return LayoutError(
            STAGE, "NoCandidate",
            f"every candidate puts a TRF Element in no whole number of {problem.flit}-element flits",
            hint="give the TRF operand more cells per slice, or contract over a larger axis",
        )
    (stage, rule), count = outcome.failures.most_common(1)[0]
    example = outcome.examples[(stage, rule)]
    return LayoutError(
        stage, rule,
        f"no candidate kernel passes: {count} of {outcome.chains} chains fail this rule, e.g. {example.detail}",
        hint=example.hint,
    )


def weights_overflow(problem: Problem, settings: Settings) -> bool:
    """Whether no grid can hold the weights, known before any is tried: spread over every slice of
    the device, each slice's share of the TRF operand still overflows the TRF."""
    cells = prod(problem.extent(a) for a in problem.weight_axes)
    slices = settings.machine.chips * settings.machine.slices
    return -(-cells // slices) * BITS[problem.weight_dtype] > TRF_CAPACITY_BYTES * 8


def capacity_error(problem: Problem, settings: Settings) -> LayoutError:
    """Every grid overflows the TRF: name the axes that cannot be spread and the bytes they need."""
    contracted = problem.with_role(Role.CONTRACTED)
    whole = prod(problem.sizes[a] for a in contracted)
    slices = settings.machine.chips * settings.machine.slices
    bits = BITS[problem.weight_dtype]
    if whole * bits > TRF_CAPACITY_BYTES * 8:
        names = ", ".join(f"{a}={problem.sizes[a]}" for a in contracted)
        detail = (
            f"no layout of the TRF holds the weights: the contracted axes ({names}) stay whole in every slice, "
            f"so each slice needs {bytes_text(bits, whole)} bytes of {problem.weight_dtype} weights, more than "
            f"the {TRF_CAPACITY_BYTES}-byte tensor register file"
        )
        hint = "split the contracted axis into tiles, run one kernel per tile and add the results"
    else:
        weight = prod(problem.sizes[a] for a in problem.weight_axes)
        detail = (
            f"no layout of the TRF holds the weights: {bytes_text(bits, weight)} bytes of {problem.weight_dtype} "
            f"weights cannot be spread over {slices} slices (as the axis sizes divide) so that each slice holds at "
            f"most {TRF_CAPACITY_BYTES} bytes"
        )
        hint = "tile the weights' kept axes and run one kernel per tile, or give the machine more chips"
    return LayoutError("to_trf", "ExceedsCapacity", detail, hint=hint)
