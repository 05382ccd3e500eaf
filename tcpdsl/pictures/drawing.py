"""SVG pictures of mappings: one rectangle per cell, laid out like the text cell table.

Live cells are coloured by the value of one axis (a fixed palette, offset per axis name so that
different axes get different colour runs); padding is hatched (Top), grey (Zero) or dark (Bottom).
The output is plain SVG 1.1 with text labels and no scripts or external resources.
"""

from __future__ import annotations

from collections.abc import Mapping as MappingOf
from dataclasses import dataclass, field
from typing import Final
from xml.sax.saxutils import escape, quoteattr

from tcpdsl.algebra import Cell, Index, MAPPING_STAGE, Mapping, Pad, PaddingKind, as_mapping
from tcpdsl.errors import LayoutError
from tcpdsl.pictures.grid import build, cell_label

PALETTE: Final = (
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
    "#b3de69", "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f", "#a6cee3",
)
NO_AXIS_FILL: Final = "#e8eef7"  # live cells of a mapping with no axis (pure broadcast)
PAD_FILL: Final = {PaddingKind.TOP: "url(#tcp-hatch)", PaddingKind.ZERO: "#c8c8c8", PaddingKind.BOTTOM: "#3a3a3a"}
PAD_NAME: Final = {PaddingKind.TOP: "Top padding (#)", PaddingKind.ZERO: "Zero padding (#{0})", PaddingKind.BOTTOM: "Bottom padding (#{!})"}
CELL_HEIGHT: Final = 24
CHAR_WIDTH: Final = 7  # approximate advance of the 11px monospace font
FONT: Final = 'font-family="monospace" font-size="11"'
DEFS: Final = (
    '<defs><pattern id="tcp-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/>'
    '<line x1="0" y1="0" x2="0" y2="6" stroke="#8a8a8a" stroke-width="2"/></pattern></defs>'
)


def axis_color(axis: str, value: int) -> str:
    """The fill of a live cell whose ``axis`` coordinate is ``value``; stable across runs."""
    offset = sum(map(ord, axis))
    return PALETTE[(offset + value) % len(PALETTE)]


