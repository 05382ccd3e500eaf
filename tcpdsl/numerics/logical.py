"""Logical tensors: a numpy array whose dimensions are axes, or digits of axes (docs/tensors.md).

A :class:`Tensor` holds, per array dimension, one *term*: a whole axis (``A``) or one digit of it
(``B / 2``, ``Wp % 8192``). A tile also records the digits it *fixes*: ``w.tile(m["Wp / 8192"], 3)``
holds ``Wp % 8192`` and fixes ``Wp / 8192 = 3``. A layout holds exactly the terms of the tensor
laid out through it, and a stage result holds exactly the terms of its layout, carrying the fixed
digits of its operands, so ``logits.assign(part)`` knows which tile ``part`` is.

Arrays are typed ``NDArray[Any]``: the element type is the tensor's dtype, known only at run time
(ml_dtypes' bfloat16 for a bf16 stream, float32 or int32 for a result), and numpy's stubs accept
``Any`` elements in arithmetic, comparisons, ``@``, ``einsum`` and ``np.testing``, where a
``generic`` element type matches none of their overloads.
"""

from __future__ import annotations

from collections.abc import Mapping as MappingABC
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Axis, Mapping, NotATerm, Symbol, Digit, digit_text, parts_of, runs, term_of, text_of
from tcpdsl.errors import LayoutError
from tcpdsl.frames import user_frame
from tcpdsl.numerics import tiles
from tcpdsl.numerics.scalars import is_real
from tcpdsl.numerics.term_arrays import STAGE, TERM_HINT, Fixed, axes_of, rearrange, same_digits
from tcpdsl.verify.tensor_axes import check_declared, named_axes

# A mapping argument written m["..."]: checkers see typing.Literal used as a value (a special form
# no annotation can name), the runtime a Mapping, which the method checks.
MappingArg = object


def axis_names(axes: object) -> tuple[str, ...]:
    """``"A B"``, ``"A, B"``, ``("A", "B")`` or ``(A, B)`` as a checked tuple of distinct axis names."""
    return named_axes(axes)[0]


def caller_axis_sizes(names: tuple[str, ...]) -> dict[str, int]:
    """Sizes of the axes ``names`` as bound in the scope of the user's code that called tcpdsl."""
    frame = user_frame()
    found: dict[str, int] = {}
    for name in names:
        value = frame.f_locals.get(name, frame.f_globals.get(name))
        if isinstance(value, Symbol) and value.name == name:
            found[name] = value.n
    return found


def terms_of_mapping(mapping: Mapping, stage: str = STAGE) -> tuple[Digit, ...]:
    """One term per top-level part of ``mapping`` (``m["A, B / 2"]``), checked to overlap nowhere."""
    terms: list[Digit] = []
    for part in parts_of(mapping):
        try:
            terms.append(term_of(part))
        except NotATerm:
            raise LayoutError(stage, "NotATerm", f"{part.text} is not one digit of one axis", hint=TERM_HINT) from None
    for axis in axes_of(terms):
        if runs([t for t in terms if t.axis == axis]) is None:
            raise LayoutError(
                stage, "DuplicateAxis", f"{mapping.text} holds a digit of {axis} twice",
                hint=f"name each digit of {axis} once",
            )
        _check_unpadded(mapping, [t for t in terms if t.axis == axis], stage)
    return tuple(terms)


def _check_unpadded(mapping: Mapping, terms: list[Digit], stage: str) -> None:
    """Refuse digits that spell coordinates past the axis's size: a logical tensor holds data, and
    padding belongs to layouts (docs/tensors.md)."""
    last = sum((t.count - 1) * t.stride for t in terms)
    size = terms[0].n
    if last >= size:
        axis = terms[0].axis
        raise LayoutError(
            stage, "PaddedDigit",
            f"{mapping.text} spells coordinates of {axis} up to {last}, but {axis} has size {size}: "
            "a logical tensor holds no padding",
            hint=f"hold {axis} unpadded (m[\"{axis}\"], or digits that divide {size}) and let the layout pad it",
        )


def _read_array(array: npt.ArrayLike) -> npt.NDArray[np.generic]:
    try:
        # A view of its own: reshaping the caller's array in place later leaves the tensor's shape alone.
        values = np.asarray(array).view()
    except (TypeError, ValueError) as error:
        raise LayoutError(STAGE, "NotAnArray", f"cannot read the data as an array: {error}") from None
    if not is_real(values.dtype):
        raise LayoutError(
            STAGE, "NotAnArray", f"the data must be real numbers, got an array of {values.dtype}",
            hint="pass integers or floats (numpy, ml_dtypes)",
        )
    return values


