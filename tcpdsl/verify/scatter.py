"""``dm.dma_scatter(index, out, key=)``: the rows of a DM tensor written into HBM at run-time offsets
(docs/stage-rules.md §4.1).

The key's axes number the rows; the data's other axes (the payload) make one row. Row ``k`` goes to
the row ``index[k] / row_bytes`` of the one axis ``out`` holds besides the payload. The layout rules
see mappings and dtype names only; ``Offset`` reads the index's values, so it runs with the scatter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import Final

from tcpdsl.algebra import Composite, Digit, Mapping, Slots, held, pairs, render_slot, slots_of, text_of
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.dma import DmaParams, check_tail_align, dma_tail
from tcpdsl.verify.memory import Tier, bytes_of, materializable_bits
from tcpdsl.verify.sequencer import BITS_PER_BYTE
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.DMA_SCATTER
INDEX_DTYPE: Final = "i32"


@dataclass(frozen=True)
class ScatterParams(DmaParams):
    """A scatter as one DMA command (``bytes``: every row; ``tail``: the run a row moves in, what the data's
    Element and out's hold alike within it), and its rows: the key's axes (outermost first; none for one row), the payload's axes (in
    out's order, outermost first), the scattered axis of out, its size, and the bytes of one row."""

    key: tuple[str, ...]
    payload: tuple[str, ...]
    axis: str
    rows: int
    row_bytes: int


@memoized
def verify_scatter(dtype: str, *, data: Tier, key: Mapping, index_dtype: str, index: Tier, out_dtype: str,
                   out: Tier) -> ScatterParams:
    """Check a scatter of the DM tensor ``data`` into ``out`` by ``index`` and derive its command.

    Rules in order: ``IndexDtype``, ``Dtype``, ``Chip`` (the three Chips alike), ``KeyContained``, ``Chip``
    (no axis in the data's Chip), ``WholeAxes``, ``Payload``, ``IndexShape``, ``RowBytes``, ``TailAlign``.
    """
    _check_dtypes(dtype, index_dtype, out_dtype)
    _check_chips(data, index, out)
    _check_key_contained(data, key)
    _check_one_chip(data)
    keys, payload = _whole_axes(data, key)
    ordered, axis = _check_payload(out, payload)
    _check_index(index, key, keys)
    bits = materializable_bits(STAGE, dtype)
    sizes = held(data.whole).sizes
    cells = prod(sizes[a] for a in payload)
    if (cells * bits) % BITS_PER_BYTE:
        raise LayoutError(
            STAGE,
            "RowBytes",
            f"dma_scatter: a row of {cells} {dtype} cells ({', '.join(payload) or 'one cell'}) is {cells * bits} "
            f"bits, not a whole number of bytes, so no byte offset addresses it",
            hint="scatter rows of whole bytes: pad the payload's innermost axis, or scatter a wider dtype",
        )
    row_bytes = bytes_of(bits, cells)
    # The run a row moves in: what the data's Element and out's hold alike, within one row.
    tail = min(dma_tail(data.element, out.element), _row_run(out.element, payload))
    check_tail_align(STAGE, dtype, bits, tail, data.element, out.element)
    return ScatterParams(
        tail=tail,
        tail_bytes=bytes_of(bits, tail),
        entries=(),
        bytes=key.size * row_bytes,
        same_tier=False,
        key=keys,
        payload=ordered,
        axis=axis,
        rows=held(out.whole).sizes[axis],
        row_bytes=row_bytes,
    )


def scatter_rows(offsets: Sequence[int], params: ScatterParams) -> list[int]:
    """``Offset``: the row each byte offset of the index writes, one per key value in order."""
    rows = []
    for k, offset in enumerate(offsets):
        row, rest = divmod(offset, params.row_bytes)
        if rest:
            raise LayoutError(
                STAGE,
                "Offset",
                f"dma_scatter: the byte offset {offset} of key value {k} is not a multiple of the row size of "
                f"{params.row_bytes} bytes",
                hint=f"the index holds byte offsets: row r of {params.axis} is r * {params.row_bytes}",
            )
        if not 0 <= row < params.rows:
            raise LayoutError(
                STAGE,
                "Offset",
                f"dma_scatter: the byte offset {offset} of key value {k} addresses row {row} (rows of "
                f"{params.row_bytes} bytes), outside the {params.rows} rows [0, {params.rows}) of {params.axis}",
                hint=f"write row r of {params.axis} as r * {params.row_bytes}, for r in [0, {params.rows})",
            )
        rows.append(row)
    return rows


# -- the rules ----------------------------------------------------------------------------------


def not_an_hbm_tensor(name: str, got: str) -> LayoutError:
    """``NotAnHbmTensor``: the index or ``out`` (``name``) is ``got``, not an HBM tensor (the composer names a
    tensor's family, the runtime method the type of what is not a tensor at all)."""
    return LayoutError(STAGE, "NotAnHbmTensor", f"dma_scatter: {name} is an HBM tensor, got a {got}",
                       hint=f"pass the {name} as an HbmTensor, not a view or a DM tensor")


def _check_dtypes(dtype: str, index_dtype: str, out_dtype: str) -> None:
    if index_dtype != INDEX_DTYPE:
        raise DtypeError(
            STAGE,
            "IndexDtype",
            f"dma_scatter: the index holds i32 byte offsets, got {index_dtype}",
            hint="declare the index as an HbmTensor of tcp.i32",
        )
    if out_dtype != dtype:
        raise DtypeError(
            STAGE,
            "Dtype",
            f"dma_scatter: the data is {dtype} but out holds {out_dtype}; a scatter moves bytes as they are",
            hint="declare out with the data's dtype, or cast on the stream before the data is committed",
        )


def _check_chips(data: Tier, index: Tier, out: Tier) -> None:
    for name, tier in (("index", index), ("out", out)):
        if tier.chip != data.chip:
            raise LayoutError(
                STAGE,
                "Chip",
                f"dma_scatter: the Chip {tier.chip} of {name} differs from the data's Chip {data.chip}",
                hint=f"give {name} the data's Chip {data.chip}: each chip scatters its own rows with its own index",
            )


def _check_one_chip(data: Tier) -> None:
    """``Chip``: the data's Chip holds no axis (one chip, or replicas), checked after ``KeyContained``, whose words
    fit a key axis there better."""
    spread = _axes(slots_of(data.chip))
    if spread:
        raise LayoutError(
            STAGE,
            "Chip",
            f"dma_scatter: the Chip {data.chip} holds {', '.join(spread)}; tcpdsl scatters within one chip's layout, "
            f"a Chip of one chip or of replicas",
            hint="scatter each chip's part in a kernel of its own, or replicate over Chip (e.g. Chip m[\"1 # 2\"])",
        )


def _check_key_contained(data: Tier, key: Mapping) -> None:
    inner = _axes(slots_of(_slice_element(data)))
    for axis in _axes(slots_of(key)):
        for name, layout in (("Chip", data.chip), ("Cluster", data.cluster)):
            if layout is not None and axis in _axes(slots_of(layout)):
                raise LayoutError(
                    STAGE,
                    "KeyContained",
                    f"dma_scatter: the key axis {axis} lies partly in the data's {name} {layout}; a key must lie "
                    f"entirely within [Slice, Element] ({_data(data)}), since a key split across {name} and "
                    f"Element cannot be addressed",
                    hint=f"lay {axis} out in Slice and Element only, and spread the payload over {name} instead",
                )
        if axis not in inner:
            raise LayoutError(
                STAGE,
                "KeyContained",
                f"dma_scatter: the key axis {axis} is not an axis of the data ({_data(data)})",
                hint='name in key= only axes the data holds, or write key=m["1"] to scatter the data as one row',
            )


def _whole_axes(data: Tier, key: Mapping) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The key's axes (outermost first) and the payload's (in the data's order), each a whole axis."""
    slots = slots_of(key)
    for slot in slots:
        live = slot.live
        if not (isinstance(live, Digit) and live.whole and not slot.padded):
            raise LayoutError(
                STAGE,
                "WholeAxes",
                f"dma_scatter: the key {key} holds {render_slot(slot)}, which is not a whole axis; tcpdsl scatters "
                f"by whole key axes",
                hint="name whole axes of the data in key=, e.g. key=m[\"K\"] rather than m[\"K / 2\"]",
            )
    keys = _axes(slots)
    whole = data.whole
    payload = tuple(a for a in _axes(slots_of(whole)) if a not in keys)
    found = held(whole)
    for role, axis in [*(("key", a) for a in keys), *(("payload", a) for a in payload)]:
        if not found.whole(axis):
            raise LayoutError(
                STAGE,
                "WholeAxes",
                f"dma_scatter: the data holds {_pieces(whole, axis)} of the {role} axis {axis}, not the whole axis "
                f"({_data(data)}); tcpdsl scatters whole axes only",
                hint=f"tcpdsl is stricter than the reference here: hold all of {axis} in the data, or reshape the "
                f"part into an axis of its own",
            )
    return keys, payload


def _check_payload(out: Tier, payload: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The payload's axes in out's order, and the one axis out scatters rows along."""
    whole = out.whole
    axes = _axes(slots_of(whole))
    shown = ", ".join(payload) or "no axis"
    missing = [a for a in payload if a not in axes]
    if missing:
        raise LayoutError(
            STAGE,
            "Payload",
            f"dma_scatter: out ({_hbm(out)}) lacks the payload axis {missing[0]}; out holds the payload "
            f"({shown}) and one axis to scatter rows along",
            hint=f"name {', '.join(missing)} in out's Element, as the data holds {'them' if len(missing) > 1 else 'it'}",
        )
    extra = [a for a in axes if a not in payload]
    if len(extra) != 1:
        held_ = ", ".join(extra) or "no axis"
        raise LayoutError(
            STAGE,
            "Payload",
            f"dma_scatter: out ({_hbm(out)}) holds {held_} besides the payload ({shown}); exactly one more axis, "
            f"the one rows are scattered along, is allowed",
            hint="out's Element is the payload's axes and the scattered axis, e.g. [C, D] for rows of D along C",
        )
    found = held(whole)
    for axis in axes:
        if not found.whole(axis):
            raise LayoutError(
                STAGE,
                "Payload",
                f"dma_scatter: out ({_hbm(out)}) holds {_pieces(whole, axis)} of {axis}, not the whole axis; "
                f"each axis of out is held whole",
                hint=f"hold all of {axis} in out, or scatter into a tensor with an axis of that size",
            )
    return tuple(a for a in axes if a in payload), extra[0]


def _check_index(index: Tier, key: Mapping, keys: tuple[str, ...]) -> None:
    whole = index.whole
    axes = _axes(slots_of(whole))
    found = held(whole)
    if set(axes) != set(keys) or not all(found.whole(a) for a in axes):
        have = ", ".join(f"{_pieces(whole, a)} of {a}" if not found.whole(a) else a for a in axes) or "no axis"
        want = ", ".join(keys) or "no axis (one cell)"
        raise LayoutError(
            STAGE,
            "IndexShape",
            f"dma_scatter: the index ({_hbm(index)}) holds {have}, but the key {key} takes one offset per key "
            f"value, over exactly {want}",
            hint=f"lay the index out over the key's axes, e.g. Element m[\"{key}\"]",
        )


# -- reading layouts ----------------------------------------------------------------------------


def _axes(slots: Slots) -> tuple[str, ...]:
    """The axes that live slots reach, outermost first; an opaque factor's axes too."""
    found: dict[str, None] = {}
    for slot in reversed(slots):
        live = slot.live
        if isinstance(live, Digit):
            found[live.axis] = None
        elif isinstance(live, Composite):
            found.update(dict.fromkeys(_axes(live.operand.slots)))
    return tuple(found)


def _row_run(element: Mapping, payload: tuple[str, ...]) -> int:
    """The cells of out's Element that one row covers contiguously: its innermost payload digits,
    up to the first other slot or the first padding (a padded digit's live values still count)."""
    run = 1
    for slot in slots_of(element):
        live = slot.live
        if not (isinstance(live, Digit) and live.axis in payload):
            break
        run *= slot.count
        if slot.padded:
            break
    return run


def _slice_element(data: Tier) -> Mapping:
    return pairs([m for m in (data.slice_, data.element) if m is not None])


def _pieces(mapping: Mapping, axis: str) -> str:
    return text_of(held(mapping).of(axis)) or "an opaque part"


def _data(data: Tier) -> str:
    return f"Chip {data.chip}, Cluster {data.cluster}, Slice {data.slice_}, Element {data.element}"


def _hbm(tier: Tier) -> str:
    return f"Chip {tier.chip}, Element {tier.element}"
