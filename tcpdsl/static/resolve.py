"""Lexical resolution of the names a mapping text uses, through mypy's symbol tables.

Names resolve as Python resolves them at run time: first the bindings of the function the text is
written in (:mod:`~tcpdsl.static.bindings`), then the module's globals, which hold only what the
module declares or imports. A bare name is an axis bound to a variable of its own name
(``A = tcp.axis("A", 32)``); an escape ``{Name}`` is a mapping alias (resolved in the alias's own
module) or an integer constant. Sizes come from the declaring call when its module was parsed in this
run, else from the ``Axis[Literal[name], Literal[size]]`` type the plugin gave the variable (what the
cache keeps). The mapping itself is built by :func:`tcpdsl.algebra.scope.parse`, as the runtime builds it.

The text of a tensor *type* has lost the module it was written in; its axes are found by name among
the modules the current one imports (:func:`imported_axis`), where each has one size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from collections.abc import Mapping as MappingOf
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    Expression,
    Import,
    ImportAll,
    ImportFrom,
    IndexExpr,
    IntExpr,
    MypyFile,
    NameExpr,
    PlaceholderNode,
    RefExpr,
    Statement,
    StrExpr,
    SymbolTableNode,
    TypeAlias,
    UnaryExpr,
    Var,
)
from mypy.types import Instance, LiteralType, Type, get_proper_type
from mypy.util import correct_relative_import

from tcpdsl.algebra import Axis, Mapping, axis, parse
from tcpdsl.errors import LayoutError, MappingSyntaxError, TcpError
from tcpdsl.static.bindings import LocalScope, nested_statements
from tcpdsl.static.names import AXIS_CLASS, AXIS_FUNCTIONS, FACADE, LITERAL_NAMES
from tcpdsl.syntax import parse_expression

_MAX_ESCAPE_DEPTH: Final = 16

Value = Mapping | int | Axis[str, int]


class NotReady(Exception):
    """A name the text uses is not analysed yet; the semantic analyser must defer and retry."""


class Unknowable(Exception):
    """A name the text uses is bound to a value only the run time knows (an axis of a computed size)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the value of {name} is computed at run time")
        self.name = name


@dataclass(frozen=True)
class Env:
    """What resolution may read.

    ``modules`` are the parsed modules; ``final`` says a missing name will not appear later;
    ``scope`` is the function the text is written in, if any; ``types`` marks the text of a tensor
    type, whose axes are also looked up among the modules the current one imports.
    """

    modules: MappingOf[str, MypyFile]
    final: bool
    depend: Callable[[str], None]
    incomplete: Callable[[str], bool]
    scope: LocalScope | None = None
    types: bool = False


def names_in(text: str) -> tuple[list[str], list[str]]:
    """``(axis names, escape names)`` mentioned by ``text``, as the parser reads them.

    Malformed text names nothing here: ``parse`` then reports the syntax error itself.
    """
    try:
        parsed = parse_expression(text)
    except MappingSyntaxError:
        return [], []
    return list(parsed.axis_names), list(dict.fromkeys(parsed.splice_names + parsed.number_names))


def build(text: str, module: str, env: Env, depth: int = 0) -> Mapping:
    """Parse ``text`` with the names it uses resolved as code in ``module`` (and ``env.scope``) sees them."""
    axes, escapes = names_in(text)
    sizes: dict[str, int] = {}
    # What each other name is bound to, as far as it is known statically: the parser's messages about
    # a misused name (an alias written bare, a variable holding another axis) then match the runtime's.
    values: dict[str, Value] = {}
    for name in axes:
        value = _binding(name, module, env, depth)
        if isinstance(value, Axis) and value.name == name:
            sizes[name] = value.n
        elif value is None and env.types:
            size = imported_axis(name, module, env)
            if size is not None:
                sizes[name] = size
        elif value is not None:
            values[name] = value
    for name in escapes:
        value = _binding(name, module, env, depth)
        if value is not None:
            values[name] = value
    return parse(text, sizes, values)


def binds_axis(name: str, module: str, env: Env) -> bool | None:
    """Whether ``name`` holds the axis of that name where code in ``module`` (and ``env.scope``) runs.

    None when only the run time knows (a local bound by a loop, an axis of a computed size).
    """
    try:
        value = _binding(name, module, env, 0)
    except (Unknowable, NotReady):
        return None
    except TcpError:
        return None  # a malformed alias text, reported where it is written
    return isinstance(value, Axis) and value.name == name


def module_of(fullname: str) -> str:
    return fullname.rpartition(".")[0]


def _binding(name: str, module: str, env: Env, depth: int) -> Value | None:
    """What ``name`` holds where the text is written: a local binding first, then a module global."""
    if env.scope is not None:
        local = env.scope.bindings(name)
        if local is not None:
            return _local_value(name, local, module, env, depth)
    sym = _lookup(module, name, env)
    return _value(sym, env, depth) if sym is not None else None


