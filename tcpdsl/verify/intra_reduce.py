"""``vector_intra_slice_reduce``: the layout of a reduce inside each slice (docs/stage-rules.md §6.4).

The reduce removes every Time and Packet factor of the reduce axis; a part of it in Slice stays.
Rules, in order: ``Indivisible``, ``LabelMismatch``, ``NotFullyReduced``, ``Packet``, ``Slots``,
``Padding``. The last two are documented but unchecked in the reference; tcpdsl checks them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import (
    IDENTITY,
    Composite,
    Digit,
    DivideTerm,
    Mapping,
    PaddingKind,
    Pair,
    Slot,
    divide_terms_or_reason,
    held,
    slots_of,
)
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_ops import IntraReduceOp

STAGE: Final = Stage.VECTOR_INTRA_SLICE_REDUCE
# The temporal accumulator has this many slots, one per kept Time cell inside the outermost reduced factor.
REDUCE_SLOTS: Final = 8
_TREE_OUT: Final = IDENTITY.padding(4, PaddingKind.TOP)


@dataclass(frozen=True)
class IntraReduceParams:
    """``inner_time`` accumulator slots; ``time_steps`` reduced Time cells (the first output waits that many
    flit cycles); ``tree`` when the packet collapses to one value by the two-level tree."""

    inner_time: int
    time_steps: int
    tree: bool


@memoized
def verify_vector_intra_slice_reduce(
    op: IntraReduceOp,
    *,
    reduce: str,
    slice: Mapping,
    time: Mapping,
    packet: Mapping,
    out_time: Mapping,
    out_packet: Mapping,
) -> IntraReduceParams:
    """Check that ``[Time, Packet] -> [OutTime, OutPacket]`` reduces exactly the ``reduce`` axis."""
    stream, result = Pair(time, packet), Pair(out_time, out_packet)
    division = divide_terms_or_reason(stream, result)
    if isinstance(division, str):
        raise LayoutError(
            STAGE,
            "Indivisible",
            f"{STAGE}: [OutTime, OutPacket] = [{out_time}, {out_packet}] must divide [Time, Packet] = "
            f"[{time}, {packet}]: {division}",
            hint=f"declare the output as the input with every factor of {reduce} removed",
        )
    whole = divide_terms_or_reason(stream, stream)
    assert not isinstance(whole, str)  # a mapping always divides itself
    before, after = _live(whole), _live(division)
    # A broadcast factor names no axis and may go; the reference reads the removed axes the same way.
    removed = [idents for idents, n in before.items() if idents not in ((reduce,), ()) and n > after.get(idents, 1)]
    if removed:
        raise LayoutError(
            STAGE,
            "LabelMismatch",
            f"{STAGE}: every removed factor must belong to the reduce axis {reduce}, but factors of "
            f"{_names(removed)} are removed too, from [{time}, {packet}] to [{out_time}, {out_packet}]",
            hint=f"keep {_names(removed)} in the output, or reduce them in another pass",
        )
    if any(reduce in term.idents for term in division):
        raise LayoutError(
            STAGE,
            "NotFullyReduced",
            f"{STAGE}: the reduce axis {reduce} must leave Time and Packet entirely, but [{out_time}, {out_packet}] "
            f"keeps a factor of it",
            hint=f"drop every factor of {reduce} from out_time and out_packet",
        )
    tree = out_packet == _TREE_OUT
    others = [axis for axis in packet.axes if axis != reduce and packet.axis_sizes()[axis] > 1]
    if tree and out_packet != packet and others:
        raise LayoutError(
            STAGE,
            "Packet",
            f"{STAGE}: OutPacket 1 # 4 folds the whole packet into one value, so Packet may hold only {reduce}, but "
            f"{packet} holds {', '.join(others)}",
            hint=f"move {', '.join(others)} out of the packet before the reduce, or keep OutPacket equal to Packet",
        )
    if out_packet != packet and not tree:
        raise LayoutError(
            STAGE,
            "Packet",
            f"{STAGE}: OutPacket must be Packet (each element reduced over Time) or 1 # 4 (the packet reduced to "
            f"one value), got Packet {packet} -> OutPacket {out_packet}",
            hint="move the reduced factors of the packet onto Time, or reduce the whole packet",
        )
    time_slots = slots_of(time)
    carrying = [i for i, slot in enumerate(time_slots) if _carries(slot, reduce)]
    inner_time = math.prod(s.extent for s in time_slots[: carrying[-1]] if not _carries(s, reduce)) if carrying else 1
    if inner_time > REDUCE_SLOTS:
        raise LayoutError(
            STAGE,
            "Slots",
            f"{STAGE}: the kept Time factors inside the outermost factor of {reduce} need {inner_time} accumulator "
            f"slots, more than the {REDUCE_SLOTS} there are (Time {time}, OutTime {out_time})",
            hint=f"put the factors of {reduce} innermost in Time, or keep at most 8 Time cells inside them",
        )
    _check_padding(op, reduce, slice, stream)
    time_steps = math.prod(time_slots[i].extent for i in carrying)
    return IntraReduceParams(inner_time=inner_time, time_steps=time_steps, tree=tree)


def _live(terms: list[DivideTerm]) -> dict[tuple[str, ...], int]:
    """Live cells per group of axes over the matched factors."""
    out: dict[tuple[str, ...], int] = {}
    for term in terms:
        out[term.idents] = out.get(term.idents, 1) * term.resize
    return out


def _names(groups: list[tuple[str, ...]]) -> str:
    return ", ".join("/".join(idents) for idents in groups)


def _carries(slot: Slot, axis: str) -> bool:
    live = slot.live
    if isinstance(live, Digit):
        return live.axis == axis
    if isinstance(live, Composite):
        return any(_carries(inner, axis) for inner in live.operand.slots)
    return False


def _padded(slot: Slot) -> bool:
    """Whether some value of the slot is padding (its own, or that of the operand it indexes)."""
    if slot.padded or slot.shared is not None:
        return True
    live = slot.live
    return isinstance(live, Composite) and any(_padded(inner) for inner in live.operand.slots)


def _check_padding(op: IntraReduceOp, reduce: str, slice: Mapping, stream: Mapping) -> None:
    """``Padding``: a reduction group may mix real and padded cells of the axis only if the padding is the
    op's identity; Zero padding is the identity of the adds (docs/stage-rules.md §6.4)."""
    kinds = {s.kind for s in slots_of(stream) if _carries(s, reduce) and _padded(s)}
    sizes = {**slice.axis_sizes(), **stream.axis_sizes()}
    spread = math.prod(t.count for t in held(slice).of(reduce)) * math.prod(t.count for t in held(stream).of(reduce))
    if reduce in held(slice).irregular or reduce in held(stream).irregular:
        spread = sizes.get(reduce, 1) + 1  # coordinates that are no product of digits: treat as padded
    if reduce in sizes and spread > sizes[reduce]:
        kinds |= {s.kind for s in slots_of(slice) if _carries(s, reduce) and _padded(s)} or {PaddingKind.TOP}
    if not kinds or (kinds == {PaddingKind.ZERO} and op.identity == 0):
        return
    raise LayoutError(
        STAGE,
        "Padding",
        f"{STAGE}: the reduce axis {reduce} is padded in [Slice, Time, Packet], and {op.reference} would combine "
        f"the padded cells with real ones; only padding by the op's identity ({op.identity}) is safe",
        hint=f"lay {reduce} out without padding, or pad it with zeros (`#{{0}}`) for an add; masking padded "
        "cells with the valid count generator is not modelled yet",
    )
