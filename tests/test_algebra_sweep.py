"""A seeded sweep: 20 000 generated expressions keep every cell through their canonical form and text.

The property tests search with hypothesis; this sweep covers the same families in bulk, at small
sizes so that every cell is checked: interleaved splits of padded operands (every padding kind,
pieces in any order, overlapping cuts), ragged strides, resizes, nested operators, and pure
padding of mixed kinds. For each expression ``m`` the canonical text must read back as exactly
the canonical form (which is its own canonical form), and ``m`` and its canonical form must hold
the same cell at every position. Its split at a random divisor must agree with the split written
out, ``[m] / n`` and ``[m] % n``. And two expressions over the same axes whose canonical forms
pool no operand (no operand read by two pieces) and hold the same cells have one canonical text.
A smaller seeded fuzz of single flat operands checks the same read-back and cells exactly, and
counts the splits still apart against a ratchet.
"""

from __future__ import annotations

import heapq
import random
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tcpdsl.algebra import (
    Broadcast,
    Index,
    Mapping,
    Modulo,
    Pad,
    Padding,
    PaddingKind,
    Pair,
    Resize,
    Stride,
    Symbol,
    cell_at,
    parse,
    slots_of,
)
from tcpdsl.algebra.slots import Slots, operands_in

EXPRESSIONS = 20_000
MAX_CELLS = 256
CHUNKS = 4  # run as separate tests so that parallel workers share them
KINDS = list(PaddingKind)
NAMES = "ABCDEF"


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def operator(rng: random.Random, inner: Mapping, room: int) -> Mapping:
    """``inner`` under one operator; a padding stays within ``room`` cells (or ``inner``'s size)."""
    choice = rng.randrange(4)
    if choice == 0:
        return Stride(inner, rng.choice(divisors(inner.size)))
    if choice == 1:
        return Modulo(inner, rng.choice(divisors(inner.size)))
    if choice == 2:
        return Resize(inner, rng.randint(1, inner.size))
    return Padding(inner, rng.randint(inner.size, max(inner.size, min(room, 3 * inner.size))), rng.choice(KINDS))


