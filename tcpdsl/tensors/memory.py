"""Memory tensors (docs/stage-rules.md §4.1): a :class:`DmTensor` holds data in the data memory of each
slice, a :class:`VrfTensor` in the vector register file.

A memory tensor is built from a logical tensor (laid out on its layout after the same fit check as
a source tensor) or produced by a stage (``commit``, ``to_vrf``); either way its value is a flow.
``.view()`` is what a stream begins on, ``.view_mut()`` what ``commit_view`` writes into; ``tile``
takes a window of either.
"""

from __future__ import annotations

from typing import Any, Generic

from tcpdsl.errors import LayoutError
from tcpdsl.numerics.flow import Buffer, Flow, Root, Window
from tcpdsl.evaluate.backend import get as get_evaluator
from tcpdsl.numerics.logical import Tensor
from tcpdsl.tensors.base import ChipT, ClusterT, D, ElementT, SliceT, lay_out_logical, unspecialised
from tcpdsl.tensors.stream import FlowTensor, buffer_of, root_of, scattered_flow, window_flow, written_flow
from tcpdsl.tensors.subscription import Spec, spec_of
from tcpdsl.verify.compose_memory import TileParams
from tcpdsl.verify.scatter import ScatterParams, not_an_hbm_tensor
from tcpdsl.verify.families import DM, DM_VIEW, DM_VIEW_MUT, HBM, HBM_VIEW, HBM_VIEW_MUT, VRF, Family, check_type
from tcpdsl.verify.stage import Stage


def _as(tensor: FlowTensor, family: Family) -> Spec:
    """The tensor's type as one of its views' families (the same layouts), remembered per type like a
    stage call, so that the stages called on the view find their own remembered answers."""
    key, spec = ("view as", family.name), tensor._spec
    found = spec._steps.get(key)  # read first: a view on a seen type builds no composer
    if found is None:
        tt = spec.tensor_type
        found = spec.step(key, lambda: (check_type(family, tt.dtypes, tt.layouts), None))
    return found[0]


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

    def to_dm(self, *, cluster: object = None, slice: object, element: object) -> DmTensor[D, ChipT, Any, Any, Any]:
        """A DMA move to a new DM layout within each slice; Chip, Cluster and Slice keep their sizes (§4.1)."""
        return self._advance(DmTensor, Stage.TO_DM, {"cluster": cluster, "slice": slice, "element": element})  # type: ignore[no-any-return]

    def to_hbm(self, *, element: object) -> HbmTensor[D, ChipT, Any]:
        """A DMA move into HBM as ``[Chip, Element]`` (docs/stage-rules.md §4.1)."""
        return self._advance(HbmTensor, Stage.TO_HBM, {"element": element})  # type: ignore[no-any-return]

    def dma_scatter(self, index: HbmTensor[Any, Any, Any], out: HbmTensor[D, ChipT, Any], /, *,
                    key: object) -> HbmTensor[D, ChipT, Any]:
        """Write each ``key`` value's row of this tensor into ``out`` at the row of its scattered axis that the
        value's byte offset in ``index`` names; returns ``out``, written (docs/stage-rules.md §4.1)."""
        index_spec, out_spec = spec_of(index), spec_of(out)
        for name, operand, spec in (("index", index, index_spec), ("out", out, out_spec)):
            if spec is None:  # not a tensor at all; the composer names a tensor of another family
                raise not_an_hbm_tensor(name, type(operand).__name__)
        assert index_spec is not None and out_spec is not None
        _, moved = self._recorded(self._flow, Stage.DMA_SCATTER, {"key": key}, (index_spec, out_spec))
        params = moved.steps[-1].params
        assert isinstance(params, ScatterParams)  # the stage's composer derives them
        out._flow = scattered_flow(out._flow, self._flow, moved, index._flow, params)
        return out

    def reshape(self, *, chip: object, cluster: object, slice: object, element: object) -> DmTensor[D, Any, Any, Any, Any]:
        """The same bytes under other layouts of the same sizes (docs/stage-rules.md §4.1, ``Preserve``)."""
        args = self._mappings(Stage.RESHAPE, chip=chip, cluster=cluster, slice=slice, element=element)
        spec, _ = self._compose(Stage.RESHAPE, args)
        parent, mapping, terms = self._flow, spec.mapping, spec.terms

        def physical(name: str) -> Buffer:
            return buffer_of(parent, name)

        # To an independent check the reshape is a window of the whole tensor, read under the new layouts.
        whole = Window(parent, self._spec.element, 0)
        flow = Flow(Root(mapping, spec.tensor_type.dtype, terms, (),
                         lambda name: get_evaluator(name).flow_read(parent, mapping, terms), physical, source=whole))
        return DmTensor._of_flow(spec, flow)  # type: ignore[no-any-return]

    def view(self) -> DmView[D, ChipT, ClusterT, SliceT, ElementT]:
        """The whole tensor as a read view: what ``dev.main.begin(view)`` streams from."""
        return DmView._window(_as(self, DM_VIEW), self, 0)  # type: ignore[no-any-return]

    def view_mut(self) -> DmViewMut[D, ChipT, ClusterT, SliceT, ElementT]:
        """The whole tensor as a write view: what ``commit_view`` writes into."""
        return DmViewMut._window(_as(self, DM_VIEW_MUT), self, 0)  # type: ignore[no-any-return]


