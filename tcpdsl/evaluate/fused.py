"""The fused evaluator: the fold of docs/runtime.md §3.4 as one BLAS-backed contraction, then the lane relayout.

Every axis is cut into one chain of digits that refines the digit boundaries of the two operand
mappings, the pre-reduce mapping and the output mapping. Each logical operand (zero-extended to
its chain) is reshaped into those digits and a single ``einsum`` sums the contracted ones:

* a digit the output keeps and an operand carries is an einsum output index;
* a digit the output keeps and no operand carries replicates (the final gather ignores it);
* a contracted digit no operand carries multiplies the sum by its live count;
* an operand digit the iteration does not visit, or an iteration digit the operand lacks, reads
  the operand at digit 0 (the operand is reused);
* padding is never iterated: chain digits only span live counts.

When the digits do not nest (shared or composite slots, or one mapping carrying a digit twice) a
generic path walks every live pre-reduce cell with restricted reads instead. Floats accumulate in
f32; integers accumulate exactly and wrap to i32 once, which equals i32 wrap-around arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Mapping, StructKey, Digit, held, logical_terms, slot_strides
from tcpdsl.evaluate.digits import match_broadcasts, read
from tcpdsl.evaluate.fold_plan import FoldPlan, TermCut, accumulator_dtype, plan_fold, term_cut
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate import memory
from tcpdsl.evaluate.memory import What, check_fits, too_large
from tcpdsl.evaluate.folded import Folded, LogicalRead, lines_up, logical_read
from tcpdsl.evaluate import vector_fused
from tcpdsl.evaluate.stream import fused_logical
from tcpdsl.numerics.flow import Buffer, Flow, Scattered
from tcpdsl.numerics.kept import carry, freeze
from tcpdsl.numerics.moves import lay_out, relabel, window, written as written_values
from tcpdsl.numerics.chain import Chain, Operand
from tcpdsl.numerics.vector_chain import VectorChain
from tcpdsl.numerics.placement import check_shape, logical_index, plan
from tcpdsl.numerics.term_arrays import coordinate_array
from tcpdsl.numerics.transfer import to_physical, to_terms
from tcpdsl.numerics.scalars import cast
from tcpdsl.numerics.scatter_ops import scattered_values
from tcpdsl.numerics.windows import box_values, box_written
from tcpdsl.verify.stage import Stage

Array = npt.NDArray[Any]

_GENERIC_CHUNK: Final = 1 << 20


def fold_digits(lhs: Array, lhs_axes: tuple[str, ...], lhs_map: Mapping, rhs: Array, rhs_axes: tuple[str, ...],
                rhs_map: Mapping, pre_reduce: Mapping, out: Mapping, acc: str,
                laid_out_as: Mapping | None = None) -> Folded | None:
    """The fused fold as a digit-indexed result, or None when the digits do not nest.

    The result's dimensions follow the digit order of ``laid_out_as`` (default ``out``), the
    mapping it will be laid out through.
    """
    accumulator_dtype(acc)
    check_shape(lhs, lhs_axes, lhs_map)
    check_shape(rhs, rhs_axes, rhs_map)
    found = plan_fold(lhs_axes, lhs.shape, StructKey(lhs_map), rhs_axes, rhs.shape, StructKey(rhs_map),
                      StructKey(pre_reduce), StructKey(out), acc, StructKey(out if laid_out_as is None else laid_out_as))
    return None if found is None else found.run(lhs, rhs)


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
    """The fold of docs/runtime.md §3.4, physical over ``out`` (padding cells 0), in the accumulator dtype.

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
    """Move cells by logical index (docs/runtime.md §3.5): each live target cell copies the source cell with
    its coordinates; target padding is 0."""
    cells = plan(target)
    position, live = read(source, dict(cells.coords), cells.size)
    ok = cells.live & live
    out = np.zeros(cells.size, dtype=physical.dtype)
    out[ok] = physical[position[ok]]
    return out


@dataclass(frozen=True)
class _ChainPlan:
    """What the fused evaluator derives from a chain's types: the stage mappings and the fold plan."""

    fold: FoldPlan | None
    pre_reduce: Mapping
    out: Mapping
    target: Mapping
    terms: tuple[Digit, ...]  # the dimensions of the logical result
    cells: int  # how many cells they hold
    read: LogicalRead | None  # how the fold reads straight into the logical result, when it can
    # How the fold reads each operand's own array (no coordinate array), when it can.
    held: tuple[TermCut, TermCut] | None


def _held_cuts(fold: FoldPlan, stream: Operand, weight: Operand) -> tuple[TermCut, TermCut] | None:
    if stream.given is not None or weight.given is not None or stream.tensor is None or weight.tensor is None:
        return None
    left = term_cut(fold.left, stream.axes, fold.chain, stream.tensor.terms)
    right = term_cut(fold.right, weight.axes, fold.chain, weight.tensor.terms)
    return None if left is None or right is None else (left, right)


