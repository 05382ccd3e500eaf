"""The vector pass under the plugin: its arguments read from the call, its state from the calls before it.

A pass method's op, operand, width or dtype is read from the expression written (``tcp.FpUnaryOp.EXP``,
``tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)``, a number, ``tcp.STASH``, a ``VrfTensor``, ``tcp.f32``) or
from a name assigned one once. The pass's state (its ALUs, stash and order) is no part of the type, so
the plugin recomposes the calls the receiver came from, back to ``vector_init``, with the same composers
the runtime runs (docs/static-checking.md). A receiver whose history it cannot read (a parameter, a
name assigned twice) leaves the rules the type cannot carry unchecked, with a note.
"""

from __future__ import annotations

import enum
from typing import Any, Final

from mypy.checker import TypeChecker
from mypy.nodes import ARG_POS, CallExpr, Expression, FloatExpr, IntExpr, MemberExpr, NameExpr, RefExpr, StrExpr
from mypy.nodes import TupleExpr, UnaryExpr
from mypy.types import Instance, LiteralType, Type, get_proper_type

from tcpdsl.errors import TcpError
from tcpdsl.static.names import AXIS_CLASS, SCALAR_BASE
from tcpdsl.static.operands import Unreadable, operand
from tcpdsl.static.resolve import Env
from tcpdsl.verify import vector_ops
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.stages import STAGES, compose_stage
from tcpdsl.verify.vector_compose import PassOperand, constant
from tcpdsl.verify.vector_pass import STASH, VectorState

_STASH_NAMES: Final = frozenset({"tcpdsl.STASH", "tcpdsl.verify.vector_pass.STASH"})
_MAX_DEPTH: Final = 64


class UnknownPass(Unreadable):
    """The calls a pass method's receiver came from are not written where the plugin can read them."""

    then = "only the type's stage order, way and stash state are checked at this call"


class EarlierRefused(Exception):
    """A call the pass came from breaks a rule: it was reported there, so this call adds nothing."""


class Call:
    """A call's arguments by parameter name: its expressions and the types mypy gave them."""

    def __init__(self, chk: TypeChecker, call: CallExpr, stage: Stage) -> None:
        self.chk = chk
        self.stage = stage
        row = STAGES[stage]
        positional = [*row.positional, *(name for name, _ in row.operands)]
        self.args: dict[str, Expression] = {}
        for expr, kind, name in zip(call.args, call.arg_kinds, call.arg_names):
            if name is not None:
                self.args[name] = expr
            elif kind == ARG_POS and positional:
                self.args[positional.pop(0)] = expr

    def expr(self, name: str) -> Expression:
        found = self.args.get(name)
        if found is None:
            raise Unreadable(f"the {name} argument of {self.stage} is not visible in this call")
        return found

    def type(self, expr: Expression) -> Type | None:
        return self.chk.lookup_type_or_none(expr)


def receiver_call(call: CallExpr, env: Env, follow: Any) -> tuple[CallExpr, Stage] | None:
    """The pass method call a receiver expression stands for (through names assigned once), if any."""
    if not isinstance(call.callee, MemberExpr):
        return None
    expr = follow(call.callee.expr, env)
    if isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr) and expr.callee.name in STAGES:
        stage = Stage(expr.callee.name)
        if stage.startswith("vector_"):
            return expr, stage
    return None


def pass_state(chk: TypeChecker, call: CallExpr, env: Env, module: str, follow: Any, mappings: Any,
               depth: int = 0) -> VectorState:
    """The state the pass stands in before ``call``: the calls it came from, recomposed."""
    found = receiver_call(call, env, follow)
    if found is None or depth > _MAX_DEPTH:
        raise UnknownPass("the state of the vector pass this call continues (its ALUs, stash and order) is not "
                          "written out here, from vector_init on")
    inner, stage = found
    assert isinstance(inner.callee, MemberExpr)
    src = operand(chk.lookup_type_or_none(inner.callee.expr) or _missing(), env, module)
    if src is None:
        raise Unreadable(f"the stream {stage} was called on has no known layouts")
    try:
        args = read_call(Call(chk, inner, stage), env, module, follow, mappings)
        if STAGES[stage].carried:
            args["state"] = pass_state(chk, inner, env, module, follow, mappings, depth + 1)
        _, step = compose_stage(stage, src, **args)
    except (TcpError, Unreadable) as failure:
        raise EarlierRefused(stage) from failure
    return step.state  # type: ignore[no-any-return]


def _missing() -> Type:
    raise Unreadable("the stream a vector pass method was called on has no type here")


