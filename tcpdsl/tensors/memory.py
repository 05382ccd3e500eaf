"""Memory tensors (docs/stage-rules.md §4.1): a :class:`DmTensor` holds data in the data memory of each slice.

A memory tensor is built from a logical tensor (laid out on its layout after the same fit check as
a source tensor) or produced by a stage (``commit``); either way its value is a flow. ``.view()``
is what a stream begins on.
"""

from __future__ import annotations

from typing import Any, Generic

from tcpdsl.errors import LayoutError
from tcpdsl.numerics.flow import Flow, Root
from tcpdsl.numerics.logical import Tensor
from tcpdsl.tensors.base import ChipT, ClusterT, D, ElementT, SliceT, unspecialised
from tcpdsl.tensors.sources import lay_out_logical
from tcpdsl.tensors.stream import FlowTensor
from tcpdsl.tensors.subscription import Spec
from tcpdsl.verify.families import DM


def root_of(spec: Spec, tensor: Tensor) -> Flow:
    """A flow starting at ``tensor`` laid out on ``spec``'s layout (the same values for every evaluator)."""
    values = tensor.values
    return Flow(Root(spec.mapping, spec.tensor_type.dtype, tensor.terms, tensor.fixed_terms, lambda name: values))


class DmTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, ElementT]):
    """A tensor in DM over ``[Chip, Cluster, Slice, Element]``: each slice holds its ``Element`` partition."""

    __slots__ = ()
    __tcp_family__ = DM

    def __init__(self, tensor: Tensor, /) -> None:
        raise unspecialised("DmTensor")

    @staticmethod
    def __tcp_build__(spec: Spec, *args: object) -> Any:
        if len(args) != 1:
            raise LayoutError("DmTensor", "Arguments", "build a DM tensor as DmTensor[...](tensor)",
                              hint="pass one tcp.Tensor")
        return DmTensor._of_flow(spec, root_of(spec, lay_out_logical(spec, args[0], "DmTensor")))

    def view(self) -> DmView[D, ChipT, ClusterT, SliceT, ElementT]:
        """The whole tensor as a read view, for ``dev.main.begin(view)``."""
        return DmView._of_flow(self._spec, self._flow)  # type: ignore[no-any-return]


class DmView(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, ElementT]):
    """A read view of a DM tensor: what a stream begins on (its type is a DM type: its Element is the window's)."""

    __slots__ = ()
    __tcp_family__ = DM

    def __init__(self) -> None:
        raise unspecialised("DmView")
