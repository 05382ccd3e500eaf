"""What a scatter (``dma_scatter``) writes, by axis coordinates (docs/runtime.md §4, "Scatters").

The data's row of each key value (its payload axes) is written into the tensor at the row of the scattered
axis that the key's byte offset names. Both sides are read as arrays over whole axes: the rules
(docs/stage-rules.md §4.1) ask the key, the payload and the scattered axis to be whole axes, so a row is the
same block of cells on either side whatever the layouts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Digit
from tcpdsl.errors import LayoutError
from tcpdsl.numerics.term_arrays import coordinate_array, term_coordinates
from tcpdsl.verify.scatter import ScatterParams
from tcpdsl.verify.stage import Stage

Array = npt.NDArray[Any]


def key_offsets(index: Array, terms: tuple[Digit, ...], params: ScatterParams) -> list[int]:
    """The index's byte offsets (values over ``terms``) in the key's order: the key's first axis outermost."""
    held, axes = coordinate_array(index, terms)
    order = [axes.index(a) for a in params.key]
    return [int(v) for v in held.transpose(order).reshape(-1)]


def scattered(values: Array, terms: tuple[Digit, ...], data: Array, data_terms: tuple[Digit, ...],
              rows: list[int], params: ScatterParams) -> tuple[Array, Callable[[Array], Array] | None]:
    """The tensor's values over ``terms`` after each key value's row of ``data`` (over ``data_terms``) is
    written at its row of the scattered axis (``rows``, in the key's order; a row named twice keeps the later
    key's, as the engine writes the keys in order). A new array of its own.

    Also, when the rows written are one run in key order and ``terms`` are whole axes (the values are the
    coordinate array), the view of a same-shaped array that picks the written cells, for
    :func:`~tcpdsl.numerics.kept.carry`; else None."""
    held, axes = coordinate_array(data, data_terms)
    target, target_axes = coordinate_array(values, terms)
    payload_shape = tuple(target.shape[target_axes.index(a)] for a in params.payload)
    source = held.transpose([axes.index(a) for a in (*params.key, *params.payload)])
    if source.shape[len(params.key):] != payload_shape:
        raise LayoutError(
            Stage.DMA_SCATTER, "WholeAxes",
            f"dma_scatter: the data holds {source.shape[len(params.key):]} cells of the payload "
            f"{', '.join(params.payload)}, the tensor {payload_shape}",
            hint="scatter data that holds every cell of its payload axes",
        )
    source = source.reshape(-1, *payload_shape)
    last = {row: k for k, row in enumerate(rows)}  # the later key of a row wins
    out = np.array(target, dtype=values.dtype, copy=True)
    order = [target_axes.index(a) for a in (params.axis, *params.payload)]
    picked, keys = list(last), list(last.values())
    lo, hi = min(picked), max(picked) + 1
    run = picked == list(range(lo, hi)) and keys == sorted(keys)
    # One run of rows is a slice, which carry can also take as a view.
    out.transpose(order)[slice(lo, hi) if run else picked] = source[keys].astype(out.dtype, copy=False)
    whole = target is values
    if not whole:
        # Back over the tensor's own terms: every term reads its axes' coordinates.
        coords = term_coordinates(terms)
        return np.ascontiguousarray(out[tuple(coords[a] for a in target_axes)]), None
    return out, (lambda array: array.transpose(order)[lo:hi]) if run else None