def _lookup(module: str, name: str, env: Env) -> SymbolTableNode | None:
    tree = env.modules.get(module)
    sym = tree.names.get(name) if tree is not None else None
    if sym is None:
        if not env.final and env.incomplete(module):
            raise NotReady(name)
        return None
    if isinstance(sym.node, PlaceholderNode):
        if not env.final:
            raise NotReady(name)
        return None
    return sym


def _local_value(name: str, assigned: list[Expression | None], module: str, env: Env, depth: int) -> Value:
    """The one value every binding of a local name gives it, else :class:`Unknowable`."""
    found: list[Value] = []
    for expr in assigned:
        value = _expression_value(expr, module, env, depth) if expr is not None else None
        if value is None:
            raise Unknowable(name)
        found.append(value)
    if any(v != found[0] or type(v) is not type(found[0]) for v in found):
        raise Unknowable(name)
    return found[0]


def _expression_value(expr: Expression, module: str, env: Env, depth: int) -> Value | None:
    """The value an expression assigned to a local gives, when it is known statically."""
    if depth >= _MAX_ESCAPE_DEPTH:
        raise LayoutError("mapping", "BadEscape", f"names nest more than {_MAX_ESCAPE_DEPTH} deep")
    number = int_value(expr, env)
    if number is not None:
        return number
    if isinstance(expr, CallExpr):
        declared = _axis_call(expr, env)
        return axis(*declared) if declared is not None else None
    if isinstance(expr, IndexExpr) and isinstance(expr.base, RefExpr) and isinstance(expr.index, StrExpr):
        if expr.base.fullname in LITERAL_NAMES:
            return build(expr.index.value, module, env, depth + 1)
        return None
    if isinstance(expr, NameExpr) and env.scope is not None and env.scope.bindings(expr.name) is not None:
        local = env.scope.bindings(expr.name)
        return _local_value(expr.name, local, module, env, depth + 1) if local is not None else None
    if isinstance(expr, RefExpr) and expr.node is not None:
        sym = SymbolTableNode(0, expr.node)
        return _value(sym, env, depth + 1)
    return None


def _value(sym: SymbolTableNode, env: Env, depth: int) -> Value | None:
    """The runtime value of a module-level name, when it is a mapping alias, an axis or an int constant."""
    node = sym.node
    if isinstance(node, TypeAlias):
        env.depend(node.fullname)
        target = get_proper_type(node.target)
        if not (isinstance(target, LiteralType) and isinstance(target.value, str)):
            return None
        if depth >= _MAX_ESCAPE_DEPTH:
            raise LayoutError("mapping", "BadEscape", f"{node.name} nests escapes more than {_MAX_ESCAPE_DEPTH} deep")
        # An alias is written at module level: its names are the globals of its own module.
        return build(target.value, node.module, replace(env, scope=None, types=False), depth + 1)
    if not isinstance(node, Var):
        return None
    env.depend(node.fullname)
    if isinstance(node.final_value, int) and not isinstance(node.final_value, bool):
        return node.final_value
    declared = declared_axis(node)
    if declared is not None:
        return axis(*declared)
    for rvalue in _assignments(node, env):
        if isinstance(rvalue, CallExpr):
            called = _axis_call(rvalue, env)
            if called is not None:
                return axis(*called)
            if _is_axis_call(rvalue, env):
                raise Unknowable(node.name)
        value = _int_literal(rvalue)
        if value is not None:
            return value
    return None


def declared_axis(var: Var) -> tuple[str, int] | None:
    """The ``Axis[Literal[name], Literal[size]]`` type of a variable, if it has one."""
    return declared_type(var.type) if var.type is not None else None


def declared_type(of: Type) -> tuple[str, int] | None:
    """``(name, size)`` of an ``Axis[Literal[name], Literal[size]]`` type."""
    typ = get_proper_type(of)
    if not (isinstance(typ, Instance) and typ.type.fullname == AXIS_CLASS and len(typ.args) == 2):
        return None
    name, size = (get_proper_type(arg) for arg in typ.args)
    if isinstance(name, LiteralType) and isinstance(size, LiteralType):
        if isinstance(name.value, str) and isinstance(size.value, int) and not isinstance(size.value, bool):
            return name.value, size.value
    return None


def _is_axis_call(call: CallExpr, env: Env) -> bool:
    callee = call.callee.fullname if isinstance(call.callee, RefExpr) else ""
    if not callee and not env.final:
        raise NotReady("axis")
    return callee in AXIS_FUNCTIONS


def _axis_call(call: CallExpr, env: Env) -> tuple[str, int] | None:
    """``(name, size)`` of a valid ``tcp.axis("Name", size)`` call whose size is known statically."""
    if not _is_axis_call(call, env):
        return None
    name, size = call_arg(call, 0, "name"), call_arg(call, 1, "size")
    number = int_value(size, env) if size is not None else None
    if not (isinstance(name, StrExpr) and number is not None):
        return None
    try:
        axis(name.value, number)
    except TcpError:
        return None  # reported at the declaration
    return name.value, number


