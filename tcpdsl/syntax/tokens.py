"""Tokens of the mapping-expression language (docs/mapping-language.md §1.3)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Fill(enum.Enum):
    """The padding marker written after ``#``: plain ``#``/``#{*}`` is TOP, ``#{0}`` ZERO, ``#{!}`` BOTTOM."""

    TOP = "*"
    ZERO = "0"
    BOTTOM = "!"

    @property
    def marker(self) -> str:
        return "#" if self is Fill.TOP else "#{" + self.value + "}"


class Kind(enum.Enum):
    IDENT = "identifier"
    NAT = "number"
    ESCAPE = "escape"
    SLASH = "/"
    PERCENT = "%"
    EQ = "="
    HASH = "#"
    HASH_FILL = "#{...}"
    COMMA = ","
    COLON = ":"
    OPEN = "opening bracket"
    CLOSE = "closing bracket"
    END = "end of expression"


@dataclass(frozen=True, slots=True)
class Token:
    """One token. ``pos`` is the offset of its first character in the expression text.

    ``text`` is the source spelling; ``value`` the natural number (``NAT``), ``name`` the escaped
    name (``ESCAPE``) and ``fill`` the padding kind (``HASH``, ``HASH_FILL``).
    """

    kind: Kind
    pos: int
    text: str
    value: int = 0
    name: str = ""
    fill: Fill = Fill.TOP

    def describe(self) -> str:
        return "end of expression" if self.kind is Kind.END else repr(self.text)
