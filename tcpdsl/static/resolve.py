"""Lexical resolution of the names a mapping text uses, through mypy's symbol tables.

A bare name is an axis declared ``Name = tcp.axis("Name", size)`` at module level (here or imported);
an escape ``{Name}`` is a module-level mapping alias (resolved in the alias's own module) or an integer
constant. Sizes come from the declaring assignment when its module was parsed in this run, else from the
``Axis[Literal[name], Literal[size]]`` type the plugin gave the variable (what the cache keeps).
The mapping itself is built by :func:`tcpdsl.algebra.scope.parse`, exactly as the runtime builds it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from collections.abc import Mapping as MappingOf
from dataclasses import dataclass
from typing import Final

from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    Expression,
    Import,
    ImportAll,
    ImportFrom,
    IntExpr,
    MypyFile,
    NameExpr,
    PlaceholderNode,
    RefExpr,
    StrExpr,
    SymbolTableNode,
    TypeAlias,
    UnaryExpr,
    Var,
)
from mypy.types import Instance, LiteralType, get_proper_type

from tcpdsl.algebra.nodes import Mapping
from tcpdsl.algebra.scope import axis, parse
from tcpdsl.errors import LayoutError, MappingSyntaxError
from tcpdsl.static.names import AXIS_CLASS, AXIS_FUNCTIONS
from tcpdsl.syntax import parse_expression

_MAX_ESCAPE_DEPTH: Final = 16


class NotReady(Exception):
    """A name the text uses is not analysed yet; the semantic analyser must defer and retry."""


@dataclass(frozen=True)
class Env:
    """What resolution may read: the parsed modules, and whether a missing name is final.

    ``search`` lets a checker-phase lookup fall back to the axes of the modules this one imports (nearest
    first), then to the one size an axis name has program-wide: the text of a tensor type has lost the
    module it was written in.
    """

    modules: MappingOf[str, MypyFile]
    final: bool
    depend: Callable[[str], None]
    incomplete: Callable[[str], bool]
    search: bool = False


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
    """Parse ``text`` with the names it uses resolved from ``module``'s globals."""
    axes, escapes = names_in(text)
    sizes: dict[str, int] = {}
    # What each other name is bound to, as far as it is known statically: the parser's messages about
    # a misused name (an alias written bare, a variable holding another axis) then match the runtime's.
    values: dict[str, Mapping | int] = {}
    for name in axes:
        sym = _lookup(module, name, env)
        size = _axis_size(sym, env)
        if size is None and env.search:
            size = _search_axis(name, module, env)
        if size is not None:
            sizes[name] = size
        elif sym is not None:
            _bind(values, name, _value(sym, env, depth))
    for name in escapes:
        sym = _lookup(module, name, env)
        if sym is not None:
            _bind(values, name, _value(sym, env, depth))
    return parse(text, sizes, values)


def _bind(values: dict[str, Mapping | int], name: str, value: Mapping | int | None) -> None:
    if value is not None:
        values[name] = value


def module_of(fullname: str) -> str:
    return fullname.rpartition(".")[0]


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


def _axis_size(sym: SymbolTableNode | None, env: Env) -> int | None:
    if sym is None or not isinstance(sym.node, Var):
        return None
    var = sym.node
    env.depend(var.fullname)
    # As at run time, a variable is an axis only when it holds the axis of its own name.
    declared = declared_axis(var)
    if declared is not None:
        return declared[1] if declared[0] == var.name else None
    call = _defining_call(var, env)
    if call is None:
        return None
    callee = call.callee.fullname if isinstance(call.callee, RefExpr) else ""
    if not callee and not env.final:
        raise NotReady(var.name)
    name, size = _call_arg(call, 0, "name"), _call_arg(call, 1, "size")
    if callee not in AXIS_FUNCTIONS or not (isinstance(name, StrExpr) and name.value == var.name):
        return None
    return _int_value(size) if size is not None else None


def declared_axis(var: Var) -> tuple[str, int] | None:
    """The ``Axis[Literal[name], Literal[size]]`` type of a variable, if it has one."""
    typ = get_proper_type(var.type)
    if not (isinstance(typ, Instance) and typ.type.fullname == AXIS_CLASS and len(typ.args) == 2):
        return None
    name, size = (get_proper_type(arg) for arg in typ.args)
    if isinstance(name, LiteralType) and isinstance(size, LiteralType):
        if isinstance(name.value, str) and isinstance(size.value, int) and not isinstance(size.value, bool):
            return name.value, size.value
    return None


