"""A vector pass evaluated on its logical view (docs/runtime.md §3.9).

The stream is an array with one dimension per logical term of its layout. Element-wise steps are
whole-array numpy ops; a VRF operand is indexed by the coordinates of the stream's elements on the
VRF's axes (broadcast by axis name), planned once per pair of term lists and a view wherever the
stream holds the VRF's terms, the stash by term. Narrow and widen move no value, only the
terms the array is grouped by. A reduce folds the terms it removes in index order and broadcasts
over any axis the result adds (the inter-slice reducer's fresh slots).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from operator import is_
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Digit
from tcpdsl.evaluate.stream import converted
from tcpdsl.evaluate.vector_elementwise import PASSIVE, WAY_MOVES, elementwise, flushes, typed_read
from tcpdsl.numerics.term_arrays import axes_of, coordinate_array, planned, rearrange, term_coordinates
from tcpdsl.numerics.placement import frozen
from tcpdsl.numerics.transfer import to_physical
from tcpdsl.numerics.vector_chain import Constant, OperandValue, PassStep, VectorChain, VrfValues
from tcpdsl.numerics.vector_ops import f32, reduce_fold
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_ops import F32, I32, OP_DTYPE

Array = npt.NDArray[Any]
Stash = tuple[Array, tuple[Digit, ...], bool]  # the stream kept, its terms, and whether it was clean


def logical(chain: VectorChain, name: str) -> Array:
    """The pass's values over its last layout's logical terms, kept on the chain per evaluator."""
    key = f"{name}:logical"
    found: Array | None = chain.cache.get(key)
    if found is None:
        found = chain.cache[key] = run_pass(chain, name)
    return found


def physical(chain: VectorChain, name: str) -> Array:
    """The fused values laid out on the pass's last layout, padding 0."""
    held, axes = coordinate_array(logical(chain, name), chain.terms)
    return to_physical(held, axes, chain.mapping, 0)


def run_pass(chain: VectorChain, name: str) -> Array:
    """The stream after every step of ``chain``, over the logical terms of its last layout, reading the
    source and the VRF operands as the evaluator ``name`` computes them.

    A term the source repeats its values along (a broadcast), which every step keeps and no VRF
    operand or reduce reads, is computed once: the pass runs with that term cut to one digit value,
    and the result is broadcast back (read-only).
    """
    given = chain.source.logical(name)
    source = given if type(given) is np.ndarray else np.asarray(given)
    single = _replicated(chain, source)
    if single:
        terms, index = _narrowing(chain.source.terms, single)
        picked = source[index]
    else:
        terms, picked = chain.source.terms, source
    # Cells of an f32 stream the RNGD conversion left are read as they are: the scan would find nothing to fix.
    ready = chain.source.dtype == F32 and converted(source, chain.source.origin, name)
    values = picked if ready else typed_read(picked, chain.source.dtype)
    # Whether the stream is f32 with the RNGD rules applied (each op then reads it without a scan), and
    # whether a step computed it (else it may still be the source's own array).
    clean, computed = chain.source.dtype != I32, False
    stash: Stash | None = None
    layouts = chain.source.layouts
    for step in chain.steps:
        if step.layouts is layouts or (len(step.layouts) == len(layouts) and all(map(is_, step.layouts, layouts))):
            after = terms  # most methods keep the stream's layouts: the same terms, not looked up again
        else:
            after = _narrowing(step.terms, single)[0] if single else step.terms
        layouts = step.layouts
        if step.stage is Stage.VECTOR_STASH:
            stash = (values, terms, clean)
        elif step.stage in (Stage.VECTOR_INTRA_SLICE_REDUCE, Stage.VECTOR_INTER_SLICE_REDUCE):
            values = _reduce(step, values, terms, after, clean)
            clean, computed = OP_DTYPE[type(step.op)] != I32, True  # an f32 fold applies the rules to its result
        elif step.stage in WAY_MOVES:
            values = rearrange(values, terms, after)
        elif step.stage not in PASSIVE:
            flushing, operands = flushes(step), step.operands
            if flushing and len(operands) == 1:  # a float op's one operand: read without a scan when it can be
                operand, operand_clean = _f32_read(operands[0], terms, stash, name)
                values = elementwise(step, values, [operand], clean=clean, operand_clean=operand_clean)
            else:
                values = elementwise(step, values, [_read(o, terms, stash, name) for o in operands], clean=clean)
            clean, computed = flushing, True
        terms = after
    if single:
        return np.broadcast_to(values, tuple(t.count for t in chain.terms))
    return values if computed else np.array(values)  # the result is an array of its own, never the source