_CHAIN_PLANS_LIMIT: Final = 256
_chain_plans: dict[tuple[object, ...], _ChainPlan] = {}
# ids of the layouts -> the layouts, the operand forms met with them, and their plan.
_plans_by_identity: dict[tuple[object, ...], tuple[tuple[object, ...], tuple[object, ...], _ChainPlan]] = {}


def _chain_plan(chain: Chain, logical: bool) -> _ChainPlan:
    """The plan of ``chain``, cached on its mappings, operand axes and shapes: a kernel called
    again with data of the same types plans nothing."""
    stream, weight = chain.stream, chain.weight
    layouts = (stream.mapping, weight.mapping, chain.chip, chain.cluster, chain.slice, chain.lane, chain.outer_time,
               chain.outer_packet, chain.packet_out, chain.time_out, chain.lane_time, chain.lane_packet)
    # An operand is an array given by axis coordinate (keyed by its shape), or a tensor's own array
    # (keyed by its terms, which fix its coordinate shape and whether the fold can read it: _held_cuts).
    forms = (stream.given.shape if stream.given is not None else None if stream.tensor is None else stream.tensor.terms,
             weight.given.shape if weight.given is not None else None if weight.tensor is None else weight.tensor.terms)
    # A kernel called again passes the very same mapping objects: found by their identity first, which
    # costs less than structural keys (the objects are kept, so their ids stay theirs). The forms are
    # compared by value: a stream computed afresh on every call holds equal terms in a tuple of its own.
    fast = (logical, chain.acc, stream.axes, weight.axes, *map(id, layouts))
    seen = _plans_by_identity.get(fast)
    if seen is not None and seen[0] == layouts and seen[1] == forms:  # identical objects compare equal at once
        return seen[2]
    key = (logical, chain.acc, stream.axes, weight.axes, *forms, *(None if m is None else StructKey(m) for m in layouts))
    found = _chain_plans.get(key)
    if found is not None:
        if len(_plans_by_identity) < _CHAIN_PLANS_LIMIT:
            _plans_by_identity[fast] = (layouts, forms, found)
        return found
    accumulator_dtype(chain.acc)
    check_shape(stream.values, stream.axes, stream.mapping)
    check_shape(weight.values, weight.axes, weight.mapping)
    pre_reduce, out, target = chain.pre_reduce(), chain.fold_mapping(), chain.result_mapping()
    if chain.stage != Stage.CONTRACT_LANE:
        out = target
    fold = plan_fold(stream.axes, stream.shape, StructKey(stream.mapping), weight.axes, weight.shape,
                     StructKey(weight.mapping), StructKey(pre_reduce), StructKey(out), chain.acc,
                     None if logical else StructKey(target))
    terms = logical_terms(target)
    direct = fold is not None and not held(target).irregular and lines_up(fold.chain, terms)
    read = logical_read(fold.keep, fold.chain, terms) if fold is not None and direct else None
    found = _ChainPlan(fold, pre_reduce, out, target, terms, math.prod(t.count for t in terms), read,
                       None if fold is None else _held_cuts(fold, stream, weight))
    if len(_chain_plans) >= _CHAIN_PLANS_LIMIT:
        _chain_plans.clear()
        _plans_by_identity.clear()
    _chain_plans[key] = found
    _plans_by_identity[fast] = (layouts, forms, found)
    return found


def _fold(found: _ChainPlan, fold: FoldPlan, chain: Chain) -> Folded:
    """The fold, reading both operands' own arrays when the plan can (else their coordinate arrays)."""
    if found.held is not None:
        left, right = found.held
        return fold.run_cut(left.apply(chain.stream.widened_held()), right.apply(chain.weight.widened_held()))
    return fold.run(chain.stream.widened(), chain.weight.widened())


# The result is the largest array the fold builds: it is refused when it cannot fit (docs/runtime.md §3.11), as
# Refusing does, written out here: a small result (most) reads no free memory, and its guard then costs no call.
def _result_what(chain: Chain, cells: int, where: Callable[[], str]) -> What:
    return lambda: f"a result of {cells} cells {where()} in {chain.acc}"


def _check_result(chain: Chain, cells: int, where: Callable[[], str]) -> None:
    if cells * 4 >= memory.CHECKED_FROM:
        check_fits(chain.stage, _result_what(chain, cells, where), cells * 4, "fused")


def _result_refused(chain: Chain, cells: int, where: Callable[[], str]) -> LayoutError:
    """The refusal of a result numpy could not allocate after all."""
    return too_large(chain.stage, _result_what(chain, cells, where), cells * 4, "fused", None)


