"""2:4 structured sparsity of the right operand B (Ascend LoadDataWithSparse + MmadWithSparse).

docs/block-formats.md §5.1 has the densification table; §8 the cases the sources leave open.

A group is 4 consecutive K elements of one column of B. Each group keeps two dense values
``(d0, d1)`` and two 2-bit indices ``(i0, i1)``: slot 0 multiplies A at group position ``i0``,
slot 1 at position ``1 + i1``. With ``p < q`` the first two nonzero positions:

* no nonzero: ``(0, 0)``, dense ``(0, 0)``;
* one nonzero at ``p < 3``: ``(p, 0)``, dense ``(B[p], 0)``;
* one nonzero at ``p == 3``: ``(0, 2)``, dense ``(0, B[3])``;
* two nonzeros: ``(p, q - 1)``, dense ``(B[p], B[q])``.

The lone nonzero at position 3 is the one case the vendor samples get wrong: they emit dense
``(B[3], 0)``, which the hardware would multiply by A at position 0. This module follows the index
semantics instead (not confirmed on hardware).

Indices follow their dense element (``I[2g] = i0``, ``I[2g+1] = i1``) and are packed four to a
byte along K, first in the least significant bits.
"""

from __future__ import annotations

from typing import Any, Final, SupportsIndex

import numpy as np
import numpy.typing as npt

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.mx.packing import pack_uint2, unpack_uint2

SPARSE_STAGE: Final = "mx.sparse"
GROUP: Final = 4


def densify_2of4(b: npt.NDArray[Any], strict: bool = True) -> tuple[npt.NDArray[Any], npt.NDArray[np.uint8]]:
    """``(dense, index_bytes)`` of a (K, N) matrix with at most two nonzeros per group of 4 along K.

    ``dense`` is (K/2, N) in the dtype of ``b``; ``index_bytes`` is (ceil(K/8), N) uint8. A group
    with three or more nonzeros raises LayoutError naming its rows and column, unless
    ``strict=False``, which keeps its first two nonzeros as the hardware does.
    """
    values = _matrix(b, "densify_2of4")
    k, n = values.shape
    if k % GROUP:
        raise LayoutError(SPARSE_STAGE, "GroupIndivisible", f"K = {k} is not a multiple of {GROUP}", hint=f"pad K with zero rows to {-(-k // GROUP) * GROUP}")
    groups = values.reshape(k // GROUP, GROUP, n)
    nonzero = groups != 0
    count = nonzero.sum(axis=1)
    if strict and np.any(count > 2):
        g, col = (int(v) for v in np.argwhere(count > 2)[0])
        raise LayoutError(
            SPARSE_STAGE,
            "TooDense",
            f"group of rows {GROUP * g}..{GROUP * g + 3} in column {col} holds {int(count[g, col])} nonzeros; 2:4 sparsity allows 2",
            hint="zero all but two elements of every group of 4 along K, or pass strict=False to keep the first two",
        )
    first = np.argmax(nonzero, axis=1)
    second = np.argmax(nonzero & (np.cumsum(nonzero, axis=1) == 2), axis=1)
    lone_last = (count == 1) & (first == 3)
    i0 = np.where(count == 0, 0, np.where(lone_last, 0, first))
    i1 = np.where(count >= 2, second - 1, np.where(lone_last, 2, 0))
    pick = np.arange(n)
    d0 = np.where((count == 0) | lone_last, 0, groups[np.arange(k // GROUP)[:, None], first, pick])
    d1 = np.where(count >= 2, groups[np.arange(k // GROUP)[:, None], second, pick], np.where(lone_last, groups[:, 3, :], 0))
    dense = np.stack([d0, d1], axis=1).reshape(k // 2, n).astype(values.dtype)
    indices = np.stack([i0, i1], axis=1).reshape(k // 2, n)
    return dense, pack_uint2(indices, axis=0)


def unpack_indices(index_bytes: npt.NDArray[np.uint8], k_half: SupportsIndex) -> npt.NDArray[np.uint8]:
    """The (k_half, N) 2-bit indices of packed ``index_bytes``."""
    return unpack_uint2(index_bytes, k_half, axis=0)


def sparse_matmul(a: npt.NDArray[Any], dense: npt.NDArray[Any], index_bytes: npt.NDArray[np.uint8]) -> npt.NDArray[Any]:
    """The Sparse Mmad golden ``C[m, n] = Σ_g A[m, 4g+i0]·d0 + A[m, 4g+1+i1]·d1``.

    ``a`` is (M, K), ``dense`` (K/2, N), ``index_bytes`` (ceil(K/8), N). Integer operands give int32
    (the hardware's int8 x int8 -> int32); others accumulate in float64 and give float32.
    """
    lhs = _matrix(a, "sparse_matmul")
    rhs = _matrix(dense, "sparse_matmul")
    m, k = lhs.shape
    half, n = rhs.shape
    if k != 2 * half or k % GROUP:
        raise LayoutError(SPARSE_STAGE, "SparseShape", f"A is {lhs.shape} but dense B is {rhs.shape}: K must be 2 x {half} and a multiple of {GROUP}")
    if not isinstance(index_bytes, np.ndarray) or index_bytes.shape != (-(-half // 4), n):
        shape = index_bytes.shape if isinstance(index_bytes, np.ndarray) else type(index_bytes).__name__
        raise LayoutError(SPARSE_STAGE, "IndexShape", f"dense B {rhs.shape} needs index bytes of shape {(-(-half // 4), n)}, got {shape}")
    idx = unpack_indices(index_bytes, half).astype(np.int64)
    if np.any(idx > 2):
        raise LayoutError(SPARSE_STAGE, "IndexRange", "a 2-bit sparse index holds 3; indices lie in 0..2")
    base = GROUP * np.arange(half // 2)[:, None]
    pos0 = base + idx[0::2]
    pos1 = base + 1 + idx[1::2]
    integer = lhs.dtype.kind in "iu" and rhs.dtype.kind in "iu"
    acc_type = np.int64 if integer else np.float64
    lhs_acc = lhs.astype(acc_type)
    rhs_acc = rhs.astype(acc_type)
    out: npt.NDArray[Any] = np.einsum("mgn,gn->mn", lhs_acc[:, pos0], rhs_acc[0::2])
    out += np.einsum("mgn,gn->mn", lhs_acc[:, pos1], rhs_acc[1::2])
    return out.astype(np.int32 if integer else np.float32)


def _matrix(x: npt.NDArray[Any], name: str) -> npt.NDArray[Any]:
    if not isinstance(x, np.ndarray) or x.ndim != 2:
        shape = x.shape if isinstance(x, np.ndarray) else type(x).__name__
        raise LayoutError(SPARSE_STAGE, "MatrixRank", f"{name} needs a 2-D matrix, got {shape}")
    if x.dtype.kind not in "iuf":
        raise DtypeError(SPARSE_STAGE, "SparseDtype", f"{name} takes integer or float matrices, got {x.dtype}")
    return x
