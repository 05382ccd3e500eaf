"""The contraction to search for: an einsum's axes, their sizes, roles and the two dtypes.

Each letter of ``"th,lh->tl"`` names the axis of the same letter in upper case. One operand is
streamed and the other held in the TRF; every axis then has one of four roles, which decides where
its digits may go (docs/search.md §2).
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Mapping as MappingABC
from dataclasses import dataclass, field, replace
from functools import cached_property
from math import prod
from typing import Final

from tcpdsl.algebra import Axis, Digit
from tcpdsl.errors import LayoutError
from tcpdsl.syntax import is_axis_name
from tcpdsl.verify import BITS, check_pairing, flit_elements
from tcpdsl.verify.constants import align_up

STAGE: Final = "search"
# The most cells an operand or the result may hold: 2**40 cells are 512 GiB even at four bits, far
# beyond the memory of any device, and below it divisors are found in a fraction of a second.
MAX_CELLS: Final = 2**40


class Role(enum.Enum):
    """What an axis is to the contraction."""

    CONTRACTED = "contracted"  # in both operands, summed away
    BATCH = "batch"  # in both operands and the result
    STREAM = "stream"  # in the streamed operand and the result
    WEIGHT = "weight"  # in the TRF operand and the result


@dataclass(frozen=True)
class Problem:
    """An einsum with sizes, oriented: ``stream_axes`` stream, ``weight_axes`` sit in the TRF.

    Axes of size 1 are no digit of any layout (a one-cell axis is the mapping ``1``), so the
    problem leaves them out: ``operands``, ``out_axes`` and ``sizes`` hold the others, and
    ``given`` the einsum's operand and result axes as written, which ``Plan.run`` reads and returns.
    ``declared`` is each axis' size as its module declares it: larger than ``sizes`` for a tile of
    an axis object (docs/search.md §1), whose layouts then hold its innermost ``sizes`` cells.
    """

    einsum: str
    operands: tuple[tuple[str, ...], tuple[str, ...]]
    out_axes: tuple[str, ...]
    sizes: dict[str, int]
    given: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    given_sizes: dict[str, int]
    stream_dtype: str
    weight_dtype: str
    accumulator: str
    swapped: bool  # True when the einsum's second operand is the stream
    declared: dict[str, int]
    # An axis searched padded with zeros: its own size, where ``declared`` holds the padded extent
    # its layouts are written over, and ``sizes`` that extent (a contracted axis, docs/search.md
    # §5) or one tile of it (a weight-only axis padded to whole tiles, §4).
    zero_padded: dict[str, int] = field(default_factory=dict)
    # A contracted axis cut over the slices, its partial sums added by the vector engine's
    # inter-slice reducer (docs/search.md §5): how many slices share it, where ``sizes`` holds the
    # cells each slice sums and ``declared`` the whole axis.
    split: dict[str, int] = field(default_factory=dict)

    @property
    def split_count(self) -> int:
        """The slices that share each slice's partial sums (1: the reduction stays in a slice)."""
        return prod(self.split.values())

    def extent(self, axis: str) -> int:
        """The cells of ``axis`` the plan covers: one slice's share of a split axis times its slices."""
        return self.sizes[axis] * self.split.get(axis, 1)

    @property
    def written(self) -> dict[str, int]:
        """Each axis' size as the module declares it and the operands hold it (a padded axis' own size)."""
        return {**self.declared, **self.zero_padded}

    def digit(self, axis: str, stride: int, count: int) -> Digit:
        """The digit ``axis / stride % count``, over the padded extent of a Zero-padded axis."""
        return Digit(axis, self.declared[axis], stride, count, self.zero_padded.get(axis, 0))

    @property
    def stream_axes(self) -> tuple[str, ...]:
        return self.operands[1] if self.swapped else self.operands[0]

    @property
    def weight_axes(self) -> tuple[str, ...]:
        return self.operands[0] if self.swapped else self.operands[1]

    @cached_property
    def axes(self) -> tuple[str, ...]:
        """Every axis once: output axes first, then the contracted ones in stream order."""
        return tuple(dict.fromkeys((*self.out_axes, *self.stream_axes, *self.weight_axes)))

    @cached_property
    def roles(self) -> dict[str, Role]:
        out: dict[str, Role] = {}
        for axis in self.axes:
            in_stream, in_weight = axis in self.stream_axes, axis in self.weight_axes
            if axis not in self.out_axes:
                out[axis] = Role.CONTRACTED
            elif in_stream and in_weight:
                out[axis] = Role.BATCH
            else:
                out[axis] = Role.STREAM if in_stream else Role.WEIGHT
        return out

    def role(self, axis: str) -> Role:
        return self.roles[axis]

    def with_role(self, *roles: Role) -> tuple[str, ...]:
        return tuple(a for a in self.axes if self.role(a) in roles)

    @property
    def bits(self) -> int:
        return BITS[self.stream_dtype]

    @property
    def flit(self) -> int:
        """Stream elements in one 32-byte flit."""
        return flit_elements(self.bits)

    def oriented(self, swapped: bool) -> Problem:
        return replace(self, swapped=swapped)


