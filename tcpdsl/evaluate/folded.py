"""A fold result indexed by chain digits, and the three ways to read it out.

:meth:`Folded.layout` transposes and pads it into a physical buffer when the target's slots line
up with the digit chain, :meth:`Folded.gather` decodes the target cell by cell otherwise, and
:func:`logical_read` reads it over whole logical axes without any physical buffer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Bcast, Digit, Mapping
from tcpdsl.evaluate.digits import DigitChain
from tcpdsl.numerics.placement import plan

Array = npt.NDArray[Any]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Folded:
    """A fold result indexed by chain digits: dimension ``k`` is digit ``dims[k]`` of the chain."""

    values: Array
    dims: tuple[tuple[str, int], ...]
    chain: DigitChain

    def layout(self, target: Mapping) -> Array | None:
        """The physical buffer over ``target`` by transposing and padding, or None when a slot of
        ``target`` does not line up with the chain (then :meth:`gather` decodes cell by cell).

        Each slot of ``target`` becomes one axis: a digit slot is the product of the chain digits
        it spans (a digit the result lacks, being replicated, is broadcast), a broadcast slot
        repeats, a pure padding slot holds only its first cell; live counts are then padded with
        zeros to the slots' extents.
        """
        slots = target.slots()
        entries: list[tuple[str, int] | int] = []  # a chain digit, or the size of a new axis
        groups: list[int] = []
        for slot in reversed(slots):
            live = slot.live
            if isinstance(live, Digit):
                if slot.shared is not None or live.axis not in self.chain.bounds:
                    return None
                span = self.chain.cover(live)
                if math.prod(self.chain.radix(live.axis, j) for j in span) != live.count:
                    return None
                entries.extend((live.axis, j) for j in reversed(span))
                groups.append(len(span))
            elif isinstance(live, Bcast):
                entries.append(live.c)
                groups.append(1)
            elif live is None:
                entries.append(1)
                groups.append(1)
            else:
                return None
        position = {digit: k for k, digit in enumerate(self.dims)}
        wanted = [position[e] for e in entries if isinstance(e, tuple) and e in position]
        if len(set(wanted)) != len(wanted):
            return None
        # Digits the target does not address are read at 0 (docs/runtime.md §3.5 moves cells by index).
        base = self.values[tuple(slice(None) if k in wanted else 0 for k in range(len(self.dims)))]
        kept = sorted(wanted)
        base = base.transpose([kept.index(k) for k in wanted])
        shape = [1 if isinstance(e, int) or e not in position else base.shape[wanted.index(position[e])]
                 for e in entries]
        full = [e if isinstance(e, int) else self.chain.radix(*e) for e in entries]
        block = np.broadcast_to(base.reshape(shape), full)
        counts: list[int] = []
        cursor = 0
        for size in groups:
            counts.append(math.prod(full[cursor:cursor + size]))
            cursor += size
        block = block.reshape(counts)
        # Without padding every cell is written below, so the buffer need not be zeroed first.
        make = np.zeros if any(slot.padded for slot in slots) else np.empty
        out = make([slot.extent for slot in reversed(slots)], dtype=self.values.dtype)
        out[tuple(slice(0, 1) if slot.live is None else slice(0, slot.count) for slot in reversed(slots))] = block
        return out.reshape(-1)

    def gather(self, target: Mapping, prefix: Mapping | None = None) -> Array:
        """The physical buffer over ``target`` (or over ``[prefix, target]``): each live cell takes
        the value at its coordinates.

        With a ``prefix`` the two factors are decoded separately and only live prefix rows are
        filled, so a mostly padded ``[Chip, Cluster, Slice]`` costs nothing; the coordinates of the
        two factors add, and a cell is live when it is live in both.
        """
        cells = plan(target)
        rows = np.zeros(1, dtype=np.int64)
        row_coords: dict[str, IntArray] = {}
        if prefix is not None:
            head = plan(prefix)
            rows = np.flatnonzero(head.live)
            row_coords = {name: values[rows] for name, values in head.coords.items()}
        live = cells.live
        width = int(np.count_nonzero(live))
        index: list[IntArray] = []
        for sym, j in self.dims:
            coord = np.zeros((rows.size, width), dtype=np.int64)
            if sym in cells.coords:
                coord += cells.coords[sym][live][None, :]
            if sym in row_coords:
                coord += row_coords[sym][:, None]
            index.append((coord // self.chain.bounds[sym][j]) % self.chain.radix(sym, j))
        height = 1 if prefix is None else prefix.size
        out = np.zeros((height, cells.size), dtype=self.values.dtype)
        block = np.zeros((rows.size, cells.size), dtype=self.values.dtype)
        block[:, live] = self.values[tuple(index)] if index else self.values
        out[rows] = block
        return out.reshape(-1)


@dataclass(frozen=True)
class LogicalRead:
    """How a fold's array becomes the logical result: an index, a transpose, a reshape and a
    broadcast, all fixed by the types, so a plan computes it once (docs/runtime.md §3.4)."""

    index: tuple[slice | int, ...]
    order: tuple[int, ...]
    shape: tuple[int, ...]
    full: tuple[int, ...]
    counts: tuple[int, ...]

    def apply(self, values: Array) -> Array:
        block = values[self.index].transpose(self.order).reshape(self.shape)
        if self.shape != self.full:
            block = np.broadcast_to(block, self.full)
        out = block.reshape(self.counts)
        return out if out.flags.writeable else out.copy()


def logical_read(dims: tuple[tuple[str, int], ...], chain: DigitChain, terms: tuple[Digit, ...]) -> LogicalRead:
    """How to read a fold over the chain digits ``dims`` with one dimension per term: index ``j``
    of term ``t`` is coordinate ``j * t.stride`` of its axis
    (:func:`~tcpdsl.algebra.terms.logical_terms`).

    Digits no term holds are read at 0 and chain digits the result lacks are replicated, as
    :meth:`Folded.layout` and :meth:`Folded.gather` do, so this is their buffer read back through
    the result's mapping. The terms must line up with the chain (:func:`lines_up`). When the fold
    kept each axis's digits together and outermost first (:func:`plan_fold` without
    ``laid_out_as``), the result is a view of the fold.
    """
    spans = [_span(chain, term) for term in terms]
    used = {(term.axis, j) for term, span in zip(terms, spans) for j in span}
    kept = [digit for digit in dims if digit in used]
    index = tuple(slice(None) if digit in used else 0 for digit in dims)
    order: list[int] = []
    shape: list[int] = []
    full: list[int] = []
    for term, span in zip(terms, spans):
        for j in reversed(span):
            digit = (term.axis, j)
            radix = chain.radix(*digit)
            if digit in kept:
                order.append(kept.index(digit))
            shape.append(radix if digit in kept else 1)
            full.append(radix)
        if not span:  # an axis the chain does not cut (of size 1, or replicated whole)
            shape.append(1)
            full.append(term.count)
    return LogicalRead(index, tuple(order), tuple(shape), tuple(full), tuple(term.count for term in terms))


def _span(chain: DigitChain, term: Digit) -> list[int]:
    """The chain digits of ``term``, innermost first."""
    bounds = chain.bounds.get(term.axis)
    if bounds is None:
        return []
    return [j for j in range(len(bounds) - 1) if term.stride <= bounds[j] < term.top]


def lines_up(chain: DigitChain, terms: tuple[Digit, ...]) -> bool:
    """Whether every term starts and ends on a digit boundary of the chain (or its axis is one the
    chain does not cut), so that :func:`logical_read` can read it."""
    for term in terms:
        bounds = chain.bounds.get(term.axis)
        if bounds is not None and (term.stride not in bounds or term.top not in bounds):
            return False
    return True