class HbmTensor(FlowTensor, Generic[D, ChipT, ElementT]):
    """A tensor in HBM over ``[Chip, Element]``: what DMA moves into DM and back."""

    __slots__ = ()
    __tcp_family__ = HBM

    def __init__(self, tensor: Tensor, /) -> None:
        raise unspecialised("HbmTensor")

    @staticmethod
    def __tcp_build__(spec: Spec, *args: object) -> Any:
        if len(args) != 1:
            raise LayoutError("HbmTensor", "Arguments", "build an HBM tensor as HbmTensor[...](tensor)",
                              hint="pass one tcp.Tensor")
        return HbmTensor._of_flow(spec, root_of(spec, lay_out_logical(spec, args[0], "HbmTensor")))

    def view(self) -> HbmView[D, ChipT, ElementT]:
        """The whole tensor as a read view, for a DMA out of part of it (``tile``, ``to_dm_view``)."""
        return HbmView._window(_as(self, HBM_VIEW), self, 0)  # type: ignore[no-any-return]

    def view_mut(self) -> HbmViewMut[D, ChipT, ElementT]:
        """The whole tensor as a write view: what ``to_hbm_view`` writes into."""
        return HbmViewMut._window(_as(self, HBM_VIEW_MUT), self, 0)  # type: ignore[no-any-return]

    def to_dm(self, *, cluster: object, slice: object, element: object) -> DmTensor[D, ChipT, Any, Any, Any]:
        """A DMA move into DM, choosing the Cluster and Slice distribution (docs/stage-rules.md §4.1)."""
        return self._advance(DmTensor, Stage.TO_DM, {"cluster": cluster, "slice": slice, "element": element})  # type: ignore[no-any-return]

    def to_hbm(self, *, element: object) -> HbmTensor[D, ChipT, Any]:
        """A DMA move to a new HBM layout, or a broadcast over axes the source lacks (§4.1)."""
        return self._advance(HbmTensor, Stage.TO_HBM, {"element": element})  # type: ignore[no-any-return]


class _View(FlowTensor):
    """A window of a memory tensor: its type is the window's, its cells the tensor's, ``offset`` Element cells in."""

    __slots__ = ("_parent", "_offset")
    _parent: FlowTensor
    _offset: int

    @classmethod
    def _window(cls, spec: Spec, parent: FlowTensor, offset: int) -> Any:
        out = object.__new__(cls)  # as _of_flow builds it, one call fewer on every view and tile
        out._spec, out._flow = spec, window_flow(parent._flow, parent._spec.element, spec, offset)
        out._parent = parent
        out._offset = offset
        return out

    def _pad(self, element: object) -> Any:
        args = self._mappings(Stage.PAD, element=element)
        spec, _ = self._compose(Stage.PAD, args)
        return type(self)._window(spec, self._parent, self._offset)

    def _tile(self, start: object, index: object, len: object, element: object) -> Any:
        args = self._mappings(Stage.TILE, index=index, element=element)
        spec, params = self._compose(Stage.TILE, args, len=len, start=start)
        assert isinstance(params, TileParams) and isinstance(start, int)
        return type(self)._window(spec, self._parent, self._offset + start * params.stride)

    def _move_into(self, stage: Stage, dst: object, kind: type[_View]) -> Any:
        """A DMA move of this view into the write view ``dst``; returns the tensor written."""
        spec = spec_of(dst)
        if not isinstance(dst, kind) or spec is None:
            raise LayoutError(stage, "NotAWriteView", f"{stage} writes into a write view, got a {type(dst).__name__}",
                              hint="pass dm.view_mut(), hbm.view_mut() or a tile of one")
        _, written = self._recorded(self._flow, stage, {}, (spec,))
        return dst._write(written)

    def _write(self, written: Flow) -> Any:
        """Write a flow that ends on this window into the tensor; the tensor's other cells stay."""
        parent = self._parent
        parent._flow = written_flow(parent._flow, written, parent._spec.element, self._offset)
        return parent


