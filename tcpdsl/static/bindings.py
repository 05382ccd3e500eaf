"""The names a function binds: what a mapping text written in its body sees before the module's globals.

At run time ``m["K / 16"]`` inside a function reads the frame's locals first, so an axis declared in
the function (``K = tcp.axis("K", 64)``) is visible there. Statically the same names are found by
reading the function's own statements: every plain assignment to a name, and the names bound in ways
whose value cannot be known (parameters, loop and ``with`` targets, imports), as unknown.
Nested functions and classes have scopes of their own and are not read.
"""

from __future__ import annotations

from collections.abc import Iterable

from mypy.nodes import (
    AssignmentStmt,
    Block,
    ClassDef,
    Decorator,
    Expression,
    ForStmt,
    FuncDef,
    FuncItem,
    IfStmt,
    Import,
    ImportFrom,
    MatchStmt,
    NameExpr,
    OverloadedFuncDef,
    Statement,
    TryStmt,
    TupleExpr,
    WhileStmt,
    WithStmt,
)

# A name bound to a value only the run time knows.
UNKNOWN = None


class LocalScope:
    """The bindings of one function body, read once."""

    def __init__(self, function: FuncItem) -> None:
        self.function = function
        self._bound: dict[str, list[Expression | None]] | None = None

    def bindings(self, name: str) -> list[Expression | None] | None:
        """The right-hand sides assigned to ``name`` (``None`` for an unknown value), or None if not local."""
        if self._bound is None:
            self._bound = {}
            for argument in self.function.arguments:
                self._bound.setdefault(argument.variable.name, []).append(UNKNOWN)
            for target, value in _bindings(self.function.body.body):
                self._bound.setdefault(target, []).append(value)
        return self._bound.get(name)


def _bindings(statements: Iterable[Statement]) -> Iterable[tuple[str, Expression | None]]:
    """``(name, value)`` for each name the statements bind (mypy's visitors cannot be subclassed here)."""
    for stmt in statements:
        if isinstance(stmt, AssignmentStmt):
            for target in stmt.lvalues:
                yield from _targets(target, stmt.rvalue)
        elif isinstance(stmt, (FuncDef, OverloadedFuncDef, ClassDef)):
            yield stmt.name, UNKNOWN  # a scope of its own: only its name is bound here
        elif isinstance(stmt, Decorator):
            yield stmt.func.name, UNKNOWN
        elif isinstance(stmt, Import):
            yield from ((alias or module.partition(".")[0], UNKNOWN) for module, alias in stmt.ids)
        elif isinstance(stmt, ImportFrom):
            yield from ((alias or name, UNKNOWN) for name, alias in stmt.names)
        elif isinstance(stmt, ForStmt):
            yield from _targets(stmt.index, UNKNOWN)
        elif isinstance(stmt, WithStmt):
            for bound in stmt.target:
                if bound is not None:
                    yield from _targets(bound, UNKNOWN)
        yield from _bindings(nested_statements(stmt))


def nested_statements(stmt: Statement) -> Iterable[Statement]:
    """The statements nested in a compound statement (not in a nested function or class).

    Every branch counts, including those mypy finds unreachable: under ``if TYPE_CHECKING:`` the
    ``else`` branch is the one that runs.
    """
    blocks: list[Block | None] = []
    if isinstance(stmt, IfStmt):
        blocks = [*stmt.body, stmt.else_body]
    elif isinstance(stmt, (ForStmt, WhileStmt)):
        blocks = [stmt.body, stmt.else_body]
    elif isinstance(stmt, WithStmt):
        blocks = [stmt.body]
    elif isinstance(stmt, TryStmt):
        blocks = [stmt.body, *stmt.handlers, stmt.else_body, stmt.finally_body]
    elif isinstance(stmt, MatchStmt):
        blocks = list(stmt.bodies)
    elif isinstance(stmt, Block):
        blocks = [stmt]
    for block in blocks:
        if block is not None:
            yield from block.body


def _targets(target: Expression, value: Expression | None) -> Iterable[tuple[str, Expression | None]]:
    if isinstance(target, NameExpr):
        yield target.name, value
    elif isinstance(target, TupleExpr):
        for item in target.items:
            yield from _targets(item, UNKNOWN)
