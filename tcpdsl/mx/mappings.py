"""The Zz, Nn and Zn layouts written as mapping expressions.

A fractal layout splits each padded axis into a fractal index (``X #{0} P / t``) and a position
inside the fractal (``X #{0} P % t``) and orders the four digits. Both digits of one axis come from
the same padded sub-expression, so their positions add before the padding is checked: a cell is
padding exactly when the whole coordinate is past the axis. ``#{0}`` records that pads hold zero.

Walking cells ``0 .. size-1`` and reading the source at each cell's coordinates (or writing the
pad value) reproduces the byte order of :mod:`tcpdsl.mx.layouts`; :func:`apply_mapping` does that.
docs/block-formats.md §3 shows the expressions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NoReturn, SupportsIndex

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Composite, Index, Mapping, Operand, Pad, parse
from tcpdsl.algebra import Digit as AlgebraDigit
from tcpdsl.errors import LayoutError
from tcpdsl.mx.integers import as_int
from tcpdsl.mx.layouts import FRACTAL, INDEX_C0, SCALE_K0

MAPPING_LAYOUT_STAGE: Final = "mx.mapping"


@dataclass(frozen=True, eq=False)
class LayoutMapping:
    """A fractal layout as a mapping: the parseable ``text``, its axis ``sizes`` and the ``mapping``.

    ``axes`` names the source array's dimensions in order (batch axes first).
    """

    text: str
    axes: tuple[str, ...]
    sizes: dict[str, int] = field(repr=False)
    mapping: Mapping = field(repr=False)

    def apply(self, source: npt.NDArray[Any], fill: int = 0) -> npt.NDArray[Any]:
        """The buffer this layout makes of ``source``: one element per cell, ``fill`` on padding."""
        return apply_mapping(self.mapping, self.axes, source, fill)


def zz_mapping(shape: Sequence[SupportsIndex]) -> LayoutMapping:
    """The Zz layout of a scaleA of shape (..., M, S): ``M/16, S/2, M%16, S%2`` over padded axes."""
    batch, (m, s) = _split(shape, "zz_mapping")
    m_out, m_in = _digits("M", m, FRACTAL)
    s_out, s_in = _digits("S", s, SCALE_K0)
    return _layout(batch, ("M", "S"), (m, s), [m_out, s_out, m_in, s_in])


def nn_mapping(shape: Sequence[SupportsIndex]) -> LayoutMapping:
    """The Nn layout of a scaleB of shape (..., S, N): ``N/16, S/2, N%16, S%2`` over padded axes."""
    batch, (s, n) = _split(shape, "nn_mapping")
    n_out, n_in = _digits("N", n, FRACTAL)
    s_out, s_in = _digits("S", s, SCALE_K0)
    return _layout(batch, ("S", "N"), (s, n), [n_out, s_out, n_in, s_in])


def zn_mapping(shape: Sequence[SupportsIndex], c0: SupportsIndex = INDEX_C0) -> LayoutMapping:
    """The Zn layout of a (..., K, N) matrix with (16, c0) fractals: ``K/c0, N/16, N%16, K%c0``.

    With the default ``c0=8``, ``K`` counts packed index bytes; ``c0=32`` fits the dense int8 B.
    """
    width = as_int(c0)
    if width is None or width <= 0:
        raise LayoutError(MAPPING_LAYOUT_STAGE, "FractalWidth", f"zn_mapping: c0 must be a positive integer, got {c0!r}")
    batch, (k, n) = _split(shape, "zn_mapping")
    k_out, k_in = _digits("K", k, width)
    n_out, n_in = _digits("N", n, FRACTAL)
    return _layout(batch, ("K", "N"), (k, n), [k_out, n_out, n_in, k_in])


def apply_mapping(mapping: Mapping, axes: Sequence[str], source: npt.NDArray[Any], fill: int = 0) -> npt.NDArray[Any]:
    """Lay ``source`` out through ``mapping``: cell ``i`` reads ``source`` at its coordinates.

    ``axes`` names the dimensions of ``source``; a padding cell gets ``fill``.
    """
    if not isinstance(mapping, Mapping):
        raise LayoutError(MAPPING_LAYOUT_STAGE, "NotAMapping", f"apply_mapping takes a Mapping, got {type(mapping).__name__}",
                          hint='build one with m["..."] or tcp.parse(text, sizes)')
    if isinstance(axes, str) or not isinstance(axes, Sequence) or not all(isinstance(a, str) for a in axes):
        raise LayoutError(MAPPING_LAYOUT_STAGE, "AxisNames", f"axes must be a sequence of axis names, got {axes!r:.80}",
                          hint='pass the names of the source dimensions, e.g. ("K", "N")')
    if not isinstance(source, np.ndarray) or source.ndim != len(axes):
        shape = source.shape if isinstance(source, np.ndarray) else type(source).__name__
        raise LayoutError(MAPPING_LAYOUT_STAGE, "SourceRank", f"axes {tuple(axes)} need a {len(axes)}-D source, got {shape}")
    sizes = mapping.axis_sizes()
    for name, extent in zip(axes, source.shape):
        if sizes.get(name, 1) != extent:
            raise LayoutError(
                MAPPING_LAYOUT_STAGE,
                "SourceShape",
                f"axis {name} has size {sizes.get(name, 1)} in {mapping.text} but the source has {extent}",
            )
    if isinstance(fill, bool) or not isinstance(fill, (int, float, np.number)):
        raise LayoutError(MAPPING_LAYOUT_STAGE, "Fill", f"fill must be a number, got {fill!r:.80}", hint="use 0")
    decoded = _decode(mapping)
    if decoded is None:
        return _apply_by_cells(mapping, axes, source, fill)
    coords, live = decoded
    extents = dict(zip(axes, source.shape))
    outside = np.zeros(mapping.size, dtype=np.bool_)
    for name, values in coords.items():
        outside |= live & (values >= extents.get(name, 1))
    if outside.any():
        _outside(mapping, int(np.argmax(outside)), axes, source)  # the first such cell, as a walk meets it
    out = np.empty(mapping.size, dtype=source.dtype)
    at = tuple(coords[name][live] if name in coords else 0 for name in axes)
    out[live] = source[at]
    if not live.all():
        _fill(out, ~live, fill, source)
    return out


def _decode(mapping: Mapping) -> tuple[dict[str, npt.NDArray[np.int64]], npt.NDArray[np.bool_]] | None:
    """Every cell of ``mapping`` at once, from its slots: each axis' coordinate and whether the cell
    is live; None for slots this does not decode (pieces of operands), which go cell by cell.

    A digit adds ``digit * stride`` to its axis and is padding past its live count; digits shared
    with a padded sub-expression are padding where that sub-expression is, at their summed position
    (docs/mapping-language.md §1.8).
    """
    slots = mapping.slots()
    grid = tuple(slot.extent for slot in reversed(slots))
    ndim = len(grid)
    coords: dict[str, npt.NDArray[np.int64]] = {}
    live = np.ones([1] * ndim, dtype=np.bool_)
    shared: dict[Operand, npt.NDArray[np.int64]] = {}
    for index, slot in enumerate(slots):
        if isinstance(slot.live, Composite):
            return None
        digit = np.arange(slot.extent, dtype=np.int64).reshape([-1 if d == ndim - 1 - index else 1 for d in range(ndim)])
        if isinstance(slot.live, AlgebraDigit):
            coords[slot.live.axis] = coords.get(slot.live.axis, np.zeros(1, np.int64)) + digit * slot.live.stride
        if slot.shared is not None:
            operand = slot.shared.operand
            shared[operand] = shared.get(operand, np.zeros(1, np.int64)) + digit * slot.shared.stride
        else:
            live = live & (digit < slot.count)
    for operand, position in shared.items():
        below = 1
        for inner in operand.slots:
            if inner.shared is not None or isinstance(inner.live, Composite):
                return None
            live = live & (position // below % inner.extent < inner.count)
            below *= inner.extent
    flat = {name: np.broadcast_to(values, grid).reshape(-1) for name, values in coords.items()}
    return flat, np.broadcast_to(live, grid).reshape(-1)


def _apply_by_cells(mapping: Mapping, axes: Sequence[str], source: npt.NDArray[Any], fill: int) -> npt.NDArray[Any]:
    out = np.empty(mapping.size, dtype=source.dtype)
    pads = np.zeros(mapping.size, dtype=np.bool_)
    for i in range(mapping.size):
        cell = mapping.cell(i)
        if isinstance(cell, Index):
            at = tuple(cell.coords.get(name, 0) for name in axes)
            if any(c >= extent for c, extent in zip(at, source.shape)) or set(cell.coords) - set(axes):
                _outside(mapping, i, axes, source)
            out[i] = source[at]
        elif isinstance(cell, Pad):
            pads[i] = True
        else:
            raise LayoutError(MAPPING_LAYOUT_STAGE, "OutOfBounds", f"cell {i} of {mapping.text} is out of bounds")
    if pads.any():
        _fill(out, pads, fill, source)
    return out


def _outside(mapping: Mapping, i: int, axes: Sequence[str], source: npt.NDArray[Any]) -> NoReturn:
    raise LayoutError(
        MAPPING_LAYOUT_STAGE,
        "CoordinateOutOfRange",
        f"cell {i} of {mapping.text} is {mapping.cell(i)}, outside the source axes {dict(zip(axes, source.shape))}",
        hint="a digit of a padded axis overshoots: keep both digits of that axis on one padded sub-expression",
    )


def _fill(out: npt.NDArray[Any], pads: npt.NDArray[np.bool_], fill: int, source: npt.NDArray[Any]) -> None:
    try:
        out[pads] = fill
    except (TypeError, ValueError, OverflowError):
        raise LayoutError(
            MAPPING_LAYOUT_STAGE, "Fill", f"fill {fill!r} does not fit the source dtype {source.dtype}",
            hint="use a fill the source dtype can hold, e.g. 0",
        ) from None


def _digits(name: str, n: int, tile: int) -> tuple[str, str]:
    padded = -(-n // tile) * tile
    base = name if padded == n else f"{name} #{{0}} {padded}"
    return f"{base} / {tile}", f"{base} % {tile}"


def _layout(batch: tuple[int, ...], names: tuple[str, str], extents: tuple[int, int], digits: list[str]) -> LayoutMapping:
    batch_names = tuple(f"Batch{i}" for i in range(len(batch)))
    text = ", ".join([*batch_names, *digits])
    sizes = dict(zip((*batch_names, *names), (*batch, *extents)))
    return LayoutMapping(text, (*batch_names, *names), sizes, parse(text, sizes))


def _split(shape: Sequence[SupportsIndex], name: str) -> tuple[tuple[int, ...], tuple[int, int]]:
    dims = tuple(shape) if isinstance(shape, Sequence) or (isinstance(shape, np.ndarray) and shape.ndim) else (shape,)
    if len(dims) < 2 or any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0 for d in dims):
        raise LayoutError(
            MAPPING_LAYOUT_STAGE,
            "LayoutShape",
            f"{name} needs a shape of two or more positive sizes (batch axes first), got {dims}",
        )
    ints = tuple(int(d) for d in dims)
    return ints[:-2], (ints[-2], ints[-1])
