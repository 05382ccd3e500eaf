"""A plan written as a kernel module: axes, aliases, the tensor types and one ``@tcp.kernel`` function.

The module has the shape of the examples in ``examples/``, so ``tcpdsl check`` and ``tcpdsl run``
take it unchanged, and its docstring says in words where every axis went.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import digit_text
from tcpdsl.planner.candidates import Candidate
from tcpdsl.planner.chain import Folded
from tcpdsl.planner.layout import Layout
from tcpdsl.errors import LayoutError
from tcpdsl.planner.problem import STAGE, Problem, Role
from tcpdsl.planner.reduce import reduce_op
from tcpdsl.planner.tiling import Tiling, loop_source

# Names the module binds besides its axes and its kernel: a kernel of one of these names would
# replace it.
MODULE_NAMES: Final = frozenset({"tcp", "m", "demo", "Chip", "Cluster", "Slice", "OutSlice", "Stream", "Weights", "Out"})


@dataclass(frozen=True)
class Texts:
    """Every mapping of the chain as the module writes it."""

    chip: str
    cluster: str
    slice: str
    stream_time: str
    stream_packet: str
    weight_time: str
    weight_packet: str
    lane: str
    element: str
    outer_time: str
    outer_packet: str
    packet_out: str
    time_out: str
    lane_time: str
    lane_packet: str
    mode: str
    out_slice: str = ""  # a split reduction's reduced Slice ("" when the plan splits nothing)


def texts(chain: Folded) -> Texts:
    c = chain.reduced.candidate
    return Texts(
        c.grid.chip.text(), c.grid.cluster.text(), c.grid.slice.text(), c.stream_time.text(), c.packing.flit.text(),
        c.weight_time.text(), c.weight_packet.text(), c.lane.text(), c.element.text(), c.outer_time.text(),
        c.packing.packet.text(), c.packing.kept.text(), c.time_out.text(), chain.lane_layouts[0].text(),
        chain.lane_layouts[1].text(),
        chain.mode.name,
        "" if chain.split is None else chain.split.out_slice.text(),
    )


def check_kernel_name(name: object, problem: Problem) -> None:
    """Refuse a kernel name the module cannot define: not an identifier, a keyword, a dunder, or a
    name the module already binds (its axes and types)."""
    hint = "use a name like plan_1"
    if not isinstance(name, str):
        raise LayoutError(STAGE, "KernelName", f"the kernel name must be a string, got {type(name).__name__}", hint=hint)
    if not name.isidentifier() or keyword.iskeyword(name):
        raise LayoutError(STAGE, "KernelName", f"{name!r} is not a Python identifier a function can take", hint=hint)
    if name.startswith("__") and name.endswith("__"):
        raise LayoutError(STAGE, "KernelName", f"{name!r} is a special name of Python", hint=hint)
    if name in MODULE_NAMES or name in problem.sizes:
        raise LayoutError(
            STAGE, "KernelName", f"{name!r} is already a name of the plan's module (an axis, a layout or a type)",
            hint=hint,
        )


def check_axis_names(problem: Problem) -> None:
    """Refuse an axis named like one of the module's layouts or types, which its declaration would replace."""
    for name in problem.given_sizes:
        if name in MODULE_NAMES:
            raise LayoutError(
                STAGE, "AxisName", f"axis {name} has the name of a layout or type of the plan's module",
                hint="rename the axis with axes=, e.g. axes={\"c\": \"Ch\"}",
            )


def _m(text: str) -> str:
    return f'm["{text}"]'


def _where(problem: Problem, c: Candidate) -> list[str]:
    """One sentence per axis: which of its digits sit where."""
    places: list[tuple[str, Layout]] = [
        ("Chip", c.grid.chip), ("Cluster", c.grid.cluster), ("Slice", c.grid.slice), ("Lane", c.lane),
        ("the packet", c.packing.packet), ("Time", c.outer_time),
    ]
    lines = []
    for axis in problem.sizes:
        parts = []
        for place, layout in places:
            digits = [digit_text(d) for d in layout.digits if d.axis == axis]
            if digits:
                parts.append(f"{', '.join(digits)} in {place}")
        role = problem.role(axis)
        summed = " (summed)" if role is Role.CONTRACTED else ""
        lines.append(f"* {axis}={problem.extent(axis)}{summed}: {'; '.join(parts)}.")
    return lines


def _out_type(t: Texts, acc: str) -> list[str]:
    """The kernel's result type: the Lane Folder's, or the reducer's pass on OutSlice."""
    if not t.out_slice:
        return [f"Out = tcp.ContractTensor[{acc}, Chip, Cluster, Slice, {_m(t.lane_time)}, {_m(t.lane_packet)}]"]
    return [
        f"OutSlice = {_m(t.out_slice)}",
        f"Out = tcp.VectorFinalTensor[{acc}, Chip, Cluster, OutSlice, {_m(t.lane_time)}, {_m(t.lane_packet)}]",
    ]