def _error(rule: str, detail: str, hint: str) -> LayoutError:
    return LayoutError(STAGE, rule, detail, hint=hint)


def parse_einsum(einsum: object) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]]:
    """``"th,lh->tl"`` as ``((("T", "H"), ("L", "H")), ("T", "L"))``."""
    example = 'write two operands and the result, e.g. "th,lh->tl"'
    if not isinstance(einsum, str):
        raise _error("Einsum", f"the einsum must be a string, got {type(einsum).__name__}", example)
    text = einsum.replace(" ", "")
    if text.count("->") != 1:
        raise _error("Einsum", f"einsum {einsum!r} must have one '->' before the result axes", example)
    inputs, result = text.split("->")
    operands = inputs.split(",")
    if len(operands) != 2:
        raise _error(
            "Einsum", f"einsum {einsum!r} has {len(operands)} operand(s); a contraction takes exactly two", example
        )
    parts = [*operands, result]
    for part in parts:
        bad = [c for c in part if not c.isascii() or not c.isalpha()]
        if bad:
            raise _error("Einsum", f"einsum {einsum!r} uses {bad[0]!r}; axes are single letters", example)
        if len(set(part.upper())) != len(part):
            raise _error(
                "Einsum", f"einsum {einsum!r} repeats an axis in {part!r} (a diagonal)",
                "name each axis once per operand; take diagonals before the contraction",
            )
    names = [tuple(c.upper() for c in part) for part in parts]
    for axis in names[2]:
        if axis not in names[0] and axis not in names[1]:
            raise _error(
                "Einsum", f"result axis {axis} of {einsum!r} is in neither operand",
                "every result axis must come from an operand",
            )
    for index, (mine, other) in enumerate(((names[0], names[1]), (names[1], names[0]))):
        lonely = [a for a in mine if a not in other and a not in names[2]]
        if lonely:
            raise _error(
                "OneSidedSum",
                f"axis {lonely[0]} is summed but appears only in operand {index + 1} of {einsum!r}",
                f"sum {lonely[0]} out of that operand before the contraction, or keep it in the result",
            )
    return (names[0], names[1]), names[2]


def _dtype_name(value: object, what: str) -> str:
    name = value if isinstance(value, str) else getattr(value, "name", None)
    if not isinstance(name, str) or name not in BITS:
        raise _error(
            "Dtype", f"{what}= must be a tcpdsl scalar such as tcp.bf16, got {value!r}",
            f"pass one of {', '.join(f'tcp.{n}' for n in BITS)}",
        )
    return name


def _size(axis: str, size: object) -> int:
    """A positive int size (numpy integers too)."""
    try:
        value = None if isinstance(size, bool) else operator.index(size)  # type: ignore[arg-type]
    except TypeError:
        value = None
    if value is None or value <= 0:
        raise _error("Sizes", f"axis {axis} has size {size!r}; sizes are positive ints", f"give {axis} a positive int")
    return value


def axis_names(axes: object, letters: tuple[str, ...]) -> tuple[dict[str, str], dict[str, int]]:
    """The user's name for each einsum letter (its upper case unless ``axes`` renames it), and the
    sizes the axis objects among ``axes`` declare (``sizes`` may search a tile of one)."""
    names = {letter: letter for letter in letters}
    carried: dict[str, int] = {}
    if axes is None:
        return names, carried
    example = 'e.g. axes={"w": "Wp"} or axes={"w": Wp} for Wp = tcp.axis("Wp", 151936)'
    if not isinstance(axes, MappingABC):
        raise _error("AxisName", f"axes= must be a dict from einsum letters to axis names, got {type(axes).__name__}", example)
    for key, value in axes.items():
        letter = key.upper() if isinstance(key, str) else None
        if letter not in names:
            raise _error("AxisName", f"axes= renames {key!r}, which is no letter of the einsum", example)
        name = value.name if isinstance(value, Axis) else value
        if not isinstance(name, str) or not is_axis_name(name):
            raise _error(
                "AxisName", f"axes= names letter {key} {value!r}, which is no axis name",
                "an axis name starts with an uppercase ASCII letter, then letters, digits or _ (e.g. Wp)",
            )
        names[letter] = name
        if isinstance(value, Axis):
            carried[name] = value.n
    doubled = [n for n in names.values() if list(names.values()).count(n) > 1]
    if doubled:
        raise _error("AxisName", f"axes= gives two einsum letters the name {doubled[0]}", "give every letter its own name")
    return names, carried


