"""Planning the fused fold: what depends only on the mappings, the operand axes and shapes.

Planning walks slots and digit chains in Python; running a plan is one einsum, or the batched
matrix product that einsum would reach (:class:`Matmul`), so a plan is computed once per kernel
type (:func:`plan_fold` caches it) and reused on every call. How the digits are chosen is
described in :mod:`tcpdsl.evaluate.fused`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Bcast, Digit, StructKey
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate.digits import EVALUATE_STAGE, DigitChain, covered, match_broadcasts, refine
from tcpdsl.evaluate.folded import Folded
from tcpdsl.numerics.scalars import cast

Array = npt.NDArray[Any]

_EXACT_F64: Final = float(2**53)
_SMALL_PRODUCT: Final = 1 << 15  # cells of the product space summed without the optimized einsum


def accumulator_dtype(acc: str) -> np.dtype[Any]:
    if acc == "f32":
        return np.dtype(np.float32)
    if acc == "i32":
        return np.dtype(np.int32)
    raise LayoutError(EVALUATE_STAGE, "UnknownAccumulator", f"accumulator {acc!r} is neither f32 nor i32")


DigitId = tuple[str, int]


@dataclass(frozen=True)
class _Cut:
    """How one logical operand becomes an einsum input: cut or zero-extended per axis to its chain,
    split into chain digits, and read at 0 along every digit the operand does not both carry and
    get visited on."""

    take: tuple[slice, ...]
    pad: tuple[tuple[int, int], ...] | None
    shape: tuple[int, ...]
    index: tuple[slice | int, ...]
    subs: tuple[DigitId, ...]

    def apply(self, values: Array) -> Array:
        array = values[self.take]
        if self.pad is not None:
            array = np.pad(array, self.pad)
        return array.reshape(self.shape)[self.index]


def _cut(axes: tuple[str, ...], shape: tuple[int, ...], carried: set[DigitId], chain: DigitChain,
         visited: set[DigitId]) -> _Cut:
    pad: list[tuple[int, int]] = []
    take: list[slice] = []
    for name, n in zip(axes, shape, strict=True):
        top = chain.bounds[name][-1] if name in chain.bounds else 1
        pad.append((0, max(0, top - n)))
        take.append(slice(0, top))
    digit_shape: list[int] = []
    index: list[slice | int] = []
    subs: list[DigitId] = []
    for name in axes:
        if name not in chain.bounds:
            digit_shape.append(1)
            index.append(0)
            continue
        for j in reversed(range(chain.digits(name))):
            digit_shape.append(chain.radix(name, j))
            if (name, j) in carried and (name, j) in visited:
                index.append(slice(None))
                subs.append((name, j))
            else:
                index.append(0)
    padded = tuple(pad) if any(after for _, after in pad) else None
    return _Cut(tuple(take), padded, tuple(digit_shape), tuple(index), tuple(subs))


@dataclass(frozen=True)
class TermCut:
    """A :class:`_Cut` read straight from a tensor's own array (one dimension per term), skipping the
    coordinate array: per term, the entries the cut visits (a slice, or an int where it visits one),
    then the split into the visited digits. It gives the very array ``_Cut.apply`` gives."""

    index: tuple[slice | int, ...] | None  # None: every entry, as held
    shape: tuple[int, ...]

    def apply(self, held: Array) -> Array:
        return (held if self.index is None else held[self.index]).reshape(self.shape)


def term_cut(cut: _Cut, axes: tuple[str, ...], chain: DigitChain, terms: tuple[Digit, ...]) -> TermCut | None:
    """The :class:`TermCut` of ``cut`` for an operand held as one term per axis, or None when the cut
    reads a coordinate the terms do not hold (then it reads the coordinate array's zeros) or picks
    entries no slice can."""
    if len(terms) != len(axes) or tuple(t.axis for t in terms) != axes or any(t.live for t in terms):
        return None
    index: list[slice | int] = []
    shape: list[int] = []
    k = 0
    for name, term in zip(axes, terms):
        strides = list(reversed(chain.bounds[name][:-1])) if name in chain.bounds else [1]
        coords, radices = [0], []
        for stride, radix, pick in zip(strides, cut.shape[k:], cut.index[k:]):
            if pick == slice(None):
                coords = [c + d * stride for c in coords for d in range(radix)]
                radices.append(radix)
        k += len(strides)
        held = min(term.top, term.n)
        if any(c % term.stride or c >= held for c in coords):
            return None
        entries = [c // term.stride for c in coords]
        step = entries[1] - entries[0] if len(entries) > 1 else 1
        if not radices:
            index.append(entries[0])
        elif step > 0 and entries == list(range(entries[0], entries[-1] + 1, step)):
            index.append(slice(entries[0], entries[-1] + 1, step))
        else:
            return None
        shape.extend(radices)
    every = all(isinstance(i, slice) and i == slice(0, t.count, 1) for i, t in zip(index, terms))
    return TermCut(None if every else tuple(index), tuple(shape))


@dataclass(frozen=True)
class _Batched:
    """The shapes of a :class:`Matmul` with its batch digits kept apart, and the dimension pairs
    (of each transposed operand) that must merge as a view for those shapes to be views."""

    rhs_shape: tuple[int, ...]
    lhs_shape: tuple[int, ...]
    rhs_joins: tuple[int, ...]  # dimension i merges with i + 1
    lhs_joins: tuple[int, ...]

    def fits(self, a: Array, b: Array) -> bool:
        return _merge(a, self.rhs_joins) and _merge(b, self.lhs_joins)


def _merge(array: Array, joins: tuple[int, ...]) -> bool:
    """Whether each dimension ``i`` of ``joins`` merges with dimension ``i + 1`` without a copy."""
    shape, strides = array.shape, array.strides
    return all(strides[i] == shape[i + 1] * strides[i + 1] for i in joins)


def _joins(groups: list[list[int]]) -> tuple[int, ...]:
    """The dimensions that merge with the next one when consecutive dimensions form ``groups``."""
    out: list[int] = []
    start = 0
    for group in groups:
        out.extend(range(start, start + len(group) - 1))
        start += len(group)
    return tuple(out)


@dataclass(frozen=True)
class Matmul:
    """A pairwise contraction as one batched matrix product, planned from the subscripts.

    It is the product numpy's optimized einsum reaches for two operands, found once instead of on
    every call: the weight side (``rhs``) becomes ``[batch, kept, summed]`` and the stream side
    ``[batch, summed, kept]``, each by a transpose and a reshape (a view where the digits merge, a
    copy as einsum makes otherwise), and the product is split and transposed into the kept order.
    The same arrays reach the same ``matmul``, so the bits are einsum's (docs/runtime.md §3.4).

    A product of matrices (both sides keep a digit) over several batch digits runs over those
    digits as they lie (``batched``) whenever its kept and summed digits merge as a view: batch
    digits that do not merge would otherwise copy the whole operand, while each matrix reaches BLAS
    in place. A matrix held row by row reaches the kernel the copies would, with the same bits; one held
    column by column reaches BLAS's kernel for a transposed matrix, which for small matrices may add in
    another order (tests/test_fast_paths.py pins both, docs/runtime.md §3.4).

    A stream that is the same matrix for every batch (replicated over the batch digits: stride 0, as a
    vector laid on every slice against a weight split over the slices) meets the weights in one product,
    the batch digits merged into the kept ones where they merge as a view: the shape of ``W @ x``, which
    BLAS spreads over its threads where a loop of small products would not (docs/runtime.md §3.4). Each
    sum is still one BLAS product's, though not necessarily the batched loop's bits.
    """

    rhs_order: tuple[int, ...]
    rhs_shape: tuple[int, ...] | None
    lhs_order: tuple[int, ...]
    lhs_shape: tuple[int, ...] | None
    split: tuple[int, ...] | None  # the product's dimensions cut back into digits
    order: tuple[int, ...] | None  # then moved into the kept order
    batched: _Batched | None = None
    batch: bool = False  # the product has a batch dimension (the first of both sides)

    def apply(self, lhs: Array, rhs: Array) -> Array:
        a = rhs.transpose(self.rhs_order)
        b = lhs.transpose(self.lhs_order)
        batched = self.batched
        if batched is not None and batched.fits(a, b):
            a, b = a.reshape(batched.rhs_shape), b.reshape(batched.lhs_shape)
        else:
            if self.rhs_shape is not None:
                a = a.reshape(self.rhs_shape)
            if self.lhs_shape is not None:
                b = b.reshape(self.lhs_shape)
            if self.batch and b.strides[0] == 0 and a.strides[0] == a.shape[1] * a.strides[1]:
                # One stream for every batch, met in one product (see above).
                shape = (*a.shape[:2], b.shape[2])
                return self._arranged(np.matmul(a.reshape(-1, a.shape[2]), b[0]).reshape(shape))
        return self._arranged(np.matmul(a, b))

    def _arranged(self, product: Array) -> Array:
        """The product ``[batch, kept, kept]`` cut back into digits and moved into the kept order."""
        if self.split is not None:
            product = product.reshape(self.split)
        return product if self.order is None else product.transpose(self.order)


def plan_matmul(subscripts: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]],
                sizes: dict[int, int]) -> Matmul | None:
    """The :class:`Matmul` of an einsum over ``subscripts`` (left, right, kept) with these digit
    sizes, or None where einsum would do more than one product: a digit of size 1, a digit summed in
    one operand only, or nothing summed (a plain multiplication)."""
    lsubs, rsubs, keep = subscripts
    if any(sizes[d] == 1 for d in (*lsubs, *rsubs)) or len(set(lsubs)) < len(lsubs) or len(set(rsubs)) < len(rsubs):
        return None
    batch = [d for d in rsubs if d in lsubs and d in keep]
    summed = [d for d in rsubs if d in lsubs and d not in keep]
    rhs_kept = [d for d in rsubs if d not in lsubs and d in keep]
    lhs_kept = [d for d in lsubs if d not in rsubs and d in keep]
    if not summed or len(batch) + len(summed) + len(rhs_kept) < len(rsubs) \
            or len(batch) + len(summed) + len(lhs_kept) < len(lsubs):
        return None
    groups = [batch] if batch else []
    rhs_groups, lhs_groups, out_groups = [*groups, rhs_kept, summed], [*groups, summed, lhs_kept], \
        [*groups, rhs_kept, lhs_kept]

    def merged(parts: list[list[int]]) -> tuple[int, ...] | None:
        if all(len(part) == 1 for part in parts):
            return None
        return tuple(math.prod(sizes[d] for d in part) for part in parts)

    batched = None
    if len(batch) > 1 and rhs_kept and lhs_kept:
        # Only a product of matrices: a product with a vector side goes to gemv or dot, whose
        # summation order can depend on the strides.
        apart = [[d] for d in batch]
        rhs_apart, lhs_apart = [*apart, rhs_kept, summed], [*apart, summed, lhs_kept]
        batched = _Batched(tuple(math.prod(sizes[d] for d in part) for part in rhs_apart),
                           tuple(math.prod(sizes[d] for d in part) for part in lhs_apart),
                           _joins(rhs_apart), _joins(lhs_apart))
    produced = [*batch, *rhs_kept, *lhs_kept]
    return Matmul(
        rhs_order=tuple(rsubs.index(d) for d in (*batch, *rhs_kept, *summed)),
        rhs_shape=merged(rhs_groups),
        lhs_order=tuple(lsubs.index(d) for d in (*batch, *summed, *lhs_kept)),
        lhs_shape=merged(lhs_groups),
        split=None if all(len(part) == 1 for part in out_groups) else tuple(sizes[d] for d in produced),
        order=None if produced == list(keep) else tuple(produced.index(d) for d in keep),
        batched=batched,
        batch=bool(batch),
    )


@dataclass(frozen=True)
class FoldPlan:
    """Everything about a fold that depends only on the mappings, the operand axes and shapes.

    Planning walks slots and digit chains in Python; running is the einsum alone, so a plan is
    computed once per kernel type (:func:`plan_fold` caches it) and reused on every call.
    """

    chain: DigitChain
    left: _Cut
    right: _Cut
    subscripts: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    keep: tuple[DigitId, ...]
    multiplicity: int
    terms: int
    acc: str
    optimize: bool  # through BLAS, worth its setup for large products
    matmul: Matmul | None  # the product optimize reaches, planned here

    def run(self, lhs: Array, rhs: Array) -> Folded:
        """The fold of ``lhs`` and ``rhs`` (logical, widened to the accumulator) by this plan."""
        return self.run_cut(self.left.apply(lhs), self.right.apply(rhs))

    def run_cut(self, left: Array, right: Array) -> Folded:
        """The fold of operands already cut into the einsum's inputs (:meth:`_Cut.apply`, :class:`TermCut`)."""
        summed = _contract(left, right, self.subscripts, self.acc, self.terms, self.optimize, self.matmul)
        if self.acc == "f32":
            values = summed * np.float32(self.multiplicity) if self.multiplicity != 1 else summed
        else:
            values = cast(np.asarray(summed).astype(np.int64) * self.multiplicity, "i32")
        return Folded(np.asarray(values, dtype=accumulator_dtype(self.acc)), self.keep, self.chain)


def _contract(lhs: Array, rhs: Array, subscripts: tuple[tuple[int, ...], ...], acc: str, terms: int,
              optimize: bool, matmul: Matmul | None) -> Array:
    lsubs, rsubs, keep = subscripts
    def run(a: Array, b: Array) -> Array:
        if optimize and matmul is not None:
            return matmul.apply(a, b)
        result: Array = np.einsum(a, list(lsubs), b, list(rsubs), list(keep), optimize=optimize)
        return result

    if acc == "f32":
        return np.asarray(run(lhs.astype(np.float32, copy=False), rhs.astype(np.float32, copy=False)), dtype=np.float32)
    # Exact integer sums: through f64 BLAS while every partial sum stays below 2**53, else int64
    # (exact modulo 2**64, hence modulo 2**32).
    bound = float(np.abs(lhs).max(initial=0)) * float(np.abs(rhs).max(initial=0)) * max(terms, 1)
    if bound < _EXACT_F64:
        return np.asarray(run(lhs.astype(np.float64), rhs.astype(np.float64)))
    return np.asarray(run(lhs.astype(np.int64), rhs.astype(np.int64)))


def _natural_order(lsubs: tuple[DigitId, ...], rsubs: tuple[DigitId, ...], kept: set[DigitId],
                   chain: DigitChain) -> list[DigitId]:
    """Kept digits grouped by axis, axes in the order the operands carry them (then the others by
    name), each axis's digits outermost first: the matmul's own output order for a plain product,
    and an order in which each axis's digits merge into one dimension without a copy."""
    axes = dict.fromkeys(sym for sym, _ in (*lsubs, *rsubs))
    axes.update(dict.fromkeys(sorted(sym for sym, _ in kept)))
    return [(sym, j) for sym in axes for j in reversed(range(chain.digits(sym))) if (sym, j) in kept]


@lru_cache(maxsize=256)
def plan_fold(lhs_axes: tuple[str, ...], lhs_shape: tuple[int, ...], lhs_map: StructKey,
              rhs_axes: tuple[str, ...], rhs_shape: tuple[int, ...], rhs_map: StructKey,
              pre_reduce: StructKey, out: StructKey, acc: str, laid_out_as: StructKey | None) -> FoldPlan | None:
    """The plan of :func:`fold_digits` (mappings wrapped in ``StructKey`` so that a cache hit costs
    no normalization), or None when the digits do not nest.

    The result's dimensions follow the digit order of ``laid_out_as``, the mapping it will be laid
    out through; without one they follow the operands (see :func:`_natural_order`).
    """
    accumulator_dtype(acc)
    slot_lists = [lhs_map.node.slots(), rhs_map.node.slots(), pre_reduce.node.slots(), out.node.slots()]
    chain = refine(slot_lists)
    if chain is None:
        return None
    carried_l, carried_r, visited, kept = (covered(chain, slots) for slots in slot_lists)
    if carried_l is None or carried_r is None or visited is None or kept is None or not kept <= visited:
        return None
    pre_slots, out_slots = slot_lists[2], slot_lists[3]
    paired = set(match_broadcasts(pre_slots, out_slots).values())
    multiplicity = math.prod(s.count for i, s in enumerate(pre_slots) if isinstance(s.live, Bcast) and i not in paired)
    left = _cut(lhs_axes, lhs_shape, carried_l, chain, visited)
    right = _cut(rhs_axes, rhs_shape, carried_r, chain, visited)
    present = set(left.subs) | set(right.subs)
    for digit in visited - kept - present:
        multiplicity *= chain.radix(*digit)
    if laid_out_as is None:
        order = _natural_order(left.subs, right.subs, kept, chain)
    else:
        # Output digits in the order the mapping lays them out (outermost first), so the final
        # layout is a near-contiguous copy.
        order = [(live.axis, j) for slot in reversed(laid_out_as.node.slots())
                 if isinstance(live := slot.live, Digit) and live.axis in chain.bounds
                 for j in reversed(chain.cover(live))]
        order += sorted(kept - set(order))
    keep = tuple(d for d in dict.fromkeys(order) if d in present and d in kept)
    terms = math.prod(chain.radix(*d) for d in (visited - kept) & present)
    ids = {digit: k for k, digit in enumerate(dict.fromkeys([*left.subs, *right.subs, *keep]))}
    subscripts = (tuple(ids[d] for d in left.subs), tuple(ids[d] for d in right.subs), tuple(ids[d] for d in keep))
    # numpy's optimized einsum reaches BLAS, but choosing its path costs more than a small product
    # takes in the plain loop (docs/runtime.md §3.4).
    sizes = {k: chain.radix(*digit) for digit, k in ids.items()}
    optimize = math.prod(sizes.values()) > _SMALL_PRODUCT
    return FoldPlan(chain, left, right, subscripts, keep, multiplicity, terms, acc, optimize,
                    plan_matmul(subscripts, sizes) if optimize else None)
