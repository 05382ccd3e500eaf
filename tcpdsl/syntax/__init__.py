"""The mapping-expression language: tokens, lexer, syntax tree and parser (docs/mapping-language.md §1.3).

This layer knows nothing about sizes; :mod:`tcpdsl.algebra.build` turns trees into mappings.
"""

from tcpdsl.syntax.lexer import is_axis_name, is_escape_name, tokenize
from tcpdsl.syntax.parser import parse_expression
from tcpdsl.syntax.tokens import Kind, PaddingKind, Token
from tcpdsl.syntax.tree import Expr, Op, Parsed

__all__ = ["Expr", "Kind", "Op", "PaddingKind", "Parsed", "Token", "is_axis_name", "is_escape_name", "parse_expression", "tokenize"]
