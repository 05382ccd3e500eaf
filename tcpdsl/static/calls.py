"""Type-checking hooks: axis declarations, inline tensor subscriptions and the five stage calls.

A stage call reads its mapping arguments from the call's expressions, runs the verifier the runtime runs
(:mod:`tcpdsl.verify.compose`), reports a failure with the runtime's text at the call, and otherwise gives
the call its computed result type: canonical ``Literal`` layouts and the accumulator dtype.
"""

from __future__ import annotations

from typing import Final

from mypy.checker import TypeChecker
from mypy.nodes import CallExpr, Context, Expression, IndexExpr, IntExpr, MemberExpr, StrExpr
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import AnyType, Instance, LiteralType, Type, TypeOfAny, get_proper_type

from tcpdsl.algebra.nodes import Mapping
from tcpdsl.algebra.scope import axis
from tcpdsl.errors import TcpError
from tcpdsl.static.names import AXIS_CLASS, TENSOR_CLASSES, fullname
from tcpdsl.static.phases import checker, checker_env, instance
from tcpdsl.static.report import inside_string, internal, report, unchecked
from tcpdsl.static.resolve import Env, build
from tcpdsl.static.scalars import scalar_fullname, scalar_name
from tcpdsl.static.texts import expression_source, literal_text
from tcpdsl.verify import compose
from tcpdsl.verify.families import TRF, TensorType, check_type
from tcpdsl.verify.lane_mode import LaneMode
from tcpdsl.verify.stage import Stage


# The mapping arguments of each stage method, in the order the runtime reads them.
STAGE_ARGUMENTS: Final = {
    Stage.TO_TRF: ("lane", "element"),
    Stage.CONTRACT_OUTER: ("out_time", "out_packet"),
    Stage.CONTRACT_PACKET: ("out_packet",),
    Stage.CONTRACT_TIME: ("out_time",),
    Stage.CONTRACT_LANE: ("out_time", "out_packet"),
}


class Unreadable(Exception):
    """A stage argument the plugin cannot read statically (a local value, a computed mapping)."""


class Located(Exception):
    """A tcpdsl error in one argument, to be reported where that argument is written."""

    def __init__(self, error: TcpError, where: Context) -> None:
        super().__init__(str(error))
        self.error = error
        self.where = where


def axis_call(ctx: FunctionContext) -> Type:
    """``tcp.axis("A", 32)`` is ``Axis[Literal["A"], Literal[32]]``; a bad name or size is the runtime's error."""
    chk = checker(ctx.api)
    try:
        name = _only(ctx.args, 0)
        size = _only(ctx.args, 1)
        if not (isinstance(name, StrExpr) and isinstance(size, IntExpr)):
            return ctx.default_return_type
        try:
            axis(name.value, size.value)
        except TcpError as error:
            report(chk, error, ctx.context)
            return ctx.default_return_type
        str_type, int_type = chk.named_type("builtins.str"), chk.named_type("builtins.int")
        return instance(chk.modules, AXIS_CLASS, [LiteralType(name.value, str_type), LiteralType(size.value, int_type)])
    except Exception as exc:
        internal(chk, exc, ctx.context)
        return ctx.default_return_type


def tensor_call(ctx: FunctionContext) -> Type:
    """``CollectTensor[...](...)`` subscripted inline: its constructor constraints, checked at the call."""
    chk = checker(ctx.api)
    try:
        if isinstance(ctx.context, CallExpr) and isinstance(ctx.context.callee, IndexExpr):
            operand = _operand(ctx.default_return_type, checker_env(chk), chk.tree.fullname)
            if operand is not None:
                check_type(operand.family, operand.dtypes, operand.layouts)
    except TcpError as error:
        report(chk, error, ctx.context)
    except Unreadable as what:
        unchecked(chk, str(what), ctx.context)
    except Exception as exc:
        internal(chk, exc, ctx.context)
    return ctx.default_return_type


def stage_site(call: Context) -> Context:
    """Where a stage call is written: the line of its method name.

    mypy places a call at the start of its whole expression, which for a chain
    ``x.contract_outer(...)\n.contract_packet(...)`` is the first stage's line.
    """
    if isinstance(call, CallExpr) and isinstance(call.callee, MemberExpr):
        callee = call.callee
        if callee.end_line is not None and callee.end_column is not None:
            return Context(line=callee.end_line, column=max(0, callee.end_column - len(callee.name)))
    return call


def stage_call(ctx: MethodContext, method: Stage) -> Type:
    """One stage call: verify as the runtime does, then compute the result type."""
    chk = checker(ctx.api)
    site = stage_site(ctx.context)
    try:
        return _stage(chk, ctx, method)
    except Unreadable as what:
        unchecked(chk, str(what), site)
        return ctx.default_return_type
    except (TcpError, Located) as failure:
        # The declared result (layouts Any) keeps the typestate and adds no follow-on error.
        if isinstance(failure, Located):
            report(chk, failure.error, failure.where)
        else:
            report(chk, failure, site)
        return ctx.default_return_type
    except Exception as exc:
        internal(chk, exc, site)
        return ctx.default_return_type


