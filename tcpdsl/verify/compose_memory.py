"""The composers of memory views: ``tile`` windows of a DM view (docs/stage-rules.md §4.1)."""

from __future__ import annotations

from dataclasses import dataclass

from tcpdsl.algebra import Mapping
from tcpdsl.errors import LayoutError
from tcpdsl.verify.families import DM_VIEW_MUT, TensorType, check_type
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.views import tile_stride, verify_tile


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
    verify_tile(old, start=start, index=index, len_=len, element=element, write=src.family is DM_VIEW_MUT)
    return check_type(src.family, src.dtypes, (*src.grid, element)), TileParams(tile_stride(old, index), start)