def _reduce_calls(problem: Problem, t: Texts) -> list[str]:
    """The pass that adds a split reduction's partial sums (none for a plan that splits nothing)."""
    if not t.out_slice:
        return []
    op = reduce_op(problem)
    return [
        "        .vector_init()",
        f"        .vector_inter_slice_reduce(tcp.{type(op).__name__}.{op.name}, out_slice=OutSlice, "
        f"out_time={_m(t.lane_time)})",
        "        .vector_final()",
    ]


def module_source(problem: Problem, chain: Folded, name: str, headline: str, tiling: Tiling | None = None) -> str:
    """The complete module text of ``chain`` with the kernel function ``name`` (and its tile loop
    ``{name}_tiles`` when the plan is tiled)."""
    t = texts(chain)
    c = chain.reduced.candidate
    cost = chain.cost
    stream_names = ", ".join(problem.stream_axes) or "a scalar"
    weight_names = ", ".join(problem.weight_axes) or "a scalar"
    params = chain.reduced.outer
    doc = [
        headline,
        "",
        f"The stream x[{stream_names}] ({problem.stream_dtype}) meets TRF weights w[{weight_names}] "
        f"({problem.weight_dtype}); the result accumulates in {problem.accumulator}.",
        *_where(problem, c),
        "",
        f"PackSize {params.pack_size}, ReadSize {params.read_size}, packet tree depth {chain.reduced.packet.depth}, "
        f"{chain.mode.value} lane folding with InnerTime {chain.lane.inner_time}.",
        f"Estimated per slice: {chain.whole.total_cycles} cycles for the whole kernel, of which the contraction "
        f"takes {cost.total_cycles}; MAC utilisation {100 * cost.mac_utilisation:.1f}%, "
        f"accumulator {cost.accumulator_cells} of 1024 cells.",
    ]
    if chain.split is not None:
        axis, count = next(iter(problem.split.items()))
        doc += [
            "",
            f"A split reduction: each of {count} slices sums {problem.sizes[axis]} cells of {axis}, and the "
            f"vector engine's inter-slice reducer adds their partial sums into OutSlice ({chain.split.cycles} cycles).",
        ]
    if tiling is not None:
        doc += [
            "",
            f"The weights exceed the TRF: {name}_tiles runs {name} once per tile {tiling.digit} "
            f"({tiling.count} tiles of {tiling.size}), {tiling.count * chain.whole.total_cycles} cycles in all.",
        ]
    axes = [f'{a} = tcp.axis("{a}", {n})' for a, n in problem.written.items()]
    stream_t, weight_t, acc_t = (f"tcp.{d}" for d in (problem.stream_dtype, problem.weight_dtype, problem.accumulator))
    lines = [
        '"""' + "\n".join(doc) + '\n"""',
        "",
        *(["import numpy as np", ""] if tiling is not None else []),
        "import tcpdsl as tcp",
        "from tcpdsl import m",
        "",
        *axes,
        "",
        f"Chip = {_m(t.chip)}",
        f"Cluster = {_m(t.cluster)}",
        f"Slice = {_m(t.slice)}",
        "",
        f"Stream = tcp.CollectTensor[{stream_t}, Chip, Cluster, Slice, {_m(t.stream_time)}, {_m(t.stream_packet)}]",
        f"Weights = tcp.CollectTensor[{weight_t}, Chip, Cluster, Slice, {_m(t.weight_time)}, {_m(t.weight_packet)}]",
        *_out_type(t, acc_t),
        "",
        "",
        "@tcp.kernel",
        f"def {name}(x: Stream, w: Weights) -> Out:",
        f"    trf = w.to_trf(lane={_m(t.lane)}, element={_m(t.element)})",
        "    return (",
        f"        x.contract_outer(trf, out_time={_m(t.outer_time)}, out_packet={_m(t.outer_packet)})",
        f"        .contract_packet(out_packet={_m(t.packet_out)})",
        f"        .contract_time(out_time={_m(t.time_out)})",
        f"        .contract_lane(out_time={_m(t.lane_time)}, out_packet={_m(t.lane_packet)}, "
        f"mode=tcp.LaneMode.{t.mode})",
        *_reduce_calls(problem, t),
        "    )",
        *(loop_source(problem, tiling, name) if tiling is not None else []),
        "",
        "",
        'if __name__ == "__main__":',
        "    from tcpdsl.harness.oracle import demo",
        "",
        f"    demo({name})",
        "",
    ]
    return "\n".join(lines)
