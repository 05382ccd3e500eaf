"""A vector pass run stage by stage on the physical buffer (docs/runtime.md §3.9).

The buffer is ``[Chip, Cluster, Slice, Time, Packet]`` flat, padding included, and every step
computes on every cell of it, padding too. The moves are the hardware's: a narrow split is the same
memory read as ``[Time, 2, 4]``, a trim keeps the front half of each flit, a pad writes an empty back
half, a concat is again the same memory. The intra-slice reducer accumulates the Time cells that
meet in one accumulator slot in Time order, then folds a packet of four in its two-level tree; the
inter-slice reducer folds the innermost slices of each group in ring order and writes the result
back through the output layout. A VRF operand is laid out on the stream's layout (broadcast by axis
name), the stash is the buffer as it was written.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Mapping, logical_terms, pairs, split_at
from tcpdsl.evaluate.vector_elementwise import PASSIVE, elementwise, typed
from tcpdsl.evaluate.memory import Refusing
from tcpdsl.evaluate.vector_fused import broadcast_vrf
from tcpdsl.numerics.placement import plan
from tcpdsl.numerics.term_arrays import coordinate_array
from tcpdsl.numerics.transfer import to_physical, to_terms
from tcpdsl.numerics.vector_chain import Constant, OperandValue, PassStep, VectorChain, VrfValues
from tcpdsl.numerics.vector_ops import reduce_fold, reduce_tree4
from tcpdsl.verify.inter_reduce import InterReduceParams
from tcpdsl.verify.intra_reduce import IntraReduceParams
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_way import HALF_FLIT, ONE_FLIT

Array = npt.NDArray[Any]
Layouts = tuple[Mapping, ...]


def physical(chain: VectorChain, name: str) -> Array:
    """The pass's buffer over its last layout, kept on the chain per evaluator."""
    key = f"{name}:physical"
    if key not in chain.cache and chain.steps:
        step = max(chain.steps, key=lambda s: s.mapping.size)
        # The buffer, the step's result, a stash and an operand: four arrays of up to 8 bytes a cell.
        what = lambda: f"buffers of {step.mapping.size} cells over {step.mapping}, four at a time"
        with Refusing(step.stage, what, 4 * 8 * step.mapping.size, name):
            chain.cache[key] = run_pass(chain, name)
    elif key not in chain.cache:
        chain.cache[key] = run_pass(chain, name)
    return np.asarray(chain.cache[key])


def logical(chain: VectorChain, name: str) -> Array:
    """The simulated buffer read back over the pass's last layout's logical terms."""
    return to_terms(physical(chain, name), chain.mapping, chain.terms)


def run_pass(chain: VectorChain, name: str) -> Array:
    """The flat buffer after every step of ``chain``, reading the source's buffer and the VRF operands
    as the evaluator ``name`` computes them."""
    source = np.asarray(chain.source.physical(name)).reshape(-1)
    buffer, layouts = typed(source, chain.source.dtype), chain.source.layouts
    stash: Array | None = None
    for step in chain.steps:
        stage = step.stage
        if stage is Stage.VECTOR_STASH:
            stash = buffer.copy()
        elif stage is Stage.VECTOR_NARROW_TRIM:
            buffer = buffer.reshape(-1, ONE_FLIT // HALF_FLIT, HALF_FLIT)[:, 0, :].reshape(-1)
        elif stage is Stage.VECTOR_WIDEN_PAD:
            wide = np.zeros((buffer.size // HALF_FLIT, ONE_FLIT), dtype=buffer.dtype)
            wide[:, :HALF_FLIT] = buffer.reshape(-1, HALF_FLIT)
            buffer = wide.reshape(-1)
        elif stage is Stage.VECTOR_INTRA_SLICE_REDUCE:
            buffer = _intra(step, buffer, layouts)
        elif stage is Stage.VECTOR_INTER_SLICE_REDUCE:
            buffer = _inter(step, buffer, layouts)
        elif stage not in PASSIVE and stage not in (Stage.VECTOR_NARROW_SPLIT, Stage.VECTOR_WIDEN_CONCAT):
            buffer = elementwise(step, buffer, [_read(o, step.mapping, stash, name) for o in step.operands])
        layouts = step.layouts
    return buffer


def _read(operand: OperandValue, mapping: Mapping, stash: Array | None, name: str) -> Array:
    if isinstance(operand, Constant):
        return np.asarray(operand.value)
    if isinstance(operand, VrfValues):
        return broadcast_vrf(operand.read(name), operand.terms, plan(mapping).coords)
    assert stash is not None  # the state machine lets a stash read follow a stash only
    return stash


def _slot_of(time: Mapping, out_time: Mapping, kept: list[str]) -> Array:
    """For each cell of ``time``, the cell of ``out_time`` with the same coordinates of the ``kept``
    axes (-1 for a padding cell)."""
    source, target = plan(time), plan(out_time)
    where = {tuple(int(target.coords[a][j]) if a in target.coords else 0 for a in kept): j
             for j in range(out_time.size) if target.live[j]}
    return np.array([where.get(tuple(int(source.coords[a][i]) if a in source.coords else 0 for a in kept), -1)
                     if source.live[i] else -1 for i in range(time.size)], dtype=np.int64)


def _intra(step: PassStep, buffer: Array, layouts: Layouts) -> Array:
    params = step.step.layout
    assert isinstance(params, IntraReduceParams) and step.reduce is not None
    time, packet = layouts[3], layouts[4]
    out_time, out_packet = step.layouts[3], step.layouts[4]
    cells = buffer.reshape(-1, time.size, packet.size)
    slots = _slot_of(time, out_time, [a for a in time.axes if a != step.reduce])
    acc = np.zeros((cells.shape[0], out_time.size, packet.size), dtype=buffer.dtype)
    for slot in range(out_time.size):
        steps = np.flatnonzero(slots == slot)  # in Time order: the accumulator's order
        if steps.size:
            acc[:, slot, :] = reduce_fold(step.op, cells[:, steps, :], axis=1)
    if not params.tree:
        return acc.reshape(-1)
    out = np.zeros((cells.shape[0], out_time.size, out_packet.size), dtype=buffer.dtype)
    out[:, :, 0] = reduce_tree4(step.op, acc, axis=2)
    return out.reshape(-1)


def _inter(step: PassStep, buffer: Array, layouts: Layouts) -> Array:
    params = step.step.layout
    assert isinstance(params, InterReduceParams)
    chip, cluster, slice_, time, packet = layouts
    cells = buffer.reshape(chip.size * cluster.size, slice_.size // params.ratio, params.ratio, -1)
    folded = reduce_fold(step.op, cells, axis=2)  # the ring visits the slices of a group in order
    reduced = pairs([chip, cluster, split_at(slice_, params.ratio)[0], time, packet])
    values = to_terms(folded.reshape(-1), reduced, logical_terms(reduced))
    grid, axes = coordinate_array(values, logical_terms(reduced))
    return to_physical(grid, axes, step.mapping, 0)
