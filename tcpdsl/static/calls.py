"""Type-checking hooks: axis declarations, inline tensor subscriptions and the stage calls of the stage table.

A stage call reads its mapping arguments from the call's expressions, runs the verifier the runtime runs
(:mod:`tcpdsl.verify.compose`), reports a failure with the runtime's text at the call, and otherwise gives
the call its computed result type: canonical ``Literal`` layouts and the accumulator dtype.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import replace
from typing import Final

from mypy.checker import TypeChecker
from mypy.nodes import ARG_NAMED, LDEF, Block, CallExpr, Context, Expression, IndexExpr, IntExpr, LambdaExpr
from mypy.nodes import MemberExpr, NameExpr, RefExpr, StrExpr, Var
from mypy.plugin import FunctionContext, MethodContext, MethodSigContext
from mypy.traverser import all_name_and_member_expressions
from mypy.types import AnyType, CallableType, FunctionLike, Instance, LiteralType, Type, TypeOfAny, TypeType, get_proper_type

from tcpdsl.algebra import Mapping, axis
from tcpdsl.errors import LayoutError, TcpError
from tcpdsl.static.names import AXIS_CLASS
from tcpdsl.static.operands import Unreadable, dtype_names, family_of, known_grid, operand, pre_reduce_time
from tcpdsl.static.operands import result_type, type_layout
from tcpdsl.static.phases import checker, checker_env, instance
from tcpdsl.static.report import inside_string, internal, report, unchecked
from tcpdsl.static.scalars import scalar_name
from tcpdsl.static.resolve import Env, Unknowable, assigned_once, build, declarations
from tcpdsl.static import vector_calls
from tcpdsl.static.texts import expression_source
from tcpdsl.verify import compose
from tcpdsl.verify.families import TIME, TRF, TensorType, check_type
from tcpdsl.verify.lane_mode import LaneMode
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.stages import STAGES, compose_stage
from tcpdsl.verify.switch_config import CONFIGS

# Names standing for names, followed at most this deep.
_MAX_CONSTANT_DEPTH: Final = 8


class Located(Exception):
    """A tcpdsl error in one argument, to be reported where that argument is written."""

    def __init__(self, error: TcpError, where: Context) -> None:
        super().__init__(str(error))
        self.error = error
        self.where = where


def axis_call(ctx: FunctionContext) -> Type:
    """``tcp.axis("A", 32)`` is ``Axis[Literal["A"], Literal[32]]``; a bad name or size is the runtime's error.

    A module-level declaration whose name a module it imports declares with another size is an error
    here: the two would meet in one program with two meanings.
    """
    chk = checker(ctx.api)
    try:
        name = _only(ctx.args, 0)
        size = _literal_int(ctx.arg_types, 1)
        if not (isinstance(name, StrExpr) and size is not None):
            return ctx.default_return_type
        try:
            axis(name.value, size)
            if chk.scope.is_top_level():
                _one_size(chk, name.value, size)
        except TcpError as error:
            report(chk, error, ctx.context)
            return ctx.default_return_type
        str_type, int_type = chk.named_type("builtins.str"), chk.named_type("builtins.int")
        return instance(chk.modules, AXIS_CLASS, [LiteralType(name.value, str_type), LiteralType(size, int_type)])
    except Exception as exc:
        internal(chk, exc, ctx.context)
        return ctx.default_return_type


def _literal_int(types: list[list[Type]], index: int) -> int | None:
    """The int an argument is known to hold (a literal or a ``Final`` constant)."""
    if index >= len(types) or len(types[index]) != 1:
        return None
    proper = get_proper_type(types[index][0])
    literal = proper.last_known_value if isinstance(proper, Instance) else proper
    if isinstance(literal, LiteralType) and isinstance(literal.value, int) and not isinstance(literal.value, bool):
        return literal.value
    return None


def _one_size(chk: TypeChecker, name: str, size: int) -> None:
    module = chk.tree.fullname
    for other, other_size in sorted(declarations(name, module, checker_env(chk)).items()):
        if other_size != size:
            raise LayoutError(
                "mapping", "AxisSizeConflict",
                f"axis {name} is declared here with size {size}, and with size {other_size} in {other}, "
                f"which this module imports (declared twice, with two sizes)",
                f"declare {name} once, in one module, and import it wherever it is used",
            )


def tensor_call(ctx: FunctionContext) -> Type:
    """``CollectTensor[...](...)`` subscripted inline: its constructor constraints, checked at the call."""
    chk = checker(ctx.api)
    try:
        if isinstance(ctx.context, CallExpr) and isinstance(ctx.context.callee, IndexExpr):
            found = operand(ctx.default_return_type, checker_env(chk, types=True), chk.tree.fullname)
            if found is not None:
                check_type(found.family, found.dtypes, found.layouts)
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
        return _name_site(call.callee) or call
    return call


def _name_site(member: MemberExpr) -> Context | None:
    if member.end_line is None or member.end_column is None:
        return None
    return Context(line=member.end_line, column=max(0, member.end_column - len(member.name)))


def _place_followers(chk: TypeChecker, call: Context) -> None:
    """Place each attribute read off ``call``'s result (``call.<name>``) at the line of its name.

    mypy reports an attribute error, such as a stage called out of order, where the whole expression
    starts: for a chain written over several lines, the line of its first stage.
    """
    if not isinstance(call, CallExpr):
        return
    function = chk.scope.current_function()
    # mypy's traversal is compiled and cannot be subclassed; its collector walks a lambda's body.
    body = function.body if function is not None else Block(list(chk.tree.defs))
    for member in all_name_and_member_expressions(LambdaExpr([], body))[1]:
        site = _name_site(member) if member.expr is call else None
        if site is not None:
            member.line, member.column = site.line, site.column


def stage_call(ctx: MethodContext, method: Stage) -> Type:
    """One stage call: verify as the runtime does, then compute the result type."""
    chk = checker(ctx.api)
    site = stage_site(ctx.context)
    try:
        _place_followers(chk, ctx.context)
        return _stage(chk, ctx, method)
    except vector_calls.UnknownPass as what:
        unchecked(chk, str(what), site, then=what.then)
        return ctx.default_return_type
    except Unreadable as what:
        unchecked(chk, str(what), site)
        return ctx.default_return_type
    except vector_calls.EarlierRefused:
        return ctx.default_return_type  # reported (or noted) at the earlier call
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
    """The call as its row of the stage table describes it: arguments, operands, then the composer."""
    row = STAGES[method]
    module = chk.tree.fullname
    written, types = checker_env(chk), checker_env(chk, types=True)
    if method.startswith("vector_") and isinstance(ctx.context, CallExpr):
        return _vector_stage(chk, ctx, method, ctx.context, written, types, module)
    # The arguments are read first: the runtime parses them before any stage rule runs.
    args: dict[str, object] = {
        name: _mapping_arg(ctx, name, method, written, module)
        for name in row.mappings
        if name not in row.optional or _given(ctx, name)
    }
    args.update({name: _OPTIONS[name](ctx, written) for name in row.options})
    args.update({name: _POSITIONAL[name](ctx, index) for index, name in enumerate(row.positional)})
    # A method defined elsewhere (``dev.main.begin(view)``) takes its receiver as its first argument.
    src = operand(ctx.arg_types[0][0] if row.method_of and ctx.arg_types[0] else ctx.type, types, module)
    operands = []
    for position, (name, family) in enumerate(row.operands, start=len(row.positional)):
        # A positional-only operand (``commit_view(dst, /)``) is found by its position.
        arg_type = _arg_type(ctx, name) if name in ctx.callee_arg_names else _positional_type(ctx, position)
        found = operand(arg_type, types, module)
        if src is None or found is None:
            check = _PARTIAL.get(method)
            if check is not None:
                check(ctx.type, arg_type, types, module)
            return ctx.default_return_type
        if found.family is not family:
            # A tensor of another class (a stream passed as weights, ...): mypy's own arg-type error reports it.
            return ctx.default_return_type
        operands.append(found)
    if src is None:
        return ctx.default_return_type
    args.update({name: _CARRIED[name](chk, ctx, src, types, module) for name in row.carried})
    out, _ = compose_stage(method, src, *operands, **args)
    if out.family is not row.returns(src.family):
        # A write into a view returns the tensor behind it, whose layouts the view's type does not carry:
        # the rules ran, and the method's declared type stands.
        return ctx.default_return_type
    # A ContractTimeTensor's type carries the Time before the reduction, which contract_lane needs.
    return result_type(chk, out, pre_reduce=src.layout("Time") if row.result is TIME else None)


def _vector_stage(chk: TypeChecker, ctx: MethodContext, method: Stage, call: CallExpr, written: Env, types: Env,
                  module: str) -> Type:
    """A vector pass method: its arguments and the pass's state read from the code, then its row composed."""
    def mapping(expr: Expression, name: str, stage: str) -> Mapping:
        return _mapping_expr(expr, name, stage, written, module, call)

    args = vector_calls.read_call(vector_calls.Call(chk, call, method), written, module, _constant, mapping)
    src = operand(ctx.type, types, module)
    if src is None:
        return ctx.default_return_type
    if STAGES[method].carried:
        args["state"] = vector_calls.pass_state(chk, call, written, module, _constant, mapping)
    out, _ = compose_stage(method, src, **args)
    default = get_proper_type(ctx.default_return_type)
    extra = default.args[len(out.family.params):] if isinstance(default, Instance) else ()
    return result_type(chk, out, typestate=list(extra))
