"""The vector register file: a :class:`VrfTensor` is what ``to_vrf`` stores (docs/stage-rules.md §4.6) and
what a vector pass reads as an operand, broadcast onto the stream by axis name (§6.3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic

import numpy as np

from tcpdsl.evaluate.backend import get as get_evaluator
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.term_arrays import coordinate_array, term_coordinates
from tcpdsl.numerics.transfer import to_physical
from tcpdsl.numerics.vector_chain import VrfValues
from tcpdsl.tensors.base import Array, ChipT, ClusterT, D, ElementT, SliceT, TensorBase, unspecialised
from tcpdsl.tensors.subscription import Spec
from tcpdsl.verify.families import VRF
from tcpdsl.verify.to_vrf import VrfParams


class VrfTensor(TensorBase, Generic[D, ChipT, ClusterT, SliceT, ElementT]):
    """A tensor in the vector register file over ``[Chip, Cluster, Slice, Element]`` (i32 or f32)."""

    __slots__ = ("_stream", "_params")
    __tcp_family__ = VRF
    _stream: Callable[[str], Tensor]  # the stored stream's logical tensor, by evaluator name
    _params: VrfParams

    def __init__(self) -> None:
        raise unspecialised("VrfTensor")

    @classmethod
    def _stored(cls, spec: Spec, stream: Callable[[str], Tensor], params: VrfParams) -> Any:
        out = object.__new__(cls)
        out._spec = spec
        out._stream = stream
        out._params = params
        return out

    def _values(self, name: str) -> Array:
        """The stored values over the Element's logical terms: each cell holds the stream element at its
        coordinates (``NoBroadcast`` guarantees the stream holds it)."""
        stream = self._stream(name)
        held, axes = coordinate_array(stream.values, stream.terms)
        coords = term_coordinates(self._spec.terms)
        shape = tuple(t.count for t in self._spec.terms)
        zero = np.zeros((), dtype=np.int64)
        return held[tuple(np.broadcast_to(coords.get(a, zero), shape) for a in axes)]

    def operand(self) -> VrfValues:
        """The tensor as a vector pass reads it."""
        return VrfValues(self._values, self._spec.terms)

    def to_tensor(self) -> Tensor:
        return Tensor.of_terms(self._values(get_evaluator().name), self._spec.terms)

    def physical(self) -> Array:
        values, axes = coordinate_array(self.to_tensor().values, self._spec.terms)
        return to_physical(values, axes, self.mapping, 0).reshape(self._dims())

    def _describe(self) -> str:
        return f"{self._spec.text()}\n  to_vrf: {self._params.bytes} bytes per slice"