def call_arg(call: CallExpr, position: int, keyword: str) -> Expression | None:
    positional = [arg for arg, name in zip(call.args, call.arg_names) if name is None]
    if position < len(positional):
        return positional[position]
    for arg, name in zip(call.args, call.arg_names):
        if name == keyword:
            return arg
    return None


def _int_literal(expr: Expression) -> int | None:
    if isinstance(expr, IntExpr):
        return expr.value
    if isinstance(expr, UnaryExpr) and expr.op == "-" and isinstance(expr.expr, IntExpr):
        return -expr.expr.value
    return None


def int_value(expr: Expression, env: Env) -> int | None:
    """An int literal, or a name of a module-level int constant."""
    literal = _int_literal(expr)
    if literal is not None or not isinstance(expr, RefExpr) or not isinstance(expr.node, Var):
        return literal
    var = expr.node
    if isinstance(var.final_value, int) and not isinstance(var.final_value, bool):
        return var.final_value
    values = {_int_literal(rvalue) for rvalue in _assignments(var, env)}
    return values.pop() if len(values) == 1 else None


def _assignments(var: Var, env: Env) -> Iterator[Expression]:
    """Right-hand sides of the module-level assignments to ``var`` in its (freshly parsed) module.

    Assignments nested in module-level compound statements (``if``/``else``, ``try``, ``with``, loops)
    count: they bind globals too.
    """
    tree = env.modules.get(module_of(var.fullname))
    if tree is None:
        return
    for stmt in _module_level(tree.defs):
        if isinstance(stmt, AssignmentStmt) and any(
            isinstance(lv, NameExpr) and lv.name == var.name for lv in stmt.lvalues
        ):
            yield stmt.rvalue


def _module_level(statements: Iterable[Statement]) -> Iterator[Statement]:
    for stmt in statements:
        yield stmt
        yield from _module_level(nested_statements(stmt))


def assigned_once(var: Var, env: Env) -> Expression | None:
    """The expression a module-level variable is assigned, when it is assigned exactly once."""
    found = list(_assignments(var, env))
    return found[0] if len(found) == 1 else None


# -- the axes of the modules a module imports -------------------------------------------------------


def declared_in(tree: MypyFile, name: str, env: Env) -> int | None:
    """The size of axis ``name`` when ``tree`` itself declares it at module level."""
    sym = tree.names.get(name)
    if sym is None or not isinstance(sym.node, Var) or sym.node.fullname != f"{tree.fullname}.{name}":
        return None
    declared = declared_axis(sym.node)
    if declared is not None:
        return declared[1] if declared[0] == name else None
    if sym.node.type is not None:
        return None  # a variable typed as something other than an axis (most of a large program)
    try:
        value = _value(sym, env, 0)
    except (NotReady, Unknowable):
        return None
    return value.n if isinstance(value, Axis) and value.name == name else None


def declarations(name: str, module: str, env: Env) -> dict[str, int]:
    """Module -> size, for each module ``module`` imports (directly or not) that declares axis ``name``."""
    found = {}
    for other in imported(module, env):
        size = declared_in(env.modules[other], name, env)
        if size is not None:
            found[other] = size
    return found


def imported_axis(name: str, module: str, env: Env) -> int | None:
    """The size of axis ``name`` among the modules ``module`` imports, if they agree on one."""
    sizes = set(declarations(name, module, env).values())
    return sizes.pop() if len(sizes) == 1 else None


def imported(module: str, env: Env) -> Iterator[str]:
    """The modules ``module`` imports, transitively, breadth first.

    Installed libraries (tcpdsl itself, numpy, the standard library) never import a user's modules,
    so the walk does not go through them: it stays within the user's code.
    """
    seen = {module}
    queue = [module]
    while queue:
        tree = env.modules.get(queue.pop(0))
        if tree is None:
            continue
        for dep in _import_ids(tree):
            if dep not in seen and dep in env.modules:
                seen.add(dep)
                if not _is_library(env.modules[dep]):
                    queue.append(dep)
                yield dep


def _is_library(tree: MypyFile) -> bool:
    if tree.fullname == FACADE or tree.fullname.startswith(f"{FACADE}."):
        return True
    return any(part in ("site-packages", "dist-packages", "typeshed") for part in Path(tree.path).parts)


def _import_ids(tree: MypyFile) -> Iterator[str]:
    """The modules ``tree``'s imports name (some candidates are not modules, and the caller drops them)."""
    for imp in tree.imports:
        if isinstance(imp, Import):
            yield from (target for target, _ in imp.ids)
        elif isinstance(imp, (ImportFrom, ImportAll)):
            base, _ = correct_relative_import(tree.fullname, imp.relative, imp.id, tree.is_package_init_file())
            yield base
            if isinstance(imp, ImportFrom):
                # ``from plans import plan_head`` imports the submodule itself.
                yield from (f"{base}.{name}" for name, _ in imp.names)