def _target_dtype(ctx: MethodContext, index: int) -> str:
    """The scalar class passed positionally (``fetch_cast(tcp.f32)``), by its dtype name."""
    types = ctx.arg_types[index] if index < len(ctx.arg_types) else []
    proper = get_proper_type(types[0]) if len(types) == 1 else None
    if isinstance(proper, TypeType):
        proper = proper.item
    elif isinstance(proper, FunctionLike) and proper.is_type_obj():
        proper = Instance(proper.type_object(), [])
    name = scalar_name(proper) if proper is not None else None
    if name is None:
        raise Unreadable("the target dtype is not written as a scalar class such as tcp.f32")
    return name


def _start(ctx: MethodContext, index: int) -> int | None:
    """A tile's start when it is a known int; a start computed at run time is checked then."""
    return _literal_int(ctx.arg_types, index)


def _length(ctx: MethodContext, env: Env) -> int:
    found = _literal_int(ctx.arg_types, _arg_index(ctx, "len"))
    if found is None:
        raise Unreadable("the len of tile is not a literal int or a Final constant")
    return found


def _outer_pairing(stream: Type, trf: Type, env: Env, module: str) -> None:
    """What can be checked of ``contract_outer`` when a layout is not known: the dtype pair and the grid."""
    found, weights = family_of(stream), family_of(trf)
    if found is None or weights is None or weights[1] is not TRF:
        return
    dtypes, trf_dtypes = dtype_names(*found), dtype_names(*weights)
    if dtypes is not None and trf_dtypes is not None:
        compose.multiplier(dtypes[0], trf_dtypes[0], known_grid(stream, env, module), known_grid(trf, env, module))