def _whole_terms(
    names: tuple[str, ...], sizes: MappingABC[str, int] | None, carried: dict[str, int]
) -> tuple[Digit, ...]:
    """One whole-axis term per name; ``carried`` are the sizes of the axes passed as objects."""
    if sizes is not None and not isinstance(sizes, dict) and not isinstance(sizes, MappingABC):  # dict: no ABC check
        raise LayoutError(
            STAGE, "AxisSizes", f"sizes= must be a dict of axis sizes, got {type(sizes).__name__}",
            hint='pass sizes such as {"A": 32, "B": 64}',
        )
    known = dict(sizes or {})
    for name in names:
        size = known.get(name)
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size <= 0):
            raise LayoutError(
                STAGE, "AxisSizes", f"axis {name} has size {size!r}; sizes are positive ints",
                hint=f"pass a positive int for {name}",
            )
    known.update(carried)
    missing = tuple(n for n in names if n not in known)
    if missing:
        known.update(caller_axis_sizes(missing))
    check_declared(names, known)
    return _whole(tuple((n, int(known[n])) for n in names))


@lru_cache(maxsize=1024)
def _whole(axes: tuple[tuple[str, int], ...]) -> tuple[Digit, ...]:
    """The terms of all of each axis ``(name, size)``: terms are values, so one tuple is shared by every
    tensor over the same axes (an evaluator finds its plans by the tuple's identity first)."""
    return tuple(Digit(name, size, 1, size) for name, size in axes)


