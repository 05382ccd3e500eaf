"""Tiles of logical tensors: ``t.tile(m["Wp / 8192"], i)`` and writing a part back with ``assign``.

A tile is a view: the dimension holding the digit is split into the digits above it, the digit
and the digits below it, and indexed at the digit's value. Every check runs before anything is
read or written, so a refused tile or assignment leaves the tensor as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Mapping, NotATerm, Digit, check_axis_sizes, digit_mapping, digit_text, runs, term_of, text_of
from tcpdsl.errors import LayoutError
from tcpdsl.numerics.term_arrays import STAGE, TERM_HINT, Fixed, rearrange, same_digits


class Tiled(Protocol):
    """What a tile is taken of: a logical tensor's array, its terms and the digits it fixes."""

    @property
    def values(self) -> npt.NDArray[Any]: ...

    @property
    def terms(self) -> tuple[Digit, ...]: ...

    @property
    def fixed_terms(self) -> tuple[Fixed, ...]: ...


T = TypeVar("T", bound=Tiled)
Make = Callable[[npt.NDArray[Any], tuple[Digit, ...], tuple[Fixed, ...]], T]


def _digit(tensor: Tiled, digit: object) -> Digit:
    if not isinstance(digit, Mapping):
        raise LayoutError(
            STAGE, "NotAMapping", f"tile takes the digit as a mapping such as m[\"Wp / 8192\"], got {type(digit).__name__} {digit!r:.60}",
            hint=f"write the digit as m[\"{digit}\"]" if isinstance(digit, str) else "write the digit with m[\"...\"]",
        )
    # A digit of an axis declared with another size names other coordinates (docs/tensors.md).
    held = tuple((f"{tensor!r}", digit_mapping(t)) for t in tensor.terms if t.axis in digit.axis_sizes())
    check_axis_sizes((*held, (f"the tile digit m[\"{digit.text}\"]", digit)))
    try:
        return term_of(digit)
    except NotATerm:
        raise LayoutError(STAGE, "NotATerm", f"{digit.text} is not one digit of one axis", hint=TERM_HINT) from None


def _fixed_value(tensor: Tiled, term: Digit) -> int | None:
    for fixed, value in tensor.fixed_terms:
        if fixed == term:
            return value
    return None


def _owner(tensor: Tiled, term: Digit) -> int:
    """The dimension whose term contains ``term``, else the error naming the tensor and the digit."""
    for k, held in enumerate(tensor.terms):
        if term.within(held):
            return k
    mine = [t for t in tensor.terms if t.axis == term.axis]
    value = _fixed_value(tensor, term)
    if value is not None:
        raise LayoutError(
            STAGE, "DigitFixed", f"{tensor!r} is already the tile {digit_text(term)} = {value}",
            hint="take the tile of the whole tensor instead",
        )
    if not mine:
        raise LayoutError(
            STAGE, "DigitNotInTensor", f"{tensor!r} has no axis {term.axis}, so it has no digit {digit_text(term)}",
            hint=f"take a digit of one of its axes: {text_of(tensor.terms) or '(none)'}",
        )
    raise LayoutError(
        STAGE, "DigitNotInTensor",
        f"{digit_text(term)} is not a digit of {tensor!r}: it holds {text_of(mine)} of {term.axis}",
        hint=f"take a digit inside {text_of(mine)}",
    )


def _index(term: Digit, tensor: Tiled, index: object) -> int:
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise LayoutError(
            STAGE, "TileIndex", f"the tile index of {digit_text(term)} must be an int, got {type(index).__name__} {index!r:.40}",
        )
    value = int(index)
    if not 0 <= value < term.count:
        raise LayoutError(
            STAGE, "TileIndex",
            f"{tensor!r} has no tile {digit_text(term)} = {value}: the digit takes the values 0 to {term.count - 1}",
            hint=f"pick an index in range({term.count})",
        )
    return value


def tile(tensor: T, digit: object, index: object, make: Make[T]) -> T:
    """The tile of ``tensor`` where ``digit`` is ``index``, built by ``make`` (see :meth:`Tensor.tile`)."""
    term = _digit(tensor, digit)
    k = _owner(tensor, term)
    value = _index(term, tensor, index)
    held = tensor.terms[k]
    above = Digit(held.axis, held.n, term.top, held.top // term.top)
    below = Digit(held.axis, held.n, held.stride, term.stride // held.stride)
    array = tensor.values
    shape = array.shape
    # Splitting one dimension never copies, so the tile stays a view of the tensor's array.
    split = array.reshape(shape[:k] + (above.count, term.count, below.count) + shape[k + 1:])
    picked = split[(slice(None),) * (k + 1) + (value,)]
    kept = tuple(t for t in (above, below) if t.count > 1)
    if above.count == 1:
        picked = picked.reshape(shape[:k] + (below.count,) * (below.count > 1) + shape[k + 1:])
    elif below.count == 1:
        picked = picked.reshape(shape[:k] + (above.count,) + shape[k + 1:])
    terms = tensor.terms[:k] + kept + tensor.terms[k + 1:]
    fixed: tuple[Fixed, ...] = tuple(sorted((*tensor.fixed_terms, (term, value)), key=lambda f: (f[0].axis, -f[0].stride)))
    return make(picked, terms, fixed)


def assign(target: T, part: Tiled, make: Make[T]) -> None:
    """Write ``part`` into ``target`` at the tile its fixed digits select (see :meth:`Tensor.assign`)."""
    region = target
    for term, value in part.fixed_terms:
        mine = _fixed_value(region, term)
        if mine is not None:
            if mine != value:
                raise LayoutError(
                    STAGE, "TileMismatch", f"the part is the tile {digit_text(term)} = {value}, but {target!r} is the tile {digit_text(term)} = {mine}",
                    hint=f"write it into tile {value}",
                )
            continue
        if not any(term.within(t) for t in region.terms):
            raise LayoutError(
                STAGE, "DigitNotInTensor",
                f"the part is the tile {digit_text(term)} = {value}, but {target!r} has no digit {digit_text(term)} to write it at",
                hint="write the part into a tensor that holds that digit",
            )
        region = tile(region, digit_mapping(term), value, make)
    if not same_digits(region.terms, part.terms):
        raise LayoutError(
            STAGE, "TileMismatch",
            f"the part holds {text_of(part.terms) or '(nothing)'}, but the place it is written to in {target!r} "
            f"holds {text_of(region.terms) or '(nothing)'}",
            hint=_fit_hint(region, part),
        )
    if not region.values.flags.writeable:
        raise LayoutError(STAGE, "ReadOnly", f"{target!r} is read-only", hint="copy it first: tcp.Tensor(t.to_numpy(), ...)")
    data = rearrange(part.values, part.terms, region.terms)
    with np.errstate(invalid="ignore", over="ignore"):
        region.values[...] = data


def _fit_hint(region: Tiled, part: Tiled) -> str:
    """What would make ``part`` fit: the tile of the region that holds the part's digits."""
    for axis in dict.fromkeys(t.axis for t in region.terms):
        mine = runs([t for t in region.terms if t.axis == axis]) or ()
        theirs = runs([t for t in part.terms if t.axis == axis]) or ()
        if len(mine) == 1 and len(theirs) == 1 and theirs[0].within(mine[0]) and theirs[0] != mine[0]:
            outer = mine[0]
            inner = theirs[0]
            if inner.stride == outer.stride:
                rest = Digit(axis, outer.n, inner.top, outer.top // inner.top)
                return f"write it into a tile: .tile(m[\"{digit_text(rest)}\"], i).assign(part)"
    return "write the part into a tensor (or tile) over the same digits"
