"""How each evaluator runs the steps of a stream :class:`~tcpdsl.numerics.flow.Flow` (docs/runtime.md §4).

The fused evaluator computes logical values: moving cells changes no value, so only a change of
dtype does anything (the RNGD cast). The simulator moves a physical buffer through every step with
the one generic move of :mod:`tcpdsl.numerics.moves`, Top padding poisoned, and reports the first
step at which a live cell holds poison. Each keeps its result on the flow, per evaluator.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.errors import LayoutError
from tcpdsl.numerics.flow import Buffer, Flow
from tcpdsl.numerics.moves import convert, lay_out, live_poison, move
from tcpdsl.numerics.transfer import to_terms

Array = npt.NDArray[Any]


def fused_logical(flow: Flow, name: str) -> Array:
    """The flow's values over its root's terms: the root's values cast at each change of dtype."""
    key = f"{name}:logical"
    found = flow.cache.get(key)
    if found is None:
        values, dtype = flow.root.logical(name), flow.root.dtype
        for step in flow.steps:
            values = np.maximum(values, 0) if step.relu else values
            values, dtype = convert(values, dtype, step.dtype), step.dtype
        found = flow.cache[key] = values
    return np.asarray(found)


def simulated(flow: Flow, name: str) -> Buffer:
    """The flow's physical buffer over its last mapping and its poison mask, moved step by step."""
    key = f"{name}:physical"
    found = flow.cache.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    root = flow.root
    buffer = root.physical(name) if root.physical is not None else lay_out(
        root.logical(name), root.terms, root.mapping, root.dtype)
    mapping, dtype = root.mapping, root.dtype
    for step in flow.steps:
        values, mask = move(buffer, mapping, step.mapping, root.terms, dtype)
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
    flow.cache[key] = buffer
    return buffer


def simulated_logical(flow: Flow, name: str) -> Array:
    """The simulated buffer read back over the root's terms."""
    return to_terms(simulated(flow, name)[0], flow.mapping, flow.root.terms)
