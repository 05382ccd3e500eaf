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
from weakref import ref

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Digit
from tcpdsl.evaluate.stream import CACHE_KEYS, converted
from tcpdsl.evaluate.vector_elementwise import PASSIVE, WAY_MOVES, elementwise, flushes, typed_read
from tcpdsl.numerics.term_arrays import (axes_of, coordinate_array, planned, rearrange, regrouping,
                                         term_coordinates)
from tcpdsl.numerics.placement import frozen
from tcpdsl.numerics.transfer import to_physical
from tcpdsl.numerics.vector_chain import Constant, OperandValue, PassStep, VectorChain, VrfValues
from tcpdsl.numerics import vector_ops as ops
from tcpdsl.numerics.vector_ops import QUIET, f32, f32_binary, f32_unary, fold
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_ops import F32, I32, OP_DTYPE, BinaryArgMode, FpBinaryOp, ReduceOp
from tcpdsl.verify.vector_pass import StashRead

Array = npt.NDArray[Any]


def logical(chain: VectorChain, name: str) -> Array:
    """The pass's values over its last layout's logical terms, kept on the chain per evaluator."""
    key = CACHE_KEYS[name][0]
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
    source and the VRF operands as the evaluator ``name`` computes them; marked on the chain as converted
    when it is f32 with the rules applied.

    A term the source repeats its values along (a broadcast), which every step keeps and no VRF
    operand or reduce reads, is computed once: the pass runs with that term cut to one digit value,
    and the result is broadcast back (read-only). What each step does is planned once per pass and
    source layout in memory (:class:`_Plan`); an evaluation reads the values and runs the plan.
    """
    given = chain.source.logical(name)
    source = given if type(given) is np.ndarray else np.asarray(given)
    key = (source.shape, source.strides)
    seen = _plans.get(id(chain))
    if seen is not None and seen[0]() is chain and seen[1] == key:
        plan = seen[2]
    else:
        plan = _plan(chain, source)
        if len(_plans) >= _PLANS_LIMIT:
            _plans.clear()
        _plans[id(chain)] = (ref(chain), key, plan)
    picked = source if plan.cut is None else source[plan.cut]
    # Cells of an f32 stream the RNGD conversion left are read as they are: the scan would find nothing to fix.
    ready = chain.source.dtype == F32 and converted(source, chain.source.origin, name)
    values = picked if ready else typed_read(picked, chain.source.dtype)
    steps = chain.steps
    read = [fixed if at is None else _vrf_operand(steps[at[0]].operands[at[1]], how, check, name)
            for fixed, at, how, check in plan.inputs] if plan.inputs else _NO_INPUTS
    values = _run_steps(plan.actions, steps, values, read)
    if plan.cut is not None:
        values = np.broadcast_to(values, plan.shape)
    elif not plan.computed:
        values = np.array(values)  # the result is an array of its own, never the source
    if plan.clean and values.dtype == np.float32:
        # Marked as the RNGD conversion's output (evaluate/stream.py converted): what reads it needs no scan.
        chain.cache[CACHE_KEYS[name][1]] = values
    return values


# What a planned step does: the first item of its action (see :class:`_Plan`).
_MOVE, _FLOAT, _UNARY, _REDUCE, _STASH, _OTHER = range(6)
_PLANS_LIMIT: Final = 1024
# id of a pass -> a weak reference to it (a replayed pass is the very same object on every call; a dead one
# frees its id, and is never taken for another), the source's shape and strides, and its plan. A plan holds
# no value, nor anything that leads to one (a VRF operand is found by its place among the steps): a pass
# computed once keeps no memory alive through it.
_plans: dict[int, tuple[ref[VectorChain], tuple[tuple[int, ...], tuple[int, ...]], _Plan]] = {}
_REDUCES: Final = frozenset({Stage.VECTOR_INTRA_SLICE_REDUCE, Stage.VECTOR_INTER_SLICE_REDUCE})
# The f32 arithmetic steps that read one operand (docs/runtime.md §3.9), run by :func:`f32_binary`.
_FLOAT_STAGES: Final = frozenset({Stage.VECTOR_FP_BINARY, Stage.VECTOR_FP_DIV, Stage.VECTOR_CLIP})
# An operand read once per evaluation, before the steps run: a fixed value (a constant, and whether it is f32
# with the rules applied), or a VRF by its step's and its own place, with its reading and whether the op
# asks if it is f32 with the rules applied (its value then _PER_CALL, which no evaluation reads).
_Input = tuple[tuple[Array, bool], tuple[int, int] | None, "_VrfReading", bool]
_PER_CALL: Final = (np.zeros(0, dtype=np.float32), False)
_NO_INPUTS: Final[list[tuple[Array, bool]]] = []  # what a pass without such operands reads: never written


@dataclass(frozen=True, eq=False)
class _Plan:
    """A pass's steps as :func:`run_pass` runs them on a source laid out in memory one way: the index cutting
    the replicated terms to one value (None when none) and the shape the result is broadcast back to; the
    operands that do not depend on the stream (``inputs``); per step that computes or moves values, its
    action (its kind, then what it runs with, derived from the step once); and whether any step computes.

    An action's operand is an index into the inputs, or the regrouping of the stash to the stream's terms
    then (None when they are the stash's) with whether the stash is f32 with the rules applied. An action
    that runs its step the long way names it by its place among the steps.
    """

    cut: tuple[slice, ...] | None
    shape: tuple[int, ...]
    inputs: tuple[_Input, ...]
    actions: tuple[tuple[Any, ...], ...]
    computed: bool
    clean: bool  # the result is f32 with the rules applied


def _plan(chain: VectorChain, source: Array) -> _Plan:
    """What :func:`run_pass` does with each step of ``chain`` on ``source``, derived as the steps say: the terms
    the stream is grouped by after each, and whether it is f32 with the rules applied (each op then reads it
    without a scan)."""
    single = _replicated(chain, source)
    terms, cut = _narrowing(chain.source.terms, single) if single else (chain.source.terms, None)
    clean, computed = chain.source.dtype != I32, False
    stash: tuple[tuple[Digit, ...], bool] = (terms, clean)  # the state machine reads a stash only after one
    inputs: list[_Input] = []
    actions: list[tuple[Any, ...]] = []

    def operand(at: int, index: int, f32_op: bool) -> object:
        o = chain.steps[at].operands[index]
        if isinstance(o, StashRead):
            return (None if stash[0] is terms else regrouping(stash[0], terms), stash[1])
        if isinstance(o, Constant):
            inputs.append(((_f32_constant(o.value), True) if f32_op else (_read_only(o.value), False), None, (), False))
        else:
            inputs.append((_PER_CALL, (at, index), _vrf_plan(o.terms, terms), f32_op))
        return len(inputs) - 1

    layouts = chain.source.layouts
    for at, step in enumerate(chain.steps):
        if step.layouts is layouts or (len(step.layouts) == len(layouts) and all(map(is_, step.layouts, layouts))):
            after = terms  # most methods keep the stream's layouts: the same terms, not looked up again
        else:
            after = _narrowing(step.terms, single)[0] if single else step.terms
        layouts, stage = step.layouts, step.stage
        if stage is Stage.VECTOR_STASH:
            actions.append((_STASH,))
            stash = (terms, clean)
        elif stage in _REDUCES:
            actions.append((_REDUCE, step.op, planned(_folding, terms, after, step.reduce), clean))
            clean, computed = OP_DTYPE[type(step.op)] != I32, True  # an f32 fold applies the rules to its result
        elif stage in WAY_MOVES:
            if after is not terms:
                actions.append((_MOVE, regrouping(terms, after)))
        elif stage not in PASSIVE:
            flushing = flushes(step)
            if stage is Stage.VECTOR_FP_UNARY:
                actions.append((_UNARY, ops.unary_function(step.op), clean))
            elif flushing and stage in _FLOAT_STAGES and len(step.operands) == 1:
                op = FpBinaryOp.DIV_F if stage is Stage.VECTOR_FP_DIV else step.op
                mode = step.mode if isinstance(step.mode, BinaryArgMode) else BinaryArgMode.MODE01
                actions.append((_FLOAT, ops.float_function(op), mode, clean, operand(at, 0, True), ops.picks(op)))
            else:
                actions.append((_OTHER, at, clean, tuple(operand(at, i, False) for i in range(len(step.operands)))))
            clean, computed = flushing, True
        terms = after
    shape = tuple(t.count for t in chain.terms)
    return _Plan(cut, shape, tuple(inputs), tuple(actions), computed, clean)


def _read_only(value: float | int) -> Array:
    """A constant as a step other than f32 arithmetic reads it (as given), shared by every evaluation of the
    pass, read-only: no op writes into its operands."""
    return frozen(np.asarray(value))


@QUIET
def _run_steps(actions: tuple[tuple[Any, ...], ...], steps: tuple[PassStep, ...], values: Array,
               read: list[tuple[Array, bool]]) -> Array:
    """``values`` through each planned action of a pass of ``steps``, ``read`` holding the inputs' values; one
    floating-point state for all (the ops write what overflow and NaN give by the rules)."""
    stash = values
    for action in actions:
        kind = action[0]
        if kind == _MOVE:
            values = action[1](values)
        elif kind == _FLOAT:
            source = action[4]  # an input's index (the usual operand: a constant or a VRF), else a stash read
            operand, operand_clean = read[source] if type(source) is int else _operand(source, read, stash)
            values = f32_binary(action[1], values, operand, action[2], action[3], operand_clean, action[5])
        elif kind == _UNARY:
            values = f32_unary(action[1], values, action[2])
        elif kind == _REDUCE:
            values = _reduce(action[1], action[2], values, action[3])
        elif kind == _STASH:
            stash = values
        else:
            operands = [_operand(o, read, stash)[0] for o in action[3]]
            values = elementwise(steps[action[1]], values, operands, clean=action[2])
    return values


def _operand(source: Any, read: list[tuple[Array, bool]], stash: Array) -> tuple[Array, bool]:
    """An action's operand (see :class:`_Plan`) and whether it is f32 with the rules applied."""
    if type(source) is int:
        return read[source]
    regroup, clean = source
    return (stash if regroup is None else regroup(stash)), clean


def _vrf_operand(vrf: OperandValue, how: _VrfReading, check: bool, name: str) -> tuple[Array, bool]:
    """A VRF operand read over the stream's terms, and (when ``check`` asks) whether it moves the cells of a
    stream the RNGD conversion left, which an f32 op reads without a scan."""
    assert isinstance(vrf, VrfValues)  # the plan names VRF operands only
    held = vrf.read(name)
    return _read_vrf(held, how), check and held.dtype == np.float32 and converted(held, vrf.origin, name)


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
    """How :func:`_read_vrf` reads: a view when the stream holds every term of the VRF as its own
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


def _read_vrf(vrf: Array, how: _VrfReading) -> Array:
    """:func:`broadcast_vrf` for a stream held as an array, read as :func:`_vrf_plan` planned it for the VRF's and
    the stream's term lists: broadcastable to the stream rather than as large as it."""
    if isinstance(how, _View):
        return (vrf if how.order is None else vrf.transpose(how.order)).reshape(how.shape)
    return vrf[how] if how else vrf


def _reduce(op: ReduceOp, how: _Folding, values: Array, clean: bool) -> Array:
    """Fold away the terms the reduce's result no longer holds; broadcast over the ones it adds (``how``, of
    :func:`_folding`). ``clean`` says the stream is f32 with the rules applied."""
    # The removed terms first: each step of the fold then reads a row laid out as the stream is.
    moved = values if how.order is None else values.transpose(how.order)
    folded = fold(op, moved.reshape(how.rows), 0, clean)
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
