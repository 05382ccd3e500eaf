"""``vector_inter_slice_reduce``: the layout of a reduce across the slices of a cluster
(docs/stage-rules.md §6.5).

The reducer combines the ``r`` innermost slices of each group and writes the result back into
``[OutSlice, OutTime]``; Chip, Cluster and Packet pass through. Rules, in order: ``Innermost``,
``Replacement``, ``TimeOrder``. The reference checks none of them; tcpdsl does. The book's third rule
(replacement kinds mix freely) is a permission, so it refuses nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import DivideTerm, Mapping, Pair, digit_mapping, divide_relaxed, divide_terms_or_reason, held, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.VECTOR_INTER_SLICE_REDUCE


@dataclass(frozen=True)
class InterReduceParams:
    """``ratio`` slices reduced per group (the ring the result travels), and what fills their slots:
    ``promoted`` Time cells, ``broadcast`` cells of fresh axes (padding fills the rest)."""

    ratio: int
    promoted: int
    broadcast: int


def _live(terms: list[DivideTerm]) -> int:
    return math.prod(t.resize for t in terms)


@memoized
def verify_vector_inter_slice_reduce(*, slice: Mapping, time: Mapping, out_slice: Mapping,
                                     out_time: Mapping) -> InterReduceParams:
    """Check ``[Slice, Time] -> [OutSlice, OutTime]`` against the reducer's layout rules."""
    result = Pair(out_slice, out_time)
    kept = divide_relaxed(slice, result)
    ratio = min((t.dividend_stride for t in kept), default=slice.size)
    outer, inner = split_at(slice, ratio)
    if divide_relaxed(result, inner) or isinstance(divide_terms_or_reason(result, outer), str):
        raise LayoutError(
            STAGE,
            "Innermost",
            f"{STAGE}: the reduced Slice factors must be the innermost ones, in one block: in Slice {slice}, the "
            f"part {outer} above the innermost {ratio} reduced slices is not kept whole in [{out_slice}, {out_time}]",
            hint="order Slice so that the reduced axis is innermost, and keep every factor outside it",
        )
    if out_slice.size % ratio:
        raise LayoutError(
            STAGE,
            "Replacement",
            f"{STAGE}: OutSlice {out_slice} has {out_slice.size} slices, which the {ratio} reduced slices of a "
            "group do not divide",
            hint=f"give OutSlice as many slices as Slice {slice}",
        )
    out_outer, slots = split_at(out_slice, ratio)
    if out_outer != outer:
        raise LayoutError(
            STAGE,
            "Replacement",
            f"{STAGE}: OutSlice must keep the outer Slice factors in place and fill the innermost {ratio} slices "
            f"with replacements: expected {outer} outside them, got {out_outer}",
            hint=f"write OutSlice as [{outer}, <replacement of {ratio} slices>]",
        )
    inputs = set(slice.axes) | set(time.axes)
    filled = held(slots)
    taken = [t.axis for t in filled.terms if t.axis in inputs and t.n > 1]
    taken += list(filled.irregular)
    broadcast = math.prod(t.count for t in filled.terms if t.axis not in inputs)
    promoted_terms = divide_relaxed(time, slots)
    stray = [axis for axis in taken if axis not in time.axes or not _all_promoted(time, slots, axis)]
    if stray:
        raise LayoutError(
            STAGE,
            "Replacement",
            f"{STAGE}: each reduced slot of OutSlice holds padding (1 # n), a fresh broadcast axis or a factor "
            f"promoted from Time, but {slots} uses {', '.join(dict.fromkeys(stray))}",
            hint="fill the reduced slots with `1 # n`, a new axis, or a factor of Time",
        )
    staying = divide_relaxed(time, out_time)
    strides = [t.divisor_stride for t in staying]
    if strides != sorted(strides, reverse=True):
        raise LayoutError(
            STAGE,
            "TimeOrder",
            f"{STAGE}: the Time factors that stay must keep their order: Time {time}, OutTime {out_time}",
            hint="write OutTime with the remaining Time factors in their Time order",
        )
    whole = divide_terms_or_reason(time, time)
    assert not isinstance(whole, str)  # a mapping always divides itself
    if _live(staying) * _live(promoted_terms) < _live(whole):
        raise LayoutError(
            STAGE,
            "TimeOrder",
            f"{STAGE}: every Time factor stays in OutTime or moves into OutSlice; the reducer reduces slices only, "
            f"but Time {time} loses cells in OutTime {out_time} and OutSlice {out_slice}",
            hint="keep the dropped Time factors in OutTime, or reduce them with vector_intra_slice_reduce",
        )
    return InterReduceParams(ratio=ratio, promoted=_live(promoted_terms), broadcast=broadcast)


def _all_promoted(time: Mapping, slots: Mapping, axis: str) -> bool:
    """Whether every digit of ``axis`` in ``slots`` is a digit of Time."""
    wanted = held(slots).of(axis)
    return bool(wanted) and all(not isinstance(divide_terms_or_reason(time, digit_mapping(t)), str) for t in wanted)