class FusedEvaluator:
    """The default evaluator: one fused contraction, then the lane relayout."""

    name = "fused"

    def run(self, chain: Chain) -> Array:
        found = _chain_plan(chain, logical=False)
        cells = found.target.size
        _check_result(chain, cells, lambda: f"over {found.target}")
        try:
            return self._run(chain, found)
        except MemoryError:
            raise _result_refused(chain, cells, lambda: f"over {found.target}") from None

    def _run(self, chain: Chain, found: _ChainPlan) -> Array:
        stream, weight = chain.stream, chain.weight
        if found.fold is not None:
            folded = _fold(found, found.fold, chain)
            laid = folded.layout(found.target)
            return laid if laid is not None else folded.gather(chain.part(), chain.prefix)
        physical = fold_generic(stream.widened(), stream.axes, stream.mapping, weight.widened(), weight.axes,
                                weight.mapping, found.pre_reduce, found.out, chain.acc)
        return physical if found.target is found.out else relayout(physical, found.out, found.target)

    def logical(self, chain: Chain) -> Array:
        """The result over the terms its mapping holds, computed straight into that array when the
        terms line up with the fold's digits; otherwise read back from :meth:`run`."""
        found = _chain_plan(chain, logical=True)
        if found.fold is None or found.read is None:
            return to_terms(self.run(chain), found.target, found.terms)
        cells = found.cells
        _check_result(chain, cells, lambda: "over its logical terms")
        try:
            return found.read.apply(_fold(found, found.fold, chain).values)
        except MemoryError:
            raise _result_refused(chain, cells, lambda: "over its logical terms") from None

    def flow_logical(self, flow: Flow) -> Array:
        """A stream's values over its root's terms (docs/runtime.md §4)."""
        return fused_logical(flow, self.name)

    def flow_buffer(self, flow: Flow) -> Buffer:
        """A stream's values laid out on its last mapping with its poison mask (Top padding)."""
        root = flow.root
        return lay_out(fused_logical(flow, self.name), root.terms, flow.mapping, flow.dtype)

    def flow_read(self, flow: Flow, mapping: Mapping, terms: tuple[Digit, ...]) -> Array:
        """A stream's last buffer read through ``mapping`` over ``terms`` (``reshape``), as a planned gather."""
        root = flow.root
        return relabel(fused_logical(flow, self.name), root.terms, flow.mapping, mapping, terms, flow.dtype)

    def flow_window(self, parent: Flow, element: int, offset: int, mapping: Mapping, terms: tuple[Digit, ...],
                    dtype: str) -> Array:
        """The values over ``terms`` of a window over ``mapping`` of ``parent`` (``element`` cells per slice),
        ``offset`` cells in: a slice of the parent's values when the window is a box of whole slots, else
        read through the parent laid out."""
        values = fused_logical(parent, self.name)
        found = box_values(values, parent.root.terms, parent.mapping, element, offset, mapping, terms)
        if found is not None:
            return found
        return to_terms(window(self.flow_buffer(parent), element, offset, mapping, dtype)[0], mapping, terms)

    def flow_written(self, parent: Flow, written: Flow, element: int, offset: int) -> Array:
        """``parent``'s values over its root's terms after ``written`` is written into its window
        ``offset`` cells in: the parent's values with the written cells set, as a slice when the window is
        a box of whole slots, else as a planned scatter."""
        values, new = fused_logical(parent, self.name), fused_logical(written, self.name)
        found = box_written(values, parent.root.terms, parent.mapping, new, written.root.terms, written.mapping,
                            element, offset)
        if found is not None:
            return found
        return written_values(values, parent.root.terms, parent.mapping, new, written.root.terms, written.mapping,
                              element, offset, parent.dtype)

    def flow_scattered(self, source: Scattered) -> Array:
        """The scattered tensor's values over its root's terms: a copy of the tensor's with the data's rows set,
        frozen, and what was kept widened from the tensor before carried to it with those rows redone (a KV
        cache written a row per step)."""
        out, part = scattered_values(source, lambda flow: fused_logical(flow, self.name))
        freeze(out)
        if part is not None:
            carry(fused_logical(source.parent, self.name), out, part)  # the parent's values, as just read
        return out

    def flow_physical(self, flow: Flow) -> Array:
        """A stream's values laid out on its last mapping, padding 0."""
        values = fused_logical(flow, self.name)
        held, axes = coordinate_array(values, flow.root.terms)
        return to_physical(held, axes, flow.mapping, 0)

    def vector_logical(self, chain: VectorChain) -> Array:
        """A vector pass's values over its last layout's logical terms (docs/runtime.md §3.9)."""
        return vector_fused.logical(chain, self.name)

    def vector_physical(self, chain: VectorChain) -> Array:
        """A vector pass's values laid out on its last layout, padding 0."""
        return vector_fused.physical(chain, self.name)
