"""The transpose engine on physical buffers: the row and column move of docs/runtime.md §3.10.

Time is ``[outer, in_rows, packets_per_col]`` and each packet's first ``valid_size`` lanes are
live: per ``outer`` step the engine holds an ``in_rows x in_cols`` matrix whose column ``c =
p * valid_size + k`` is lane ``k`` of the ``p``-th packet of the row. It writes the first
``out_rows`` columns out as rows, one flit each, whose first ``in_rows`` lanes are the column.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.verify.transpose import TransposeParams

Array = npt.NDArray[Any]


def transpose_flits(buffer: Array, params: TransposeParams, fill: Any) -> Array:
    """``buffer`` of shape ``(spatial, Time, flit)`` transposed to ``(spatial, OutTime, flit)``."""
    spatial, _, flit = buffer.shape
    outer, rows, ppc, width = params.iterations, params.in_rows, params.packets_per_col, params.valid_size
    matrix = buffer.reshape(spatial, outer, rows, ppc, flit)[..., :width].reshape(spatial, outer, rows, ppc * width)
    out = np.full((spatial, outer, params.out_rows, flit), fill, dtype=buffer.dtype)
    out[..., :rows] = matrix.transpose(0, 1, 3, 2)[:, :, : params.out_rows]
    return out.reshape(spatial, outer * params.out_rows, flit)