def _pre_reduce_time(chk: TypeChecker, ctx: MethodContext, src: TensorType, env: Env, module: str) -> Mapping:
    """The Time before ``contract_time``, carried by the receiver's type; else the reduced Time itself."""
    time = src.layout("Time")
    text = pre_reduce_time(ctx.type)
    if text is not None:
        return type_layout(text, "pre-reduce Time", TIME, env, module)
    chk.note(
        "tcpdsl: the Time before contract_time is not known here (the ContractTimeTensor comes from an "
        "annotation); the accumulator capacity is checked as if no Time axis were reduced",
        stage_site(ctx.context),
    )
    return time


def outer_signature(ctx: MethodSigContext) -> FunctionLike:
    """``contract_outer`` takes any ``TrfTensor`` when the plugin checks the pair itself.

    Without the plugin the overloads make a wrong dtype pair or grid an argument error; with it the
    composer reports it once, as ``tcpdsl-dtype`` (or a grid mismatch), with the runtime's words.
    """
    try:
        sig = ctx.default_signature
        if "trf" not in sig.arg_names:
            return sig
        index = sig.arg_names.index("trf")
        found = family_of(sig.arg_types[index])
        if found is None:
            return sig
        anything: list[Type] = [AnyType(TypeOfAny.special_form) for _ in found[0].args]
        loose = found[0].copy_modified(args=anything)
        return sig.copy_modified(arg_types=[loose if i == index else t for i, t in enumerate(sig.arg_types)])
    except Exception as exc:
        internal(checker(ctx.api), exc, ctx.context)
        return ctx.default_signature


