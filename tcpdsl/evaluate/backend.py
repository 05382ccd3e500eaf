"""The evaluators by name, and the one selected for the current context.

The tensor layer above imports :func:`get` directly; the table below is written out, so every
evaluator is known as soon as this module is imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final, Protocol

import numpy.typing as npt

from tcpdsl.algebra import Digit, Mapping
from tcpdsl.errors import TcpError
from tcpdsl.evaluate.fused import FusedEvaluator
from tcpdsl.evaluate.simulate import SimulateEvaluator
from tcpdsl.numerics.chain import Chain
from tcpdsl.numerics.flow import Buffer, Flow, Scattered
from tcpdsl.numerics.vector_chain import VectorChain

DEFAULT: Final = "fused"


class UnknownEvaluatorError(TcpError, LookupError):
    """An evaluator name that is not in the table."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown evaluator {name!r}; known evaluators: {', '.join(known)}")


class Evaluator(Protocol):
    """Turns a chain into the result of its last stage.

    ``run`` returns the physical buffer: a 1-D array over ``chain.result_mapping().size`` cells in
    the accumulator's numpy dtype, with every padding cell 0. ``logical`` returns what ``run``
    holds read back with one dimension per term the result's mapping holds
    (``logical_terms(chain.result_mapping())``), without building the physical buffer when it
    can avoid it. ``flow_logical`` and ``flow_physical`` do the same for a stream flow
    (:mod:`tcpdsl.evaluate.stream`): its values over its root's terms, and its buffer over its last
    mapping (``flow_buffer``: with its poison mask); ``flow_read`` reads that buffer through another
    mapping, as ``reshape`` does, ``flow_window`` reads a window of it (a tile, a padded view), and
    ``flow_written`` reads it back after a write into a window of it, ``flow_scattered`` after a scatter.
    ``vector_logical`` and ``vector_physical`` do the same
    for a vector pass (docs/runtime.md §3.9): its values over its last layout's logical terms, and its buffer
    over that layout.
    """

    name: str

    def run(self, chain: Chain) -> npt.NDArray[Any]: ...

    def logical(self, chain: Chain) -> npt.NDArray[Any]: ...

    def flow_logical(self, flow: Flow) -> npt.NDArray[Any]: ...

    def flow_physical(self, flow: Flow) -> npt.NDArray[Any]: ...

    def vector_logical(self, chain: VectorChain) -> npt.NDArray[Any]: ...

    def vector_physical(self, chain: VectorChain) -> npt.NDArray[Any]: ...
    def flow_buffer(self, flow: Flow) -> Buffer: ...

    def flow_read(self, flow: Flow, mapping: Mapping, terms: tuple[Digit, ...]) -> npt.NDArray[Any]: ...

    def flow_window(self, parent: Flow, element: int, offset: int, mapping: Mapping, terms: tuple[Digit, ...],
                    dtype: str) -> npt.NDArray[Any]: ...

    def flow_written(self, parent: Flow, written: Flow, element: int, offset: int) -> npt.NDArray[Any]: ...

    def flow_scattered(self, source: Scattered) -> npt.NDArray[Any]: ...


_EVALUATORS: Final[dict[str, Evaluator]] = {e.name: e for e in (FusedEvaluator(), SimulateEvaluator())}
_SELECTED: ContextVar[str] = ContextVar("tcpdsl_evaluator", default=DEFAULT)


def names() -> list[str]:
    return sorted(_EVALUATORS)


def selected() -> str:
    """The name of the evaluator selected for the current context."""
    return _SELECTED.get()


def get(name: str | None = None) -> Evaluator:
    """The evaluator called ``name``, or the selected one (``"fused"`` unless :func:`using` says otherwise)."""
    wanted = _SELECTED.get() if name is None else name
    found = _EVALUATORS.get(wanted)
    if found is None:
        raise UnknownEvaluatorError(wanted, names())
    return found


@contextmanager
def using(name: str) -> Iterator[Evaluator]:
    """Select the evaluator ``name`` for the duration of the ``with`` block (per context)."""
    evaluator = get(name)
    token = _SELECTED.set(name)
    try:
        yield evaluator
    finally:
        _SELECTED.reset(token)