@dataclass
class _Canvas:
    """Accumulates SVG elements top to bottom and remembers what the legend must explain."""

    y: int = 8
    width: int = 0
    parts: list[str] = field(default_factory=list)
    pads: set[PaddingKind] = field(default_factory=set)
    colored: dict[str, set[int]] = field(default_factory=dict)

    def text(self, x: int, y: int, content: str, extra: str = "") -> None:
        self.parts.append(f'<text x="{x}" y="{y}" {FONT}{extra}>{escape(content)}</text>')
        self.width = max(self.width, x + CHAR_WIDTH * len(content))

    def heading(self, content: str) -> None:
        self.text(8, self.y + 12, content, ' font-weight="bold"')
        self.y += 20

    def panel(self, mapping: Mapping, color_by: str | None, max_columns: int, max_rows: int) -> None:
        grid = build(mapping, max_columns, max_rows)
        axes = mapping.axes
        axis = color_by if color_by in axes else (axes[0] if axes else None)
        labels = [[cell_label(cell, axes) for cell in row.cells] for row in grid.rows]
        cell_w = max([40] + [CHAR_WIDTH * len(t) + 10 for line in labels for t in line])
        left = 16 + CHAR_WIDTH * len(str(mapping.size))
        for j in range(grid.width):
            self.text(left + j * cell_w + 4, self.y + 12, f"+{j}", ' fill="#555555"')
        self.y += 18
        for index, (row, texts) in enumerate(zip(grid.rows, labels)):
            if index == len(grid.head) and grid.elided:
                self.text(left, self.y + 16, f"... {grid.elided} rows of {grid.width} cells elided ...", ' fill="#555555"')
                self.y += CELL_HEIGHT
            self.text(8, self.y + 16, str(row.start), ' fill="#555555"')
            for j, (cell, label) in enumerate(zip(row.cells, texts)):
                self._cell(left + j * cell_w, cell_w, cell, label, axis)
            self.y += CELL_HEIGHT
        self.width = max(self.width, left + grid.width * cell_w + 8)
        self.y += 10

    def _cell(self, x: int, w: int, cell: Cell, label: str, axis: str | None) -> None:
        ink = "#000000"
        if isinstance(cell, Pad):
            fill = PAD_FILL[cell.kind]
            self.pads.add(cell.kind)
            ink = "#ffffff" if cell.kind is PaddingKind.BOTTOM else ink
            kind = f"pad-{cell.kind.name.lower()}"
        elif isinstance(cell, Index) and axis is not None:
            value = cell.coords.get(axis, 0)
            fill = axis_color(axis, value)
            self.colored.setdefault(axis, set()).add(value)
            kind = "live"
        else:
            fill = NO_AXIS_FILL
            kind = "live"
        self.parts.append(
            f'<rect class="cell {kind}" x="{x}" y="{self.y}" width="{w}" height="{CELL_HEIGHT}" '
            f'fill={quoteattr(fill)} stroke="#666666" stroke-width="0.5"/>'
        )
        self.text(x + 5, self.y + 16, label, f' fill="{ink}"')

    def legend(self) -> None:
        entries: list[tuple[str, str]] = []
        for axis, values in self.colored.items():
            shown = sorted(values)[:6]
            entries += [(axis_color(axis, v), f"{axis} = {v}") for v in shown]
            if len(values) > len(shown):
                entries.append(("none", f"... ({len(values)} values of {axis}, colours repeat every {len(PALETTE)})"))
        entries += [(PAD_FILL[k], PAD_NAME[k]) for k in sorted(self.pads, reverse=True)]
        if not entries:
            return
        self.heading("Legend")
        for fill, name in entries:
            if fill != "none":
                self.parts.append(
                    f'<rect class="legend" x="8" y="{self.y}" width="18" height="14" '
                    f'fill={quoteattr(fill)} stroke="#666666" stroke-width="0.5"/>'
                )
            self.text(32, self.y + 11, name)
            self.y += 18

    def render(self) -> str:
        width, height = self.width + 8, self.y + 8
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">'
        )
        background = f'<rect class="background" width="{width}" height="{height}" fill="#ffffff"/>'
        return "\n".join([head, DEFS, background, *self.parts, "</svg>"]) + "\n"


def svg(
    mapping: Mapping,
    *,
    title: str | None = None,
    color_by: str | None = None,
    max_columns: int = 16,
    max_rows: int = 64,
) -> str:
    """An SVG picture of ``mapping``: one rectangle per cell, rows as in :func:`cell_table`.

    ``color_by`` names the axis whose coordinate picks a live cell's colour (default: the first axis
    of the mapping). Huge mappings have the middle of their rows elided.
    """
    mapping = as_mapping(mapping, "svg")
    canvas = _Canvas()
    canvas.heading(str(title) if title is not None else f'm["{mapping}"]  (size {mapping.size})')
    canvas.panel(mapping, color_by, max_columns, max_rows)
    canvas.legend()
    return canvas.render()


def tensor_svg(
    layout_dims: dict[str, Mapping],
    *,
    title: str | None = None,
    max_columns: int = 16,
    max_rows: int = 16,
) -> str:
    """One panel per named layout dimension (Chip, Cluster, Slice, Time, Packet, ...), one legend.

    Each panel is drawn like :func:`svg`; the dimensions are drawn separately because their product
    is usually far too large to show cell by cell.
    """
    if not isinstance(layout_dims, MappingOf):
        raise LayoutError(
            MAPPING_STAGE, "NotAMapping", f"tensor_svg takes a dict of layouts, got {type(layout_dims).__name__}",
            'pass {"Time": m["A"], "Packet": m["B % 16"]}',
        )
    canvas = _Canvas()
    if title is not None:
        canvas.heading(str(title))
    for name, mapping in layout_dims.items():
        mapping = as_mapping(mapping, f"tensor_svg ({name})")
        canvas.heading(f'{name}: m["{mapping}"]  (size {mapping.size})')
        canvas.panel(mapping, None, max_columns, max_rows)
    canvas.legend()
    return canvas.render()

