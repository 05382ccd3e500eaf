"""A split reduction's last step: the partial sums of each group of slices added by the vector engine.

A plan that cuts a contracted axis over the slices (docs/search.md §5) leaves each slice the sums
over its share. ``vector_init``, ``vector_inter_slice_reduce`` and ``vector_final`` on the Lane
Folder's result add them across the innermost Slice digit, which the reduced Slice replaces with
padding: each group's total lands in one slice. The pass is composed by :mod:`tcpdsl.verify`, as
the emitted module's methods compose it, and costed by the vector engine's model.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcpdsl.algebra import Mapping
from tcpdsl.cost import VectorPassCost, vector_pass_cost
from tcpdsl.planner.layout import Group, Layout
from tcpdsl.planner.problem import Problem
from tcpdsl.verify import vector_compose
from tcpdsl.verify.families import TensorType
from tcpdsl.verify.inter_reduce import InterReduceParams
from tcpdsl.verify.vector_ops import InterReduceOp, InterSliceReduceOpF32, InterSliceReduceOpI32



@dataclass(frozen=True)
class SplitReduce:
    """The reducer's OutSlice, what its rules derived, and the pass's cycles."""

    out_slice: Layout
    params: InterReduceParams
    cost: VectorPassCost

    @property
    def cycles(self) -> int:
        return self.cost.cycles + self.cost.latency


def reduce_op(problem: Problem) -> InterReduceOp:
    """The reducer's add for the accumulator's dtype."""
    return InterSliceReduceOpI32.ADD if problem.accumulator == "i32" else InterSliceReduceOpF32.ADD


def reduced_slice(problem: Problem, slice_: Layout) -> Layout:
    """``slice_`` with its innermost digits, the split axis, replaced by as many padded slots."""
    count = problem.split_count
    kept = slice_.split(count)
    assert kept is not None  # the grid puts the split digit innermost (tcpdsl/planner/grid.py)
    return Layout((*kept[0].parts, Group((), count)))


def reduce_partials(problem: Problem, slice_: Layout, result: TensorType, lane_time: Mapping) -> SplitReduce | None:
    """Compose and cost the pass that adds the partial sums (None for a plan that splits nothing)."""
    if not problem.split:
        return None
    out_slice = reduced_slice(problem, slice_)
    entered, init = vector_compose.vector_init(result)
    reduced, step = vector_compose.vector_inter_slice_reduce(
        entered, out_slice=out_slice.mapping, out_time=lane_time, op=reduce_op(problem), state=init.state
    )
    _, final = vector_compose.vector_final(reduced, state=step.state)
    assert isinstance(step.layout, InterReduceParams)
    cost = vector_pass_cost(final.state, way8_time=lane_time, inter=step.layout)
    return SplitReduce(out_slice, step.layout, cost)
