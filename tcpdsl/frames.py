"""Where a name written by the user is looked up: the innermost frame outside tcpdsl.

``m["A, B"]``, a tensor subscription, a stage method's mapping text and ``Tensor(array, "A B")``
resolve axis names in the scope of the code that wrote them (docs/tensors.md). That
code is found by walking out of tcpdsl's own frames rather than by a fixed depth, so a call that
reaches the lookup through more of tcpdsl, or through a helper, resolves in the same place.
"""

from __future__ import annotations

import sys
from types import FrameType


def _ours(frame: FrameType) -> bool:
    name = frame.f_globals.get("__name__")
    return isinstance(name, str) and (name == "tcpdsl" or name.startswith("tcpdsl."))


def user_frame() -> FrameType:
    """The innermost calling frame whose module is not part of tcpdsl (else the outermost frame)."""
    frame = sys._getframe(1)
    while _ours(frame) and frame.f_back is not None:
        frame = frame.f_back
    return frame
