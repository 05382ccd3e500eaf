"""The lazy value of a stream: where it starts and the steps recorded on it since (docs/architecture.md,
"Adding a stream stage").

A memory tensor or a stream position holds a :class:`Flow`. Its :class:`Root` is data laid out on a
mapping (a memory tensor built from a logical tensor, or a contraction result read through its
chain); each :class:`Step` is one stage call: the physical mapping and dtype after it, the
parameters its verifier derived and the tensor-unit context it ran in. Nothing moves while a flow
is built; an evaluator reads it (``evaluate``): the fused one converts the logical values at each
change of dtype, the simulator moves a physical buffer through every step.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy.typing as npt

from tcpdsl.algebra import Mapping, Digit
from tcpdsl.numerics.term_arrays import Fixed
from tcpdsl.verify.scatter import ScatterParams

Array = npt.NDArray[Any]
# A physical buffer over a mapping (1-D) and its poison mask (1 where a cell holds no defined value).
Buffer = tuple[Array, npt.NDArray[Any]]
# Steps and flows are numbered as they are recorded, so a schedule can lay streams out in the order the
# kernel recorded them (docs/trace.md).
_SERIALS = itertools.count()


@dataclass(frozen=True, eq=False)
class Root:
    """Where a flow starts: data of ``dtype`` over ``terms`` laid out on ``mapping``.

    ``logical`` gives the values over ``terms`` as the named evaluator computes them; ``physical``,
    when given, the physical buffer and its poison mask (a contraction result's, or a memory tensor's
    that an earlier flow wrote); without it the buffer is the logical values laid out, Top padding
    poisoned.
    """

    mapping: Mapping
    dtype: str
    terms: tuple[Digit, ...]
    fixed: tuple[Fixed, ...]
    logical: Callable[[str], Array] = field(repr=False)
    physical: Callable[[str], Buffer] | None = field(default=None, repr=False)
    # What an independent check starts from: the logical tensor laid out, the contraction chain, the
    # flow of a whole view's tensor, or a Window / Written of another flow.
    source: object = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class Window:
    """A root that is a window of ``parent``'s last position (``element`` cells per slice): Element cell
    ``p`` of the window is cell ``p + offset`` of the parent."""

    parent: Flow
    element: int
    offset: int


@dataclass(frozen=True, eq=False)
class Written:
    """A root that is ``parent`` after ``written`` (a flow ending on a window ``offset`` cells in) wrote
    the window's live cells."""

    parent: Flow
    written: Flow
    element: int
    offset: int


@dataclass(frozen=True, eq=False)
class Scattered:
    """A root that is ``parent`` after a scatter (``dma_scatter``): each key value's row of ``data`` written at
    the row of the scattered axis that its byte offset in ``index`` names. ``moved`` is ``data`` one DMA step
    further, the step a schedule draws; the values are read from ``data``, whose cells the step does not change."""

    parent: Flow
    data: Flow
    moved: Flow
    index: Flow
    params: ScatterParams
    # The terms the result is held over (the parent's, or its layout's when the parent's values repeat along an
    # axis its layout holds), and the terms the data's and the index's layouts hold.
    terms: tuple[Digit, ...]
    data_layout: tuple[Digit, ...]
    index_layout: tuple[Digit, ...]


@dataclass(frozen=True, eq=False)
class Step:
    """One stage call: the position's physical mapping and dtype after it, and what the verifier derived.

    Every step moves cells by their logical coordinates (docs/runtime.md §4); a change of dtype is
    the RNGD cast of the values. ``source`` and ``layouts`` are the layouts before and after the step,
    one mapping per layout parameter, for the engines the simulator models unit by unit (the switch's
    ring, the transpose's matrix).
    """

    stage: str
    mapping: Mapping
    dtype: str
    params: Any = None
    context: str | None = None
    packets: int = 1  # the position's Time size: how many packets the engine passes
    layout: str = ""  # the position's layouts past the grid, as reports show them
    relu: bool = False  # the values are clamped at 0 before the cast (commit_cast_relu)
    source: tuple[Mapping, ...] = ()
    layouts: tuple[Mapping, ...] = ()
    serial: int = field(default_factory=_SERIALS.__next__, repr=False)


@dataclass(frozen=True, eq=False)
class Flow:
    """A root and the steps taken from it; the values are computed by an evaluator and kept per evaluator.

    ``cache`` holds them under ``<evaluator>:logical`` (the values over the root's terms) and
    ``<evaluator>:physical`` (the buffer over the last mapping and its poison mask); for a flow without
    steps these are its root's own values, so a root may fill them itself.
    """

    root: Root
    steps: tuple[Step, ...] = ()
    cache: dict[str, Any] = field(default_factory=dict, repr=False)
    serial: int = field(default_factory=_SERIALS.__next__, repr=False)

    def then(self, step: Step) -> Flow:
        """The flow one stage further."""
        return Flow(self.root, (*self.steps, step))

    def changes(self) -> tuple[Step, ...]:
        """The steps that change values, in order: a cast to a new dtype, or the commit adapter's clamp. Every
        other step only moves cells. Kept on the flow (an evaluator asks each time it computes the values),
        written into its fields as the fast constructors write them: a cached_property takes a lock."""
        fields = self.__dict__
        found: tuple[Step, ...] | None = fields.get("_changes")
        if found is None:
            changing, dtype = [], self.root.dtype
            for step in self.steps:
                if step.relu or step.dtype != dtype:
                    changing.append(step)
                    dtype = step.dtype
            found = fields["_changes"] = tuple(changing)
        return found

    @property
    def mapping(self) -> Mapping:
        """The physical mapping of the last position."""
        return self.steps[-1].mapping if self.steps else self.root.mapping

    @property
    def dtype(self) -> str:
        return self.steps[-1].dtype if self.steps else self.root.dtype

    @property
    def evaluated(self) -> tuple[str, ...]:
        """The evaluators that have computed this flow's values, first first: each keeps them in ``cache``
        under keys that begin with its name and a colon."""
        return tuple(dict.fromkeys(key.partition(":")[0] for key in self.cache))

    @property
    def context(self) -> str:
        """The tensor-unit context of the stream (``main`` unless a step says otherwise)."""
        for step in reversed(self.steps):  # a loop, not a generator: a commit asks on every call
            if step.context is not None:
                return step.context
        return "main"
