"""Type-checking hook for ``tcp.Tensor(array, axes)``: the axis names of a literal text or tuple.

At run time the names of ``tcp.Tensor(x, "H W")`` are looked up where the call is written (the
function's locals, then the module's globals), so an undeclared name would fail only when the line
runs. The plugin reads the same names from the same scopes and reports the runtime's error at the
text; the rules are :mod:`tcpdsl.verify.tensor_axes`, the code the runtime runs.
"""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import DictExpr, Expression, ListExpr, StrExpr, TupleExpr
from mypy.plugin import FunctionContext
from mypy.types import Type

from tcpdsl.algebra import Axis, axis
from tcpdsl.errors import TcpError
from tcpdsl.static.phases import checker, checker_env
from tcpdsl.static.report import internal, report
from tcpdsl.static.resolve import binds_axis, declared_type
from tcpdsl.verify.tensor_axes import check_declared, named_axes

# What the plugin reads of ``axes``: a text, or a sequence of names and axes.
Given = str | tuple[str | Axis[str, int], ...]


def logical_tensor_call(ctx: FunctionContext) -> Type:
    """``tcp.Tensor(x, "H W")``: each name is an axis name, named once, and declared where the call is."""
    chk = checker(ctx.api)
    axes = _argument(ctx, "axes")
    try:
        if axes is not None:
            _check(chk, ctx, axes)
    except TcpError as error:
        report(chk, error, axes if axes is not None else ctx.context)
    except Exception as exc:
        internal(chk, exc, ctx.context)
    return ctx.default_return_type


def _check(chk: TypeChecker, ctx: FunctionContext, axes: Expression) -> None:
    given = _given(chk, axes)
    if given is None:
        return  # a mapping (checked as one), or names computed at run time
    names, carried = named_axes(given)
    known = set(carried)
    sizes = _argument(ctx, "sizes")
    if sizes is not None:
        keys = [key for key, _ in sizes.items] if isinstance(sizes, DictExpr) else None
        if keys is None or not all(isinstance(key, StrExpr) for key in keys):
            return  # sizes= computed at run time may give any name
        known |= {key.value for key in keys if isinstance(key, StrExpr)}
    env, module = checker_env(chk), chk.tree.fullname
    known |= {name for name in names if name not in known and binds_axis(name, module, env) is not False}
    check_declared(names, known)


def _given(chk: TypeChecker, axes: Expression) -> Given | None:
    """The text, or the names and axes of a literal tuple or list; None when any of it is not known statically."""
    if isinstance(axes, StrExpr):
        return axes.value
    if not isinstance(axes, (TupleExpr, ListExpr)):
        return None
    items: list[str | Axis[str, int]] = []
    for item in axes.items:
        if isinstance(item, StrExpr):
            items.append(item.value)
            continue
        typ = chk.lookup_type_or_none(item)
        declared = declared_type(typ) if typ is not None else None
        if declared is None:
            return None
        items.append(axis(*declared))
    return tuple(items)


def _argument(ctx: FunctionContext, name: str) -> Expression | None:
    if name not in ctx.callee_arg_names:
        return None
    exprs = ctx.args[ctx.callee_arg_names.index(name)]
    return exprs[0] if len(exprs) == 1 else None
