"""The one physical move of the stream engines: a buffer over mapping A to a buffer over mapping B,
cell by cell through the logical coordinates each cell holds (docs/runtime.md §4).

Every engine outside the contraction chain moves cells this way (fetch, collect, commit, DMA, ...):
a live cell of B takes the value of a live cell of A holding the same element; Top padding of B is
poisoned, Zero padding is zero, and a live cell of B whose element A does not hold, or holds
poisoned, is poisoned. Broadcasts replicate. Values change only by the RNGD casts of
:func:`convert`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections import OrderedDict
from functools import lru_cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Mapping, PaddingKind, Digit, StructKey
from tcpdsl.numerics.flow import Buffer
from tcpdsl.numerics.placement import frozen, plan
from tcpdsl.numerics.scalars import bf16, cast, poison, widen
from tcpdsl.numerics.term_arrays import coordinate_array, distinct
from tcpdsl.numerics.transfer import holds_only, terms_to_physical, to_physical, to_terms

Array = npt.NDArray[Any]
Mask = npt.NDArray[np.uint8]
IntArray = npt.NDArray[np.int64]


def convert(values: Array, frm: str, to: str, *, canonical: bool = False) -> Array:
    """Values of ``frm`` as ``to``: widened exactly, then narrowed by the RNGD cast (docs/runtime.md §3.2).

    Two of those steps are skipped where they change nothing: widening f32 only flushes, which the cast
    does itself (narrowing to bf16, to the cells it redoes); bf16 widens to f32 already flushed, which a
    cast to f32 would copy and scan for nothing. ``canonical`` says the values came out of the RNGD rules (a
    cast, or for f32 an op that applied them; :func:`~tcpdsl.numerics.scalars.widen` takes it so).
    """
    if frm == to:
        return values
    if frm == "f32" and values.dtype == np.float32:
        if canonical and to == "bf16":
            # Flushed f32 with the canonical NaN narrows by the RNGD rule as ml_dtypes rounds it: nothing the
            # rule fixes up (a subnormal, a NaN payload) can be there (docs/runtime.md §3.2).
            return values.astype(bf16.numpy)
        return cast(values, to)
    if frm == "bf16" and to == "f32":
        return widen(values, frm, canonical=canonical)
    return cast(widen(values, frm, canonical=canonical), to)


def lay_out(values: Array, terms: tuple[Digit, ...], mapping: Mapping, dtype: str) -> Buffer:
    """Logical values over ``terms`` laid out on ``mapping``: Top and Bottom padding poisoned, Zero padding 0."""
    held, axes = coordinate_array(values, terms)
    buffer = to_physical(held, axes, mapping, fill=poison(dtype), zero_fill=0)
    defined = to_physical(np.ones(held.shape, dtype=np.uint8), axes, mapping, fill=0, zero_fill=1)
    return buffer, (defined == 0).astype(np.uint8)


def relabel(values: Array, terms: tuple[Digit, ...], src: Mapping, dst: Mapping, dst_terms: tuple[Digit, ...],
            dtype: str) -> Array:
    """``values`` over ``terms`` laid out on ``src`` (:func:`lay_out`) and read back through ``dst`` over
    ``dst_terms`` (:func:`to_terms`): the same bytes under other layouts, as ``reshape`` reads them.

    The cells move the same way for every call of a kernel, so the move is planned once as a gather
    over the values (:func:`_relabelling`); a cell read from padding gets what the buffer would hold
    there, poison or 0. A read of every value once in a nested order needs no index: it is a reshape
    of the values (a read-only view), or a reshape then a transpose (copied in C order). A term the read
    replicates (every index along it reads the same value) is gathered once and broadcast: the result is
    read-only, and costs what the distinct values cost.
    Values that repeat along a dimension (a broadcast, of stride 0) are read from their distinct
    values, so that neither the read nor a replicated result costs their repeats.
    """
    shape = values.shape
    repeated = tuple(k for k, stride in enumerate(values.strides) if stride == 0) if 0 in values.strides else ()
    key = (id(src), id(dst), id(dst_terms), shape, repeated)
    found = _relabellings.get(key)
    if (found is not None and found[0] is src and found[1] is dst and found[2] is dst_terms
            and (found[3] is terms or found[3] == terms)):
        how = found[4]
        _relabellings.move_to_end(key)
    else:
        how = _relabelling(StructKey(src), StructKey(dst), terms, dst_terms, shape, repeated)
        if len(_relabellings) >= _RELABELLINGS_LIMIT:
            _relabellings.popitem(last=False)
        _relabellings[key] = (src, dst, dst_terms, terms, how)
    if how is None:  # every element stays where it is: the values themselves, read-only
        return frozen(values.view())
    held = distinct(values) if repeated else values
    if isinstance(how, _Nested):  # every value read once, by a reshape then maybe a transpose
        nested, full = held.reshape(how.shape), how.full
        if how.order is None:  # the values themselves, regrouped: a view, read-only
            read = frozen(nested)
        else:  # copied into their new order: the ops that read them run faster on it than on a strided view
            read = np.ascontiguousarray(nested.transpose(how.order))
    else:
        index, full, ends_read = how
        cells = held.reshape(-1)
        if ends_read:
            ends = np.array([0, poison(dtype)], dtype=values.dtype)  # index 0 reads 0, index -1 reads poison
            read = np.concatenate([ends[:1], cells, ends[1:]])[index]
        else:  # every element reads a value (the index is shifted down by one to read them in place)
            read = cells[index]
    return read if read.shape == full else np.broadcast_to(read, full)


@dataclass(frozen=True)
class _Nested:
    """A relabelling that reads every value once, in the order of a transpose of the values reshaped to
    ``shape`` (a permutation of nested digits; None for none), then broadcast to ``full`` along dimensions of
    size 1."""

    shape: tuple[int, ...]
    order: tuple[int, ...] | None
    full: tuple[int, ...]


_Relabelling = tuple[IntArray, tuple[int, ...], bool] | _Nested | None
_RELABELLINGS_LIMIT: Final = 256
# By the identity of the mappings and the read's terms (and by the shape and repeated dimensions): a kernel
# called again passes the same objects, which are kept here so that no other object takes their ids while
# remembered. The values' own terms may be a tuple built afresh: compared by value. Least recently used first.
_Kept = tuple[Mapping, Mapping, tuple[Digit, ...], tuple[Digit, ...], _Relabelling]
_relabellings: OrderedDict[tuple[object, ...], _Kept] = OrderedDict()


@lru_cache(maxsize=256)
def _relabelling(src: StructKey, dst: StructKey, terms: tuple[Digit, ...], dst_terms: tuple[Digit, ...],
                 shape: tuple[int, ...], repeated: tuple[int, ...]) -> _Relabelling:
    """Where :func:`relabel` reads each element: 1 + the flat index of a value (among the distinct values,
    cut to one index along each dimension of ``repeated``), 0 for a 0, -1 for poison,
    with a dimension of 1 along each term every index of which reads the same, the shape to broadcast
    that to, and whether any element reads a 0 or poison (if not, the index is the flat index itself);
    None when every element reads its own value (a stream read back through its own layout).

    Found by moving the flat indices themselves: lay_out fills Top and Bottom padding with poison (-1
    here) and Zero padding and coordinates the terms do not hold with 0; to_terms reads 0 where no
    live cell holds an element.
    """
    positions = np.arange(1, math.prod(shape) + 1, dtype=np.int64).reshape(shape)
    held, axes = coordinate_array(positions, terms)
    buffer = to_physical(held, axes, src.node, fill=-1, zero_fill=0)
    index = to_terms(buffer, dst.node, dst_terms)
    if index.shape == positions.shape and np.array_equal(index, positions):
        return None
    full = index.shape
    if repeated:  # each value read where its distinct copy sits: index 0 along the repeated dimensions
        reads = index >= 1
        coordinates = np.unravel_index(np.where(reads, index - 1, 0), shape)
        cut = tuple(1 if k in repeated else n for k, n in enumerate(shape))
        kept = tuple(np.zeros_like(c) if k in repeated else c for k, c in enumerate(coordinates))
        index = np.where(reads, np.ravel_multi_index(kept, cut) + 1, index)
    for k in range(index.ndim):
        first = index[(slice(None),) * k + (slice(0, 1),)]
        if index.shape[k] > 1 and np.array_equal(np.broadcast_to(first, index.shape), index):
            index = first
    ends_read = bool(index.size) and int(index.min()) < 1
    if not ends_read:
        nested = _nested(index - 1, full, math.prod(n for k, n in enumerate(shape) if k not in repeated))
        if nested is not None:
            return nested
    return frozen(index if ends_read else index - 1), full, ends_read


def _nested(index: IntArray, full: tuple[int, ...], count: int) -> _Nested | None:
    """The :class:`_Nested` read of ``index`` (flat indices into ``count`` values, C order), when its
    dimensions, taken by their steps through the values, nest without gaps or overlaps from step 1 up to
    every value once; else None (a gather)."""
    ndim = index.ndim
    if index.size != count or int(index[(0,) * ndim]) != 0:
        return None
    unit = [tuple(1 if k == d else 0 for k in range(ndim)) for d in range(ndim)]
    steps = {d: int(index[unit[d]]) for d in range(ndim) if index.shape[d] > 1}
    by_step = sorted(steps, key=lambda d: -steps[d])
    expected = 1
    for d in reversed(by_step):
        if steps[d] != expected:
            return None
        expected *= index.shape[d]
    affine = np.zeros(index.shape, dtype=np.int64)
    for d, step in steps.items():
        affine += (np.arange(index.shape[d]) * step).reshape([-1 if k == d else 1 for k in range(ndim)])
    if not np.array_equal(affine, index):
        return None
    # The values reshaped to the stepped dimensions by decreasing step (then one of size 1 per other
    # dimension), and each moved to its place.
    ones = [d for d in range(ndim) if d not in steps]
    source = by_step + ones
    order = tuple(source.index(d) for d in range(ndim))
    return _Nested(tuple(index.shape[d] for d in source), None if order == tuple(range(ndim)) else order, full)


def move(source: Buffer, src: Mapping, dst: Mapping, terms: tuple[Digit, ...], dtype: str) -> Buffer:
    """The buffer over ``src`` moved onto ``dst`` by logical coordinates (the elements over ``terms``).

    Elements that ``src`` does not hold, or holds poisoned, arrive poisoned.
    """
    buffer, mask = source
    values = to_terms(buffer, src, terms)
    defined = to_terms((np.asarray(mask) == 0).astype(np.uint8), src, terms)
    if holds_only(dst, terms):
        # Every live cell of dst holds one of the elements: lay them out by slots, without a route per cell.
        out = terms_to_physical(values, terms, dst, fill=poison(dtype), zero_fill=0)
        bad = terms_to_physical(defined, terms, dst, fill=0, zero_fill=1) == 0
        out[bad & plan(dst).live] = poison(dtype)
        return out, bad.astype(np.uint8)
    held, axes = coordinate_array(values, terms)
    good, _ = coordinate_array(defined, terms)
    # Coordinates past the last one the source holds are elements it lacks: extend to the destination's sizes.
    sizes = dst.axis_sizes()
    widths = [(0, max(0, sizes.get(a, n) - n)) for a, n in zip(axes, held.shape)]
    if widths:  # a scalar (no terms) has nothing to extend
        held, good = np.pad(held, widths), np.pad(good, widths)
    out = to_physical(held, axes, dst, fill=poison(dtype), zero_fill=0)
    ok = to_physical(good, axes, dst, fill=0, zero_fill=1)
    bad = ok == 0
    out[bad & plan(dst).live] = poison(dtype)
    return out, bad.astype(np.uint8)


def live_poison(mask: Mask, mapping: Mapping) -> int:
    """How many live cells of ``mapping`` hold poison."""
    return int(np.count_nonzero(np.asarray(mask).astype(bool) & plan(mapping).live))



def window(parent: Buffer, element: int, offset: int, mapping: Mapping, dtype: str) -> Buffer:
    """The buffer of a window of ``parent`` (``element`` cells per slice): Element cell ``p`` of the window
    is cell ``p + offset`` of the parent. The window's own holes, and cells past the parent's (a padded
    view may reach further), are poisoned."""
    values, mask = (np.asarray(a).reshape(-1, element) for a in parent)
    size = mapping.size // values.shape[0]
    out = np.full((values.shape[0], size), poison(dtype), dtype=values.dtype)
    bad = np.ones(out.shape, dtype=np.uint8)
    n = min(size, element - offset)
    out[:, :n] = values[:, offset : offset + n]
    bad[:, :n] = mask[:, offset : offset + n]
    flat_bad = bad.reshape(-1)
    flat_bad[plan(mapping).padding(PaddingKind.TOP, PaddingKind.BOTTOM)] = 1
    return out.reshape(-1), flat_bad


def write_window(parent: Buffer, written: Buffer, element: int, offset: int, mapping: Mapping) -> Buffer:
    """``parent`` after a write into its window at ``offset`` over ``mapping``: only the window's live
    cells are written; its Bottom padding, and every cell outside it, keeps the parent's value."""
    values, mask = (np.asarray(a).reshape(-1, element).copy() for a in parent)
    size = mapping.size // values.shape[0]
    new, new_mask = (np.asarray(a).reshape(-1, size) for a in written)
    rows, cols = np.nonzero(plan(mapping).live.reshape(-1, size))
    values[rows, cols + offset] = new[rows, cols]
    mask[rows, cols + offset] = new_mask[rows, cols]
    return values.reshape(-1), mask.reshape(-1)