class DmView(_View, Generic[D, ChipT, ClusterT, SliceT, ElementT]):
    """A read view of a DM tensor (its holes are Top padding): what a stream begins on."""

    __slots__ = ()
    __tcp_family__ = DM_VIEW

    def __init__(self) -> None:
        raise unspecialised("DmView")

    def tile(self, start: int, /, *, index: object, element: object, len: int) -> DmView[D, ChipT, ClusterT, SliceT, Any]:
        """A window of ``len`` values of the digit ``index`` from ``start`` (docs/stage-rules.md §4.1)."""
        return self._tile(start, index, len, element)  # type: ignore[no-any-return]

    def pad(self, *, element: object) -> DmView[D, ChipT, ClusterT, SliceT, Any]:
        """The same cells with one outermost padding factor added (docs/stage-rules.md §4.1)."""
        return self._pad(element)  # type: ignore[no-any-return]

    def to_dm_view(self, dst: DmViewMut[D, Any, Any, Any, Any], /) -> DmTensor[D, Any, Any, Any, Any]:
        """A DMA move of this view into a write view of a DM tensor; returns that tensor (§4.1)."""
        return self._move_into(Stage.TO_DM_VIEW, dst, DmViewMut)  # type: ignore[no-any-return]

    def to_hbm_view(self, dst: HbmViewMut[D, Any, Any], /) -> HbmTensor[D, Any, Any]:
        """A DMA move of this view into a write view of an HBM tensor; returns that tensor (§4.1)."""
        return self._move_into(Stage.TO_HBM_VIEW, dst, HbmViewMut)  # type: ignore[no-any-return]


class DmViewMut(_View, Generic[D, ChipT, ClusterT, SliceT, ElementT]):
    """A write view of a DM tensor (its holes are Bottom padding, never written): what ``commit_view`` fills."""

    __slots__ = ()
    __tcp_family__ = DM_VIEW_MUT

    def __init__(self) -> None:
        raise unspecialised("DmViewMut")

    def tile(self, start: int, /, *, index: object, element: object, len: int) -> DmViewMut[
            D, ChipT, ClusterT, SliceT, Any]:
        """A window of ``len`` values of the digit ``index`` from ``start``; the rest is never written."""
        return self._tile(start, index, len, element)  # type: ignore[no-any-return]

    def pad(self, *, element: object) -> DmViewMut[D, ChipT, ClusterT, SliceT, Any]:
        """The same cells with one outermost padding factor added (docs/stage-rules.md §4.1)."""
        return self._pad(element)  # type: ignore[no-any-return]


class HbmView(_View, Generic[D, ChipT, ElementT]):
    """A read view of an HBM tensor (its holes are Top padding)."""

    __slots__ = ()
    __tcp_family__ = HBM_VIEW

    def __init__(self) -> None:
        raise unspecialised("HbmView")

    def tile(self, start: int, /, *, index: object, element: object, len: int) -> HbmView[D, ChipT, Any]:
        """A window of ``len`` values of the digit ``index`` from ``start`` (docs/stage-rules.md §4.1)."""
        return self._tile(start, index, len, element)  # type: ignore[no-any-return]

    def pad(self, *, element: object) -> HbmView[D, ChipT, Any]:
        """The same cells with one outermost padding factor added (docs/stage-rules.md §4.1)."""
        return self._pad(element)  # type: ignore[no-any-return]

    def to_dm_view(self, dst: DmViewMut[D, Any, Any, Any, Any], /) -> DmTensor[D, Any, Any, Any, Any]:
        """A DMA move of this view into a write view of a DM tensor; returns that tensor (§4.1)."""
        return self._move_into(Stage.TO_DM_VIEW, dst, DmViewMut)  # type: ignore[no-any-return]

    def to_hbm_view(self, dst: HbmViewMut[D, Any, Any], /) -> HbmTensor[D, Any, Any]:
        """A DMA move of this view into a write view of an HBM tensor; returns that tensor (§4.1)."""
        return self._move_into(Stage.TO_HBM_VIEW, dst, HbmViewMut)  # type: ignore[no-any-return]


class HbmViewMut(_View, Generic[D, ChipT, ElementT]):
    """A write view of an HBM tensor (its holes are Bottom padding, never written)."""

    __slots__ = ()
    __tcp_family__ = HBM_VIEW_MUT

    def __init__(self) -> None:
        raise unspecialised("HbmViewMut")

    def tile(self, start: int, /, *, index: object, element: object, len: int) -> HbmViewMut[D, ChipT, Any]:
        """A window of ``len`` values of the digit ``index`` from ``start``; the rest is never written."""
        return self._tile(start, index, len, element)  # type: ignore[no-any-return]

    def pad(self, *, element: object) -> HbmViewMut[D, ChipT, Any]:
        """The same cells with one outermost padding factor added (docs/stage-rules.md §4.1)."""
        return self._pad(element)  # type: ignore[no-any-return]


class VrfTensor(FlowTensor, Generic[D, ChipT, ClusterT, SliceT, ElementT]):
    """A tensor in the vector register file over ``[Chip, Cluster, Slice, Element]`` (i32 or f32)."""

    __slots__ = ()
    __tcp_family__ = VRF

    def __init__(self, tensor: Tensor, /) -> None:
        raise unspecialised("VrfTensor")

    @staticmethod
    def __tcp_build__(spec: Spec, *args: object) -> Any:
        if len(args) != 1:
            raise LayoutError("VrfTensor", "Arguments", "build a VRF tensor as VrfTensor[...](tensor)",
                              hint="pass one tcp.Tensor, or store a stream with .to_vrf(element=...)")
        return VrfTensor._of_flow(spec, root_of(spec, lay_out_logical(spec, args[0], "VrfTensor")))
