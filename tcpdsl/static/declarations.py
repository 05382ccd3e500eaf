"""Semantic-analysis hook for axis declarations: the variable must carry the axis's own name."""

from __future__ import annotations

from mypy.nodes import StrExpr
from mypy.plugin import DynamicClassDefContext

from tcpdsl.static import codes
from tcpdsl.static.report import internal
from tcpdsl.syntax import is_axis_name


def axis_declaration(ctx: DynamicClassDefContext) -> None:
    """``A = tcp.axis("A", 32)``: mapping texts find axes by variable name, so the two must agree.

    A name that is no axis name at all is the runtime's ``InvalidAxisName``, reported at the call;
    suggesting a variable of that name would only repeat the mistake.
    """
    try:
        name = ctx.call.args[0] if ctx.call.args and ctx.call.arg_names[0] in (None, "name") else None
        if isinstance(name, StrExpr) and is_axis_name(name.value) and name.value != ctx.name:
            ctx.api.fail(
                f'axis "{name.value}" is assigned to a variable named "{ctx.name}"; mapping expressions find '
                f'axes by variable name, so write {name.value} = axis("{name.value}", ...)',
                ctx.call,
                code=codes.AXIS,
            )
    except Exception as exc:
        internal(ctx.api, exc, ctx.call)

