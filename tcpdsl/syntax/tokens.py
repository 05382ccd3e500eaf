"""Tokens of the mapping-expression language (docs/mapping-language.md §1.3)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final


class PaddingKind(enum.IntEnum):
    """What the padding cells of ``E # p`` hold, ordered ``BOTTOM < ZERO < TOP`` as in the reference.

    The marker after ``#`` writes it: plain ``#`` or ``#{*}`` is TOP, ``#{0}`` ZERO, ``#{!}`` BOTTOM.
    """

    BOTTOM = 0  # inaccessible: reading or writing it is undefined
    ZERO = 1  # accessible and known to hold zero
    TOP = 2  # accessible, arbitrary values (the default ``#``)

    @property
    def marker(self) -> str:
        """The operator that writes this kind: ``#``, ``#{0}`` or ``#{!}``."""
        return _MARKERS[self]


_MARKERS: Final = {PaddingKind.TOP: "#", PaddingKind.ZERO: "#{0}", PaddingKind.BOTTOM: "#{!}"}


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
    fill: PaddingKind = PaddingKind.TOP

    def describe(self) -> str:
        return "end of expression" if self.kind is Kind.END else repr(self.text)
