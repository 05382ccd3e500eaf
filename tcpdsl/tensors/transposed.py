"""The position after the transpose engine (docs/stage-rules.md §5.2): a :class:`TransposeTensor`, whose
packets are the columns of the matrices the engine read, one flit each."""

from __future__ import annotations

from typing import Any, Generic

from tcpdsl.numerics.flow import Flow, Step
from tcpdsl.tensors.base import ChipT, ClusterT, D, PacketT, SliceT, TimeT, unspecialised
from tcpdsl.tensors.stream import FlowTensor
from tcpdsl.tensors.subscription import Spec
from tcpdsl.verify.families import TRANSPOSE
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.transpose import TransposeParams


class TransposeTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, TimeT, PacketT]):
    """A transposed stream over ``[Chip, Cluster, Slice, Time, Packet]``."""

    __slots__ = ()
    __tcp_family__ = TRANSPOSE

    def __init__(self) -> None:
        raise unspecialised("TransposeTensor")


def transposed(flow: Flow, source: Spec, spec: Spec, params: TransposeParams) -> TransposeTensor[Any, Any, Any, Any, Any, Any]:
    """The stream ``flow`` one transpose further, from a position of type ``source`` to one of type ``spec``."""
    step = Step(Stage.TRANSPOSE, spec.mapping, spec.tensor_type.dtype, params, source=source.layouts,
                layouts=spec.layouts)
    return TransposeTensor._of_flow(spec, flow.then(step))  # type: ignore[no-any-return]