def _search_axis(name: str, module: str, env: Env) -> int | None:
    """An axis declared in the modules ``module`` imports, nearest first; else the one size program-wide."""
    for tree in _imported(module, env):
        size = _declared_here(tree, name, env)
        if size is not None:
            return size
    found = {_declared_here(tree, name, env) for tree in env.modules.values()} - {None}
    return found.pop() if len(found) == 1 else None


def _declared_here(tree: MypyFile, name: str, env: Env) -> int | None:
    sym = tree.names.get(name)
    if sym is not None and isinstance(sym.node, Var) and sym.node.fullname == f"{tree.fullname}.{name}":
        return _axis_size(sym, env)
    return None


def _imported(module: str, env: Env) -> Iterator[MypyFile]:
    """The modules ``module`` imports, transitively, breadth first."""
    seen = {module}
    queue = [module]
    while queue:
        tree = env.modules.get(queue.pop(0))
        if tree is None:
            continue
        for dep in _import_ids(tree):
            if dep not in seen and dep in env.modules:
                seen.add(dep)
                queue.append(dep)
                yield env.modules[dep]


def _import_ids(tree: MypyFile) -> Iterator[str]:
    for imp in tree.imports:
        if isinstance(imp, Import):
            yield from (target for target, _ in imp.ids)
        elif isinstance(imp, (ImportFrom, ImportAll)):
            yield imp.id


def _assignments(var: Var, env: Env) -> Iterator[Expression]:
    """Right-hand sides of the module-level assignments to ``var`` in its (freshly parsed) module."""
    tree = env.modules.get(module_of(var.fullname))
    if tree is None:
        return
    for stmt in tree.defs:
        if isinstance(stmt, AssignmentStmt) and any(
            isinstance(lv, NameExpr) and lv.name == var.name for lv in stmt.lvalues
        ):
            yield stmt.rvalue


def _defining_call(var: Var, env: Env) -> CallExpr | None:
    for rvalue in _assignments(var, env):
        if isinstance(rvalue, CallExpr):
            return rvalue
    return None


def _call_arg(call: CallExpr, position: int, keyword: str) -> Expression | None:
    positional = [arg for arg, name in zip(call.args, call.arg_names) if name is None]
    if position < len(positional):
        return positional[position]
    for arg, name in zip(call.args, call.arg_names):
        if name == keyword:
            return arg
    return None


def _int_value(expr: Expression) -> int | None:
    if isinstance(expr, IntExpr):
        return expr.value
    if isinstance(expr, UnaryExpr) and expr.op == "-" and isinstance(expr.expr, IntExpr):
        return -expr.expr.value
    return None


def _value(sym: SymbolTableNode, env: Env, depth: int) -> Mapping | int | None:
    """The runtime value of a module-level name, when it is a mapping alias, an axis or an int constant."""
    node = sym.node
    if isinstance(node, TypeAlias):
        env.depend(node.fullname)
        target = get_proper_type(node.target)
        if not (isinstance(target, LiteralType) and isinstance(target.value, str)):
            return None
        if depth >= _MAX_ESCAPE_DEPTH:
            raise LayoutError("mapping", "BadEscape", f"{node.name} nests escapes more than {_MAX_ESCAPE_DEPTH} deep")
        return build(target.value, node.module, env, depth + 1)
    if not isinstance(node, Var):
        return None
    env.depend(node.fullname)
    if isinstance(node.final_value, int) and not isinstance(node.final_value, bool):
        return node.final_value
    declared = declared_axis(node) or _declared_by_call(node, env)
    if declared is not None:
        return axis(*declared)
    for rvalue in _assignments(node, env):
        value = _int_value(rvalue)
        if value is not None:
            return value
    return None


def _declared_by_call(var: Var, env: Env) -> tuple[str, int] | None:
    """``(name, size)`` of ``var = tcp.axis("Name", size)`` in its freshly parsed module."""
    call = _defining_call(var, env)
    if call is None or not (isinstance(call.callee, RefExpr) and call.callee.fullname in AXIS_FUNCTIONS):
        return None
    name, size = _call_arg(call, 0, "name"), _call_arg(call, 1, "size")
    number = _int_value(size) if size is not None else None
    return (name.value, number) if isinstance(name, StrExpr) and number is not None else None
