"""The fused evaluator: the fold of engine §3.4 as one BLAS-backed contraction, then the lane relayout.

Every axis is cut into one chain of digits that refines the digit boundaries of the two operand
mappings, the pre-reduce mapping and the output mapping. Each logical operand (zero-extended to
its chain) is reshaped into those digits and a single ``einsum`` sums the contracted ones:

* a digit the output keeps and an operand carries is an einsum output index;
* a digit the output keeps and no operand carries replicates (the final gather ignores it);
* a contracted digit no operand carries multiplies the sum by its live count;
* an operand digit the iteration does not visit, or an iteration digit the operand lacks, reads
  the operand at digit 0 (the operand is reused);
* padding is never iterated: chain digits only span live counts.

When the digits do not nest (ragged or composite slots, or one mapping carrying a digit twice) a
generic path walks every live pre-reduce cell with restricted reads instead. Floats accumulate in
f32; integers accumulate exactly and wrap to i32 once, which equals i32 wrap-around arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra.nodes import Mapping
from tcpdsl.algebra.slots import Bcast, Digit, slot_strides
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate.digits import EVALUATE_STAGE, DigitChain, covered, match_broadcasts, read, refine
from tcpdsl.tensors.placement import check_shape, logical_index, plan
from tcpdsl.tensors.chain import Chain
from tcpdsl.tensors.scalars import cast, widen

Array = npt.NDArray[Any]
IntArray = npt.NDArray[np.int64]

_EXACT_F64: Final = float(2**53)
_GENERIC_CHUNK: Final = 1 << 20


def accumulator_dtype(acc: str) -> np.dtype[Any]:
    if acc == "f32":
        return np.dtype(np.float32)
    if acc == "i32":
        return np.dtype(np.int32)
    raise LayoutError(EVALUATE_STAGE, "UnknownAccumulator", f"accumulator {acc!r} is neither f32 nor i32")


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
                if live.rag is not None or live.sym not in self.chain.bounds:
                    return None
                span = self.chain.cover(live)
                if math.prod(self.chain.radix(live.sym, j) for j in span) != live.count:
                    return None
                entries.extend((live.sym, j) for j in reversed(span))
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
        # Digits the target does not address are read at 0 (engine §3.5 moves cells by index).
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


def _prepare(values: Array, axes: tuple[str, ...], carried: set[tuple[str, int]], chain: DigitChain,
             visited: set[tuple[str, int]]) -> tuple[Array, list[tuple[str, int]]]:
    """``values`` zero-extended per axis to its chain, split into chain digits, and read at 0 along
    every digit the operand does not both carry and get visited on."""
    array = values
    pad: list[tuple[int, int]] = []
    take: list[slice] = []
    for name, n in zip(axes, array.shape, strict=True):
        top = chain.bounds[name][-1] if name in chain.bounds else 1
        pad.append((0, max(0, top - n)))
        take.append(slice(0, top))
    array = array[tuple(take)]
    if any(after for _, after in pad):
        array = np.pad(array, pad)
    shape: list[int] = []
    index: list[slice | int] = []
    subs: list[tuple[str, int]] = []
    for name in axes:
        if name not in chain.bounds:
            shape.append(1)
            index.append(0)
            continue
        for j in reversed(range(chain.digits(name))):
            shape.append(chain.radix(name, j))
            if (name, j) in carried and (name, j) in visited:
                index.append(slice(None))
                subs.append((name, j))
            else:
                index.append(0)
    return array.reshape(shape)[tuple(index)], subs


def _contract(lhs: Array, lsubs: list[tuple[str, int]], rhs: Array, rsubs: list[tuple[str, int]],
              keep: list[tuple[str, int]], acc: str, terms: int) -> Array:
    ids = {digit: k for k, digit in enumerate(dict.fromkeys([*lsubs, *rsubs, *keep]))}

    def run(a: Array, b: Array) -> Array:
        result: Array = np.einsum(a, [ids[d] for d in lsubs], b, [ids[d] for d in rsubs],
                                  [ids[d] for d in keep], optimize=True)
        return result

    if acc == "f32":
        return np.asarray(run(lhs.astype(np.float32, copy=False), rhs.astype(np.float32, copy=False)), dtype=np.float32)
    # Exact integer sums: through f64 BLAS while every partial sum stays below 2**53, else int64
    # (exact modulo 2**64, hence modulo 2**32).
    bound = float(np.abs(lhs).max(initial=0)) * float(np.abs(rhs).max(initial=0)) * max(terms, 1)
    if bound < _EXACT_F64:
        return np.asarray(run(lhs.astype(np.float64), rhs.astype(np.float64)))
    return np.asarray(run(lhs.astype(np.int64), rhs.astype(np.int64)))


def fold_digits(lhs: Array, lhs_axes: tuple[str, ...], lhs_map: Mapping, rhs: Array, rhs_axes: tuple[str, ...],
                rhs_map: Mapping, pre_reduce: Mapping, out: Mapping, acc: str,
                laid_out_as: Mapping | None = None) -> Folded | None:
    """The fused fold as a digit-indexed result, or None when the digits do not nest.

    The result's dimensions follow the digit order of ``laid_out_as`` (default ``out``), the
    mapping it will be laid out through.
    """
    dtype = accumulator_dtype(acc)
    check_shape(lhs, lhs_axes, lhs_map)
    check_shape(rhs, rhs_axes, rhs_map)
    slot_lists = [lhs_map.slots(), rhs_map.slots(), pre_reduce.slots(), out.slots()]
    chain = refine(slot_lists)
    if chain is None:
        return None
    carried_l, carried_r, visited, kept = (covered(chain, slots) for slots in slot_lists)
    if carried_l is None or carried_r is None or visited is None or kept is None or not kept <= visited:
        return None
    pre_slots, out_slots = slot_lists[2], slot_lists[3]
    paired = set(match_broadcasts(pre_slots, out_slots).values())
    multiplicity = math.prod(s.count for i, s in enumerate(pre_slots) if isinstance(s.live, Bcast) and i not in paired)
    left, lsubs = _prepare(lhs, lhs_axes, carried_l, chain, visited)
    right, rsubs = _prepare(rhs, rhs_axes, carried_r, chain, visited)
    present = set(lsubs) | set(rsubs)
    for digit in visited - kept - present:
        multiplicity *= chain.radix(*digit)
    # Output digits in the order the output mapping lays them out (outermost first), so the
    # final layout is a near-contiguous copy.
    layout_slots = out_slots if laid_out_as is None else laid_out_as.slots()
    order = [(live.sym, j) for slot in reversed(layout_slots)
             if isinstance(live := slot.live, Digit) and live.sym in chain.bounds
             for j in reversed(chain.cover(live))]
    order += sorted(kept - set(order))
    keep = [d for d in dict.fromkeys(order) if d in present and d in kept]
    terms = math.prod(chain.radix(*d) for d in (visited - kept) & present)
    summed = _contract(left, lsubs, right, rsubs, keep, acc, terms)
    if acc == "f32":
        values = summed * np.float32(multiplicity) if multiplicity != 1 else summed
    else:
        values = cast(np.asarray(summed).astype(np.int64) * multiplicity, "i32")
    return Folded(np.asarray(values, dtype=dtype), tuple(keep), chain)


def fold_generic(lhs: Array, lhs_axes: tuple[str, ...], lhs_map: Mapping, rhs: Array, rhs_axes: tuple[str, ...],
                 rhs_map: Mapping, pre_reduce: Mapping, out: Mapping, acc: str) -> Array:
    """The fold by definition: every live pre-reduce cell, read through restricted reads, added in
    position order into the output cell its coordinates select. Physical over ``out``."""
    dtype = accumulator_dtype(acc)
    check_shape(lhs, lhs_axes, lhs_map)
    check_shape(rhs, rhs_axes, rhs_map)
    work = np.float32 if acc == "f32" else np.int64
    lhs_phys = _physical(lhs, lhs_axes, lhs_map, work)
    rhs_phys = _physical(rhs, rhs_axes, rhs_map, work)
    pre_cells = plan(pre_reduce)
    out_slots = out.slots()
    pre_slots = pre_reduce.slots()
    pairing = match_broadcasts(pre_slots, out_slots)
    pre_strides = slot_strides(pre_slots)
    total = np.zeros(out.size, dtype=work)
    positions = np.flatnonzero(pre_cells.live)
    for start in range(0, positions.size, _GENERIC_CHUNK):
        chunk = positions[start:start + _GENERIC_CHUNK]
        coords = {name: values[chunk] for name, values in pre_cells.coords.items()}
        broadcast = {j: (chunk // pre_strides[i]) % pre_slots[i].extent for j, i in pairing.items()}
        lpos, lok = read(lhs_map, coords, chunk.size)
        rpos, rok = read(rhs_map, coords, chunk.size)
        opos, ook = read(out, coords, chunk.size, broadcast)
        ok = lok & rok & ook
        np.add.at(total, opos[ok], lhs_phys[lpos[ok]] * rhs_phys[rpos[ok]])
    cells = plan(out)
    # Fill every replica of a broadcast the output keeps from the replica the sum went into.
    source, _ = read(out, dict(cells.coords), cells.size,
                     {j: np.zeros(cells.size, dtype=np.int64) for j in pairing})
    result = np.where(cells.live, total[source], 0)
    if acc == "f32":
        return result.astype(dtype)
    return cast(result, "i32")


def _physical(values: Array, axes: tuple[str, ...], mapping: Mapping, work: type[np.generic]) -> Array:
    cells = plan(mapping)
    out = np.zeros(cells.size, dtype=work)
    out[cells.live] = np.asarray(values)[logical_index(cells, axes, cells.live)]
    return out


def fold(lhs: npt.ArrayLike, lhs_axes: tuple[str, ...], lhs_map: Mapping, rhs: npt.ArrayLike,
         rhs_axes: tuple[str, ...], rhs_map: Mapping, pre_reduce: Mapping, out: Mapping, acc: str) -> Array:
    """The fold of engine §3.4, physical over ``out`` (padding cells 0), in the accumulator dtype.

    ``lhs`` and ``rhs`` are logical arrays already widened to the accumulator (one dimension per
    name of their axes); the fold itself never rounds before the final f32 result or i32 wrap.
    """
    left, right = np.asarray(lhs), np.asarray(rhs)
    folded = fold_digits(left, lhs_axes, lhs_map, right, rhs_axes, rhs_map, pre_reduce, out, acc)
    if folded is None:
        return fold_generic(left, lhs_axes, lhs_map, right, rhs_axes, rhs_map, pre_reduce, out, acc)
    laid = folded.layout(out)
    return laid if laid is not None else folded.gather(out)


def relayout(physical: Array, source: Mapping, target: Mapping) -> Array:
    """Move cells by logical index (engine §3.5): each live target cell copies the source cell with
    its coordinates; target padding is 0."""
    cells = plan(target)
    position, live = read(source, dict(cells.coords), cells.size)
    ok = cells.live & live
    out = np.zeros(cells.size, dtype=physical.dtype)
    out[ok] = physical[position[ok]]
    return out


class FusedEvaluator:
    """The default evaluator: one fused contraction, then the lane relayout."""

    name = "fused"

    def run(self, chain: Chain) -> Array:
        stream, weight = chain.stream, chain.weight
        lhs = widen(stream.values, stream.dtype)
        rhs = widen(weight.values, weight.dtype)
        pre_reduce, out, target = chain.pre_reduce(), chain.fold_mapping(), chain.result_mapping()
        folded = fold_digits(lhs, stream.axes, stream.mapping, rhs, weight.axes, weight.mapping,
                             pre_reduce, out, chain.acc, laid_out_as=target)
        if folded is not None:
            laid = folded.layout(target)
            return laid if laid is not None else folded.gather(chain.part(), chain.prefix)
        physical = fold_generic(lhs, stream.axes, stream.mapping, rhs, weight.axes, weight.mapping,
                                pre_reduce, out, chain.acc)
        return physical if target is out else relayout(physical, out, target)
