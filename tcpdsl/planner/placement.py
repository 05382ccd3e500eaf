"""Where a kernel's operands are before it runs, and the moves that bring them where a plan wants them.

By default the stream is already in every slice's DM as the plan reads it (the previous kernel left
it there) and the weights are in HBM. ``inputs=`` says otherwise, per einsum operand (docs/search.md
§1): ``"hbm"`` (moved HBM to DM first), ``"dm"`` (already where the plan wants it), or the grid its
DM tensor is spread over, ``{"Slice": "Q / 32, 1 # 4", ...}``: free when the plan's grid holds the
same cells in every slice, otherwise moved DM to DM between slices.
"""

from __future__ import annotations

from collections.abc import Mapping as MappingABC
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import Mapping, parse
from tcpdsl.cost import dm_move_cycles, dma_engines, live_cells, weight_dma_cycles
from tcpdsl.errors import LayoutError
from tcpdsl.planner.grid import Grid, GridPins
from tcpdsl.planner.problem import STAGE, Problem

HBM: Final = "hbm"
DM: Final = "dm"
Where = str | GridPins
_HINT: Final = 'e.g. inputs=("dm", "hbm") or inputs=({"Slice": "Q / 32, 1 # 4"}, "hbm")'


@dataclass(frozen=True)
class Placement:
    """Where the streamed and the TRF operand are (``"hbm"``, ``"dm"`` or a DM grid)."""

    stream: Where = DM
    weights: Where = HBM


def placement(problem: Problem, inputs: object) -> tuple[Where, Where] | None:
    """``inputs=`` checked, per einsum operand (first, second); None when not given."""
    if inputs is None:
        return None
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence) or len(inputs) != 2:
        raise LayoutError(STAGE, "Option", f"inputs= must give one place per einsum operand, got {inputs!r}", hint=_HINT)
    first, second = (_where(problem, value, index) for index, value in enumerate(inputs))
    return first, second


def _where(problem: Problem, value: object, index: int) -> Where:
    if value in (HBM, DM):
        return str(value)
    if isinstance(value, MappingABC):
        grid: dict[str, Mapping] = {}
        for key, text in value.items():
            name = key.lower() if isinstance(key, str) else key
            if name not in ("chip", "cluster", "slice"):
                raise LayoutError(STAGE, "Option", f"inputs= grid of operand {index + 1} names {key!r}", hint=_HINT)
            grid[name] = text if isinstance(text, Mapping) else parse(str(text), problem.declared)
        return GridPins(grid.get("chip"), grid.get("cluster"), grid.get("slice"))
    raise LayoutError(
        STAGE, "Option", f'inputs= place of operand {index + 1} must be "hbm", "dm" or a grid dict, got {value!r}',
        hint=_HINT,
    )


def oriented(problem: Problem, places: tuple[Where, Where] | None) -> Placement:
    """The places by role in ``problem``'s orientation (by default the stream in DM, the weights
    in HBM, whichever operand streams)."""
    if places is None:
        return Placement()
    first, second = places
    return Placement(second, first) if problem.swapped else Placement(first, second)


def moves(
    grid: Grid, where: Placement, stream_bytes: int, trf_bytes: int
) -> tuple[tuple[tuple[str, int], ...], bool]:
    """The moves that bring each operand where the plan reads it, and whether the weights still
    come from HBM (the whole kernel's own weight DMA, docs/cost-model.md)."""
    layouts = (grid.chip, grid.cluster, grid.slice)
    mappings = tuple(layout.mapping for layout in layouts)
    chips = live_cells(mappings[0])
    slices = chips * live_cells(mappings[1]) * live_cells(mappings[2])
    engines = dma_engines(*mappings)
    found: list[tuple[str, int]] = []
    if where.stream == HBM:
        found.append(("stream DMA", weight_dma_cycles(stream_bytes, slices, engines, chips)))
    elif isinstance(where.stream, GridPins) and where.stream.place(layouts) is None:
        found.append(("stream move", dm_move_cycles(stream_bytes, slices, engines)))
    if isinstance(where.weights, GridPins) and where.weights.place(layouts) is None:
        found.append(("weight move", dm_move_cycles(trf_bytes, slices, engines)))
    return tuple(found), where.weights == HBM