def stash_signature(ctx: MethodSigContext) -> FunctionLike:
    """A pass method given ``tcp.STASH`` takes it whatever the receiver's stash state, when the plugin
    recomposes the pass itself.

    The stash state is a type parameter, so without the plugin a stash read twice (or before
    ``vector_stash``) is an argument error. With it the composer reports that once, as ``tcpdsl-layout``
    with the runtime's words. A pass the plugin cannot follow keeps the argument error.
    """
    sig = ctx.default_signature
    call = ctx.context
    try:
        if not (isinstance(sig, CallableType) and "operand" in sig.arg_names and isinstance(call, CallExpr)
                and isinstance(call.callee, MemberExpr) and call.callee.name in STAGES):
            return sig
        chk = checker(ctx.api)
        method, module, written = Stage(call.callee.name), chk.tree.fullname, checker_env(chk)
        if not STAGES[method].carried or not vector_calls.reads_stash(vector_calls.Call(chk, call, method), written, _constant):
            return sig

        def mapping(expr: Expression, name: str, stage: str) -> Mapping:
            return _mapping_expr(expr, name, stage, written, module, call)

        vector_calls.pass_state(chk, call, written, module, _constant, mapping)
    except Exception:  # the pass cannot be followed here: the method hook says so, the signature stands
        return sig
    index = sig.arg_names.index("operand")
    anything = AnyType(TypeOfAny.special_form)
    return sig.copy_modified(arg_types=[anything if i == index else t for i, t in enumerate(sig.arg_types)])


def _only(args: list[list[Expression]], index: int) -> Expression | None:
    return args[index][0] if index < len(args) and len(args[index]) == 1 else None


def _arg_index(ctx: MethodContext, name: str) -> int:
    if name not in ctx.callee_arg_names:
        raise Unreadable(f"the {name} argument is not visible in this call")
    return ctx.callee_arg_names.index(name)


def _arg_type(ctx: MethodContext, name: str) -> Type:
    types = ctx.arg_types[_arg_index(ctx, name)]
    return types[0] if types else AnyType(TypeOfAny.special_form)


def _given(ctx: MethodContext, name: str) -> bool:
    """Whether the call passes ``name``; an optional mapping left out is the composer's default."""
    return name not in ctx.callee_arg_names or bool(ctx.args[ctx.callee_arg_names.index(name)])


def _positional_type(ctx: MethodContext, index: int) -> Type:
    types = ctx.arg_types[index] if index < len(ctx.arg_types) else []
    if len(types) != 1:
        raise Unreadable(f"argument {index + 1} is not visible in this call")
    return types[0]


def _mapping_arg(ctx: MethodContext, name: str, method: str, env: Env, module: str) -> Mapping:
    exprs = ctx.args[_arg_index(ctx, name)]
    if len(exprs) != 1:
        raise Unreadable(f'the {name} mapping of {method} is computed, not written m["..."], an alias or a variable holding one')
    return _mapping_expr(exprs[0], name, method, env, module, ctx.context)


def _mapping_expr(expr: Expression, name: str, method: str, env: Env, module: str, context: Context) -> Mapping:
    """A mapping argument read from its expression, its axes resolved where it is written."""
    exprs = [expr]
    source = expression_source(expr, module, env.scope)
    if source is None:
        raise Unreadable(f'the {name} mapping of {method} is computed, not written m["..."], an alias or a variable holding one')
    try:
        return build(source.text, source.module, env if source.local else replace(env, scope=None))
    except Unknowable as unknown:
        raise Unreadable(f"the {name} mapping of {method} uses {unknown.name}, whose value is computed at run time") from None
    except TcpError as error:
        string = exprs[0].index if isinstance(exprs[0], IndexExpr) else exprs[0]
        raise Located(error, inside_string(error, string, context)) from error


