"""Tiles of logical tensors: ``t.tile(m["Wp / 8192"], i)`` and writing a part back with ``assign``.

A tile is a view: the dimension holding the digit is split into the digits above it, the digit
and the digits below it, and indexed at the digit's value. The outermost digit of a zero-padded
axis (``W #{0} 155648 / 8192`` of W = 151936) reaches past the axis's end: its last tile holds
fewer cells, and reads as a read-only copy with zeros past the end; ``assign`` writes only the
cells inside the axis (docs/tensors.md §5). Every check runs before anything is read or written,
so a refused tile or assignment leaves the tensor as it was.
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
        if term.within(held) or _past_end(term, held):
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


def _past_end(term: Digit, held: Digit) -> bool:
    """Whether ``term`` is the outermost digit of the run ``held`` that ends at its axis's end, with
    values past that end: a digit of the axis zero-padded to a multiple of its stride."""
    return (term.axis == held.axis and held.top >= held.n and held.top < term.top
            and term.stride >= held.stride and term.stride % held.stride == 0
            and (term.count - 1) * term.stride < held.top)


def tile(tensor: T, digit: object, index: object, make: Make[T]) -> T:
    """The tile of ``tensor`` where ``digit`` is ``index``, built by ``make`` (see :meth:`Tensor.tile`)."""
    term = _digit(tensor, digit)
    k = _owner(tensor, term)
    value = _index(term, tensor, index)
    if _past_end(term, tensor.terms[k]):
        live, region = _end_tile(tensor, k, term, value, make)
        if region.values is not live:
            region.values.flags.writeable = False  # a copy: writing into it would change nothing
        return region
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
    return make(picked, terms, _fixing(tensor, term, value))


def _fixing(tensor: Tiled, term: Digit, value: int) -> tuple[Fixed, ...]:
    return tuple(sorted((*tensor.fixed_terms, (term, value)), key=lambda f: (f[0].axis, -f[0].stride)))


def _end_tile(tensor: T, k: int, term: Digit, value: int, make: Make[T]) -> tuple[npt.NDArray[Any], T]:
    """Tile ``value`` of a digit reaching past the end of dimension ``k``'s axis: the view of the
    cells it holds inside the axis, and the tile, over that view or, when the view holds fewer
    cells than the tile (the last one), over a copy of it padded with zeros."""
    held = tensor.terms[k]
    rest = Digit(held.axis, held.n, held.stride, term.stride // held.stride)
    start = value * rest.count
    live = tensor.values[(slice(None),) * k + (slice(start, start + rest.count),)]
    full = live
    if live.shape[k] < rest.count:
        full = np.zeros(live.shape[:k] + (rest.count,) + live.shape[k + 1:], live.dtype)
        full[(slice(None),) * k + (slice(0, live.shape[k]),)] = live
    terms = tensor.terms[:k] + (rest,) + tensor.terms[k + 1:]
    return live, make(full, terms, _fixing(tensor, term, value))


def assign(target: T, part: Tiled, make: Make[T]) -> None:
    """Write ``part`` into ``target`` at the tile its fixed digits select (see :meth:`Tensor.assign`)."""
    region = target
    # Tiles past an axis's end are filled in a zero-padded copy, whose cells inside the axis are
    # written back to the view they came from once the part is in place, innermost first.
    write_back: list[tuple[npt.NDArray[Any], npt.NDArray[Any]]] = []
    for term, value in part.fixed_terms:
        mine = _fixed_value(region, term)
        if mine is not None:
            if mine != value:
                raise LayoutError(
                    STAGE, "TileMismatch", f"the part is the tile {digit_text(term)} = {value}, but {target!r} is the tile {digit_text(term)} = {mine}",
                    hint=f"write it into tile {value}",
                )
            continue
        if not any(term.within(t) or _past_end(term, t) for t in region.terms):
            raise LayoutError(
                STAGE, "DigitNotInTensor",
                f"the part is the tile {digit_text(term)} = {value}, but {target!r} has no digit {digit_text(term)} to write it at",
                hint="write the part into a tensor that holds that digit",
            )
        k = _owner(region, term)
        if _past_end(term, region.terms[k]):
            live, region = _end_tile(region, k, term, value, make)
            if region.values is not live:
                write_back.append((live, region.values))
        else:
            region = tile(region, digit_mapping(term), value, make)
    if not same_digits(region.terms, part.terms):
        raise LayoutError(
            STAGE, "TileMismatch",
            f"the part holds {text_of(part.terms) or '(nothing)'}, but the place it is written to in {target!r} "
            f"holds {text_of(region.terms) or '(nothing)'}",
            hint=_fit_hint(region, part),
        )
    if not target.values.flags.writeable:
        if any(_past_end(term, Digit(term.axis, term.n, 1, term.n)) for term, _ in target.fixed_terms):
            raise LayoutError(
                STAGE, "ReadOnly", f"{target!r} is a tile reaching past the end of its axis, a copy padded with zeros",
                hint="assign the part to the whole tensor: out.assign(part) writes it at the tile it fixes",
            )
        raise LayoutError(STAGE, "ReadOnly", f"{target!r} is read-only", hint="copy it first: tcp.Tensor(t.to_numpy(), ...)")
    data = rearrange(part.values, part.terms, region.terms)
    with np.errstate(invalid="ignore", over="ignore"):
        region.values[...] = data
        for live, full in reversed(write_back):
            live[...] = full[tuple(slice(0, n) for n in live.shape)]


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
