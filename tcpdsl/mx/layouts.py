"""Ascend fractal layouts of the auxiliary matrices: Zz (scaleA), Nn (scaleB), Zn (sparse index).

Naming is "capital outer, lower-case inner": Z/z is row-major, N/n column-major. Each function
takes the logical matrix (optionally with leading batch axes), zero-pads it to whole fractals and
returns the fractal-shaped array; ``.reshape(-1)`` (or ``.tobytes()``) is the buffer byte order.
Pads are zero: the documents do not name a value, and zero only ever meets zero or discarded data.
The byte order follows the vendor sample code and layout library (docs/block-formats.md §8).
Sections: Zz docs/block-formats.md §3, Nn §4, Zn §5.3.

* Zz, scaleA (M, S): fractal (16, 2), shape (M1, K1, 16, 2);
  ``off = ((m//16)*K1 + k//2)*32 + (m%16)*2 + k%2``.
* Nn, scaleB (S, N): fractal (2, 16) stored n-major, shape (N1, K1, 16, 2);
  ``off = ((n//16)*K1 + k//2)*32 + (n%16)*2 + k%2``. ``Nn(s) == Zz(s.T)``.
* Zn, packed index bytes (Kb, N): fractal 16 x 8 bytes, shape (Kb1, N1, 16, 8);
  ``off = ((kb//8)*N1 + n//16)*128 + (n%16)*8 + kb%8``. With ``c0=32`` the same function lays out
  the dense int8 B (16 x 32 fractals of 512 bytes).
"""

from __future__ import annotations

from typing import Any, Final, SupportsIndex

import numpy as np
import numpy.typing as npt

from tcpdsl.errors import LayoutError
from tcpdsl.mx.integers import as_int

LAYOUT_STAGE: Final = "mx.layout"
FRACTAL: Final = 16  # rows of every fractal (M0 for Zz, N0 for Nn and Zn)
SCALE_K0: Final = 2  # scale codes per fractal row: the two 32-element blocks of one 64-wide K step
INDEX_C0: Final = 8  # packed index bytes per fractal row (32 two-bit indices)