def _lane_mode(ctx: MethodContext, env: Env) -> LaneMode:
    index = _arg_index(ctx, "mode")
    if not ctx.args[index]:
        return LaneMode.INTERLEAVED  # the default of contract_lane
    expr = _only(ctx.args, index)
    written = _constant(expr, env) if expr is not None else None
    if isinstance(written, MemberExpr) and written.name in LaneMode.__members__:
        return LaneMode[written.name]
    proper = get_proper_type(_arg_type(ctx, "mode"))
    literal = proper.last_known_value if isinstance(proper, Instance) else proper
    if isinstance(literal, LiteralType) and isinstance(literal.value, str) and literal.value in LaneMode.__members__:
        return LaneMode[literal.value]
    raise Unreadable(
        "the mode of contract_lane is not written LaneMode.INTERLEAVED or LaneMode.SEQUENTIAL, "
        "or a name assigned one of them once"
    )


_CONFIG_CLASSES: Final = {f"{c.__module__}.{c.__name__}": c for c in CONFIGS}


def _switch_config(ctx: MethodContext, index: int) -> object:
    """The switch's configuration: ``tcp.Broadcast1(slice1=8, slice0=4)`` with int fields (each written
    or a name assigned one once), or a name assigned such a call once. A string or int written there
    is passed on for the composer to refuse, as the runtime does."""
    env = checker_env(checker(ctx.api))
    expr = _only(ctx.args, index)
    written = _constant(expr, env) if expr is not None else None
    if isinstance(written, (StrExpr, IntExpr)):
        return written.value
    if isinstance(written, CallExpr) and isinstance(written.callee, RefExpr):
        cls = _CONFIG_CLASSES.get(written.callee.fullname)
        fields = {f.name for f in dataclasses.fields(cls)} if cls is not None else set()
        values = [_constant(arg, env) for arg in written.args]
        if (
            cls is not None
            and all(kind == ARG_NAMED for kind in written.arg_kinds)
            and set(written.arg_names) == fields
            and all(isinstance(v, IntExpr) for v in values)
        ):
            return cls(**{str(n): v.value for n, v in zip(written.arg_names, values) if isinstance(v, IntExpr)})
    raise Unreadable(
        "the switch configuration is not written as a configuration call with int fields, "
        "e.g. tcp.Broadcast1(slice1=8, slice0=4), or a name assigned one once"
    )


def _constant(expr: Expression, env: Env, depth: int = 0) -> Expression:
    """What a name stands for when it is assigned once (a module constant, a local), else ``expr`` itself.

    A module-level name assigned once is read like a mapping alias: ``Interleaved = tcp.LaneMode.INTERLEAVED``.
    """
    if depth >= _MAX_CONSTANT_DEPTH or not isinstance(expr, RefExpr):
        return expr
    if isinstance(expr, NameExpr) and expr.kind == LDEF and env.scope is not None:
        local = env.scope.bindings(expr.name) or []
        value = local[0] if len(local) == 1 else None
    elif isinstance(expr.node, Var):
        value = assigned_once(expr.node, env)
    else:
        value = None
    return _constant(value, env, depth + 1) if value is not None else expr


# How the options and carried arguments of the stage table are read from a call.
_OPTIONS: Final[dict[str, Callable[[MethodContext, Env], object]]] = {"mode": _lane_mode, "len": _length}
_POSITIONAL: Final[dict[str, Callable[[MethodContext, int], object]]] = {
    "dtype": _target_dtype, "start": _start, "config": _switch_config,
}
_CARRIED: Final[dict[str, Callable[[TypeChecker, MethodContext, TensorType, Env, str], object]]] = {
    "pre_reduce_time": _pre_reduce_time,
    # Which context a stream runs in, and the fetch's read size, change only derived sizes, never a rule.
    "context": lambda chk, ctx, src, env, module: "main",
    "read_size": lambda chk, ctx, src, env, module: None,
}
# What a stage can still check when an operand's layouts are not known.
_PARTIAL: Final[dict[Stage, Callable[[Type, Type, Env, str], None]]] = {Stage.CONTRACT_OUTER: _outer_pairing}