def _replicated(chain: VectorChain, source: Array) -> frozenset[Digit]:
    """The source terms along which ``source`` repeats one value (stride 0) that every step keeps and
    that no VRF operand or reduce reads by axis: the pass computes the same along them."""
    if 0 not in source.strides:
        return frozenset()
    # Lists, not sets, until the end: a term's hash is computed in Python, and the list filters need none.
    repeated = [t for t, n, stride in zip(chain.source.terms, source.shape, source.strides) if n > 1 and stride == 0]
    layouts = chain.source.layouts
    for step in chain.steps:
        if not repeated:
            break
        # The same layout objects as the step before hold the same terms.
        these = step.layouts
        same = these is layouts or (len(these) == len(layouts) and all(map(is_, these, layouts)))
        layouts = these
        if same and not step.operands and step.reduce is None:
            continue  # the terms the step before kept, nothing read by axis: the same terms survive
        read = {o_term.axis for o in step.operands if isinstance(o, VrfValues) for o_term in o.terms}
        repeated = [t for t in repeated if (same or t in step.terms) and t.axis not in read and t.axis != step.reduce]
    return frozenset(repeated)


@lru_cache(maxsize=256)
def _narrowed(terms: tuple[Digit, ...], single: frozenset[Digit]) -> tuple[Digit, ...]:
    """``terms`` with each term of ``single`` cut to its first digit value."""
    return tuple(replace(t, count=1) if t in single else t for t in terms)


_NARROWINGS_LIMIT: Final = 256
# id of a term tuple -> the tuple, the replicated terms, what they narrow it to, and the index that cuts an
# array over it so.
_Narrowing = tuple[tuple[Digit, ...], tuple[slice, ...]]
_narrowings: dict[int, tuple[tuple[Digit, ...], frozenset[Digit], _Narrowing]] = {}


def _narrowing(terms: tuple[Digit, ...], single: frozenset[Digit]) -> _Narrowing:
    """:func:`_narrowed`, and the index cutting an array over ``terms`` to it; found first by the identity of
    ``terms`` (a pass called again hands the same tuples), the replicated set, built afresh on every call,
    compared by value (which reads the hashes the sets keep rather than hashing terms again)."""
    seen = _narrowings.get(id(terms))
    if seen is not None and seen[0] is terms and seen[1] == single:
        return seen[2]
    found = (_narrowed(terms, single), tuple(slice(0, 1) if t in single else slice(None) for t in terms))
    if len(_narrowings) >= _NARROWINGS_LIMIT:
        _narrowings.clear()
    _narrowings[id(terms)] = (terms, single, found)  # kept with its tuple, so no other tuple takes its id
    return found


_CONSTANTS_LIMIT: Final = 256
_f32_constants: dict[object, Array] = {}


def _f32_constant(value: float | int) -> Array:
    """``value`` as a float op reads it (:func:`~tcpdsl.numerics.vector_ops.f32`: a 0-d f32 with the rules
    applied), read-only, kept per value: a kernel's immediates are the same numbers on every call."""
    # A float by its bits' text, so that -0.0 is not taken for 0.0 (they compare equal); every NaN reads alike.
    key = value.hex() if type(value) is float else value if type(value) is int else None
    found = None if key is None else _f32_constants.get(key)
    if found is None:
        with np.errstate(over="ignore"):  # past f32's range reads as infinity, as inside the op
            found = f32(value)
        found.setflags(write=False)
        if key is not None:
            if len(_f32_constants) >= _CONSTANTS_LIMIT:
                _f32_constants.clear()
            _f32_constants[key] = found
    return found


def _read(operand: OperandValue, terms: tuple[Digit, ...], stash: Stash | None, name: str) -> Array:
    if isinstance(operand, Constant):
        return np.asarray(operand.value)
    if isinstance(operand, VrfValues):
        return read_vrf(operand.read(name), operand.terms, terms)
    assert stash is not None  # the state machine lets a stash read follow a stash only
    return rearrange(stash[0], stash[1], terms)


def _f32_read(operand: OperandValue, terms: tuple[Digit, ...], stash: Stash | None, name: str) -> tuple[Array, bool]:
    """What :func:`_read` gives for an f32 op, and whether it is f32 with the rules applied already: a constant
    made so once per value, a VRF read that moves the cells of a stream the RNGD conversion left, or a stash
    of a stream a float op computed."""
    if isinstance(operand, Constant):
        return _f32_constant(operand.value), True
    if isinstance(operand, VrfValues):
        vrf = operand.read(name)
        return read_vrf(vrf, operand.terms, terms), vrf.dtype == np.float32 and converted(vrf, operand.origin, name)
    assert stash is not None
    return rearrange(stash[0], stash[1], terms), stash[2]


