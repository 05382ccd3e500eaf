"""Weights larger than the chip's TRF: the plan becomes one kernel run once per tile of them.

When no grid holds the TRF operand, the search cuts one of its weight-only axes (an axis of the
result that only the weights carry) into equal tiles, the fewest whose weights fit, and searches
one tile. Every tile is the same kernel on other weights; its results fill disjoint parts of the
output, so the loop writes each tile's result into its place (docs/search.md §5). An axis with too
few factors of two to spread over the device (a vocabulary of 151936 = 2^7 x 1187) is also cut
into tiles of a smooth size, zero-padded to whole tiles (``W #{0} 155648 / 8192``): the last tile
is partial, and its zeros add nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

from tcpdsl.planner.grid import divisors
from tcpdsl.planner.problem import Problem, Role


@dataclass(frozen=True)
class Tiling:
    """``count`` tiles of ``axis``, each ``size`` cells: the digit ``axis / size`` numbers them.

    ``live`` is the axis' own size when it is zero-padded to ``count x size`` cells (0 when the
    tiles divide it): the digit is then ``axis #{0} extent / size``, and the last tile is partial.
    """

    axis: str
    count: int
    size: int
    live: int = 0

    @property
    def digit(self) -> str:
        if self.live:
            return f"{self.axis} #{{0}} {self.count * self.size} / {self.size}"
        return f"{self.axis} / {self.size}"


# Tilings tried per problem: the fewest tiles that fit and the next few counts, since more, smaller
# tiles can spread better (155648 = 2^13 x 19 rows fit in 16 tiles, but 19 tiles fill every lane).
TILINGS: Final = 4


def tile_problems(
    problem: Problem, overflows: Callable[[Problem], bool], spread: int
) -> list[tuple[Problem, Tiling]]:
    """Up to ``TILINGS`` ways to cut one weight-only axis into equal tiles whose weights some grid
    can hold (``overflows`` says whether none can), fewest tiles first, for at most twice the
    fewest. Tiles keep at least two cells (a one-cell axis is no digit of any layout), and an axis
    searched as a tile of an axis object already is one, and is not cut again. An axis whose
    power-of-two part is below ``spread`` (the device's slices times its lanes) is also cut into
    padded tiles (:func:`_padded_tiles`)."""
    found: list[tuple[Problem, Tiling]] = []
    for axis in problem.with_role(Role.WEIGHT):
        size = problem.sizes[axis]
        if problem.declared[axis] != size:
            continue
        fitting = [c for c in divisors(size)[1:-1] if not overflows(_tile(problem, axis, size // c))]
        found += [(_tile(problem, axis, size // c), Tiling(axis, c, size // c)) for c in fitting if c <= 2 * fitting[0]]
        if size & -size < spread:
            found += _padded_tiles(problem, axis, overflows, spread)
    found.sort(key=lambda t: t[1].count)
    return found[:TILINGS]


def _padded_tiles(
    problem: Problem, axis: str, overflows: Callable[[Problem], bool], spread: int
) -> list[tuple[Problem, Tiling]]:
    """Tiles of a smooth size that cover ``axis`` only when it is zero-padded. Each count's share
    of the axis is rounded up to a multiple of the largest power of two up to ``spread`` below it,
    and each tile size is taken once, with the fewest tiles that reach it; the fitting ones, for at
    most twice the fewest count that fits. 151936 cells over 512 slices of 8 lanes give 10 tiles
    of 16384, 13 of 12288 and 19 of 8192."""
    size = problem.sizes[axis]
    if overflows(_tile(problem, axis, 2)):
        return []  # the other axes alone overflow: no tile of this one fits
    found: list[tuple[Problem, Tiling]] = []
    seen: set[int] = set()
    first = 0
    count = 2
    while not first or count <= 2 * first:
        share = -(-size // count)
        if share < 2:
            break
        unit = 1 << (min(spread, share).bit_length() - 1)
        tile = -(-share // unit) * unit
        fewest = -(-size // tile)
        if tile not in seen and fewest * tile > size:
            seen.add(tile)
            padded = _padded(problem, axis, fewest, tile)
            if not overflows(padded):
                first = first or fewest
                found.append((padded, Tiling(axis, fewest, tile, size)))
        count += 1
    return found


def _tile(problem: Problem, axis: str, size: int) -> Problem:
    return replace(problem, sizes={**problem.sizes, axis: size})


def _padded(problem: Problem, axis: str, count: int, size: int) -> Problem:
    """One tile of ``axis`` zero-padded to ``count`` tiles: layouts over ``axis #{0} extent % size``."""
    return replace(
        problem, sizes={**problem.sizes, axis: size}, declared={**problem.declared, axis: count * size},
        zero_padded={**problem.zero_padded, axis: problem.sizes[axis]},
    )


def loop_source(problem: Problem, tiling: Tiling, name: str) -> list[str]:
    """The module lines of the tile loop ``{name}_tiles``: the kernel once per tile, each result
    assigned to its tile of the output."""
    out_axes = " ".join(problem.out_axes)
    shape = ", ".join(str(problem.written[a]) for a in problem.out_axes)
    dtype = "np.int32" if problem.accumulator == "i32" else "np.float32"
    return [
        "",
        "",
        f"def {name}_tiles(device: tcp.Device, x: tcp.Tensor, w: tcp.Tensor) -> tcp.Tensor:",
        f'    """{name} once per tile {tiling.digit} of the weights ({tiling.count} tiles); each result fills its tile."""',
        f'    out = tcp.Tensor(np.zeros(({shape},), {dtype}), "{out_axes}")',
        f"    for i in range({tiling.count}):",
        f'        part = {name}(Stream(device.main, x), Weights(device.sub, w.tile(m["{tiling.digit}"], i)))',
        "        out.assign(part.to_tensor())  # at the tile it fixes; a partial last tile writes its live cells",
        "    return out",
    ]