def zz_layout(scale_a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """scaleA (..., M, S) in Zz order, shape (..., ceil(M/16), ceil(S/2), 16, 2)."""
    p = _padded(scale_a, "zz_layout", FRACTAL, SCALE_K0)
    *batch, rows, cols = p.shape
    tiles = p.reshape(*batch, rows // FRACTAL, FRACTAL, cols // SCALE_K0, SCALE_K0)
    return np.ascontiguousarray(tiles.swapaxes(-3, -2))


def nn_layout(scale_b: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """scaleB (..., S, N) in Nn order, shape (..., ceil(N/16), ceil(S/2), 16, 2)."""
    p = _padded(scale_b, "nn_layout", SCALE_K0, FRACTAL)
    *batch, rows, cols = p.shape
    tiles = p.reshape(*batch, rows // SCALE_K0, SCALE_K0, cols // FRACTAL, FRACTAL)
    return np.ascontiguousarray(_move_last4(tiles, (2, 0, 3, 1)))


def zn_layout(index: npt.NDArray[Any], c0: SupportsIndex = INDEX_C0) -> npt.NDArray[Any]:
    """A (..., R, N) matrix stored K-major in (16, c0) fractals: shape (..., ceil(R/c0), ceil(N/16), 16, c0).

    ``c0=8`` lays out packed 2-bit index bytes (128-byte fractals); ``c0=32`` the dense int8 B.
    """
    width = as_int(c0)
    if width is None or width <= 0:
        raise LayoutError(LAYOUT_STAGE, "FractalWidth", f"zn_layout: c0 must be a positive integer, got {c0!r}")
    if width > np.iinfo(np.intp).max:
        raise LayoutError(LAYOUT_STAGE, "FractalWidth", f"zn_layout: c0 {width} exceeds the largest array extent")
    p = _padded(index, "zn_layout", width, FRACTAL)
    *batch, rows, cols = p.shape
    tiles = p.reshape(*batch, rows // width, width, cols // FRACTAL, FRACTAL)
    return np.ascontiguousarray(_move_last4(tiles, (0, 2, 3, 1)))


def zz_offset(m: SupportsIndex, k: SupportsIndex, s: SupportsIndex) -> int:
    """Byte offset of scaleA[m, k] in the Zz buffer of a matrix with ``s`` scale columns."""
    row, col, cols = _naturals("zz_offset", m=m, k=k, s=s)
    return ((row // FRACTAL) * _ceil(cols, SCALE_K0) + col // SCALE_K0) * 32 + (row % FRACTAL) * SCALE_K0 + col % SCALE_K0


def nn_offset(k: SupportsIndex, n: SupportsIndex, s: SupportsIndex) -> int:
    """Byte offset of scaleB[k, n] in the Nn buffer of a matrix with ``s`` scale rows."""
    row, col, rows = _naturals("nn_offset", k=k, n=n, s=s)
    return zz_offset(col, row, rows)


def zn_offset(row: SupportsIndex, n: SupportsIndex, n_cols: SupportsIndex, c0: SupportsIndex = INDEX_C0) -> int:
    """Offset of element [row, n] in the Zn buffer of a matrix with ``n_cols`` columns."""
    r, col, cols, width = _naturals("zn_offset", row=row, n=n, n_cols=n_cols, c0=c0)
    if width == 0:
        raise LayoutError(LAYOUT_STAGE, "TileSize", "zn_offset needs a positive c0", hint=f"the Zn tile is {INDEX_C0} rows")
    return ((r // width) * _ceil(cols, FRACTAL) + col // FRACTAL) * FRACTAL * width + (col % FRACTAL) * width + r % width


def index_position(k: SupportsIndex, n: SupportsIndex, n_cols: SupportsIndex) -> tuple[int, int]:
    """``(byte, shift)`` of the 2-bit index of dense position ``k``, column ``n`` in the Zn buffer.

    The index value is ``(buf[byte] >> shift) & 3``; ``4*byte + shift//2`` is the Zn offset of the
    dense int8 element it belongs to.
    """
    position, col, cols = _naturals("index_position", k=k, n=n, n_cols=n_cols)
    return zn_offset(position // 4, col, cols), 2 * (position % 4)


def _padded(x: npt.NDArray[Any], name: str, row_tile: int, col_tile: int) -> npt.NDArray[Any]:
    if not isinstance(x, np.ndarray) or x.ndim < 2:
        shape = x.shape if isinstance(x, np.ndarray) else type(x).__name__
        raise LayoutError(LAYOUT_STAGE, "MatrixRank", f"{name} needs a matrix with optional leading batch axes, got {shape}")
    *batch, rows, cols = x.shape
    padded = (*batch, _ceil(rows, row_tile) * row_tile, _ceil(cols, col_tile) * col_tile)
    try:
        out = np.zeros(padded, dtype=x.dtype)
    except (ValueError, MemoryError):  # numpy refuses the shape, or memory cannot hold it
        raise LayoutError(
            LAYOUT_STAGE, "PaddedTooLarge",
            f"{name}: a matrix of shape {x.shape} padded to whole {row_tile} x {col_tile} fractals has shape {padded}, "
            "more than memory holds",
            hint="use the fractal width the hardware uses (c0=8 for index bytes, 32 for int8 data)",
        ) from None
    out[..., :rows, :cols] = x
    return out


def _move_last4(tiles: npt.NDArray[Any], order: tuple[int, int, int, int]) -> npt.NDArray[Any]:
    lead = tiles.ndim - 4
    return tiles.transpose(*range(lead), *(lead + o for o in order))


def _naturals(function: str, **values: object) -> tuple[int, ...]:
    """The arguments of an offset function as ints, each a whole number >= 0, or a LayoutError."""
    out = []
    for name, value in values.items():
        number = as_int(value)
        if number is None or number < 0:
            raise LayoutError(
                LAYOUT_STAGE, "Coordinate", f"{function} takes whole numbers >= 0, got {name}={value!r}",
                hint="pass row/column indices and extents as non-negative ints",
            )
        out.append(number)
    return tuple(out)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)
