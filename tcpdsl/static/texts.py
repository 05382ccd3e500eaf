"""Reading mapping texts: from unanalysed and analysed types, and from the argument expressions of calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mypy.nodes import LDEF, CallExpr, Expression, ImportFrom, IndexExpr, MemberExpr, MypyFile, NameExpr, RefExpr
from mypy.nodes import StrExpr, TypeAlias, Var
from mypy.types import LiteralType, RawExpressionType, Type, UnboundType, UnionType, get_proper_type

from tcpdsl.static.bindings import LocalScope
from tcpdsl.static.names import AXIS_FUNCTIONS, FACADE, LITERAL_NAMES, MAPPING_FORM
from tcpdsl.static.resolve import declared_axis, module_of

# Local variables assigned from local variables, followed at most this deep.
_MAX_DEPTH: Final = 8


@dataclass(frozen=True)
class Source:
    """A mapping text, the module whose globals resolve its names, and whether a function's locals come first."""

    text: str
    module: str
    local: bool = False


def raw_text(arg: Type) -> str | None:
    """The string written as a type argument, before analysis (``m["A, B"]`` gives ``A, B``)."""
    if isinstance(arg, RawExpressionType) and isinstance(arg.literal_value, str):
        return arg.literal_value
    if isinstance(arg, (UnboundType, UnionType)) and arg.original_str_expr is not None:
        return arg.original_str_expr
    return None


def literal_text(typ: Type) -> str | None:
    """The value of an analysed ``Literal["..."]`` (aliases expanded)."""
    proper = get_proper_type(typ)
    if isinstance(proper, LiteralType) and isinstance(proper.value, str):
        return proper.value
    return None


def is_mapping_form(name: str, tree: MypyFile) -> bool:
    """Whether ``name`` (as written in ``tree``) is the facade's ``m``: ``m``, an alias of it, or ``tcp.m``."""
    head, _, last = name.rpartition(".")
    if last == "Literal":
        return False  # the common case, across every stub mypy reads
    if head:
        sym = tree.names.get(head.split(".")[0])
        target = sym.node if sym is not None else None
        return last == MAPPING_FORM and isinstance(target, MypyFile) and target.fullname == FACADE
    for imp in tree.imports:
        if isinstance(imp, ImportFrom) and imp.id == FACADE and imp.relative == 0:
            if any(orig == MAPPING_FORM and (alias or orig) == name for orig, alias in imp.names):
                return True
    return False


def expression_source(expr: Expression, module: str, scope: LocalScope | None, depth: int = 0) -> Source | None:
    """The mapping an argument expression spells statically, or None (a computed mapping).

    ``m["..."]``, an alias (module-level or local), an axis, or a local variable assigned once from
    one of these, read as the literal it stands for.
    """
    if isinstance(expr, IndexExpr) and isinstance(expr.base, RefExpr) and isinstance(expr.index, StrExpr):
        if expr.base.fullname in LITERAL_NAMES:
            return Source(expr.index.value, module, local=scope is not None)
        return None
    if not isinstance(expr, (NameExpr, MemberExpr)) or depth > _MAX_DEPTH:
        return None
    node = expr.node
    local = isinstance(expr, NameExpr) and expr.kind == LDEF
    if isinstance(node, TypeAlias):
        text = literal_text(node.target)
        if text is None:
            return None
        return Source(text, module, local=True) if local else Source(text, node.module)
    if local and scope is not None and isinstance(expr, NameExpr):
        return _local_source(expr.name, module, scope, depth)
    if isinstance(node, Var) and expr.kind != LDEF:
        declared = declared_axis(node)
        if declared is not None:
            return Source(declared[0], module_of(node.fullname))
    return None


def _local_source(name: str, module: str, scope: LocalScope, depth: int) -> Source | None:
    """The one mapping every assignment to a local variable gives it."""
    assigned = scope.bindings(name)
    if not assigned:
        return None
    found: set[Source] = set()
    for expr in assigned:
        if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr) and expr.callee.fullname in AXIS_FUNCTIONS:
            found.add(Source(name, module, local=True))  # an axis declared here, used as a mapping
            continue
        source = expression_source(expr, module, scope, depth + 1) if expr is not None else None
        if source is None:
            return None
        found.add(source)
    return found.pop() if len(found) == 1 else None
