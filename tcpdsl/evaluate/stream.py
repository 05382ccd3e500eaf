"""How each evaluator runs the steps of a stream :class:`~tcpdsl.numerics.flow.Flow` (docs/runtime.md §4).

The fused evaluator computes logical values: moving cells changes no value, so only a change of
dtype does anything (the RNGD cast). The simulator moves a physical buffer through every step with
the one generic move of :mod:`tcpdsl.numerics.moves`, Top padding poisoned, and reports the first
step at which a live cell holds poison. Each keeps its result on the flow, per evaluator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.errors import LayoutError
from tcpdsl.evaluate.memory import Refusing
from tcpdsl.numerics.flow import Buffer, Flow, Scattered, Step, Window, Written
from tcpdsl.numerics.vector_chain import VectorChain
from tcpdsl.numerics.moves import convert, lay_out, live_poison, move
from tcpdsl.numerics.scalars import poison
from tcpdsl.numerics.switch_ops import ring_pass, switch_route
from tcpdsl.numerics.term_arrays import distinct
from tcpdsl.numerics.transfer import to_terms
from tcpdsl.numerics.transpose_ops import transpose_flits
from tcpdsl.verify.stage import Stage

Array = npt.NDArray[Any]


def fused_logical(flow: Flow, name: str) -> Array:
    """The flow's values over its root's terms: the root's values cast at each change of dtype, each
    distinct value once where the root repeats one along a term (read-only then).

    A flow whose values came out of the RNGD conversion to its dtype says so (``<evaluator>:canonical``,
    holding those very values; see :func:`converted`): a whole view of a bf16 one widens them without the
    scan for patterns a cast never leaves, and a pass reads an f32 one without its scan.
    """
    key, mark = CACHE_KEYS[name]
    found: Array | None = flow.cache.get(key)
    if found is None:
        start = flow.root
        source = start.source
        if type(source) is Flow:
            # A whole view of a tensor (the only root whose source is a flow): its values are the tensor's, as
            # its root reads them, without the root's call through the evaluator table.
            root = fused_logical(source, name)
            canonical = source.cache.get(mark) is root
        else:
            root = start.logical(name)
            if type(source) is VectorChain:  # a pass's result read as it is (or a view of it) keeps its mark
                canonical = converted(root, source, name)
            elif type(source) is Window:
                canonical = source.parent.dtype == start.dtype and _marked(source.parent, key, mark)
            elif type(source) is Written:
                canonical = (source.parent.dtype == start.dtype == source.written.dtype
                             and _marked(source.parent, key, mark) and _marked(source.written, key, mark))
            elif type(source) is Scattered:
                canonical = (source.parent.dtype == start.dtype == source.data.dtype
                             and _marked(source.parent, key, mark) and _marked(source.data, key, mark))
            else:
                canonical = False
        values, dtype = root, start.dtype
        for step in flow.changes():  # most steps only move cells: nothing to compute for them
            if values is root and 0 in root.strides:
                values = distinct(root)  # a replicated term is computed once, then broadcast
            if step.relu:
                values, canonical = np.maximum(values, 0), False
            if step.dtype != dtype:
                values, dtype = convert(values, dtype, step.dtype, canonical=canonical), step.dtype
                canonical = True
        # Values no step changed are the root's own, not a broadcast of their distinct part rebuilt.
        found = flow.cache[key] = values if values.shape == root.shape else np.broadcast_to(values, root.shape)
        if canonical and dtype in ("bf16", "f32"):
            flow.cache[mark] = found
    return found


def _marked(flow: Flow, key: str, mark: str) -> bool:
    """Whether ``flow``'s values, computed under ``key``, are marked as converted under ``mark``. A window's cells,
    and a tensor's with a window's cells written or rows scattered in, are cells of such values, moved and not
    changed (a window reads padding as 0 or the canonical NaN): converted when every flow they come from was."""
    values = flow.cache.get(key)
    return values is not None and flow.cache.get(mark) is values


class _Keys(dict[str, tuple[str, str]]):
    """Per evaluator name, the keys it keeps a flow's or a pass's values under, and their mark (:func:`converted`):
    built on the first read, then a plain lookup (every read of a node asks)."""

    def __missing__(self, name: str) -> tuple[str, str]:
        found = self[name] = (f"{name}:logical", f"{name}:canonical")
        return found


CACHE_KEYS: Final = _Keys()


def kept_as_placed(flow: Flow, values: Array, name: str) -> dict[str, Any]:
    """The cache of a flow without steps that holds ``values``, ``flow``'s values as the evaluator ``name``
    computed them: those values, and their mark when ``flow`` marked them as converted (:func:`converted`)."""
    key, mark = CACHE_KEYS[name]
    kept: dict[str, Any] = {key: values}
    if flow.cache.get(mark) is values:
        kept[mark] = values
    return kept


def converted(values: Array, flow: object, name: str) -> bool:
    """Whether ``values`` are cells of what ``flow`` (a :class:`Flow` or a vector pass, else nothing is known)
    marked as converted by the RNGD rules, in its dtype: bf16 with no subnormal and only the canonical NaN, or
    f32 flushed. A marked array's memory belongs to a conversion's result (or a broadcast of it), all of whose
    cells are converted; so does that of any view of it, which is what a read that moves no value gives."""
    if not isinstance(flow, (Flow, VectorChain)):
        return False
    mark: Array | None = flow.cache.get(CACHE_KEYS[name][1])
    if mark is None or values.dtype != mark.dtype:
        return False
    # The arrays that own the memory of each (walked here: a pass asks this of its source and each VRF read).
    while isinstance(values.base, np.ndarray):
        values = values.base
    while isinstance(mark.base, np.ndarray):
        mark = mark.base
    return values is mark


def simulated(flow: Flow, name: str) -> Buffer:
    """The flow's physical buffer over its last mapping and its poison mask, moved step by step."""
    key = f"{name}:physical"
    found = flow.cache.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    if not flow.steps:
        found = flow.cache[key] = _moved(flow, name)
        return found
    step = max(flow.steps, key=lambda s: s.mapping.size)
    largest = step.mapping if step.mapping.size >= flow.root.mapping.size else flow.root.mapping
    what = lambda: f"buffers of {largest.size} cells over {largest} with their poison masks"
    with Refusing(step.stage, what, _MOVE_BYTES * largest.size, name):
        found = flow.cache[key] = _moved(flow, name)
    return found