def broadcast_vrf(vrf: Array, vrf_terms: tuple[Digit, ...], coords: dict[str, Array]) -> Array:
    """The VRF's value for each stream element whose coordinates are ``coords``: the VRF cell whose every
    term the element's coordinate digits name (docs/stage-rules.md §6.3); axes the VRF lacks broadcast."""
    zero = np.zeros((), dtype=np.int64)
    index = tuple((coords.get(t.axis, zero) // t.stride) % t.count for t in vrf_terms)
    shape = np.broadcast_shapes(*(np.shape(i) for i in index)) if index else ()
    return np.asarray(vrf[tuple(np.broadcast_to(i, shape) for i in index)] if index else vrf)


@dataclass(frozen=True)
class _View:
    """A VRF read that moves no value: the VRF's dimensions put in the stream's term order (``order``, None
    when they are in it), then reshaped to ``shape``, a dimension of 1 for each stream term the VRF lacks
    (inserting those never copies)."""

    order: tuple[int, ...] | None
    shape: tuple[int, ...]


@lru_cache(maxsize=512)
def _vrf_reading(vrf_terms: tuple[Digit, ...], terms: tuple[Digit, ...]) -> _View | tuple[Array, ...]:
    """How :func:`read_vrf` reads: a view when the stream holds every term of the VRF as its own
    dimension (a stream digit then names the VRF index of its term and nothing else, since the
    terms of one axis cover disjoint digits); else the index arrays of :func:`broadcast_vrf`."""
    if all(t in terms for t in vrf_terms):
        order = tuple(sorted(range(len(vrf_terms)), key=lambda k: terms.index(vrf_terms[k])))
        return _View(None if order == tuple(range(len(order))) else order,
                     tuple(t.count if t in vrf_terms else 1 for t in terms))
    coords = term_coordinates(terms)
    zero = np.zeros((), dtype=np.int64)
    index = tuple(frozen((coords.get(t.axis, zero) // t.stride) % t.count) for t in vrf_terms)
    return index


_VrfReading = _View | tuple[Array, ...]
_VRF_PLANS_LIMIT: Final = 256
_VRF_PLANS_PER_STREAM: Final = 8
# id of a stream's term tuple -> the tuple, and each VRF term list read over it with its reading.
_vrf_plans: dict[int, tuple[tuple[Digit, ...], list[tuple[tuple[Digit, ...], _VrfReading]]]] = {}


def _vrf_plan(vrf_terms: tuple[Digit, ...], terms: tuple[Digit, ...]) -> _VrfReading:
    """:func:`_vrf_reading`, found first by the identity of the stream's terms (a pass called again hands the
    same tuple), the VRF's terms compared by value: a VRF loaded afresh on every call holds equal terms in
    a tuple of its own, which would miss by identity and cost the hashes of both term lists."""
    seen = _vrf_plans.get(id(terms))
    if seen is not None and seen[0] is terms:
        for known, how in seen[1]:
            if known == vrf_terms:
                return how
    how = planned(_vrf_reading, vrf_terms, terms)
    if seen is None or seen[0] is not terms:
        if len(_vrf_plans) >= _VRF_PLANS_LIMIT:
            _vrf_plans.clear()
        _vrf_plans[id(terms)] = (terms, [(vrf_terms, how)])  # kept with its tuple: no other tuple takes its id
    elif len(seen[1]) < _VRF_PLANS_PER_STREAM:
        seen[1].append((vrf_terms, how))
    return how


def read_vrf(vrf: Array, vrf_terms: tuple[Digit, ...], terms: tuple[Digit, ...]) -> Array:
    """:func:`broadcast_vrf` for a stream held as an array over ``terms``, planned once per pair of
    term lists and broadcastable to the stream rather than as large as it."""
    how = _vrf_plan(vrf_terms, terms)
    if isinstance(how, _View):
        return (vrf if how.order is None else vrf.transpose(how.order)).reshape(how.shape)
    return vrf[how] if how else vrf


def _reduce(step: PassStep, values: Array, terms: tuple[Digit, ...], after: tuple[Digit, ...], clean: bool) -> Array:
    """Fold away the terms ``after`` (the step's) no longer holds; broadcast over the ones it adds. ``clean``
    says the stream is f32 with the rules applied."""
    how = planned(_folding, terms, after, step.reduce)
    # The removed terms first: each step of the fold then reads a row laid out as the stream is.
    moved = values if how.order is None else values.transpose(how.order)
    folded = reduce_fold(step.op, moved.reshape(how.rows), axis=0, clean=clean)
    grouped = rearrange(folded, how.kept, how.base)
    if not how.fresh:
        return grouped
    return np.broadcast_to(np.expand_dims(grouped, how.fresh), how.shape).copy()


@dataclass(frozen=True)
class _Folding:
    """How :func:`_reduce` folds a stream over one term list into another: the dimensions put in ``order``
    (the removed ones first, None when they are), the fold's rows, the kept terms regrouped as ``base``,
    and where the terms the result adds go (``fresh``) in its ``shape``."""

    order: tuple[int, ...] | None
    rows: tuple[int, ...]
    kept: tuple[Digit, ...]
    base: tuple[Digit, ...]
    fresh: tuple[int, ...]
    shape: tuple[int, ...]


@lru_cache(maxsize=512)
def _folding(terms: tuple[Digit, ...], after: tuple[Digit, ...], reduce: str | None) -> _Folding:
    kept_axes = set(axes_of(after))
    removed = tuple(i for i, t in enumerate(terms) if t.axis == reduce or t.axis not in kept_axes)
    kept = tuple(t for i, t in enumerate(terms) if i not in removed)
    held = set(axes_of(kept))
    base = tuple(t for t in after if t.axis in held)
    fresh = tuple(i for i, t in enumerate(after) if t.axis not in held)
    order = (*removed, *(i for i in range(len(terms)) if i not in removed))
    return _Folding(None if order == tuple(range(len(terms))) else order, (-1, *(t.count for t in kept)), kept,
                    base, fresh, tuple(t.count for t in after))