def tree(rng: random.Random, depth: int, names: list[str], room: int) -> Mapping:
    """A random tree of at most ``room`` cells, each axis used once."""
    choice = rng.randrange(6 if depth > 0 else 2)
    if choice == 0 and names:
        return Symbol(names.pop(rng.randrange(len(names))), rng.randint(1, min(7, room)))
    if choice <= 1:
        return Broadcast(rng.choice([c for c in (1, 1, 2, 3) if c <= room]))
    if choice == 2:
        left = tree(rng, depth - 1, names, max(1, room // 2))
        return Pair(left, tree(rng, depth - 1, names, room // left.size))
    return operator(rng, tree(rng, depth - 1, names, room), room)


def interleaving(rng: random.Random) -> Mapping:
    """Pieces of one or two operands (mostly padded, any kind), cut at a divisor, sometimes cut
    again or overlapped by a third piece, shuffled among themselves and a pure padding."""
    names = list(NAMES)
    pieces: list[Mapping] = []
    for _ in range(rng.randint(1, 2)):
        operand = tree(rng, 2, names, 6)
        if rng.random() < 0.7:
            operand = Padding(operand, rng.randint(operand.size, 2 * operand.size + 2), rng.choice(KINDS))
        n = rng.choice(divisors(operand.size))
        cut = [Stride(operand, n), Modulo(operand, n)]
        if rng.random() < 0.2:
            k = rng.choice(divisors(operand.size))
            cut.append(rng.choice([Stride(operand, k), Modulo(operand, k), Resize(operand, 1 + k // 2)]))
        pieces += [operator(rng, piece, 12) if rng.random() < 0.15 else piece for piece in cut]
    if rng.random() < 0.3:
        pieces.append(Padding(Broadcast(1), rng.randint(2, 3), rng.choice(KINDS)))
    rng.shuffle(pieces)
    out = pieces[-1]
    for piece in reversed(pieces[:-1]):
        out = Pair(piece, out)
    return out


def expression(rng: random.Random) -> Mapping:
    """An interleaving or a tree of at most ``MAX_CELLS`` cells (a larger draw is drawn again)."""
    while True:
        m = interleaving(rng) if rng.random() < 0.7 else tree(rng, 3, list(NAMES), 24)
        if m.size <= MAX_CELLS:
            return m


# -- every cell at once ---------------------------------------------------------------------------
# A vectorised twin of the cell semantics (tcpdsl.algebra.cell_at), to compare whole mappings fast.
# Ranks (paths of pair sides, smaller is more major) are coded as base-3 numbers, with digits 1 and
# 2 for the major and minor side, so that code order is rank order and a prefix ranks first.

OOB = 3
LIVE = -1
Array = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


class Cells:
    """Every cell of one mapping: a padding kind (``LIVE``, a ``PaddingKind``, ``OOB``) and coordinates."""

    def __init__(self, m: Mapping) -> None:
        n = m.size
        self.never = 3 ** (m.height + 2)  # above every rank
        self.rank = np.full(n, self.never, dtype=np.int64)  # the winning event's rank
        self.kind = np.full(n, LIVE, dtype=np.int64)
        self.coords: dict[str, Array] = {}
        self.pending: dict[object, list[Any]] = {}  # operand -> [node, position, rank, step, reached]
        self.queue: list[tuple[int, int, object]] = []
        self.met = 0
        everywhere = np.ones(n, dtype=np.bool_)
        self.use(m, np.arange(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
                 np.full(n, self.never // 9, dtype=np.int64), everywhere)
        while self.queue:
            _, _, key = heapq.heappop(self.queue)
            node, pos, rank, step, reached = self.pending.pop(key)
            over = reached & (pos >= node.size)
            self.event(over, rank, OOB)
            self.use(node, pos, rank, step, reached & ~over)

    def event(self, where: Mask, rank: Array, kind: int) -> None:
        first = where & (rank < self.rank)  # among equal ranks the first met wins
        self.rank[first] = rank[first]
        self.kind[first] = kind

    def use(self, node: Mapping, pos: Array, rank: Array, step: Array, where: Mask) -> None:
        if isinstance(node, Symbol):
            self.coords[node.name] = self.coords.get(node.name, 0) + np.where(where, pos, 0)
        elif isinstance(node, Pair):
            inner = node.right.size
            self.use(node.left, pos // inner, rank + step, step // 3, where)
            self.use(node.right, pos % inner, rank + 2 * step, step // 3, where)
        elif isinstance(node, Stride):
            self.read(node.inner, pos * node.s, rank, step, where)
        elif isinstance(node, (Modulo, Resize)):
            self.read(node.inner, pos, rank, step, where)
        elif isinstance(node, Padding):
            over = where & (pos >= node.inner.size)
            self.event(over, rank, int(node.kind))
            self.read(node.inner, pos, rank, step, where & ~over)

    def read(self, node: Mapping, pos: Array, rank: Array, step: Array, where: Mask) -> None:
        if isinstance(node, (Symbol, Broadcast)):
            over = where & (pos >= node.size)
            self.event(over, rank, OOB)
            if isinstance(node, Symbol):
                self.coords[node.name] = self.coords.get(node.name, 0) + np.where(where & ~over, pos, 0)
            return
        entry = self.pending.get(node.key)
        if entry is None:
            self.met += 1
            self.pending[node.key] = [node, np.where(where, pos, 0), np.where(where, rank, self.never), step, where]
            heapq.heappush(self.queue, (-node.height, self.met, node.key))
            return
        major = where & (rank < entry[2])
        entry[1] = entry[1] + np.where(where, pos, 0)
        entry[2] = np.where(major, rank, entry[2])
        entry[3] = np.where(major, step, entry[3])
        entry[4] = entry[4] | where

    def fingerprint(self, axes: list[str]) -> bytes:
        """Every cell's padding kind and the live cells' coordinates on ``axes``, as bytes."""
        live = self.kind == LIVE
        coords = [np.where(live, np.broadcast_to(self.coords.get(axis, 0), live.shape), 0) for axis in axes]
        return b"".join(array.tobytes() for array in (self.kind, *coords))

    def differ(self, other: Cells) -> int | None:
        """The first position whose cell differs from ``other``'s, or None."""
        live = self.kind == LIVE
        wrong = self.kind != other.kind
        for name in self.coords.keys() | other.coords.keys():
            mine, theirs = self.coords.get(name, 0), other.coords.get(name, 0)
            wrong |= live & (np.broadcast_to(mine, live.shape) != np.broadcast_to(theirs, live.shape))
        found = np.flatnonzero(wrong)
        return int(found[0]) if found.size else None


def pools(slots: Slots) -> bool:
    """Whether some operand of the form is read twice (two pieces, or a shared digit and a piece)."""
    seen: set[object] = set()
    stack = list(operands_in(slots))
    while stack:
        operand = stack.pop()
        if operand in seen:
            return True
        seen.add(operand)
        stack += operands_in(operand.slots)
    return False


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_generated_expressions_keep_every_cell(chunk: int) -> None:
    rng = random.Random(20260 + chunk)
    split_rng = random.Random(-1 - chunk)  # its own stream, so the expressions do not depend on it
    mismatches: list[str] = []
    apart: list[str] = []
    texts: dict[tuple[object, ...], str] = {}  # the cells of a form whose operands nothing pools -> its text
    for _ in range(EXPRESSIONS // CHUNKS):
        m = expression(rng)
        canonical = m.normalize()
        again = parse(str(m), m.axis_sizes())
        if not (again.same_structure(canonical) and again.normalize().same_structure(canonical)):
            mismatches.append(f"{m.text} {m.axis_sizes()}: {m} reads back differently")
        cells = Cells(m)
        differ = cells.differ(Cells(canonical))
        if differ is not None:
            mismatches.append(f"{m.text} {m.axis_sizes()}: cell {differ} of {m}")
        if not pools(slots_of(m)):
            sizes = sorted(m.axis_sizes().items())
            key = (m.size, tuple(sizes), cells.fingerprint([axis for axis, _ in sizes]))
            if texts.setdefault(key, str(m)) != str(m):
                mismatches.append(f"{m.text} {m.axis_sizes()}: {m}, but the same cells are {texts[key]}")
        n = split_rng.choice(divisors(m.size))
        outer, inner = m.split_at(n)
        if not (outer.normalize().same_structure(Stride(m, n).normalize())
                and inner.normalize().same_structure(Modulo(m, n).normalize())):
            apart.append(f"{m.text} {m.axis_sizes()} at {n}: {outer} and {inner}, not {Stride(m, n)} and {Modulo(m, n)}")
    assert mismatches == []
    assert apart == []


def test_every_cell_at_once_is_cell_at() -> None:
    rng = random.Random(7)
    for _ in range(300):
        m = expression(rng)
        cells = Cells(m)
        for i in range(m.size):
            cell = cell_at(m, i)
            if isinstance(cell, Index):
                assert cells.kind[i] == LIVE, (m.text, i)
                assert {a: int(v[i]) for a, v in cells.coords.items() if v[i]} == cell.coords, (m.text, i)
            else:
                assert cells.kind[i] == (int(cell.kind) if isinstance(cell, Pad) else OOB), (m.text, i)


def test_the_reported_expression_keeps_every_cell() -> None:
    m = parse("3 = 1 #{0} 3 #{!} 6 / 3, A #{!} 4 = 4 #{0} 7 / 1, A #{!} 4 = 4 #{0} 7 % 1, 3 = 1 #{0} 3 #{!} 6 % 3",
              {"A": 3})
    again = parse(str(m), {"A": 3})
    assert [cell_at(again, i) for i in range(m.size)] == [cell_at(m, i) for i in range(m.size)]
    assert again == m


# -- flat operands ----------------------------------------------------------------------------------
# One flat operand (axes, broadcasts and padding side by side) under one or two operators, then cut,
# sometimes next to another factor: the family that found canonical texts which did not read back.

FLAT_EXPRESSIONS = 3_000
# Splits whose halves still normalise apart from the split written out: this may only go down.
FLAT_APART = 0


def flat_operand(rng: random.Random) -> Mapping:
    names = list("ABCD")
    parts: list[Mapping] = []
    for _ in range(rng.randint(2, 4)):
        choice = rng.randrange(4)
        if choice == 0 and names:
            parts.append(Symbol(names.pop(rng.randrange(len(names))), rng.randint(1, 5)))
        elif choice == 1:
            parts.append(Broadcast(rng.choice([1, 2, 3])))
        elif choice == 2 and names:
            axis = Symbol(names.pop(rng.randrange(len(names))), rng.randint(1, 4))
            parts.append(Padding(axis, rng.randint(axis.size, 2 * axis.size + 1), rng.choice(KINDS)))
        else:
            parts.append(Padding(Broadcast(1), rng.randint(1, 5), rng.choice(KINDS)))
    out = parts[-1]
    for part in reversed(parts[:-1]):
        out = Pair(part, out)
    for _ in range(rng.randint(1, 2)):
        out = operator(rng, out, out.size + 6)
    return out


def flat_expression(rng: random.Random) -> Mapping:
    while True:
        operand = flat_operand(rng)
        n = rng.choice(divisors(operand.size))
        m = rng.choice([Stride(operand, n), Modulo(operand, n), operand])
        if rng.random() < 0.5:
            other = Broadcast(rng.choice([1, 2])) if rng.random() < 0.5 else Symbol("E", 2)
            m = Pair(other, m) if rng.random() < 0.5 else Pair(m, Broadcast(2))
        if m.size <= 2 * MAX_CELLS:
            return m


def test_flat_operands_read_back_and_split_as_written() -> None:
    rng = random.Random(17)
    split_rng = random.Random(-17)
    mismatches: list[str] = []
    apart: list[str] = []
    for _ in range(FLAT_EXPRESSIONS):
        m = flat_expression(rng)
        canonical = m.normalize()
        again = parse(str(m), m.axis_sizes())
        if not (again.same_structure(canonical) and again.normalize().same_structure(canonical)):
            mismatches.append(f"{m.text} {m.axis_sizes()}: {m} reads back as {again.normalize()}")
        differ = Cells(m).differ(Cells(canonical))
        if differ is not None:
            mismatches.append(f"{m.text} {m.axis_sizes()}: cell {differ} of {m}")
        n = split_rng.choice(divisors(m.size))
        outer, inner = m.split_at(n)
        if not (outer.normalize().same_structure(Stride(m, n).normalize())
                and inner.normalize().same_structure(Modulo(m, n).normalize())):
            apart.append(f"{m.text} {m.axis_sizes()} at {n}: {outer} and {inner}")
    assert mismatches == []
    assert len(apart) <= FLAT_APART, apart