class Tensor:
    """A logical tensor: ``Tensor(array, "A B")`` names the dimensions of ``array`` in order.

    With names, axis sizes come from ``sizes=`` or, for names it does not give, from the axes
    declared with ``tcp.axis`` in the calling module. ``Tensor(array, m["A, B / 2"])`` holds one
    term of the expression per dimension (here every A, and every even B). The array's shape
    must match.
    """

    __slots__ = ("_values", "_terms", "_fixed", "_axes")

    def __init__(
        self,
        array: npt.ArrayLike,
        axes: str | Sequence[str | Axis[str, int]] | MappingArg,
        *,
        sizes: MappingABC[str, int] | None = None,
    ) -> None:
        if isinstance(axes, Mapping):
            if sizes is not None:
                raise LayoutError(
                    STAGE, "AxisSizes", "sizes= goes with axis names; a mapping already has its axis sizes",
                    hint="drop sizes=, or declare the axes the mapping uses with their sizes",
                )
            terms = terms_of_mapping(axes)
        else:
            names, carried = named_axes(axes)
            terms = _whole_terms(names, sizes, carried)
        values = _read_array(array)
        expected = tuple(t.count for t in terms)
        if values.shape != expected:
            declared = ", ".join(f"{digit_text(t)}={t.count}" for t in terms)
            raise LayoutError(
                STAGE,
                "ShapeMismatch",
                f"an array of shape {values.shape} does not match the axes {' '.join(digit_text(t) for t in terms)} ({declared})",
                hint="pass the axes in the array's dimension order, or reshape the array",
            )
        self._set(values, terms, ())

    def _set(self, values: npt.NDArray[np.generic], terms: tuple[Digit, ...], fixed: tuple[Fixed, ...]) -> None:
        self._values = values
        self._terms = terms
        self._fixed = fixed
        self._axes = tuple(t.axis if t.whole else digit_text(t) for t in terms)

    @classmethod
    def of_terms(cls, values: npt.NDArray[np.generic], terms: tuple[Digit, ...], fixed: tuple[Fixed, ...] = ()) -> Tensor:
        """A tensor over ``terms`` (one per dimension of ``values``) fixing ``fixed``; no checks."""
        out = object.__new__(cls)
        out._set(values, terms, fixed)
        return out

    def with_values(self, values: npt.NDArray[np.generic]) -> Tensor:
        """The same terms and fixed digits over other values (of the same shape)."""
        out = object.__new__(Tensor)
        out._values, out._terms, out._fixed, out._axes = values, self._terms, self._fixed, self._axes
        return out

    @property
    def axes(self) -> tuple[str, ...]:
        """The dimensions: an axis name for a whole axis, else the term's text (``"B / 2"``)."""
        return self._axes

    @property
    def terms(self) -> tuple[Digit, ...]:
        """The term each dimension holds."""
        return self._terms

    @property
    def fixed(self) -> dict[str, int]:
        """The digits this tile fixes and their values, e.g. ``{"Wp / 8192": 3}``."""
        return {digit_text(term): value for term, value in self._fixed}

    @property
    def fixed_terms(self) -> tuple[Fixed, ...]:
        return self._fixed

    @property
    def whole(self) -> bool:
        """Whether every dimension is a whole axis and nothing is fixed."""
        return not self._fixed and all(t.whole for t in self._terms)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._values.shape)

    @property
    def dtype(self) -> np.dtype[np.generic]:
        return self._values.dtype

    @property
    def sizes(self) -> dict[str, int]:
        """Axis name to declared size, for every axis the tensor holds a digit of."""
        return {t.axis: t.n for t in self._terms}

    @property
    def values(self) -> npt.NDArray[Any]:
        """The array, one dimension per term in :attr:`axes` order (not a copy)."""
        return self._values

    def to_numpy(self, axes: str | Sequence[str | Axis[str, int]] | MappingArg | None = None) -> npt.NDArray[Any]:
        """A copy of the data with dimensions in the order ``axes``.

        ``axes`` names every axis the tensor holds, in any order (an axis held as several
        adjacent digits becomes one dimension), or is a mapping such as ``m["B / 2, A"]`` whose
        parts hold the same digits as the tensor. The copy keeps the memory order the data has (as
        numpy's einsum returns a transposed view rather than transposing), so reordering dimensions
        costs no transposing pass; use ``np.ascontiguousarray`` where C order matters.
        """
        if axes is None:
            return self._values.copy(order="K")
        target = self._target(axes)
        return np.array(rearrange(self._values, self._terms, target), copy=True)

    def _target(self, axes: object) -> tuple[Digit, ...]:
        if isinstance(axes, Mapping):
            target = terms_of_mapping(axes)
            if not same_digits(target, self._terms):
                raise LayoutError(
                    STAGE, "AxesMismatch", f"to_numpy(m[\"{axes.text}\"]) must hold the digits {self._describe_terms()}",
                    hint=f"use an order of m[\"{text_of(self._terms)}\"]",
                )
            return target
        names = axis_names(axes)
        if names == self._axes and self.whole:
            return self._terms  # the tensor's own order, every axis whole: nothing to work out
        held = axes_of(self._terms)
        if sorted(names) != sorted(held):
            raise LayoutError(
                STAGE,
                "AxesMismatch",
                f"to_numpy({' '.join(names)!r}) must name exactly the axes {' '.join(self._axes)}",
                hint=f"use an order of {' '.join(self._axes)}",
            )
        out: list[Digit] = []
        for name in names:
            merged = runs([t for t in self._terms if t.axis == name]) or ()
            if len(merged) != 1:
                raise LayoutError(
                    STAGE, "AxesMismatch", f"axis {name} is held as the separate digits {text_of(merged)}",
                    hint=f"name the digits: to_numpy(m[\"{text_of(self._terms)}\"]) in the order you want",
                )
            out.extend(merged)
        partial = [t for t in out if not t.whole]
        if partial:
            # A name stands for the whole axis; a part of it under that name would read as all of it.
            term = partial[0]
            raise LayoutError(
                STAGE, "PartialAxis",
                f"to_numpy({' '.join(names)!r}) names {term.axis}, but {self!r} holds only {digit_text(term)} of it "
                f"({term.count} of its {term.n} coordinates)",
                hint=f"name the digits: to_numpy(m[\"{text_of(tuple(out))}\"])",
            )
        return tuple(out)

    def tile(self, digit: MappingArg, index: int) -> Tensor:
        """The tile of this tensor whose digit ``digit`` (``m["Wp / 8192"]``) is ``index``.

        It holds the rest of the digit's term and fixes the digit; its values are a view of this
        tensor's array, so :meth:`assign` on the tile writes into this tensor.
        """
        return tiles.tile(self, digit, index, Tensor.of_terms)

    def assign(self, part: Tensor) -> None:
        """Write ``part`` into this tensor, at the tile its fixed digits select.

        ``logits.assign(part)`` writes a result computed from tile ``i`` of ``Wp / 8192`` into
        tile ``i``; ``logits.tile(m["Wp / 8192"], i).assign(part)`` says the same explicitly.
        After the tile is chosen, ``part`` must hold exactly the digits this tensor holds there.
        Nothing is written when the check fails.
        """
        if not isinstance(part, Tensor):
            raise LayoutError(STAGE, "NotATensor", f"assign takes a tcp.Tensor, got {type(part).__name__}",
                              hint="write a stage result with .to_tensor()")
        tiles.assign(self, part, Tensor.of_terms)

    def _describe_terms(self) -> str:
        return text_of(self._terms) or "(none)"

    def __repr__(self) -> str:
        dims = " ".join(f"{a if ' ' not in a else f'[{a}]'}={n}" for a, n in zip(self._axes, self._values.shape))
        fixed = "".join(f" | {digit_text(term)} = {value}" for term, value in self._fixed)
        return f"Tensor[{dims}{fixed}]({self._values.dtype})"

