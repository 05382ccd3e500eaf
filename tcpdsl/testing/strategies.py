"""``tcpdsl.testing.inputs``: hypothesis strategies that draw valid inputs for a tensor type.

A drawn input is laid out as its type, so a kernel taking that type accepts it: its logical data
holds exactly the digits the layout holds (a partial tensor when the layout holds part of an axis),
and where the layout holds the low digits of an axis only, the draw may also fix the digits above
them, giving a tile of a larger tensor (``t.tile(m["Wp / 8192"], i)``). Values are cast to the
dtype, so each is representable in it. hypothesis is imported when a strategy is built, so that
``tcpdsl.testing`` imports without it (``check_kernel`` needs no hypothesis).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tcpdsl.algebra import Digit
from tcpdsl.testing.kernels import lay_out, tensor_param

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

FLOAT_RANGE = 8.0  # default float values: small enough that sums of products stay far from overflow


def inputs(tensor_type: object, *, elements: SearchStrategy[Any] | None = None) -> SearchStrategy[Any]:
    """Inputs of type ``tensor_type`` (a subscripted ``CollectTensor`` or ``TrfTensor``).

    ``elements`` draws the values (numbers, cast to the dtype); by default every value of an
    integer dtype and floats in [-8, 8]. Each input sits on a device of its own, with as many
    chips as its Chip layout spans.
    """
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    param = tensor_param(tensor_type)
    dtype = param.dtype
    if elements is None:
        if dtype.is_float:
            elements = st.floats(-FLOAT_RANGE, FLOAT_RANGE, allow_nan=False, width=32)
        else:
            half = 1 << (dtype.value_bits - 1)
            elements = st.integers(-half, half - 1)
    shape = tuple(t.count for t in param.terms)
    storage = np.float64 if dtype.is_float else np.int64
    values = hnp.arrays(storage, shape, elements=elements)
    fixed = st.tuples(*(_fixed_digit(st, digit) for digit in _digits_above(param.terms)))
    return st.builds(lambda raw, tiles: lay_out(param, raw, tuple(f for f in tiles if f is not None)), values, fixed)


def _digits_above(terms: tuple[Digit, ...]) -> list[Digit]:
    """For each axis held from its lowest digit up but not whole, the digit above what is held."""
    out = []
    for term in terms:
        if term.stride == 1 and term.top < term.n and term.n % term.top == 0:
            out.append(Digit(term.axis, term.n, term.top, term.n // term.top))
    return out


def _fixed_digit(st: Any, digit: Digit) -> SearchStrategy[tuple[Digit, int] | None]:
    """No tile, or the tile at one value of ``digit``."""
    tile: SearchStrategy[tuple[Digit, int] | None] = st.integers(0, digit.count - 1).map(lambda i: (digit, i))
    return st.none() | tile  # type: ignore[no-any-return]

