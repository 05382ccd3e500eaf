"""The one physical move of the stream engines: a buffer over mapping A to a buffer over mapping B,
cell by cell through the logical coordinates each cell holds (docs/runtime.md §4).

Every engine outside the contraction chain moves cells this way (fetch, collect, commit, DMA, ...):
a live cell of B takes the value of a live cell of A holding the same element; Top padding of B is
poisoned, Zero padding is zero, and a live cell of B whose element A does not hold, or holds
poisoned, is poisoned. Broadcasts replicate. Values change only by the RNGD casts of
:func:`convert`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Mapping, Term
from tcpdsl.numerics.flow import Buffer
from tcpdsl.numerics.placement import plan
from tcpdsl.numerics.scalars import cast, poison, widen
from tcpdsl.numerics.term_arrays import coordinate_array
from tcpdsl.numerics.transfer import to_physical, to_terms

Array = npt.NDArray[Any]
Mask = npt.NDArray[np.uint8]


def convert(values: Array, frm: str, to: str) -> Array:
    """Values of ``frm`` as ``to``: widened exactly, then narrowed by the RNGD cast (docs/runtime.md §3.2)."""
    if frm == to:
        return values
    return cast(widen(values, frm), to)


def lay_out(values: Array, terms: tuple[Term, ...], mapping: Mapping, dtype: str) -> Buffer:
    """Logical values over ``terms`` laid out on ``mapping``: Top and Bottom padding poisoned, Zero padding 0."""
    held, axes = coordinate_array(values, terms)
    buffer = to_physical(held, axes, mapping, fill=poison(dtype), zero_fill=0)
    defined = to_physical(np.ones(held.shape, dtype=np.uint8), axes, mapping, fill=0, zero_fill=1)
    return buffer, (defined == 0).astype(np.uint8)


def move(source: Buffer, src: Mapping, dst: Mapping, terms: tuple[Term, ...], dtype: str) -> Buffer:
    """The buffer over ``src`` moved onto ``dst`` by logical coordinates (the elements over ``terms``).

    Elements that ``src`` does not hold, or holds poisoned, arrive poisoned.
    """
    buffer, mask = source
    values = to_terms(buffer, src, terms)
    defined = to_terms((np.asarray(mask) == 0).astype(np.uint8), src, terms)
    held, axes = coordinate_array(values, terms)
    good, _ = coordinate_array(defined, terms)
    out = to_physical(held, axes, dst, fill=poison(dtype), zero_fill=0)
    ok = to_physical(good, axes, dst, fill=0, zero_fill=1)
    bad = ok == 0
    out[bad & plan(dst).live] = poison(dtype)
    return out, bad.astype(np.uint8)


def live_poison(mask: Mask, mapping: Mapping) -> int:
    """How many live cells of ``mapping`` hold poison."""
    return int(np.count_nonzero(np.asarray(mask).astype(bool) & plan(mapping).live))

