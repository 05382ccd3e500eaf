"""Turn mapping-expression text into tokens (docs/mapping-language.md §1.3, "Tokens")."""

from __future__ import annotations

from typing import Final

from tcpdsl.errors import MappingSyntaxError
from tcpdsl.syntax.tokens import Kind, PaddingKind, Token

_WHITESPACE: Final = frozenset(" \t\r\n\f\v")
_UPPER: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LETTERS: Final = _UPPER | frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGITS: Final = frozenset("0123456789")
_WORD: Final = _LETTERS | _DIGITS | {"_"}
_SINGLE: Final = {"/": Kind.SLASH, "%": Kind.PERCENT, "=": Kind.EQ, ",": Kind.COMMA, ":": Kind.COLON}
_FILLS: Final = {"*": PaddingKind.TOP, "0": PaddingKind.ZERO, "!": PaddingKind.BOTTOM}
# Sizes beyond this are certainly mistakes; the cap also keeps int() away from huge digit strings.
MAX_DIGITS: Final = 18


def is_axis_name(text: str) -> bool:
    """An axis identifier: an ASCII uppercase letter, then ASCII letters, digits or ``_``."""
    return bool(text) and text[0] in _UPPER and all(ch in _WORD for ch in text)


def is_escape_name(text: str) -> bool:
    """A name an escape may refer to: an ASCII identifier of any case (module constants)."""
    return bool(text) and (text[0] in _LETTERS or text[0] == "_") and all(ch in _WORD for ch in text)


def tokenize(text: str) -> tuple[Token, ...]:
    """All tokens of ``text``, ending with an ``END`` token. Raises :class:`MappingSyntaxError`."""
    tokens: list[Token] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in _WHITESPACE:
            i += 1
        elif ch in _LETTERS or ch == "_":
            j = _scan_word(text, i)
            tokens.append(Token(Kind.IDENT, i, text[i:j]))
            i = j
        elif ch in _DIGITS:
            j = _scan_word(text, i)
            word = text[i:j]
            if not all(c in _DIGITS for c in word):
                raise MappingSyntaxError(
                    f"Invalid token {word!r}: numbers are plain decimal naturals (no prefix, '_' or suffix)", text, i
                )
            if len(word.lstrip("0")) > MAX_DIGITS:
                raise MappingSyntaxError(f"Number too large: {word}", text, i)
            tokens.append(Token(Kind.NAT, i, word, value=int(word)))
            i = j
        elif ch in _SINGLE:
            tokens.append(Token(_SINGLE[ch], i, ch))
            i += 1
        elif ch in "([":
            tokens.append(Token(Kind.OPEN, i, ch))
            i += 1
        elif ch in ")]":
            tokens.append(Token(Kind.CLOSE, i, ch))
            i += 1
        elif ch == "#":
            tokens.append(Token(Kind.HASH, i, ch))
            i += 1
        elif ch == "{":
            i = _brace(text, i, tokens)
        elif ch == "}":
            raise MappingSyntaxError("Unbalanced brackets: '}' without a matching '{'", text, i)
        else:
            raise MappingSyntaxError(f"Unrecognized token {ch!r}", text, i)
    tokens.append(Token(Kind.END, n, ""))
    return tuple(tokens)


def _scan_word(text: str, i: int) -> int:
    j = i + 1
    while j < len(text) and text[j] in _WORD:
        j += 1
    return j


def _brace(text: str, start: int, tokens: list[Token]) -> int:
    """Lex the brace group at ``start``; return the offset after its ``}``.

    Directly after ``#``, exactly ``*``, ``!`` or ``0`` make one padding token; any other content is
    an escape, which is then the number of a plain ``#``.
    """
    close = start + 1
    while close < len(text) and text[close] not in "{}":
        close += 1
    if close >= len(text):
        raise MappingSyntaxError("Unbalanced brackets: '{' is never closed", text, start)
    if text[close] == "{":
        raise MappingSyntaxError("Invalid escape: braces do not nest", text, close)
    content = text[start + 1 : close]
    name = content.strip()
    content_pos = start + 1 + (len(content) - len(content.lstrip()))
    after_hash = bool(tokens) and tokens[-1].kind is Kind.HASH and text[tokens[-1].pos + 1 : start].strip() == ""
    if name in _FILLS:
        if not after_hash:
            raise MappingSyntaxError(f"'{{{name}}}' is a padding kind and must follow '#'", text, start)
        hash_token = tokens.pop()
        tokens.append(Token(Kind.HASH_FILL, hash_token.pos, text[hash_token.pos : close + 1], fill=_FILLS[name]))
    elif not name:
        raise MappingSyntaxError("Empty escape: write {Name}", text, start)
    elif is_escape_name(name):
        tokens.append(Token(Kind.ESCAPE, start, text[start : close + 1], name=name))
    else:
        raise MappingSyntaxError("Invalid escape: expected {Name} naming a mapping alias or an int constant", text, content_pos)
    return close + 1
