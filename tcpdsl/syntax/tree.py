"""The immutable syntax tree of a mapping expression.

It records the expression as written and knows nothing about sizes: axis names and escapes are
unresolved. Every node keeps ``pos``, the offset of the text it came from, for error messages.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Union

from tcpdsl.syntax.tokens import PaddingKind


class Op(enum.Enum):
    """The postfix operators, which share one left-associative precedence level."""

    STRIDE = "/"
    MODULO = "%"
    RESIZE = "="
    PAD = "#"


@dataclass(frozen=True, slots=True)
class Literal:
    """A decimal natural written in number position."""

    value: int
    pos: int

    def render(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class NumberEscape:
    """``{Name}`` in number position: an int constant."""

    name: str
    pos: int

    def render(self) -> str:
        return "{" + self.name + "}"


Number = Union[Literal, NumberEscape]


@dataclass(frozen=True, slots=True)
class Name:
    """A bare axis name."""

    name: str
    pos: int

    def render(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Broadcast:
    """A natural in atom position: ``n`` stride-0 cells (``1`` is the identity)."""

    n: int
    pos: int

    def render(self) -> str:
        return str(self.n)


@dataclass(frozen=True, slots=True)
class Splice:
    """``{Name}`` in atom position: an existing mapping, spliced in whole."""

    name: str
    pos: int

    def render(self) -> str:
        return "{" + self.name + "}"


@dataclass(frozen=True, slots=True)
class Pair:
    """``left, right``: ``left`` is major."""

    left: Expr
    right: Expr
    pos: int

    def render(self) -> str:
        # A pair on the left needs brackets to stay on the left (the comma is right-associative).
        left = f"[{self.left.render()}]" if isinstance(self.left, Pair) else self.left.render()
        return f"{left}, {self.right.render()}"


@dataclass(frozen=True, slots=True)
class Postfix:
    """``inner <op> number``; ``fill`` is the padding kind when ``op`` is ``PAD``."""

    op: Op
    inner: Expr
    number: Number
    fill: PaddingKind
    pos: int

    def render(self) -> str:
        inner = f"[{self.inner.render()}]" if isinstance(self.inner, Pair) else self.inner.render()
        marker = self.fill.marker if self.op is Op.PAD else self.op.value
        return f"{inner} {marker} {self.number.render()}"


Expr = Union[Name, Broadcast, Splice, Pair, Postfix]


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed expression: its text, its tree, and the names it refers to (first-seen order)."""

    text: str
    root: Expr
    axis_names: tuple[str, ...]
    splice_names: tuple[str, ...]
    number_names: tuple[str, ...]

    def render(self) -> str:
        """The expression with uniform spacing; it parses back to the same tree (positions aside)."""
        return self.root.render()
