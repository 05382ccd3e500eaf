"""``contract_time``: the Time Reducer (docs/stage-rules.md §2.6)."""

from __future__ import annotations

from typing import Final

from tcpdsl.algebra import Mapping, divide_exact, padding_per_stride
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.params import TimeParams
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.CONTRACT_TIME


@memoized
def verify_contract_time(*, time: Mapping, out_time: Mapping) -> TimeParams:
    """Check that ``out_time`` keeps some axes of ``time``, in order and with their padding."""
    try:
        terms = tuple(divide_exact(time, out_time))
    except LayoutError as error:
        raise LayoutError(
            STAGE,
            "Indivisible",
            f"contract_time: OutTime {out_time} must divide Time {time} (some axis is missing): {error.detail}",
            hint=f"OutTime may only keep (parts of) axes of Time {time}; drop the others",
        ) from None

    strides = [t.divisor_stride for t in terms]
    if any(outer <= inner for outer, inner in zip(strides, strides[1:])):
        raise LayoutError(
            STAGE,
            "OrderNotPreserved",
            "contract_time: OutTime axes must follow the same order as the Time axes",
            hint=f"list the kept axes in the order they have in Time {time}",
        )

    extents = padding_per_stride(time)
    boundaries = sorted(
        ((t.divisor_stride, extents[t.dividend_stride]) for t in terms if t.dividend_stride in extents),
    )
    if boundaries and boundaries[0][0] != 1:
        raise LayoutError(
            STAGE,
            "LeadingPadding",
            f"contract_time: Padding mismatch. OutTime {out_time} has unexpected leading padding not present in "
            f"Time {time}",
            hint="remove the padding inside the innermost kept axis of OutTime",
        )
    ends = [stride for stride, _ in boundaries[1:]] + [out_time.size]
    for (stride, extent), end in zip(boundaries, ends):
        if stride * extent != end:
            raise LayoutError(
                STAGE,
                "PaddingNotPreserved",
                f"contract_time: Padding mismatch. Non-reduced axes in OutTime {out_time} do not preserve padding "
                f"from Time {time}",
                hint=f"keep each axis of OutTime with exactly the padding it has in Time {time}",
            )

    kept = set(out_time.axes)
    return TimeParams(terms=terms, reduced=tuple(a for a in time.axes if a not in kept))
