"""Views of memory tensors: reshape, tile windows and padded views (docs/stage-rules.md §4.1)."""

from __future__ import annotations

from tcpdsl.algebra import Digit, Mapping, Padding, PaddingKind, Resize, Slot, normalize, pairs, slots_of, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.memory import Tier
from tcpdsl.verify.stage import Stage


@memoized
def verify_reshape(source: Tier, *, chip: Mapping, element: Mapping,
                   cluster: Mapping | None = None, slice_: Mapping | None = None) -> None:
    """``Preserve``: a reshape relabels the same bytes, so each of Chip, (Cluster, Slice,) Element keeps its size."""
    for name, a, b in (
        ("Chip", source.chip, chip),
        ("Cluster", source.cluster, cluster),
        ("Slice", source.slice_, slice_),
        ("Element", source.element, element),
    ):
        if a is None or b is None:
            continue
        if a.size != b.size:
            raise LayoutError(
                Stage.RESHAPE,
                "Preserve",
                f"reshape: {name} must keep its size, got {a.size} ({a}) to {b.size} ({b})",
                hint=f"give the new {name} layout {a.size} cells",
            )


def _tiled_slot(element: Mapping, index: Mapping) -> tuple[int, Slot]:
    """The position stride and slot of ``element`` that ``index`` names: one digit, written as in
    ``element`` (a padded index, ``X = 16 # 32``, names the slot of a tile being tiled again)."""
    wanted = slots_of(index)
    if len(wanted) == 1 and isinstance(wanted[0].live, Digit):
        w = wanted[0]
        at = 1
        for slot in slots_of(element):
            if slot.live == w.live and (slot.extent == w.extent or not w.padded):
                return at, slot
            at *= slot.extent
    raise LayoutError(
        Stage.TILE,
        "Split",
        f"tile: the index {index} is not one whole factor of the view's Element {element}",
        hint="tile along a factor the Element holds as written, e.g. `X` of `[A, X]` or `X / 8` of `[X / 8, Y, X % 8]`",
    )


@memoized
def tile_stride(element: Mapping, index: Mapping) -> int:
    """How many Element cells one step of the tiled digit ``index`` moves (a window's start scales by it)."""
    return _tiled_slot(element, index)[0]


def tile_element(element: Mapping, *, index: Mapping, len_: int, write: bool) -> Mapping:
    """The Element of a window of ``len_`` values of the digit ``index``: the rest becomes padding,
    Top in a read view and Bottom in a write view (its cells are never written)."""
    at, slot = _tiled_slot(element, index)
    if not 1 <= len_ <= slot.count:
        raise LayoutError(
            Stage.TILE,
            "Split",
            f"tile: a window of {len_} values does not fit the {slot.count} values of {index} in {element}",
            hint=f"take between 1 and {slot.count} values",
        )
    outer, rest = split_at(element, at)
    outer, mid = split_at(outer, slot.extent)
    kind = PaddingKind.BOTTOM if write else PaddingKind.TOP
    return normalize(pairs([outer, Padding(Resize(mid, len_), slot.extent, kind), rest]))


def verify_tile(element_in: Mapping, *, start: int | None, index: Mapping, len_: int, element: Mapping,
                write: bool) -> Mapping:
    """``view.tile(start, index=, len=, element=)``: ``Split``, ``Start`` (a known start), ``UnexpectedView``."""
    expected, values = _window(element_in, index=index, len_=len_, write=write)
    if start is not None and not 0 <= start <= values - len_:
        raise LayoutError(
            Stage.TILE,
            "Start",
            f"tile: a window of {len_} values of {index} starting at {start} leaves the {values} values",
            hint=f"start between 0 and {values - len_}",
        )
    if element != expected:
        raise LayoutError(
            Stage.TILE,
            "UnexpectedView",
            f"tile: the window's Element must be {expected}, got {element}",
            hint=f"declare element={expected} ({'Bottom' if write else 'Top'} padding where the window ends)",
        )
    return expected


@memoized
def _window(element_in: Mapping, *, index: Mapping, len_: int, write: bool) -> tuple[Mapping, int]:
    """The window's Element (``Split`` checked) and how many values of ``index`` it is cut from: kept apart from
    the start, which a loop over a KV cache's rows changes on every call."""
    return tile_element(element_in, index=index, len_=len_, write=write), _tiled_slot(element_in, index)[1].count


@memoized
def verify_pad(element_in: Mapping, *, element: Mapping, write: bool) -> Mapping:
    """``view.pad(element=)``: ``NarrowerView`` then ``UnexpectedView`` (one outermost padding factor added)."""
    if element.size < element_in.size:
        raise LayoutError(
            Stage.PAD,
            "NarrowerView",
            f"pad: the padded view {element} ({element.size} cells) is narrower than the view {element_in} "
            f"({element_in.size} cells)",
            hint="a padded view has at least the cells of the view; use a tile view to take fewer",
        )
    expected = normalize(element_in.padding(element.size, PaddingKind.BOTTOM if write else PaddingKind.TOP))
    if element != expected:
        raise LayoutError(
            Stage.PAD,
            "UnexpectedView",
            f"pad: the padded view must be {expected}, got {element}",
            hint="pad adds one outermost padding factor and changes nothing else",
        )
    return expected
