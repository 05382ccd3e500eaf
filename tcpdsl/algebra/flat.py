"""Plain digits read off the cells of a form that still holds operands (docs/mapping-language.md §1.8).

Slot surgery writes an operand out only where its pieces line up with the operand's slots, so two
spellings of one layout can keep different operands whole: ``(B, 2) #{!} 6 / 3`` and
``(B #{!} 3, 2) / 3`` both hold ``B``. The cells decide instead: when the cells of a small form are
those of plain digits, broadcasts and padding, :func:`flat_form` gives those slots, whatever the
spelling. Cells are read innermost slot first: the smallest run of positions that repeats across
the rest, with a digit, a broadcast or padding along it, is the next slot.
"""

from __future__ import annotations

from tcpdsl.algebra.caches import memo
from tcpdsl.algebra.cells import Cell, Index, Pad, PaddingKind
from tcpdsl.algebra.decode import decode
from tcpdsl.algebra.slots import Bcast, Composite, Digit, Operand, Slot, Slots, simplify, size_of, spelt_padded

# Reading every cell costs time linear in the size; larger forms keep their operands.
MAX_CELLS = 4096


@memo(maxsize=16384)
def flat_form(slots: Slots) -> Slots | None:
    """The slots without operands that hold exactly the cells of ``slots``, or None."""
    size = size_of(slots)
    if size > MAX_CELLS:
        return None
    plain = _pieces_as_digits(slots)
    if plain is not None:
        return _written(plain)
    return _from_cells(_Cells(slots, 1), size)


def _written(plain: Slots) -> Slots | None:
    """Plain slots holding a form's cells, simplified; None when a digit's text pads with a kind the cells cannot
    tell (docs/mapping-language.md §1.8)."""
    flat = simplify(plain)
    return None if any(spelt_padded(slot.live) for slot in flat) else flat


def _pieces_as_digits(slots: Slots) -> Slots | None:
    """``slots`` with every piece of an operand that is one unpadded digit written as the digit its values read:
    value ``d`` of a piece of stride ``s`` reads the operand's position ``d·s``, which holds ``d·s·t`` of the
    digit's axis (stride ``t``). The cells are then those of plain digits, found without reading them. None when
    any other operand is left, a slot holds a single value, or a position or coordinate could run past its end
    (which the cells decide)."""
    reach: dict[Operand, int] = {}
    tops: dict[str, int] = {}
    out: list[Slot] = []
    for slot in slots:
        live = slot.live
        if slot.shared is not None:
            return None
        if isinstance(live, Composite):
            inner = live.operand.slots
            own = inner[0] if len(inner) == 1 else None
            if own is None or own.shared is not None or not isinstance(own.live, Digit) or own.count != own.extent:
                return None
            reach[live.operand] = reach.get(live.operand, 0) + (live.count - 1) * live.stride
            live = Digit(own.live.axis, own.live.n, own.live.stride * live.stride, live.count, own.live.live)
            slot = Slot(live, slot.extent, slot.kind)
        if slot.count == 1:
            return None  # one value and padding, or padding alone: the cells may merge it into the slot below
        if isinstance(live, Digit):
            if live.live:
                return None
            tops[live.axis] = tops.get(live.axis, 0) + (live.count - 1) * live.stride
            if tops[live.axis] >= live.n:
                return None
        out.append(slot)
    if not reach or any(top >= operand.size for operand, top in reach.items()):
        return None
    return tuple(out)


