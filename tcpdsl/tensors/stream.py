"""What memory tensors and stream positions share: a lazy :class:`~tcpdsl.numerics.flow.Flow` and one step method.

A stream position is a class of its own per family (docs/architecture.md, "Adding a stream stage"),
with only the methods of the stages that may follow it. Each such method is a few lines: read the
row's mappings (:meth:`TensorBase._mappings`), compose the row (:meth:`TensorBase._compose`), and
:meth:`FlowTensor._advance` records the step on the flow. Values are computed by the selected
evaluator when they are read.
"""

from __future__ import annotations

from typing import Any

from tcpdsl.cost import KernelCost, chain_cost, stream_cost, stream_params, stream_stage_cost
from tcpdsl.algebra import held
from tcpdsl.evaluate.backend import get as get_evaluator
from tcpdsl.numerics.chain import Chain
from tcpdsl.numerics.flow import Buffer, Flow, Root, Scattered, Window, Written
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.moves import window, write_window
from tcpdsl.numerics.term_arrays import axes_of
from tcpdsl.tensors.base import Array, TensorBase
from tcpdsl.tensors.filled import FLOW_SERIAL
from tcpdsl.tensors.recording import baked, values_read
from tcpdsl.tensors.subscription import Spec
from tcpdsl.verify.scatter import ScatterParams
from tcpdsl.verify.stage import Stage


def flow_cost(flow: Flow) -> KernelCost:
    """Each engine's cycles and the stream's total (docs/cost-model.md §4), after the chain it starts from."""
    source = flow.root.source
    stages = tuple(stream_stage_cost(Stage(s.stage), s.params, s.packets) for s in flow.steps)
    return stream_cost(stages, chain_cost(source) if isinstance(source, Chain) else None)


def root_of(spec: Spec, tensor: Tensor) -> Flow:
    """A flow starting at ``tensor`` laid out on ``spec``'s layout (the same values for every evaluator)."""
    values = tensor.values
    return Flow(Root(spec.mapping, spec.tensor_type.dtype, tensor.terms, tensor.fixed_terms, lambda name: values,
                     source=tensor))


def buffer_of(flow: Flow, name: str) -> Buffer:
    """The physical buffer and poison mask of ``flow``'s last position, as the evaluator ``name`` computes it."""
    return get_evaluator(name).flow_buffer(flow)


def window_flow(parent: Flow, element: int, spec: Spec, offset: int) -> Flow:
    """The flow of a window (a tile, a padded view) over ``spec`` of ``parent``, whose Element has ``element``
    cells, ``offset`` of them in."""
    dtype, mapping = spec.dtype, spec.mapping

    def physical(name: str) -> Buffer:
        return window(buffer_of(parent, name), element, offset, mapping, dtype)

    # A view of the whole tensor holds the tensor's own elements; a tile, the terms of its window.
    parent_mapping = parent.mapping
    whole = offset == 0 and (mapping is parent_mapping or mapping == parent_mapping)
    terms, fixed = (parent.root.terms, parent.root.fixed) if whole else (spec.terms, ())

    def logical(name: str) -> Array:
        # A whole view moves no cell: its values are the tensor's, as the evaluator computes them (the
        # fused one without laying the tensor out; docs/runtime.md §4).
        if whole:
            return get_evaluator(name).flow_logical(parent)
        return get_evaluator(name).flow_window(parent, element, offset, mapping, terms, dtype)

    # Written field by field as tensors.filled writes them, without its per-class plan: a kernel takes a view
    # per stream it begins.
    root = object.__new__(Root)
    root.__dict__.update(mapping=mapping, dtype=dtype, terms=terms, fixed=fixed, logical=logical, physical=physical,
                         source=parent if whole else Window(parent, element, offset))
    flow = object.__new__(Flow)
    flow.__dict__.update(root=root, steps=(), cache={}, serial=FLOW_SERIAL())
    return flow


def settled(flow: Flow) -> Flow:
    """``flow``, or, when it is a write into a memory tensor whose values an evaluator has read, those values
    as a root of their own, as if placed from the host (docs/runtime.md §4, "Writes read once").

    The write's links (to the tensor before it and to the stream it wrote) are what a schedule draws and an
    oracle follows; once its values are known, a later write needs none of them, so a tensor written once
    per step (a KV cache) holds one step's links and values, not every earlier step's. Each evaluator that
    read the values keeps them; another reads them laid out as from the host.
    """
    root, names = flow.root, flow.evaluated
    if flow.steps or not isinstance(root.source, (Written, Scattered)) or not names:
        return flow
    baked("a write into a tensor whose earlier write was read while the body ran")
    values = get_evaluator(names[0]).flow_logical(flow)
    return Flow(Root(root.mapping, root.dtype, root.terms, root.fixed, lambda name: values,
                     source=Tensor.of_terms(values, root.terms, root.fixed)), cache=dict(flow.cache))


