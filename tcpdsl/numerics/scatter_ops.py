"""What a scatter (``dma_scatter``) writes, by axis coordinates (docs/runtime.md §4, "Scatters").

The data's row of each key value (its payload axes) is written into the tensor at the row of the scattered
axis that the key's byte offset names. Every side is read as an array over whole axes: the rules
(docs/stage-rules.md §4.1) ask the key, the payload and the scattered axis to be whole axes, so a row is the
same block of cells on either side whatever the layouts. A side whose values do not vary along an axis its
layout holds (a tensor filled by a broadcast) is read as repeating them along it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Digit
from tcpdsl.errors import LayoutError
from tcpdsl.numerics.flow import Flow, Scattered
from tcpdsl.numerics.term_arrays import axes_of, coordinate_array, coordinate_extents, term_coordinates
from tcpdsl.verify.scatter import ScatterParams, scatter_rows
from tcpdsl.verify.stage import Stage

Array = npt.NDArray[Any]


def over_axes(values: Array, terms: tuple[Digit, ...], layout: tuple[Digit, ...]) -> tuple[Array, tuple[str, ...]]:
    """``values`` (over ``terms``) with one dimension per axis of ``layout`` (the terms a layout holds), in its
    order: repeated along the axes ``terms`` lack. ``values`` itself when ``terms`` are those axes, whole."""
    held, axes = coordinate_array(values, terms)
    wanted, extents = axes_of(layout), coordinate_extents(layout)
    if axes == wanted:
        return held, axes
    lacking = tuple(a for a in wanted if a not in axes)
    spread = held.reshape(held.shape + (1,) * len(lacking)).transpose([(*axes, *lacking).index(a) for a in wanted])
    try:
        return np.broadcast_to(spread, extents), wanted
    except ValueError:  # a side holding part of an axis its layout holds whole
        raise LayoutError(
            Stage.DMA_SCATTER, "WholeAxes",
            f"dma_scatter: values over {', '.join(axes)} ({held.shape}) do not fill the axes {', '.join(wanted)} "
            f"({extents}) of their layout",
            hint="scatter tensors that hold every cell of their axes",
        ) from None


def key_offsets(index: Array, terms: tuple[Digit, ...], layout: tuple[Digit, ...], params: ScatterParams) -> list[int]:
    """The index's byte offsets (values over ``terms``, laid out over ``layout``) in the key's order, its first
    axis outermost."""
    held, axes = over_axes(index, terms, layout)
    return [int(v) for v in held.transpose([axes.index(a) for a in params.key]).reshape(-1)]


def scattered(values: Array, terms: tuple[Digit, ...], root: tuple[Digit, ...], data: Array,
              data_terms: tuple[Digit, ...], data_layout: tuple[Digit, ...], rows: list[int],
              params: ScatterParams) -> tuple[Array, Callable[[Array], Array] | None]:
    """The tensor's values (over ``terms``) after each key value's row of ``data`` (over ``data_terms``, laid
    out over ``data_layout``) is written at its row of the scattered axis (``rows``, in the key's order; a row
    named twice keeps the later key's, as the engine writes the keys in order), as a new array over ``root``.

    Also, when the rows written are one run in key order and ``root`` is ``terms`` held as whole axes (the
    values are their own coordinate array), the view of a same-shaped array that picks the written cells, for
    :func:`~tcpdsl.numerics.kept.carry`; else None."""
    target, axes = over_axes(values, terms, root)
    held, held_axes = over_axes(data, data_terms, data_layout)
    payload_shape = tuple(target.shape[axes.index(a)] for a in params.payload)
    source = held.transpose([held_axes.index(a) for a in (*params.key, *params.payload)])
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
    order = [axes.index(a) for a in (params.axis, *params.payload)]
    picked, keys = list(last), list(last.values())
    lo, hi = min(picked), max(picked) + 1
    run = picked == list(range(lo, hi)) and keys == sorted(keys)
    # One run of rows is a slice, which carry can also take as a view.
    out.transpose(order)[slice(lo, hi) if run else picked] = source[keys].astype(out.dtype, copy=False)
    if target is not values or root is not terms:
        # Back over the root's own terms: every term reads its axes' coordinates.
        coords = term_coordinates(root)
        return np.ascontiguousarray(out[tuple(coords[a] for a in axes)]), None
    return out, (lambda array: array.transpose(order)[lo:hi]) if run else None


def scattered_values(source: Scattered, read: Callable[[Flow], Array]) -> tuple[Array, Callable[[Array], Array] | None]:
    """:func:`scattered` of the node ``source``, each flow's values as ``read`` gives them (an evaluator's read):
    the offsets checked by ``Offset``, then the rows set."""
    params, index, data, parent = source.params, source.index, source.data, source.parent
    offsets = key_offsets(read(index), index.root.terms, source.index_layout, params)
    return scattered(read(parent), parent.root.terms, source.terms, read(data), data.root.terms, source.data_layout,
                     scatter_rows(offsets, params), params)
