"""Reading mapping texts: from unanalysed and analysed types, and from the argument expressions of calls."""

from __future__ import annotations

from dataclasses import dataclass

from mypy.nodes import GDEF, Expression, ImportFrom, IndexExpr, MemberExpr, MypyFile, NameExpr, RefExpr, StrExpr
from mypy.nodes import TypeAlias, Var
from mypy.types import LiteralType, RawExpressionType, Type, UnboundType, UnionType, get_proper_type

from tcpdsl.static.names import FACADE, LITERAL_NAMES, MAPPING_FORM
from tcpdsl.static.resolve import declared_axis, module_of


@dataclass(frozen=True)
class Source:
    """A mapping text and the module whose globals resolve its names."""

    text: str
    module: str


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


def expression_source(expr: Expression, module: str) -> Source | None:
    """The mapping an argument expression spells statically, or None (a local value, a computation)."""
    if isinstance(expr, IndexExpr) and isinstance(expr.base, RefExpr) and isinstance(expr.index, StrExpr):
        if expr.base.fullname in LITERAL_NAMES:
            return Source(expr.index.value, module)
        return None
    if not isinstance(expr, (NameExpr, MemberExpr)) or (isinstance(expr, NameExpr) and expr.kind != GDEF):
        return None
    node = expr.node
    if isinstance(node, TypeAlias):
        text = literal_text(node.target)
        return Source(text, node.module) if text is not None else None
    if isinstance(node, Var):
        declared = declared_axis(node)
        if declared is not None:
            return Source(declared[0], module_of(node.fullname))
    return None