def make_problem(einsum: object, sizes: object, stream: object, weights: object, axes: object = None) -> Problem:
    """Check the einsum, its sizes and the dtype pair; the stream is the first operand. ``axes``
    renames einsum letters to the user's axis names (see :func:`axis_names`)."""
    letters, out_letters = parse_einsum(einsum)
    names, carried = axis_names(axes, tuple(dict.fromkeys((*letters[0], *letters[1]))))
    operands = (tuple(names[a] for a in letters[0]), tuple(names[a] for a in letters[1]))
    out_axes = tuple(names[a] for a in out_letters)
    if not isinstance(sizes, MappingABC):
        raise _error("Sizes", f"sizes must be a dict such as {{\"T\": 256}}, got {type(sizes).__name__}", "")
    for name, n in carried.items():
        extent = _size(name, sizes.get(name, n))
        if extent > n or n % extent:
            raise _error(
                "Sizes", f"axis {name} has size {n}, so a tile of it cannot hold {extent} cells",
                f"give {name} a size that divides {n}, or leave it out to search the whole axis",
            )
    every = {**carried, **sizes}
    used = dict.fromkeys((*operands[0], *operands[1]))
    checked: dict[str, int] = {}
    for axis in used:
        size = every.get(axis)
        if size is None:
            raise _error("Sizes", f"axis {axis} of {einsum!r} has no size", f"add {axis}=<size> to the sizes")
        checked[axis] = _size(axis, size)
    extra = [str(a) for a in every if a not in used]
    if extra:
        raise _error(
            "Sizes", f"sizes name {', '.join(extra)}, which {einsum!r} does not use",
            "give sizes for the einsum's axes only (each letter in upper case, or its name in axes=)",
        )
    for what, held in (("operand 1", operands[0]), ("operand 2", operands[1]), ("the result", out_axes)):
        cells = prod(checked[a] for a in held)
        if cells > MAX_CELLS:
            raise _error(
                "TooLarge",
                f"{what} of {einsum!r} ({', '.join(held)}) holds {cells} cells, more than the {MAX_CELLS} (2**40) "
                "any device could hold",
                "search for one tile of the problem and run it once per tile",
            )
    stream_name, weight_name = _dtype_name(stream, "stream"), _dtype_name(weights, "weights")
    accumulator = check_pairing(stream_name, weight_name)

    def wide(axes: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(a for a in axes if checked[a] > 1)

    return Problem(
        str(einsum), (wide(operands[0]), wide(operands[1])), wide(out_axes),
        {a: n for a, n in checked.items() if n > 1}, (*operands, out_axes), checked,
        stream_name, weight_name, accumulator, False,
        {a: carried.get(a, n) for a, n in checked.items() if n > 1},
    )


def zero_padded(problem: Problem) -> list[Problem]:
    """The problem with each contracted axis that fills no whole flit padded with zeros to the next
    multiple of one and of two flits (docs/search.md §5): ``K`` = 999 is also searched as
    ``K #{0} 1008`` and ``K #{0} 1024``, whose full packets sum fewer flits. An axis of whole flits
    is not padded: its exact packets already fill them."""
    out: list[Problem] = []
    for axis in problem.with_role(Role.CONTRACTED):
        size = problem.sizes[axis]
        if problem.declared[axis] != size or size % problem.flit == 0 or problem.split:
            continue  # a tile of an axis object (or a slice's share of a split one) is no whole axis to pad
        for extent in sorted({align_up(size, problem.flit), align_up(size, 2 * problem.flit)} - {size}):
            out.append(replace(
                problem, sizes={**problem.sizes, axis: extent}, declared={**problem.declared, axis: extent},
                zero_padded={**problem.zero_padded, axis: size},
            ))
    return out


def split_reductions(problem: Problem, slices: int) -> list[Problem]:
    """The problem with one contracted axis cut over 2, 4, ... of ``slices`` slices (powers of two,
    so that the Slice layout pads to a valid size around it), each slice summing its share
    (docs/search.md §5). A share is a whole number of flits, so that its packets stay full; a tile
    of an axis object or an axis padded with zeros is not split."""
    out: list[Problem] = []
    for axis in problem.with_role(Role.CONTRACTED):
        size = problem.sizes[axis]
        if problem.declared[axis] != size or problem.zero_padded or problem.split:
            continue
        count = 2
        while count <= slices and size % (count * problem.flit) == 0:
            out.append(replace(problem, sizes={**problem.sizes, axis: size // count}, split={axis: count}))
            count *= 2
    return out
