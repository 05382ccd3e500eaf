"""``to_trf``: loading a collect stream into the tensor register file (docs/stage-rules.md §2.4)."""

from __future__ import annotations

from typing import Final

from tcpdsl.algebra import Mapping, Pair, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.constants import BITS_PER_BYTE, TRF_CAPACITY_BYTES
from tcpdsl.verify.dtypes import bits_of, bytes_text
from tcpdsl.verify.params import TrfParams
from tcpdsl.verify.lane_size import check_lane_size
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.TO_TRF


@memoized
def verify_to_trf(dtype: str, *, time: Mapping, packet: Mapping, lane: Mapping, element: Mapping) -> TrfParams:
    """Check that the stream ``[Time, Packet]`` lands in the TRF as ``[Lane, Element]``."""
    bits = bits_of(dtype, STAGE)
    check_lane_size(STAGE, lane)

    total_bits = bits * lane.size * element.size
    if total_bits > TRF_CAPACITY_BYTES * BITS_PER_BYTE:
        total = bytes_text(bits, lane.size * element.size)
        per_lane = bytes_text(bits, element.size)
        raise LayoutError(
            STAGE,
            "ExceedsCapacity",
            f"TRF data ({total} bytes = {lane.size} lanes x {per_lane} bytes) exceeds the tensor register file "
            f"capacity ({TRF_CAPACITY_BYTES} bytes)",
            hint="load the weights in tiles: shrink Element (and the stream Time) so that Lane x Element fits "
            f"{TRF_CAPACITY_BYTES} bytes",
        )

    if time.size % lane.size:
        raise LayoutError(
            STAGE,
            "LaneDoesNotDivideTime",
            f"Lane::SIZE ({lane.size}) does not divide Time::SIZE ({time.size})",
            hint=f"the outermost {lane.size} cells of Time must be the Lane {lane}; make Time a multiple of {lane.size}",
        )

    time_outer, time_inner = split_at(time, time.size // lane.size)
    if time_outer != lane:
        raise LayoutError(
            STAGE,
            "LaneMismatch",
            f"`to_trf` lane mismatch: time_outer != Lane: {time_outer} != {lane}",
            hint=f"declare Lane as {time_outer}, or put Lane {lane} outermost in the stream Time",
        )

    joined = Pair(time_inner, packet)
    if joined != element:
        raise LayoutError(
            STAGE,
            "ElementMismatch",
            f"`to_trf` element mismatch: [time_inner, Packet] != Element: {joined} != {element}",
            hint=f"declare Element as {joined}: the stream Time inside Lane, then the Packet",
        )

    return TrfParams(
        time_inner=time_inner,
        bytes_per_lane=(bits * element.size) // BITS_PER_BYTE,
        total_bytes=total_bits // BITS_PER_BYTE,
    )