def written_flow(parent: Flow, written: Flow, element: int, offset: int) -> Flow:
    """``parent`` (``element`` cells per slice) after ``written``, a flow ending on a window of it ``offset``
    cells in, is written into it; an earlier write into ``parent`` whose values were read is kept as its
    values (:func:`settled`)."""
    parent = settled(parent)
    mapping, root = parent.mapping, parent.root
    # The flow's own cache: a flow that continues the tensor (a DMA out of it) shares its root, so the write
    # is computed once per evaluator and the tensor knows that its values were read.
    kept: dict[str, Any] = {}

    def physical(name: str) -> Buffer:
        key = f"{name}:physical"
        if key not in kept:
            kept[key] = write_window(buffer_of(parent, name), buffer_of(written, name), element, offset,
                                     written.mapping)
        return kept[key]  # type: ignore[no-any-return]

    def logical(name: str) -> Array:
        key = f"{name}:logical"
        if key not in kept:
            kept[key] = get_evaluator(name).flow_written(parent, written, element, offset)
        return kept[key]  # type: ignore[no-any-return]

    return Flow(Root(mapping, parent.dtype, root.terms, root.fixed, logical, physical,
                     source=Written(parent, written, element, offset)), cache=kept)


def scattered_flow(parent: Flow, data: Flow, moved: Flow, index: Flow, params: ScatterParams) -> Flow:
    """``parent`` after ``data``'s rows are scattered into it at the byte offsets ``index`` holds (``moved``: ``data``
    with the scatter's step); an earlier write into ``parent`` whose values were read is kept as its values
    (:func:`settled`). Laid out from its values, as a tensor placed from the host is: the scatter moves whole rows,
    which the layouts place as they place any cell."""
    parent = settled(parent)
    root = parent.root
    layout = held(parent.mapping).terms
    # A tensor whose values repeat along an axis its layout holds (filled by a broadcast) is held over that axis
    # once rows are scattered along it.
    terms, fixed = (root.terms, root.fixed) if set(axes_of(layout)) <= set(axes_of(root.terms)) else (layout, ())
    source = Scattered(parent, data, moved, index, params, terms, held(data.mapping).terms, held(index.mapping).terms)
    kept: dict[str, Any] = {}  # the flow's own cache, as written_flow keeps it

    def logical(name: str) -> Array:
        key = f"{name}:logical"
        if key not in kept:
            kept[key] = get_evaluator(name).flow_scattered(source)
        return kept[key]  # type: ignore[no-any-return]

    return Flow(Root(parent.mapping, parent.dtype, terms, fixed, logical, source=source), cache=kept)


class FlowTensor(TensorBase):
    """A tensor whose value is a flow: a memory tensor or a stream position."""

    __slots__ = ("_flow",)
    _flow: Flow

    @classmethod
    def _of_flow(cls, spec: Spec, flow: Flow) -> Any:
        out = object.__new__(cls)
        out._spec = spec
        out._flow = flow
        return out

    @property
    def flow(self) -> Flow:
        """The root and the steps an evaluator reads."""
        return self._flow

    def _advance(self, cls: type[FlowTensor], stage: Stage, mappings: dict[str, Any], *operands: Spec,
                 unit: str | None = None, **others: Any) -> Any:
        """The next position: compose the stage's row (``others`` are its options and carried values),
        then record the step on the flow; ``unit`` names the tensor-unit context a stream begins in."""
        out = object.__new__(cls)  # as _of_flow builds it, one call fewer on every stage call
        out._spec, out._flow = self._recorded(self._flow, stage, mappings, operands, others, unit, source=True)
        return out

    def to_tensor(self) -> Tensor:
        """The logical values, in this position's dtype, computed by the selected evaluator."""
        values_read()
        root = self._flow.root
        return Tensor.of_terms(get_evaluator().flow_logical(self._flow), root.terms, root.fixed)

    def physical(self) -> Array:
        values_read()
        return get_evaluator().flow_physical(self._flow).reshape(self._dims())

    def _describe(self) -> str:
        """Each step: the stage, the position's layout and dtype, its derived parameters and cycles; then the total."""
        cost = flow_cost(self._flow)
        engines = cost.stages[len(cost.stages) - len(self._flow.steps):]
        lines = [self._spec.text()]
        for step, stage in zip(self._flow.steps, engines):
            derived = ", ".join(f"{k} {v}" for k, v in stream_params(step.params).items())
            lines.append(f"  {step.stage} -> {step.layout} ({step.dtype}): {stage.cycles} cycles"
                         + (f"; {derived}" if derived else ""))
        lines.append(f"  total: {cost.total_cycles} cycles per slice")
        return "\n".join(lines)
