"""Weights larger than the chip's TRF: the plan becomes one kernel run once per tile of them.

When no grid holds the TRF operand, the search cuts one of its weight-only axes (an axis of the
result that only the weights carry) into equal tiles, the fewest whose weights fit, and searches
one tile. Every tile is the same kernel on other weights; its results fill disjoint parts of the
output, so the loop writes each tile's result into its place (docs/search.md §5).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

from tcpdsl.planner.grid import divisors
from tcpdsl.planner.problem import Problem, Role


@dataclass(frozen=True)
class Tiling:
    """``count`` tiles of ``axis``, each ``size`` cells: the digit ``axis / size`` numbers them."""

    axis: str
    count: int
    size: int

    @property
    def digit(self) -> str:
        return f"{self.axis} / {self.size}"


# Tilings tried per problem: the fewest tiles that fit and the next few counts, since more, smaller
# tiles can spread better (155648 = 2^13 x 19 rows fit in 16 tiles, but 19 tiles fill every lane).
TILINGS: Final = 4


def tile_problems(problem: Problem, overflows: Callable[[Problem], bool]) -> list[tuple[Problem, Tiling]]:
    """Up to ``TILINGS`` ways to cut one weight-only axis into equal tiles whose weights some grid
    can hold (``overflows`` says whether none can), fewest tiles first, for at most twice the
    fewest. Tiles keep at least two cells (a one-cell axis is no digit of any layout), and an axis
    searched as a tile of an axis object already is one, and is not cut again."""
    found: list[tuple[Problem, Tiling]] = []
    for axis in problem.with_role(Role.WEIGHT):
        size = problem.sizes[axis]
        if problem.declared[axis] != size:
            continue
        fitting = [c for c in divisors(size)[1:-1] if not overflows(_tile(problem, axis, size // c))]
        found += [(_tile(problem, axis, size // c), Tiling(axis, c, size // c)) for c in fitting if c <= 2 * fitting[0]]
    found.sort(key=lambda t: t[1].count)
    return found[:TILINGS]


def _tile(problem: Problem, axis: str, size: int) -> Problem:
    return replace(problem, sizes={**problem.sizes, axis: size})


def loop_source(problem: Problem, tiling: Tiling, name: str) -> list[str]:
    """The module lines of the tile loop ``{name}_tiles``: the kernel once per tile, each result
    assigned to its tile of the output."""
    out_axes = " ".join(problem.out_axes)
    shape = ", ".join(str(problem.declared[a]) for a in problem.out_axes)
    dtype = "np.int32" if problem.accumulator == "i32" else "np.float32"
    return [
        "",
        "",
        f"def {name}_tiles(device: tcp.Device, x: tcp.Tensor, w: tcp.Tensor) -> tcp.Tensor:",
        f'    """{name} once per tile {tiling.digit} of the weights ({tiling.count} tiles); each result fills its tile."""',
        f'    out = tcp.Tensor(np.zeros(({shape},), {dtype}), "{out_axes}")',
        f"    for i in range({tiling.count}):",
        f'        part = {name}(Stream(device.main, x), Weights(device.sub, w.tile(m["{tiling.digit}"], i)))',
        f'        out.tile(m["{tiling.digit}"], i).assign(part.to_tensor())',
        "    return out",
    ]
