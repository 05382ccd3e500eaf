"""The lazy vector pass: what the pass methods record and the evaluators consume (docs/runtime.md §3.9).

Like a contraction :class:`~tcpdsl.numerics.chain.Chain`, nothing is computed while a pass is built:
each method appends a :class:`PassStep` with the stream's layout after it, the parameters its
composer derived and the operands it reads. The stream entering ``vector_init`` is a
:class:`PassSource`, which the tensor layer fills in: its values may themselves come from an
evaluator (a contraction result), so each evaluator asks for them by its own name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy.typing as npt

from tcpdsl.algebra import Mapping, Digit, StructKey, logical_terms, pairs
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_compose import VectorStep
from tcpdsl.verify.vector_ops import BinaryArgMode, TernaryArgMode
from tcpdsl.verify.vector_pass import StashRead

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class Constant:
    """A number read by every element, in the op's dtype."""

    value: float | int


@dataclass(frozen=True, eq=False)
class VrfValues:
    """A VRF operand: its logical values by evaluator name, one dimension per term it holds."""

    read: Callable[[str], Array] = field(repr=False)
    terms: tuple[Digit, ...]
    origin: object = field(default=None, repr=False)  # the flow it was loaded by, for an independent check


OperandValue = Constant | VrfValues | StashRead


@lru_cache(maxsize=1024)
def _paired(layouts: tuple[StructKey, ...]) -> tuple[Mapping, tuple[Digit, ...]]:
    """The layouts paired into one mapping, and its logical terms: the same for every call of a kernel."""
    mapping = pairs([key.node for key in layouts])
    return mapping, logical_terms(mapping)


_Paired = tuple[Mapping, tuple[Digit, ...]]
# By the identity of the layouts tuple, which a tensor type hands to every step recorded at it. Each entry
# holds its tuple, so while it is remembered no other object takes that id.
_PAIRED_BY_IDENTITY = 1024
_paired_by_identity: dict[int, tuple[tuple[Mapping, ...], _Paired]] = {}


def _paired_layouts(layouts: tuple[Mapping, ...]) -> _Paired:
    """:func:`_paired` of ``layouts``, found first by the tuple's identity: a step's structural keys cost
    more than the rest of reading its terms."""
    found = _paired_by_identity.get(id(layouts))
    if found is not None:
        return found[1]
    if len(_paired_by_identity) >= _PAIRED_BY_IDENTITY:
        _paired_by_identity.clear()
    answer = _paired(tuple(map(StructKey, layouts)))
    _paired_by_identity[id(layouts)] = (layouts, answer)
    return answer


@dataclass(frozen=True, eq=False)
class PassSource:
    """The stream a pass starts from: its layouts ``[Chip, Cluster, Slice, Time, Packet]``, and its
    values by evaluator name.

    ``logical(name)`` is an array over ``logical_terms(mapping)``; ``physical(name)`` the flat
    buffer over ``mapping``, padding included.
    """

    layouts: tuple[Mapping, ...]
    dtype: str
    logical: Callable[[str], Array] = field(repr=False)
    physical: Callable[[str], Array] = field(repr=False)
    axes: frozenset[str] = frozenset()  # the axes the data has; the layout may replicate it over more
    origin: object = field(default=None, repr=False)  # the flow or chain it comes from, for an independent check

    @cached_property
    def mapping(self) -> Mapping:
        return _paired_layouts(self.layouts)[0]

    @cached_property
    def terms(self) -> tuple[Digit, ...]:  # read on every step of every evaluation: kept on the object
        return _paired_layouts(self.layouts)[1]


@dataclass(frozen=True, eq=False)
class PassStep:
    """One pass method: the stream's layouts ``[Chip, Cluster, Slice, Time, Packet]`` after it and what
    it computes."""

    stage: Stage
    layouts: tuple[Mapping, ...]
    step: VectorStep
    op: Any = None
    operands: tuple[OperandValue, ...] = ()
    mode: BinaryArgMode | TernaryArgMode | None = None
    reduce: str | None = None
    int_width: int = 0
    dtype: str = ""

    @cached_property
    def mapping(self) -> Mapping:
        return _paired_layouts(self.layouts)[0]

    @cached_property
    def terms(self) -> tuple[Digit, ...]:  # read on every step of every evaluation: kept on the object
        return _paired_layouts(self.layouts)[1]


@dataclass(frozen=True, eq=False)
class VectorChain:
    """A pass as recorded so far: its source and its steps, in call order."""

    source: PassSource
    steps: tuple[PassStep, ...] = ()
    cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def with_step(self, step: PassStep) -> VectorChain:
        return VectorChain(self.source, (*self.steps, step))  # cheaper than dataclasses.replace, on every method

    @property
    def layouts(self) -> tuple[Mapping, ...]:
        """The stream's layouts now."""
        return self.steps[-1].layouts if self.steps else self.source.layouts

    @property
    def mapping(self) -> Mapping:
        return self.steps[-1].mapping if self.steps else self.source.mapping

    @property
    def terms(self) -> tuple[Digit, ...]:
        return self.steps[-1].terms if self.steps else self.source.terms

