"""Recursive-descent parser for the ``m![...]`` grammar (docs/mapping-language.md §1.3).

``Mapping0 := Mapping1 ("," Mapping1)* [","]`` folds to the right, ``Mapping1`` is an atom followed
by any number of postfix operators (one left-associative level), and an atom is a name, a
natural, an escape, or a bracketed ``Mapping0``.
"""

from __future__ import annotations

import functools
from typing import Final

from tcpdsl.errors import MappingSyntaxError
from tcpdsl.syntax import tree
from tcpdsl.syntax.lexer import is_axis_name, tokenize
from tcpdsl.syntax.tokens import Kind, PaddingKind, Token

# Bounds that keep every later recursive walk of the tree far from Python's recursion limit.
MAX_NESTING: Final = 64
MAX_HEIGHT: Final = 256

_POSTFIX: Final = {Kind.SLASH: tree.Op.STRIDE, Kind.PERCENT: tree.Op.MODULO, Kind.EQ: tree.Op.RESIZE}
_CLOSING: Final = {"(": ")", "[": "]"}


@functools.lru_cache(maxsize=8192)
def parse_expression(text: str) -> tree.Parsed:
    """Parse ``text`` into a :class:`tree.Parsed`. Raises :class:`MappingSyntaxError`."""
    if not text.strip():
        raise MappingSyntaxError("Empty mapping expression", text, 0)
    return _Parser(text).run()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.axis_names: dict[str, None] = {}
        self.splice_names: dict[str, None] = {}
        self.number_names: dict[str, None] = {}

    def run(self) -> tree.Parsed:
        root, _ = self.mapping0(0)
        end = self.peek()
        if end.kind is Kind.CLOSE:
            self.fail(f"Unbalanced brackets: {end.text!r} without a matching opening bracket", end)
        if end.kind is not Kind.END:
            self.fail(f"Unexpected token {end.describe()}: expected ',' or a postfix operator", end)
        return tree.Parsed(
            self.text, root, tuple(self.axis_names), tuple(self.splice_names), tuple(self.number_names)
        )

    # -- helpers ----------------------------------------------------------------------------
    def peek(self) -> Token:
        return self.tokens[self.i]

    def advance(self) -> Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def fail(self, reason: str, token: Token) -> None:
        raise MappingSyntaxError(reason, self.text, token.pos)

    def check_height(self, height: int, token: Token) -> None:
        if height > MAX_HEIGHT:
            self.fail(f"Expression too deep (more than {MAX_HEIGHT} nested operators and pairs)", token)

    # -- grammar ----------------------------------------------------------------------------
    def mapping0(self, depth: int) -> tuple[tree.Expr, int]:
        """Comma-separated items, folded right; at most one trailing comma. Returns (tree, height)."""
        items = [self.mapping1(depth)]
        while self.peek().kind is Kind.COMMA:
            comma = self.advance()
            if self.peek().kind in (Kind.CLOSE, Kind.END):
                break
            items.append(self.mapping1(depth))
            if len(items) > MAX_HEIGHT:
                self.fail(f"List too long (more than {MAX_HEIGHT} comma-separated parts)", comma)
        node, height = items.pop()
        while items:
            left, left_height = items.pop()
            height = 1 + max(height, left_height)
            self.check_height(height, self.peek())
            node = tree.Pair(left, node, left.pos)
        return node, height

    def mapping1(self, depth: int) -> tuple[tree.Expr, int]:
        node, height = self.atom(depth)
        while True:
            token = self.peek()
            if token.kind in _POSTFIX:
                op, fill = _POSTFIX[token.kind], PaddingKind.TOP
            elif token.kind in (Kind.HASH, Kind.HASH_FILL):
                op, fill = tree.Op.PAD, token.fill
            else:
                return node, height
            self.advance()
            height += 1
            self.check_height(height, token)
            node = tree.Postfix(op, node, self.number(token), fill, node.pos)

    def number(self, operator: Token) -> tree.Number:
        token = self.peek()
        if token.kind is Kind.NAT:
            self.advance()
            return tree.Literal(token.value, token.pos)
        if token.kind is Kind.ESCAPE:
            self.advance()
            self.number_names.setdefault(token.name)
            return tree.NumberEscape(token.name, token.pos)
        self.fail(f"Missing number after {operator.text!r}: found {token.describe()}", token)
        raise AssertionError("unreachable")

    def atom(self, depth: int) -> tuple[tree.Expr, int]:
        token = self.advance()
        if token.kind is Kind.IDENT:
            if not is_axis_name(token.text):
                self.fail(
                    f"Invalid axis name {token.text!r}: axis names start with an uppercase ASCII letter", token
                )
            self.axis_names.setdefault(token.text)
            return tree.Name(token.text, token.pos), 0
        if token.kind is Kind.NAT:
            return tree.Broadcast(token.value, token.pos), 0
        if token.kind is Kind.ESCAPE:
            self.splice_names.setdefault(token.name)
            return tree.Splice(token.name, token.pos), 0
        if token.kind is Kind.OPEN:
            return self.group(token, depth + 1)
        if token.kind is Kind.END:
            self.fail("Unexpected end of expression: expected a mapping", token)
        if token.kind in (Kind.CLOSE, Kind.COMMA):
            self.fail(f"Expected a mapping before {token.text!r}", token)
        self.fail(f"Unexpected token {token.describe()}: expected an axis, a number, '{{Name}}' or a bracket", token)
        raise AssertionError("unreachable")

    def group(self, opening: Token, depth: int) -> tuple[tree.Expr, int]:
        if depth > MAX_NESTING:
            self.fail(f"Brackets nested more than {MAX_NESTING} deep", opening)
        if self.peek().kind is Kind.CLOSE:
            self.fail("Empty brackets: expected a mapping", self.peek())
        node, height = self.mapping0(depth)
        closing = self.peek()
        if closing.kind is Kind.END:
            self.fail(f"Unbalanced brackets: {opening.text!r} is never closed", opening)
        if closing.kind is not Kind.CLOSE:
            self.fail(f"Unexpected token {closing.describe()}: expected ',', a postfix operator or "
                      f"{_CLOSING[opening.text]!r}", closing)
        if closing.text != _CLOSING[opening.text]:
            self.fail(f"Mismatched brackets: {opening.text!r} closed by {closing.text!r}", closing)
        self.advance()
        return node, height
