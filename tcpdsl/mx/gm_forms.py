"""Global-memory forms of the MX scale matrices, as the Ascend copy instructions read them.

docs/block-formats.md §3 (scaleA) and §4 (scaleB) explain the forms and their copy modes.

The hardware wants the two codes of one row (scaleA) or column (scaleB) and one 64-wide K step
next to each other, i.e. read as one 16-bit word. Two GM forms exist for each operand:

* scaleA ``ND`` is (M, S) row-major and is copied with DN2NZ.b16; ``DN`` is [S/2][M][2]
  (``off = (k//2)*2*M + m*2 + k%2``) and is copied with ND2NZ.b16.
* scaleB ``ND`` is [S/2][N][2] (``off = (k//2)*2*N + n*2 + k%2``) and is copied with ND2NZ.b16;
  ``DN`` is the transposed (N, S) and is copied with DN2NZ.b16.

An odd S is padded with a zero code column to make whole 16-bit words.
"""

from __future__ import annotations

from typing import Any, Final, SupportsIndex

import numpy as np
import numpy.typing as npt

from tcpdsl.errors import LayoutError
from tcpdsl.mx.integers import as_int

GM_STAGE: Final = "mx.gm"


def scale_a_dn(scale_a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """scaleA (..., M, S) as [S/2][M][2] (the form copied with ND2NZ.b16)."""
    pairs = _pair_columns(_matrix(scale_a, "scale_a_dn"))
    return np.ascontiguousarray(np.swapaxes(pairs, -3, -2))


def scale_a_from_dn(buf: npt.NDArray[Any], s: SupportsIndex) -> npt.NDArray[Any]:
    """Inverse of :func:`scale_a_dn`: the first ``s`` scale columns of a [S/2][M][2] buffer."""
    words, count = _words(buf, "scale_a_from_dn", s)
    *batch, half, m, _ = words.shape
    return np.ascontiguousarray(np.swapaxes(words, -3, -2)).reshape(*batch, m, 2 * half)[..., :count]


def scale_b_nd(scale_b: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """scaleB (..., S, N) as [S/2][N][2] (the form copied with ND2NZ.b16)."""
    pairs = _pair_columns(np.swapaxes(_matrix(scale_b, "scale_b_nd"), -1, -2))
    return np.ascontiguousarray(np.swapaxes(pairs, -3, -2))


def scale_b_from_nd(buf: npt.NDArray[Any], s: SupportsIndex) -> npt.NDArray[Any]:
    """Inverse of :func:`scale_b_nd`: the first ``s`` scale rows of a [S/2][N][2] buffer."""
    words, count = _words(buf, "scale_b_from_nd", s)
    *batch, half, n, _ = words.shape
    return np.ascontiguousarray(np.swapaxes(words, -1, -2).reshape(*batch, 2 * half, n)[..., :count, :])


def scale_b_dn(scale_b: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """scaleB (..., S, N) as the transposed (N, S) (the form copied with DN2NZ.b16)."""
    return np.ascontiguousarray(np.swapaxes(_matrix(scale_b, "scale_b_dn"), -1, -2))


def _pair_columns(rows_by_s: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """(..., R, S) -> (..., R, ceil(S/2), 2), zero-padding an odd S."""
    *batch, r, s = rows_by_s.shape
    out = np.zeros((*batch, r, s + s % 2), dtype=rows_by_s.dtype)
    out[..., :s] = rows_by_s
    return out.reshape(*batch, r, (s + 1) // 2, 2)


def _matrix(x: npt.NDArray[Any], name: str) -> npt.NDArray[Any]:
    if not isinstance(x, np.ndarray) or x.ndim < 2:
        shape = x.shape if isinstance(x, np.ndarray) else type(x).__name__
        raise LayoutError(GM_STAGE, "MatrixRank", f"{name} needs a matrix with optional leading batch axes, got {shape}")
    return x


def _words(buf: npt.NDArray[Any], name: str, s: object) -> tuple[npt.NDArray[Any], int]:
    """The paired buffer and the number of scale codes to read from it."""
    if not isinstance(buf, np.ndarray) or buf.ndim < 3 or buf.shape[-1] != 2:
        shape = buf.shape if isinstance(buf, np.ndarray) else type(buf).__name__
        raise LayoutError(GM_STAGE, "PairedShape", f"{name} needs a (..., S/2, rows, 2) buffer, got {shape}")
    count = as_int(s)
    if count is None:
        raise LayoutError(GM_STAGE, "ScaleCount", f"{name}: the scale count must be an integer, got {s!r}")
    if not 0 <= count <= 2 * buf.shape[-3]:
        raise LayoutError(GM_STAGE, "ScaleCount", f"{name}: {count} scale codes do not fit in {buf.shape[-3]} code pairs")
    return buf, count
