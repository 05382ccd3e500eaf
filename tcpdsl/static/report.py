"""Turning tcpdsl errors into mypy diagnostics with the runtime's own text."""

from __future__ import annotations

from typing import Protocol

from mypy.errorcodes import ErrorCode
from mypy.nodes import Context

from tcpdsl.errors import DtypeError, MappingSyntaxError, TcpError
from tcpdsl.static import codes


class Failer(Protocol):
    """Error reporting, as every mypy plugin interface offers it."""

    def fail(self, msg: str, ctx: Context, /, *, code: ErrorCode | None = None) -> object: ...


class Reporter(Failer, Protocol):
    """Errors and notes, as mypy's type analyser and checker offer them."""

    def note(self, msg: str, ctx: Context, /, *, code: ErrorCode | None = None) -> object: ...


def code_of(error: TcpError) -> ErrorCode:
    if isinstance(error, MappingSyntaxError):
        return codes.SYNTAX
    if isinstance(error, DtypeError):
        return codes.DTYPE
    return codes.LAYOUT


def report(out: Reporter, error: TcpError, ctx: Context) -> None:
    """The first line of ``str(error)`` as the error, the rest (caret, hint) as notes under it."""
    first, *rest = str(error).splitlines() or [type(error).__name__]
    code = code_of(error)
    out.fail(first, ctx, code=code)
    for line in rest:
        out.note(line, ctx, code=code)


def inside_string(error: TcpError, string: Context, where: Context) -> Context:
    """Where to report ``error``: on the offending character of the string literal for a syntax error."""
    if isinstance(error, MappingSyntaxError) and string.line == where.line and string.column >= 0:
        return Context(line=string.line, column=string.column + 1 + error.position)
    return where


def internal(out: Failer, exc: Exception, ctx: Context) -> None:
    """A bug in the plugin: said at the line being checked, never a mypy crash."""
    out.fail(f"tcpdsl plugin internal error: {type(exc).__name__}: {exc}", ctx, code=codes.INTERNAL)


def unchecked(out: Reporter, what: str, ctx: Context, then: str = "the layouts of the result fall back to Any") -> None:
    """A mapping the plugin cannot read: say so, rather than pass or fail silently."""
    out.note(f"tcpdsl: {what}; it cannot be checked statically, and {then}", ctx, code=codes.UNCHECKED)
