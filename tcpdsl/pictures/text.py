"""Plain-text pictures of a mapping: its cell table and its normalized slots."""

from __future__ import annotations

from tcpdsl.algebra import Bcast, Composite, Mapping, Slot, as_mapping, render_slot, slot_strides
from tcpdsl.pictures.grid import Grid, build, cell_label


def cell_table(mapping: Mapping, *, max_columns: int = 16, max_rows: int = 64) -> str:
    """Position → logical coordinates (or padding marker), one row per step of the outer slots.

    Each row starts with the position of its first cell; the header gives the offset of each column.
    Rows hold whole inner slots (at most ``max_columns`` cells); past ``max_rows`` rows the middle
    is elided.
    """
    grid = build(mapping, max_columns, max_rows)
    axes = mapping.axes
    labels = [[cell_label(cell, axes) for cell in row.cells] for row in grid.rows]
    col_width = max([len(f"+{grid.width - 1}")] + [len(text) for line in labels for text in line])
    pos_width = len(str(max(0, mapping.size - grid.width)))
    header = " " * pos_width + " | " + "  ".join(f"+{j}".ljust(col_width) for j in range(grid.width))
    lines = [header.rstrip(), "-" * len(header.rstrip())]
    for index, (row, texts) in enumerate(zip(grid.rows, labels)):
        if index == len(grid.head) and grid.elided:
            lines.append(_elision(grid, pos_width))
        body = "  ".join(text.ljust(col_width) for text in texts)
        lines.append(f"{str(row.start).rjust(pos_width)} | {body}".rstrip())
    return "\n".join(lines)


def _elision(grid: Grid, pos_width: int) -> str:
    plural = "s" if grid.elided != 1 else ""
    return f"{'...'.rjust(pos_width)} | ({grid.elided} row{plural} of {grid.width} cells elided)"


def slot_table(mapping: Mapping) -> str:
    """The normalized slots, innermost first: cumulative stride, extent, live count, term, padding.

    A position decodes outermost slot first; digit values at or past the live count are padding
    of the slot's kind (docs/mapping-language.md §1.8).
    """
    rows = [("slot", "stride", "extent", "live", "term", "padding")]
    slots = as_mapping(mapping, "slot_table").slots()
    for index, (slot, stride) in enumerate(zip(slots, slot_strides(slots))):
        padding = f"{slot.kind.marker} {slot.extent - slot.count} of {slot.extent}" if slot.padded else "-"
        rows.append((str(index), str(stride), str(slot.extent), str(slot.count), _term(slot), padding))
    if len(rows) == 1:
        rows.append(("-", "1", "1", "1", "1 (identity)", "-"))
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(text.ljust(w) for text, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _term(slot: Slot) -> str:
    """What the live digit values address, without the slot's padding."""
    live = slot.live
    if live is None:
        return "(pure padding)"
    if isinstance(live, Bcast):
        return f"{live.c} (broadcast)"
    text = render_slot(Slot(live, slot.count)).text
    return f"{text} (composite)" if isinstance(live, Composite) else text