# A move holds its source and its destination: values of up to 8 bytes and a 1-byte poison mask each.
_MOVE_BYTES: Final = 2 * (8 + 1)


def _moved(flow: Flow, name: str) -> Buffer:
    root = flow.root
    buffer = root.physical(name) if root.physical is not None else lay_out(
        root.logical(name), root.terms, root.mapping, root.dtype)
    mapping, dtype = root.mapping, root.dtype
    for step in flow.steps:
        engine = _ENGINES.get(step.stage)
        if engine is None:
            values, mask = move(buffer, mapping, step.mapping, root.terms, dtype)
        else:
            values, mask = engine(buffer, step)
        values = np.where(np.isnan(values), values, np.maximum(values, 0)) if step.relu else values
        buffer = convert(values, dtype, step.dtype), mask
        mapping, dtype = step.mapping, step.dtype
        bad = live_poison(mask, mapping)
        if bad:
            raise LayoutError(
                step.stage, "UndefinedPadding",
                f"{step.stage}: {bad} live cell(s) of {mapping} read undefined (Top) padding or cells the "
                f"source never held; the hardware moves whatever those cells hold",
                hint="read only what the source holds: zero the padding (#{0}) or use a window that holds it",
            )
    return buffer


def simulated_logical(flow: Flow, name: str) -> Array:
    """The simulated buffer read back over the root's terms."""
    return to_terms(simulated(flow, name)[0], flow.mapping, flow.root.terms)


def _ring(buffer: Buffer, step: Step) -> Buffer:
    """The switch: each packet carried round its sub-ring to the slices that keep it (docs/runtime.md §3.10)."""
    chip, cluster, slice_, time, packet = step.source
    out_slice, out_time = step.layouts[2:4]
    route = switch_route(slice_, time, out_slice, out_time, step.params.ring_size)
    shape = (chip.size * cluster.size, slice_.size, time.size, packet.size)
    values, mask = buffer
    return (ring_pass(values.reshape(shape), route, poison(step.dtype)).reshape(-1),
            ring_pass(np.asarray(mask).reshape(shape), route, 1).reshape(-1))


def _transposed(buffer: Buffer, step: Step) -> Buffer:
    """The transpose: each matrix of rows and packets written out column by column (docs/runtime.md §3.10)."""
    time, packet = step.source[3:5]
    shape = (-1, time.size, packet.size)
    values, mask = buffer
    return (transpose_flits(values.reshape(shape), step.params, poison(step.dtype)).reshape(-1),
            transpose_flits(np.asarray(mask).reshape(shape), step.params, 1).reshape(-1))


# The engines the simulator runs unit by unit; every other step is the generic move.
_ENGINES: Final[dict[str, Callable[[Buffer, Step], Buffer]]] = {Stage.SWITCH: _ring, Stage.TRANSPOSE: _transposed}
