"""Checks shared by several stages, so each message is produced in one place."""

from __future__ import annotations

from tcpdsl.algebra import Mapping
from tcpdsl.errors import LayoutError
from tcpdsl.verify.constants import is_valid_lane_size


def check_lane_size(stage: str, lane: Mapping) -> None:
    """Lane selects 1 to 8 MAC rows, in powers of two."""
    if not is_valid_lane_size(lane.size):
        raise LayoutError(
            stage,
            "LaneSize",
            f"Lane::SIZE must be 1, 2, 4, or 8, got {lane.size}",
            hint=f"map 1, 2, 4 or 8 cells to Lane (Lane {lane} has {lane.size}), padding it up to the next valid "
            "size with `#`",
        )
