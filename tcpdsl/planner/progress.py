"""A one-line progress bar on stderr for searches that take a while.

It appears only when asked for, or by default when stderr is a terminal, and only after the search
has run for ``DELAY`` seconds, so quick searches print nothing. It is redrawn at most every
``PERIOD`` seconds and erased when the search ends.
"""

from __future__ import annotations

import sys
import time
from typing import Final, TextIO

DELAY: Final = 0.5
PERIOD: Final = 0.1
WIDTH: Final = 24


class Progress:
    """Draws ``[#####.....] 45%  1234 chains, best 12294 cycles, 1.2 s`` on ``stream``."""

    def __init__(self, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty()) if callable(isatty) else False
        self.enabled = enabled
        self.started = time.perf_counter()
        self._drawn = 0.0
        self._width = 0

    def update(self, done: float, chains: int, best: int | None) -> None:
        """Report ``done`` (0 to 1) of the space visited, the chains checked and the best cycles so far."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.started < DELAY or now - self._drawn < PERIOD:
            return
        self._drawn = now
        filled = round(WIDTH * min(max(done, 0.0), 1.0))
        best_text = f", best {best} cycles" if best is not None else ""
        line = (
            f"[{'#' * filled}{'.' * (WIDTH - filled)}] {100 * done:3.0f}%  {chains} chains{best_text}, "
            f"{now - self.started:.1f} s"
        )
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def close(self) -> None:
        """Erase the bar (nothing to do if it never appeared)."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