def written(parent: Array, parent_terms: tuple[Digit, ...], parent_mapping: Mapping, new: Array,
            new_terms: tuple[Digit, ...], new_mapping: Mapping, element: int, offset: int, dtype: str) -> Array:
    """The values over ``parent_terms`` of ``parent`` (laid out on ``parent_mapping``) after ``new`` (laid
    out on ``new_mapping``) is written into its window ``offset`` cells in (:func:`write_window`), read back
    through ``parent_mapping``: a copy of ``parent`` with the cells the write changes set, as planned once
    by :func:`_writing`."""
    cells, codes, kept, moved = _writing(StructKey(parent_mapping), parent_terms, tuple(parent.shape),
                                         StructKey(new_mapping), new_terms, tuple(new.shape), element, offset)
    ends = np.array([0, poison(dtype)], dtype=parent.dtype)  # code 0 reads 0, code -1 reads poison
    values = np.concatenate([ends[:1], new.reshape(-1).astype(parent.dtype), ends[1:]])[codes]
    values[kept] = parent.reshape(-1)[moved]
    out = np.array(parent, copy=True)
    out.reshape(-1)[cells] = values
    return out


@lru_cache(maxsize=256)
def _writing(parent_mapping: StructKey, parent_terms: tuple[Digit, ...], parent_shape: tuple[int, ...],
             new_mapping: StructKey, new_terms: tuple[Digit, ...], new_shape: tuple[int, ...], element: int,
             offset: int) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """The elements :func:`written` changes (flat indices) and where each reads: ``codes`` is 1 + a flat
    index into the new values, 0 for a 0, -1 for poison; the changed elements at ``kept`` read the
    parent's values at ``moved`` instead. Found by writing the flat indices themselves (the parent's
    first, then the new values')."""
    size = math.prod(parent_shape)
    ours = np.arange(1, size + 1, dtype=np.int64).reshape(parent_shape)
    theirs = np.arange(size + 1, size + 1 + math.prod(new_shape), dtype=np.int64).reshape(new_shape)
    buffers = []
    for values, terms, mapping in ((ours, parent_terms, parent_mapping), (theirs, new_terms, new_mapping)):
        held, axes = coordinate_array(values, terms)
        laid = to_physical(held, axes, mapping.node, fill=-1, zero_fill=0)
        buffers.append((laid, np.zeros(laid.shape, dtype=np.uint8)))
    after = write_window(buffers[0], buffers[1], element, offset, new_mapping.node)[0]
    index = to_terms(after, parent_mapping.node, parent_terms).reshape(-1)
    cells = np.flatnonzero(index != ours.reshape(-1))
    codes = index[cells]
    kept = np.flatnonzero((codes >= 1) & (codes <= size))
    moved = codes[kept] - 1
    codes = np.where(codes > size, codes - size, np.where(codes < 1, codes, 0))
    return frozen(cells), frozen(codes), frozen(kept), frozen(moved)