@memo(maxsize=16384)
def read_form(slots: Slots, stride: int, count: int) -> tuple[Slots, int, PaddingKind] | None:
    """What the cells ``0, stride, ..., (count-1)·stride`` of ``slots`` hold, or None: the slots
    without operands that hold its first ``live`` cells, ``live``, and the padding kind of the
    rest. ``live`` is ``count`` when the slots hold every cell (the kind is then Top), else the
    cells past it are padding of one kind, the one a piece of those slots pads with. Failing
    both, the slots may hold every strided cell of ``slots`` (for a stride above 1; a prefix
    is the slots' own to cut), of which the piece reads the first ``count``:
    ``(C = 3, D # 5, 1 # 2) / 5 = 5`` reads ``(C = 3, 1 # 2) = 5``."""
    if count > MAX_CELLS:
        return None
    cells = _Cells(slots, stride)
    whole = _from_cells(cells, count)
    if whole is not None:
        return whole, count, PaddingKind.TOP
    last = cells.at(count - 1)
    if isinstance(last, Pad):
        live = count
        while live > 0 and cells.at(live - 1) == last:
            live -= 1
        found = _from_cells(cells, live) if live > 1 else None
        if found is not None:
            return found, live, last.kind
    every = -(-size_of(slots) // stride)
    if stride > 1 and count < every <= MAX_CELLS and (whole := _from_cells(cells, every)) is not None:
        return whole, count, PaddingKind.TOP
    return None


class _Cells:
    """The cells ``0, stride, 2·stride, ...`` of ``slots``, each decoded when first read: a search
    that fails early reads few. A cell no plain digit holds (past an operand's end, or a coordinate
    past its axis) reads as None."""

    def __init__(self, slots: Slots, stride: int) -> None:
        self.slots, self.stride = slots, stride
        self.sizes = _axis_sizes(slots)
        self.known: dict[int, Cell | None] = {}

    def at(self, d: int) -> Cell | None:
        if d not in self.known:
            cell = decode(self.slots, d * self.stride)
            ok = isinstance(cell, Pad) or (isinstance(cell, Index)
                                           and all(v < self.sizes[a] for a, v in cell.coords.items()))
            self.known[d] = cell if ok else None
        return self.known[d]


def _from_cells(cells: _Cells, count: int) -> Slots | None:
    """The slots without operands that hold the first ``count`` of ``cells``, or None."""
    out: list[Slot] = []
    grid = list(range(count))
    while len(grid) > 1:
        found = next((s for e in range(2, len(grid) + 1) if len(grid) % e == 0
                      and (s := _slot(cells, grid, e)) is not None), None)
        if found is None:
            return None
        out.append(found)
        grid = grid[::found.extent]
    if cells.at(0) != Index():
        return None
    return _written(tuple(out))  # each slot was checked against every cell it spans, and simplify keeps cells


def _slot(cells: _Cells, grid: list[int], e: int) -> Slot | None:
    """The innermost slot of extent ``e`` when the cells at ``grid`` are that slot under the rest, else None."""
    found = _row(cells, grid, e)
    if found is None:
        return None
    live, row = found
    for q in range(e, len(grid), e):
        rest = cells.at(grid[q])
        if rest is None:
            return None
        for d in range(1, e):
            if cells.at(grid[q + d]) != _under(rest, row[d]):
                return None
    pad = row[-1]
    return Slot(live, e, pad.kind) if isinstance(pad, Pad) else Slot(live, e)


def _row(cells: _Cells, grid: list[int], e: int) -> tuple[Digit | Bcast | None, list[Cell]] | None:
    """What the first ``e`` cells at ``grid`` hold as one slot: live values of a digit of one axis,
    of a broadcast or one value (None), then padding of one kind; read only as far as they fit."""
    row: list[Cell] = [Index()]
    if cells.at(grid[0]) != row[0]:
        return None  # every digit 0 is the origin, live in a flat form
    axis, step, count = "", 0, 1
    for d in range(1, e):
        cell = cells.at(grid[d])
        if cell is None:
            return None
        if isinstance(cell, Pad) or count < d:
            if not (isinstance(cell, Pad) and (count == d or cell == row[-1])):
                return None
        elif d == 1:
            assert isinstance(cell, Index)
            if len(cell.coords) > 1:
                return None
            axis, step = next(iter(cell.coords.items()), ("", 0))
            count = 2
        elif cell != (Index({axis: d * step}) if axis else Index()):
            return None
        else:
            count += 1
        row.append(cell)
    if count == 1:
        return None, row
    return (Digit(axis, cells.sizes[axis], step, count) if axis else Bcast(count)), row


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