def _stage(chk: TypeChecker, ctx: MethodContext, method: Stage) -> Type:
    env = checker_env(chk)
    module = chk.tree.fullname
    # The arguments are read first: the runtime parses them before any stage rule runs.
    args = {name: _mapping_arg(ctx, name, method, env, module) for name in STAGE_ARGUMENTS[method]}
    mode = _lane_mode(ctx) if method is Stage.CONTRACT_LANE else LaneMode.INTERLEAVED
    src = _operand(ctx.type, env, module)
    if src is None:
        return ctx.default_return_type
    if method is Stage.TO_TRF:
        out, _ = compose.to_trf(src, lane=args["lane"], element=args["element"])
    elif method is Stage.CONTRACT_OUTER:
        trf = _operand(_arg_type(ctx, "trf"), env, module)
        if trf is None or trf.family is not TRF:
            # Not a TrfTensor (a stream passed as weights, ...): mypy's own arg-type error reports it.
            return ctx.default_return_type
        out, _ = compose.contract_outer(src, trf, out_time=args["out_time"], out_packet=args["out_packet"])
    elif method is Stage.CONTRACT_PACKET:
        out, _ = compose.contract_packet(src, out_packet=args["out_packet"])
    elif method is Stage.CONTRACT_TIME:
        out, _ = compose.contract_time(src, out_time=args["out_time"])
    else:
        pre = _pre_reduce_time(chk, ctx, env, module)
        if pre is None:
            chk.note(
                "tcpdsl: the Time before contract_time is not visible here (not a chained call); "
                "the accumulator capacity is checked as if no Time axis were reduced",
                ctx.context,
            )
            pre = src.layout("Time")
        out, _ = compose.contract_lane(
            src, out_time=args["out_time"], out_packet=args["out_packet"], mode=mode, pre_reduce_time=pre
        )
    return _instance(chk, out)


def _only(args: list[list[Expression]], index: int) -> Expression | None:
    return args[index][0] if index < len(args) and len(args[index]) == 1 else None


def _arg_index(ctx: MethodContext, name: str) -> int:
    if name not in ctx.callee_arg_names:
        raise Unreadable(f"the {name} argument is not visible in this call")
    return ctx.callee_arg_names.index(name)


def _arg_type(ctx: MethodContext, name: str) -> Type:
    types = ctx.arg_types[_arg_index(ctx, name)]
    return types[0] if types else AnyType(TypeOfAny.special_form)


def _mapping_arg(ctx: MethodContext, name: str, method: str, env: Env, module: str) -> Mapping:
    exprs = ctx.args[_arg_index(ctx, name)]
    source = expression_source(exprs[0], module) if len(exprs) == 1 else None
    if source is None:
        raise Unreadable(f'the {name} mapping of {method} is held in a variable, not written m["..."] or a module-level alias')
    try:
        return build(source.text, source.module, env)
    except TcpError as error:
        string = exprs[0].index if isinstance(exprs[0], IndexExpr) else exprs[0]
        raise Located(error, inside_string(error, string, ctx.context)) from error


def _operand(typ: Type, env: Env, module: str) -> TensorType | None:
    """A tensor type whose every parameter is concrete, else None (nothing to check)."""
    proper = get_proper_type(typ)
    if not isinstance(proper, Instance):
        return None
    cls = TENSOR_CLASSES.get(proper.type.fullname)
    if cls is None or len(proper.args) != len(cls.params):
        return None
    dtypes: list[str] = []
    maps: list[Mapping] = []
    for param, arg in zip(cls.params, proper.args):
        if param in cls.dtypes:
            name = scalar_name(arg)
            if name is None:
                return None
            dtypes.append(name)
            continue
        text = literal_text(arg)
        if text is None:
            return None
        try:
            maps.append(build(text, module, env))
        except TcpError as error:
            # The text was valid where it was written; only its axes are not visible from here.
            raise Unreadable(f"the {param} layout {text!r} of this {cls.name} names axes not visible in this module") from error
    return TensorType(cls, tuple(dtypes), tuple(maps))


def _lane_mode(ctx: MethodContext) -> LaneMode:
    index = _arg_index(ctx, "mode")
    if not ctx.args[index]:
        return LaneMode.INTERLEAVED  # the default of contract_lane
    expr = _only(ctx.args, index)
    if isinstance(expr, MemberExpr) and expr.name in LaneMode.__members__:
        return LaneMode[expr.name]
    proper = get_proper_type(_arg_type(ctx, "mode"))
    literal = proper.last_known_value if isinstance(proper, Instance) else proper
    if isinstance(literal, LiteralType) and isinstance(literal.value, str) and literal.value in LaneMode.__members__:
        return LaneMode[literal.value]
    raise Unreadable("the mode of contract_lane is not written LaneMode.INTERLEAVED or LaneMode.SEQUENTIAL")


def _pre_reduce_time(chk: TypeChecker, ctx: MethodContext, env: Env, module: str) -> Mapping | None:
    """The Time entering contract_time, when the receiver is visibly ``<packet tensor>.contract_time(...)``."""
    call = ctx.context
    if not (isinstance(call, CallExpr) and isinstance(call.callee, MemberExpr)):
        return None
    receiver = call.callee.expr
    if not (isinstance(receiver, CallExpr) and isinstance(receiver.callee, MemberExpr)):
        return None
    if receiver.callee.name != Stage.CONTRACT_TIME:
        return None
    before = chk.lookup_type_or_none(receiver.callee.expr)
    operand = _operand(before, env, module) if before is not None else None
    return operand.layout("Time") if operand is not None else None


def _instance(chk: TypeChecker, t: TensorType) -> Instance:
    str_type = chk.named_type("builtins.str")
    args: list[Type] = [instance(chk.modules, scalar_fullname(d), []) for d in t.dtypes]
    args += [LiteralType(str(m), str_type) for m in t.layouts]
    return instance(chk.modules, fullname(t.family), args)

