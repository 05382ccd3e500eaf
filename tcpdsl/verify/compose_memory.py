"""The composers of memory: the DMA moves ``to_dm`` and ``to_hbm``, the scatter ``dma_scatter``, ``reshape``,
and ``tile`` windows of a DM view (docs/stage-rules.md §4.1)."""

from __future__ import annotations

from dataclasses import dataclass

from tcpdsl.algebra import Mapping
from tcpdsl.errors import LayoutError
from tcpdsl.verify.dma import DmaParams, verify_to_dm, verify_to_hbm
from tcpdsl.verify.families import DM, DM_VIEW_MUT, HBM, HBM_VIEW, HBM_VIEW_MUT, TensorType, check_type
from tcpdsl.verify.memory import Tier
from tcpdsl.verify.scatter import ScatterParams, not_an_hbm_tensor, verify_scatter
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.views import tile_stride, verify_pad, verify_reshape, verify_tile


@dataclass(frozen=True)
class TileParams:
    """A window starts ``start`` steps of the tiled digit in, each step ``stride`` Element cells."""

    stride: int
    start: int | None


def tile(src: TensorType, *, index: Mapping, element: Mapping, len: int, start: int | None = None) -> tuple[
        TensorType, TileParams]:
    """``view.tile(start, index=, len=, element=)``: a window of ``len`` values of the digit ``index``.

    A read view's window is Top padded where it ends, a write view's Bottom padded (never written).
    """
    if isinstance(len, bool) or not isinstance(len, int):
        raise LayoutError(Stage.TILE, "Length", f"tile: len must be an int, got {len!r}", hint="write len=16")
    if start is not None and (isinstance(start, bool) or not isinstance(start, int)):
        raise LayoutError(Stage.TILE, "Start", f"tile: start must be an int, got {start!r}", hint="pass an int")
    old = src.layout("Element")
    write = src.family in (DM_VIEW_MUT, HBM_VIEW_MUT)
    verify_tile(old, start=start, index=index, len_=len, element=element, write=write)
    return check_type(src.family, src.dtypes, (*src.layouts[:-1], element)), TileParams(tile_stride(old, index), start)


def tier(src: TensorType) -> Tier:
    """Where a memory tensor lives, for the DMA rules."""
    if src.family in (HBM, HBM_VIEW, HBM_VIEW_MUT):
        return Tier(src.layout("Chip"), src.layout("Element"))
    chip, cluster, slice_ = src.grid
    return Tier(chip, src.layout("Element"), cluster, slice_)


def to_dm(src: TensorType, *, slice: Mapping, element: Mapping, cluster: Mapping | None = None) -> tuple[
        TensorType, DmaParams]:
    """``hbm.to_dm(cluster=, slice=, element=)`` or ``dm.to_dm(slice=, element=)`` (which keeps Cluster)."""
    if cluster is None:
        if src.family is not DM:
            raise LayoutError(
                Stage.TO_DM, "Cluster", "to_dm: a move from HBM into DM chooses the Cluster layout, and none was given",
                hint="pass cluster=m[\"1 # 2\"] (or the layout the tensor should take)",
            )
        cluster = src.layout("Cluster")
    params = verify_to_dm(src.dtype, source=tier(src), cluster=cluster, slice_=slice, element=element)
    return check_type(DM, src.dtypes, (src.layout("Chip"), cluster, slice, element)), params


def to_hbm(src: TensorType, *, element: Mapping) -> tuple[TensorType, DmaParams]:
    """``dm.to_hbm(element=)`` or ``hbm.to_hbm(element=)``: a move into HBM, with a free relayout."""
    params = verify_to_hbm(src.dtype, source=tier(src), element=element)
    return check_type(HBM, src.dtypes, (src.layout("Chip"), element)), params


def dma_scatter(src: TensorType, index: TensorType, out: TensorType, *, key: Mapping) -> tuple[
        TensorType, ScatterParams]:
    """``dm.dma_scatter(index, out, key=)``: each row of the DM tensor, one per value of ``key``, written into
    ``out`` at the byte offset ``index`` holds for it; returns ``out`` (§4.1)."""
    for name, operand in (("index", index), ("out", out)):
        if operand.family is not HBM:
            raise not_an_hbm_tensor(name, operand.family.name)
    params = verify_scatter(src.dtype, data=tier(src), key=key, index_dtype=index.dtype, index=tier(index),
                            out_dtype=out.dtype, out=tier(out))
    return out, params


def reshape(src: TensorType, *, chip: Mapping, cluster: Mapping, slice: Mapping, element: Mapping) -> tuple[
        TensorType, None]:
    """``dm.reshape(chip=, cluster=, slice=, element=)``: the same bytes under other names (``Preserve``)."""
    verify_reshape(tier(src), chip=chip, cluster=cluster, slice_=slice, element=element)
    return check_type(DM, src.dtypes, (chip, cluster, slice, element)), None


def _view_move(stage: Stage, src: TensorType, dst: TensorType, into: tuple[object, ...]) -> None:
    if dst.family not in into:
        raise LayoutError(stage, "NotAWriteView", f"{stage} writes into a write view, got a {dst.family.name}",
                          hint="pass dm.view_mut(), hbm.view_mut() or a tile of one")
    if dst.dtype != src.dtype:
        raise LayoutError(stage, "DtypeMismatch", f"{stage}: the source is {src.dtype} but the view holds {dst.dtype}",
                          hint="a DMA moves bytes as they are; cast on the stream first")


def to_dm_view(src: TensorType, dst: TensorType) -> tuple[TensorType, DmaParams]:
    """``view.to_dm_view(dst)``: a DMA move into a write view of a DM tensor (§4.1)."""
    _view_move(Stage.TO_DM_VIEW, src, dst, (DM_VIEW_MUT,))
    chip, cluster, slice_ = dst.grid
    params = verify_to_dm(src.dtype, source=tier(src), cluster=cluster, slice_=slice_, element=dst.layout("Element"),
                          view=True)
    return dst, params


def to_hbm_view(src: TensorType, dst: TensorType) -> tuple[TensorType, DmaParams]:
    """``view.to_hbm_view(dst)``: a DMA move into a write view of an HBM tensor (§4.1)."""
    _view_move(Stage.TO_HBM_VIEW, src, dst, (HBM_VIEW_MUT,))
    return dst, verify_to_hbm(src.dtype, source=tier(src), element=dst.layout("Element"), view=True)


def pad(src: TensorType, *, element: Mapping) -> tuple[TensorType, None]:
    """``view.pad(element=)``: the same cells with one outermost padding factor added, Top in a read view,
    Bottom in a write view (§4.1)."""
    write = src.family in (DM_VIEW_MUT, HBM_VIEW_MUT)
    verify_pad(src.layout("Element"), element=element, write=write)
    return check_type(src.family, src.dtypes, (*src.layouts[:-1], element)), None
