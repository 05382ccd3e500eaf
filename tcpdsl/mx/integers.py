"""Integer arguments as the mx functions take them: Python ints and numpy integers alike, never bools."""

from __future__ import annotations

import operator


def as_int(value: object) -> int | None:
    """``value`` as a Python int when it is an integer (``np.int64(3)`` too), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None
