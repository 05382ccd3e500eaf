"""How the Lane Folder lays the lanes out: into the packet, or into time."""

from __future__ import annotations

import enum


class LaneMode(enum.Enum):
    """``INTERLEAVED`` puts Lane into OutPacket; ``SEQUENTIAL`` puts it into OutTime."""

    INTERLEAVED = "Interleaved"
    SEQUENTIAL = "Sequential"

    def __str__(self) -> str:
        return self.value
