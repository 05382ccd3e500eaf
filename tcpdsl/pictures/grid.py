"""Lay a mapping's cells out as rows: the inner slots run along a row, the outer ones down the rows.

Both the text tables and the SVG drawing read this grid, so they always agree on where a cell goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import Cell, Index, Mapping, Pad, as_int, as_mapping


@dataclass(frozen=True)
class Row:
    """One drawn row: the position of its first cell and the cells themselves."""

    start: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Grid:
    """The rows to draw; ``elided`` rows are skipped after row ``len(head)`` (zero when none)."""

    width: int
    total_rows: int
    head: tuple[Row, ...]
    tail: tuple[Row, ...]

    @property
    def elided(self) -> int:
        return self.total_rows - len(self.head) - len(self.tail)

    @property
    def rows(self) -> tuple[Row, ...]:
        return self.head + self.tail


# The largest number of columns or rows a picture shows.
MAX_EXTENT: Final = 4096


def slot_extents(mapping: Mapping) -> list[int]:
    """Padded extents of the normalized slots, innermost first (the keys of padding_per_stride)."""
    pps = mapping.padding_per_stride()
    return [pps[stride] for stride in sorted(pps)]


def row_width(mapping: Mapping, max_columns: int) -> int:
    """The number of cells per row: whole inner slots while they fit in ``max_columns``.

    The outermost slot always runs down the rows (when there is more than one slot). A single inner
    slot wider than ``max_columns`` is cut at its largest divisor that fits, so that every row
    starts on a digit boundary.
    """
    extents = slot_extents(mapping)
    width = 1
    for extent in extents[:-1] if len(extents) > 1 else extents:
        if width * extent <= max_columns:
            width *= extent
            continue
        if width == 1:
            width = max(d for d in range(1, max_columns + 1) if extent % d == 0)
        break
    return width


def build(mapping: Mapping, max_columns: int = 16, max_rows: int = 64) -> Grid:
    """The grid of ``mapping``; past ``max_rows`` rows only the first and last halves are kept.

    Both limits are clamped to ``MAX_EXTENT``: a picture is read by a person, and a larger limit
    would only make it slow.
    """
    mapping = as_mapping(mapping, "a picture")
    max_columns = min(MAX_EXTENT, as_int(max_columns, "max_columns", "a picture"))
    max_rows = min(MAX_EXTENT, as_int(max_rows, "max_rows", "a picture"))
    width = row_width(mapping, max(1, max_columns))
    total = mapping.size // width
    keep = max(2, max_rows)
    if total <= keep:
        head_rows, tail_rows = range(total), range(0)
    else:
        head_rows, tail_rows = range(keep // 2), range(total - keep // 2, total)

    def row(r: int) -> Row:
        start = r * width
        return Row(start, tuple(mapping.cell(start + j) for j in range(width)))

    return Grid(width, total, tuple(row(r) for r in head_rows), tuple(row(r) for r in tail_rows))


def cell_label(cell: Cell, axes: tuple[str, ...]) -> str:
    """``A:1 B:7`` for a live cell (every axis shown, zeros included), the pad marker for padding."""
    if isinstance(cell, Index):
        if not axes:
            return "."
        return " ".join(f"{name}:{cell.coords.get(name, 0)}" for name in axes)
    if isinstance(cell, Pad):
        return cell.kind.marker
    return "oob"
