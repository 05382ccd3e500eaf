"""What a position of a mapping holds: a live logical index, padding, or nothing (docs/mapping-language.md §1.5)."""

from __future__ import annotations

from typing import Final, Union

from tcpdsl.syntax.tokens import PaddingKind

__all__ = ["OUT_OF_BOUNDS", "Cell", "Index", "OutOfBounds", "Pad", "PaddingKind"]


class Index:
    """A live cell: the logical coordinate of every axis it touches (zeros may be omitted)."""

    __slots__ = ("coords",)

    def __init__(self, coords: dict[str, int] | None = None) -> None:
        self.coords: dict[str, int] = {k: v for k, v in (coords or {}).items() if v != 0}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Index) and self.coords == other.coords

    def __hash__(self) -> int:
        return hash(frozenset(self.coords.items()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k} = {v}" for k, v in sorted(self.coords.items()))
        return f"Index[{inner}]"


class Pad:
    """A padding cell of the given kind."""

    __slots__ = ("kind",)

    def __init__(self, kind: PaddingKind) -> None:
        self.kind = kind

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pad) and self.kind == other.kind

    def __hash__(self) -> int:
        return hash(("Pad", int(self.kind)))

    def __repr__(self) -> str:
        return f"Padding({self.kind.name.capitalize()})"


class OutOfBounds:
    """A position past the end of the mapping. Use the singleton :data:`OUT_OF_BOUNDS`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OutOfBounds"


OUT_OF_BOUNDS: Final = OutOfBounds()

Cell = Union[Index, Pad, OutOfBounds]
