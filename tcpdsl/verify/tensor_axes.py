"""The axes that name a logical tensor's dimensions: ``Tensor(array, "A B")`` or ``Tensor(array, (A, B))``.

The rules here are shared by the runtime constructor and the static checker, so both refuse the same
axes in the same words (docs/stage-rules.md §2.8).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import lru_cache
from typing import Final

from tcpdsl.algebra import Symbol
from tcpdsl.errors import LayoutError
from tcpdsl.syntax import is_axis_name

STAGE: Final = "Tensor"


def named_axes(axes: object) -> tuple[tuple[str, ...], dict[str, int]]:
    """The distinct axis names ``axes`` gives, in order, and the sizes of those given as axis objects.

    ``axes`` is a text (``"A B"``, ``"A, B"``) or a sequence of names and axes (``("A", B)``).
    """
    if isinstance(axes, str):
        return _text_names(axes), {}
    if isinstance(axes, Sequence) and all(isinstance(a, (str, Symbol)) for a in axes):
        names = _checked_names(tuple(a.name if isinstance(a, Symbol) else a for a in axes))
        return names, {a.name: a.n for a in axes if isinstance(a, Symbol)}
    raise LayoutError(
        STAGE, "AxisNames", f"axes must be a string such as \"A B\" or a sequence of names or axes, got {axes!r}"
    )


@lru_cache(maxsize=1024)
def _text_names(text: str) -> tuple[str, ...]:
    """The names of an axes text, checked once per text (a refusal is not cached)."""
    return _checked_names(tuple(text.replace(",", " ").split()))


def _checked_names(names: tuple[str, ...]) -> tuple[str, ...]:
    for name in names:
        if not is_axis_name(name):
            raise LayoutError(
                STAGE, "AxisNames", f"{name!r} is not an axis name", hint="axis names start with an uppercase ASCII letter"
            )
    if len(set(names)) != len(names):
        raise LayoutError(STAGE, "DuplicateAxis", f"axes {' '.join(names)} name an axis twice")
    return names


def check_declared(names: Sequence[str], known: Collection[str]) -> None:
    """Every name has a size: given as an axis object or in ``sizes=``, or declared where the call is written."""
    unknown = [n for n in names if n not in known]
    if unknown:
        raise LayoutError(
            STAGE,
            "UnknownAxis",
            f"axis {', '.join(unknown)} is not declared in the calling module",
            hint=f"declare it, e.g. {unknown[0]} = tcp.axis(\"{unknown[0]}\", <size>), pass the axis itself, or pass sizes=",
        )
