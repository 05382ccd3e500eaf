"""Logical tensors: a numpy array whose dimensions are named axes."""

from __future__ import annotations

import sys
from collections.abc import Mapping as MappingABC
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra.nodes import Symbol
from tcpdsl.errors import LayoutError
from tcpdsl.syntax import is_axis_name

STAGE: Final = "Tensor"


def axis_names(axes: str | Sequence[str]) -> tuple[str, ...]:
    """``"A B"``, ``"A, B"`` or ``("A", "B")`` as a checked tuple of distinct axis names."""
    if isinstance(axes, str):
        names = tuple(axes.replace(",", " ").split())
    elif isinstance(axes, Sequence) and all(isinstance(a, str) for a in axes):
        names = tuple(axes)
    else:
        raise LayoutError(STAGE, "AxisNames", f"axes must be a string such as \"A B\" or a sequence of names, got {axes!r}")
    for name in names:
        if not is_axis_name(name):
            raise LayoutError(
                STAGE, "AxisNames", f"{name!r} is not an axis name", hint="axis names start with an uppercase ASCII letter"
            )
    if len(set(names)) != len(names):
        raise LayoutError(STAGE, "DuplicateAxis", f"axes {' '.join(names)} name an axis twice")
    return names


def caller_axis_sizes(names: tuple[str, ...], depth: int) -> dict[str, int]:
    """Sizes of the axes ``names`` as bound in the scope ``depth`` frames above the caller."""
    frame = sys._getframe(depth + 1)
    found: dict[str, int] = {}
    for name in names:
        value = frame.f_locals.get(name, frame.f_globals.get(name))
        if isinstance(value, Symbol) and value.name == name:
            found[name] = value.n
    return found


class Tensor:
    """A logical tensor: ``Tensor(array, "A B")`` names the dimensions of ``array`` in order.

    Axis sizes come from ``sizes=`` or, for names it does not give, from the axes declared with
    ``tcp.axis`` in the calling module; the array's shape must match them.
    """

    __slots__ = ("_values", "_axes", "_sizes")

    def __init__(
        self,
        array: npt.ArrayLike,
        axes: str | Sequence[str],
        *,
        sizes: MappingABC[str, int] | None = None,
        _depth: int = 1,
    ) -> None:
        names = axis_names(axes)
        if sizes is not None and not isinstance(sizes, MappingABC):
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
        missing = tuple(n for n in names if n not in known)
        if missing:
            known.update(caller_axis_sizes(missing, _depth))
        unknown = [n for n in names if n not in known]
        if unknown:
            raise LayoutError(
                STAGE,
                "UnknownAxis",
                f"axis {', '.join(unknown)} is not declared in the calling module",
                hint=f"declare it, e.g. {unknown[0]} = tcp.axis(\"{unknown[0]}\", <size>), or pass sizes=",
            )
        try:
            values = np.asarray(array)
        except (TypeError, ValueError) as error:
            raise LayoutError(STAGE, "NotAnArray", f"cannot read the data as an array: {error}") from None
        if values.dtype.kind in "OUSMmc":
            raise LayoutError(
                STAGE, "NotAnArray", f"the data must be real numbers, got an array of {values.dtype}",
                hint="pass integers or floats (numpy, ml_dtypes)",
            )
        expected = tuple(int(known[n]) for n in names)
        if values.shape != expected:
            declared = ", ".join(f"{n}={s}" for n, s in zip(names, expected))
            raise LayoutError(
                STAGE,
                "ShapeMismatch",
                f"an array of shape {values.shape} does not match the axes {' '.join(names)} ({declared})",
                hint="pass the axes in the array's dimension order, or reshape the array",
            )
        self._values = values
        self._axes = names
        self._sizes = {n: int(known[n]) for n in names}

    @property
    def axes(self) -> tuple[str, ...]:
        return self._axes

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._values.shape)

    @property
    def dtype(self) -> np.dtype[np.generic]:
        return self._values.dtype

    @property
    def sizes(self) -> dict[str, int]:
        """Axis name to size."""
        return dict(self._sizes)

    @property
    def values(self) -> npt.NDArray[np.generic]:
        """The array, dimensions in :attr:`axes` order (not a copy)."""
        return self._values

    def to_numpy(self, axes: str | Sequence[str] | None = None) -> npt.NDArray[np.generic]:
        """A copy of the data with dimensions in the order ``axes`` (any order of the same axes)."""
        if axes is None:
            return self._values.copy()
        names = axis_names(axes)
        if sorted(names) != sorted(self._axes):
            raise LayoutError(
                STAGE,
                "AxesMismatch",
                f"to_numpy({' '.join(names)!r}) must name exactly the axes {' '.join(self._axes)}",
                hint=f"use an order of {' '.join(self._axes)}",
            )
        return np.transpose(self._values, tuple(self._axes.index(n) for n in names)).copy()

    def __repr__(self) -> str:
        dims = " ".join(f"{n}={self._sizes[n]}" for n in self._axes)
        return f"Tensor[{dims}]({self._values.dtype})"