def read_call(call: Call, env: Env, module: str, follow: Any, mappings: Any) -> dict[str, object]:
    """Every argument of a pass method call the composer takes, read as the runtime would pass it."""
    row = STAGES[call.stage]
    out: dict[str, object] = {name: mappings(call.expr(name), name, call.stage) for name in row.mappings}
    if "reduce" in row.options:
        out["reduce"] = reduce_axis(call, follow, env)
    for name in row.positional:
        out[name] = argument(call, name, env, module, follow, out)
    return out


def argument(call: Call, name: str, env: Env, module: str, follow: Any, read: dict[str, object]) -> object:
    """One positional argument of a pass method (docs/stage-rules.md §6.1, §6.3)."""
    expr = follow(call.expr(name), env)
    if name in ("op", "tag"):
        return _op(expr, call)
    if name == "int_width":
        value = _number(expr)
        if not isinstance(value, int):
            raise Unreadable(f"the int_width of {call.stage} is not an int written in the call")
        return value
    if name == "dtype":
        return _dtype(expr, call)
    op = read.get("op")
    dtype = vector_ops.op_dtype(op) if op is not None else vector_ops.F32
    if name == "operands":
        if not isinstance(expr, TupleExpr) or len(expr.items) != 2:
            raise Unreadable(f"the operands of {call.stage} are not a pair written in the call")
        first, second = (_operand(follow(item, env), call, env, module, dtype) for item in expr.items)
        return (first, second)
    return _operand(expr, call, env, module, dtype)


def reads_stash(call: Call, env: Env, follow: Any) -> bool:
    """Whether the call's ``operand`` is written ``tcp.STASH`` (or a name assigned it once)."""
    expr = call.args.get("operand")
    found = follow(expr, env) if expr is not None else None
    return isinstance(found, RefExpr) and found.fullname in _STASH_NAMES


def _operand(expr: Expression, call: Call, env: Env, module: str, dtype: str) -> PassOperand:
    if isinstance(expr, RefExpr) and expr.fullname in _STASH_NAMES:
        return STASH
    value = _number(expr)
    if value is not None:
        return constant(call.stage, value, dtype)
    typ = call.type(expr)
    found = operand(typ, env, module) if typ is not None else None
    if found is None:
        raise Unreadable(f"an operand of {call.stage} is neither a number, tcp.STASH nor a VrfTensor of known layout")
    return found


def _number(expr: Expression) -> int | float | None:
    if isinstance(expr, (IntExpr, FloatExpr)):
        return expr.value
    if isinstance(expr, UnaryExpr) and expr.op == "-" and isinstance(expr.expr, (IntExpr, FloatExpr)):
        return -expr.expr.value
    return None


def _op(expr: Expression, call: Call) -> object:
    """``tcp.Enum.MEMBER`` or ``tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.X)``, read by the enums' names."""
    if isinstance(expr, CallExpr) and len(expr.args) == 1:
        made = _op(expr.callee, call)
        on = _op(expr.args[0], call)
        if isinstance(made, vector_ops.FpBinaryOp) and isinstance(on, vector_ops.FpMulAlu):
            return made(on)
    elif isinstance(expr, MemberExpr) and isinstance(expr.expr, (NameExpr, MemberExpr)):
        kind = getattr(vector_ops, expr.expr.name, None)
        if isinstance(kind, type) and issubclass(kind, enum.Enum) and expr.name in kind.__members__:
            return kind[expr.name]
    typ = get_proper_type(call.type(expr)) if call.type(expr) is not None else None
    literal = typ.last_known_value if isinstance(typ, Instance) else typ
    if isinstance(literal, LiteralType) and isinstance(literal.value, str):
        kind = getattr(vector_ops, literal.fallback.type.name, None)
        if isinstance(kind, type) and issubclass(kind, enum.Enum) and literal.value in kind.__members__:
            return kind[literal.value]
    raise Unreadable(f"the op of {call.stage} is not written as a member of an op enum")


def _dtype(expr: Expression, call: Call) -> str:
    if isinstance(expr, RefExpr) and expr.node is not None and hasattr(expr.node, "mro"):
        if any(base.fullname == SCALAR_BASE for base in expr.node.mro[1:]):
            return str(expr.node.name)
    raise Unreadable(f"the dtype of {call.stage} is not a scalar class such as tcp.f32")


def reduce_axis(call: Call, follow: Any, env: Env) -> str:
    """``reduce=``: an axis (its declared type names it) or its name."""
    expr = call.expr("reduce")
    typ = get_proper_type(call.type(expr)) if call.type(expr) is not None else None
    if isinstance(typ, Instance) and typ.type.fullname == AXIS_CLASS and typ.args:
        name = get_proper_type(typ.args[0])
        if isinstance(name, LiteralType) and isinstance(name.value, str):
            return name.value
    followed = follow(expr, env)
    if isinstance(followed, StrExpr):
        return followed.value
    raise Unreadable(f"the reduce axis of {call.stage} is not an axis declared with tcp.axis")
