"""Sub-byte packing: two FP4 codes per byte, four 2-bit sparse indices per byte.

ml_dtypes keeps every sub-byte element in a byte of its own; the hardware packs them. Both
packings put the element with the lower index in the less significant bits (docs/block-formats.md
§2 for FP4, §5.2 for the indices).
"""

from __future__ import annotations

from typing import Final, SupportsIndex

import ml_dtypes
import numpy as np
import numpy.typing as npt

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.mx.formats import read_array
from tcpdsl.mx.integers import as_int

PACK_STAGE: Final = "mx.pack"
_FP4: Final = np.dtype(ml_dtypes.float4_e2m1fn)


def pack_fp4x2(elements: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """Pack FP4 E2M1 elements in pairs along the last axis.

    Even index in bits 3..0, odd index in bits 7..4 (the Ascend ``fp4x2_e2m1_t`` layout):
    ``[1.0, -0.5]`` (codes 2, 9) packs to ``0x92``.
    """
    elements = read_array(elements, PACK_STAGE, "the FP4 elements")
    if elements.dtype != _FP4:
        raise DtypeError(PACK_STAGE, "Fp4Dtype", f"expected float4_e2m1fn elements, got {elements.dtype}")
    if elements.ndim == 0 or elements.shape[-1] % 2:
        raise LayoutError(
            PACK_STAGE,
            "Fp4OddLength",
            f"the last axis must have even length to pack pairs, got shape {elements.shape}",
            hint="pad the row with a zero element",
        )
    codes = elements.view(np.uint8) & 0xF
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)


def unpack_fp4x2(packed: npt.ArrayLike) -> npt.NDArray[np.generic]:
    """Inverse of :func:`pack_fp4x2`: the last axis doubles in length."""
    packed = read_array(packed, PACK_STAGE, "the packed FP4 data")
    if packed.dtype != np.uint8:
        raise DtypeError(PACK_STAGE, "PackedDtype", f"packed FP4 data must be uint8, got {packed.dtype}")
    if packed.ndim == 0:
        raise LayoutError(PACK_STAGE, "PackedRank", "packed FP4 data needs at least one axis")
    out = np.empty((*packed.shape[:-1], packed.shape[-1] * 2), dtype=np.uint8)
    out[..., 0::2] = packed & 0xF
    out[..., 1::2] = packed >> 4
    return out.view(_FP4)


def pack_uint2(indices: npt.ArrayLike, axis: SupportsIndex = 0) -> npt.NDArray[np.uint8]:
    """Pack 2-bit values four to a byte along ``axis``, the first in the least significant bits.

    ``[1, 2, 0, 1]`` packs to ``0x49``. A length that is not a multiple of 4 is padded with zeros.
    """
    values = _uint2_values(indices)
    at = _axis(axis, values.shape)
    moved = np.moveaxis(values, at, 0)
    length = moved.shape[0]
    padded = np.zeros((-(-length // 4) * 4, *moved.shape[1:]), dtype=np.uint8)
    padded[:length] = moved
    packed = padded[0::4] | (padded[1::4] << 2) | (padded[2::4] << 4) | (padded[3::4] << 6)
    return np.moveaxis(packed.astype(np.uint8), 0, at)


def unpack_uint2(packed: npt.ArrayLike, length: SupportsIndex, axis: SupportsIndex = 0) -> npt.NDArray[np.uint8]:
    """Inverse of :func:`pack_uint2`: the first ``length`` 2-bit values along ``axis``."""
    packed = read_array(packed, PACK_STAGE, "the packed indices")
    if packed.dtype != np.uint8:
        raise DtypeError(PACK_STAGE, "PackedDtype", f"packed indices must be uint8, got {packed.dtype}")
    at = _axis(axis, packed.shape)
    moved = np.moveaxis(packed, at, 0)
    count = as_int(length)
    if count is None:
        raise LayoutError(PACK_STAGE, "PackedLength", f"length must be an integer, got {length!r}")
    if not 0 <= count <= 4 * moved.shape[0]:
        raise LayoutError(PACK_STAGE, "PackedLength", f"{count} values do not fit in {moved.shape[0]} packed bytes")
    out = np.empty((4 * moved.shape[0], *moved.shape[1:]), dtype=np.uint8)
    for j in range(4):
        out[j::4] = (moved >> (2 * j)) & 3
    return np.moveaxis(out[:count], 0, at)


def _uint2_values(raw: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    indices = read_array(raw, PACK_STAGE, "the 2-bit indices")
    if indices.dtype.kind not in "iu":
        raise DtypeError(PACK_STAGE, "IndexDtype", f"2-bit indices must be integers, got {indices.dtype}")
    if indices.ndim == 0:
        raise LayoutError(PACK_STAGE, "IndexRank", "2-bit indices need at least one axis")
    if np.any((indices < 0) | (indices > 3)):
        raise LayoutError(PACK_STAGE, "IndexRange", "2-bit indices must lie in 0..3")
    return indices.astype(np.uint8)


def _axis(axis: object, shape: tuple[int, ...]) -> int:
    at = as_int(axis)
    if at is None:
        raise LayoutError(PACK_STAGE, "AxisType", f"axis must be an integer, got {axis!r}")
    if not -len(shape) <= at < len(shape):
        raise LayoutError(PACK_STAGE, "AxisRange", f"axis {at} is out of range for shape {shape}")
    return at
