"""The block-scaled array ``MxArray``: elements, one E8M0 scale code per block, and the block rule.

What an ``MxArray`` stores (docs/block-formats.md §1.1 and §1.6): ``elements`` has the logical shape
of the source; no padding is stored. Along ``axis`` the elements fall into blocks of ``block``
consecutive positions, the last one possibly short (ragged). A short block stands for a full block
whose missing tail is zero, as the MX format pads it; those zeros change neither the block's scale
nor any value or dot product, so they are never materialised. ``scales`` has the source shape with
``axis`` replaced by the block count ``ceil(length / block)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.mx.formats import ElementFormat, e8m0_decode, element_format

QUANTIZE_STAGE: Final = "mx.quantize"  # MxArray errors read as quantization errors
DEFAULT_BLOCK: Final = 32


@dataclass(frozen=True, eq=False)
class MxArray:
    """A block-scaled array: ``elements`` (the source's shape) and one E8M0 code per block.

    ``scales`` has the source shape with ``axis`` holding ``ceil(length / block)`` blocks; a ragged
    last block is zero-padded implicitly (docs/block-formats.md §1.6). ``fmt`` is the canonical
    element format name and ``axis`` is stored non-negative.
    """

    elements: npt.NDArray[Any]
    scales: npt.NDArray[np.uint8]
    fmt: str
    axis: int
    block: int = DEFAULT_BLOCK

    def __post_init__(self) -> None:
        fmt = element_format(self.fmt)
        elements, scales = self.elements, self.scales
        if not isinstance(elements, np.ndarray) or elements.dtype != fmt.dtype:
            got = elements.dtype if isinstance(elements, np.ndarray) else type(elements).__name__
            raise DtypeError(QUANTIZE_STAGE, "ElementDtype", f"{fmt.name} elements must be {fmt.dtype}, got {got}")
        if not isinstance(scales, np.ndarray) or scales.dtype != np.uint8:
            got = scales.dtype if isinstance(scales, np.ndarray) else type(scales).__name__
            raise DtypeError(QUANTIZE_STAGE, "ScaleDtype", f"scales must be uint8 E8M0 codes, got {got}")
        axis = check_axis(self.axis, elements.ndim)
        block = check_block(self.block)
        expected = scale_shape(elements.shape, axis, block)
        if scales.shape != expected:
            raise LayoutError(
                QUANTIZE_STAGE,
                "ScaleShape",
                f"elements of shape {elements.shape} with block {block} on axis {axis} need scales of shape "
                f"{expected}, got {scales.shape}",
                hint="one scale code per block, counting a short last block",
            )
        object.__setattr__(self, "fmt", fmt.name)
        object.__setattr__(self, "axis", axis)
        object.__setattr__(self, "block", block)

    @property
    def format(self) -> ElementFormat:
        return element_format(self.fmt)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.elements.shape)

    def block_scales(self) -> npt.NDArray[np.float64]:
        """The decoded scale of every element's block, in the elements' shape."""
        return spread_over_blocks(e8m0_decode(self.scales), self.axis, self.block, self.shape[self.axis])


def scale_shape(shape: tuple[int, ...], axis: int, block: int) -> tuple[int, ...]:
    """The shape of the scales of ``shape``: ``axis`` holds ``ceil(length / block)`` blocks."""
    out = list(shape)
    out[axis] = -(-out[axis] // block)
    return tuple(out)


def spread_over_blocks(per_block: npt.NDArray[Any], axis: int, block: int, length: int) -> npt.NDArray[Any]:
    """Each element's entry of a per-block array: position ``i`` along ``axis`` reads block ``i // block``."""
    spread = np.repeat(per_block, min(block, length), axis=axis)  # a block past the axis end is cut anyway
    keep = [slice(None)] * spread.ndim
    keep[axis] = slice(0, length)
    return spread[tuple(keep)]


def check_axis(axis: object, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise LayoutError(QUANTIZE_STAGE, "AxisType", f"axis must be an integer, got {axis!r}")
    if not -ndim <= int(axis) < ndim:
        raise LayoutError(
            QUANTIZE_STAGE,
            "AxisRange",
            f"axis {axis} is out of range for an array of {ndim} dimension(s)",
            hint=f"use an axis in {-ndim}..{ndim - 1}",
        )
    return int(axis) % ndim


def check_block(block: object) -> int:
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or int(block) <= 0:
        raise LayoutError(QUANTIZE_STAGE, "BlockSize", f"block must be a positive integer, got {block!r}", hint="MX uses 32")
    if int(block) > np.iinfo(np.intp).max:
        raise LayoutError(QUANTIZE_STAGE, "BlockSize", f"block {block} exceeds the largest array extent", hint="MX uses 32")
    return int(block)
