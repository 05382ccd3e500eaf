"""Plain digits read off the cells of a form that still holds operands (docs/mapping-language.md §1.8).

Slot surgery writes an operand out only where its pieces line up with the operand's slots, so two
spellings of one layout can keep different operands whole: ``(B, 2) #{!} 6 / 3`` and
``(B #{!} 3, 2) / 3`` both hold ``B``. The cells decide instead: when the cells of a small form are
those of plain digits, broadcasts and padding, :func:`flat_form` gives those slots, whatever the
spelling. Cells are read innermost slot first: the smallest run of positions that repeats across
the rest, with a digit, a broadcast or padding along it, is the next slot.
"""

from __future__ import annotations

from tcpdsl.algebra.cells import Cell, Index, Pad, PaddingKind
from tcpdsl.algebra.decode import decode
from tcpdsl.algebra.slots import Bcast, Composite, Digit, Slot, Slots, simplify, size_of, spelt_padded

# Reading every cell costs time linear in the size; larger forms keep their operands.
MAX_CELLS = 4096


def flat_form(slots: Slots) -> Slots | None:
    """The slots without operands that hold exactly the cells of ``slots``, or None."""
    size = size_of(slots)
    if size > MAX_CELLS:
        return None
    return _from_cells([decode(slots, i) for i in range(size)], _axis_sizes(slots))


def read_form(slots: Slots, stride: int, count: int) -> tuple[Slots, int, PaddingKind] | None:
    """What the cells ``0, stride, ..., (count-1)·stride`` of ``slots`` hold, or None: the slots
    without operands that hold its first ``live`` cells, ``live``, and the padding kind of the
    rest. ``live`` is ``count`` when the slots hold every cell (the kind is then Top), else the
    cells past it are padding of one kind, the one a piece of those slots pads with."""
    if count > MAX_CELLS:
        return None
    cells = [decode(slots, d * stride) for d in range(count)]
    sizes = _axis_sizes(slots)
    whole = _from_cells(cells, sizes)
    if whole is not None:
        return whole, count, PaddingKind.TOP
    last = cells[-1]
    if not isinstance(last, Pad):
        return None
    live = count
    while live > 0 and cells[live - 1] == last:
        live -= 1
    found = _from_cells(cells[:live], sizes) if live > 1 else None
    return None if found is None else (found, live, last.kind)


def _from_cells(cells: list[Cell], sizes: dict[str, int]) -> Slots | None:
    if not all(isinstance(c, Pad) or (isinstance(c, Index) and all(v < sizes[a] for a, v in c.coords.items()))
               for c in cells):
        return None  # past an operand's end, or past an axis: no plain digit says that
    out: list[Slot] = []
    grid = cells
    while len(grid) > 1:
        found = next((s for e in range(2, len(grid) + 1) if len(grid) % e == 0
                      and (s := _slot(grid, e, sizes)) is not None), None)
        if found is None:
            return None
        out.append(found)
        grid = grid[::found.extent]
    if grid != [Index()]:
        return None
    flat = simplify(tuple(out))
    if any(not slot.padded and spelt_padded(slot.live) for slot in flat):
        return None  # its text pads with a kind the cells cannot tell (docs/mapping-language.md §1.8)
    return flat if all(decode(flat, i) == cell for i, cell in enumerate(cells)) else None


def _slot(grid: list[Cell], e: int, sizes: dict[str, int]) -> Slot | None:
    """The innermost slot of extent ``e`` when ``grid`` is that slot under the rest, else None."""
    row = grid[:e]
    if row[0] != Index():
        return None  # every digit 0 is the origin, live in a flat form
    count = next((d for d, cell in enumerate(row) if isinstance(cell, Pad)), e)
    live = _live(row[:count], sizes)
    if live is False or any(cell != row[-1] for cell in row[count:]):
        return None
    for q in range(0, len(grid), e):
        rest = grid[q]
        for d in range(1, e):
            if grid[q + d] != _under(rest, row[d]):
                return None
    pad = row[-1]
    assert live is not True
    return Slot(live, e, pad.kind) if isinstance(pad, Pad) else Slot(live, e)


def _live(row: list[Cell], sizes: dict[str, int]) -> Digit | Bcast | None | bool:
    """What the live values of a slot hold: a digit of one axis, a broadcast, or one value (None);
    False when they are none of these."""
    if len(row) == 1:
        return None
    first = row[1]
    assert isinstance(first, Index)
    if not first.coords:
        return Bcast(len(row)) if all(isinstance(c, Index) and not c.coords for c in row) else False
    if len(first.coords) != 1:
        return False
    ((axis, step),) = first.coords.items()
    if any(c != Index({axis: d * step}) for d, c in enumerate(row)):
        return False
    return Digit(axis, sizes[axis], step, len(row))


def _under(rest: Cell, cell: Cell) -> Cell:
    """The cell of a slot value ``cell`` under the outer slots' cell ``rest``: outer padding wins."""
    if isinstance(rest, Pad) or isinstance(cell, Pad):
        return rest if isinstance(rest, Pad) else cell
    assert isinstance(rest, Index) and isinstance(cell, Index)
    coords = dict(rest.coords)
    for axis, value in cell.coords.items():
        coords[axis] = coords.get(axis, 0) + value
    return Index(coords)


def _axis_sizes(slots: Slots) -> dict[str, int]:
    out: dict[str, int] = {}
    for slot in slots:
        live = slot.live
        if isinstance(live, Digit):
            out[live.axis] = live.n
        elif isinstance(live, Composite):
            out.update(_axis_sizes(live.operand.slots))
        if slot.shared is not None:
            out.update(_axis_sizes(slot.shared.operand.slots))
    return out
